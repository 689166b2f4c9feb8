/* Chebyshev diffusion where Lanczos cannot converge lambda_2: a broom, a
 * path of n vertices with s leaves on its first vertex, given as edges.
 * The leaves put lambda_max (about s + 2) far above the rest, so it
 * converges in a few steps, while lambda_2 (about (pi/n)^2) sits in a
 * cluster that 300 Lanczos steps cannot resolve, as on the subdomain
 * graphs of 8192 and more parts.  The strict bounds must refuse the graph;
 * the interval must have lmax >= lambda_max (within 1e-12 below and 1e-9
 * above, relative) and lmin >=
 * lambda_2, which are computed here independently: the leaves take equal
 * values in every eigenvector of eigenvalue other than 1, so those
 * eigenvalues are the ones of an (n + 1) x (n + 1) tridiagonal matrix
 * (one row for the leaves), which for s = 1 is the path of n + 1 vertices,
 * checked against 2 - 2 cos(pi / (n + 1)).  Chebyshev with the interval
 * must reach avg/max 0.999 and conserve the load to 1e-12 relative. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "balance/balance.h"
#include "check.h"

static const double pi = 3.14159265358979323846;

/* Smallest non-zero and largest Laplacian eigenvalues of the broom, from
 * the leaves' quotient symmetrised (off-diagonal -sqrt(s)). */
static int broom_extremes(int n, int s, double *l2, double *lmax)
{
  int k = n + 1;
  double *d = malloc((size_t)k * sizeof *d), *e = malloc((size_t)k * sizeof *e);
  d[0] = 1;
  d[1] = s + 1;
  for (int i = 2; i < k; i++) d[i] = 2;
  d[k - 1] = 1;
  e[0] = -sqrt(s);
  for (int i = 1; i < k - 1; i++) e[i] = -1;
  int info = (int)LAPACKE_dstev(LAPACK_COL_MAJOR, 'N', k, d, e, NULL, 1);
  *l2 = d[1];
  *lmax = d[k - 1];
  free(d); free(e);
  return info;
}

static lb_graph *broom(int n, int s)
{
  int m = n - 1 + s, *eu = malloc((size_t)m * sizeof *eu), *ev = malloc((size_t)m * sizeof *ev);
  for (int i = 0; i + 1 < n; i++) { eu[i] = i; ev[i] = i + 1; }
  for (int j = 0; j < s; j++) { eu[n - 1 + j] = 0; ev[n - 1 + j] = n + j; }
  lb_graph *g = NULL;
  CHECK_MSG(!lb_graph_create_edges(n + s, m, eu, ev, &g), "broom %d+%d: %s", n, s, lb_errmsg());
  free(eu); free(ev);
  return g;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const int n = 2000, s = 20;
  double l2, lm, p2, pm;
  CHECK(!broom_extremes(n, 1, &p2, &pm));
  printf("path of %d vertices: lambda_2 %.12g (2 - 2 cos(pi/%d) = %.12g)\n", n + 1, p2, n + 1, 2 - 2 * cos(pi / (n + 1)));
  CHECK(fabs(p2 - (2 - 2 * cos(pi / (n + 1)))) <= 1e-12);
  CHECK(!broom_extremes(n, s, &l2, &lm));

  lb_graph *g = broom(n, s);
  if (!g) return 1;
  double a, b;
  int exact = 1;
  lb_err strict = lb_graph_laplacian_bounds(g, &a, &b);
  printf("strict bounds: %s\n", strict ? lb_errmsg() : "converged");
  CHECK_MSG(strict == LB_ERR_UNSUPPORTED, "Lanczos converged lambda_2 of the broom: the test no longer tests the estimate");
  CHECK_MSG(!lb_graph_laplacian_interval(g, &a, &b, &exact), "%s", lb_errmsg());
  printf("broom %d+%d: exact lambda_2 %.6g lambda_max %.15g; interval [%.6g, %.15g], lambda_2 %s\n", n, s, l2, lm, a, b,
         exact ? "converged" : "estimated");
  CHECK(!exact);
  CHECK(a >= l2);
  /* Ritz values and the reference both carry rounding of a few ulp of
   * lambda_max, harmless: an eigenvalue 1e-12 above b grows by at most
   * exp(2e-6 k) in k iterations, against the exp(2k sqrt(a/b)) the rest
   * of the spectrum shrinks by. */
  CHECK(b >= lm * (1 - 1e-12) && b - lm <= 1e-9 * lm);

  double *l0 = malloc((size_t)g->n * sizeof *l0), total = 0;
  for (int r = 0; r < g->n; r++) total += l0[r] = 10 + (double)((r * 7919 + 13) % 101) + (r == g->n / 2 ? 500 : 0);
  const lb_method *m = lb_method_find("chebyshev");
  lb_params p;
  lb_result res;
  lb_params_init(&p, m);
  p.target = 0.999;
  p.max_iters = 200000;
  if (CHECK_MSG(!lb_balance(g, m, &p, l0, &res), "chebyshev: %s", lb_errmsg())) {
    double sum = 0;
    for (int r = 0; r < g->n; r++) sum += res.load[r];
    printf("chebyshev: its %d  stop %s  |sum - total|/total %.2e\n", res.iterations, lb_stop_name(res.stop), fabs(sum - total) / total);
    CHECK(res.stop == LB_STOP_TARGET);
    CHECK(fabs(sum - total) <= 1e-12 * total);
    /* the result names the interval it ran with, and that it is an estimate */
    CHECK(res.spectrum_exact == 0 && res.spectrum[0] == a && res.spectrum[1] == b);
    lb_result_free(&res);
  }
  free(l0);
  lb_graph_destroy(&g);
  printf("%s\n", check_failures ? "FAILED" : "chebyshev balances with lambda_2 estimated; the interval holds the spectrum's ends");
  MPI_Finalize();
  return check_failures != 0;
}
