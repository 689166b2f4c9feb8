/** @file tracebench.h
 *  lbbench's replay of a load trace (loadtrace.h): -scenario
 *  trace:FILE[:CYCLE], in chain mode (the recorded curve, tiled -replicate
 *  R times along the curve) and in task mode (the recorded cells as tasks
 *  on the ranks of a mesh2d/mesh3d graph by their centres, tiled R times in
 *  space). */
#ifndef AMRDLB_TRACEBENCH_H
#define AMRDLB_TRACEBENCH_H

#include "balance/lbcurve.h"
#include "balance/loadtrace.h"
#include "balance/tasks.h"

/** Whether spec is a trace scenario ("trace:..."). */
int lb_trace_is_scenario(const char *spec);

/** Read the cycle that spec "trace:FILE[:CYCLE]" names (the last without
 *  CYCLE) into t, for R copies (R >= 1).  Free with lb_trace_free. */
lb_err lb_trace_open_scenario(const char *spec, int R, lb_load_trace *t);

/** The curve of t tiled R times (*n = R N cells, *w malloc'ed) and its
 *  split into P parts, counts[0..P): the app's split tiled R times and
 *  scaled to P parts (even: equal cell counts instead).  More parts than
 *  cells is an error. */
lb_err lb_trace_curve(const lb_load_trace *t, int R, int P, int even, int64_t *n, double **w, int64_t *counts);

/** Method m's shift hook (sfc-shift: Niemoeller et al. 2020's sequence,
 *  started with penalty) as the app ran it: one
 *  step on every cycle of the trace the app balanced, up to the cycle spec
 *  names, each on that cycle's curve as lb_trace_curve gives it with the
 *  ranks' measured times (scaled to P parts when the parts are not the
 *  app's ranks tiled R times: a cell carries its rank's time in proportion
 *  to its weight).  The last step's curve (*n cells, *w malloc'ed), its
 *  split counts[0..P), new partition res and action.  Free res with
 *  lb_curve_result_free. */
lb_err lb_trace_shift(const lb_method *m, const char *spec, int R, int P, int even, double penalty, int64_t *n, double **w, int64_t *counts, lb_curve_result *res,
                      lb_curve_shift_action *action);

/** The cells of a trace as tasks: R copies tiled in space, placed on the
 *  ranks of a mesh2d or mesh3d graph by their centres (equal slabs of the
 *  bounding box per rank coordinate); a task's neighbours are the tasks
 *  next to it on the curve (the trace holds no adjacency).  A task weighs
 *  its cell's weight in whole units of 1/LB_CHAIN_UNITS of the mean cell
 *  weight (at least one), as chain mode gives them to the methods that
 *  move whole units, so every method and baseline runs on the same loads. */
typedef struct {
  int ntasks, nranks, copies[3], nd, dim;
  const lb_load_trace *t;
  double lo[3], ext[3];     /**< bounding box of one copy */
  double *w;                /**< weight of every cell of one copy, in units */
  int *home, *index;        /**< rank and position in the rank's initial list of every task */
  int *start, *order;       /**< tasks of rank r: order[start[r] .. start[r+1]) in index order */
} lb_tracetasks;

/** Build the trace's tasks for graph g (mesh2d or mesh3d, at most the
 *  trace's dimension) and the task graph's callbacks (which read tt; t and
 *  tt must outlive tg). */
lb_err lb_tracetasks_create(const lb_graph *g, const lb_load_trace *t, int R, lb_tracetasks *tt, lb_task_graph *tg);

/** Free the arrays of the trace's tasks. */
void lb_tracetasks_free(lb_tracetasks *tt);

#endif
