/* The balancer's part of a checkpoint: what a restart needs to go on as if
 * the run had not stopped (src/app/lbcycle.h, AmrLbSave and AmrLbLoad). */
#include "app/impl/lbcycle.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* -lb_threshold's rule: the loss since the last rebalance and its trust in
 * the predictions. */
static PetscErrorCode save_decide(const lb_decide_state *d, AmrCkpState st)
{
  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_excess", d->excess));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_residual", d->residual));
  PetscCall(AmrCkpStateSetInt(st, "lb.decide_rebalanced", d->rebalanced));
  PetscCall(AmrCkpStateSetInt(st, "lb.decide_trust", d->trust));
  PetscCall(AmrCkpStateSetInt(st, "lb.decide_promised", d->promised));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_expected", d->expected));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_promise_cost", d->promise_cost));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_last", d->last));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_before", d->before));
  PetscFunctionReturn(0);
}

static PetscErrorCode load_decide(AmrCkpState st, lb_decide_state *d)
{
  int64_t n;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_excess", &d->excess));
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_residual", &d->residual));
  PetscCall(AmrCkpStateGetInt(st, "lb.decide_rebalanced", &n));
  d->rebalanced = n != 0;
  PetscCall(AmrCkpStateGetInt(st, "lb.decide_trust", &n));
  d->trust = n != 0;
  PetscCall(AmrCkpStateGetInt(st, "lb.decide_promised", &n));
  d->promised = n != 0;
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_expected", &d->expected));
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_promise_cost", &d->promise_cost));
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_last", &d->last));
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_before", &d->before));
  PetscFunctionReturn(0);
}

/* The measured migration times per cell that predict the next move. */
static PetscErrorCode load_migration(AmrLb lb, AmrCkpState st)
{
  const void *buf;
  size_t len;
  int64_t n, head;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetBytes(st, "lb.migration_per_cell", &buf, &len));
  PetscCall(AmrCkpStateGetInt(st, "lb.migration_n", &n));
  PetscCall(AmrCkpStateGetInt(st, "lb.migration_head", &head));
  PetscCheck(len == sizeof lb->migration.per_cell && n >= 0 && n <= LB_MIGRATION_HISTORY && head >= 0 && head < LB_MIGRATION_HISTORY, lb->comm,
             PETSC_ERR_USER_INPUT, "checkpoint: the balancer's migration times are malformed");
  memcpy(lb->migration.per_cell, buf, len);
  lb->migration.n = (int)n;
  lb->migration.head = (int)head;
  PetscFunctionReturn(0);
}

/* The elapsed time and the run totals. */
static PetscErrorCode load_totals(AmrLb lb, AmrCkpState st)
{
  double elapsed;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetReal(st, "lb.elapsed_s", &elapsed));
  PetscCall(AmrCkpStateGetReal(st, "lb.lost_rank_s", &lb->lost));
  PetscCall(AmrCkpStateGetReal(st, "lb.lb_total_s", &lb->lb_total));
  PetscCall(AmrCkpStateGetReal(st, "lb.migrate_total_s", &lb->migrate_total));
  lb->t_start = MPI_Wtime() - elapsed;
  PetscFunctionReturn(0);
}

/* A fit's stacked windows under key: this rank's own rows, in its part. */
static PetscErrorCode save_history(AmrLb lb, AmrCkpState st, const char *key, const AmrLbWindow *w)
{
  void *buf = NULL;
  size_t len = 0;

  PetscFunctionBeginUser;
  AMR_LB_CHECK(lb->comm, lb_weights_history_pack(w->hist, &buf, &len));
  PetscCall(AmrCkpStateSetRankBytes(st, key, buf, len));
  free(buf);
  PetscFunctionReturn(0);
}

/* Whether every rank's ok holds: what a rank takes from its own part is
 * taken by all ranks or by none. */
static PetscErrorCode all_ranks(AmrLb lb, PetscBool ok, PetscBool *all)
{
  int v = ok ? 1 : 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MIN, lb->comm));
  *all = v ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* A fit's costs (cost_key, unless NULL, when of this run's load types) and
 * this rank's stacked windows (hist_key, in its part; on another rank
 * count there is none) back, where the checkpoint has them. */
