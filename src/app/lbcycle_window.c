/* window: a window of timed samples of this rank's own work and the
 * least-squares fit it feeds (seed 003's truncated mean and stacked
 * history, balance/lbweights.h): the timing weights' window of steps
 * (lbcycle_measure.c) and each modelled phase's (lbcycle_phases.c).  The
 * samples are a ring buffer of the last -lb_window times, written only
 * here. */
#include "app/impl/lbcycle.h"

#include <string.h>

PetscErrorCode AmrLbWindowCreate(AmrLb lb, AmrLbWindow *w)
{
  PetscFunctionBeginUser;
  memcpy(w->cost, lb->o.cost, sizeof w->cost);
  PetscCall(PetscMalloc1(lb->o.window, &w->win));
  PetscCall(PetscMalloc1((size_t)lb->o.window * lb->o.ntypes, &w->wcounts));
  AMR_LB_CHECK(lb->comm, lb_weights_history_create(lb->o.ntypes, lb->o.history, lb->o.forget, &w->hist));
  AmrLbWindowReset(w);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbWindowDestroy(AmrLbWindow *w)
{
  PetscFunctionBeginUser;
  lb_weights_history_destroy(&w->hist);
  PetscCall(PetscFree(w->win));
  PetscCall(PetscFree(w->wcounts));
  PetscFunctionReturn(0);
}

void AmrLbWindowReset(AmrLbWindow *w)
{
  w->wn = w->whead = 0;
  w->step_counts = 1;
}

PetscErrorCode AmrLbWindowAdd(AmrLb lb, AmrLbWindow *w, double t, const int64_t *counts)
{
  PetscFunctionBeginUser;
  w->win[w->whead] = t;
  if (counts) PetscCall(PetscArraycpy(w->wcounts + (size_t)w->whead * lb->o.ntypes, counts, lb->o.ntypes));
  else w->step_counts = 0;
  w->whead = (w->whead + 1) % lb->o.window;
  if (w->wn < lb->o.window) w->wn++;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbWindowExtendLast(AmrLb lb, AmrLbWindow *w, double t)
{
  PetscFunctionBeginUser;
  PetscCheck(w->wn > 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "no sample to extend");
  w->win[(w->whead + lb->o.window - 1) % lb->o.window] += t;
  PetscFunctionReturn(0);
}

/* The cells per load type of this rank that the window's times belong to:
 * the mean over the window's steps of the counts during each step when the
 * problem reported them for every step, else the counts at the window's
 * start.  The mean over all the window's steps, not only those the
 * truncated mean keeps: the trim drops the fastest and the slowest steps,
 * symmetrically about the middle of a front's steady advance, and a step
 * slowed by another process has the counts of its neighbours. */
void AmrLbWindowCounts(const AmrLb lb, const AmrLbWindow *w, double *mean)
{
  const int T = lb->o.ntypes;

  for (int t = 0; t < T; t++) mean[t] = (double)lb->counts[t];
  if (!w->step_counts || w->wn == 0) return;
  for (int t = 0; t < T; t++) {
    mean[t] = 0;
    for (int k = 0; k < w->wn; k++) mean[t] += (double)w->wcounts[(size_t)k * T + t];
    mean[t] /= w->wn;
  }
}

PetscErrorCode AmrLbWindowFit(AmrLb lb, AmrLbWindow *w, const double *mean, lb_weights_result *res)
{
  const int T = lb->o.ntypes;
  lb_weights_options wo;
  int64_t rounded[AMR_LB_MAX_TYPES];
  double *times;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(w->wn + 1, &times));
  /* oldest first: the ring buffer starts at whead once it is full */
  for (int k = 0; k < w->wn; k++) times[k] = w->win[w->wn < lb->o.window ? k : (w->whead + k) % lb->o.window];
  lb_weights_options_default(&wo);
  wo.trim = lb->o.trim;
  wo.previous = w->cost;
  /* the library counts whole cells: a mean count of hundreds is off by
   * at most half a cell */
  for (int t = 0; t < T; t++) rounded[t] = (int64_t)llround(mean[t]);
  AMR_LB_CHECK(lb->comm, lb_weights_fit(lb->comm, w->wn, times, T, rounded, &wo, w->hist, res));
  PetscCall(PetscFree(times));
  memcpy(w->cost, res->cost, sizeof(double) * T);
  PetscFunctionReturn(0);
}
