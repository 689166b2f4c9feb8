/* The MPI backend: graph rank r is MPI process r of the communicator.  A
 * distributed-graph communicator with the rank's neighbours in CSR order
 * carries messages (neighbour all-to-all of fixed slots) and publications
 * (neighbour all-gather); received data is written where the virtual
 * backend would have found it, so methods cannot tell the two apart. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>

#define MPI_TRY(call) do { if ((call) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "MPI call failed: %s", #call); } while (0)

static lb_err mpi_setup(lb_run *run)
{
  const lb_graph *g = run->g;
  int me, size;
  MPI_TRY(MPI_Comm_rank(run->p->comm, &me));
  MPI_TRY(MPI_Comm_size(run->p->comm, &size));
  run->lo = me;
  run->hi = me + 1;
  int deg = g->xadj[me + 1] - g->xadj[me];
  /* Unit weights instead of MPI_UNWEIGHTED, which GCC sees as a read of a
   * zero-size object in OpenMPI's headers. */
  int *w = malloc(((size_t)deg + 1) * sizeof *w);
  if (!w) return lb_error(LB_ERR_MEM, "out of memory for the neighbourhood");
  for (int i = 0; i < deg; i++) w[i] = 1;
  int rc = MPI_Dist_graph_create_adjacent(run->p->comm, deg, g->adj + g->xadj[me], w,
                                          deg, g->adj + g->xadj[me], w, MPI_INFO_NULL, 0, &run->gcomm);
  free(w);
  if (rc != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "MPI_Dist_graph_create_adjacent failed");
  int slot = run->msg_cap + 1 > run->pub_len ? run->msg_cap + 1 : run->pub_len;
  run->sbuf = malloc(((size_t)deg * slot + 1) * sizeof(double));
  run->rbuf = malloc(((size_t)deg * slot + 1) * sizeof(double));
  for (int s = 0; s < run->nred; s++) {
    run->red[s].mpi_res = calloc((size_t)run->red[s].ngroups, sizeof(double));
    if (!run->red[s].mpi_res) return lb_error(LB_ERR_MEM, "out of memory for reductions");
    run->red[s].res = run->red[s].mpi_res;
  }
  if (!run->sbuf || !run->rbuf) return lb_error(LB_ERR_MEM, "out of memory for MPI buffers");
  return LB_OK;
}

static MPI_Op mpi_op(lb_op op)
{
  return op == LB_SUM ? MPI_SUM : op == LB_MAX ? MPI_MAX : MPI_MIN;
}

static lb_err mpi_exchange(lb_run *run, int *flags, int nflags)
{
  const lb_graph *g = run->g;
  int me = run->lo, par = run->step & 1, e0 = g->xadj[me], deg = g->xadj[me + 1] - e0;
  if (run->msg_cap > 0) {
    int w = run->msg_cap + 1;
    for (int i = 0; i < deg; i++) {
      int e = e0 + i, len = run->mstamp[par][e] == run->step ? run->mlen[par][e] : 0;
      run->sbuf[(size_t)i * w] = len;
      memcpy(run->sbuf + (size_t)i * w + 1, run->msg[par] + (size_t)e * run->msg_cap, (size_t)len * sizeof(double));
    }
    MPI_TRY(MPI_Neighbor_alltoall(run->sbuf, w, MPI_DOUBLE, run->rbuf, w, MPI_DOUBLE, run->gcomm));
    for (int i = 0; i < deg; i++) {
      int from = g->rev[e0 + i], len = (int)run->rbuf[(size_t)i * w];
      if (len <= 0) continue;
      run->mstamp[par][from] = run->step;
      run->mlen[par][from] = len;
      memcpy(run->msg[par] + (size_t)from * run->msg_cap, run->rbuf + (size_t)i * w + 1, (size_t)len * sizeof(double));
    }
  }
  if (run->pub_len > 0) {
    int w = run->pub_len;
    MPI_TRY(MPI_Neighbor_allgather(run->pub[par] + (size_t)me * w, w, MPI_DOUBLE, run->rbuf, w, MPI_DOUBLE, run->gcomm));
    for (int i = 0; i < deg; i++)
      memcpy(run->pub[par] + (size_t)g->adj[e0 + i] * w, run->rbuf + (size_t)i * w, (size_t)w * sizeof(double));
  }
  for (int s = 0; s < run->nred; s++)
    MPI_TRY(MPI_Allreduce(run->red[s].acc[par], run->red[s].mpi_res, run->red[s].ngroups, MPI_DOUBLE,
                          mpi_op(run->red[s].op), run->p->comm));
  MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, flags, nflags, MPI_INT, MPI_MAX, run->p->comm));
  return LB_OK;
}

static lb_err mpi_allreduce(lb_run *run, double *v, int nv, lb_op op)
{
  MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, nv, MPI_DOUBLE, mpi_op(op), run->p->comm));
  return LB_OK;
}

static lb_err mpi_edge_swap(lb_run *run, const double *out, double *in)
{
  const lb_graph *g = run->g;
  int e0 = g->xadj[run->lo], deg = g->xadj[run->lo + 1] - e0;
  /* Neighbour i of the distributed graph is adj[e0 + i] in both directions. */
  memcpy(run->sbuf, out + e0, (size_t)deg * sizeof(double));
  MPI_TRY(MPI_Neighbor_alltoall(run->sbuf, 1, MPI_DOUBLE, run->rbuf, 1, MPI_DOUBLE, run->gcomm));
  memcpy(in + e0, run->rbuf, (size_t)deg * sizeof(double));
  return LB_OK;
}

static lb_err mpi_gather(lb_run *run, const double *local, double *all)
{
  MPI_TRY(MPI_Allgather(local + run->lo, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, run->p->comm));
  return LB_OK;
}

static void mpi_teardown(lb_run *run)
{
  if (run->gcomm != MPI_COMM_NULL) MPI_Comm_free(&run->gcomm);
  free(run->sbuf);
  free(run->rbuf);
  for (int s = 0; s < run->nred; s++) free(run->red[s].mpi_res);
}

const lb_backend_ops lb_backend_mpi = {
  mpi_setup, mpi_exchange, mpi_allreduce, mpi_edge_swap, mpi_gather, mpi_teardown
};