static PetscErrorCode load_window(AmrLb lb, AmrCkpState st, const char *cost_key, const char *hist_key, AmrLbWindow *w)
{
  const void *buf;
  size_t len;
  PetscBool has = PETSC_FALSE;
  int kept, bad;

  PetscFunctionBeginUser;
  if (cost_key) PetscCall(AmrCkpStateHas(st, cost_key, &has));
  if (has) PetscCall(AmrCkpStateGetBytes(st, cost_key, &buf, &len));
  if (has && len == sizeof(double) * lb->o.ntypes) memcpy(w->cost, buf, len);
  PetscCall(AmrCkpStateGetRankBytes(st, hist_key, &buf, &len));
  bad = buf && lb_weights_history_restore(w->hist, buf, len, lb->size, &kept) != LB_OK ? lb->rank : INT_MAX;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, lb->comm));
  PetscCheck(bad == INT_MAX, lb->comm, PETSC_ERR_USER_INPUT, "checkpoint: the balancer's %s in the part of rank %d is not of this run's load types or is damaged", hist_key, bad);
  PetscFunctionReturn(0);
}

static PetscErrorCode save_buffers(AmrLb lb, AmrCkpState st)
{
  void *buf = NULL;
  size_t len = 0;

  PetscFunctionBeginUser;
  if (lb->o.weights == AMR_LB_TIMING) PetscCall(save_history(lb, st, "lb.weights_history", &lb->timing));
  if (lb->shifting) {
    AMR_LB_CHECK(lb->comm, lb_curve_shifter_pack(&lb->shifter, &buf, &len));
    PetscCall(AmrCkpStateSetBytes(st, "lb.shifter", buf, len));
    free(buf);
    PetscCall(AmrCkpStateSetRankBytes(st, "lb.shifter_best", &lb->shifter.best_counts[lb->rank], sizeof(int64_t)));
  }
  PetscFunctionReturn(0);
}

/* The phase model's run totals and the prediction for the next cycle, in
 * the phases' order; with -lb_weights phases every modelled phase's fit
 * (costs and stacked windows); the initial partition's positions on the
 * curve, the never balanced alternative of the gain. */
static PetscErrorCode save_phases(AmrLb lb, AmrCkpState st)
{
  double v[8 + 2 * AMR_LB_MAX_PHASES];

  PetscFunctionBeginUser;
  v[0] = lb->model_total;
  v[1] = lb->lost_s;
  v[2] = lb->gain_s;
  v[3] = lb->pending_gain;
  v[4] = lb->predicted_next;
  v[5] = lb->unmodelled_s;
  v[6] = lb->last_predicted;
  v[7] = lb->last_measured;
  for (int k = 0; k < lb->nphases; k++) {
    v[8 + 2 * k] = lb->phase[k].time_total;
    v[9 + 2 * k] = lb->phase[k].lost_total;
  }
  PetscCall(AmrCkpStateSetBytes(st, "lb.phase_model", v, sizeof(double) * (8 + 2 * lb->nphases)));
  /* apart from lb.phase_model, which keeps its layout for older checkpoints */
  for (int k = 0; k < lb->nphases; k++) {
    v[2 * k] = lb->phase[k].miss;
    v[2 * k + 1] = lb->phase[k].missed_of;
  }
  if (lb->nphases) PetscCall(AmrCkpStateSetBytes(st, "lb.phase_miss", v, sizeof(double) * 2 * lb->nphases));
  /* this rank's predictions, one per phase, in its part */
  if (lb->nphases) PetscCall(AmrCkpStateSetRankBytes(st, "lb.phase_expect", lb->expect, sizeof(double) * lb->nphases));
  PetscCall(AmrCkpStateSetBytes(st, "lb.predicted_next_ipct", &lb->predicted_next_ipct, sizeof(double)));
  PetscCall(AmrCkpStateSetBytes(st, "lb.cycles_wall", &lb->cycles_wall, sizeof(double)));
  /* this rank's first position, in its part; the end of the curve, shared */
  if (lb->initial_pos) {
    PetscCall(AmrCkpStateSetRankBytes(st, "lb.initial_position", &lb->initial_pos[lb->rank], sizeof(p4est_quadrant_t)));
    PetscCall(AmrCkpStateSetBytes(st, "lb.initial_end", &lb->initial_pos[lb->size], sizeof(p4est_quadrant_t)));
  }
  for (int k = 0; k < lb->nphases && lb->o.weights == AMR_LB_PHASES; k++) {
    char key[64];
    if (lb->phase[k].modelled != AMR_LB_PHASE_TYPES) continue;
    PetscCall(PetscSNPrintf(key, sizeof key, "lb.phase.%s.cost", lb->phase[k].name));
    PetscCall(AmrCkpStateSetBytes(st, key, lb->phase[k].fit.cost, sizeof(double) * lb->o.ntypes));
    PetscCall(PetscSNPrintf(key, sizeof key, "lb.phase.%s.history", lb->phase[k].name));
    PetscCall(save_history(lb, st, key, &lb->phase[k].fit));
  }
  PetscFunctionReturn(0);
}

