/* The accelerated diffusion recurrence of accelerated.h.  Each rank keeps
 * the flow of the previous iteration on its own directed edges; the two
 * ends of an edge compute exactly opposite values (negation is exact in
 * floating point), so every iteration conserves load. */
#include "balance/impl/accelerated.h"

#include <stdlib.h>

lb_err lb_accel_setup(lb_run *run, double a, accel_weight weight, accel_state **out)
{
  const lb_graph *g = lb_run_graph(run);
  accel_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *out = s;
  s->a = a;
  s->weight = weight;
  s->prev = calloc(2 * (size_t)g->m + 1, sizeof *s->prev);
  if (!s->prev) return lb_error(LB_ERR_MEM, "out of memory for %d edges", g->m);
  return lb_run_channels(run, 0, 1);
}

lb_err lb_accel_step(lb_run *run, void *state, int lo, int hi)
{
  accel_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  const int *restrict xadj = g->xadj, *restrict adj = g->adj;
  double *restrict load = lb_run_load(run), *restrict flow = lb_run_flow(run), *restrict prev = s->prev;
  if (lb_run_step(run) > 0) {
    const double *restrict in = lb_pub_in(run);
    s->w = s->weight(s, lb_run_iterations(run) + 1, s->w);
    const double wa = s->w * s->a, w1 = s->w - 1;
    for (int r = lo; r < hi; r++) {
      double l = in[r], sent = 0;
      for (int e = xadj[r]; e < xadj[r + 1]; e++) {
        double f = wa * (l - in[adj[e]]) + w1 * prev[e];
        prev[e] = f;
        flow[e] += f;
        sent += f;
      }
      load[r] = l - sent;
    }
    lb_run_end_iteration(run, 1);
  }
  double *out = lb_pub_out(run);
  for (int r = lo; r < hi; r++) out[r] = load[r];
  return LB_OK;
}

void lb_accel_destroy(void *state)
{
  accel_state *s = state;
  if (!s) return;
  free(s->prev);
  free(s);
}
