/* Seed 002: on random trees (and a few other graphs) with random integer
 * loads, the tree method leaves every rank at floor or ceil of the average
 * and moves exactly the minimum number of units, which this test computes
 * on its own: with q = floor(W/n), r = W mod n, the minimum is
 * sum max(0, l - q) - min(r, #{l > q}). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "balance.h"

static unsigned long long rng = 88172645463325252ull;
static unsigned next(void)
{
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (unsigned)(rng >> 11);
}

static int check(lb_graph *g, const char *what)
{
  int n = g->n;
  double *load = malloc((size_t)n * sizeof *load);
  int skew = next() % 3;
  for (int r = 0; r < n; r++)
    load[r] = skew == 0 ? next() % 30 : skew == 1 ? (next() % 5 == 0 ? next() % 200 : 0) : next() % 3;
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
  int bad = 0;
  if (lb_params_init(&p, m) || lb_balance(g, m, &p, load, &res) || lb_metrics_compute(&res, &mt)) {
    printf("%s: %s\n", what, lb_errmsg());
    free(load);
    return 1;
  }
  long long sum = 0, nceil = 0;
  for (int r = 0; r < n; r++) {
    if (res.load[r] != q && res.load[r] != q + 1) { printf("%s: rank %d ends with %g, not %lld or %lld\n", what, r, res.load[r], q, q + 1); bad = 1; }
    nceil += res.load[r] == q + 1;
    sum += (long long)res.load[r];
  }
  if (sum != W || nceil != rem) { printf("%s: total %lld (want %lld), %lld ranks at q+1 (want %lld)\n", what, sum, W, nceil, rem); bad = 1; }
  if (mt.migrated_units != (double)minimum) { printf("%s: %g units migrated, minimum %lld\n", what, mt.migrated_units, minimum); bad = 1; }
  lb_result_free(&res);
  free(load);
  return bad;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int bad = 0, runs = 0;
  const int sizes[] = {1, 2, 3, 5, 17, 64, 200, 1000};
  for (int t = 0; t < 40; t++) {
    int n = sizes[t % 8];
    int *eu = malloc((size_t)n * sizeof *eu), *ev = malloc((size_t)n * sizeof *ev);
    for (int i = 1; i < n; i++) { eu[i - 1] = (int)(next() % i); ev[i - 1] = i; }
    lb_graph *g;
    char what[64];
    snprintf(what, sizeof what, "random tree %d (n=%d)", t, n);
    if (lb_graph_create_edges(n, n - 1, eu, ev, &g)) { printf("%s: %s\n", what, lb_errmsg()); bad = 1; }
    else { bad |= check(g, what); lb_graph_destroy(&g); runs++; }
    free(eu);
    free(ev);
  }
  const char *specs[] = {"tree:100:3", "mesh2d:5x7", "hypercube:5", "torus3d:3x4x5", "ring:31"};
  for (int i = 0; i < 5; i++) {
    lb_graph *g;
    if (lb_graph_create(specs[i], &g)) { printf("%s: %s\n", specs[i], lb_errmsg()); bad = 1; continue; }
    for (int k = 0; k < 4; k++, runs++) bad |= check(g, specs[i]);
    lb_graph_destroy(&g);
  }
  printf("%s: %d runs\n", bad ? "FAILED" : "tree method balanced with minimum migration", runs);
  MPI_Finalize();
  return bad;
}