/* The per-rank values of save_phases, each rank's from its own part: its
 * predictions per phase, and its initial first position gathered into the
 * initial partition that the phase model keeps on every rank (the cells
 * per initial part of its prediction, initial_counts).  On another rank
 * count there are none, and the first cycle goes unpredicted. */
static PetscErrorCode load_rank_values(AmrLb lb, AmrCkpState st)
{
  const void *buf, *end;
  size_t len, elen = 0;
  PetscBool has, all;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetRankBytes(st, "lb.phase_expect", &buf, &len));
  PetscCall(all_ranks(lb, lb->nphases > 0 && buf && len == sizeof(double) * lb->nphases, &all));
  if (all) memcpy(lb->expect, buf, len);
  PetscCall(AmrCkpStateGetRankBytes(st, "lb.initial_position", &buf, &len));
  PetscCall(AmrCkpStateHas(st, "lb.initial_end", &has));
  if (has) PetscCall(AmrCkpStateGetBytes(st, "lb.initial_end", &end, &elen));
  PetscCall(all_ranks(lb, buf && len == sizeof(p4est_quadrant_t) && elen == sizeof(p4est_quadrant_t), &all));
  if (all) {
    PetscCall(PetscFree(lb->initial_pos));
    PetscCall(PetscMalloc1(lb->size + 1, &lb->initial_pos));
    PetscCallMPI(MPI_Allgather(buf, (int)len, MPI_BYTE, lb->initial_pos, (int)len, MPI_BYTE, lb->comm));
    memcpy(&lb->initial_pos[lb->size], end, elen);
  }
  PetscFunctionReturn(0);
}

/* What save_phases kept, where it fits this run: the same phases, the
 * initial positions on as many ranks, the fits with phases weights. */
static PetscErrorCode load_phases(AmrLb lb, AmrCkpState st)
{
  const void *buf;
  size_t len;
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateHas(st, "lb.phase_model", &has));
  if (has) PetscCall(AmrCkpStateGetBytes(st, "lb.phase_model", &buf, &len));
  if (has && len == sizeof(double) * (8 + 2 * lb->nphases)) {
    const double *v = buf;
    lb->model_total = v[0];
    lb->lost_s = v[1];
    lb->gain_s = v[2];
    lb->pending_gain = v[3];
    lb->predicted_next = v[4];
    lb->unmodelled_s = v[5];
    lb->last_predicted = v[6];
    lb->last_measured = v[7];
    for (int k = 0; k < lb->nphases; k++) {
      lb->phase[k].time_total = v[8 + 2 * k];
      lb->phase[k].lost_total = v[9 + 2 * k];
    }
  }
  PetscCall(AmrCkpStateHas(st, "lb.phase_miss", &has));
  if (has) PetscCall(AmrCkpStateGetBytes(st, "lb.phase_miss", &buf, &len));
  if (has && len == sizeof(double) * 2 * lb->nphases) {
    const double *v = buf;
    for (int k = 0; k < lb->nphases; k++) {
      lb->phase[k].miss = v[2 * k];
      lb->phase[k].missed_of = v[2 * k + 1];
    }
  }
  PetscCall(AmrCkpStateHas(st, "lb.predicted_next_ipct", &has));
  if (has) PetscCall(AmrCkpStateGetBytes(st, "lb.predicted_next_ipct", &buf, &len));
  if (has && len == sizeof(double)) memcpy(&lb->predicted_next_ipct, buf, len);
  /* a checkpoint of a build before the split of the wall: the cycles it
   * covers are not in the total, which stays unknown (the summary then
   * gives the wall unsplit) */
  PetscCall(AmrCkpStateHas(st, "lb.cycles_wall", &has));
  if (has) PetscCall(AmrCkpStateGetBytes(st, "lb.cycles_wall", &buf, &len));
  if (has && len == sizeof(double)) memcpy(&lb->cycles_wall, buf, len);
  else lb->cycles_wall = NAN;
  PetscCall(load_rank_values(lb, st));
  for (int k = 0; k < lb->nphases && lb->o.weights == AMR_LB_PHASES; k++) {
    char cost[64], hist[64];
    if (lb->phase[k].modelled != AMR_LB_PHASE_TYPES) continue;
    PetscCall(PetscSNPrintf(cost, sizeof cost, "lb.phase.%s.cost", lb->phase[k].name));
    PetscCall(PetscSNPrintf(hist, sizeof hist, "lb.phase.%s.history", lb->phase[k].name));
    PetscCall(load_window(lb, st, cost, hist, &lb->phase[k].fit));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbSave(AmrLb lb, AmrCkpState st)
{
  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateSetString(st, "lb.weights", amr_lb_weight_names[lb->o.weights]));
  PetscCall(AmrCkpStateSetBytes(st, "lb.cost", lb->cost, sizeof(double) * lb->o.ntypes));
  PetscCall(AmrCkpStateSetBytes(st, "lb.migration_per_cell", lb->migration.per_cell, sizeof lb->migration.per_cell));
  PetscCall(AmrCkpStateSetInt(st, "lb.migration_n", lb->migration.n));
  PetscCall(AmrCkpStateSetInt(st, "lb.migration_head", lb->migration.head));
  PetscCall(save_decide(&lb->decide, st));
  PetscCall(AmrCkpStateSetReal(st, "lb.elapsed_s", MPI_Wtime() - lb->t_start));
  PetscCall(AmrCkpStateSetReal(st, "lb.lost_rank_s", lb->lost));
  PetscCall(AmrCkpStateSetReal(st, "lb.lb_total_s", lb->lb_total));
  PetscCall(AmrCkpStateSetReal(st, "lb.migrate_total_s", lb->migrate_total));
  if (lb->trace) {
    const char *path;
    int64_t end;
    AmrTraceEnd(lb->trace, &path, &end);
    PetscCall(AmrCkpStateSetString(st, "lb.trace_file", path));
    PetscCall(AmrCkpStateSetInt(st, "lb.trace_end", end));
  }
  PetscCall(save_buffers(lb, st));
  PetscCall(save_phases(lb, st));
  PetscFunctionReturn(0);
}

