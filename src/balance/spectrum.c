/* Extreme non-zero eigenvalues of the graph Laplacian, which the Chebyshev
 * method (Lieber et al. 2016 ID) needs once per graph.  Structured graphs are
 * Cartesian products of paths and cycles, whose Laplacian spectra are sums
 * of the factors' spectra, so the bounds are exact and cost nothing even at
 * 128Ki ranks.  Any other graph gets Lanczos with full reorthogonalisation
 * in the complement of the constant vector (the null space of a connected
 * graph's Laplacian).  On large irregular graphs (subdomain graphs from
 * 8192 parts on) the largest eigenvalue stands apart and converges in a
 * few dozen steps, but the smallest non-zero ones cluster near 0 and
 * lambda_2 does not converge within the step limit; Chebyshev acceleration
 * can live with that (lb_graph_laplacian_interval), so only a diverging
 * lambda_max is an error there.  The basis V holds (steps + 1) x n doubles:
 * 316 MB at 131072 ranks. */
#include "balance/balance.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LANCZOS_MAX_STEPS 300
#define LANCZOS_TOL 1e-10

static const double pi = 3.14159265358979323846;

/* Non-zero extremes of a path (or cycle) of k vertices; *l2 = HUGE_VAL if none. */
static void factor_bounds(int k, int cycle, double *l2, double *lmax)
{
  if (k <= 1) {
    *l2 = HUGE_VAL;
    *lmax = 0;
  } else if (cycle && k >= 3) {
    *l2 = 2 - 2 * cos(2 * pi / k);
    *lmax = 2 - 2 * cos(2 * pi * (k / 2) / k);
  } else {
    *l2 = 2 - 2 * cos(pi / k);
    *lmax = 2 + 2 * cos(pi / k);
  }
}

static void mat_vec(const lb_graph *g, const double *x, double *y)
{
  for (int r = 0; r < g->n; r++) {
    double s = (g->xadj[r + 1] - g->xadj[r]) * x[r];
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) s -= x[g->adj[e]];
    y[r] = s;
  }
}

