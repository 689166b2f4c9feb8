/* Horton 1993 Algorithm 1 in the odd-even form of its Table 3: in phase k the
 * edges of colour (k-1) mod C are active and each such pair moves
 * floor((l_i - l_j)/2) whole units from the heavier to the lighter rank.
 * It stops after C consecutive phases without a transfer (every pair then
 * differs by at most one); the iteration count is the last phase that moved,
 * which is how Horton 1993 Table 5 counts. */
#include "balance/balance.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  int *colour, ncolours, quiet, slot;
} discrete_state;

static void discrete_destroy(void *p)
{
  discrete_state *s = p;
  if (!s) return;
  free(s->colour);
  free(s);
}

static lb_err discrete_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  discrete_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  s->colour = malloc(((size_t)g->m + 1) * sizeof(int));
  if (!s->colour) return lb_error(LB_ERR_MEM, "out of memory");
  lb_err err = lb_graph_edge_colouring(g, s->colour, &s->ncolours);
  if (err) return err;
  if ((err = lb_run_reduction(run, LB_MAX, 1, &s->slot))) return err;
  return lb_run_channels(run, 0, 1);
}

static lb_err discrete_step(lb_run *run, void *state, int lo, int hi)
{
  discrete_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run), *flow = lb_run_flow(run);
  int step = lb_run_step(run);
  if (step >= 2) {
    s->quiet = lb_reduced(run, s->slot, 0) > 0 ? 0 : s->quiet + 1;
    if (s->quiet >= s->ncolours || g->m == 0) {
      lb_run_stop(run, LB_STOP_CONVERGED);
      return LB_OK;
    }
  }
  if (step >= 1) {
    const double *in = lb_pub_in(run);
    int c = (step - 1) % (s->ncolours ? s->ncolours : 1), moved = 0;
    for (int r = lo; r < hi; r++) {
      double mine = 0;
      for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
        if (s->colour[g->eid[e]] != c) continue;
        double d = in[r] - in[g->adj[e]];
        double a = d > 0 ? floor(d / 2) : -floor(-d / 2);
        load[r] -= a;
        flow[e] += a;
        if (a != 0) mine = 1;
      }
      lb_reduce(run, s->slot, 0, mine);
      moved |= mine != 0;
    }
    lb_run_end_iteration(run, moved);
  }
  double *out = lb_pub_out(run);
  for (int r = lo; r < hi; r++) out[r] = load[r];
  return LB_OK;
}

const lb_method lb_method_diffusion_discrete = {
  .name = "diffusion-discrete",
  .summary = "Horton 1993 Algorithm 1: pairwise floor((li-lj)/2) units over an edge colouring",
  .flags = LB_INTEGRAL | LB_TERMINATES,
  .setup = discrete_setup,
  .step = discrete_step,
  .destroy = discrete_destroy,
};
