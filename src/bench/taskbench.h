/** @file taskbench.h
 *  lbbench's task mode: Lieber et al. 2016's experiment.  A balancing method's flows
 *  (or a Zoltan baseline's partition) move real tasks of a 3D task mesh
 *  between ranks, and the result is measured with Lieber et al. 2016's metrics.
 *  With -tasks trace the tasks are the cells of a load trace instead; with
 *  -mesh too, with their true face neighbours, starting from -trace_split's
 *  split, and -graph subdomains:P is the graph of the ranks whose cells
 *  share a face. */
#ifndef AMRDLB_TASKBENCH_H
#define AMRDLB_TASKBENCH_H

#include "balance/tasks.h"
#include "bench/tracebench.h"

/** What one task-mode run needs. */
typedef struct {
  const char *graph, *scenario, *method, *tasks, *json;
  double base;              /**< per-rank base load (0: the tasks per rank) */
  lb_params p;              /**< backend, communicator, stopping rule, method options */
  lb_select select;         /**< task selection order */
  double zoltan_tol;        /**< Zoltan IMBALANCE_TOL */
  int repeat;               /**< balancing methods: Lieber et al. 2016's timed repetitions of method and selection (0: none) */
  int replicate;            /**< -tasks trace: copies of the trace's cells tiled in space */
  int refine;               /**< -tasks trace: refinements of every recorded cell */
  int passes;               /**< passes of task selection (1: Lieber et al. 2016's one pass; more: tasks may hop, lb_taskset_realise) */
  const char *mesh;         /**< -tasks trace -mesh: the recording's coarse mesh (NULL: slabs on mesh2d/mesh3d ranks) */
  lb_trace_split split;     /**< -tasks trace -mesh: the start split (-trace_split) */
} lb_taskbench_opts;

/** Run one task-mode experiment; process 0 prints it and appends a JSON line. */
lb_err lb_taskbench_run(const lb_taskbench_opts *o, int me);

#endif