static double dot(int n, const double *x, const double *y)
{
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

static void remove_mean(int n, double *x)
{
  double m = 0;
  for (int i = 0; i < n; i++) m += x[i];
  m /= n;
  for (int i = 0; i < n; i++) x[i] -= m;
}

/* One extreme eigenpair (index i, 1-based) of the k x k tridiagonal
 * matrix (a, b): its value and the last entry of its unit eigenvector.
 * dstevr computes just that pair, in O(k) once the values are known:
 * dstev's whole eigenvector matrix costs O(k^3) at every Lanczos step,
 * some 10^9 flops by step 300, where this is O(k^2). */
static lapack_int extreme_pair(int k, const double *a, const double *b, int i, double *d, double *e, double *z, double *th, double *last)
{
  lapack_int m = 0, supp[2];
  memcpy(d, a, (size_t)k * sizeof *d);
  memcpy(e, b, (size_t)k * sizeof *e);
  lapack_int info = LAPACKE_dstevr(LAPACK_COL_MAJOR, 'V', 'I', k, d, e, 0.0, 0.0, i, i, 0.0, &m, th, z, k, supp);
  if (info == 0 && m != 1) info = -100;
  *last = z[k - 1];
  return info;
}

/* Ritz values of the k x k tridiagonal matrix and their residual bounds
 * |beta_k z_k| for the smallest and largest. */
static lb_err ritz(int k, const double *a, const double *b, double beta, double *th, double *res)
{
  double *d = malloc((size_t)k * sizeof *d), *e = malloc((size_t)k * sizeof *e), *z = malloc((size_t)k * sizeof *z), last[2] = {0, 0};
  if (!d || !e || !z) { free(d); free(e); free(z); return lb_error(LB_ERR_MEM, "out of memory in Lanczos"); }
  lapack_int info = extreme_pair(k, a, b, 1, d, e, z, &th[0], &last[0]);
  if (info == 0) info = extreme_pair(k, a, b, k, d, e, z, &th[1], &last[1]);
  if (info == 0) {
    res[0] = fabs(beta * last[0]);
    res[1] = fabs(beta * last[1]);
  }
  free(d); free(e); free(z);
  return info ? lb_error(LB_ERR_UNSUPPORTED, "Lanczos: LAPACKE_dstevr failed (info %d)", (int)info) : LB_OK;
}

/* Lanczos's step limit on graph g: n - 1 steps span the whole complement. */
static int lanczos_steps(const lb_graph *g) { return g->n - 1 < LANCZOS_MAX_STEPS ? g->n - 1 : LANCZOS_MAX_STEPS; }

static lb_err not_converged(const lb_graph *g)
{
  return lb_error(LB_ERR_UNSUPPORTED, "Laplacian eigenvalues of graph '%s' did not converge in %d Lanczos steps", g->spec, lanczos_steps(g));
}

/* *exact: the smallest Ritz value converged too; otherwise *lmin is that
 * Ritz value, which lies in [lambda_2, lambda_max] by interlacing. */
static lb_err lanczos(const lb_graph *g, double *lmin, double *lmax, int *exact)
{
  int n = g->n, kmax = lanczos_steps(g);
  double *V = malloc(((size_t)kmax + 1) * n * sizeof *V), *w = malloc((size_t)n * sizeof *w);
  double *a = malloc((size_t)kmax * sizeof *a), *b = malloc((size_t)kmax * sizeof *b);
  lb_err err = LB_OK;
  if (!V || !w || !a || !b) { err = lb_error(LB_ERR_MEM, "out of memory for Lanczos on %d ranks", n); goto out; }
  /* A fixed start vector with no symmetry, so every process gets the same bounds. */
  for (int i = 0; i < n; i++) V[i] = sin(1.0 + 0.7548776662 * i) + 0.5 * cos(0.5698402910 * i * i);
  remove_mean(n, V);
  double nrm = sqrt(dot(n, V, V));
  for (int i = 0; i < n; i++) V[i] /= nrm;
  double th[2] = {0, 0}, res[2] = {HUGE_VAL, HUGE_VAL};
  int done = 0;
  for (int j = 0; j < kmax && !done; j++) {
    double *v = V + (size_t)j * n;
    mat_vec(g, v, w);
    a[j] = dot(n, v, w);
    /* Twice, which keeps the basis orthogonal to working precision. */
    for (int pass = 0; pass < 2; pass++) {
      for (int i = 0; i <= j; i++) {
        double c = dot(n, V + (size_t)i * n, w);
        for (int t = 0; t < n; t++) w[t] -= c * V[(size_t)i * n + t];
      }
      remove_mean(n, w);
    }
    b[j] = sqrt(dot(n, w, w));
    if ((err = ritz(j + 1, a, b, b[j], th, res))) goto out;
    double scale = fabs(th[1]) > 0 ? fabs(th[1]) : 1;
    done = j + 1 == kmax || b[j] <= LANCZOS_TOL * scale ||
           (res[0] <= LANCZOS_TOL * scale && res[1] <= LANCZOS_TOL * scale);
    if (!done)
      for (int t = 0; t < n; t++) V[(size_t)(j + 1) * n + t] = w[t] / b[j];
  }
  if (kmax == n - 1 || (res[0] <= LANCZOS_TOL * fabs(th[1]) && res[1] <= LANCZOS_TOL * fabs(th[1]))) {
    *lmin = th[0];
    *lmax = th[1];
  } else if (res[1] <= LANCZOS_TOL * fabs(th[1])) {
    /* Some eigenvalue lies within res[1] of the largest Ritz value, and the
     * Ritz value is below lambda_max; adding the residual keeps the upper
     * end on the safe side, where an eigenvalue above it would diverge. */
    *exact = 0;
    *lmin = th[0];
    *lmax = th[1] + res[1];
  } else {
    err = not_converged(g);
  }
out:
  free(V); free(w); free(a); free(b);
  return err;
}

static lb_err laplacian_interval(const lb_graph *g, double *lmin, double *lmax, int *lmin_exact)
{
  int k[26], cyc = 0, nf = 0;
  switch (g->kind) {
  case LB_GRAPH_LINE: case LB_GRAPH_RING: k[nf++] = g->dims[0]; cyc = g->kind == LB_GRAPH_RING; break;
  case LB_GRAPH_MESH2D: k[nf++] = g->dims[0]; k[nf++] = g->dims[1]; break;
  case LB_GRAPH_MESH3D: case LB_GRAPH_TORUS3D:
    for (int i = 0; i < 3; i++) k[nf++] = g->dims[i];
    cyc = g->kind == LB_GRAPH_TORUS3D;
    break;
  case LB_GRAPH_HYPERCUBE: for (int i = 0; i < g->dims[0]; i++) k[nf++] = 2; break;
  case LB_GRAPH_TREE: case LB_GRAPH_EDGES:
    if (g->n == 1) { *lmin = *lmax = 0; return LB_OK; }
    if (!lb_graph_connected(g)) return lb_error(LB_ERR_GRAPH, "graph '%s' is not connected: its Laplacian has no single zero eigenvalue", g->spec);
    return lanczos(g, lmin, lmax, lmin_exact);
  }
  double l2 = HUGE_VAL, lm = 0;
  for (int i = 0; i < nf; i++) {
    double a, b;
    factor_bounds(k[i], cyc, &a, &b);
    if (a < l2) l2 = a;
    lm += b;
  }
  *lmin = l2 == HUGE_VAL ? 0 : l2;
  *lmax = lm;
  return LB_OK;
}

lb_err lb_graph_laplacian_interval(const lb_graph *g, double *lmin, double *lmax, int *lmin_exact)
{
  int exact = 1;
  lb_err err = laplacian_interval(g, lmin, lmax, &exact);
  if (lmin_exact) *lmin_exact = exact;
  return err;
}

lb_err lb_graph_laplacian_bounds(const lb_graph *g, double *lmin, double *lmax)
{
  int exact;
  lb_err err = lb_graph_laplacian_interval(g, lmin, lmax, &exact);
  if (!err && !exact) err = not_converged(g);
  return err;
}
