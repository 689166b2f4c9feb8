/** \file impl/lbcycle.h
 * Inside the balancing step of the cycle (app/lbcycle.h): the balancer's
 * state and the jobs of one AmrLbBalance, one file each:
 *   lbcycle_measure.c  the timed steps, the rank times, the fit;
 *   lbcycle_phases.c   every phase's own work, its fit, the phase model;
 *   lbcycle_window.c   a window of timed samples and its fit (the steps',
 *                      each phase's);
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
#include "balance/lbclock.h"
#include "balance/lbphase.h"

/* A window of timed samples and the least-squares fit it feeds (seed 003):
 * the timing weights' window of steps, and each modelled phase's. */
typedef struct {
  double *win;      /* the last o.window sample times, oldest at whead once full */
  int wn, whead;
  /* cells per load type during each sample of win (same ring), when the
   * problem reports them: a moving front changes the types within a window */
  int64_t *wcounts;
  int step_counts;  /* every sample since the window started came with its counts */
  lb_weights_history *hist; /* the stacked windows of the fit */
  double cost[AMR_LB_MAX_TYPES]; /* the fitted costs, mean cell weight 1 */
} AmrLbWindow;

/* One phase of the cycle (app/lbcycle.h, AmrLbPhaseSwitch): this rank's own
 * work in it this cycle, and its fit. */
typedef struct {
  const char *name;
  int modelled;     /* its work follows the cells: fitted and predicted */
  double own_cpu, own_wall, wall; /* this cycle, this rank (wall - own_wall: inside MPI) */
  int samples;      /* samples closed this cycle */
  int visit_marked; /* the current visit closed a sample already */
  AmrLbWindow fit;
  double sec[AMR_LB_MAX_TYPES]; /* seconds per cell of each type in one cycle of the phase */
  double time_total, lost_total; /* run totals: its slowest rank's own work, and that less the mean */
  double miss, missed_of; /* run totals over the ranks and cycles predicted: |own CPU - predicted|, and the own CPU */
} AmrLbPhase;

struct _p_AmrLb {
  AmrLbOptions o;
  MPI_Comm comm;
  int size, rank;
  lb_graph *graph;
  int shifting;             /* the method has a shift hook (sfc-shift): its sequence on the measured times */
  lb_curve_shifter shifter; /* that sequence, carried between cycles and checkpointed */
  double *cost;             /* = timing.cost: weight per load type of count, timing, model */
  AmrLbWindow timing;       /* the weighed steps the problem logs (AmrLbAddStep) */
  double cycle_cpu, cycle_wall; /* every step since the window started */
  int64_t counts[AMR_LB_MAX_TYPES]; /* the window's cells per load type at its start */
  /* the phases of the cycle: the rank's clock runs in phase `current`
   * (-1: none) since `visit`, and its last sample ended at `mark` */
  int nphases, current;
  int balance_phase;        /* the phase AmrLbBalance runs in, whose own work is balancing's cost (-1: none yet) */
  int cost_phase;           /* the phase cell_cost measures (-1: none) */
  AmrLbPhase phase[AMR_LB_MAX_PHASES];
  lb_clock visit, mark, cycle_start;
  lb_phase_model measured_model; /* this cycle's, all phases (AmrLbPhasesRecord) */
  double predicted_next;    /* the model's time for the next cycle, NaN: none yet */
  double predicted_next_ipct; /* and its I%, for the partition the step took (kept or new), NaN: none yet */
  double model_total, lost_s, gain_s; /* run totals: measured model time, its loss, modelled gain over the initial partition */
  double cycles_wall;       /* run total of the measured cycles' wall time (each cycle's slowest rank): the summary's split of the wall */
  double pending_gain;      /* the gain the model predicts for the next cycle */
  double last_predicted, last_measured; /* the last cycle's model time and its prediction (summary) */
  p4est_quadrant_t *initial_pos; /* the initial partition as curve positions (p4est's global_first_position), NULL: none */
  double unmodelled_s;      /* the last cycle's time of the phases not modelled (their slowest ranks) */
  double expect[AMR_LB_MAX_PHASES]; /* the own CPU the last cycle predicted for this one on this rank, per phase (NaN: none) */
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
  int npw;                /* modelled phases */
  double *pw[AMR_LB_MAX_PHASES]; /* their weight of every local cell, seconds per cycle */
} AmrLbStep;

/* Names of AmrLbWeights, in its order. */
extern const char *const amr_lb_weight_names[];

/* A failure inside the balancer library after the options were accepted
 * is a bug, not bad input. */
#define AMR_LB_CHECK(comm, call) \
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

/* window: a window of samples and its fit (timing's steps, each phase's) */
PetscErrorCode AmrLbWindowCreate(AmrLb lb, AmrLbWindow *w);
PetscErrorCode AmrLbWindowDestroy(AmrLbWindow *w);
void AmrLbWindowReset(AmrLbWindow *w);
PetscErrorCode AmrLbWindowAdd(AmrLb lb, AmrLbWindow *w, double t, const int64_t *counts);
/* window: time t added to the last sample (there must be one) */
PetscErrorCode AmrLbWindowExtendLast(AmrLb lb, AmrLbWindow *w, double t);
/* window: the cells per load type of this rank that the window's times belong to */
void AmrLbWindowCounts(const AmrLb lb, const AmrLbWindow *w, double *mean);
/* window: the least-squares fit of the window (collective); w->cost takes res->cost */
PetscErrorCode AmrLbWindowFit(AmrLb lb, AmrLbWindow *w, const double *mean, lb_weights_result *res);

/* phases: a new cycle's clocks; a sample of the current phase closed with
 * this rank's counts (NULL: the window's); every modelled phase fitted
 * (seconds per cell of each type into its sec) */
PetscErrorCode AmrLbPhasesStart(AmrLb lb);
PetscErrorCode AmrLbPhaseMark(AmrLb lb, const int64_t *counts);
PetscErrorCode AmrLbPhasesFit(AmrLb lb, AmrLbRecord *r);
/* phases: every modelled phase's weight per local cell of the adapted
 * forest, in seconds (s->pw); -lb_weights phases: the combined weight of
 * least modelled time into s->w (mean cell weight 1) */
PetscErrorCode AmrLbPhaseWeights(AmrLb lb, AmrLbStep *s, AmrLbRecord *r);
/* phases: the model's predictions for the next cycle on the partition it
 * gets, the kept one and the initial one */
PetscErrorCode AmrLbPhasesPredict(AmrLb lb, const AmrLbStep *s, AmrLbRecord *r);
PetscErrorCode AmrLbPhasesDestroy(AmrLb lb);
/* phases: the initial partition's positions on the curve, the never
 * balanced alternative the gain is measured against */
PetscErrorCode AmrLbPhasesInitial(AmrLb lb, p4est_t *p4est);

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
