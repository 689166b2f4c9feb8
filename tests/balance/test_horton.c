/* Horton 1993 Tables 3, 4 and 5, reproduced exactly: the odd-even
 * diffusion and the multi-level method on a line with extra units on rank 0. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"

#define MAXPH 16

typedef struct { int n, nph; double rows[MAXPH][16]; } phases;

static lb_err record(lb_run *run, void *ctx)
{
  phases *p = ctx;
  if (p->nph < MAXPH && lb_run_graph(run)->n <= 16) {
    lb_err err = lb_run_gather_loads(run, p->rows[p->nph]);
    if (err) return err;
  }
  p->nph++;
  return LB_OK;
}

static int run(const char *method, int n, double extra, phases *ph, lb_result *res)
{
  char spec[32];
  snprintf(spec, sizeof spec, "line:%d", n);
  lb_graph *g;
  const lb_method *m = lb_method_find(method);
  lb_params p;
  if (!CHECK_MSG(!lb_graph_create(spec, &g) && !lb_params_init(&p, m), "setup: %s", lb_errmsg())) return 1;
  double *load = calloc((size_t)n, sizeof *load);
  load[0] = extra;
  if (ph) {
    memset(ph, 0, sizeof *ph);
    memcpy(ph->rows[0], load, (size_t)(n < 16 ? n : 16) * sizeof *load);
    ph->nph = 1;
    p.observer = record;
    p.observer_ctx = ph;
  }
  lb_err err = lb_balance(g, m, &p, load, res);
  free(load);
  lb_graph_destroy(&g);
  return !CHECK_MSG(!err, "%s: %s", method, lb_errmsg());
}

static const double table3[10][16] = {
  {16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {8, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
  {8, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {6, 6, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
  {6, 4, 4, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {5, 5, 3, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
  {5, 4, 4, 2, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {5, 4, 3, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
  {5, 4, 3, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {5, 4, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
};

static const double table4[5][16] = {
  {16, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
  {16, 0, 0, 0, 0, 0, 0, -8, 8, 0, 0, 0, 0, 0, 0, 0},
  {16, 0, 0, -12, 12, 0, 0, -8, 8, 0, 0, -4, 4, 0, 0, 0},
  {16, -14, 14, -12, 12, -10, 10, -8, 8, -6, 6, -4, 4, -2, 2, 0},
  {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
};

/* Table 5: processors, diffusion iterations and imbalance, multi-level iterations and imbalance. */
static const double table5[5][5] = {
  {8, 9, 4.9, 3, 0}, {16, 18, 9.6, 4, 0}, {32, 36, 18.4, 5, 0}, {64, 76, 32.4, 6, 0}, {128, 148, 57.4, 7, 0},
};

static void compare_rows(const char *what, const phases *ph, int nrows, const double (*t)[16])
{
  int same = 1;
  for (int k = 0; k < nrows; k++)
    for (int i = 0; i < 16; i++)
      same &= CHECK_MSG(ph->rows[k][i] == t[k][i], "%s phase %d rank %d: got %g, paper %g", what, k, i, ph->rows[k][i], t[k][i]);
  if (same) printf("%s: %d rows identical to the paper\n", what, nrows);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  phases ph;
  lb_result res;
  if (!run("diffusion-discrete", 16, 16, &ph, &res)) {
    compare_rows("Table 3 (diffusion)", &ph, 10, table3);
    CHECK_MSG(res.iterations == 9, "Table 3: %d phases, paper 9", res.iterations);
    lb_result_free(&res);
  }
  if (!run("multilevel", 16, 16, &ph, &res)) {
    compare_rows("Table 4 (multi-level)", &ph, 5, table4);
    CHECK_MSG(ph.nph == 5, "Table 4: %d phases, paper 4", ph.nph - 1);
    lb_result_free(&res);
  }
  for (int i = 0; i < 5; i++) {
    int n = (int)table5[i][0];
    double got[4];
    const char *names[2] = {"diffusion-discrete", "multilevel"};
    for (int k = 0; k < 2; k++) {
      lb_metrics mt;
      if (run(names[k], n, 2.0 * n, NULL, &res) || !CHECK(lb_metrics_compute(&res, &mt) == LB_OK)) continue;
      got[2 * k] = res.iterations;
      got[2 * k + 1] = round(10 * mt.l2_imbalance) / 10; /* printed to one decimal */
      lb_result_free(&res);
    }
    printf("Table 5 n=%3d: diffusion %3g its, imbalance %5.1f; multi-level %g its, imbalance %g\n", n, got[0], got[1], got[2], got[3]);
    for (int k = 0; k < 4; k++)
      CHECK_MSG(!(fabs(got[k] - table5[i][k + 1]) > 1e-9), "Table 5 n=%d column %d: got %g, paper %g", n, k + 1, got[k], table5[i][k + 1]);
  }
  printf(check_failures ? "FAILED\n" : "Horton 1993 tables reproduced\n");
  MPI_Finalize();
  return check_failures != 0;
}
