/** @file offloadbench.h
 *  lbbench -offload: pointwise work balanced apart from the mesh
 *  (balance/lboffload.h) replayed on a load trace's cells at any number of
 *  ranks: the cells of each part of the trace's start split are its items,
 *  their weights their costs. */
#ifndef AMRDLB_OFFLOADBENCH_H
#define AMRDLB_OFFLOADBENCH_H

#include "balance/balance.h"
#include "bench/tracebench.h"

/** What lbbench -offload runs. */
typedef struct {
  const char *graph;     /**< line:P: the ranks */
  const char *scenario;  /**< trace:FILE[:CYCLE] */
  const char *json;      /**< -json FILE ("" or NULL: none) */
  lb_trace_replay rp;    /**< -replicate, -refine, -trace_split */
  const char *split_name; /**< -trace_split's name for the report */
  int virt;              /**< 1: every rank in this process (-virtual) */
  MPI_Comm comm;
} lb_offloadbench_opts;

/** Plan the offload of the trace cycle's cells split into P parts, send
 *  every item there and back (as many bytes as the app's degree-1 cells of
 *  the trace's dimension), and report the parts' max/mean before and after,
 *  what moved, the messages per rank and the plan's time and memory per
 *  rank (text on rank 0, a JSON line with -json). */
lb_err lb_offloadbench_run(const lb_offloadbench_opts *o, int me);

#endif
