/* report: the record of a cycle closed with the predictions for the next
 * one and the run totals, and written as report fields, as the human line
 * and, at the end, as the run summary. */
#include "app/impl/lbcycle.h"

#include <string.h>

#include "util/rankfile.h"

/* The partition the next cycle runs on against the bound: the least
 * largest part of any contiguous cut of the weighted curve (the exact 1D
 * partition, gathered at rank 0). Every method's partition is a cut of the
 * curve, so the bound holds for each; the weights are those of the forest
 * before it moved, this rank's cur[rank] cells.  The chain mode computed
 * it on the same weights when the method ran on the chain; else here. */
static PetscErrorCode record_bound(AmrLb lb, const AmrLbStep *s, AmrLbRecord *r)
{
  PetscFunctionBeginUser;
  r->part_load_max = amr_lb_vmax(lb->size, s->after);
  if (!isfinite(r->part_load_optimum)) {
    lb_curve_result exact;
    AMR_LB_CHECK(lb->comm, lb_curve_exact(lb->comm, s->cur[lb->rank], s->w, lb->size, &exact));
    r->part_load_optimum = lb_curve_max_load(&exact);
    lb_curve_result_free(&exact);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbRecordClose(AmrLb lb, const AmrLbStep *s, AmrLbRecord *r)
{
  const int P = lb->size;
  const double sum = amr_lb_vsum(P, s->after);
  double tl[3];
  lb_metrics mt;

  PetscFunctionBeginUser;
  if (!r->rebalanced) {
    /* the next cycle runs on the kept partition: its loads are the ones
     * the next cycle's measurement checks */
    r->next_predicted_s = r->next_kept_s;
    r->next_imbalance_pct = r->next_kept_imbalance_pct;
    PetscCall(PetscArraycpy(r->phase_next, r->phase_kept, lb->nphases));
  }
  lb_metrics_loads(P, s->after, &mt);
  r->predicted_imbalance_pct = mt.imbalance_pct;
  PetscCall(record_bound(lb, s, r));
  r->rank_cells = (long long)s->next[lb->rank];
  r->rank_predicted = sum > 0 ? s->after[lb->rank] * P / sum : 1;
  tl[0] = s->lb_time;
  tl[1] = MPI_Wtime() - lb->t_start;
  tl[2] = r->trace_write_s;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, tl, 3, MPI_DOUBLE, MPI_MAX, lb->comm));
  r->lb_time_s = tl[0];
  r->trace_write_s = tl[2];
  lb->lost += (r->t_rank_max - r->t_rank_avg) * P;
  lb->lb_total += r->lb_time_s;
  lb->migrate_total += r->migrate_time_s;
  r->total_s = tl[1];
  r->lost_rank_s = lb->lost;
  r->lb_total_s = lb->lb_total;
  r->migrate_total_s = lb->migrate_total;
  PetscFunctionReturn(0);
}

/* The method, the measured and predicted imbalance, the weights and how
 * well they predicted the measurement. */
static void json_weights(json_line *j, const AmrLb lb, const AmrLbRecord *r)
{
  char flags[256];
  lb_weights_flags_string(r->fit_flags, flags, sizeof flags);
  json_str(j, "lb_method", AmrLbMethodName(lb));
  json_str(j, "lb_weights", amr_lb_weight_names[lb->o.weights]);
  json_str(j, "lb_graph", lb->o.ring ? "ring" : "line");
  json_bool(j, "rebalanced", r->rebalanced);
  json_real(j, "t_rank_max", r->t_rank_max);
  json_real(j, "t_rank_avg", r->t_rank_avg);
  /* the weighed work's: the phase model's are cycle_imbalance_pct and kin */
  json_real(j, "weighed_imbalance_pct", r->imbalance_pct);
  json_real(j, "max_over_avg", r->max_over_avg);
  json_real(j, "weighed_predicted_imbalance_pct", r->predicted_imbalance_pct);
  json_real(j, "weighed_kept_imbalance_pct", r->kept_imbalance_pct);
  json_reals(j, "weights", lb->o.ntypes, r->cost);
  json_reals(j, "weights_stderr", lb->o.ntypes, r->cost_stderr);
  json_reals(j, "weights_measured", lb->o.ntypes, r->cost_measured);
  json_bool(j, "weights_fitted", r->fitted);
  json_str(j, "fit_flags", flags);
  json_real(j, "fit_smape", r->fit_smape);
}

