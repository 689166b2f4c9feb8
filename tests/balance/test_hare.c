/* Melhem et al. 1991's Ripple schedules, checked against their definitions and
 * Table 1 (the growth laws over larger sizes: lbbench -scale tests).
 *
 * 1. One fork f at a source on a balanced load (at step 1, or injected
 *    later) on a line, a 2D mesh and a hypercube: after t steps of the fork
 *    every rank holds at most f/t of it (f/n once t > n), and nothing beyond
 *    t hops; every link carries at most f/t per step, only away from the
 *    source along its Ripple tree; the last load moves in step t = the
 *    source's eccentricity and the run ends level to 1e-12.  Two forks at
 *    different ranks and steps superpose: the bounds add up.
 * 2. Costs with f = n on lines of n = 16 .. 1024: Hare's migration cost is
 *    n (H_n - 1) and its imbalance cost n (H_n - 1) - (n - 1) exactly
 *    (Melhem et al. 1991: n H_n and Theta(n log n)); imbalance / (n ln n) stays
 *    between 1/2 and 1 and imbalance / n grows like n^0.3 at most over this
 *    range, while Tortoise's grows like n.  On d x d meshes both costs are
 *    Theta(n log d); on hypercubes both stay below n (Table 1: 2^d).
 * 3. Tortoise, one fork f at a source on a balanced load (line, mesh2d,
 *    hypercube; corners, interior ranks, non-square meshes): load moves only
 *    away from the source along its Ripple tree; the largest transfer of a
 *    step on any link is the source's line share omega f/n (f/n on a line,
 *    f/A along the row of an A x B mesh, f/2^t in step t on a hypercube),
 *    reached; the last load is sent in step 2m - 1 on a line (m: ranks on
 *    the longer side), max(2 mx + my - 1, 2 my - 1) on a mesh (mx, my: the
 *    longer row and column sides) and D on hypercube:D; the run ends level.
 * Loads are read with load in transit at its receiver (lb_run_gather_loads),
 * as the paper's L_{j,t}; what a link carries in a step is rebuilt from the
 * flows (virtual backend: every edge is visible). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"

#define MAXF 2

typedef struct {
  const lb_graph *g;
  int nf;
  lb_inject fork[MAXF];
  int *parent[MAXF];     /* Ripple tree of each fork's source */
  int *depth[MAXF];
  double base;
  double *held, *prevflow, *prevsent, *sent;
  double worst_load, worst_flow; /* largest share of the bound used */
  int last_send;         /* last superstep in which a link carried load */
} watch;

/* Parent and depth of every rank in the Ripple tree S_src. */
static int ripple_tree(const lb_graph *g, int src, int *parent, int *depth)
{
  int *queue = malloc((size_t)g->n * sizeof *queue), head = 0, tail = 0, kid[64], size[64];
  for (int r = 0; r < g->n; r++) depth[r] = -1;
  parent[src] = -1;
  depth[src] = 0;
  queue[tail++] = src;
  while (head < tail) {
    int r = queue[head++];
    int nk = lb_source_tree_children(g, r, parent[r], kid, size);
    for (int i = 0; i < nk; i++) {
      parent[kid[i]] = r;
      depth[kid[i]] = depth[r] + 1;
      queue[tail++] = kid[i];
    }
  }
  free(queue);
  int ecc = 0;
  for (int r = 0; r < g->n; r++) {
    if (depth[r] < 0) return -1;
    if (depth[r] > ecc) ecc = depth[r];
  }
  return ecc;
}

/* What every directed link sent in this step: flow[e] grows by what e's
 * owner sends and falls by what it reads, i.e. what rev[e] sent last step. */
static void link_sends(const lb_graph *g, const double *flow, double *prevflow, double *prevsent, double *sent)
{
  for (int e = 0; e < 2 * g->m; e++) sent[e] = flow[e] - prevflow[e] + prevsent[g->rev[e]];
  for (int e = 0; e < 2 * g->m; e++) { prevflow[e] = flow[e]; prevsent[e] = sent[e]; }
}

