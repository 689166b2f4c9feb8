/* Horton 1993 Algorithm 2: the multi-level balancer.  Phase k splits every set
 * of bisection level k into its halves P1, P2 (lb_bisection) and moves
 * floor((L2|P1| - L1|P2|)/(|P1|+|P2|)) units from P2 to P1 (negative: the
 * other way).  The amount is shared out over a maximal matching of the
 * graph edges between the halves, so every transfer is between neighbours
 * and a rank takes part in at most one transfer per phase.  The halves' sums
 * come from one grouped reduction per phase; ceil(log2 P) phases on graphs
 * with balanced connected bisections.
 *
 * A rank keeps only its path through the hierarchy: per level its halves'
 * reduction groups and sizes and its transfer, O(log P).  On a line the
 * sets are intervals and the path follows from the rank's index alone; on
 * other graphs the library's hierarchy of every rank ((L+1) P ints) is
 * built at setup and freed once superstep 0 has read the local ranks'
 * paths from it.  What stays O(P) per process is the grouped reduction:
 * one group per set of the last level (2^L < 2P on a line; elsewhere the
 * sets numbered densely, at most P). */
#include "balance/balance.h"

#include <stdlib.h>
#include <string.h>

/* A rank's part of one phase: its set's halves and its transfer. */
typedef struct {
  int p1, p2;     /* the reduction groups of the halves P1 and P2 of its set at the phase's level k (-1: P2 empty) */
  int half;       /* 0: in P1, 1: in P2 */
  int n1, n2;     /* ranks in P1 and P2 */
  int mate;       /* directed edge of its transfer, or -1 */
  int pair;       /* index of that transfer among its set's pairs */
  int npairs;     /* transfers of its set */
} ml_level;

typedef struct {
  int nlevels, ngroups;
  lb_bisection b;  /* other graphs than lines: the whole hierarchy, from setup until superstep 0 */
  ml_level *path;  /* path[(r - lo) * nlevels + k]: local rank r's phase k (made in superstep 0) */
  int lo, slot;
  lb_run *run;     /* for the accounting of the transient hierarchy */
} ml_state;

/* Bytes of the whole hierarchy of n ranks and L levels (its groups). */
static long long hierarchy_bytes(long long n, int L) { return (long long)sizeof(int) * (L + 1) * n; }

