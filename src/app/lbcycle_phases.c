/* phases: every phase's own work on every rank (thread CPU and wall less
 * the time inside MPI, balance/lbclock.h), a fit per phase and load type
 * (seed 003's least squares, with its window, trimming and history), and
 * the cycle modelled as the sum over phases of the slowest rank
 * (balance/lbphase.h): what it measured, what it predicts for the next
 * cycle on the partition it gets, on the kept one and on the initial one,
 * and for -lb_weights phases the cell weight of least modelled time. */
#include "app/impl/lbcycle.h"
#include "balance/lbchain.h"

#include <string.h>

PetscErrorCode AmrLbPhasesSet(AmrLb lb, int n, const char *const names[], const int modelled[], int cost_phase)
{
  PetscFunctionBeginUser;
  PetscCheck(n >= 1 && n <= AMR_LB_MAX_PHASES && !lb->nphases, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%d phases: need 1 to %d, set once", n, AMR_LB_MAX_PHASES);
  for (int k = 0; k < n; k++) {
    lb->phase[k].name = names[k];
    lb->phase[k].modelled = modelled[k];
    PetscCall(AmrLbWindowCreate(lb, &lb->phase[k].fit));
  }
  for (int k = 0; k < n; k++) lb->expect[k] = NAN;
  lb->nphases = n;
  lb->cost_phase = cost_phase;
  lb->current = -1;
  lb->predicted_next = lb->predicted_next_ipct = NAN;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbPhasesDestroy(AmrLb lb)
{
  PetscFunctionBeginUser;
  for (int k = 0; k < lb->nphases; k++) PetscCall(AmrLbWindowDestroy(&lb->phase[k].fit));
  PetscCall(PetscFree(lb->initial_pos));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbPhasesStart(AmrLb lb)
{
  PetscFunctionBeginUser;
  for (int k = 0; k < lb->nphases; k++) {
    AmrLbPhase *ph = &lb->phase[k];
    ph->own_cpu = ph->own_wall = ph->wall = 0;
    ph->samples = 0;
    AmrLbWindowReset(&ph->fit);
  }
  lb_clock_now(&lb->cycle_start);
  PetscFunctionReturn(0);
}

static double own_cpu_between(const lb_clock *a, const lb_clock *b)
{
  double t;
  lb_clock_between(a, b, &t, NULL, NULL, NULL);
  return t;
}

PetscErrorCode AmrLbPhaseMark(AmrLb lb, const int64_t *counts)
{
  lb_clock now;

  PetscFunctionBeginUser;
  if (lb->current < 0) PetscFunctionReturn(0);
  lb_clock_now(&now);
  PetscCall(AmrLbWindowAdd(lb, &lb->phase[lb->current].fit, own_cpu_between(&lb->mark, &now), counts));
  lb->phase[lb->current].samples++;
  lb->phase[lb->current].visit_marked = 1;
  lb->mark = now;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbPhaseSwitch(AmrLb lb, int k)
{
  lb_clock now;

  PetscFunctionBeginUser;
  PetscCheck(k >= -1 && k < lb->nphases, PETSC_COMM_SELF, PETSC_ERR_PLIB, "phase %d of %d", k, lb->nphases);
  lb_clock_now(&now);
  if (lb->current >= 0) {
    AmrLbPhase *ph = &lb->phase[lb->current];
    AmrLbWindow *w = &ph->fit;
    const double rest = own_cpu_between(&lb->mark, &now);
    double cpu, wall, elapsed;
    lb_clock_between(&lb->visit, &now, &cpu, &wall, &elapsed, NULL);
    ph->own_cpu += cpu;
    ph->own_wall += wall;
    ph->wall += elapsed;
    /* what follows the last step of a visit (a mass sum, a classification)
     * belongs to that step */
    if (ph->visit_marked && w->wn > 0) PetscCall(AmrLbWindowExtendLast(lb, w, rest));
    else {
      PetscCall(AmrLbWindowAdd(lb, w, rest, NULL));
      ph->samples++;
    }
  }
  lb->current = k;
  lb->visit = lb->mark = now;
  if (k >= 0) lb->phase[k].visit_marked = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbPhasesFit(AmrLb lb, AmrLbRecord *r)
{
  const int K = lb->nphases, T = lb->o.ntypes;
  double g[AMR_LB_MAX_PHASES * (AMR_LB_MAX_TYPES + 1)] = {0}, own[AMR_LB_MAX_PHASES];

  PetscFunctionBeginUser;
  r->nphases = K;
  for (int k = 0; k < K; k++) {
    AmrLbPhase *ph = &lb->phase[k];
    double *gk = g + (size_t)k * (T + 1), mean[AMR_LB_MAX_TYPES];
    lb_weights_result res;
    r->phase_name[k] = ph->name;
    r->phase_modelled[k] = ph->modelled;
    r->phase_alpha[k] = NAN;
    if (!ph->modelled) continue;
    AmrLbWindowCounts(lb, &ph->fit, mean);
    /* one cost for every cell: the cells' share of the time, no fit (a fit
     * per type found the pressure's reacting cells dearer than the others
     * on 4 ranks, 65 against 32 us, from the noise of a few rows) */
    if (ph->modelled == AMR_LB_PHASE_TYPES) {
      PetscCall(AmrLbWindowFit(lb, &ph->fit, mean, &res));
      lb_weights_result_free(&res);
    } else
      for (int t = 0; t < T; t++) ph->fit.cost[t] = 1;
    gk[0] = ph->own_cpu;
    for (int t = 0; t < T; t++) gk[1 + t] = mean[t];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, K * (T + 1), MPI_DOUBLE, MPI_SUM, lb->comm));
  for (int k = 0; k < K; k++) {
    AmrLbPhase *ph = &lb->phase[k];
    const double *gk = g + (size_t)k * (T + 1);
    double weighed = 0;
    /* the fit gives the costs' ratios (kept ones may come from an older
     * window); scaled so that the cells of this cycle's samples predict
     * the phase's whole own time of the cycle over all ranks, they are
     * seconds per cell per cycle */
    for (int t = 0; t < T; t++) weighed += gk[1 + t] * ph->fit.cost[t];
    for (int t = 0; t < T; t++) {
      ph->sec[t] = ph->modelled && weighed > 0 ? ph->fit.cost[t] * gk[0] / weighed : 0;
      r->phase_cost_s[k][t] = ph->sec[t];
    }
  }
  /* the loss of the phases measured so far (all but the one running: the
   * partition), which the rule weighs */
  for (int k = 0; k < K; k++) own[k] = lb->phase[k].own_cpu;
  AMR_LB_CHECK(lb->comm, lb_decide_measured_model(lb->comm, K, own, &lb->measured_model));
  PetscFunctionReturn(0);
}

/* The partition of least modelled time as cell weights s->w (the chosen
 * combination of the phases' weights, or weights whose equal cut is the
 * multi-constraint split), mean cell weight 1 and at least one work unit
 * of the chain, as every mode's weights. */
static PetscErrorCode choose(AmrLb lb, AmrLbStep *s, AmrLbRecord *r)
{
  const p4est_locidx_t n = s->p4est->local_num_quadrants;
  const double *const *pw = (const double *const *)s->pw;
  lb_phase_choice ch;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(n + 1, &s->w));
  AMR_LB_CHECK(lb->comm, lb_phase_choose(lb->comm, n, s->npw, pw, lb->size, LB_PHASE_ROUNDS, &ch));
  AMR_LB_CHECK(lb->comm, lb_phase_choice_weights(lb->comm, n, pw, &ch, 1.0 / LB_CHAIN_UNITS, s->w));
  if (!ch.split)
    for (int k = 0, m = 0; k < lb->nphases; k++)
      if (lb->phase[k].modelled) r->phase_alpha[k] = ch.alpha[m++];
  r->phase_split = ch.split;
  lb_phase_choice_free(&ch);
  PetscFunctionReturn(0);
}

/* The cost phase's weights: every cell its measured cost, scaled so that
 * the cells together weigh the phase's whole own time of this cycle (the
 * cells' costs say which cells do the work; a fit by load type of how
 * much missed the next cycle's by 40% on reactive-transport, whose front
 * changes its cells' types within a cycle, where the cycle before
 * missed by a few percent). */
static PetscErrorCode measured_phase_weights(AmrLb lb, const AmrLbStep *s, const AmrLbPhase *ph, double *w)
{
  const p4est_locidx_t n = s->p4est->local_num_quadrants;
  double g[2] = {0, ph->own_cpu};

  PetscFunctionBeginUser;
  /* a cost carried through refinement can come out below zero, as
   * -lb_weights measured finds it: such a cell costs nothing */
  for (p4est_locidx_t i = 0; i < n; i++) {
    w[i] = lb->cell_cost[i] > 0 ? lb->cell_cost[i] : 0;
    g[0] += w[i];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, 2, MPI_DOUBLE, MPI_SUM, lb->comm));
  for (p4est_locidx_t i = 0; i < n; i++) w[i] = g[0] > 0 ? w[i] * g[1] / g[0] : ph->sec[s->types ? s->types[i] : 0];
  PetscFunctionReturn(0);
}

/* The factor on this rank's cells of a phase modelled by cells or types:
 * its own work over what the fitted costs give its cells, carried to the
 * next cycle.  The costs are the same on every rank, but a rank's cells
 * of the same type need not cost the same (the pressure solve's cost
 * follows faces, levels and the boundary as well as the cell count): on 2
 * ranks with count weights one rank's pressure measured 10-20% above its
 * share in most cycles, in stretches of either rank, and predicted I% then
 * missed the next cycle's by 10-20 points.  Recomputed from six reports
 * (the mission run, README command 1), the median miss carrying all of
 * the ratio was 3.9-6.7 points, none of it 4.3-19.6, half 5.1-8.6.  It
 * keeps the phase's total:
 * the model's and the measured sums over the ranks are equal. */
static double rank_factor(const AmrLb lb, const AmrLbPhase *ph)
{
  double mean[AMR_LB_MAX_TYPES], model = 0;

  AmrLbWindowCounts(lb, &ph->fit, mean);
  for (int t = 0; t < lb->o.ntypes; t++) model += mean[t] * ph->sec[t];
  return model > 0 && isfinite(ph->own_cpu) ? ph->own_cpu / model : 1;
}

PetscErrorCode AmrLbPhaseWeights(AmrLb lb, AmrLbStep *s, AmrLbRecord *r)
{
  const p4est_locidx_t n = s->p4est->local_num_quadrants;
  double total = 0;

  PetscFunctionBeginUser;
  s->npw = 0;
  for (int k = 0; k < lb->nphases; k++) {
    const AmrLbPhase *ph = &lb->phase[k];
    double *w;
    if (!ph->modelled) continue;
    PetscCall(PetscMalloc1(n + 1, &w));
    if (k == lb->cost_phase && lb->cell_cost && lb->ncell_cost == n) PetscCall(measured_phase_weights(lb, s, ph, w));
    else {
      const double f = rank_factor(lb, ph);
      for (p4est_locidx_t i = 0; i < n; i++) w[i] = f * ph->sec[s->types ? s->types[i] : 0];
    }
    for (int t = 0; t < lb->o.ntypes; t++) total += ph->sec[t];
    s->pw[s->npw++] = w;
  }
  /* nothing measured yet (or one rank, where the fit keeps its costs):
   * count weights */
  if (lb->o.weights == AMR_LB_PHASES && s->npw && total > 0) PetscCall(choose(lb, s, r));
  PetscFunctionReturn(0);
}

/* Cells of the current forest per part of the initial partition (its
 * first positions on the curve: refinement keeps a cell inside the part
 * of its ancestor). */
static PetscErrorCode initial_counts(AmrLb lb, p4est_t *p4est, int64_t *counts)
{
  const int P = lb->size;
  int j = 0;

  PetscFunctionBeginUser;
  for (int q = 0; q < P; q++) counts[q] = 0;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      p4est_quadrant_t fd;
      p4est_quadrant_first_descendant(p4est_quadrant_array_index(&tr->quadrants, i), &fd, P4EST_QMAXLEVEL);
      /* the last part whose first position is at or before the cell */
      while (j + 1 < P) {
        const p4est_quadrant_t *b = &lb->initial_pos[j + 1];
        if (b->p.which_tree < t || (b->p.which_tree == t && p4est_quadrant_compare(b, &fd) <= 0)) j++;
        else break;
      }
      counts[j]++;
    }
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, counts, P, MPI_INT64_T, MPI_SUM, lb->comm));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbPhasesInitial(AmrLb lb, p4est_t *p4est)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(lb->initial_pos));
  PetscCall(PetscMalloc1(lb->size + 1, &lb->initial_pos));
  PetscCall(PetscArraycpy(lb->initial_pos, p4est->global_first_position, lb->size + 1));
  PetscFunctionReturn(0);
}

