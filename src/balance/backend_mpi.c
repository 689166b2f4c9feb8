/* The MPI backend: graph rank r is MPI process r of the communicator.  A
 * superstep is neighbour-only, as Lieber et al. 2016 implements diffusion: one
 * message per neighbour on persistent requests set up once per run, and
 * per superstep MPI_Startall, MPI_Waitall on the receives, MPI_Waitall on
 * the sends.  The message to a neighbour carries the rank's publication
 * and, for methods that post messages, the message on that edge with its
 * length in front (a method that posts nothing on an edge this superstep
 * sends length 0).  Received data is written where the virtual backend
 * would have found it, so methods cannot tell the two apart.  Collectives
 * happen only when the engine asks (reductions, stop checks, results). */
#include "balance/impl/engine.h"

#include <stdlib.h>
#include <string.h>

#define MPI_TRY(call) do { if ((call) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "MPI call failed: %s", #call); } while (0)

static lb_err mpi_setup(lb_run *run)
{
  const lb_graph *g = run->g;
  int me;
  MPI_TRY(MPI_Comm_rank(run->p->comm, &me));
  run->lo = me;
  run->hi = me + 1;
  int e0 = g->xadj[me], deg = g->xadj[me + 1] - e0;
  /* Unit weights instead of MPI_UNWEIGHTED, which GCC sees as a read of a
   * zero-size object in OpenMPI's headers.  The graph communicator also
   * keeps the persistent messages apart from the caller's. */
  int *w = malloc(((size_t)deg + 1) * sizeof *w);
  if (!w) return lb_error(LB_ERR_MEM, "out of memory for the neighbourhood");
  for (int i = 0; i < deg; i++) w[i] = 1;
  int rc = MPI_Dist_graph_create_adjacent(run->p->comm, deg, g->adj + e0, w, deg, g->adj + e0, w, MPI_INFO_NULL, 0, &run->gcomm);
  free(w);
  if (rc != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "MPI_Dist_graph_create_adjacent failed");
  for (int s = 0; s < run->nred; s++) {
    run->red[s].mpi_res = calloc((size_t)run->red[s].ngroups, sizeof(double));
    if (!run->red[s].mpi_res) return lb_error(LB_ERR_MEM, "out of memory for reductions");
    run->red[s].res = run->red[s].mpi_res;
  }
  run->slot_w = (run->msg_cap > 0 ? 1 + run->msg_cap : 0) + run->pub_len;
  size_t len = (size_t)deg * (run->slot_w > 1 ? run->slot_w : 1) + 1;
  run->sbuf = malloc(len * sizeof(double));
  run->rbuf = malloc(len * sizeof(double));
  run->req = malloc((2 * (size_t)deg + 1) * sizeof *run->req);
  if (!run->sbuf || !run->rbuf || !run->req) return lb_error(LB_ERR_MEM, "out of memory for MPI buffers");
  if (run->slot_w == 0) return LB_OK;
  for (int i = 0; i < deg; i++) {
    size_t off = (size_t)i * run->slot_w;
    MPI_TRY(MPI_Recv_init(run->rbuf + off, run->slot_w, MPI_DOUBLE, g->adj[e0 + i], 0, run->gcomm, &run->req[i]));
    run->nreq++;
  }
  for (int i = 0; i < deg; i++) {
    size_t off = (size_t)i * run->slot_w;
    MPI_TRY(MPI_Send_init(run->sbuf + off, run->slot_w, MPI_DOUBLE, g->adj[e0 + i], 0, run->gcomm, &run->req[deg + i]));
    run->nreq++;
  }
  return LB_OK;
}

static MPI_Op mpi_op(lb_op op)
{
  return op == LB_SUM ? MPI_SUM : op == LB_MAX ? MPI_MAX : MPI_MIN;
}

static lb_err mpi_exchange(lb_run *run)
{
  if (run->nreq == 0) return LB_OK;
  const lb_graph *g = run->g;
  int me = run->lo, par = run->step & 1, e0 = g->xadj[me], deg = g->xadj[me + 1] - e0;
  int w = run->slot_w, mc = run->msg_cap, hdr = mc > 0 ? 1 + mc : 0, pl = run->pub_len;
  for (int i = 0; i < deg; i++) {
    double *out = run->sbuf + (size_t)i * w;
    if (mc > 0) {
      int e = e0 + i, len = run->mstamp[par][e] == run->step ? run->mlen[par][e] : 0;
      out[0] = len;
      memcpy(out + 1, run->msg[par] + (size_t)e * mc, (size_t)len * sizeof(double));
    }
    if (pl > 0) memcpy(out + hdr, run->pub[par] + (size_t)me * pl, (size_t)pl * sizeof(double));
  }
  MPI_TRY(MPI_Startall(run->nreq, run->req));
  MPI_TRY(MPI_Waitall(deg, run->req, MPI_STATUSES_IGNORE));
  for (int i = 0; i < deg; i++) {
    const double *in = run->rbuf + (size_t)i * w;
    if (mc > 0) {
      int from = g->rev[e0 + i], len = (int)in[0];
      if (len > 0) {
        run->mstamp[par][from] = run->step;
        run->mlen[par][from] = len;
        memcpy(run->msg[par] + (size_t)from * mc, in + 1, (size_t)len * sizeof(double));
      }
    }
    if (pl > 0) memcpy(run->pub[par] + (size_t)g->adj[e0 + i] * pl, in + hdr, (size_t)pl * sizeof(double));
  }
  MPI_TRY(MPI_Waitall(deg, run->req + deg, MPI_STATUSES_IGNORE));
  return LB_OK;
}

static lb_err mpi_reduce(lb_run *run, int slot)
{
  lb_reduction *r = &run->red[slot];
  MPI_TRY(MPI_Allreduce(r->acc[run->step & 1], r->mpi_res, r->ngroups, MPI_DOUBLE, mpi_op(r->op), run->p->comm));
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

/* One value per process: the sum before it and the sum of all, in two
 * collectives of one integer each. */
static lb_err mpi_scan(lb_run *run, int64_t *v, int64_t *total)
{
  const int64_t mine = v[1];
  MPI_TRY(MPI_Exscan(&mine, &v[0], 1, MPI_INT64_T, MPI_SUM, run->p->comm));
  if (run->lo == 0) v[0] = 0; /* MPI leaves rank 0's result undefined */
  v[1] = v[0] + mine;
  MPI_TRY(MPI_Allreduce(&mine, total, 1, MPI_INT64_T, MPI_SUM, run->p->comm));
  return LB_OK;
}

static lb_err mpi_gather(lb_run *run, const double *local, double *all)
{
  MPI_TRY(MPI_Allgather(local + run->lo, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, run->p->comm));
  return LB_OK;
}

static void mpi_teardown(lb_run *run)
{
  for (int i = 0; i < run->nreq; i++) MPI_Request_free(&run->req[i]);
  if (run->gcomm != MPI_COMM_NULL) MPI_Comm_free(&run->gcomm);
  free(run->req);
  free(run->sbuf);
  free(run->rbuf);
  for (int s = 0; s < run->nred; s++) free(run->red[s].mpi_res);
}

const lb_backend_ops lb_backend_mpi = {
  mpi_setup, mpi_exchange, mpi_reduce, mpi_allreduce, mpi_edge_swap, mpi_scan, mpi_gather, mpi_teardown
};
