/* Improved diffusion (Hu and Blake; Lieber et al. 2016 ID): the Chebyshev
 * semi-iteration on M = I - a L with a = 2 / (lambda_min + lambda_max), the
 * extreme non-zero Laplacian eigenvalues, which puts the spectrum of M off
 * the constant vector in [-sigma, sigma], sigma = (lmax - lmin)/(lmax + lmin).
 * Weights w_1 = 1, w_2 = 2/(2 - sigma^2), w_k = 1/(1 - sigma^2 w_{k-1}/4).
 * The eigenvalues are computed once in setup, whose time the result
 * reports apart from the run time, as Lieber et al. 2016 does.  Where
 * Lanczos cannot converge lambda_min (large subdomain graphs) the smallest
 * Ritz value stands in for it (lambda_2 estimated): being above lambda_2
 * it only slows the components below it, whose polynomial stays in (0, 1),
 * while an underestimated lambda_max would make the iteration diverge. */
#include "balance/impl/accelerated.h"

static double chebyshev_weight(const accel_state *s, int k, double prev)
{
  if (k == 1) return 1.0;
  if (k == 2) return 2.0 / (2.0 - s->sigma2);
  return 1.0 / (1.0 - 0.25 * s->sigma2 * prev);
}

static lb_err chebyshev_setup(lb_run *run, void **state)
{
  double lmin, lmax;
  int exact;
  lb_err err = lb_graph_laplacian_interval(lb_run_graph(run), &lmin, &lmax, &exact);
  if (err) return err;
  lb_run_set_spectrum(run, lmin, lmax, exact);
  double a = lmax > 0 ? 2.0 / (lmin + lmax) : 0, sigma = lmax > 0 ? (lmax - lmin) / (lmax + lmin) : 0;
  accel_state *s = NULL;
  err = lb_accel_setup(run, a, chebyshev_weight, &s);
  *state = s;
  if (s) s->sigma2 = sigma * sigma;
  return err;
}

const lb_method lb_method_chebyshev = {
  .name = "chebyshev",
  .summary = "improved diffusion (Hu and Blake): Chebyshev weights from the Laplacian's extreme eigenvalues",
  .flags = LB_CONNECTED | LB_LOCAL,
  .setup = chebyshev_setup,
  .step = lb_accel_step,
  .destroy = lb_accel_destroy,
};
