/* measure: the window of timed steps of this rank's own work (each step
 * also a sample of the phase running, lbcycle_phases.c), the cycle's rank
 * times and imbalance, the cell costs (the timing fit, or the measured
 * means) and what they predicted for the partition measured. */
#include "app/impl/lbcycle.h"

#include <string.h>

PetscErrorCode AmrLbWindowStart(AmrLb lb, p4est_t *p4est, const int *types)
{
  PetscFunctionBeginUser;
  memset(lb->counts, 0, sizeof lb->counts);
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) {
    const int t = types ? types[i] : 0;
    PetscCheck(t >= 0 && t < lb->o.ntypes, PETSC_COMM_SELF, PETSC_ERR_PLIB, "cell %d has load type %d, outside 0..%d", (int)i, t, lb->o.ntypes - 1);
    lb->counts[t]++;
  }
  AmrLbWindowReset(&lb->timing);
  lb->cycle_cpu = lb->cycle_wall = 0;
  lb->have_measured = 0;
  PetscCall(AmrLbPhasesStart(lb));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbAddStep(AmrLb lb, double cpu, double wall, const int64_t *counts)
{
  PetscFunctionBeginUser;
  lb->cycle_cpu += cpu;
  lb->cycle_wall += wall;
  PetscCall(AmrLbWindowAdd(lb, &lb->timing, cpu, counts));
  PetscCall(AmrLbPhaseMark(lb, counts));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbWindowCosts(AmrLb lb, p4est_locidx_t n, const int *types, const double *cost)
{
  PetscFunctionBeginUser;
  memset(lb->measured_sum, 0, sizeof lb->measured_sum);
  memset(lb->measured_n, 0, sizeof lb->measured_n);
  for (p4est_locidx_t i = 0; i < n; i++) {
    const int t = types ? types[i] : 0;
    lb->measured_sum[t] += cost[i];
    lb->measured_n[t] += 1;
  }
  lb->have_measured = 1;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbCellCosts(AmrLb lb, p4est_locidx_t n, const double *cost)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(lb->cell_cost));
  PetscCall(PetscMalloc1(n + 1, &lb->cell_cost));
  PetscCall(PetscArraycpy(lb->cell_cost, cost, n));
  lb->ncell_cost = n;
  PetscFunctionReturn(0);
}

/* The per-type means of the window's measured cell costs, scaled like the
 * fitted costs (mean cell weight 1 over the window's cells); NaN for a
 * type without cells, or without measurement. */
static PetscErrorCode measured_means(AmrLb lb, double *mean)
{
  const int T = lb->o.ntypes;
  double g[2 * AMR_LB_MAX_TYPES], S = 0, N = 0;
  int have;

  PetscFunctionBeginUser;
  for (int t = 0; t < T; t++) mean[t] = NAN;
  PetscCallMPI(MPI_Allreduce(&lb->have_measured, &have, 1, MPI_INT, MPI_MIN, lb->comm));
  if (!have) PetscFunctionReturn(0);
  for (int t = 0; t < T; t++) {
    g[t] = lb->measured_sum[t];
    g[T + t] = lb->measured_n[t];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, 2 * T, MPI_DOUBLE, MPI_SUM, lb->comm));
  for (int t = 0; t < T; t++) {
    S += g[t];
    N += g[T + t];
  }
  for (int t = 0; t < T && S > 0; t++)
    if (g[T + t] > 0) mean[t] = g[t] / g[T + t] * N / S;
  PetscFunctionReturn(0);
}

/* This rank's local work of the cycle (thread CPU, and wall) and its
 * imbalance over the ranks, by one maximum and one sum; *tsum is the sum
 * over the ranks. */