/* The model's time for the next cycle on partition counts: the modelled
 * phases' loads, the others' last measured time; and its I%.  next (may
 * be NULL): this rank's load of each modelled phase, where a phase not
 * modelled keeps its value. */
static PetscErrorCode predict(AmrLb lb, const AmrLbStep *s, const int64_t *counts, double *time, double *ipct, double *mean, double *next)
{
  const int P = lb->size;
  lb_phase_model m;
  /* nphases x P: lb_phase_loads gives every part's load of every phase */
  double *load;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)s->npw * P + 1, &load));
  AMR_LB_CHECK(lb->comm, lb_phase_loads(lb->comm, s->p4est->local_num_quadrants, s->npw, (const double *const *)s->pw, P, counts, load, &m));
  /* s->pw holds the modelled phases in phase order */
  for (int k = 0, j = 0; next && k < lb->nphases; k++)
    if (lb->phase[k].modelled) next[k] = load[(size_t)j++ * P + lb->rank];
  PetscCall(PetscFree(load));
  *time = m.time + lb->unmodelled_s;
  if (mean) *mean = m.mean + lb->unmodelled_s;
  if (ipct) *ipct = lb_phase_imbalance_pct(P, *time, m.lost);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbPhasesPredict(AmrLb lb, const AmrLbStep *s, AmrLbRecord *r)
{
  int64_t *init;

  PetscFunctionBeginUser;
  r->next_predicted_s = r->next_kept_s = r->next_initial_s = r->next_imbalance_pct = r->next_kept_imbalance_pct = r->next_mean_s = NAN;
  if (!s->npw) PetscFunctionReturn(0);
  r->phase_predicted = 1;
  for (int k = 0; k < lb->nphases; k++) r->phase_next[k] = r->phase_kept[k] = NAN;
  PetscCall(predict(lb, s, s->next, &r->next_predicted_s, &r->next_imbalance_pct, &r->next_mean_s, r->phase_next));
  PetscCall(predict(lb, s, s->cur, &r->next_kept_s, &r->next_kept_imbalance_pct, NULL, r->phase_kept));
  if (!lb->initial_pos) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(lb->size, &init));
  PetscCall(initial_counts(lb, s->p4est, init));
  PetscCall(predict(lb, s, init, &r->next_initial_s, NULL, NULL, NULL));
  PetscCall(PetscFree(init));
  PetscFunctionReturn(0);
}

