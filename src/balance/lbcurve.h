#ifndef AMRDLB_LBCURVE_H
#define AMRDLB_LBCURVE_H

/* Partitions of a weighted curve (Niemoeller et al. 2020): cells in curve order, each
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

#include "balance/balance.h"

/** A new partition of the curve, identical on every rank. */
typedef struct lb_curve_result {
  int nparts;
  int64_t ncells;     /**< cells on the whole curve */
  double total;       /**< total weight (cell count if every weight is 0) */
  int64_t *cuts;      /**< nparts + 1 global cell offsets: part q owns cells [cuts[q], cuts[q+1]) */
  int64_t *counts;    /**< cells per part, nparts values */
  double *part_load;  /**< weight per part, nparts values */
  double quality;     /**< partition quality avg/max of part_load (Niemoeller et al. 2020), 1 when all loads are 0 */
  double *s_before;   /**< sfc-shift only (else NULL): cumulative imbalance s_j per offset, nparts + 1 values */
  double *s_after;    /**< sfc-shift only (else NULL): s_j after the walk (penalised counter of Niemoeller et al. 2020) */
} lb_curve_result;

/**
 * sfc: chains-on-chains partition of the curve into nparts parts of equal
 * weight. n and w are this rank's piece (weights finite, >= 0).
 */
lb_err lb_curve_sfc(MPI_Comm comm, int64_t n, const double *w, int nparts, lb_curve_result *res);

/** First part of group g when nparts parts form ngroups groups of
 *  consecutive parts as even as whole parts allow (g = ngroups: nparts). */
static inline int lb_curve_group_first(int nparts, int ngroups, int g)
{
  return (int)((int64_t)nparts * g / ngroups);
}

/**
 * HierSFC's coarse split (Lieber and Nagel 2014): the curve into ngroups
 * pieces (1 <= ngroups <= nparts), group g holding parts
 * [lb_curve_group_first(g), lb_curve_group_first(g + 1)) and cut where sfc
 * cuts before its first part, by the same prefix sum: res has ngroups
 * parts. With ngroups = nparts it is lb_curve_sfc, bit for bit.
 */
lb_err lb_curve_groups(MPI_Comm comm, int64_t n, const double *w, int nparts, int ngroups, lb_curve_result *res);

/**
 * The exact 1D partition of a chain held by one process: m tasks of
 * weights w (finite, >= 0) in order into nparts contiguous parts whose
 * largest load is the least possible (Pinar and Aykanat 2004's exact
 * bisection on the prefix sums, bounds kept at realisable part loads).
 * counts and part_load receive nparts values (parts may be empty); all
 * weights 0: parts of equal task counts. Cost: O(m) for the prefix sums
 * and O(nparts log m) per probe, a few dozen probes (each halves the
 * interval of bottlenecks left); m + 1 doubles of memory.
 */
lb_err lb_curve_exact_chain(int64_t m, const double *w, int nparts, int64_t *counts, double *part_load);

/**
 * HierSFC (Lieber and Nagel 2014): the coarse split lb_curve_groups into
 * ngroups groups, then each group of more than one part gathers its piece
 * of the curve at its first part's process and partitions it exactly
 * (lb_curve_exact_chain) into its parts; a group of one part keeps its
 * piece. ngroups = 1 is the exact partition of the whole curve,
 * ngroups = nparts is sfc. comm has one process (the whole curve there:
 * the virtual backend) or nparts (one part each). Cost per process: the
 * coarse split's collectives, a message per group its piece overlaps, one
 * MPI_Allreduce of 2 nparts doubles; a group's first process holds its
 * piece twice and probes as above.
 */
lb_err lb_curve_hier(MPI_Comm comm, int64_t n, const double *w, int nparts, int ngroups, lb_curve_result *res);

/** The collectives of one lb_curve_hier: the coarse split's three, the
 *  largest weight, the pieces' offsets, the failure flag and the parts. */
#define LB_CURVE_HIER_COLLECTIVES 7

/**
 * The exact 1D partition of the curve: lb_curve_hier with one group (the
 * whole curve gathered at process 0). Its largest part load is the bound
 * every curve partition is measured against.
 */
lb_err lb_curve_exact(MPI_Comm comm, int64_t n, const double *w, int nparts, lb_curve_result *res);

/** Largest part load of a partition (0 for none). */
double lb_curve_max_load(const lb_curve_result *res);

/**
 * Cut the curve so that part q gets a share target[q] / sum(target) of the
 * total weight (target: nparts values, the same on every rank, finite and
 * >= 0; negative values count as 0). This realises any method's target
 * loads on the chain of parts; cells may travel past several parts.
 */
lb_err lb_curve_targets(MPI_Comm comm, int64_t n, const double *w, int nparts, const double *target,
                          lb_curve_result *res);

/**
 * Offset shifting on the share axis (Niemoeller et al. 2020), the one implementation that
 * lb_curve_shift and lb_curve_shifter_step (sfc-shift's shift hook) use;
 * sfc's superstep on rank loads, where the loads are the weights, takes
 * its closed form (methods/sfc.c). Part i has
 * measured load load[i] (any unit; l_i = load[i] / mean) and weight pw[i]
 * (nparts values each). Offset j has cumulative imbalance s_j = sum_{i<j}
 * (l_i - 1) and walks in direction -sign(s_j) over cells whose load shares
 * l_i w_k / W_i, times penalty (>= 1), bring s_j closest to zero; bound
 * receives the nparts + 1 new cut positions on the weight axis (0 and sum
 * pw at the ends). All loads 0: the cuts stay.
 */
