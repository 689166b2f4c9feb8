#ifndef AMRDLB_LBCHAIN_H
#define AMRDLB_LBCHAIN_H

/* Chain mode (src/README.md, "One cycle"): any method runs on the chain of parts
 * (line:P, or that line closed into ring:P), whose loads are the weights of
 * the parts' pieces of a weighted curve; the method's final loads become
 * target loads, realised as cut positions on the curve (lbcurve.h).  Cells
 * only move along the curve and may pass several parts when a flow exceeds
 * a neighbour's piece.  This is the one realisation: lbbench's -chain mode
 * and the app's balancing step both use it.
 *
 * A weighted curve means the same to every method: a part's load is the sum
 * of its cells' weights; a method that moves whole work units (flag
 * LB_INTEGRAL) runs on those loads in units of 1/LB_CHAIN_UNITS of the
 * mean cell weight, rounded, so any weights suit any method.  A method
 * with a partition hook (sfc-exact, hiersfc) cuts the curve itself; its run
 * is then one iteration that moves each part's load to its cut's. */

#include <stdint.h>

#include "balance/balance.h"
#include "balance/lbcurve.h"

/** Outcome of a chain-mode run, identical on every process. */
typedef struct {
  lb_result run;            /**< the method's run on line:P (loads, flows, rounds, stop reason) */
  lb_curve_result cut;      /**< the realised partition: cells and weight per part */
  lb_curve_result sfc;      /**< sfc's cuts of the same curve, the reference (none from lb_chain_partition_on) */
  int64_t migrated_cells;   /**< cells whose part changed */
  int64_t sfc_cut_distance; /**< largest |cut_j - sfc cut_j| in cells (-1 from lb_chain_partition_on) */
  double max_over_avg;      /**< of the realised part loads */
  double cut_time_s;        /**< wall time of the cut computation for the method's targets (max over processes) */
  double sfc_time_s;        /**< wall time of sfc's cut computation (max over processes; 0 from lb_chain_partition_on) */
  double max_part_load;     /**< the realised partition's largest part weight */
  double optimal_max_part_load; /**< the least largest part any contiguous cut of the curve's whole cells reaches (lb_curve_exact): the bound;
                                     NaN on a curve of more than LB_CHAIN_EXACT_MAX_CELLS cells */
  double exact_time_s;      /**< wall time of that exact partition (max over processes) */
} lb_chain_result;

/** The most cells of a curve whose exact partition (the bound) chain mode
 *  computes: lb_curve_exact gathers the whole curve at process 0 (16
 *  bytes a cell there, and O(N) time that every process waits for), a
 *  reference, not part of the balancing: 2^22 cells, 64 MiB at process 0,
 *  some 0.1 s. */
#define LB_CHAIN_EXACT_MAX_CELLS (INT64_C(1) << 22)

/** Whole work units per mean cell weight for the methods that move units. */
#define LB_CHAIN_UNITS 1000

/**
 * Run method m in chain mode on a weighted curve. On the MPI backend every
 * process of p->comm holds its own part's cells (n, w) and cur_counts is
 * not read (P = size); on the virtual backend this process holds the whole
 * curve and cur_counts gives the current cells of each of the nparts parts.
 * Free res with lb_chain_result_free.
 */
lb_err lb_chain_balance(const lb_method *m, const lb_params *p, int64_t n, const double *w, int nparts,
                        const int64_t *cur_counts, lb_chain_result *res);

/** The same on the processor graph g: the line or the ring of the g->n
 *  parts ("line:P", "ring:P" of lb_graph_create); on the MPI backend g->n
 *  is the size of p->comm. */
lb_err lb_chain_balance_on(const lb_graph *g, const lb_method *m, const lb_params *p, int64_t n, const double *w,
                           const int64_t *cur_counts, lb_chain_result *res);

/** lb_chain_balance_on without sfc's reference cut: the partition a
 *  balancing step takes, with the bound, as the app's step needs it; sfc's
 *  cut cost as much again (three collectives and three arrays of P
 *  values on every process) for a comparison only lbbench reports. */
lb_err lb_chain_partition_on(const lb_graph *g, const lb_method *m, const lb_params *p, int64_t n, const double *w,
                             const int64_t *cur_counts, lb_chain_result *res);

/** The realised partition's largest part over the bound (1: optimal; 1
 *  when the curve weighs nothing; NaN when the bound was not computed). */
static inline double lb_chain_over_optimum(const lb_chain_result *res)
{
  if (res->optimal_max_part_load != res->optimal_max_part_load) return res->optimal_max_part_load;
  return res->optimal_max_part_load > 0.0 ? res->max_part_load / res->optimal_max_part_load : 1.0;
}

/** Release the arrays of a chain-mode result. */
void lb_chain_result_free(lb_chain_result *res);

#endif
