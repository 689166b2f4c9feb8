/** @file chainbench.h
 *  lbbench's chain mode (-chain): any method balancing the pieces of a
 *  weighted curve on the chain of parts, its loads realised as cuts (a
 *  partition hook's own cut, or sfc-shift's sequence on a trace), measured
 *  against sfc's cuts and the exact 1D partition; and the JSON fields every
 *  lbbench run writes of a method's run. */
#ifndef AMRDLB_CHAINBENCH_H
#define AMRDLB_CHAINBENCH_H

#include "balance/balance.h"
#include "bench/tracebench.h"
#include "util/json.h"

/** What one chain-mode run needs. */
typedef struct {
  const char *graph, *scenario, *json;
  const char *trace_split;  /**< -trace_split's name, as printed and in the JSON */
  lb_trace_split split;     /**< and its value */
  double base;              /**< the scenario's base load */
  lb_params p;              /**< backend, communicator, stopping rule, method options */
  long long cells;          /**< -chain CELLS (a trace scenario: its cells) */
  int replicate, refine;    /**< -scenario trace: copies along the curve, refinements */
} lb_chainbench_opts;

/** Run method m in chain mode; process 0 prints it and appends a JSON line. */
lb_err lb_chainbench_run(const lb_chainbench_opts *o, const lb_method *m, int me);

/** The counts and the run time of a method's run. */
void lb_bench_run_json(json_line *j, const lb_result *r);
/** An LB_ACCOUNTED method's peak bytes per rank (largest and mean) and
 *  every method's messages per rank: a line of lbbench's output (none for
 *  a method that does not count its bytes, m NULL included). */
void lb_bench_memory_print(const lb_method *m, const lb_result *r);
/** The same as JSON fields method_bytes_max, method_bytes_mean (null when
 *  not counted) and messages_per_rank. */
void lb_bench_memory_json(json_line *j, const lb_method *m, const lb_result *r);
/** The balance of the loads and what moved. */
void lb_bench_loads_json(json_line *j, const lb_metrics *mt);
/** -costs: Melhem et al. 1991's costs of the run. */
void lb_bench_costs_json(json_line *j, const lb_result *r);

#endif