static lb_err observe(lb_run *run, void *ctx)
{
  watch *w = ctx;
  const lb_graph *g = w->g;
  int s = lb_run_step(run);
  lb_err err = lb_run_gather_loads(run, w->held);
  if (err) return err;
  link_sends(g, lb_run_flow(run), w->prevflow, w->prevsent, w->sent);
  double bl = 0, bf = 0;
  int active = 0, last = -1;
  for (int k = 0; k < w->nf; k++) {
    int tau = s - w->fork[k].step + 1;
    if (tau < 1) continue;
    active++;
    last = k;
    /* The fork's own fair share stays once it is spread. */
    double share = tau < g->n ? 1.0 / tau : 1.0 / g->n;
    if (w->fork[k].amount > 0) bl += w->fork[k].amount * share;
    bf += fabs(w->fork[k].amount) * share;
  }
  double tol = 1e-12 * (w->base + bl + 1);
  for (int r = 0; r < g->n; r++) {
    double extra = w->held[r] - w->base;
    if (bl > 0 && extra / bl > w->worst_load) w->worst_load = extra / bl;
    CHECK_MSG(!(extra > bl + tol), "step %d: rank %d holds %.17g above its share, more than %.17g", s, r, extra, bl);
    if (active == 1 && w->nf == 1) {
      int tau = s - w->fork[last].step + 1, d = w->depth[last][r];
      CHECK_MSG(!((d > tau && extra != 0) || extra < -tol), "step %d: rank %d at distance %d holds %.17g above its share", s, r, d, extra);
    }
  }
  for (int e = 0; e < 2 * g->m; e++) {
    int from = g->owner[e], to = g->adj[e];
    double x = w->sent[e];
    /* Sends are rebuilt from flow differences, exact up to rounding. */
    if (fabs(x) > tol) w->last_send = s;
    if (bf > 0 && fabs(x) / bf > w->worst_flow) w->worst_flow = fabs(x) / bf;
    CHECK_MSG(!(fabs(x) > bf + tol), "step %d: link %d->%d carries %.17g, more than %.17g", s, from, to, x, bf);
    CHECK_MSG(!(active == 1 && w->nf == 1 && fabs(x) > tol && (x < 0 || w->parent[last][to] != from)),
              "step %d: link %d->%d carries %.17g against the tree of rank %d", s, from, to, x, last >= 0 ? w->fork[last].rank : -1);
  }
  return LB_OK;
}

/* Runs ripple-hare on spec with forks given as injections on a balanced
 * load. */
static void check_forks(const char *spec, int nf, const lb_inject *forks)
{
  lb_graph *g;
  if (!CHECK_MSG(!lb_graph_create(spec, &g), "%s: %s", spec, lb_errmsg())) return;
  const lb_method *m = lb_method_find("ripple-hare");
  watch w;
  memset(&w, 0, sizeof w);
  w.g = g;
  w.nf = nf;
  w.base = 2;
  size_t nd = 2 * (size_t)g->m + 1;
  w.held = malloc((size_t)g->n * sizeof(double));
  w.prevflow = calloc(nd, sizeof(double));
  w.prevsent = calloc(nd, sizeof(double));
  w.sent = calloc(nd, sizeof(double));
  double *load = malloc((size_t)g->n * sizeof *load), total = 0;
  for (int r = 0; r < g->n; r++) load[r] = w.base;
  int ecc = 0, end = 0;
  for (int k = 0; k < nf; k++) {
    w.fork[k] = forks[k];
    w.parent[k] = malloc((size_t)g->n * sizeof(int));
    w.depth[k] = malloc((size_t)g->n * sizeof(int));
    ecc = ripple_tree(g, forks[k].rank, w.parent[k], w.depth[k]);
    if (forks[k].step + ecc - 1 > end) end = forks[k].step + ecc - 1;
    total += forks[k].amount;
  }
  lb_params p;
  lb_result res;
  lb_params_init(&p, m);
  p.inject = forks;
  p.ninject = nf;
  p.observer = observe;
  p.observer_ctx = &w;
  if (!CHECK_MSG(!lb_balance(g, m, &p, load, &res), "%s: %s", spec, lb_errmsg())) goto out;
  double want = w.base + total / g->n, dev = 0;
  for (int r = 0; r < g->n; r++) if (fabs(res.load[r] - want) > dev) dev = fabs(res.load[r] - want);
  printf("%-14s forks", spec);
  for (int k = 0; k < nf; k++) printf(" %g@%d(step %d)", forks[k].amount, forks[k].rank, forks[k].step);
  printf(": load <= %.3f of bound, link <= %.3f of bound, level to %.1e, last migration in step %d (expected %d)\n",
         w.worst_load, w.worst_flow, dev / want, w.last_send, end);
  CHECK_MSG(!(dev > 1e-12 * want), "not level: deviation %.3g", dev);
  CHECK_MSG(w.last_send == end, "last migration in step %d, not %d", w.last_send, end);
  lb_result_free(&res);
out:
  for (int k = 0; k < nf; k++) { free(w.parent[k]); free(w.depth[k]); }
  free(w.held); free(w.prevflow); free(w.prevsent); free(w.sent); free(load);
  lb_graph_destroy(&g);
}

