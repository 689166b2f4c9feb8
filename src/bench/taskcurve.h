/** @file taskcurve.h
 *  lbbench's task mode for the methods that cut a curve (a partition hook:
 *  sfc-exact, hiersfc): the tasks in the order of a space-filling curve,
 *  cut by the method into one contiguous piece per rank, as Lieber et al.
 *  2016 ran HierSFC in FD4 (Hilbert's curve over the task mesh).  A
 *  trace's cells are already in the app's curve order (p4est's Morton
 *  order), their task ids. */
#ifndef AMRDLB_TASKCURVE_H
#define AMRDLB_TASKCURVE_H

#include "balance/tasks.h"

/** The place of every task of a T[0] x T[1] x T[2] task mesh (x fastest in
 *  task ids) on Hilbert's curve over the mesh's bounding power-of-two cube
 *  (Skilling 2004's transpose): pos[id], 0 .. ntasks-1, malloc'ed. */
lb_err lb_taskcurve_hilbert(const int T[3], int **pos);

/**
 * Cut the tasks of ts on nparts ranks along the curve with method m's
 * partition hook and set every task's destination (lb_taskset_dest) to the
 * rank whose piece holds its place (pos[id], or id itself when pos is
 * NULL; ntasks places in all).  Every process assembles the curve's
 * weights (on MPI one sum of ntasks doubles) and holds its rank's equal
 * share of the places for the hook, so the backends cut alike.  *seconds:
 * the hook's wall time, the most over the processes.  Collective.
 */
lb_err lb_taskcurve_partition(lb_taskset *ts, int nparts, int ntasks, const int *pos, const lb_method *m, const lb_params *p, double *seconds);

#endif
