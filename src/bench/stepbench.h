/** @file stepbench.h
 *  lbbench -chain -step: the app's balancing step with -lb_weights phases
 *  (the weights fit, the phase choice, the method in chain mode, the
 *  decision), the library's own calls, replayed on a recorded trace's
 *  cells at P virtual ranks, with its time, memory and collectives per
 *  rank. */
#ifndef AMRDLB_STEPBENCH_H
#define AMRDLB_STEPBENCH_H

#include "balance/balance.h"
#include "bench/tracebench.h"

/** What lbbench -chain -step runs. */
typedef struct {
  const char *graph;      /**< line:P or ring:P: the ranks along the curve */
  const char *scenario;   /**< trace:FILE[:CYCLE], recorded with -lb_weights phases */
  const char *json;       /**< -json FILE ("" or NULL: none) */
  lb_trace_replay rp;     /**< -replicate, -refine, -trace_split */
  const char *split_name; /**< -trace_split's name for the report */
  const lb_method *m;     /**< -lb_method */
  lb_params p;            /**< its options; the virtual backend */
} lb_stepbench_opts;

/** Run the step once on the trace cycle's cells split into P parts (the
 *  start split of -trace_split) and report on rank 0 what it chose and
 *  decided, its time and memory per rank and its collectives (text, and a
 *  JSON line with -json). */
lb_err lb_stepbench_run(const lb_stepbench_opts *o);

#endif
