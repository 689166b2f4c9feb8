/* propose: the weight of every cell, the method's target loads realised as
 * cuts on the weighted curve (families kept together), and -trace_loads's
 * record of the curve the method saw. */
#include "app/impl/lbcycle.h"
#include "balance/lbchain.h"

#include <string.h>

/* the trace holds every modelled phase's weights */
_Static_assert(AMR_LB_MAX_PHASES <= LB_TRACE_MAX_PHASES, "trace phase slots");

/* Cells per rank of the current partition. */
static void current_counts(const p4est_t *p4est, int64_t *counts)
{
  for (int r = 0; r < p4est->mpisize; r++) counts[r] = (int64_t)(p4est->global_first_quadrant[r + 1] - p4est->global_first_quadrant[r]);
}

/* Weight of every local cell from its load type and the costs (mean cell
 * weight 1); a cost the fit found to be zero still counts one work unit of
 * the chain, so no cell is free to move. */
static PetscErrorCode cell_weights(const p4est_t *p4est, const int *types, int ntypes, const double *cost, double **w)
{
  double q[AMR_LB_MAX_TYPES];

  PetscFunctionBeginUser;
  for (int t = 0; t < ntypes; t++) q[t] = fmax(1.0 / LB_CHAIN_UNITS, cost[t]);
  PetscCall(PetscMalloc1(p4est->local_num_quadrants + 1, w));
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) (*w)[i] = q[types ? types[i] : 0];
  PetscFunctionReturn(0);
}

/* -lb_weights measured: every cell its own measured cost, mean cell weight
 * 1; as with cell_weights, at least one work unit of the chain. */
static PetscErrorCode measured_weights(AmrLb lb, const p4est_t *p4est, double **w)
{
  const p4est_locidx_t n = p4est->local_num_quadrants;
  double g[2];

  PetscFunctionBeginUser;
  PetscCheck(lb->cell_cost && lb->ncell_cost == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "measured weights: %d cell costs for %d cells", (int)lb->ncell_cost,
             (int)n);
  g[0] = 0;
  g[1] = (double)n;
  for (p4est_locidx_t i = 0; i < n; i++) g[0] += lb->cell_cost[i];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, 2, MPI_DOUBLE, MPI_SUM, lb->comm));
  PetscCall(PetscMalloc1(n + 1, w));
  for (p4est_locidx_t i = 0; i < n; i++) (*w)[i] = fmax(1.0 / LB_CHAIN_UNITS, g[0] > 0 ? lb->cell_cost[i] * g[1] / g[0] : 1.0);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbWeigh(AmrLb lb, AmrLbStep *s, AmrLbRecord *r)
{
  const int P = lb->size;
  lb_metrics mt;

  PetscFunctionBeginUser;
  PetscCall(AmrLbPhaseWeights(lb, s, r));
  if (s->w)
    ; /* -lb_weights phases chose it */
  else if (lb->o.weights == AMR_LB_MEASURED)
    PetscCall(measured_weights(lb, s->p4est, &s->w));
  else
    PetscCall(cell_weights(s->p4est, s->types, lb->o.ntypes, lb->cost, &s->w));
  current_counts(s->p4est, s->cur);
  memcpy(s->next, s->cur, sizeof(int64_t) * P);
  AMR_LB_CHECK(lb->comm, lb_curve_part_loads(lb->comm, s->p4est->local_num_quadrants, s->w, P, s->cur, s->before));
  lb_metrics_loads(P, s->before, &mt);
  r->kept_imbalance_pct = mt.imbalance_pct;
  PetscFunctionReturn(0);
}

/* Append the curve the balancer weighs this cycle, on the split it starts
 * from, with the measurement of the cycle that just ran. */