typedef struct {
  const lb_graph *g;
  const int *parent;
  double f, *prevflow, *prevsent, *sent, peak; /* peak: largest transfer seen */
  int last_send;
} tortoise_watch;

static lb_err tortoise_observe(lb_run *run, void *ctx)
{
  tortoise_watch *w = ctx;
  const lb_graph *g = w->g;
  int s = lb_run_step(run);
  link_sends(g, lb_run_flow(run), w->prevflow, w->prevsent, w->sent);
  double tol = 1e-12 * w->f, cap = g->kind == LB_GRAPH_HYPERCUBE ? ldexp(w->f, -s) : HUGE_VAL;
  for (int e = 0; e < 2 * g->m; e++) {
    double x = w->sent[e];
    if (fabs(x) <= tol) continue;
    w->last_send = s;
    if (x > w->peak) w->peak = x;
    CHECK_MSG(!(x < 0 || w->parent[g->adj[e]] != g->owner[e]), "step %d: link %d->%d carries %.17g against the tree", s, g->owner[e], g->adj[e], x);
    CHECK_MSG(!(x > cap + tol), "step %d: link %d->%d carries %.17g, more than f/2^t = %.17g", s, g->owner[e], g->adj[e], x, cap);
  }
  return LB_OK;
}

/* ripple-tortoise with one fork f at src on spec. */
static void check_tortoise(const char *spec, int src)
{
  lb_graph *g;
  if (!CHECK_MSG(!lb_graph_create(spec, &g), "%s: %s", spec, lb_errmsg())) return;
  const double f = 1000, base = 3;
  int *parent = malloc((size_t)g->n * sizeof(int)), *depth = malloc((size_t)g->n * sizeof(int));
  ripple_tree(g, src, parent, depth);
  /* The source's widest line and the step of the last send (file comment). */
  int kid[64], size[64], nk = lb_source_tree_children(g, src, -1, kid, size), last;
  double omega = 1;
  for (int i = 0; i < nk; i++) {
    int sub[64], ssize[64], ns = lb_source_tree_children(g, kid[i], src, sub, ssize), w = 1;
    for (int j = 0; j < ns; j++) if (sub[j] - kid[i] != kid[i] - src) w += ssize[j];
    if (w > omega) omega = w;
  }
  if (g->kind == LB_GRAPH_HYPERCUBE) {
    last = g->dims[0];
  } else {
    int A = g->dims[0], B = g->kind == LB_GRAPH_MESH2D ? g->dims[1] : 1, x = src % A, y = src / A;
    int mx = x > A - 1 - x ? x : A - 1 - x, my = y > B - 1 - y ? y : B - 1 - y;
    last = 2 * my - 1;
    if (mx > 0 && 2 * mx + my - 1 > last) last = 2 * mx + my - 1;
  }
  size_t nd = 2 * (size_t)g->m + 1;
  tortoise_watch w = {g, parent, f, calloc(nd, sizeof(double)), calloc(nd, sizeof(double)), calloc(nd, sizeof(double)), 0, -1};
  double *load = malloc((size_t)g->n * sizeof *load);
  for (int r = 0; r < g->n; r++) load[r] = base;
  const lb_method *m = lb_method_find("ripple-tortoise");
  lb_inject in = {1, src, f};
  lb_params p;
  lb_result res;
  lb_params_init(&p, m);
  p.inject = &in;
  p.ninject = 1;
  p.observer = tortoise_observe;
  p.observer_ctx = &w;
  if (!CHECK_MSG(!lb_balance(g, m, &p, load, &res), "%s: %s", spec, lb_errmsg())) goto out;
  double want = base + f / g->n, dev = 0, peak = omega * f / g->n;
  for (int r = 0; r < g->n; r++) if (fabs(res.load[r] - want) > dev) dev = fabs(res.load[r] - want);
  printf("%-14s tortoise fork %g@%d: largest transfer %.6g (omega f/n = %.6g), last send in step %d (expected %d), %d iterations, level to %.1e\n",
         spec, f, src, w.peak, peak, w.last_send, last, res.iterations, dev / want);
  CHECK_MSG(!(fabs(w.peak - peak) > 1e-12 * f), "largest transfer is not omega f/n");
  CHECK_MSG(!(w.last_send != last || res.iterations != last), "time to stability is not %d", last);
  CHECK_MSG(!(dev > 1e-12 * want), "not level: deviation %.3g", dev);
  lb_result_free(&res);
out:
  free(parent); free(depth); free(load); free(w.prevflow); free(w.prevsent); free(w.sent);
  lb_graph_destroy(&g);
}