/* What the cycle's model needs of every rank's own work, by reductions:
 * each phase's largest own CPU (max[k]) and the cycle's wall time, its
 * slowest rank's (max[K]); each phase's own CPU summed (sum[k]) and, over
 * the ranks the last cycle predicted, how far that missed (sum[K + k])
 * and the own CPU it missed of (sum[2 K + k]). */
static PetscErrorCode reduce_phases(AmrLb lb, double *max, double *sum)
{
  const int K = lb->nphases;
  lb_clock now;

  PetscFunctionBeginUser;
  lb_clock_now(&now);
  for (int k = 0; k < K; k++) {
    const double own = lb->phase[k].own_cpu, expect = lb->expect[k];
    /* a phase's time is at least 0 should every rank's own work come out
     * below (lb_phase_model_eval's maximum) */
    max[k] = fmax(0, own);
    sum[k] = own;
    sum[K + k] = isfinite(expect) ? fabs(own - expect) : 0;
    sum[2 * K + k] = isfinite(expect) ? own : 0;
  }
  max[K] = now.wall - lb->cycle_start.wall;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, max, K + 1, MPI_DOUBLE, MPI_MAX, lb->comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sum, 3 * K, MPI_DOUBLE, MPI_SUM, lb->comm));
  PetscFunctionReturn(0);
}

