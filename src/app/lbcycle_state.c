/* The balancer's part of a checkpoint: what a restart needs to go on as if
 * the run had not stopped (src/app/lbcycle.h, AmrLbSave and AmrLbLoad). */
#include "app/impl/lbcycle.h"

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

/* The byte buffers of the timing fit's windows and of sfc-shift. */
static PetscErrorCode save_buffers(AmrLb lb, AmrCkpState st)
{
  void *buf = NULL;
  size_t len = 0;

  PetscFunctionBeginUser;
  if (lb->hist) {
    LB_CHECK(lb->comm, lb_weights_history_pack(lb->hist, &buf, &len));
    PetscCall(AmrCkpStateSetBytes(st, "lb.weights_history", buf, len));
    free(buf);
  }
  if (lb->shifting) {
    LB_CHECK(lb->comm, lb_curve_shifter_pack(&lb->shifter, &buf, &len));
    PetscCall(AmrCkpStateSetBytes(st, "lb.shifter", buf, len));
    free(buf);
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
  PetscFunctionReturn(0);
}

/* Fitted costs and stacked windows only feed timing weights; count and
 * model weights take the restart's options. */
static PetscErrorCode load_fit(AmrLb lb, AmrCkpState st)
{
  const char *weights;
  const void *buf;
  size_t len;
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetString(st, "lb.weights", &weights));
  PetscCall(AmrCkpStateGetBytes(st, "lb.cost", &buf, &len));
  if (lb->o.weights == AMR_LB_TIMING && !strcmp(weights, amr_lb_weight_names[AMR_LB_TIMING]) && len == sizeof(double) * lb->o.ntypes) memcpy(lb->cost, buf, len);
  PetscCall(AmrCkpStateHas(st, "lb.weights_history", &has));
  if (lb->hist && has) {
    int kept;
    PetscCall(AmrCkpStateGetBytes(st, "lb.weights_history", &buf, &len));
    LB_CHECK(lb->comm, lb_weights_history_restore(lb->hist, buf, len, lb->size, &kept));
  }
  PetscFunctionReturn(0);
}

/* The trace of the same file goes on after the checkpoint's last cycle;
 * sfc-shift's sequence goes on where it was. */
static PetscErrorCode load_trace_shifter(AmrLb lb, AmrCkpState st)
{
  const void *buf;
  size_t len;
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateHas(st, "lb.trace_file", &has));
  if (lb->trace && has) {
    const char *saved, *path;
    int64_t end;
    PetscCall(AmrCkpStateGetString(st, "lb.trace_file", &saved));
    AmrTraceEnd(lb->trace, &path, &end);
    PetscCall(AmrCkpStateGetInt(st, "lb.trace_end", &end));
    if (!strcmp(saved, path)) PetscCall(AmrTraceSetEnd(lb->trace, end));
  }
  PetscCall(AmrCkpStateHas(st, "lb.shifter", &has));
  if (lb->shifting && has) {
    PetscCall(AmrCkpStateGetBytes(st, "lb.shifter", &buf, &len));
    LB_CHECK(lb->comm, lb_curve_shifter_restore(&lb->shifter, buf, len));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbLoad(AmrLb lb, AmrCkpState st)
{
  PetscFunctionBeginUser;
  /* the run totals go on, whatever the restart changed */
  PetscCall(load_migration(lb, st));
  PetscCall(load_decide(st, &lb->decide));
  PetscCall(load_totals(lb, st));
  PetscCall(load_fit(lb, st));
  PetscCall(load_trace_shifter(lb, st));
  PetscFunctionReturn(0);
}
