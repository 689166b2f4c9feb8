/* Chemotaxis-inspired diffusion (Canright, Deutsch, Urnes; seed 001 CT).
 * A first global sum gives the capacity c (the average load, the target of
 * every rank).  Each iteration then takes two neighbour exchanges, twice
 * the messages of first-order diffusion:
 *   1. every rank emits its signal e_v = l_v - c;
 *   2. the signal diffuses one step with alpha_sig = 1/max(deg_v, deg_w):
 *      s_v = e_v + sum_w alpha_sig (e_w - e_v), and every rank publishes it;
 * and load moves down both the load and the signal gradient:
 *      y_vw = alpha ((l_v - l_w) + (s_v - s_w)).
 * The signal reaches one hop further than the load, so smooth imbalances
 * (a box of overloaded ranks) flow about twice as fast per iteration as
 * under first-order diffusion.  The combined operator is alpha L (I + M_sig)
 * with M_sig the signal diffusion matrix; on a regular bipartite graph
 * M_sig has the eigenvalue -1 and the alternating load pattern would never
 * move, so such graphs are refused. */
#include "balance.h"

#include <stdlib.h>

static const lb_option chemotaxis_options[] = {
  {"alpha", 0.0, "diffusion parameter alpha (0: 1/(max degree + 1))"},
};

typedef struct {
  double alpha, capacity;
  int slot;
} chemotaxis_state;

/* 1 if every rank has the same degree and the graph is 2-colourable. */
static int regular_bipartite(const lb_graph *g)
{
  for (int r = 0; r < g->n; r++)
    if (g->xadj[r + 1] - g->xadj[r] != g->max_degree) return 0;
  int *side = malloc((size_t)g->n * sizeof *side), *queue = malloc((size_t)g->n * sizeof *queue), ok = 1;
  if (!side || !queue) { free(side); free(queue); return 0; }
  for (int r = 0; r < g->n; r++) side[r] = -1;
  for (int s = 0; s < g->n && ok; s++) {
    if (side[s] >= 0) continue;
    int head = 0, tail = 0;
    side[s] = 0;
    queue[tail++] = s;
    while (head < tail && ok) {
      int r = queue[head++];
      for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
        int q = g->adj[e];
        if (side[q] < 0) { side[q] = 1 - side[r]; queue[tail++] = q; }
        else if (side[q] == side[r]) ok = 0;
      }
    }
  }
  free(side);
  free(queue);
  return ok;
}

static lb_err chemotaxis_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  double alpha = lb_run_params(run)->opt[0];
  if (alpha < 0 || alpha * g->max_degree > 1)
    return lb_error(LB_ERR_ARG, "-lb_alpha %g must lie in [0, 1/max degree] = [0, %g]", alpha, 1.0 / (g->max_degree ? g->max_degree : 1));
  if (g->m > 0 && regular_bipartite(g))
    return lb_error(LB_ERR_UNSUPPORTED, "chemotaxis cannot move the alternating load pattern of the regular bipartite graph '%s'", g->spec);
  chemotaxis_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  s->alpha = alpha > 0 ? alpha : 1.0 / (g->max_degree + 1);
  lb_err err = lb_run_reduction(run, LB_SUM, 1, &s->slot);
  return err ? err : lb_run_channels(run, 0, 2);
}

static lb_err chemotaxis_step(lb_run *run, void *state, int lo, int hi)
{
  chemotaxis_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  const int *xadj = g->xadj, *adj = g->adj;
  double *load = lb_run_load(run), *flow = lb_run_flow(run), *out = lb_pub_out(run);
  int step = lb_run_step(run);
  if (step == 0) {
    for (int r = lo; r < hi; r++) {
      lb_reduce(run, s->slot, 0, load[r]);
      out[2 * r] = load[r];
      out[2 * r + 1] = 0;
    }
    return LB_OK;
  }
  const double *in = lb_pub_in(run);
  if (step % 2 == 0) {
    /* The signal diffuses one step. */
    for (int r = lo; r < hi; r++) {
      int dr = xadj[r + 1] - xadj[r];
      double e = in[2 * r + 1], sig = e;
      for (int k = xadj[r]; k < xadj[r + 1]; k++) {
        int q = adj[k], dq = xadj[q + 1] - xadj[q];
        sig += (in[2 * q + 1] - e) / (dr > dq ? dr : dq);
      }
      out[2 * r] = load[r];
      out[2 * r + 1] = sig;
    }
    return LB_OK;
  }
  if (step == 1) s->capacity = lb_reduced(run, s->slot, 0) / g->n;
  else {
    for (int r = lo; r < hi; r++) {
      double l = in[2 * r], sig = in[2 * r + 1], sent = 0;
      for (int k = xadj[r]; k < xadj[r + 1]; k++) {
        int q = adj[k];
        double f = s->alpha * ((l - in[2 * q]) + (sig - in[2 * q + 1]));
        flow[k] += f;
        sent += f;
      }
      load[r] = l - sent;
    }
    lb_run_end_iteration(run, 1);
  }
  /* Emit the signal of the current load. */
  for (int r = lo; r < hi; r++) {
    out[2 * r] = load[r];
    out[2 * r + 1] = load[r] - s->capacity;
  }
  return LB_OK;
}

const lb_method lb_method_chemotaxis = {
  "chemotaxis", "chemotaxis-inspired diffusion: load follows a faster diffusing capacity signal (two messages per iteration)",
  LB_CONNECTED, chemotaxis_options, 1, chemotaxis_setup, chemotaxis_step, free
};
