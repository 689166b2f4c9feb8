/* decide: whether the proposed partition is worth its migration, by
 * -lb_threshold's ski-rental rule (balance/lbdecide.h), or always without
 * it; and what the proposed partition is predicted to gain.  The rule
 * weighs the phase model's times whatever the weights: the line a cycle
 * prints and the summary are in those, and a rule on the weighed work
 * alone moved to partitions the model predicted worse.  It takes only a
 * proposal the model predicts to beat the kept partition by more than
 * its migration: on the loss alone, timing weights moved to partitions
 * predicted worse on 8 of 58 cycles of README command 1. */
#include "app/impl/lbcycle.h"

PetscErrorCode AmrLbAccount(AmrLb lb, AmrLbRecord *r)
{
  PetscFunctionBeginUser;
  /* the loss of the phase model (all phases measured so far), else (a
   * program that set no phases) the loss of the weighed work */
  const double lost = lb->nphases ? lb->measured_model.lost : r->t_rank_max - r->t_rank_avg;
  AMR_LB_CHECK(lb->comm, lb_decide_account(&lb->decide, lost * lb->size));
  r->excess_loss_rank_s = lb->decide.excess;
  r->residual_loss_rank_s = lb->decide.residual;
  r->balance_cost_rank_s = NAN;
  r->predicted_loss_rank_s = r->predicted_cycle_gain_rank_s = NAN;
  r->decision = "no_chance";
  r->decision_imbalance_pct = r->proposed_imbalance_pct = NAN;
  PetscFunctionReturn(0);
}

/* The rule's inputs from the phase model's times for the cycle the
 * partition serves: scalars every rank holds, no P-long array. */
static void model_inputs(AmrLb lb, AmrLbStep *s, AmrLbRecord *r)
{
  const int P = lb->size;
  const double gain = r->next_kept_s - r->next_predicted_s;

  r->predicted_gain_s = gain * lb->o.interval;
  s->in.kept_rank_s = (r->next_kept_s - r->next_mean_s) * P;
  s->in.gain_rank_s = fmax(0, gain) * P;
  s->in.imbalance_pct = fmax(lb->measured_model.imbalance_pct, r->next_kept_imbalance_pct);
}

/* The same from the weights' loads per rank, for a program that set no
 * phases (a library caller): the weighed work in seconds (unit per
 * weight). */
static void weighed_inputs(AmrLb lb, AmrLbStep *s, AmrLbRecord *r)
{
  const int P = lb->size;
  const double sum = amr_lb_vsum(P, s->before), max = amr_lb_vmax(P, s->before);
  const double unit = r->t_rank_avg * P / sum, gain = unit * (max - amr_lb_vmax(P, s->after));

  r->predicted_gain_s = gain * lb->o.interval;
  s->in.kept_rank_s = unit * (max - sum / P) * P;
  s->in.gain_rank_s = fmax(0, gain * P);
  s->in.imbalance_pct = fmax(r->imbalance_pct, r->kept_imbalance_pct);
}

PetscErrorCode AmrLbDecide(AmrLb lb, AmrLbStep *s, AmrLbRecord *r)
{
  const int P = lb->size;
  /* one pass over the parts: a pass per rank made it O(P^2) */
  const long long mmax = (long long)lb_curve_most_moved(P, s->cur, s->next);

  PetscFunctionBeginUser;
  r->predicted_migration_s = lb_migration_model_predict(&lb->migration, mmax);
  /* -lb_threshold: one cycle's gain against the migration would keep a
   * partition that loses a little every cycle forever; the ski-rental
   * rule weighs the loss of every cycle since the last rebalance (beyond
   * the least one since then) against the cost of this one, in
   * rank-seconds. That cost is the migration: the balancer has run
   * already, on every cycle that may balance, so declining would not
   * save its time (on 4 oversubscribed ranks it takes 0.2-0.8 s wall a
   * cycle, and counting it there vetoed every rebalance). Adaptation
   * since the measurement can have unbalanced the partition that
   * measured well: the floor looks at both. */
  r->balance_cost_rank_s = r->predicted_migration_s * P;
  /* and the coming cycle: the kept partition's predicted loss and what
   * the proposal saves of it, by the phase model (by the weights where
   * no phases are set) */
  s->in.lost_rank_s = r->excess_loss_rank_s;
  s->in.cost_rank_s = r->balance_cost_rank_s;
  if (isfinite(r->next_predicted_s)) model_inputs(lb, s, r);
  else weighed_inputs(lb, s, r);
  s->in.floor_pct = lb->o.threshold;
  r->decision_imbalance_pct = s->in.imbalance_pct;
  r->proposed_imbalance_pct = r->next_imbalance_pct;
  r->predicted_loss_rank_s = s->in.kept_rank_s;
  r->predicted_cycle_gain_rank_s = s->in.gain_rank_s;
  if (lb->o.threshold < 0) {
    r->rebalanced = 1;
    r->decision = "always";
  } else {
    AMR_LB_CHECK(lb->comm, lb_decide(&lb->decide, &s->in, &s->decision));
    r->rebalanced = s->decision == LB_DECIDE_REBALANCE || s->decision == LB_DECIDE_GAIN;
    r->decision = lb_decision_name(s->decision);
  }
  PetscFunctionReturn(0);
}
