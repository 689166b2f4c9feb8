#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "fem/femutil.h"

#include <mpi.h>
#include <time.h>

double FemThreadTime(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void FemClocks(double *cpu, double *wall)
{
  *cpu = FemThreadTime();
  *wall = MPI_Wtime();
}