lb_err lb_curve_shift_bounds(int nparts, const double *load, const double *pw, double penalty, double *bound);

/**
 * sfc-shift: one offset-shifting step of the curve. The curve is currently
 * split into nparts parts of cur_counts[q] cells (same array on every rank)
 * whose measured loads are load[q] (seconds or any unit, same on every
 * rank): each offset moves by lb_curve_shift_bounds, and res gets the new
 * cuts, with s_before and s_after.
 */
lb_err lb_curve_shift(MPI_Comm comm, int64_t n, const double *w, int nparts, const int64_t *cur_counts,
                      const double *load, double penalty, lb_curve_result *res);

/**
 * Niemoeller et al. 2020's balancing sequence, carried between balancing steps (and so
 * what a checkpoint must save: every field below). The first step is a
 * chains-on-chains split; every later step shifts each offset once by the
 * loads measured on the partition that just ran. While the curve stays the
 * same (same cells and total weight: a static mesh), the partition with
 * the smallest measured max/avg is remembered; when a step measures no
 * improvement on it, shifting stops and that best partition is kept until
 * the curve changes (adaptation), which starts a new search from the
 * current partition.
 */
typedef struct lb_curve_shifter {
  int nparts;
  double penalty;
  long steps;               /**< balancing steps taken */
  int have_best, settled;   /**< a best partition is known for this curve; shifting stopped */
  double best_max_over_avg; /**< its measured max/avg */
  int64_t best_ncells;      /**< the curve it belongs to: cells */
  double best_total;        /**< and total weight */
  int64_t *best_counts;     /**< its cells per part, nparts values */
} lb_curve_shifter;

/** Start a sequence for nparts parts with penalty factor penalty (>= 1). */
lb_err lb_curve_shifter_init(lb_curve_shifter *s, int nparts, double penalty);

/** Release a sequence's arrays. */
void lb_curve_shifter_free(lb_curve_shifter *s);

/**
 * One balancing step of the sequence (collective over comm): this rank's
 * piece (n, w) of the curve, the current partition cur_counts and the
 * loads measured on it (nparts values, e.g. each rank's compute time of
 * the last cycle; not read on the first step). res receives the new
 * partition (lb_curve_result_free), action what was done. sfc-shift's
 * shift hook (lb_method.shift).
 */
lb_err lb_curve_shifter_step(lb_curve_shifter *s, MPI_Comm comm, int64_t n, const double *w, const int64_t *cur_counts,
                             const double *measured, lb_curve_result *res, lb_curve_shift_action *action);

/**
 * Weight of each part of the current partition cur_counts (nparts values,
 * the same on every rank, summing to the cells of the curve) into loads.
 */
lb_err lb_curve_part_loads(MPI_Comm comm, int64_t n, const double *w, int nparts, const int64_t *cur_counts,
                           double *loads);

/**
 * This process's piece of the curve where it is a part of the current
 * partition (collective: one MPI_Exscan, one MPI_Allreduce): the global
 * index of its first cell, the cells of the whole curve and its weight
 * (its cell count when every weight of the curve is 0, as
 * lb_curve_part_loads counts, and the same bits as that part's entry
 * there), so that a process knows its own part without an array of all.
 */
lb_err lb_curve_piece(MPI_Comm comm, int64_t n, const double *w, int64_t *first, int64_t *ncells, double *weight);

/** Cells a part keeps when its range of the curve [old_first, old_end)
 *  becomes [new_first, new_end): the overlap of the two, the one home of
 *  this count (the migration's statistics, the predicted move, the cells
 *  a partition moves). */
static inline int64_t lb_curve_kept(int64_t old_first, int64_t old_end, int64_t new_first, int64_t new_end)
{
  const int64_t lo = old_first > new_first ? old_first : new_first, hi = old_end < new_end ? old_end : new_end;
  return hi > lo ? hi - lo : 0;
}

/** The part that holds cell x of a partition given by its nparts + 1 cut
 *  positions: the last part starting at or before x, so that empty parts
 *  are passed over (binary search). */
static inline int lb_curve_part_of(int nparts, const int64_t *cuts, int64_t x)
{
  int lo = 0, hi = nparts - 1;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    if (cuts[mid] <= x) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Cells whose part changes from partition old_counts to new_counts (nparts values each). */
int64_t lb_curve_migrated(int nparts, const int64_t *old_counts, const int64_t *new_counts);

/** The most cells one part sends and receives together going from
 *  old_counts to new_counts (nparts values each), in one pass. */
int64_t lb_curve_most_moved(int nparts, const int64_t *old_counts, const int64_t *new_counts);

/** Largest |cuts_a[j] - cuts_b[j]| over the nparts + 1 cut positions. */
int64_t lb_curve_cut_distance(int nparts, const int64_t *cuts_a, const int64_t *cuts_b);

/** Allocate the zeroed arrays of a result of nparts parts (nparts set). */
lb_err lb_curve_result_alloc(int nparts, lb_curve_result *res);

/** Release the arrays of a result. */
void lb_curve_result_free(lb_curve_result *res);

#endif
