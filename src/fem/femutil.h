#ifndef AMRDLB_FEMUTIL_H
#define AMRDLB_FEMUTIL_H

/*
 * What the discretisations share and is not a discretisation: the clocks
 * of each rank's own work and the parsing of option values read as text.
 * No forest: one library for 2D and 3D.
 */

/** This thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID): with more
 *  ranks than cores, or Open MPI busy-polling, the time the rank really
 *  computed. */
double FemThreadTime(void);

/** FemThreadTime() and MPI_Wtime(), read together. */
void FemClocks(double *cpu, double *wall);

/** Parse a whole string as a finite double: 1 on success, 0 otherwise
 *  (empty, trailing text, overflow, NaN or infinity).  Options are read as
 *  strings and parsed here because PETSc's parser answers a malformed
 *  number without naming the option. */
int FemParseReal(const char *s, double *v);

/** Parse a whole string as a decimal integer: 1 on success, 0 otherwise. */
int FemParseInt(const char *s, long *v);

#endif
