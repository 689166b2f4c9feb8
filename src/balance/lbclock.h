#ifndef AMRDLB_LBCLOCK_H
#define AMRDLB_LBCLOCK_H

/* A rank's own work: its thread CPU time and wall time less the time it
 * spent inside MPI.  Inside MPI a rank waits for others (Open MPI
 * busy-polls, so a waiting rank burns CPU time too), and a phase's time
 * without its waits is what a partition can move between ranks.  The time
 * inside MPI is counted by the profiling layer src/balance/pmpi.c (the
 * PMPI interface, as mpiP and IPM use it), which sees every MPI call of
 * the process, those of PETSc, hypre and p4est included; it reads the
 * CPU clock once per run of calls, not per call (pmpi.c says how).  A program that
 * does not link that layer reads zero time inside MPI (lb_mpi_profiled()
 * says 0), and its own work is then its whole thread CPU time. */

/** A reading of the calling thread's clocks (seconds). */
typedef struct {
  double cpu;      /**< thread CPU time */
  double wall;     /**< wall clock */
  double mpi_cpu;  /**< thread CPU time spent inside MPI */
  double mpi_wall; /**< wall time spent inside MPI */
} lb_clock;

/** The calling thread's CPU time in seconds (CLOCK_THREAD_CPUTIME_ID):
 *  with more ranks than cores, or Open MPI busy-polling, the time the
 *  thread really computed.  The one reading of that clock in amrdlb. */
double lb_clock_thread_cpu(void);

/** The wall clock in seconds (CLOCK_MONOTONIC: never set back). */
double lb_clock_wall(void);

/** Read the calling thread's clocks now. */
void lb_clock_now(lb_clock *c);

/** The time between two readings a (earlier) and b: own CPU (cpu less
 *  MPI's), own wall (wall less MPI's), elapsed wall and wall inside MPI.
 *  Any output may be NULL. */
void lb_clock_between(const lb_clock *a, const lb_clock *b, double *own_cpu, double *own_wall, double *wall, double *mpi_wall);

/** 1 when the MPI profiling layer is linked into the program and on. */
int lb_mpi_profiled(void);

/** Turn the profiling layer's clocks on or off (on by default): off, every
 *  wrapper calls its PMPI_ twin straight away, and own work is the whole
 *  thread time, which measures what the layer costs. */
void lb_mpi_profile(int on);

/** The profiling layer's own account on the calling thread: the MPI calls
 *  it timed so far, and what its clock readings took, in seconds (from
 *  their measured cost; 0 and 0 without the layer). */
void lb_mpi_profile_cost(long long *calls, double *cost_s);

#endif
