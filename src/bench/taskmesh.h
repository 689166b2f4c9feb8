/** @file taskmesh.h
 *  Lieber et al. 2016's benchmark input: a 3D mesh of weighted tasks with 6-neighbour
 *  edges, mapped in equal blocks onto a 3D mesh of ranks. */
#ifndef AMRDLB_TASKMESH_H
#define AMRDLB_TASKMESH_H

#include "balance/tasks.h"

/** A task mesh of T[0] x T[1] x T[2] tasks (x fastest in task ids) on a
 *  rank mesh of P[0] x P[1] x P[2], blocks of b[i] = T[i] / P[i] tasks. */
typedef struct {
  int T[3], P[3], b[3];
  double *w;      /**< weight of every task */
} lb_taskmesh;

/** Build the task mesh for rank graph g (mesh3d only): tasks "AxBxC" (empty:
 *  8x8x8 per rank, as in Lieber et al. 2016), weights from the scenario: file:PATH
 *  holds one weight per task; any other lbbench scenario gives per-rank loads
 *  (base 0: the tasks per rank) spread evenly over the rank's tasks.
 *  tg is filled with callbacks that read tm, which must outlive it. */
lb_err lb_taskmesh_create(const lb_graph *g, const char *tasks, const char *scenario, double base,
                          lb_taskmesh *tm, lb_task_graph *tg);
/** Free the weights of a task mesh. */
void lb_taskmesh_free(lb_taskmesh *tm);

#endif
