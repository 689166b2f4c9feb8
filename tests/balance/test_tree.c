/* Langer 2014: on random trees (and a few other graphs) with random integer
 * loads, the tree method leaves every rank at floor or ceil of the average
 * and moves exactly the minimum number of units, which this test computes
 * on its own: with q = floor(W/n), r = W mod n, the minimum is
 * sum max(0, l - q) - min(r, #{l > q}).  Every unit changes owner once:
 * the transfers go from ranks that end below their start straight to
 * ranks that end above it, each rank sends (receives) exactly what it lost
 * (gained), so unit_hops == migrated_units == the minimum; on a line the
 * flow on each cut is the net of the transfers across it (what chain mode
 * realises).  Messages: the
 * supplier/consumer pairs form a forest (at most suppliers + consumers - 1
 * transfers, no cycle), and besides the global sum (2 per rank) and one
 * message per transfer, each tree edge carries one message in each of the
 * count, place and done passes, and in the matchmaking at most one piece
 * per supplier or per consumer, whichever are fewer, 1 to 16 to a message
 * (a single supplier feeding many consumers, or a single consumer fed by
 * many suppliers: at most one message per edge). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "balance/balance.h"
#include "check.h"

static unsigned long long rng = 88172645463325252ull;
static unsigned next(void)
{
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (unsigned)(rng >> 11);
}

static int find(int *up, int a)
{
  while (up[a] != a) a = up[a] = up[up[a]];
  return a;
}

/* The transfers: supplier to consumer, exactly each rank's loss or gain, a forest, within the message bound. */
static void check_transfers(const lb_graph *g, const lb_result *res, const lb_metrics *mt, long long minimum, const char *what)
{
  int n = g->n;
  double *net = calloc((size_t)n, sizeof *net), sum = 0;
  int *up = malloc((size_t)n * sizeof *up);
  long long S = 0, C = 0;
  for (int r = 0; r < n; r++) {
    up[r] = r;
    S += res->load0[r] > res->load[r];
    C += res->load0[r] < res->load[r];
  }
  for (int k = 0; k < res->ntransfers; k++) {
    const lb_transfer *t = &res->transfer[k];
    CHECK_MSG(!(t->amount <= 0 || !(res->load0[t->from] > res->load[t->from]) || !(res->load0[t->to] < res->load[t->to])),
              "%s: transfer %d -> %d of %g is not from a supplier to a consumer", what, t->from, t->to, t->amount);
    CHECK_MSG(!(k > 0 && (t->from < t[-1].from || (t->from == t[-1].from && t->to <= t[-1].to))), "%s: transfers not sorted", what);
    net[t->from] -= t->amount;
    net[t->to] += t->amount;
    sum += t->amount;
    int a = find(up, t->from), b = find(up, t->to);
    CHECK_MSG(a != b, "%s: transfer %d -> %d closes a cycle", what, t->from, t->to);
    up[a] = b;
  }
  for (int r = 0; r < n; r++)
    CHECK_MSG(net[r] == res->load[r] - res->load0[r], "%s: rank %d: transfers bring %g, load changed by %g", what, r, net[r],
              res->load[r] - res->load0[r]);
  CHECK_MSG(!(sum != (double)minimum || mt->unit_hops != (double)minimum || mt->migrated_units != (double)minimum),
            "%s: transfers %g, unit_hops %g, migrated %g, minimum %lld", what, sum, mt->unit_hops, mt->migrated_units, minimum);
  CHECK_MSG(!(res->ntransfers > (S + C > 0 ? S + C - 1 : 0)), "%s: %d transfers for %lld suppliers and %lld consumers", what, res->ntransfers, S, C);
  /* On a line (the chain mode's graph) the tree is the line, and the flow on
   * the cut between k and k+1 is the net of the transfers that cross it. */
  for (int k = 0; g->kind == LB_GRAPH_LINE && k < g->m; k++) {
    double cross = 0;
    for (int i = 0; i < res->ntransfers; i++) {
      const lb_transfer *t = &res->transfer[i];
      cross += t->from <= g->eu[k] && t->to >= g->ev[k] ? t->amount : t->to <= g->eu[k] && t->from >= g->ev[k] ? -t->amount : 0;
    }
    CHECK_MSG(cross == res->flow[k], "%s: cut %d|%d: flow %g, transfers across %g", what, g->eu[k], g->ev[k], res->flow[k], cross);
  }
  /* Messages and bytes: the sum (2 per rank, 16 bytes), count (48), place
   * (24) and done (16) per tree edge, transfers (16); the rest are lists of
   * 16 bytes plus 16 per piece, 1 to 16 pieces a message, at most one piece
   * per tree edge and supplier or consumer, whichever are fewer. */
  long long lists = res->messages - 2LL * n - 3LL * (n - 1) - res->ntransfers;
  long long pieces = (res->bytes - 16LL * n - 88LL * (n - 1) - 16LL * res->ntransfers - 16 * lists) / 16, few = S < C ? S : C;
  CHECK_MSG(!(lists < 0 || pieces < lists || pieces > 16 * lists || pieces > few * (n - 1)),
            "%s: %lld list messages with %lld pieces, want lists <= pieces <= min(16 lists, %lld)", what, lists, pieces, few * (n - 1));
  free(net);
  free(up);
}