PetscErrorCode AmrLbTraceCycle(AmrLb lb, const AmrLbStep *s, AmrLbRecord *r)
{
  const int P = lb->size;
  /* every rank's measured time and predicted load, on rank 0 only: the
   * trace's cycle header holds them, and rank 0 writes it */
  double *time = NULL, *predicted = NULL;
  lb_load_trace h;

  PetscFunctionBeginUser;
  if (!lb->rank) PetscCall(PetscMalloc2(P, &time, P, &predicted));
  PetscCallMPI(MPI_Gather(&r->rank_time, 1, MPI_DOUBLE, time, 1, MPI_DOUBLE, 0, lb->comm));
  PetscCallMPI(MPI_Gather(&r->rank_load_predicted, 1, MPI_DOUBLE, predicted, 1, MPI_DOUBLE, 0, lb->comm));
  memset(&h, 0, sizeof h);
  h.cycle = r->cycle;
  h.weights = (int)lb->o.weights;
  h.ntypes = lb->o.ntypes;
  h.flags = (s->eligible ? LB_TRACE_BALANCED : 0) | (lb->o.ring ? LB_TRACE_RING : 0);
  memcpy(h.cost, r->cost, sizeof(double) * lb->o.ntypes);
  h.time = time;
  h.predicted = predicted;
  /* the phases' own weights when they chose the cells' weight, so that a
   * replay can evaluate the cycle's phase model at any number of ranks */
  if (lb->o.weights == AMR_LB_PHASES)
    for (int k = 0; k < lb->nphases; k++)
      if (lb->phase[k].modelled) PetscCall(PetscStrncpy(h.phase_name[h.nphases++], lb->phase[k].name, LB_TRACE_PHASE_NAME));
  PetscCheck(h.nphases == (lb->o.weights == AMR_LB_PHASES ? s->npw : 0), lb->comm, PETSC_ERR_PLIB, "trace: %d phase names for %d phase weights", h.nphases, s->npw);
  PetscCall(AmrTraceAppend(lb->trace, s->p4est, &h, s->w, s->types, (const double *const *)s->pw, &r->trace_write_s));
  PetscCall(PetscFree2(time, predicted));
  PetscFunctionReturn(0);
}

/* The method's cuts (cells per rank) as the next split and, this rank's,
 * in the report, with the cells they move: what lbbench's replay of the
 * trace gives. */
static void cut_record(const AmrLb lb, const int64_t *cur, const int64_t *cut, int64_t *next, AmrLbRecord *r)
{
  memcpy(next, cut, sizeof(int64_t) * lb->size);
  r->cut_cells = (long long)cut[lb->rank];
  r->cut_migrated_cells = (long long)lb_curve_migrated(lb->size, cur, cut);
}

/* The method's target loads on the processor graph (the line or the ring
 * of the ranks along the curve), realised as cut positions on the weighted
 * curve by the library's chain mode: new cells per rank. A method with a
 * shift hook (sfc-shift) instead moves the cuts by the local work each
 * rank measured in the cycle that just ran, so that it corrects what the
 * weights miss; one step of its sequence is one iteration, none when it
 * keeps its best partition. */
static PetscErrorCode targets(AmrLb lb, p4est_locidx_t n, const double *w, const int64_t *cur, int64_t *next, AmrLbRecord *r)
{
  lb_chain_result res;

  PetscFunctionBeginUser;
  if (lb->shifting) {
    /* every rank's measured time: the shift hook takes the parts' loads */
    double *time;
    lb_curve_result cut;
    lb_curve_shift_action act;
    PetscCall(PetscMalloc1(lb->size, &time));
    PetscCallMPI(MPI_Allgather(&r->rank_time, 1, MPI_DOUBLE, time, 1, MPI_DOUBLE, lb->comm));
    AMR_LB_CHECK(lb->comm, lb->o.method->shift(&lb->shifter, lb->comm, n, w, cur, time, &cut, &act));
    PetscCall(PetscFree(time));
    r->lb_iterations = act == LB_SHIFT_BEST ? 0 : 1;
    cut_record(lb, cur, cut.counts, next, r);
    lb_curve_result_free(&cut);
    PetscFunctionReturn(0);
  }
  AMR_LB_CHECK(lb->comm, lb_chain_partition_on(lb->graph, lb->o.method, &lb->o.params, n, w, NULL, &res));
  r->lb_iterations = res.run.iterations;
  r->lb_target_iteration = res.run.target_iteration;
  r->lb_rounds = res.run.rounds;
  r->part_load_optimum = res.optimal_max_part_load;
  cut_record(lb, cur, res.cut.counts, next, r);
  lb_chain_result_free(&res);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbPropose(AmrLb lb, AmrLbStep *s, AmrLbRecord *r)
{
  const int P = lb->size;
  long long corrected;

  PetscFunctionBeginUser;
  PetscCall(targets(lb, s->p4est->local_num_quadrants, s->w, s->cur, s->next, r));
  for (int q = 0; q < P; q++) s->counts[q] = (p4est_locidx_t)s->next[q];
  PetscCall(AmrFamilyCounts(s->p4est, s->counts, &corrected));
  for (int q = 0; q < P; q++) s->next[q] = s->counts[q];
  PetscFunctionReturn(0);
}