/* This cycle's own work of every phase on this rank into r. */
static void own_phases(const AmrLb lb, AmrLbRecord *r)
{
  for (int k = 0; k < lb->nphases; k++) {
    r->phase_own_cpu[k] = lb->phase[k].own_cpu;
    r->phase_own_wall[k] = lb->phase[k].own_wall;
    r->phase_wall[k] = lb->phase[k].wall;
  }
}

/* How far the last cycle's per-rank prediction missed this cycle's own
 * work (run totals per phase, from reduce_phases' sums), then this
 * cycle's prediction for the next. */
static void account_misses(AmrLb lb, const AmrLbRecord *r, const double *miss, const double *missed_of)
{
  for (int k = 0; k < lb->nphases; k++) {
    lb->phase[k].miss += miss[k];
    lb->phase[k].missed_of += missed_of[k];
    lb->expect[k] = r->phase_predicted ? r->phase_next[k] : NAN;
  }
}

/* The model of the cycle measured (its time, mean and I%, beside the
 * time the last cycle predicted for it) into r and the run's totals,
 * from each phase's largest and summed own work. */
static void account_cycle(AmrLb lb, AmrLbRecord *r, const double *max, const double *sum)
{
  const int P = lb->size;
  double time = 0, mean = 0;

  /* phase by phase, in lb_phase_model_eval's order, so that the numbers
   * are those of the model of every rank's loads */
  for (int k = 0; k < lb->nphases; k++) {
    time += max[k];
    mean += sum[k] / P;
  }
  r->cycle_time_s = time;
  r->cycle_mean_s = mean;
  r->cycle_imbalance_pct = lb_phase_imbalance_pct(P, time, time - mean);
  r->predicted_s = lb->predicted_next;
  lb->last_predicted = r->predicted_s;
  lb->last_measured = time;
  lb->model_total += time;
  lb->lost_s += time - mean;
}

