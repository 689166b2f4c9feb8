/** \file impl/lbcycle.h
 * Inside the balancing step of the cycle (app/lbcycle.h): the balancer's
 * state and the jobs of one AmrLbBalance, one file each:
 *   lbcycle_measure.c  the window of timed steps, the rank times, the fit;
 *   lbcycle_propose.c  the cell weights, the method's cuts, the load trace;
 *   lbcycle_decide.c   whether the proposed partition is worth its move;
 *   lbcycle_apply.c    the repartition with the data (and the even and
 *                      initial splits);
 *   lbcycle_report.c   the report line, the human line, the summary;
 *   lbcycle_state.c    the balancer's part of a checkpoint;
 *   lbcycle_options.c  the -lb_* options;
 *   lbcycle.c          the balancer's life and the sequence of one step. */
#ifndef AMR_APP_IMPL_LBCYCLE_H
#define AMR_APP_IMPL_LBCYCLE_H

#include <math.h>
#include "app/lbcycle.h"
#include "balance/lbcurve.h"
#include "balance/lbdecide.h"
#include "balance/lbstate.h"
#include "balance/lbweights.h"

struct AmrLb {
  AmrLbOptions o;
  MPI_Comm comm;
  int size, rank;
  lb_graph *graph;
  lb_weights_history *hist; /* timing: the stacked windows of the fit */
  int shifting;             /* sfc-shift: Niemoeller et al. 2020's sequence on the measured times */
  lb_curve_shifter shifter;
  double cost[AMR_LB_MAX_TYPES];
  double *win;      /* the last o.window step times, oldest at whead once full */
  int wn, whead;
  double cycle_cpu, cycle_wall; /* every step since the window started */
  int64_t counts[AMR_LB_MAX_TYPES]; /* the window's cells per load type at its start */
  /* cells per load type during each step of win (same ring), when the
   * problem reports them: a moving front changes the types within a window */
  int64_t *wcounts;
  int step_counts;  /* every step since the window started came with its counts */
  lb_migration_model migration; /* the busiest rank's measured migration times per cell moved */
  AmrTrace trace;           /* -trace_loads */
  double t_start, lost, lb_total, migrate_total;
  lb_decide_state decide; /* -lb_threshold: the loss since the last rebalance */
  /* measured per-cell costs: sums and counts per type of the window (this
   * rank), and the adapted forest's costs for -lb_weights measured */
  int have_measured;
  double measured_sum[AMR_LB_MAX_TYPES], measured_n[AMR_LB_MAX_TYPES];
  double *cell_cost;
  p4est_locidx_t ncell_cost;
};

/* One AmrLbBalance as it goes: what one job hands to the next. */
typedef struct {
  p4est_t *p4est;
  const int *types;       /* load type of every local cell, NULL: all 0 */
  int eligible;           /* the method runs this cycle */
  double *w;              /* weight of every local cell */
  int64_t *cur, *next;    /* cells per rank: the current partition, the proposed one */
  p4est_locidx_t *counts; /* next, as p4est takes it */
  double *before, *after; /* loads per rank by the weights on cur and next */
  double t0, lb_time;     /* wall clock at the start; weights, method and cuts */
  lb_decide_input in;     /* -lb_threshold's rule: its inputs */
  lb_decision decision;   /* and its outcome (LB_DECIDE_REBALANCE without the rule) */
} AmrLbStep;

/* Names of AmrLbWeights, in its order. */
extern const char *const amr_lb_weight_names[];

/* A failure inside the balancer library after the options were accepted
 * is a bug, not bad input. */
#define LB_CHECK(comm, call) \
  do { \
    lb_err e_ = (call); \
    PetscCheck(e_ == LB_OK, comm, PETSC_ERR_LIB, "balancer: %s", lb_errmsg()); \
  } while (0)

static inline double amr_lb_vmax(int n, const double *x)
{
  double m = x[0];
  for (int i = 1; i < n; i++) m = fmax(m, x[i]);
  return m;
}

static inline double amr_lb_vsum(int n, const double *x)
{
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  return s;
}

/* measure: the rank times of the window, the fit (timing), the prediction
 * the weights made for the measured partition. */
PetscErrorCode AmrLbMeasure(AmrLb lb, AmrLbRecord *r);
/* propose: weigh the cells on the current partition (s->w, cur, before) */
PetscErrorCode AmrLbWeigh(AmrLb lb, AmrLbStep *s, AmrLbRecord *r);
/* propose: -trace_loads's record of the curve the balancer weighs */
PetscErrorCode AmrLbTraceCycle(AmrLb lb, const AmrLbStep *s, AmrLbRecord *r);
/* propose: the method's cuts, families kept together (s->next, counts) */
PetscErrorCode AmrLbPropose(AmrLb lb, AmrLbStep *s, AmrLbRecord *r);
/* decide: count this cycle's loss (every cycle, eligible or not) */
PetscErrorCode AmrLbAccount(AmrLb lb, AmrLbRecord *r);
/* decide: whether the proposed partition is worth its migration */
PetscErrorCode AmrLbDecide(AmrLb lb, AmrLbStep *s, AmrLbRecord *r);
/* apply: repartition with the data when decided, else keep (s->after, next) */
PetscErrorCode AmrLbApply(AmrLb lb, AmrLbStep *s, int nfields, const AmrField *fields, AmrLbRecord *r);
/* report: the predictions for the next cycle and the run totals */
PetscErrorCode AmrLbRecordClose(AmrLb lb, const AmrLbStep *s, AmrLbRecord *r);

#endif
