/* Chemotaxis-inspired diffusion (Canright, Deutsch, Urnes 2006; Lieber et al. 2016 CT).
 *
 * What the sources give.  Lieber et al. 2016 describes CT only by its cost and its
 * signal: OD extended by a signal, "the difference of l_v and the capacity
 * (target node load)", which guides the load; an initial collective for the
 * capacity; twice the messages of OD per iteration; alpha = 1/6 on 3D
 * meshes and alpha_sig = 1/max(deg_v, deg_w) for the signal.  Of Canright
 * et al. only the abstract was found (a signal emitted by the load, moving
 * faster than the load, guides the load towards balance by negative
 * chemotaxis, compared with unguided diffusion at the same speed); their
 * update equations were not available, so the rule below is this code's
 * reading of Lieber et al. 2016, not a transcription of the paper.
 *
 * The rule.  Rank v has a capacity c_v (all equal unless the caller gives
 * lb_params.capacity) and a target load t_v = L c_v / C, L the total load,
 * C the total capacity: the one global sum (of loads and capacities) in the
 * first superstep.  With the excess e_v = l_v - t_v, one iteration is two
 * neighbour exchanges of one double each:
 *   1. every rank sends e_v; the signal diffuses one step ahead of the load,
 *      s_v = e_v + sum_w alpha_sig (e_w - e_v);
 *   2. every rank sends s_v, and load moves down both gradients,
 *      y_vw = alpha ((e_v - e_w) + chi (s_v - s_w)).
 * The signal reaches one hop further than the load, so smooth imbalances
 * flow up to 1 + chi times as fast per iteration as under OD.  In operator
 * form e <- (I - alpha L (I + chi M_sig)) e, M_sig = I - L_sig symmetric
 * with spectrum in [-1, 1], so for chi < 1 the only fixed point with
 * sum e = 0 is e = 0: every rank ends at its capacity share t_v.  On a
 * regular bipartite graph (a mesh of sides 1 and 2, a hypercube, an even
 * ring) M_sig has the eigenvalue -1, where the alternating pattern moves at
 * rate 1 - chi only and not at all at chi = 1, hence chi < 1.  Every
 * iteration's flow is a gradient, so the run ends at the minimum-L2 flow
 * from the initial loads to the targets.
 *
 * Where the capacity matters.  With equal capacities t_v is the average,
 * it cancels from every difference above, and CT is a two-step diffusion
 * (load plus one step of signal): the global sum Lieber et al. 2016 pays for then
 * changes nothing.  Only with per-rank capacities does it decide where the
 * load goes: to shares proportional to the capacities. */
#include "balance/impl/diffusion.h"

#include <stdlib.h>

static const lb_option chemotaxis_options[] = {
  {"alpha", 0.0, "diffusion parameter alpha (0: as diffusion, 1/(2k) on k-dimensional meshes and tori)"},
  {"chi", 0.9, "weight chi in [0, 1) of the signal gradient"},
};

typedef struct {
  double alpha, chi;
  int slot;
  double *target; /* per rank: capacity share of the total load */
  double *ein;    /* per directed edge e: excess of adj[e] received in the signal step */
} chemotaxis_state;

static void chemotaxis_destroy(void *p)
{
  chemotaxis_state *s = p;
  if (!s) return;
  free(s->target);
  free(s->ein);
  free(s);
}

static lb_err chemotaxis_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  const double *opt = lb_run_params(run)->opt;
  chemotaxis_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  lb_err err = lb_diffusion_alpha(g, opt[0], &s->alpha);
  if (err) return err;
  s->chi = opt[1];
  if (!(s->chi >= 0 && s->chi < 1)) return lb_error(LB_ERR_ARG, "-lb_chi %g must lie in [0, 1)", s->chi);
  s->target = malloc(((size_t)g->n + 1) * sizeof *s->target);
  s->ein = malloc((2 * (size_t)g->m + 1) * sizeof *s->ein);
  if (!s->target || !s->ein) return lb_error(LB_ERR_MEM, "out of memory for %d ranks", g->n);
  err = lb_run_reduction(run, LB_SUM, 2, &s->slot);
  return err ? err : lb_run_channels(run, 0, 1);
}

static lb_err chemotaxis_step(lb_run *run, void *state, int lo, int hi)
{
  chemotaxis_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  const int *xadj = g->xadj, *adj = g->adj;
  const double *cap = lb_run_params(run)->capacity;
  double *load = lb_run_load(run), *flow = lb_run_flow(run), *out = lb_pub_out(run);
  int step = lb_run_step(run);
  if (step == 0) {
    /* The initial collective: total load and total capacity. */
    for (int r = lo; r < hi; r++) {
      lb_reduce(run, s->slot, 0, load[r]);
      lb_reduce(run, s->slot, 1, cap ? cap[r] : 1.0);
      out[r] = 0;
    }
    return LB_OK;
  }
  const double *in = lb_pub_in(run);
  if (step % 2 == 0) {
    /* The signal diffuses one step; the neighbours' excess is kept for the load step. */
    for (int r = lo; r < hi; r++) {
      int dr = xadj[r + 1] - xadj[r];
      double e = in[r], sig = e;
      for (int k = xadj[r]; k < xadj[r + 1]; k++) {
        int q = adj[k], dq = xadj[q + 1] - xadj[q];
        s->ein[k] = in[q];
        sig += (in[q] - e) / (dr > dq ? dr : dq);
      }
      out[r] = sig;
    }
    return LB_OK;
  }
  if (step == 1) {
    double total = lb_reduced(run, s->slot, 0), capsum = lb_reduced(run, s->slot, 1);
    for (int r = lo; r < hi; r++) s->target[r] = total * (cap ? cap[r] : 1.0) / capsum;
  } else {
    for (int r = lo; r < hi; r++) {
      double e = load[r] - s->target[r], sig = in[r], sent = 0;
      for (int k = xadj[r]; k < xadj[r + 1]; k++) {
        double f = s->alpha * ((e - s->ein[k]) + s->chi * (sig - in[adj[k]]));
        flow[k] += f;
        sent += f;
      }
      load[r] -= sent;
    }
    lb_run_end_iteration(run, 1);
  }
  /* Emit the excess of the current load. */
  for (int r = lo; r < hi; r++) out[r] = load[r] - s->target[r];
  return LB_OK;
}

const lb_method lb_method_chemotaxis = {
  .name = "chemotaxis",
  .summary = "chemotaxis-inspired diffusion: load follows a faster diffusing signal to capacity shares (two messages per iteration)",
  .flags = LB_CONNECTED | LB_LOCAL | LB_CAPACITY,
  .options = chemotaxis_options,
  .noptions = 2,
  .setup = chemotaxis_setup,
  .step = chemotaxis_step,
  .destroy = chemotaxis_destroy,
};
