#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "fem/femutil.h"

#include <errno.h>
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
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

int FemParseReal(const char *s, double *v)
{
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return errno == 0 && end != s && *end == 0 && isfinite(*v);
}

int FemParseInt(const char *s, long *v)
{
  char *end;
  errno = 0;
  *v = strtol(s, &end, 10);
  return errno == 0 && end != s && *end == 0;
}
