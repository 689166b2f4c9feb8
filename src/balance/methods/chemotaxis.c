/* Chemotaxis-inspired diffusion (Canright, Deutsch, Urnes; seed 001 CT).
 * A first global sum gives the capacity c (the average load, the target of
 * every rank).  Each iteration then takes two neighbour exchanges, twice
 * the messages of first-order diffusion:
 *   1. every rank emits its signal e_v = l_v - c;
 *   2. the signal diffuses one step with alpha_sig = 1/max(deg_v, deg_w):
 *      s_v = e_v + sum_w alpha_sig (e_w - e_v), and every rank publishes it;
 * and load moves down both the load and the signal gradient:
 *      y_vw = alpha ((l_v - l_w) + chi (s_v - s_w)).
 * The signal reaches one hop further than the load, so smooth imbalances
 * (a box of overloaded ranks) flow up to 1 + chi times as fast per
 * iteration as under first-order diffusion.  The combined operator is
 * alpha L (I + chi M_sig) with M_sig the signal diffusion matrix, which on a
 * regular bipartite graph (any mesh of sides 1 and 2, a hypercube, an even
 * ring) has the eigenvalue -1: there the alternating load pattern moves at
 * rate 1 - chi only, and not at all at chi = 1, hence chi < 1.  Every
 * iteration's flow is a gradient, so the run ends at the minimum-L2 flow. */
#include "balance.h"

#include <stdlib.h>

static const lb_option chemotaxis_options[] = {
  {"alpha", 0.0, "diffusion parameter alpha (0: 1/(max degree + 1))"},
  {"chi", 0.9, "weight chi in [0, 1) of the signal gradient"},
};

typedef struct {
  double alpha, chi, capacity;
  int slot;
} chemotaxis_state;

static lb_err chemotaxis_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  double alpha = lb_run_params(run)->opt[0], chi = lb_run_params(run)->opt[1];
  if (alpha < 0 || alpha * g->max_degree > 1)
    return lb_error(LB_ERR_ARG, "-lb_alpha %g must lie in [0, 1/max degree] = [0, %g]", alpha, 1.0 / (g->max_degree ? g->max_degree : 1));
  if (!(chi >= 0 && chi < 1)) return lb_error(LB_ERR_ARG, "-lb_chi %g must lie in [0, 1)", chi);
  chemotaxis_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  s->alpha = alpha > 0 ? alpha : 1.0 / (g->max_degree + 1);
  s->chi = chi;
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
        double f = s->alpha * ((l - in[2 * q]) + s->chi * (sig - in[2 * q + 1]));
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
  LB_CONNECTED, chemotaxis_options, 2, chemotaxis_setup, chemotaxis_step, free
};
