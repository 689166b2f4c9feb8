/* First-order diffusion (Cybenko; Lieber et al. 2016 OD, Melhem et al. 1991): every iteration
 * rank i sends alpha (l_i - l_j) to each neighbour j.  Each rank publishes
 * its load once per superstep and reads its neighbours' publications: one
 * flat array read per edge, which is what makes 131072 virtual ranks fast.
 *
 * The default alpha is Lieber et al. 2016's: 1/(2k) on a k-dimensional mesh or torus
 * (k counts the sides longer than 1; 1/6 on Lieber et al. 2016's 3D meshes, the
 * optimum of Xu, Monien, Lueling and Lau for meshes), 1/(max degree + 1) on
 * every other graph.  One exception: on a ring or torus whose sides longer
 * than 2 are all even, L has the eigenvalue 4k, so 1/(2k) gives I - alpha L
 * the eigenvalue -1: the alternating load pattern would never decay under
 * first-order diffusion and grow under second-order diffusion.  There the
 * default is the optimum 2/(lambda_min + lambda_max) of the Laplacian's
 * extreme non-zero eigenvalues (Xu and Lau's 1/(2k + 1 - cos(2 pi/K)) for
 * sides K), which is below 1/(2k). */
#include "balance/impl/diffusion.h"

#include <float.h>
#include <stdlib.h>

static const lb_option diffusion_options[] = {
  {"alpha", 0.0, "diffusion parameter alpha (0: 1/(2k) on a k-dimensional mesh or torus, 1/(max degree + 1) otherwise)"},
};

lb_err lb_diffusion_alpha(const lb_graph *g, double opt, double *alpha)
{
  /* alpha <= 1/max degree keeps every eigenvalue of I - alpha L in [-1, 1]
   * (Gershgorin: lambda_max <= 2 max degree).  The bound is compared with a
   * few units in the last place to spare, so that 1/deg typed in decimal
   * (0.16666666666666666 or ...67 for 1/6) is accepted: being one rounding
   * above 1/deg moves that eigenvalue by about 1e-16, far below anything a
   * run of any length could see. */
  double deg = g->max_degree ? g->max_degree : 1;
  if (!(opt >= 0 && opt * deg <= 1 + 4 * DBL_EPSILON))
    return lb_error(LB_ERR_ARG, "-lb_alpha %.17g must lie in [0, 1/max degree] = [0, %.17g]", opt, 1.0 / deg);
  if (opt > 0) {
    *alpha = opt;
    return LB_OK;
  }
  /* k: sides longer than 1.  The eigenvalue 4k needs every such side to
   * be a cycle of even length (4 or more). */
  int nd = lb_graph_grid_dims(g), k = 0, even_cycles = g->kind == LB_GRAPH_RING || g->kind == LB_GRAPH_TORUS3D;
  for (int i = 0; i < nd; i++)
    if (g->dims[i] > 1) {
      k++;
      if (g->dims[i] == 2 || g->dims[i] % 2) even_cycles = 0;
    }
  if (k == 0) {
    *alpha = 1.0 / (g->max_degree + 1);
    return LB_OK;
  }
  *alpha = 1.0 / (2 * k);
  if (even_cycles) {
    double lmin, lmax;
    lb_err err = lb_graph_laplacian_bounds(g, &lmin, &lmax);
    if (err) return err;
    *alpha = 2.0 / (lmin + lmax);
  }
  return LB_OK;
}

static lb_err diffusion_setup(lb_run *run, void **state)
{
  double *a = malloc(sizeof *a);
  if (!a) return lb_error(LB_ERR_MEM, "out of memory");
  *state = a;
  lb_err err = lb_diffusion_alpha(lb_run_graph(run), lb_run_params(run)->opt[0], a);
  return err ? err : lb_run_channels(run, 0, 1);
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
  .name = "diffusion",
  .summary = "first-order diffusion (Cybenko), continuous load",
  .flags = LB_CONNECTED | LB_LOCAL,
  .options = diffusion_options,
  .noptions = 1,
  .setup = diffusion_setup,
  .step = diffusion_step,
  .destroy = free,
};
