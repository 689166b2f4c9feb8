/** @file tasks.h
 *  Graph-mode realisation of balancing flows: weighted tasks on the ranks of
 *  a processor graph, selected per edge by edge-cut gain (Lieber et al. 2016), really
 *  moved between ranks, and measured with Lieber et al. 2016's metrics.
 *
 *  A task set lives on the same two backends as a balancing run: on the MPI
 *  backend each process holds the tasks of its own rank, on the virtual
 *  backend one process holds every rank's tasks.  Every rank runs the same
 *  code on its own tasks and exchanges records with the others, so both
 *  backends give identical moves and metrics.
 *
 *  Where a task is, is known to its home rank (the rank it started on):
 *  every migration tells the home rank, and lookups ask it.
 */
#ifndef AMRDLB_TASKS_H
#define AMRDLB_TASKS_H

#include "balance/balance.h"

/** The tasks of one rank: ids, weights and coordinates (3 per task). */
typedef struct {
  int n, cap;
  int *id;
  double *w;
  double *x;   /**< NULL when the list keeps no coordinates (no_x) */
  int no_x;    /**< set: coordinates given to lb_task_list_add are dropped */
} lb_task_list;

/** Append a task to a list (grows it); x is ignored when l->no_x is set. */
lb_err lb_task_list_add(lb_task_list *l, int id, double w, const double x[3]);

/** The task graph and the initial distribution, as callbacks. */
typedef struct {
  int ntasks;   /**< task ids are 0 .. ntasks-1 */
  int nranks;
  int max_nbr;  /**< largest number of neighbours of a task */
  /** Neighbours of task id, written to nbr; returns how many. */
  int (*neighbours)(const void *ctx, int id, int *nbr);
  /** Rank task id starts on; *index is its position in that rank's initial list. */
  int (*home)(const void *ctx, int id, int *index);
  /** The initial tasks of rank r, appended to an empty list in index order. */
  lb_err (*initial)(const void *ctx, int r, lb_task_list *list);
  const void *ctx;
} lb_task_graph;

/** How lb_taskset_select picks the tasks that cross an edge. */
typedef enum {
  LB_SELECT_GAIN,  /**< highest edge-cut gain (lowest loss) first (Lieber et al. 2016) */
  LB_SELECT_INDEX  /**< in the order of the rank's task list (for comparison) */
} lb_select;

/** Lieber et al. 2016's metrics of a distribution, identical on every process. */
typedef struct {
  double load_max, load_avg;
  double imbalance;        /**< max load / average load - 1 */
  long long migration_max; /**< largest number of tasks a rank sent plus received */
  double migration_tot;    /**< migrated tasks / all tasks */
  long long migrated;      /**< migrated tasks */
  double migrated_weight;  /**< total weight of the migrated tasks */
  double lower_bound;      /**< sum over ranks of max(0, initial load - final load): the least weight any balancer must move to reach the final loads */
  double lower_bound_exact; /**< sum over ranks of max(0, initial load - average): the least weight to move for exact balance (a method that stops short of it may move less) */
  long long edgecut_max;   /**< largest number of cut task edges at one rank */
  double edgecut_tot;      /**< cut task edges / all task edges */
  long long edges;         /**< task edges */
  int valid;               /**< 1 if every task is on exactly one rank */
} lb_task_metrics;

typedef struct lb_taskset lb_taskset;

/** Create the initial distribution of tg on the given backend (collective on
 *  comm for the MPI backend, whose size must be tg->nranks). */
lb_err lb_taskset_create(const lb_task_graph *tg, lb_backend be, MPI_Comm comm, lb_taskset **ts);
/** As lb_taskset_create, without coordinates when coords is 0 (nothing
 *  reads them: no geometric partitioner runs): the lists keep none (24
 *  bytes a task, and tg's initial need not compute them: it sees
 *  list->no_x set) and a migration record is id and weight only. */
lb_err lb_taskset_create_coords(const lb_task_graph *tg, int coords, lb_backend be, MPI_Comm comm, lb_taskset **ts);
/** Free a task set and set *ts to NULL. */
void lb_taskset_destroy(lb_taskset **ts);
/** The ranks held by this process: lo .. hi-1. */
void lb_taskset_local(const lb_taskset *ts, int *lo, int *hi);
/** The tasks now on local rank r. */
const lb_task_list *lb_taskset_list(const lb_taskset *ts, int r);
/** Current owners of the neighbours of local rank r's tasks: task i's
 *  neighbours are nbr[start[i] .. start[i+1]), owned by own[...] (rows
 *  as long as each task's neighbours, not padded to max_nbr). */
void lb_taskset_neighbours(const lb_taskset *ts, int r, const int **start, const int **nbr, const int **own);
/** Destination of each task of local rank r (-1: stays); set by
 *  lb_taskset_select or by the caller, used by lb_taskset_migrate. */
int *lb_taskset_dest(lb_taskset *ts, int r);
/** Load (sum of task weights) of every rank into all[0..nranks) (collective). */
lb_err lb_taskset_loads(lb_taskset *ts, double *all);
/** Choose destinations from the net flows of a balancing result on g
 *  (flow[k] > 0: from g->eu[k] to g->ev[k]): every rank, per neighbour,
 *  picks not yet chosen tasks until the flow is met; a task goes whenever
 *  it brings the sent weight closer to the flow.  One pass: tasks do not hop. */
lb_err lb_taskset_select(lb_taskset *ts, const lb_graph *g, const double *flow, lb_select how);
/** Choose destinations from a balancing result: its direct transfers when
 *  it has any (rank `from` sends tasks worth `amount` straight to `to`, the
 *  same selection rule per transfer, what one transfer fell short of or
 *  overshot carried to the rank's next), else its flows as
 *  lb_taskset_select.  Either way each task moves at most once. */
lb_err lb_taskset_select_result(lb_taskset *ts, const lb_graph *g, const lb_result *res, lb_select how);
/** Realise a balancing result in up to max_passes passes of selection and
 *  migration (collective).  Pass 1 is lb_taskset_select_result followed by
 *  lb_taskset_migrate; every further pass selects again against the part of
 *  each edge's flow not yet realised, so a task received in one pass may be
 *  passed on in the next (it hops: Lieber et al. 2016's open question (a)),
 *  and stops when a pass selects nothing.  A result of direct transfers is
 *  realised in one pass (its tasks need no hop).  The metrics then count
 *  every hop: migrated tasks and weight are summed over the passes.
 *  *passes gets the passes that moved tasks (at least 1). */
lb_err lb_taskset_realise(lb_taskset *ts, const lb_graph *g, const lb_result *res, lb_select how, int max_passes, int *passes);
/** Move every task to its destination, tell the home ranks, and refresh the
 *  neighbour owners (collective). */
lb_err lb_taskset_migrate(lb_taskset *ts);
/** Metrics of the current distribution and the last migration (collective). */
lb_err lb_taskset_metrics(lb_taskset *ts, lb_task_metrics *mt);

#endif
