/* multilevel on a line works out each rank's path through the bisection
 * from the rank's index alone; on the same line given as an edge list it
 * builds the whole hierarchy (BFS order from a set's lowest rank: the
 * same intervals) and matches the cut edges.  Both must give the same
 * loads, flows and counts bit for bit, at sizes of every parity. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"

static int same_on(int n)
{
  lb_graph *line, *edges;
  char spec[32];
  snprintf(spec, sizeof spec, "line:%d", n);
  int *eu = malloc((size_t)n * sizeof *eu), *ev = malloc((size_t)n * sizeof *ev);
  for (int i = 0; i + 1 < n; i++) { eu[i] = i; ev[i] = i + 1; }
  if (!CHECK(lb_graph_create(spec, &line) == LB_OK) || !CHECK(lb_graph_create_edges(n, n - 1, eu, ev, &edges) == LB_OK)) return 0;
  free(eu);
  free(ev);
  double *load = malloc((size_t)n * sizeof *load);
  for (int r = 0; r < n; r++) load[r] = (double)((r * 7919 + 13) % 101) + (r == n / 3 ? 5000 : 0);
  const lb_method *m = lb_method_find("multilevel");
  lb_params p;
  lb_params_init(&p, m);
  lb_result a, b;
  int ok = CHECK_MSG(lb_balance(line, m, &p, load, &a) == LB_OK, "%s", lb_errmsg()) &&
           CHECK_MSG(lb_balance(edges, m, &p, load, &b) == LB_OK, "%s", lb_errmsg());
  if (ok) {
    ok = memcmp(a.load, b.load, (size_t)n * sizeof(double)) == 0 && memcmp(a.flow, b.flow, (size_t)(n - 1) * sizeof(double)) == 0 &&
         a.iterations == b.iterations && a.rounds == b.rounds && a.messages == b.messages && a.collectives == b.collectives;
    CHECK_MSG(ok, "line:%d: the path from the index differs from the hierarchy's", n);
    /* a rank holds its path, log2 P levels, not the hierarchy */
    CHECK_MSG(a.method_bytes_max < b.method_bytes_max || n < 64, "line:%d: %.0f bytes per rank, the hierarchy's %.0f", n, a.method_bytes_max,
              b.method_bytes_max);
    lb_result_free(&a);
    lb_result_free(&b);
  }
  free(load);
  lb_graph_destroy(&line);
  lb_graph_destroy(&edges);
  return ok;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  static const int sizes[] = {1, 2, 3, 5, 7, 8, 9, 64, 100, 1000, 4097};
  int ok = 0;
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) ok += same_on(sizes[i]);
  printf("multilevel: the line's paths equal the hierarchy's on %d of %zu sizes\n", ok, sizeof sizes / sizeof sizes[0]);
  MPI_Finalize();
  return check_failures != 0;
}