/* sfc-shift's sequence, its best partition's cells per part gathered
 * from the parts' own saves; on another rank count there are none, and
 * the search starts again. */
static PetscErrorCode load_shifter(AmrLb lb, AmrCkpState st)
{
  const void *buf, *mine;
  size_t len, mlen;
  int64_t *best = NULL;
  PetscBool all;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetBytes(st, "lb.shifter", &buf, &len));
  PetscCall(AmrCkpStateGetRankBytes(st, "lb.shifter_best", &mine, &mlen));
  PetscCall(all_ranks(lb, mine && mlen == sizeof(int64_t), &all));
  if (all) {
    PetscCall(PetscMalloc1(lb->size, &best));
    PetscCallMPI(MPI_Allgather(mine, 1, MPI_INT64_T, best, 1, MPI_INT64_T, lb->comm));
  }
  AMR_LB_CHECK(lb->comm, lb_curve_shifter_restore(&lb->shifter, buf, len, best));
  PetscCall(PetscFree(best));
  PetscFunctionReturn(0);
}

/* What save_buffers kept: fitted costs and stacked windows only feed
 * timing weights (count and model weights take the restart's options);
 * sfc-shift's sequence goes on where it was. */
static PetscErrorCode load_buffers(AmrLb lb, AmrCkpState st)
{
  const char *weights;
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetString(st, "lb.weights", &weights));
  if (lb->o.weights == AMR_LB_TIMING)
    PetscCall(load_window(lb, st, strcmp(weights, amr_lb_weight_names[AMR_LB_TIMING]) ? NULL : "lb.cost", "lb.weights_history", &lb->timing));
  PetscCall(AmrCkpStateHas(st, "lb.shifter", &has));
  if (lb->shifting && has) PetscCall(load_shifter(lb, st));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbSetRun(AmrLb lb, uint32_t run)
{
  PetscFunctionBeginUser;
  if (lb->trace) AmrTraceSetRun(lb->trace, run);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbContinueTrace(AmrLb lb, AmrCkpState st, uint32_t run, PetscBool check_run)
{
  int64_t end = 0;
  PetscBool has;

  PetscFunctionBeginUser;
  if (!lb->trace) PetscFunctionReturn(0);
  AmrTraceSetRun(lb->trace, run);
  PetscCall(AmrCkpStateHas(st, "lb.trace_file", &has));
  if (has) {
    const char *saved, *path;
    PetscCall(AmrCkpStateGetString(st, "lb.trace_file", &saved));
    AmrTraceEnd(lb->trace, &path, &end);
    /* the trace of the same file goes on after the checkpoint's last
     * cycle; another file is begun anew */
    if (!strcmp(saved, path)) PetscCall(AmrCkpStateGetInt(st, "lb.trace_end", &end));
    else end = 0;
  }
  PetscCall(AmrTraceContinue(lb->trace, check_run, end));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbLoad(AmrLb lb, AmrCkpState st)
{
  PetscFunctionBeginUser;
  /* the run totals go on, whatever the restart changed */
  PetscCall(load_migration(lb, st));
  PetscCall(load_decide(st, &lb->decide));
  PetscCall(load_totals(lb, st));
  PetscCall(load_buffers(lb, st));
  PetscCall(load_phases(lb, st));
  PetscFunctionReturn(0);
}
