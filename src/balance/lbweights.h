#ifndef AMRDLB_LBWEIGHTS_H
#define AMRDLB_LBWEIGHTS_H

/* Timing-based cell weights (seed 003, Niemoeller et al. 2020): per-rank
 * compute times become a cost per load type by minimum-norm least squares.
 * Every guarded situation is reported in lb_weights_result.flags; only
 * invalid input (bad times, bad options) is an error. */

#include <mpi.h>
#include <stdint.h>

#include "balance.h"

/** Why a fit was not (fully) used; ORed into lb_weights_result.flags. */
typedef enum {
  LB_WEIGHTS_ABSENT_TYPE = 1 << 0,     /**< a load type has no cell on any rank: its cost is undefined and kept */
  LB_WEIGHTS_RANK_DEFICIENT = 1 << 1,  /**< collinear types: the minimum-norm solution was taken */
  LB_WEIGHTS_UNDERDETERMINED = 1 << 2, /**< fewer ranks than present types */
  LB_WEIGHTS_NEGATIVE = 1 << 3,        /**< a fitted cost was <= 0: the fit was rejected, costs kept */
  LB_WEIGHTS_SINGLE_RANK = 1 << 4,     /**< one rank: loads carry no information, costs kept */
  LB_WEIGHTS_EMPTY_WINDOW = 1 << 5,    /**< a rank has no timed step: costs kept */
  LB_WEIGHTS_ZERO_TIME = 1 << 6        /**< all measured times are zero: costs kept */
} lb_weights_flag;

/** Options of a fit. */
typedef struct {
  double trim;           /**< fraction cut from each end of the sorted window, in [0, 0.5); default 0.25 */
  const double *previous; /**< costs kept where the fit says nothing (ntypes values), or NULL for 1.0 */
} lb_weights_options;

/** The outcome of a fit, identical on every rank. */
typedef struct {
  int ntypes;
  double *coef;     /**< raw least-squares solution c of A c = l (load per cell of each type); 0 for absent types */
  double *cost;     /**< cost per load type used from now on: mean cell weight 1, or the kept costs */
  double *load;     /**< l_i = r_i / mean(r) per rank (nranks values) */
  double *predicted; /**< (A c)_i per rank, in load units */
  int nranks;
  int rank;         /**< numerical rank of the fitted matrix */
  int fitted;       /**< 1 when cost comes from this fit, 0 when costs were kept */
  unsigned flags;   /**< lb_weights_flag bits */
  double residual;  /**< ||A c - l||_2, 0 when no fit was made */
  double smape;     /**< symmetric mean absolute percentage error of predicted vs measured time per rank, percent */
} lb_weights_result;

/** Set the default options (trim 0.25, default costs 1). */
void lb_weights_options_default(lb_weights_options *opt);

/**
 * Fit costs from per-rank data held in one process (virtual ranks, tests).
 * times[i] holds nsteps[i] per-step compute times of rank i (seconds), counts
 * is the nranks x ntypes row-major table of cells of each type per rank.
 * On return res holds newly allocated arrays (lb_weights_result_free).
 */
lb_err lb_weights_fit_table(int nranks, const int *nsteps, const double *const *times, int ntypes,
                              const int64_t *counts, const lb_weights_options *opt, lb_weights_result *res);

/**
 * Fit costs collectively: every rank of comm passes its own window of nsteps
 * times and its ntypes counts; the small table is gathered and every rank
 * solves the same system, so all ranks return the same result.
 */
lb_err lb_weights_fit(MPI_Comm comm, int nsteps, const double *times, int ntypes, const int64_t *counts,
                        const lb_weights_options *opt, lb_weights_result *res);

/** Release the arrays of a result. */
void lb_weights_result_free(lb_weights_result *res);

/** Human-readable names of the flags set in flags, comma separated, into buf. */
void lb_weights_flags_string(unsigned flags, char *buf, size_t len);

/**
 * The r-trimmed mean of n values (r in [0, 0.5)): the floor(r n) smallest and
 * largest values are dropped. Does not modify x. n must be positive.
 */
double lb_trimmed_mean(int n, const double *x, double trim);

#endif
