/* Horton 1993 Algorithm 2: the multi-level balancer.  Phase k splits every set
 * of bisection level k into its halves P1, P2 (lb_bisection) and moves
 * floor((L2|P1| - L1|P2|)/(|P1|+|P2|)) units from P2 to P1 (negative: the
 * other way).  The amount is shared out over a maximal matching of the
 * graph edges between the halves, so every transfer is between neighbours
 * and a rank takes part in at most one transfer per phase.  The halves' sums
 * come from one grouped reduction per phase; ceil(log2 P) phases on graphs
 * with balanced connected bisections. */
#include "balance/balance.h"

#include <stdlib.h>

typedef struct {
  lb_bisection b;
  int *mate;     /* mate[k*n + r]: directed edge of r's transfer in phase k, or -1 */
  int *pair;     /* pair[k*n + r]: index of that transfer among its set's pairs */
  int *npairs;   /* npairs[k*W + s]: transfers of set s of level k */
  int slot;
} ml_state;

static void ml_destroy(void *p)
{
  ml_state *s = p;
  if (!s) return;
  lb_bisection_free(&s->b);
  free(s->mate);
  free(s->pair);
  free(s->npairs);
  free(s);
}

static lb_err ml_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  ml_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  lb_err err = lb_bisection_build(g, &s->b);
  if (err) return err;
  int n = g->n, L = s->b.nlevels;
  size_t W = (size_t)1 << L;
  s->mate = malloc(((size_t)L * n + 1) * sizeof(int));
  s->pair = malloc(((size_t)L * n + 1) * sizeof(int));
  s->npairs = calloc((size_t)L * W + 1, sizeof(int));
  if (!s->mate || !s->pair || !s->npairs) return lb_error(LB_ERR_MEM, "out of memory");
  for (size_t i = 0; i < (size_t)L * n; i++) s->mate[i] = s->pair[i] = -1;
  /* Greedy maximal matching of the cut edges in edge order, per level. */
  for (int k = 0; k < L; k++) {
    const int *gk = s->b.group + (size_t)k * n, *gk1 = s->b.group + (size_t)(k + 1) * n;
    int *mate = s->mate + (size_t)k * n, *pair = s->pair + (size_t)k * n;
    for (int e = 0; e < 2 * g->m; e++) {
      int a = g->owner[e], b = g->adj[e];
      if (a > b || gk[a] != gk[b] || gk1[a] == gk1[b] || mate[a] >= 0 || mate[b] >= 0) continue;
      int idx = s->npairs[(size_t)k * W + gk[a]]++;
      mate[a] = e;
      mate[b] = g->rev[e];
      pair[a] = pair[b] = idx;
    }
  }
  if ((err = lb_run_reduction(run, LB_SUM, (int)W, &s->slot))) return err;
  return lb_run_channels(run, 0, 0);
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
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run), *flow = lb_run_flow(run);
  int n = g->n, L = s->b.nlevels, step = lb_run_step(run);
  size_t W = (size_t)1 << L;
  if (step >= 1) {
    int k = step - 1, moved = 0;
    const int *gk = s->b.group + (size_t)k * n;
    const int *cnt = s->b.count + (size_t)(k + 1) * W;
    for (int r = lo; r < hi; r++) {
      int e = s->mate[(size_t)k * n + r];
      if (e < 0) continue;
      int set = gk[r];
      long long n1 = cnt[2 * set], n2 = cnt[2 * set + 1];
      long long L1 = (long long)lb_reduced(run, s->slot, 2 * set);
      long long L2 = (long long)lb_reduced(run, s->slot, 2 * set + 1);
      long long T = floor_div(L2 * n1 - L1 * n2, n1 + n2);
      long long np = s->npairs[(size_t)k * W + set], idx = s->pair[(size_t)k * n + r];
      long long share = T / np, rem = T - share * np;
      if (idx < (rem < 0 ? -rem : rem)) share += rem < 0 ? -1 : 1;
      /* share > 0: from the P2 end to the P1 end of the pair. */
      double sent = (s->b.group[(size_t)(k + 1) * n + r] == 2 * set) ? -(double)share : (double)share;
      load[r] -= sent;
      flow[e] += sent;
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
  const int *next = s->b.group + (size_t)(step + 1) * n;
  for (int r = lo; r < hi; r++) lb_reduce(run, s->slot, next[r], load[r]);
  return LB_OK;
}

const lb_method lb_method_multilevel = {
  .name = "multilevel",
  .summary = "Horton 1993 Algorithm 2: recursive bisection, ceil(log2 P) phases between neighbours",
  .flags = LB_INTEGRAL | LB_CONNECTED | LB_TERMINATES,
  .setup = ml_setup,
  .step = ml_step,
  .destroy = ml_destroy,
};
