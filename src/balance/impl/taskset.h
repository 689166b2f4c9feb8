/* The task set's state, shared by the set and its migration (tasks.c) and
 * the selection of the tasks that realise flows (tasks_select.c); users
 * see balance/tasks.h only. */
#ifndef AMRDLB_BALANCE_IMPL_TASKSET_H
#define AMRDLB_BALANCE_IMPL_TASKSET_H

#include "balance/tasks.h"

struct lb_taskset {
  lb_task_graph tg;
  lb_backend be;
  MPI_Comm comm;
  int lo, hi;
  lb_task_list *list;   /* per local rank */
  int **dest;           /* destination per task, -1: stays */
  int **where;          /* home directory: current owner of each home task */
  int *nhome;
  int **nstart, **nbr, **own; /* neighbours of task t, compressed: nbr[nstart[t] .. nstart[t+1]), their owners own[...] (as many as each task has, not
                                the most any task has: on a trace's cells with hanging faces that is 15 slots for 6 neighbours on average in 3D) */
  long long *sent, *recv;     /* tasks moved by the last migration, per local rank */
  double *wsent;
  double *load0;        /* loads of all ranks at creation */
};

#define MPI_TRY(call) do { if ((call) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "MPI call failed: %s", #call); } while (0)

/* Reduces n values over all processes (the caller has already combined
 * its local ranks): every rank gets the same answer, so all stop together. */
lb_err lb_taskset_reduce_ll(lb_taskset *ts, long long *v, int n, MPI_Op op);

#endif
