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

/** The file that scenario spec "trace:FILE[:CYCLE]" names, into path (len bytes). */
lb_err lb_trace_scenario_file(const char *spec, char *path, size_t len);

/** The start split of a replayed cycle (-trace_split). */
typedef enum {
  LB_TRACE_SPLIT_CARRY, /**< the previous cycle's balanced split carried to this cycle's cells (the default) */
  LB_TRACE_SPLIT_APP,   /**< the split the app recorded, tiled and scaled to P parts */
  LB_TRACE_SPLIT_EVEN   /**< equal cell counts */
} lb_trace_split;

/** How a trace is replayed: copies along the curve or in space, levels of
 *  refinement of every cell, the start split. */
typedef struct {
  int R;                /**< -replicate: copies (>= 1) */
  int refine;           /**< -refine: every cell refined this many times (>= 0) */
  lb_trace_split split; /**< -trace_split */
  const char *mesh;     /**< -mesh: the coarse mesh of the recording (task mode; NULL: none) */
  int lean;             /**< 1: the caller reads of the cycle's cells only weights, trees, levels and positions (and centres
                             unless 2), so the rest goes before refining (task mode with -mesh) */
} lb_trace_replay;

/** Read the cycle that spec "trace:FILE[:CYCLE]" names (the last without
 *  CYCLE) into t, refined rp->refine times (lb_trace_refine); with prev
 *  non-NULL and rp->split carry, also the record before it in the file,
 *  refined alike (prev->ncells 0 when the cycle is the file's first),
 *  holding only weights, trees, levels and positions (what carry reads);
 *  t without load types and phase weights when rp->lean, and without
 *  centres when rp->lean is 2.  A
 *  version 1 trace with -mesh, -refine or carry, or a refinement that would need
 *  more than this machine's memory, is an error naming the option and the
 *  file.  Free both with lb_trace_free. */
lb_err lb_trace_open_scenario(const char *spec, const lb_trace_replay *rp, lb_load_trace *t, lb_load_trace *prev);

/** The curve of t tiled R times (*n = R N cells, *w malloc'ed) and its
 *  split into P parts, counts[0..P), by rp->split: carry cuts the previous
 *  record prev (tiled alike) where sfc's prefix sum cuts it into P parts of
 *  equal weight (the partition every chain method converges to, which a
 *  balanced app runs the next cycle on) and moves each cut to t's curve by
 *  its position (copy, tree, index on the tree's curve): a part starts at
 *  the first cell of t at or after its first cell in prev.  Without prev
 *  (prev NULL or no cells: the file's first cycle) carry takes the app's
 *  split.  More parts than cells is an error. */
lb_err lb_trace_curve(const lb_load_trace *t, const lb_load_trace *prev, const lb_trace_replay *rp, int P, int64_t *n, double **w, int64_t *counts);

/** Name of a start split ("carry", "app", "even"). */
const char *lb_trace_split_name(lb_trace_split split);

/** Method m's shift hook (sfc-shift: Niemoeller et al. 2020's sequence,
 *  started with penalty) as the app ran it: one
 *  step on every cycle of the trace the app balanced, up to the cycle spec
 *  names, each on that cycle's curve as lb_trace_curve gives it (the
 *  record before it in the file carried for carry) with the
 *  ranks' measured times (scaled to P parts when the parts are not the
 *  app's ranks tiled R times: a cell carries its rank's time in proportion
 *  to its weight).  The last step's curve (*n cells, *w malloc'ed), its
 *  split counts[0..P), new partition res and action.  Free res with
 *  lb_curve_result_free. */
lb_err lb_trace_shift(const lb_method *m, const char *spec, const lb_trace_replay *rp, int P, double penalty, int64_t *n, double **w, int64_t *counts, lb_curve_result *res,
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
  int64_t *first;           /**< with -mesh: rank r starts with the cells first[r] .. first[r+1] (NULL: slabs) */
  int64_t *xadj;            /**< with -mesh: task i's neighbours are adj[xadj[i] .. xadj[i+1]) */
  int *adj;
} lb_tracetasks;

/** Build the trace's tasks for graph g (mesh2d or mesh3d, at most the
 *  trace's dimension) and the task graph's callbacks (which read tt; t and
 *  tt must outlive tg). */
lb_err lb_tracetasks_create(const lb_graph *g, const lb_load_trace *t, int R, lb_tracetasks *tt, lb_task_graph *tg);

/** The cells of trace cycle t as tasks on P ranks as the papers run task
 *  mode: rank q starts with the cells of part q of the start split
 *  counts[0..P) (lb_trace_curve's: carry, app or even), and a task's
 *  neighbours are its cell's face neighbours xadj/adj
 *  (lb_trace_mesh_adjacency, of at most maxdeg per cell; tt takes them
 *  over and frees them).  Weights in units as lb_tracetasks_create's.  t
 *  and tt must outlive tg. */
lb_err lb_tracetasks_create_split(int P, const lb_load_trace *t, const int64_t *counts, int64_t *xadj, int *adj, int maxdeg, lb_tracetasks *tt,
                                  lb_task_graph *tg);

/** The subdomain graph of the start split of tt (made by
 *  lb_tracetasks_create_split): one vertex per rank, an edge between two
 *  ranks whose initial cells share a face; its spec is spec
 *  ("subdomains:P"), its kind LB_GRAPH_EDGES (a general graph). */
lb_err lb_tracetasks_subdomains(const lb_tracetasks *tt, const char *spec, lb_graph **g);

/** Mean degree and diameter of graph g (BFS from every vertex; from at
 *  most 1024 of them, spread over the ranks, on graphs of more than 4096, where
 *  *exact says 0 and the diameter is a lower bound); *connected says
 *  whether g is connected (the diameter is that of the largest distances
 *  found within components otherwise). */
lb_err lb_graph_degree_diameter(const lb_graph *g, double *mean_degree, int *diameter, int *exact, int *connected);

/** Free t's per-cell arrays, but its centres when keep_x (initial lists
 *  that keep coordinates read them), once tt is built from it: tt's
 *  callbacks read tt and t's scalars only, as does the report. */
void lb_trace_release_cells(lb_load_trace *t, int keep_x);

/** Free what only tt's initial lists read (the tasks' weights, the slab
 *  order), once lb_taskset_create has built them. */
void lb_tracetasks_release(lb_tracetasks *tt);

/** Free the arrays of the trace's tasks. */
void lb_tracetasks_free(lb_tracetasks *tt);

#endif
