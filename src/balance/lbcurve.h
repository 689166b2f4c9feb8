#ifndef AMRDLB_LBCURVE_H
#define AMRDLB_LBCURVE_H

/* Partitions of a weighted curve (seed 003): cells in curve order, each
 * process holding one contiguous piece (its cells, in order; pieces in rank
 * order; a piece may be empty). A new partition into nparts parts is a set
 * of cut positions, returned as cells per part on every rank: what
 * p4est_partition_given takes. nparts need not equal the number of
 * processes: with MPI_COMM_SELF and the whole curve in one process the same
 * functions serve virtual ranks.
 *
 * A cell belongs to the part whose target interval contains the midpoint of
 * the cell on the cumulative-weight axis, so every part's load lies within
 * one cell weight of its target. Cost: two passes over the local weights,
 * one MPI_Exscan, one MPI_Allreduce of the totals and one MPI_Allreduce of
 * the nparts cut positions (every rank needs all of them). */

#include <mpi.h>
#include <stdint.h>

#include "balance.h"

/** A new partition of the curve, identical on every rank. */
typedef struct {
  int nparts;
  int64_t ncells;     /**< cells on the whole curve */
  double total;       /**< total weight (cell count if every weight is 0) */
  int64_t *cuts;      /**< nparts + 1 global cell offsets: part q owns cells [cuts[q], cuts[q+1]) */
  int64_t *counts;    /**< cells per part, nparts values */
  double *part_load;  /**< weight per part, nparts values */
  double quality;     /**< partition quality avg/max of part_load (seed 003), 1 when all loads are 0 */
  double *s_before;   /**< sfc-shift only (else NULL): cumulative imbalance s_j per offset, nparts + 1 values */
  double *s_after;    /**< sfc-shift only (else NULL): s_j after the walk (penalised counter of seed 003) */
} lb_curve_result;

/**
 * sfc: chains-on-chains partition of the curve into nparts parts of equal
 * weight. n and w are this rank's piece (weights finite, >= 0).
 */
lb_err lb_curve_sfc(MPI_Comm comm, int64_t n, const double *w, int nparts, lb_curve_result *res);

/**
 * Cut the curve so that part q gets a share target[q] / sum(target) of the
 * total weight (target: nparts values, the same on every rank, finite and
 * >= 0; negative values count as 0). This realises any method's target
 * loads on the chain of parts; cells may travel past several parts.
 */
lb_err lb_curve_targets(MPI_Comm comm, int64_t n, const double *w, int nparts, const double *target,
                          lb_curve_result *res);

/**
 * sfc-shift: Niemoeller offset shifting, one step. The curve is currently
 * split into nparts parts of cur_counts[q] cells with measured loads load[q]
 * (l_q = r_q / mean r, same arrays on every rank). Each offset o_j moves in
 * direction -sign(s_j), s_j = sum_{i<j} (l_i - 1), over cells whose load
 * shares l_i w_k / W_i, times penalty (>= 1), bring s_j closest to zero.
 */
lb_err lb_curve_shift(MPI_Comm comm, int64_t n, const double *w, int nparts, const int64_t *cur_counts,
                        const double *load, double penalty, lb_curve_result *res);

/**
 * Weight of each part of the current partition cur_counts (nparts values,
 * the same on every rank, summing to the cells of the curve) into loads.
 */
lb_err lb_curve_part_loads(MPI_Comm comm, int64_t n, const double *w, int nparts, const int64_t *cur_counts,
                           double *loads);

/** Cells whose part changes from partition old_counts to new_counts (nparts values each). */
int64_t lb_curve_migrated(int nparts, const int64_t *old_counts, const int64_t *new_counts);

/** Largest |cuts_a[j] - cuts_b[j]| over the nparts + 1 cut positions. */
int64_t lb_curve_cut_distance(int nparts, const int64_t *cuts_a, const int64_t *cuts_b);

/** Release the arrays of a result. */
void lb_curve_result_free(lb_curve_result *res);

#endif
