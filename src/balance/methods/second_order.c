/* Second-order diffusion (Muthukrishnan, Ghosh, Schultz; seed 001 SO):
 * l_k = beta M l_{k-1} + (1 - beta) l_{k-2}, M = I - alpha L, with a
 * first-order first iteration.  In flows: beta times the first-order flow
 * plus (beta - 1) times the previous iteration's flow.  beta in (0, 2);
 * seed 001 uses 1.8 on every configuration. */
#include "accelerated.h"

static const lb_option second_order_options[] = {
  {"alpha", 0.0, "diffusion parameter alpha (0: 1/(max degree + 1))"},
  {"beta", 1.8, "weight beta in (0, 2) of the first-order flow"},
};

static double second_order_weight(const accel_state *s, int k, double prev)
{
  (void)prev;
  return k == 1 ? 1.0 : s->beta;
}

static lb_err second_order_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  const double *opt = lb_run_params(run)->opt;
  double alpha = opt[0], beta = opt[1];
  if (alpha < 0 || alpha * g->max_degree > 1)
    return lb_error(LB_ERR_ARG, "-lb_alpha %g must lie in [0, 1/max degree] = [0, %g]", alpha, 1.0 / (g->max_degree ? g->max_degree : 1));
  if (!(beta > 0 && beta < 2)) return lb_error(LB_ERR_ARG, "-lb_beta %g must lie in (0, 2)", beta);
  accel_state *s = NULL;
  lb_err err = accel_setup(run, alpha > 0 ? alpha : 1.0 / (g->max_degree + 1), second_order_weight, &s);
  *state = s;
  if (s) s->beta = beta;
  return err;
}

const lb_method lb_method_second_order = {
  "second-order", "second-order diffusion (Muthukrishnan, Ghosh, Schultz), parameters alpha and beta", LB_CONNECTED,
  second_order_options, 2, second_order_setup, accel_step, accel_destroy
};