/* Melhem et al. 1991 costs of one fork of f = n at rank 0. */
static int costs(const char *method, const char *spec, double *mig, double *imb, int *n)
{
  lb_graph *g;
  if (!CHECK_MSG(!lb_graph_create(spec, &g), "%s: %s", spec, lb_errmsg())) return 1;
  const lb_method *m = lb_method_find(method);
  double *load = malloc((size_t)g->n * sizeof *load);
  for (int r = 0; r < g->n; r++) load[r] = 1;
  lb_inject in = {1, 0, (double)g->n};
  lb_params p;
  lb_result res;
  lb_params_init(&p, m);
  p.inject = &in;
  p.ninject = 1;
  p.track_costs = 1;
  lb_err err = lb_balance(g, m, &p, load, &res);
  *n = g->n;
  free(load);
  lb_graph_destroy(&g);
  if (!CHECK_MSG(!err, "%s on %s: %s", method, spec, lb_errmsg())) return 1;
  *mig = res.migration_cost;
  *imb = res.imbalance_cost;
  lb_result_free(&res);
  return 0;
}

/* Least-squares slope of log y over log x. */
static double slope(int k, const double *x, const double *y)
{
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < k; i++) {
    double a = log(x[i]), b = log(y[i]);
    sx += a; sy += b; sxx += a * a; sxy += a * b;
  }
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

static void check_line_costs(void)
{
  double ns[8], hare[8], tort[8];
  double lo = HUGE_VAL, hi = 0;
  int k = 0;
  printf("line, one fork f = n at rank 0:\n       n  hare migration  hare imbalance  imbalance/(n ln n)  tortoise migration  tortoise imbalance\n");
  for (int N = 16; N <= 1024; N *= 2, k++) {
    char spec[32];
    double hm, hi_, tm, ti;
    int n;
    snprintf(spec, sizeof spec, "line:%d", N);
    if (costs("ripple-hare", spec, &hm, &hi_, &n) || costs("ripple-tortoise", spec, &tm, &ti, &n)) return;
    double Hn = 0;
    for (int i = 1; i <= n; i++) Hn += 1.0 / i;
    double wm = n * (Hn - 1), wi = wm - (n - 1), ratio = hi_ / (n * log(n));
    printf("%8d  %14.6f  %14.6f  %18.4f  %18.6f  %18.6f\n", n, hm, hi_, ratio, tm, ti);
    CHECK_MSG(!(fabs(hm - wm) > 1e-9 * wm || fabs(hi_ - wi) > 1e-9 * wi),
              "hare on %s: costs %.17g %.17g, expected n(H_n - 1) = %.17g and n(H_n - 1) - (n - 1) = %.17g", spec, hm, hi_, wm, wi);
    if (ratio < lo) lo = ratio;
    if (ratio > hi) hi = ratio;
    ns[k] = n;
    hare[k] = hi_ / n;
    tort[k] = ti / n;
  }
  double ph = slope(k, ns, hare), pt = slope(k, ns, tort);
  printf("imbalance cost / n ~ n^p: hare p = %.4f, tortoise p = %.4f; hare imbalance/(n ln n) in [%.4f, %.4f]\n", ph, pt, lo, hi);
  CHECK_MSG(ph < 0.4 && lo > 0.5 && hi < 1 && pt > 0.95,
            "not Melhem et al. 1991 Table 1: hare must grow like n log n (p < 0.4, imbalance/(n ln n) in (0.5, 1)), tortoise like n^2 (p > 0.95)");
}

