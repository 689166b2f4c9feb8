/* The MPI profiling layer (balance/lbclock.h, pmpi.c) subtracts a known
 * wait.  Rank 1 computes for 0.3 s of its thread's CPU time while the
 * others wait for it in MPI_Barrier; then every rank reads its clocks.  A
 * waiting rank's own work is near zero (under 0.05 s, though Open MPI's
 * busy polling may burn its CPU all along), and its time inside MPI is at
 * least the 0.3 s it waited (less 0.05 s: the ranks leave the first
 * barrier a little apart); rank 1's own work is its 0.3 s.  The margins
 * are a sixth of the wait: clock readings and a loaded machine's
 * scheduling take milliseconds, not tenths.  Needs 2 ranks or more. */
#include "check.h"
#include "balance/lbclock.h"

int main(int argc, char **argv)
{
  const double work = 0.3;
  int rank, size;
  lb_clock a, b;
  double own_cpu, own_wall, wall, mpi_wall, sink = 0;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CHECK(lb_mpi_profiled());
  CHECK(size >= 2);
  MPI_Barrier(MPI_COMM_WORLD);
  lb_clock_now(&a);
  if (rank == 1)
    for (const double t0 = lb_clock_thread_cpu(); lb_clock_thread_cpu() - t0 < work;) sink += 1e-9;
  MPI_Barrier(MPI_COMM_WORLD);
  lb_clock_now(&b);
  lb_clock_between(&a, &b, &own_cpu, &own_wall, &wall, &mpi_wall);
  if (rank == 1) {
    CHECK_MSG(own_cpu >= work && own_cpu < work + 0.05, "rank 1 computed %.3f s of CPU, own work %.3f s", work, own_cpu);
  } else {
    CHECK_MSG(own_cpu < 0.05, "rank %d waited: own work %.4f s", rank, own_cpu);
    CHECK_MSG(own_wall < 0.05, "rank %d waited: own wall %.4f s", rank, own_wall);
    CHECK_MSG(mpi_wall >= work - 0.05 && mpi_wall <= wall, "rank %d: %.3f s inside MPI of %.3f s", rank, mpi_wall, wall);
  }
  printf("test_pmpi rank %d: own CPU %.4f s, own wall %.4f s, inside MPI %.4f s of %.4f s wall%s\n", rank, own_cpu, own_wall, mpi_wall, wall, sink > 1e9 ? "" : "");
  const int failed = check_finish(MPI_COMM_WORLD);
  if (rank == 0) printf("%d checks failed\n", check_failures);
  MPI_Finalize();
  return failed;
}