/* The method's run and the cuts it proposed (each rank's cells). */
static PetscErrorCode json_method(json_line *j, const AmrLb lb, const AmrLbRecord *r)
{
  static const char *const cut[] = {"lb_cut_cells"};

  PetscFunctionBeginUser;
  json_int(j, "lb_iterations", r->lb_iterations);
  if (r->lb_target_iteration >= 0)
    json_int(j, "lb_target_iteration", r->lb_target_iteration);
  else
    json_null(j, "lb_target_iteration");
  if (r->cut_cells >= 0) {
    PetscCallMPI(json_rank_ints(j, lb->comm, 1, cut, &r->cut_cells));
    json_int(j, "lb_cut_migrated_cells", r->cut_migrated_cells);
  } else {
    json_null(j, "lb_cut_cells");
    json_null(j, "lb_cut_migrated_cells");
  }
  json_int(j, "lb_rounds", r->lb_rounds);
  json_real(j, "lb_time_s", r->lb_time_s);
  PetscFunctionReturn(0);
}

/* The rule's inputs and decision, what moved, the run totals. */
static void json_decision(json_line *j, const AmrLb lb, const AmrLbRecord *r)
{
  json_real(j, "predicted_gain_s", r->predicted_gain_s);
  json_real(j, "predicted_migration_s", r->predicted_migration_s);
  json_real(j, "excess_loss_rank_s", r->excess_loss_rank_s);
  json_real(j, "residual_loss_rank_s", r->residual_loss_rank_s);
  json_real(j, "balance_cost_rank_s", r->balance_cost_rank_s);
  json_real(j, "predicted_loss_rank_s", r->predicted_loss_rank_s);
  json_real(j, "predicted_cycle_gain_rank_s", r->predicted_cycle_gain_rank_s);
  json_str(j, "lb_decision", r->decision);
  json_real(j, "decision_imbalance_pct", r->decision_imbalance_pct);
  json_real(j, "proposed_imbalance_pct", r->proposed_imbalance_pct);
  json_int(j, "migrated_cells_tot", r->migrated_cells_tot);
  json_int(j, "migrated_cells_max", r->migrated_cells_max);
  json_real(j, "migrate_time_s", r->migrate_time_s);
  json_int(j, "edge_cut", r->edge_cut);
  json_int(j, "comm_edges", r->comm_edges);
  json_int(j, "comm_edges_added", r->comm_edges_added);
  json_int(j, "comm_edges_removed", r->comm_edges_removed);
  json_real(j, "total_s", r->total_s);
  json_real(j, "lost_rank_s", r->lost_rank_s);
  json_real(j, "lb_total_s", r->lb_total_s);
  json_real(j, "migrate_total_s", r->migrate_total_s);
  if (lb->trace)
    json_real(j, "trace_write_s", r->trace_write_s);
  else
    json_null(j, "trace_write_s");
}

static const char *const phase_models[] = {"measured", "cells", "types"};

/* The phase model: every phase's own work per rank (one object keyed by
 * phase), the measured cycle, the predictions, the run totals. */
static PetscErrorCode json_phases(json_line *j, const AmrLb lb, const AmrLbRecord *r)
{
  static const char *const key[] = {"own_cpu", "own_wall", "wall", "next_own_cpu"};
  long long calls;
  double cost;
  json_line all, ph;

  PetscFunctionBeginUser;
  json_object_begin(j, "phases", &all);
  for (int k = 0; k < r->nphases; k++) {
    const int next = r->phase_predicted && r->phase_modelled[k];
    const double mine[4] = {r->phase_own_cpu[k], r->phase_own_wall[k], r->phase_wall[k], next ? r->phase_next[k] : NAN};

    json_object_begin(&all, r->phase_name[k], &ph);
    json_str(&ph, "model", phase_models[r->phase_modelled[k]]);
    PetscCallMPI(json_rank_reals(&ph, lb->comm, next ? 4 : 3, key, mine));
    if (!next) json_null(&ph, "next_own_cpu");
    if (r->phase_modelled[k])
      json_reals(&ph, "cost_s", lb->o.ntypes, r->phase_cost_s[k]);
    else
      json_null(&ph, "cost_s");
    json_real(&ph, "alpha", r->phase_alpha[k]);
    /* how far the per-rank predictions missed, all cycles so far */
    json_real(&ph, "miss_pct", lb->phase[k].missed_of > 0 ? 100 * lb->phase[k].miss / lb->phase[k].missed_of : NAN);
    json_object_end(&ph);
  }
  json_object_end(&all);
  json_bool(j, "phase_split", r->phase_split);
  lb_mpi_profile_cost(&calls, &cost);
  json_bool(j, "mpi_profiled", lb_mpi_profiled());
  json_int(j, "mpi_calls", calls);
  json_real(j, "mpi_profile_cost_s", cost);
  json_real(j, "cycle_time_s", r->cycle_time_s);
  json_real(j, "cycle_mean_s", r->cycle_mean_s);
  json_real(j, "cycle_imbalance_pct", r->cycle_imbalance_pct);
  json_real(j, "cycle_wall_s", r->cycle_wall_s);
  json_real(j, "predicted_s", r->predicted_s);
  json_real(j, "predicted_cycle_imbalance_pct", r->predicted_cycle_imbalance_pct);
  json_real(j, "next_predicted_s", r->next_predicted_s);
  json_real(j, "next_kept_s", r->next_kept_s);
  json_real(j, "next_initial_s", r->next_initial_s);
  json_real(j, "next_imbalance_pct", r->next_imbalance_pct);
  json_real(j, "next_mean_s", r->next_mean_s);
  json_real(j, "model_total_s", r->model_total_s);
  json_real(j, "lost_s", r->lost_s);
  json_real(j, "gain_s", r->gain_s);
  PetscFunctionReturn(0);
}

