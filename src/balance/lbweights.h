#ifndef AMRDLB_LBWEIGHTS_H
#define AMRDLB_LBWEIGHTS_H

/* Timing-based cell weights (Niemoeller et al. 2020, Niemoeller et al. 2020): per-rank
 * compute times become a cost per load type by least squares. Every rank
 * contributes one row per window (its cells of each type | the truncated
 * mean of its per-step times, in seconds); the rows of the last H windows
 * are stacked, older windows weighted down by a forgetting factor, so that
 * the system is overdetermined even on 2 ranks (the counts change with every
 * adaptation and migration). The costs are non-negative by construction
 * (Lawson-Hanson active set on top of LAPACKE least squares) and come with
 * their standard errors. Every guarded situation is reported in
 * lb_weights_result.flags; only invalid input (bad times, bad options) is an
 * error. */

#include <mpi.h>
#include <stdint.h>

#include "balance/balance.h"

/** Why a fit was not (fully) used; ORed into lb_weights_result.flags. */
typedef enum {
  LB_WEIGHTS_ABSENT_TYPE = 1 << 0,     /**< a load type has no cell in any stacked row: its cost is undefined and kept */
  LB_WEIGHTS_RANK_DEFICIENT = 1 << 1,  /**< collinear types: the minimum-norm solution was taken */
  LB_WEIGHTS_UNDERDETERMINED = 1 << 2, /**< fewer stacked rows than present types */
  LB_WEIGHTS_CLAMPED = 1 << 3,         /**< the unconstrained fit had a negative cost: non-negative least squares held it at 0 */
  LB_WEIGHTS_SINGLE_RANK = 1 << 4,     /**< one rank: loads carry no information, costs kept */
  LB_WEIGHTS_EMPTY_WINDOW = 1 << 5,    /**< a rank has no timed step: window not stacked, costs kept */
  LB_WEIGHTS_ZERO_TIME = 1 << 6,       /**< all measured times (or all fitted costs of the present cells) are zero: costs kept */
  LB_WEIGHTS_WITHIN_NOISE = 1 << 7     /**< every cost's change is within its standard error: costs kept */
} lb_weights_flag;

/** The most load types a fit takes (its normal equations are small arrays
 *  on the stack). */
#define LB_WEIGHTS_MAX_TYPES 16

/** Options of a fit. */
typedef struct {
  double trim;           /**< fraction cut from each end of the sorted window, in [0, 0.5); default 0.25 */
  const double *previous; /**< costs kept where the fit says nothing (ntypes values, mean cell weight 1), or NULL for 1.0 */
} lb_weights_options;

/** The stacked rows of the last windows, carried from one fit to the next
 *  (identical on every rank of a collective fit). */
typedef struct lb_weights_history lb_weights_history;

/** The outcome of a fit, identical on every rank. */
typedef struct {
  int ntypes;
  double *coef;        /**< non-negative least-squares costs, seconds per cell per step; 0 for absent types */
  double *cost;        /**< cost per load type used from now on: mean cell weight 1 over this window's cells, or the kept costs */
  double *cost_stderr; /**< standard error of each fitted cost, in the units of cost (NaN: unknown, e.g. no spare row) */
  double *load;        /**< l_i = r_i / mean(r) per rank of this window (nranks values) */
  double *predicted;   /**< (A c)_i / mean(r) per rank of this window, in load units */
  int nranks;
  int rows;            /**< stacked rows of the fit (ranks x windows) */
  int windows;         /**< windows stacked, this one included */
  int rank;            /**< numerical rank of the stacked matrix */
  int fitted;          /**< 1 when cost comes from this fit, 0 when costs were kept */
  unsigned flags;      /**< lb_weights_flag bits */
  double residual;     /**< forgetting-weighted ||A c - r||_2 of the stacked rows, seconds per step; 0 when no fit was made */
  double smape;        /**< symmetric mean absolute percentage error of predicted vs measured time per rank of this window, percent */
} lb_weights_result;

/** Set the default options (trim 0.25, default costs 1). */
void lb_weights_options_default(lb_weights_options *opt);

/**
 * Create an empty history of the last history windows (>= 1) of ntypes
 * types, window age a weighted by forget^a (forget in (0, 1]). The errors
 * name the options -lb_history and -lb_forget.
 */
lb_err lb_weights_history_create(int ntypes, int history, double forget, lb_weights_history **h);

/** Free a history (NULL is allowed) and set *h to NULL. */
void lb_weights_history_destroy(lb_weights_history **h);

/**
 * Fit costs from per-rank data held in one process (virtual ranks, tests).
 * times[i] holds nsteps[i] per-step compute times of rank i (seconds), counts
 * is the nranks x ntypes row-major table of cells of each type per rank.
 * hist (or NULL: this window alone) receives this window's rows and supplies
 * the older ones. On return res holds newly allocated arrays
 * (lb_weights_result_free).
 */
lb_err lb_weights_fit_table(int nranks, const int *nsteps, const double *const *times, int ntypes,
                            const int64_t *counts, const lb_weights_options *opt, lb_weights_history *hist,
                            lb_weights_result *res);

/**
 * Fit costs collectively: every rank of comm passes its own window of nsteps
 * times and its ntypes counts (and its history, or NULL).  Each rank keeps
 * its own rows in its history and adds their forgetting-weighted normal
 * equations (ntypes^2 + 3 ntypes + 1 numbers) into one MPI_Allreduce, so
 * every rank solves the same small system and returns the same result;
 * per rank O(H ntypes^2) work and memory, reductions of a few numbers, and
 * one gather of one number per rank for each of the result's per-rank
 * arrays (load, predicted).  The same fit as lb_weights_fit_table's on the
 * same rows, to round-off (the sums' order differs).
 */
lb_err lb_weights_fit(MPI_Comm comm, int nsteps, const double *times, int ntypes, const int64_t *counts,
                      const lb_weights_options *opt, lb_weights_history *hist, lb_weights_result *res);

/**
 * Non-negative least squares min ||A x - b||_2 subject to x >= 0 (Lawson and
 * Hanson's active-set method on the normal equations A^T A x = A^T b, the
 * fit's own solver: scaled to a unit diagonal, Cholesky where of full
 * rank, the minimum-norm pseudo-inverse otherwise): a is m x n row-major
 * (n at most LB_WEIGHTS_MAX_TYPES), b has m values, x receives n values.
 * If the unconstrained minimum-norm solution is non-negative it is
 * returned as is.  *clamped is set to 1 when a bound was active.
 */
lb_err lb_nnls(int m, int n, const double *a, const double *b, double *x, int *clamped);

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
