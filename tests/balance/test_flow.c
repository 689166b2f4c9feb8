/* Lieber et al. 2016's diffusion family run to convergence on the virtual backend.
 * First-order, second-order and Chebyshev diffusion are polynomial schemes
 * in the Laplacian, so all three must end at the minimum-L2 balancing flow
 * x_u - x_v with L x = l0 - avg, computed here independently by a dense
 * LAPACK solve (to 1e-8 relative).  So must chemotaxis: every iteration's
 * flow is the gradient of a potential, and the only balancing gradient flow
 * is the minimum-L2 one.  Dimension exchange must balance (its flow is not
 * a gradient); every method conserves load to 1e-12 relative.  The Lanczos
 * eigenvalue bounds of an unstructured copy of each graph must match the
 * closed form of the structured graph to 1e-9.  Chemotaxis with per-rank
 * capacities c_r must end every rank at its share L c_r / C (to 1e-9 of
 * the largest share), by the minimum-L2 flow from the initial loads to the
 * shares, conserving load; with equal capacities it must give the same
 * loads as without any. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"

#define TARGET (1 - 1e-13)

/* Minimum-L2 flow: solve (L + 11^T/n) x = l0 - avg, which equals L x = l0 - avg on 1-perp. */
static int min_l2_flow(const lb_graph *g, const double *l0, double *flow)
{
  int n = g->n;
  double *A = calloc((size_t)n * n, sizeof *A), *b = malloc((size_t)n * sizeof *b), avg = 0;
  lapack_int *ipiv = malloc((size_t)n * sizeof *ipiv);
  for (int r = 0; r < n; r++) avg += l0[r] / n;
  for (int r = 0; r < n; r++) {
    b[r] = l0[r] - avg;
    for (int c = 0; c < n; c++) A[(size_t)r * n + c] = 1.0 / n;
    A[(size_t)r * n + r] += g->xadj[r + 1] - g->xadj[r];
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) A[(size_t)r * n + g->adj[e]] -= 1;
  }
  int info = (int)LAPACKE_dgesv(LAPACK_ROW_MAJOR, n, 1, A, n, ipiv, b, 1);
  for (int k = 0; k < g->m && !info; k++) flow[k] = b[g->eu[k]] - b[g->ev[k]];
  free(A); free(b); free(ipiv);
  return info;
}

static void check_graph(const char *spec)
{
  lb_graph *g, *gu;
  if (!CHECK_MSG(!lb_graph_create(spec, &g), "%s: %s", spec, lb_errmsg())) return;
  double *l0 = malloc((size_t)g->n * sizeof *l0), *ref = malloc(((size_t)g->m + 1) * sizeof *ref), total = 0;
  for (int r = 0; r < g->n; r++) total += l0[r] = 10 + (double)((r * 7919 + 13) % 101) + (r == g->n / 2 ? 500 : 0);
  if (!CHECK_MSG(!min_l2_flow(g, l0, ref), "%s: reference solve failed", spec)) return;
  double refnorm = 0;
  for (int k = 0; k < g->m; k++) refnorm += ref[k] * ref[k];
  refnorm = sqrt(refnorm);

  double a0, b0, a1, b1;
  if (!CHECK_MSG(!(lb_graph_create_edges(g->n, g->m, g->eu, g->ev, &gu) || lb_graph_laplacian_bounds(g, &a0, &b0) ||
                   lb_graph_laplacian_bounds(gu, &a1, &b1)),
                 "%s: %s", spec, lb_errmsg()))
    return;
  int eig_ok = fabs(a0 - a1) <= 1e-9 * b0 && fabs(b0 - b1) <= 1e-9 * b0;
  printf("%-16s Laplacian bounds closed form [%.12g, %.12g], Lanczos [%.12g, %.12g]%s\n", spec, a0, b0, a1, b1, eig_ok ? "" : "  MISMATCH");
  CHECK(eig_ok);
  lb_graph_destroy(&gu);

  const char *methods[] = {"diffusion", "second-order", "chebyshev", "chemotaxis", "dimension-exchange"};
  for (int i = 0; i < 5; i++) {
    const lb_method *m = lb_method_find(methods[i]);
    lb_params p;
    lb_result res;
    lb_params_init(&p, m);
    p.target = TARGET;
    p.max_iters = 200000;
    lb_err err = lb_balance(g, m, &p, l0, &res);
    if (err == LB_ERR_UNSUPPORTED) { printf("  %-18s not applicable: %s\n", methods[i], lb_errmsg()); continue; }
    if (!CHECK_MSG(!err, "%-18s %s", methods[i], lb_errmsg())) continue;
    double sum = 0, dist = 0;
    for (int r = 0; r < g->n; r++) sum += res.load[r];
    for (int k = 0; k < g->m; k++) dist += (res.flow[k] - ref[k]) * (res.flow[k] - ref[k]);
    dist = sqrt(dist) / refnorm;
    int gradient = i < 4, ok = res.stop == LB_STOP_TARGET && fabs(sum - total) <= 1e-12 * total && (!gradient || dist <= 1e-8);
    printf("  %-18s its %6d  stop %-9s  |sum - total|/total %.2e  |flow - minL2|/|minL2| %.2e%s\n", methods[i], res.iterations,
           lb_stop_name(res.stop), fabs(sum - total) / total, dist, ok ? "" : "  FAILED");
    CHECK(ok);
    lb_result_free(&res);
  }
  free(l0); free(ref);
  lb_graph_destroy(&g);
}

