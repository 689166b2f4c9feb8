/* Ripple against its own recorded results: ripple-tortoise and ripple-hare
 * on 64 ranks (line, 8x8 mesh, 6-cube), every rank forking and load
 * injected twice, must give bit for bit the final loads, flows, iteration,
 * round, message and byte counts and Melhem et al. 1991 costs that the
 * Ripple of every edge's table on every rank gave (main at 48aae7e, whose
 * output is data/ripple64.expected: `test_balance_ripple_recorded -write
 * FILE` wrote it).  The tables of only a rank's own edges must change no
 * number. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"

/* One run as text: its counts, then every load and flow in hex floats. */
static int run_text(const char *method, const char *spec, char *buf, size_t cap)
{
  lb_graph *g;
  if (!CHECK_MSG(lb_graph_create(spec, &g) == LB_OK, "%s: %s", spec, lb_errmsg())) return 1;
  const lb_method *m = lb_method_find(method);
  double *load = malloc((size_t)g->n * sizeof *load);
  for (int r = 0; r < g->n; r++) load[r] = (double)((r * 37 + 11) % 23) + (r == 0 ? 40 : 0);
  const lb_inject inj[2] = {{3, 0, 7}, {5, g->n - 1, 2.5}};
  lb_params p;
  lb_params_init(&p, m);
  p.inject = inj;
  p.ninject = 2;
  p.track_costs = 1;
  lb_result res;
  lb_err err = lb_balance(g, m, &p, load, &res);
  free(load);
  if (!CHECK_MSG(!err, "%s on %s: %s", method, spec, lb_errmsg())) {
    lb_graph_destroy(&g);
    return 1;
  }
  size_t len = (size_t)snprintf(buf, cap, "%s %s iterations %d rounds %lld messages %lld bytes %lld costs %a %a\nload", method, spec,
                                res.iterations, res.rounds, res.messages, res.bytes, res.migration_cost, res.imbalance_cost);
  for (int r = 0; r < g->n && len < cap; r++) len += (size_t)snprintf(buf + len, cap - len, " %a", res.load[r]);
  if (len < cap) len += (size_t)snprintf(buf + len, cap - len, "\nflow");
  for (int k = 0; k < g->m && len < cap; k++) len += (size_t)snprintf(buf + len, cap - len, " %a", res.flow[k]);
  if (len < cap) snprintf(buf + len, cap - len, "\n");
  lb_result_free(&res);
  lb_graph_destroy(&g);
  return !CHECK_MSG(len < cap, "%s on %s: output longer than %zu bytes", method, spec, cap);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const int write = argc == 3 && strcmp(argv[1], "-write") == 0;
  if (argc != 2 && !write) {
    fprintf(stderr, "usage: %s EXPECTED | -write EXPECTED\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  const char *path = argv[argc - 1];
  FILE *f = fopen(path, write ? "w" : "r");
  if (!f) {
    fprintf(stderr, "%s: cannot open\n", path);
    MPI_Finalize();
    return 2;
  }
  static const char *methods[2] = {"ripple-tortoise", "ripple-hare"};
  static const char *specs[3] = {"line:64", "mesh2d:8x8", "hypercube:6"};
  enum { CAP = 1 << 16 };
  char *got = malloc(CAP), *want = malloc(CAP);
  for (int i = 0; i < 6; i++) {
    if (run_text(methods[i / 3], specs[i % 3], got, CAP)) continue;
    if (write) {
      fputs(got, f);
      continue;
    }
    /* the run's three lines from the file */
    size_t len = 0;
    for (int l = 0; l < 3 && fgets(want + len, (int)(CAP - len), f); l++) len += strlen(want + len);
    CHECK_MSG(strcmp(got, want) == 0, "%s on %s differs from the recording:\n got:  %.200s\n want: %.200s", methods[i / 3], specs[i % 3], got, want);
    printf("%s on %s: %s", methods[i / 3], specs[i % 3], strcmp(got, want) == 0 ? "as recorded\n" : "DIFFERENT\n");
  }
  fclose(f);
  free(got);
  free(want);
  MPI_Finalize();
  return check_failures != 0;
}
