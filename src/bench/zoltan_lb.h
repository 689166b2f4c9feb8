/** @file zoltan_lb.h
 *  Zoltan baselines for lbbench: recursive coordinate bisection, Hilbert
 *  space-filling curve and PHG graph repartitioning of a task set. */
#ifndef AMRDLB_ZOLTAN_LB_H
#define AMRDLB_ZOLTAN_LB_H

#include "balance/tasks.h"

/** 1 if name is a Zoltan baseline: zoltan-rcb, zoltan-hsfc, zoltan-graph. */
int lb_zoltan_is_method(const char *name);

/** Initialise Zoltan once per program (after MPI). */
lb_err lb_zoltan_init(int argc, char **argv);

/** Partition the tasks of ts into one part per rank with the named
 *  baseline and write each task's new rank into the task set's
 *  destinations.  On the MPI backend Zoltan runs on comm; on the virtual
 *  backend it runs on this process alone with one part per virtual rank.
 *  *runtime_s gets the partitioning time (largest over processes).
 *  imbalance_tol is Zoltan's IMBALANCE_TOL. */
lb_err lb_zoltan_partition(lb_taskset *ts, const char *name, lb_backend be, MPI_Comm comm, double imbalance_tol, double *runtime_s);

#endif
