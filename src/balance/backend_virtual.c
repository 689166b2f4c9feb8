/* The virtual backend: every rank of the graph lives in this process.
 * Messages and publications are already in place (the engine indexes them
 * by sender and superstep parity), so a superstep costs nothing beyond the
 * method's own loop: no copies, no per-message allocation. */
#include "balance/impl/engine.h"

#include <string.h>

static lb_err virtual_setup(lb_run *run)
{
  run->lo = 0;
  run->hi = run->g->n;
  return LB_OK;
}

static lb_err virtual_exchange(lb_run *run)
{
  (void)run;
  return LB_OK;
}

/* All ranks contributed in this process: the result is the accumulator. */
static lb_err virtual_reduce(lb_run *run, int slot)
{
  run->red[slot].res = run->red[slot].acc[run->step & 1];
  return LB_OK;
}

/* Values computed over all local ranks are already global here. */
static lb_err virtual_allreduce(lb_run *run, double *v, int nv, lb_op op)
{
  (void)run; (void)v; (void)nv; (void)op;
  return LB_OK;
}

static lb_err virtual_edge_swap(lb_run *run, const double *out, double *in)
{
  const lb_graph *g = run->g;
  for (int e = 0; e < 2 * g->m; e++) in[e] = out[g->rev[e]];
  return LB_OK;
}

/* Every rank is local: one serial pass. */
static lb_err virtual_scan(lb_run *run, int64_t *v, int64_t *total)
{
  v[0] = 0;
  for (int i = 0; i < run->g->n; i++) v[i + 1] += v[i];
  *total = v[run->g->n];
  return LB_OK;
}

static lb_err virtual_gather(lb_run *run, const double *local, double *all)
{
  memcpy(all, local, (size_t)run->g->n * sizeof *all);
  return LB_OK;
}

static void virtual_teardown(lb_run *run) { (void)run; }

const lb_backend_ops lb_backend_virtual = {
  virtual_setup, virtual_exchange, virtual_reduce, virtual_allreduce, virtual_edge_swap, virtual_scan, virtual_gather, virtual_teardown
};
