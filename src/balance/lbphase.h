#ifndef AMRDLB_LBPHASE_H
#define AMRDLB_LBPHASE_H

/* The cycle modelled phase by phase.  A cycle is a sequence of phases
 * separated by synchronisations (a global solve, the ghost exchange of a
 * time step): each phase takes the time of its slowest part, so the cycle
 * takes the sum over phases of the maximum over parts, and the time lost
 * to imbalance is the sum over phases of (max - mean).  One summed weight
 * per cell balances the sum of the phases and can leave each phase
 * unbalanced (Niemoeller et al. 2020 name such multi-stage computations as
 * what defeats balancing): a partition is chosen here by the model's
 * time instead, among the curve cuts of combinations of the phases'
 * weights.  Cells lie on a curve as in lbcurve.h (contiguous pieces in
 * rank order; nparts need not equal the number of processes). */

#include <mpi.h>
#include <stdint.h>

#include "balance/balance.h"

/** The model of one cycle on a partition. */
typedef struct {
  double time;          /**< sum over phases of the largest part load */
  double mean;          /**< sum over phases of the mean part load */
  double lost;          /**< time - mean */
  double imbalance_pct; /**< I% = (time - mean) N / (time (N - 1)) of the parts, 0 for one part or no time */
} lb_phase_model;

/** The model of loads given per phase and part (load[k * nparts + q]). */
void lb_phase_model_eval(int nphases, int nparts, const double *load, lb_phase_model *m);

/** I% of nparts parts whose model takes time and loses lost = time -
 *  mean (0 for one part or no time): lb_phase_model's, for a caller that
 *  has the time and the loss from reductions, not a load per part. */
double lb_phase_imbalance_pct(int nparts, double time, double lost);

/**
 * The loads per phase of the parts of partition counts (nparts values, the
 * cells per part in curve order, the same on every rank) for the per-cell
 * weights w[k] of each phase k (this rank's n cells, in seconds or any one
 * unit), into load (nphases x nparts), and their model into m (may be
 * NULL).  Collective.
 */
lb_err lb_phase_loads(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, const int64_t *counts, double *load,
                      lb_phase_model *m);

/** The coordinate search's sweeps that amr2d runs each balancing step
 *  (lbbench -step replays the same): each costs four trials per searched
 *  phase, so a step tries at most 1 + K + 12 K combinations. */
#define LB_PHASE_ROUNDS 3

/** The partition of least modelled time found by lb_phase_choose. */
typedef struct {
  int nphases, nparts;
  double *alpha;     /**< the phases' factors in the chosen combined weight (nphases) */
  int64_t *counts;   /**< its curve cut: cells per part (nparts) */
  lb_phase_model model;
  double sum_time;   /**< the model's time of the cut by the plain sum of the weights (alpha all 1) */
  double alpha_time; /**< the least time of a combination's cut (alpha) */
  int evaluated;     /**< cuts tried: the combinations and the split's rounds */
  int split;         /**< 1: counts come from lb_phase_split, whose time was less than alpha's */
  int collectives;   /**< collective calls every process made */
  int long_collectives; /**< of them, those whose buffers hold arrays as long as the parts or longer */
  double split_s;    /**< wall time of the split's search (lb_phase_split) */
} lb_phase_choice;

/**
 * Choose the partition of least modelled time: first the combined cell
 * weight sum_k alpha_k w[k] whose equal-weight curve cut (lbcurve.h's sfc)
 * has the least time (the plain sum, each phase alone, then a coordinate
 * search that scales one phase's factor at a time by 1/4, 1/2, 2 and 4
 * while the time falls, at most max_rounds sweeps; phases under 5% of the
 * mean cell's weight keep factor 1; a cell whose combined
 * weight is 0 weighs a millionth of the mean, so cuts among such cells
 * fall by count), then lb_phase_split from that cut's phase maxima, taken
 * when its time is less (res->split).  Each combination is timed by
 * prefix sums, and so is the split: every process places the cuts that
 * fall in its piece and the model comes from reductions of nphases
 * numbers, no P-long array; only the chosen cuts are assembled on every
 * process (res->counts: one reduction of nparts + 1 positions for the
 * combination, one for the split).  Collective;
 * res is identical on every rank (lb_phase_choice_free).
 */
lb_err lb_phase_choose(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, int max_rounds, lb_phase_choice *res);

/** The model of the partition counts (nparts values, the same on every
 *  rank) for the per-cell weights w[k] of each phase as lb_phase_loads
 *  gives it, but by prefix sums: no array as long as the parts beyond
 *  counts, each rank reading the cuts that fall in its piece; O(n nphases
 *  + nparts) work and six reductions of at most nphases numbers.
 *  Collective. */
lb_err lb_phase_model_of(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, const int64_t *counts, lb_phase_model *m);

/** The combined weight of this rank's n cells for factors alpha into out,
 *  as lb_phase_choose weighed them (the global means of the phases'
 *  weights in mean[k] set the floor of an all-zero cell). */
void lb_phase_combine(int64_t n, int nphases, const double *const *w, const double *alpha, const double *mean, double *out);

/**
 * The multi-constraint split of the curve: cells per part (counts, nparts
 * values, the same on every rank and on any number of processes) whose
 * largest part load per phase sums to the least the search finds, from
 * caps start[k] that a partition meets (its phase maxima; phases under 5%
 * of the mean cell's weight get none).  By prefix sums (phase_split.c
 * says how): sfc's cut of a cell weight reweighed by each part's largest
 * load over its cap, the caps scaled one phase at a time; every trial
 * O(n nphases) work per rank and reductions of at most nphases numbers,
 * at most 24 rounds in all, whatever nparts; the chosen cut assembled by
 * one reduction of nparts + 1 positions.  Collective.
 */
lb_err lb_phase_split(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, const double *start, int64_t *counts);

/**
 * The cell weights that realise a choice (this rank's n cells into out):
 * the split's counts by lb_phase_counts_weights, else the chosen
 * combination by lb_phase_combine; then scaled to mean cell weight 1 and
 * raised to at least floor (the app and lbbench pass a chain work unit,
 * 1 / LB_CHAIN_UNITS, so that every cell moves with a method of whole
 * units).  Collective.
 */
lb_err lb_phase_choice_weights(MPI_Comm comm, int64_t n, const double *const *w, const lb_phase_choice *ch, double floor, double *out);

/** Weights of this rank's n cells whose equal-weight cut (lbcurve.h's sfc)
 *  is the partition counts (nparts values): every part weighs the same, so
 *  any chain method's target loads lead there.  Mean cell weight 1.
 *  Collective. */
lb_err lb_phase_counts_weights(MPI_Comm comm, int64_t n, int nparts, const int64_t *counts, double *w);

/** The global mean weight of each phase (nphases values).  Collective. */
lb_err lb_phase_means(MPI_Comm comm, int64_t n, int nphases, const double *const *w, double *mean);

/** Release the arrays of a choice. */
void lb_phase_choice_free(lb_phase_choice *res);

#endif