/* Every phase's slowest rank and loss into the run's totals; returns the
 * time of the phases not modelled (their slowest ranks'). */
static double account_phases(AmrLb lb, const double *max, const double *sum)
{
  double unmodelled = 0;

  for (int k = 0; k < lb->nphases; k++) {
    lb->phase[k].time_total += max[k];
    lb->phase[k].lost_total += max[k] - sum[k] / lb->size;
    if (!lb->phase[k].modelled) unmodelled += max[k];
  }
  return unmodelled;
}

/* The predictions were made before this cycle's partition phase ended:
 * the phases not modelled count with this cycle's time (unmodelled)
 * instead of the last cycle's. */
static void correct_predictions(AmrLb lb, AmrLbRecord *r, double unmodelled)
{
  r->next_predicted_s += unmodelled - lb->unmodelled_s;
  r->next_kept_s += unmodelled - lb->unmodelled_s;
  r->next_initial_s += unmodelled - lb->unmodelled_s;
  lb->unmodelled_s = unmodelled;
  lb->predicted_next = r->next_predicted_s;
  r->predicted_cycle_imbalance_pct = lb->predicted_next_ipct;
  lb->predicted_next_ipct = r->next_imbalance_pct;
}

/* The gain over the initial partition the last cycle predicted for this
 * one into the run's total, this cycle's for the next kept; the run's
 * totals into r. */
static void account_gain(AmrLb lb, AmrLbRecord *r)
{
  lb->gain_s += lb->pending_gain;
  lb->pending_gain = isfinite(r->next_initial_s) && isfinite(r->next_predicted_s) ? r->next_initial_s - r->next_predicted_s : 0;
  r->model_total_s = lb->model_total;
  r->lost_s = lb->lost_s;
  r->gain_s = lb->gain_s;
}

PetscErrorCode AmrLbPhasesRecord(AmrLb lb, AmrLbRecord *r)
{
  const int K = lb->nphases;
  double max[AMR_LB_MAX_PHASES + 1], sum[3 * AMR_LB_MAX_PHASES];

  PetscFunctionBeginUser;
  PetscCall(reduce_phases(lb, max, sum));
  own_phases(lb, r);
  r->cycle_wall_s = max[K];
  lb->cycles_wall += max[K];
  account_misses(lb, r, sum + K, sum + 2 * K);
  account_cycle(lb, r, max, sum);
  correct_predictions(lb, r, account_phases(lb, max, sum));
  account_gain(lb, r);
  PetscFunctionReturn(0);
}