static void check_capacity(const char *spec)
{
  lb_graph *g;
  if (!CHECK_MSG(!lb_graph_create(spec, &g), "%s: %s", spec, lb_errmsg())) return;
  const lb_method *m = lb_method_find("chemotaxis");
  int n = g->n;
  double *l0 = malloc((size_t)n * sizeof *l0), *cap = malloc((size_t)n * sizeof *cap), *d = malloc((size_t)n * sizeof *d);
  double *ref = malloc(((size_t)g->m + 1) * sizeof *ref), total = 0, capsum = 0, refnorm = 0;
  for (int r = 0; r < n; r++) {
    total += l0[r] = 10 + (double)((r * 7919 + 13) % 101) + (r == n / 2 ? 500 : 0);
    capsum += cap[r] = 1 + (r * 5) % 4;
  }
  /* The flow from l0 to the shares t solves L x = l0 - t. */
  for (int r = 0; r < n; r++) d[r] = l0[r] - total * cap[r] / capsum;
  if (!CHECK_MSG(!min_l2_flow(g, d, ref), "%s: reference solve failed", spec)) return;
  for (int k = 0; k < g->m; k++) refnorm += ref[k] * ref[k];
  refnorm = sqrt(refnorm);
  lb_params p;
  lb_result res, eq, none;
  lb_params_init(&p, m);
  p.target = TARGET;
  p.max_iters = 200000;
  p.capacity = cap;
  if (!CHECK_MSG(!lb_balance(g, m, &p, l0, &res), "%s: %s", spec, lb_errmsg())) return;
  double sum = 0, dev = 0, dist = 0, top = 0;
  for (int r = 0; r < n; r++) {
    double t = total * cap[r] / capsum;
    sum += res.load[r];
    if (fabs(res.load[r] - t) > dev) dev = fabs(res.load[r] - t);
    if (t > top) top = t;
  }
  for (int k = 0; k < g->m; k++) dist += (res.flow[k] - ref[k]) * (res.flow[k] - ref[k]);
  dist = sqrt(dist) / refnorm;
  int ok = res.stop == LB_STOP_TARGET && fabs(sum - total) <= 1e-12 * total && dev <= 1e-9 * top && dist <= 1e-8;
  printf("%-16s chemotaxis, capacities 1..4: its %5d  max |load - share|/max share %.2e  |flow - minL2|/|minL2| %.2e%s\n", spec,
         res.iterations, dev / top, dist, ok ? "" : "  FAILED");
  CHECK(ok);
  for (int r = 0; r < n; r++) cap[r] = 2.5;
  p.max_iters = 300;
  p.target = 0;
  if (!CHECK_MSG(!lb_balance(g, m, &p, l0, &eq), "%s: %s", spec, lb_errmsg())) return;
  p.capacity = NULL;
  if (!CHECK_MSG(!lb_balance(g, m, &p, l0, &none), "%s: %s", spec, lb_errmsg())) return;
  ok = memcmp(eq.load, none.load, (size_t)n * sizeof *eq.load) == 0;
  printf("%-16s chemotaxis, equal capacities: loads %s those without capacities%s\n", spec, ok ? "identical to" : "differ from", ok ? "" : "  FAILED");
  CHECK(ok);
  lb_result_free(&res);
  lb_result_free(&eq);
  lb_result_free(&none);
  free(l0); free(cap); free(d); free(ref);
  lb_graph_destroy(&g);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *specs[] = {"line:16", "ring:9", "ring:10", "mesh2d:5x4", "mesh3d:4x3x3", "torus3d:3x4x5", "hypercube:4"};
  for (int s = 0; s < 7; s++) check_graph(specs[s]);
  for (int s = 0; s < 7; s++) check_capacity(specs[s]);
  printf("%s\n", check_failures ? "FAILED" : "first-order, second-order, Chebyshev and chemotaxis reach the minimum-L2 flow; all balance and conserve; chemotaxis reaches capacity shares");
  MPI_Finalize();
  return check_failures != 0;
}
