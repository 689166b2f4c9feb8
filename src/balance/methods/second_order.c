/* Second-order diffusion (Muthukrishnan, Ghosh, Schultz; Lieber et al. 2016 SO):
 * l_k = beta M l_{k-1} + (1 - beta) l_{k-2}, M = I - alpha L, with a
 * first-order first iteration.  In flows: beta times the first-order flow
 * plus (beta - 1) times the previous iteration's flow.  beta in (0, 2);
 * Lieber et al. 2016 uses 1.8 on every configuration. */
#include "balance/impl/accelerated.h"
#include "balance/impl/diffusion.h"

static const lb_option second_order_options[] = {
  {"alpha", 0.0, "diffusion parameter alpha (0: as diffusion, 1/(2k) on k-dimensional meshes and tori)"},
  {"beta", 1.8, "weight beta in (0, 2) of the first-order flow"},
};

static double second_order_weight(const accel_state *s, int k, double prev)
{
  (void)prev;
  return k == 1 ? 1.0 : s->beta;
}

static lb_err second_order_setup(lb_run *run, void **state)
{
  const double *opt = lb_run_params(run)->opt;
  double alpha, beta = opt[1];
  lb_err err = lb_diffusion_alpha(lb_run_graph(run), opt[0], &alpha);
  if (err) return err;
  if (!(beta > 0 && beta < 2)) return lb_error(LB_ERR_ARG, "-lb_beta %g must lie in (0, 2)", beta);
  accel_state *s = NULL;
  err = lb_accel_setup(run, alpha, second_order_weight, &s);
  *state = s;
  if (s) s->beta = beta;
  return err;
}

const lb_method lb_method_second_order = {
  .name = "second-order",
  .summary = "second-order diffusion (Muthukrishnan, Ghosh, Schultz), parameters alpha and beta",
  .flags = LB_CONNECTED | LB_LOCAL,
  .options = second_order_options,
  .noptions = 2,
  .setup = second_order_setup,
  .step = lb_accel_step,
  .destroy = lb_accel_destroy,
};
