#ifndef AMRDLB_FEMUTIL_H
#define AMRDLB_FEMUTIL_H

/*
 * What the discretisations share and is not a discretisation: the clocks
 * of each rank's own work.
 * No forest: one library for 2D and 3D.
 */

/** This thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID): with more
 *  ranks than cores, or Open MPI busy-polling, the time the rank really
 *  computed. */
double FemThreadTime(void);

/** FemThreadTime() and MPI_Wtime(), read together. */
void FemClocks(double *cpu, double *wall);

#endif
