/* First-order diffusion (Cybenko; seed 001 OD, seed 004): every iteration
 * rank i sends alpha (l_i - l_j) to each neighbour j.  Each rank publishes
 * its load once per superstep and reads its neighbours' publications: one
 * flat array read per edge, which is what makes 131072 virtual ranks fast. */
#include "balance.h"

#include <stdlib.h>

static const lb_option diffusion_options[] = {
  {"alpha", 0.0, "diffusion parameter alpha (0: 1/(max degree + 1))"},
};

static lb_err diffusion_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  double alpha = lb_run_params(run)->opt[0];
  if (alpha < 0 || alpha * g->max_degree > 1)
    return lb_error(LB_ERR_ARG, "-lb_alpha %g must lie in [0, 1/max degree] = [0, %g]", alpha, 1.0 / (g->max_degree ? g->max_degree : 1));
  double *a = malloc(sizeof *a);
  if (!a) return lb_error(LB_ERR_MEM, "out of memory");
  *a = alpha > 0 ? alpha : 1.0 / (g->max_degree + 1);
  *state = a;
  return lb_run_channels(run, 0, 1);
}

static lb_err diffusion_step(lb_run *run, void *state, int lo, int hi)
{
  const lb_graph *g = lb_run_graph(run);
  const int *restrict xadj = g->xadj, *restrict adj = g->adj;
  const double alpha = *(const double *)state;
  double *restrict load = lb_run_load(run), *restrict flow = lb_run_flow(run);
  double *restrict out = lb_pub_out(run);
  if (lb_run_step(run) > 0) {
    const double *restrict in = lb_pub_in(run);
    for (int r = lo; r < hi; r++) {
      double l = in[r], sent = 0;
      for (int e = xadj[r]; e < xadj[r + 1]; e++) {
        double f = alpha * (l - in[adj[e]]);
        flow[e] += f;
        sent += f;
      }
      load[r] = l - sent;
    }
    lb_run_end_iteration(run, 1);
  }
  for (int r = lo; r < hi; r++) out[r] = load[r];
  return LB_OK;
}

const lb_method lb_method_diffusion = {
  "diffusion", "first-order diffusion (Cybenko), continuous load", LB_CONNECTED,
  diffusion_options, 1, diffusion_setup, diffusion_step, free
};