/* Melhem et al. 1991 Table 1 gives d^2 log d for the migration and d^2 for the
 * imbalance; the second is out of reach on the trees S_ij without moving
 * load back (ripple.c), and both come out as Theta(n log d). */
static void check_mesh_costs(void)
{
  printf("mesh2d dxd, one fork f = n at rank 0:\n   d      n  hare migration/(n ln d)  hare imbalance/(n ln d)\n");
  for (int d = 4; d <= 32; d *= 2) {
    char spec[32];
    double hm, hi;
    int n;
    snprintf(spec, sizeof spec, "mesh2d:%dx%d", d, d);
    if (costs("ripple-hare", spec, &hm, &hi, &n)) return;
    double a = hm / (n * log(d)), b = hi / (n * log(d));
    printf("%4d %6d  %23.4f  %23.4f\n", d, n, a, b);
    CHECK_MSG(a > 0.5 && a < 1.5 && b > 0.5 && b < 1.5, "hare on %s: costs not Theta(n log d)", spec);
  }
}

static void check_hypercube_costs(void)
{
  printf("hypercube, one fork f = n at rank 0:\n   d      n  hare migration/n  hare imbalance/n\n");
  for (int D = 4; D <= 10; D += 2) {
    char spec[32];
    double hm, hi;
    int n;
    snprintf(spec, sizeof spec, "hypercube:%d", D);
    if (costs("ripple-hare", spec, &hm, &hi, &n)) return;
    printf("%4d %6d  %16.6f  %16.6f\n", D, n, hm / n, hi / n);
    CHECK_MSG(!(hm >= n || hi >= n), "hare on %s: costs not below n = 2^d", spec);
  }
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *specs[3] = {"line:37", "mesh2d:7x5", "hypercube:5"};
  const int src[3][3] = {{0, 18, 36}, {0, 17, 34}, {0, 21, 31}};
  for (int s = 0; s < 3; s++) {
    for (int i = 0; i < 3; i++) {
      lb_inject point = {1, src[s][i], 111.0};
      lb_inject later = {5, src[s][i], 37.5};
      check_forks(specs[s], 1, &point);
      check_forks(specs[s], 1, &later);
    }
    const lb_inject two[2] = {{1, src[s][0], 111.0}, {4, src[s][1], 64.0}};
    check_forks(specs[s], 2, two);
  }
  const char *tspecs[6] = {"line:37", "line:2", "mesh2d:7x5", "mesh2d:16x16", "mesh2d:1x9", "hypercube:6"};
  const int tsrc[6][2] = {{0, 11}, {0, 1}, {0, 17}, {0, 100}, {4, 8}, {0, 45}};
  for (int s = 0; s < 6; s++)
    for (int i = 0; i < 2; i++) check_tortoise(tspecs[s], tsrc[s][i]);
  check_line_costs();
  check_mesh_costs();
  check_hypercube_costs();
  printf("%s\n", check_failures ? "FAILED" : "ripple-hare meets Melhem et al. 1991's Hare condition and Table 1, ripple-tortoise its schedule");
  MPI_Finalize();
  return check_failures != 0;
}
