#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "fem/femutil.h"

#include <mpi.h>
#include <time.h>

/* the same doubles as the fractions 5/9, 8/9, 128/225 */
const double FemGaussX[FEM_GAUSS_MAX + 1][FEM_GAUSS_MAX] = {
    {0},
    {0},
    {-0.57735026918962576451, 0.57735026918962576451},
    {-0.77459666924148337704, 0, 0.77459666924148337704},
    {-0.86113631159405257522, -0.33998104358485626480, 0.33998104358485626480, 0.86113631159405257522},
    {-0.90617984593866399280, -0.53846931010568309104, 0, 0.53846931010568309104, 0.90617984593866399280}};
const double FemGaussW[FEM_GAUSS_MAX + 1][FEM_GAUSS_MAX] = {
    {0},
    {2},
    {1, 1},
    {5.0 / 9, 8.0 / 9, 5.0 / 9},
    {0.34785484513745385737, 0.65214515486254614263, 0.65214515486254614263, 0.34785484513745385737},
    {0.23692688505618908751, 0.47862867049936646804, 128.0 / 225, 0.47862867049936646804, 0.23692688505618908751}};

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