/* The partition's largest part against the bound, in cell weights. */
static void json_bound(json_line *j, const AmrLbRecord *r)
{
  json_real(j, "part_load_max", r->part_load_max);
  json_real(j, "part_load_optimum", r->part_load_optimum);
  json_real(j, "part_load_over_optimum", r->part_load_optimum > 0 ? r->part_load_max / r->part_load_optimum : 1.0);
}

PetscErrorCode AmrLbRecordJSON(json_line *j, const AmrLb lb, const AmrLbRecord *r)
{
  static const char *const cells[] = {"rank_cells"};
  static const char *const key[] = {"rank_predicted", "rank_time", "rank_time_wall", "rank_load_measured", "rank_load_predicted"};
  const double mine[5] = {r->rank_predicted, r->rank_time, r->rank_time_wall, r->rank_load_measured, r->rank_load_predicted};

  PetscFunctionBeginUser;
  json_weights(j, lb, r);
  PetscCall(json_method(j, lb, r));
  json_bound(j, r);
  json_decision(j, lb, r);
  PetscCallMPI(json_rank_ints(j, lb->comm, 1, cells, &r->rank_cells));
  PetscCallMPI(json_rank_reals(j, lb->comm, 5, key, mine));
  PetscCall(json_phases(j, lb, r));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbRecordPrint(MPI_Comm comm, const char *program, const AmrLbRecord *r, double sim_time, long long cells, long long dofs)
{
  const double predicted = isfinite(r->next_imbalance_pct) ? r->next_imbalance_pct : r->predicted_imbalance_pct;
  char t[32] = "", why[192] = "", pred[48] = "", kept[64] = "";
  const char *above = "";

  PetscFunctionBeginUser;
  if (sim_time >= 0) PetscCall(PetscSNPrintf(t, sizeof t, ", t %.5f", sim_time));
  /* the kept partition's I% on the adapted mesh: why a move to a
   * partition predicted above the measured I% can still gain; the gain
   * path always names it, a move on the loss path or without the rule
   * where the proposal is above the measured I% */
  PetscCall(PetscSNPrintf(kept, sizeof kept, ", kept predicted I%% %.1f on the adapted mesh", r->next_kept_imbalance_pct));
  if (predicted > r->cycle_imbalance_pct && isfinite(r->next_kept_imbalance_pct)) above = kept;
  /* why -lb_threshold's rule did or did not rebalance */
  if (!strcmp(r->decision, "rebalance"))
    PetscCall(PetscSNPrintf(why, sizeof why, ", loss since balance %.3g >= cost %.3g rank-s%s", r->excess_loss_rank_s, r->balance_cost_rank_s, above));
  else if (!strcmp(r->decision, "gain"))
    PetscCall(PetscSNPrintf(why, sizeof why, "%s, next cycle's predicted gain %.3g > cost %.3g rank-s", kept, r->predicted_cycle_gain_rank_s,
                            r->balance_cost_rank_s));
  else if (!strcmp(r->decision, "below_cost"))
    PetscCall(PetscSNPrintf(why, sizeof why, " (kept: loss since balance %.3g < cost %.3g rank-s)", r->excess_loss_rank_s, r->balance_cost_rank_s));
  else if (!strcmp(r->decision, "no_gain"))
    PetscCall(PetscSNPrintf(why, sizeof why, " (kept: proposal predicted I%% %.1f, no better than the kept %.1f by more than its migration cost)", r->proposed_imbalance_pct,
                            r->next_kept_imbalance_pct));
  else if (!strcmp(r->decision, "below_floor"))
    PetscCall(PetscSNPrintf(why, sizeof why, " (kept: I%% %.1f at or below the -lb_threshold floor)", r->decision_imbalance_pct));
  else if (!r->rebalanced)
    PetscCall(PetscSNPrintf(why, sizeof why, " (not rebalanced)"));
  else PetscCall(PetscStrncpy(why, above, sizeof why)); /* without the rule: always */
  if (isfinite(r->predicted_s)) PetscCall(PetscSNPrintf(pred, sizeof pred, ", predicted %.3f", r->predicted_s));
  PetscCall(PetscPrintf(comm,
                        "%s: lb cycle %d%s: %lld cells, %lld dofs, I%% %.1f measured -> %.1f predicted, migrated %lld cells, balancer %.4f s %d its, cycle %.3f s wall, "
                        "model %.3f s%s%s\n",
                        program, r->cycle, t, cells, dofs, r->cycle_imbalance_pct, predicted,
                        r->migrated_cells_tot, r->lb_time_s, r->lb_iterations, r->cycle_wall_s, r->cycle_time_s, pred, why));
  PetscFunctionReturn(0);
}

/* The summary's first line: whether balancing paid against the same run
 * on its initial partition, by the phase model, net of its own cost: the
 * partition phase's own work (weights, balancer, migration; the slowest
 * rank's each cycle), the model's measure of time, as the saving is.  Its
 * wall time would count the waits for the slowest rank of the phase before
 * (a 2-rank run on a loaded machine: 1.96 s of wall for 0.03 s of work). */
static PetscErrorCode summary_paid(AmrLb lb, MPI_Comm comm, const char *program)
{
  const double cost = lb->balance_phase >= 0 ? lb->phase[lb->balance_phase].time_total : NAN;
  char share[64] = "";

  PetscFunctionBeginUser;
  if (!lb->o.method) {
    PetscCall(PetscPrintf(comm, "%s: summary: no balancing (-lb_method none): the run kept its initial partition\n", program));
    PetscFunctionReturn(0);
  }
  if (!isfinite(cost) || !lb->initial_pos) {
    PetscCall(PetscPrintf(comm, "%s: summary: balancing took %.3f s (balancer %.3f, migration %.3f, wall); no phase model says what it saved\n", program,
                          lb->lb_total + lb->migrate_total, lb->lb_total, lb->migrate_total));
    PetscFunctionReturn(0);
  }
  if (lb->model_total > 0) PetscCall(PetscSNPrintf(share, sizeof share, " (%.1f%% of the modelled run)", 100 * (lb->gain_s - cost) / lb->model_total));
  /* one form whatever the sign, so that a guide's example is checked */
  PetscCall(PetscPrintf(comm, "%s: summary: balancing's net gain %.3f s%s: it saved %.3f s against the initial partition kept, its partition phase cost %.3f s\n",
                        program, lb->gain_s - cost, share, lb->gain_s, cost));
  PetscFunctionReturn(0);
}

/* The summary's second line: the loss left, by phase in the cycle's
 * order (every phase, so that the line has one form). */
static PetscErrorCode summary_loss(AmrLb lb, MPI_Comm comm, const char *program)
{
  char where[512] = "";
  size_t len = 0;

  PetscFunctionBeginUser;
  for (int k = 0; k < lb->nphases; k++) {
    PetscCall(PetscSNPrintf(where + len, sizeof where - len, "%s %s %.3f", k ? "," : ":", lb->phase[k].name, lb->phase[k].lost_total));
    len = strlen(where);
  }
  PetscCall(PetscPrintf(comm, "%s: summary: lost to imbalance %.3f s (%.1f%% of the modelled run)%s\n", program, lb->lost_s,
                        lb->model_total > 0 ? 100 * lb->lost_s / lb->model_total : 0, where));
  PetscFunctionReturn(0);
}

/* The summary's third line: the model's total beside the wall clock's,
 * and where the wall's excess lies: inside the measured cycles (each
 * cycle's slowest rank's wall less the model's time: waits for another
 * rank within a phase, messages, time off the core) or outside them
 * (start-up, set-up, report and checkpoint writing).  The first part is
 * what a balanced run pays beyond the model: in the mission run on 2
 * ranks 0.17 s against 0.09 s with the skewed partition kept and 0.11 s
 * with the even one (medians of 10 runs each), while the outside part
 * stayed at 0.03 s. */
static PetscErrorCode summary_wall(AmrLb lb, MPI_Comm comm, const char *program, double total)
{
  char split[160] = "";

  PetscFunctionBeginUser;
  if (isfinite(lb->cycles_wall))
    PetscCall(PetscSNPrintf(split, sizeof split, ": %.3f s more in the cycles (waits, messages, time off the core), %.3f s outside them (start-up, set-up, report, checkpoints)",
                            lb->cycles_wall - lb->model_total, total - lb->cycles_wall));
  PetscCall(PetscPrintf(comm, "%s: summary: modelled %.3f s of own work (each phase's slowest rank), wall %.3f s%s\n", program, lb->model_total, total, split));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbSummary(AmrLb lb, MPI_Comm comm, const char *program)
{
  double total = MPI_Wtime() - lb->t_start;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscCall(summary_paid(lb, comm, program));
  if (!lb->nphases) PetscFunctionReturn(0);
  PetscCall(summary_loss(lb, comm, program));
  PetscCall(summary_wall(lb, comm, program, total));
  PetscFunctionReturn(0);
}