static void check(lb_graph *g, const char *what)
{
  int n = g->n;
  double *load = malloc((size_t)n * sizeof *load);
  /* Uniform, sparse heavy ranks, nearly balanced, one point load, one empty
   * rank among 2s and 3s, one rank needing n among ranks with one unit over. */
  int skew = next() % 6, point = (int)(next() % n);
  for (int r = 0; r < n; r++)
    load[r] = skew == 0 ? next() % 30 : skew == 1 ? (next() % 5 == 0 ? next() % 200 : 0) : skew == 2 ? next() % 3
            : skew == 3 ? (r == point ? 3.0 * n + next() % 7 : 0) : skew == 4 ? (r == point ? 0 : 2 + next() % 2)
            : (r == point ? 0 : 5);
  long long W = 0, above = 0, excess = 0;
  for (int r = 0; r < n; r++) W += (long long)load[r];
  long long q = W / n, rem = W % n;
  for (int r = 0; r < n; r++)
    if (load[r] > q) { above++; excess += (long long)load[r] - q; }
  long long minimum = excess - (rem < above ? rem : above);
  lb_params p;
  lb_result res;
  lb_metrics mt;
  const lb_method *m = lb_method_find("tree");
  if (!CHECK_MSG(!lb_params_init(&p, m) && !lb_balance(g, m, &p, load, &res) && !lb_metrics_compute(&res, &mt), "%s: %s", what, lb_errmsg())) {
    free(load);
    return;
  }
  long long sum = 0, nceil = 0;
  for (int r = 0; r < n; r++) {
    CHECK_MSG(!(res.load[r] != q && res.load[r] != q + 1), "%s: rank %d ends with %g, not %lld or %lld", what, r, res.load[r], q, q + 1);
    nceil += res.load[r] == q + 1;
    sum += (long long)res.load[r];
  }
  CHECK_MSG(!(sum != W || nceil != rem), "%s: total %lld (want %lld), %lld ranks at q+1 (want %lld)", what, sum, W, nceil, rem);
  check_transfers(g, &res, &mt, minimum, what);
  lb_result_free(&res);
  free(load);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int runs = 0;
  const int sizes[] = {1, 2, 3, 5, 17, 64, 200, 1000};
  for (int t = 0; t < 80; t++) {
    int n = sizes[t % 8];
    int *eu = malloc((size_t)n * sizeof *eu), *ev = malloc((size_t)n * sizeof *ev);
    for (int i = 1; i < n; i++) { eu[i - 1] = (int)(next() % i); ev[i - 1] = i; }
    lb_graph *g;
    char what[64];
    snprintf(what, sizeof what, "random tree %d (n=%d)", t, n);
    if (CHECK_MSG(!lb_graph_create_edges(n, n - 1, eu, ev, &g), "%s: %s", what, lb_errmsg())) {
      check(g, what);
      lb_graph_destroy(&g);
      runs++;
    }
    free(eu);
    free(ev);
  }
  const char *specs[] = {"tree:100:3", "mesh2d:5x7", "hypercube:5", "torus3d:3x4x5", "ring:31", "line:300", "mesh3d:4x4x4"};
  for (int i = 0; i < 7; i++) {
    lb_graph *g;
    if (!CHECK_MSG(!lb_graph_create(specs[i], &g), "%s: %s", specs[i], lb_errmsg())) continue;
    for (int k = 0; k < 8; k++, runs++) check(g, specs[i]);
    lb_graph_destroy(&g);
  }
  printf("%s: %d runs\n", check_failures ? "FAILED" : "tree method balanced with minimum migration", runs);
  MPI_Finalize();
  return check_failures != 0;
}
