#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/* Own-work clocks (lbclock.h). */
#include "balance/lbclock.h"

#include <stddef.h>
#include <time.h>

/* Defined by the profiling layer (pmpi.c) when the program links it. */
extern void lb_pmpi_totals(double *cpu, double *wall, long long *calls, double *cost_s) __attribute__((weak));
extern void lb_pmpi_enable(int on) __attribute__((weak));

static double seconds(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double lb_clock_thread_cpu(void) { return seconds(CLOCK_THREAD_CPUTIME_ID); }

double lb_clock_wall(void) { return seconds(CLOCK_MONOTONIC); }

void lb_clock_now(lb_clock *c)
{
  long long calls;
  double cost;

  c->mpi_cpu = c->mpi_wall = 0;
  if (lb_pmpi_totals) lb_pmpi_totals(&c->mpi_cpu, &c->mpi_wall, &calls, &cost);
  c->cpu = lb_clock_thread_cpu();
  c->wall = lb_clock_wall();
}

void lb_clock_between(const lb_clock *a, const lb_clock *b, double *own_cpu, double *own_wall, double *wall, double *mpi_wall)
{
  const double mc = b->mpi_cpu - a->mpi_cpu, mw = b->mpi_wall - a->mpi_wall;
  /* a busy-polling wait can read a few microseconds more CPU than the
   * thread's clock around it (two clocks, read apart): never below 0 */
  if (own_cpu) *own_cpu = b->cpu - a->cpu - mc > 0 ? b->cpu - a->cpu - mc : 0;
  if (own_wall) *own_wall = b->wall - a->wall - mw > 0 ? b->wall - a->wall - mw : 0;
  if (wall) *wall = b->wall - a->wall;
  if (mpi_wall) *mpi_wall = mw;
}

static int profiling = 1;

int lb_mpi_profiled(void) { return lb_pmpi_totals != NULL && profiling; }

void lb_mpi_profile(int on)
{
  profiling = on;
  if (lb_pmpi_enable) lb_pmpi_enable(on);
}

void lb_mpi_profile_cost(long long *calls, double *cost_s)
{
  double cpu, wall;
  *calls = 0;
  *cost_s = 0;
  if (lb_pmpi_totals) lb_pmpi_totals(&cpu, &wall, calls, cost_s);
}
