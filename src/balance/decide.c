/* The ski-rental rebalancing rule of lbdecide.h, which takes only a
 * proposal predicted to beat the kept partition by more than its cost,
 * and the prediction of a migration's time from the ones measured. */
#include "balance/lbdecide.h"
#include "balance/impl/phase.h"

#include <math.h>
#include <stdlib.h>

void lb_decide_init(lb_decide_state *s)
{
  s->excess = 0;
  s->residual = 0;
  s->rebalanced = 0;
  s->trust = 1;
  s->promised = 0;
  s->expected = s->promise_cost = 0;
  s->last = s->before = 0;
}

lb_err lb_decide_account(lb_decide_state *s, double loss_rank_s)
{
  if (!(isfinite(loss_rank_s) && loss_rank_s >= 0))
    return lb_error(LB_ERR_ARG, "decide: a cycle's loss %g must be finite and non-negative", loss_rank_s);
  if (s->promised) s->trust = s->expected - loss_rank_s >= s->promise_cost && loss_rank_s <= s->before;
  s->promised = 0;
  s->last = loss_rank_s;
  if (s->rebalanced) s->residual = fmin(s->residual, loss_rank_s);
  s->excess += loss_rank_s - s->residual;
  return LB_OK;
}

void lb_decide_rebalanced(lb_decide_state *s, lb_decision d, const lb_decide_input *in)
{
  s->excess = 0;
  s->residual = INFINITY;
  s->rebalanced = 1;
  s->trust = 1;
  s->promised = d == LB_DECIDE_GAIN;
  s->expected = s->promised ? in->kept_rank_s : 0;
  s->promise_cost = s->promised ? in->cost_rank_s : 0;
  s->before = s->last;
}

lb_err lb_decide(const lb_decide_state *s, const lb_decide_input *in, lb_decision *d)
{
  if (!(isfinite(in->lost_rank_s) && in->lost_rank_s >= 0))
    return lb_error(LB_ERR_ARG, "decide: time lost to imbalance %g must be finite and non-negative", in->lost_rank_s);
  if (!(isfinite(in->cost_rank_s) && in->cost_rank_s >= 0))
    return lb_error(LB_ERR_ARG, "decide: predicted cost %g must be finite and non-negative", in->cost_rank_s);
  if (!(isfinite(in->imbalance_pct) && in->imbalance_pct >= 0))
    return lb_error(LB_ERR_ARG, "decide: imbalance %g%% must be finite and non-negative", in->imbalance_pct);
  if (!(isfinite(in->kept_rank_s) && in->kept_rank_s >= 0 && isfinite(in->gain_rank_s) && in->gain_rank_s >= 0))
    return lb_error(LB_ERR_ARG, "decide: predicted loss %g and gain %g must be finite and non-negative", in->kept_rank_s, in->gain_rank_s);
  if (!(in->floor_pct >= 0 && in->floor_pct < 100))
    return lb_error(LB_ERR_ARG, "decide: imbalance floor %g%% must be in [0, 100)", in->floor_pct);
  /* the loss path assumes the proposal removes the loss that paid for
   * it; it removes the share gain/kept of it, so its gain over the cycles
   * the loss took to reach the cost is the loss times that share */
  if (in->imbalance_pct <= in->floor_pct)
    *d = LB_DECIDE_BELOW_FLOOR;
  else if (in->lost_rank_s >= in->cost_rank_s && in->gain_rank_s > 0 && in->lost_rank_s * in->gain_rank_s >= in->cost_rank_s * in->kept_rank_s)
    *d = LB_DECIDE_REBALANCE;
  else if (s->trust && in->gain_rank_s > in->cost_rank_s)
    *d = LB_DECIDE_GAIN;
  else
    *d = in->lost_rank_s < in->cost_rank_s ? LB_DECIDE_BELOW_COST : LB_DECIDE_NO_GAIN;
  return LB_OK;
}

lb_err lb_decide_measured_model(MPI_Comm comm, int nphases, const double *own, lb_phase_model *m)
{
  double *red = malloc(2 * (size_t)nphases * sizeof *red + 1), time = 0, mean = 0;
  int P;
  if (!red) return lb_error(LB_ERR_MEM, "decide: out of memory");
  for (int k = 0; k < nphases; k++) red[k] = red[nphases + k] = own[k];
  MPI_Comm_size(comm, &P);
  if (MPI_Allreduce(MPI_IN_PLACE, red, nphases, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS ||
      MPI_Allreduce(MPI_IN_PLACE, red + nphases, nphases, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) {
    free(red);
    return lb_error(LB_ERR_MPI, "decide: MPI_Allreduce of the phases' own work failed");
  }
  for (int k = 0; k < nphases; k++) {
    time += red[k];
    mean += red[nphases + k] / P;
  }
  free(red);
  lb_phase_model_set(P, time, mean, m);
  return LB_OK;
}

const char *lb_decision_name(lb_decision d)
{
  switch (d) {
  case LB_DECIDE_REBALANCE: return "rebalance";
  case LB_DECIDE_BELOW_FLOOR: return "below_floor";
  case LB_DECIDE_BELOW_COST: return "below_cost";
  case LB_DECIDE_GAIN: return "gain";
  case LB_DECIDE_NO_GAIN: return "no_gain";
  }
  return "unknown";
}

void lb_migration_model_init(lb_migration_model *m)
{
  m->n = 0;
  m->head = 0;
}

lb_err lb_migration_model_add(lb_migration_model *m, int64_t cells, double seconds)
{
  if (cells <= 0) return lb_error(LB_ERR_ARG, "migration model: %lld cells moved must be positive", (long long)cells);
  if (!(isfinite(seconds) && seconds >= 0))
    return lb_error(LB_ERR_ARG, "migration model: time %g s must be finite and non-negative", seconds);
  m->per_cell[m->head] = seconds / (double)cells;
  m->head = (m->head + 1) % LB_MIGRATION_HISTORY;
  if (m->n < LB_MIGRATION_HISTORY) m->n++;
  return LB_OK;
}

double lb_migration_model_predict(const lb_migration_model *m, int64_t cells)
{
  double v[LB_MIGRATION_HISTORY];
  if (m->n == 0) return 0;
  for (int i = 0; i < m->n; i++) v[i] = m->per_cell[i];
  lb_sort_values(m->n, v);
  return lb_quantile_sorted(v, m->n, 0.5) * (double)cells;
}