static PetscErrorCode rank_times(AmrLb lb, AmrLbRecord *r, double *tsum)
{
  const int P = lb->size;

  PetscFunctionBeginUser;
  r->rank_time = lb->cycle_cpu;
  r->rank_time_wall = lb->cycle_wall;
  PetscCallMPI(MPI_Allreduce(&lb->cycle_cpu, &r->t_rank_max, 1, MPI_DOUBLE, MPI_MAX, lb->comm));
  PetscCallMPI(MPI_Allreduce(&lb->cycle_cpu, tsum, 1, MPI_DOUBLE, MPI_SUM, lb->comm));
  r->t_rank_avg = *tsum / P;
  r->max_over_avg = *tsum > 0 ? r->t_rank_max / r->t_rank_avg : 1;
  r->imbalance_pct = *tsum > 0 ? lb_phase_imbalance_pct(P, r->t_rank_max, r->t_rank_max - r->t_rank_avg) : 0;
  PetscFunctionReturn(0);
}

/* timing: the costs per load type that fit the window's step times to the
 * counts (mean over its steps) on every rank. */
static PetscErrorCode fit(AmrLb lb, const double *mean, AmrLbRecord *r)
{
  const int T = lb->o.ntypes;
  lb_weights_result res;

  PetscFunctionBeginUser;
  PetscCall(AmrLbWindowFit(lb, &lb->timing, mean, &res));
  memcpy(r->cost_stderr, res.cost_stderr, sizeof(double) * T);
  r->fitted = res.fitted;
  r->fit_flags = res.flags;
  lb_weights_result_free(&res);
  PetscFunctionReturn(0);
}

/* The cost per load type the weights use from now on, by -lb_weights. */
static PetscErrorCode costs(AmrLb lb, const double *mean, AmrLbRecord *r)
{
  const int T = lb->o.ntypes;

  PetscFunctionBeginUser;
  for (int t = 0; t < T; t++) r->cost_stderr[t] = NAN;
  if (lb->o.weights == AMR_LB_TIMING) PetscCall(fit(lb, mean, r));
  else if (lb->o.weights == AMR_LB_COUNT)
    for (int t = 0; t < T; t++) lb->cost[t] = 1.0;
  PetscCall(measured_means(lb, r->cost_measured));
  /* measured: the cells are weighed one by one; the costs per type that
   * predict rank loads are the measured means */
  for (int t = 0; t < T && lb->o.weights == AMR_LB_MEASURED; t++)
    if (isfinite(r->cost_measured[t])) lb->cost[t] = r->cost_measured[t];
  memcpy(r->cost, lb->cost, sizeof(double) * T);
  PetscFunctionReturn(0);
}

/* The weights' prediction for this rank on the partition just measured,
 * against its measurement: both as loads of mean 1 over the ranks, and
 * their sMAPE over the ranks, each by one sum. */
static PetscErrorCode compare(AmrLb lb, const double *mean, double tsum, AmrLbRecord *r)
{
  const int P = lb->size, T = lb->o.ntypes;
  double predicted = 0, psum, p, m, sm;

  PetscFunctionBeginUser;
  for (int t = 0; t < T; t++) predicted += mean[t] * lb->cost[t];
  PetscCallMPI(MPI_Allreduce(&predicted, &psum, 1, MPI_DOUBLE, MPI_SUM, lb->comm));
  p = psum > 0 ? predicted * P / psum : 1;
  m = tsum > 0 ? r->rank_time * P / tsum : 1;
  r->rank_load_predicted = p;
  r->rank_load_measured = m;
  sm = p + m > 0 ? fabs(p - m) / ((p + m) / 2) : 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sm, 1, MPI_DOUBLE, MPI_SUM, lb->comm));
  r->fit_smape = 100 * sm / P;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbMeasure(AmrLb lb, AmrLbRecord *r)
{
  double mean[AMR_LB_MAX_TYPES], tsum;

  PetscFunctionBeginUser;
  AmrLbWindowCounts(lb, &lb->timing, mean);
  PetscCall(rank_times(lb, r, &tsum));
  PetscCall(costs(lb, mean, r));
  PetscCall(compare(lb, mean, tsum, r));
  PetscCall(AmrLbPhasesFit(lb, r));
  PetscFunctionReturn(0);
}
