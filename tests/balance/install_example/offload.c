/* Another code's pointwise work balanced with the installed balancer
 * (balance/lboffload.h), on MPI ranks: each rank holds particles whose
 * local solve costs in proportion to their value, rank 0 most of them.
 * Each rank sends what the plan says, solves what it keeps while those
 * travel, solves what it received, and gets its particles' results back.
 * Run on any number of ranks: mpiexec -n 4 ./offload */
#include <stdio.h>
#include <stdlib.h>

#include "balance/lboffload.h"

/* A particle's local solve: the work grows with its value. */
static double solve(double x)
{
  double y = 0;
  for (long k = 0; k < (long)(1000 * x); k++) y += 1e-3;
  return y;
}

int main(int argc, char **argv)
{
  int rank, size, bad = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int64_t n = rank == 0 ? 40 : 10;
  double *x = malloc(n * sizeof *x), *cost = malloc(n * sizeof *cost), *y = malloc(n * sizeof *y);
  for (int64_t i = 0; i < n; i++) cost[i] = x[i] = 1 + i % 4; /* the estimate: any unit, here the value */

  lb_offload *o;
  lb_offload_info in;
  if (lb_offload_plan(MPI_COMM_WORLD, 1, &n, cost, 1e-3, &o) != LB_OK) {
    fprintf(stderr, "offload: %s\n", lb_errmsg());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  lb_offload_info_get(o, 0, &in);
  double *send = malloc((in.nsend + 1) * sizeof *send), *recv = malloc((in.nrecv + 1) * sizeof *recv);
  double *res = malloc((in.nrecv + 1) * sizeof *res), *back = malloc((in.nsend + 1) * sizeof *back);
  char *away = calloc(n, 1);
  for (int64_t i = 0; i < in.nsend; i++) {
    send[i] = x[in.send[i]];
    away[in.send[i]] = 1;
  }
  lb_offload_forward_begin(o, sizeof(double), send, recv);
  for (int64_t i = 0; i < n; i++)
    if (!away[i]) y[i] = solve(x[i]);
  lb_offload_forward_end(o);
  for (int64_t i = 0; i < in.nrecv; i++) res[i] = solve(recv[i]);
  lb_offload_backward_begin(o, sizeof(double), res, back);
  lb_offload_backward_end(o);
  for (int64_t i = 0; i < in.nsend; i++) y[in.send[i]] = back[i];

  for (int64_t i = 0; i < n; i++) bad += y[i] != solve(x[i]);
  long long load[2] = {in.load_before, in.load_after}, max[2];
  MPI_Allreduce(load, max, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("offload on %d ranks: largest load %lld -> %lld, %d wrong results\n", size, max[0], max[1], bad);
  lb_offload_destroy(&o);
  free(x), free(cost), free(y), free(send), free(recv), free(res), free(back), free(away);
  MPI_Finalize();
  return bad != 0;
}