static void ml_destroy(void *p)
{
  ml_state *s = p;
  if (!s) return;
  lb_bisection_free(&s->b);
  free(s->path);
  free(s);
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The distinct set ids of one level (grp: n ranks' ids) into ids, sorted,
 * and with count non-NULL the ranks in each; returns their number. */
static int level_sets(const int *grp, int n, int *ids, int *count)
{
  int u = 0;
  memcpy(ids, grp, (size_t)n * sizeof(int));
  qsort(ids, (size_t)n, sizeof(int), cmp_int);
  for (int i = 0; i < n; i++) {
    if (u == 0 || ids[i] != ids[u - 1]) {
      ids[u] = ids[i];
      if (count) count[u] = 0;
      u++;
    }
    if (count) count[u - 1]++;
  }
  return u;
}

/* Set id s's place among the u sorted ids, -1 if absent. */
static int dense(const int *ids, int u, int s)
{
  const int *f = bsearch(&s, ids, (size_t)u, sizeof(int), cmp_int);
  return f ? (int)(f - ids) : -1;
}

/* Levels of the bisection of a line of n ranks: halves of ceil(c/2) and
 * floor(c/2) ranks until every set has one. */
static int line_levels(int n)
{
  int L = 0;
  while ((1LL << L) < n) L++;
  return L;
}

static lb_err ml_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  ml_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  s->run = run;
  lb_run_account(run, -1, (long long)sizeof *s);
  if (g->kind == LB_GRAPH_LINE) {
    s->nlevels = line_levels(g->n);
    s->ngroups = 1 << s->nlevels;
  } else {
    lb_err err = lb_bisection_build(g, &s->b);
    if (err) return err;
    s->nlevels = s->b.nlevels;
    lb_run_account(run, -1, hierarchy_bytes(g->n, s->nlevels));
    int *ids = malloc((size_t)g->n * sizeof(int) + 1);
    if (!ids) return lb_error(LB_ERR_MEM, "out of memory for the bisection's sets");
    s->ngroups = level_sets(s->b.group + (size_t)s->nlevels * g->n, g->n, ids, NULL);
    free(ids);
  }
  /* The engine's two accumulators of the halves' sums, one group per set
   * of the last level (on a line its ids, 2^L < 2P; elsewhere the sets
   * numbered densely, as the ids 2s, 2s+1 of an uneven hierarchy run to
   * 2^L, far beyond P): doubles that every process holds. */
  lb_run_account(run, -1, 2 * (long long)sizeof(double) * s->ngroups);
  lb_err err = lb_run_reduction(run, LB_SUM, s->ngroups, &s->slot);
  if (err) return err;
  return lb_run_channels(run, 0, 0);
}

/* Rank r's path on a line: the sets are intervals [a, b), split after
 * their first ceil(c/2) ranks; the one edge across the cut is the pair. */
static void line_path(const lb_graph *g, int L, int r, ml_level *path)
{
  int a = 0, b = g->n, set = 0;
  for (int k = 0; k < L; k++) {
    int c = b - a, h = (c + 1) / 2, half = c > 1 && r >= a + h;
    ml_level *l = &path[k];
    l->p1 = 2 * set;
    l->p2 = 2 * set + 1;
    l->half = half;
    l->n1 = c > 1 ? h : 1;
    l->n2 = c - l->n1;
    l->npairs = c > 1;
    l->pair = 0;
    l->mate = c < 2 ? -1 : r == a + h - 1 ? lb_graph_edge(g, r, r + 1) : r == a + h ? lb_graph_edge(g, r, r - 1) : -1;
    if (half) a += h;
    else if (c > 1) b = a + h;
    set = 2 * set + half;
  }
}

/* Every other graph: the local ranks' paths from the whole hierarchy,
 * matching the cut edges of each level greedily in edge order, then the
 * hierarchy goes.  Sets are found by their place among the level's
 * sorted ids (an uneven hierarchy's ids run to 2^L, far beyond P), in
 * scratch of 6 n ints for one level at a time. */
static lb_err graph_paths(lb_run *run, ml_state *s, int lo, int hi)
{
  const lb_graph *g = lb_run_graph(run);
  int n = g->n, L = s->nlevels;
  long long scratch = 6 * (long long)n * (long long)sizeof(int);
  int *mate = malloc((size_t)n * sizeof(int)), *pair = malloc((size_t)n * sizeof(int)), *npairs = malloc((size_t)n * sizeof(int));
  int *idk = malloc((size_t)n * sizeof(int)), *id1 = malloc((size_t)n * sizeof(int)), *cnt1 = malloc((size_t)n * sizeof(int));
  lb_run_account(run, -1, scratch);
  lb_err err = mate && pair && npairs && idk && id1 && cnt1 ? LB_OK : lb_error(LB_ERR_MEM, "out of memory for the bisection's matchings");
  for (int k = 0; k < L && !err; k++) {
    const int *gk = s->b.group + (size_t)k * n, *gk1 = s->b.group + (size_t)(k + 1) * n;
    int uk = level_sets(gk, n, idk, NULL), u1 = level_sets(gk1, n, id1, cnt1);
    for (int r = 0; r < n; r++) mate[r] = -1;
    for (int q = 0; q < uk; q++) npairs[q] = 0;
    for (int e = 0; e < 2 * g->m; e++) {
      int a = g->owner[e], b = g->adj[e];
      if (a > b || gk[a] != gk[b] || gk1[a] == gk1[b] || mate[a] >= 0 || mate[b] >= 0) continue;
      int idx = npairs[dense(idk, uk, gk[a])]++;
      mate[a] = e;
      mate[b] = g->rev[e];
      pair[a] = pair[b] = idx;
    }
    for (int r = lo; r < hi; r++) {
      ml_level *l = &s->path[(size_t)(r - lo) * L + k];
      l->p1 = dense(id1, u1, 2 * gk[r]);
      l->p2 = dense(id1, u1, 2 * gk[r] + 1);
      l->half = gk1[r] != 2 * gk[r];
      l->n1 = cnt1[l->p1];
      l->n2 = l->p2 < 0 ? 0 : cnt1[l->p2];
      l->mate = mate[r];
      l->pair = mate[r] >= 0 ? pair[r] : -1;
      l->npairs = npairs[dense(idk, uk, gk[r])];
    }
  }
  free(mate);
  free(pair);
  free(npairs);
  free(idk);
  free(id1);
  free(cnt1);
  lb_run_account(run, -1, -scratch - hierarchy_bytes(n, L));
  lb_bisection_free(&s->b);
  return err;
}

/* Superstep 0: the local ranks' paths, O(log P) each. */
static lb_err make_paths(lb_run *run, ml_state *s, int lo, int hi)
{
  const lb_graph *g = lb_run_graph(run);
  int L = s->nlevels;
  s->lo = lo;
  s->path = malloc(((size_t)(hi - lo) * L + 1) * sizeof *s->path);
  if (!s->path) return lb_error(LB_ERR_MEM, "out of memory for the bisection paths");
  for (int r = lo; r < hi; r++) lb_run_account(run, r, (long long)L * (long long)sizeof *s->path);
  if (g->kind != LB_GRAPH_LINE) return graph_paths(run, s, lo, hi);
  for (int r = lo; r < hi; r++) line_path(g, L, r, &s->path[(size_t)(r - lo) * L]);
  return LB_OK;
}

/* floor(a / b) for b > 0. */
static long long floor_div(long long a, long long b)
{
  long long q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

static lb_err ml_step(lb_run *run, void *state, int lo, int hi)
{
  ml_state *s = state;
  double *load = lb_run_load(run), *flow = lb_run_flow(run);
  int L = s->nlevels, step = lb_run_step(run);
  if (step == 0 && L > 0) {
    lb_err err = make_paths(run, s, lo, hi);
    if (err) return err;
  }
  if (step >= 1) {
    int k = step - 1, moved = 0;
    for (int r = lo; r < hi; r++) {
      const ml_level *l = &s->path[(size_t)(r - lo) * L + k];
      if (l->mate < 0) continue;
      long long n1 = l->n1, n2 = l->n2;
      long long L1 = (long long)lb_reduced(run, s->slot, l->p1);
      long long L2 = l->p2 < 0 ? 0 : (long long)lb_reduced(run, s->slot, l->p2);
      long long T = floor_div(L2 * n1 - L1 * n2, n1 + n2);
      long long np = l->npairs, idx = l->pair;
      long long share = T / np, rem = T - share * np;
      if (idx < (rem < 0 ? -rem : rem)) share += rem < 0 ? -1 : 1;
      /* share > 0: from the P2 end to the P1 end of the pair. */
      double sent = l->half == 0 ? -(double)share : (double)share;
      load[r] -= sent;
      flow[l->mate] += sent;
      if (sent != 0) moved = 1;
    }
    lb_run_end_iteration(run, moved);
    if (step == L) {
      lb_run_stop(run, LB_STOP_CONVERGED);
      return LB_OK;
    }
  }
  if (L == 0) {
    lb_run_stop(run, LB_STOP_CONVERGED);
    return LB_OK;
  }
  for (int r = lo; r < hi; r++) {
    const ml_level *l = &s->path[(size_t)(r - lo) * L + step];
    lb_reduce(run, s->slot, l->half ? l->p2 : l->p1, load[r]);
  }
  return LB_OK;
}

const lb_method lb_method_multilevel = {
  .name = "multilevel",
  .summary = "Horton 1993 Algorithm 2: recursive bisection, ceil(log2 P) phases between neighbours",
  .flags = LB_INTEGRAL | LB_CONNECTED | LB_TERMINATES | LB_ACCOUNTED,
  .setup = ml_setup,
  .step = ml_step,
  .destroy = ml_destroy,
};
