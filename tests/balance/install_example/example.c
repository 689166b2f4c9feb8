/* Another code's use of the installed balancer: the tree method on the
 * line of its MPI ranks, all load on rank 0 at the start, each process
 * one rank (the MPI backend).  mpiexec -n 4 ./example */
#include <stdio.h>
#include <stdlib.h>
#include "balance/balance.h"

int main(int argc, char **argv)
{
  const lb_method *m;
  lb_graph *g = NULL;
  lb_params p;
  lb_result res;
  char spec[32];
  double *load0;
  int rank, size, rc = 1;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* every process passes every rank's load; each balances its own */
  load0 = calloc((size_t)size, sizeof *load0);
  load0[0] = size;
  snprintf(spec, sizeof spec, "line:%d", size);
  if ((m = lb_method_find("tree")) && lb_graph_create(spec, &g) == LB_OK && lb_params_init(&p, m) == LB_OK) {
    p.backend = LB_BACKEND_MPI;
    p.comm = MPI_COMM_WORLD;
    if (lb_balance(g, m, &p, load0, &res) == LB_OK) {
      if (rank == 0) {
        printf("loads after tree on %d ranks:", size);
        for (int r = 0; r < size; r++) printf(" %g", res.load[r]);
        printf("\n");
      }
      lb_result_free(&res);
      rc = 0;
    }
  }
  if (rc) fprintf(stderr, "example: %s\n", lb_errmsg());
  lb_graph_destroy(&g);
  free(load0);
  MPI_Finalize();
  return rc;
}
