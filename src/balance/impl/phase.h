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

#endif
