#ifndef AMRDLB_IMPL_PHASE_H
#define AMRDLB_IMPL_PHASE_H

/* Private to the phase model (phase.c, phase_prefix.c, phase_split.c). */

#include "balance/lbphase.h"

/** A candidate's modelled time (or sum of caps) must fall below the best's
 *  by more than this fraction to replace it: round-off in the sums is some
 *  1e-16 of the time, so ties keep the earlier, simpler candidate (the
 *  plain sum of the weights first). */
#define LB_PHASE_BETTER 1e-12

/** The model's figures from the sum over phases of the largest part load
 *  (time) and of the mean part load (mean). */
void lb_phase_model_set(int nparts, double time, double mean, lb_phase_model *m);

/** Where this rank's piece lies: each phase's weight on the whole curve
 *  (total) and before the piece (before), the piece's first cell and the
 *  curve's cells.  Three collectives. */
typedef struct {
  double *total, *before; /* nphases each */
  int64_t first, ncells;
  int rank, size;
} lb_phase_piece;

/** Locate this rank's piece (p's arrays given, nphases values each). */
lb_err lb_phase_piece_locate(MPI_Comm comm, int64_t n, int nphases, const double *const *w, lb_phase_piece *p);

/** The parts that end at the cuts a rank holds, met in curve order: their
 *  loads per phase are differences of the phases' prefix sums at the cuts,
 *  the first against the last cut before the piece (one MPI_Exscan with
 *  MPI_MAX: prefixes grow along the curve), the last part against the
 *  curve's end. */
typedef struct {
  int nphases, nparts, owned;
  const double *total;
  double *first, *last, *max; /* the prefixes at the first and the last cut held; the largest part loads */
} lb_phase_ends;

/** Start an account (scratch: 3 nphases doubles, max ends there). */
void lb_phase_ends_init(lb_phase_ends *e, int nphases, int nparts, const double *total, double *scratch);

/** Cut j (1 <= j < nparts) lies here, where the phases' prefix sums are run. */
void lb_phase_ends_cut(lb_phase_ends *e, int j, const double *run);

/** The model of the cut (every rank's cuts met): e->max becomes every
 *  phase's largest part load.  Two collectives of nphases numbers. */
lb_err lb_phase_ends_model(lb_phase_ends *e, MPI_Comm comm, int rank, lb_phase_model *m);

/** What a search of cuts by prefix sums needs besides its best so far
 *  (lb_phase_choose's combinations, lb_phase_split's split). */
typedef struct {
  MPI_Comm comm;
  int64_t n;
  int nphases, nparts;
  const double *const *w;
  double *mean;      /* the phases' global means; the block the other nphases arrays lie in */
  lb_phase_piece piece;
  double *combined;  /* this rank's combined weights, then the factors being tried */
  double *scratch;   /* 4 nphases: a trial's prefixes and maxima (the last cut's before the piece at 2 nphases, the maxima at 3) */
  double *best_max;  /* the best combination's largest part load per phase */
  int64_t *cuts;     /* NULL, or the nparts + 1 cut positions a trial records */
  int record;        /* a trial records the cuts it places in lpos, lrun */
  int nl, lcap;      /* cuts recorded, room for */
  int64_t *lpos;     /* each recorded cut's local cell index */
  double *lrun;      /* and the phases' prefixes there (nphases each) */
} lb_phase_search;

/** Collective calls of a trial. */
#define LB_PHASE_TRIAL_COLLECTIVES 5

/** Open a search over this rank's n cells (res's arrays allocated, its
 *  counters started; the means and the piece located).  Collective. */
lb_err lb_phase_search_open(lb_phase_search *s, MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, lb_phase_choice *res);

/** Free a search's arrays (not the result's). */
void lb_phase_search_close(lb_phase_search *s);

/** The model of the sfc cut of this rank's cell weights c by prefix sums,
 *  with no P-long array: each rank places the cuts whose bounds fall
 *  between the previous piece's last cell midpoint and its own
 *  (lb_curve_sfc's rule: cut j before the first cell whose midpoint
 *  reaches j total / P) and accounts the parts that end there
 *  (lb_phase_ends).  Per rank O(n nphases) work and
 *  LB_PHASE_TRIAL_COLLECTIVES reductions of at most nphases numbers,
 *  whatever the number of parts.  With s->cuts the rank also records the
 *  cuts it placed there, with s->record in lpos and lrun. */
lb_err lb_phase_trial(lb_phase_search *s, const double *c, lb_phase_model *m);

/** Whether phase k weighs enough to be searched (5% of the mean cell). */
int lb_phase_searched(const lb_phase_search *s, int k);

/** The sfc cut of cell weights c as cells per part in res->counts, the
 *  same on every rank: its trial once more, each rank recording the cuts
 *  it places, and one reduction of the nparts + 1 positions (the one
 *  P-long collective). */
lb_err lb_phase_cut_counts(lb_phase_search *s, const double *c, lb_phase_choice *res);

/** The multi-constraint split (lb_phase_split) from caps start into sp
 *  (its alpha and counts allocated; its model, counts and counters set). */
lb_err lb_phase_split_search(lb_phase_search *s, const double *start, lb_phase_choice *sp);

#endif
