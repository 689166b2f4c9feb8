/* One method code, two backends: on P MPI processes (P = 1, 2, 4) every
 * method gives bit-identical final loads, flows and direct transfers, Melhem et al. 1991 costs and
 * loads seen by an observer after every iteration (load in transit
 * included), and the same rounds, messages, bytes and collectives, on the
 * MPI backend and on the virtual backend, for every graph of P ranks below.
 * Ripple also gets injected load.  Every method also runs to a target: the
 * neighbour-only ones (LB_LOCAL) to 0.999 checked every 3 iterations,
 * where both backends must overshoot it alike, the others to 0.9, where a
 * run may stop with load in transit, which must arrive in the final loads;
 * and chemotaxis runs with per-rank capacities. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"

/* Folds the loads after every iteration into one number: a weighted sum
 * per iteration, each iteration weighted differently. */
typedef struct { double *all, sum; int its; } trail;

static lb_err follow(lb_run *run, void *ctx)
{
  trail *t = ctx;
  lb_err err = lb_run_gather_loads(run, t->all);
  if (err) return err;
  t->its++;
  for (int r = 0; r < lb_run_graph(run)->n; r++) t->sum += t->all[r] * (r + 1) * t->its;
  return LB_OK;
}

/* Every number of the two results is the same, bit for bit. */
static int same_result(const lb_graph *g, const lb_result *rv, const lb_result *rm)
{
  return memcmp(rv->load, rm->load, (size_t)g->n * sizeof(double)) == 0 && memcmp(rv->flow, rm->flow, (size_t)g->m * sizeof(double)) == 0 &&
         rv->ntransfers == rm->ntransfers &&
         (rv->ntransfers == 0 || memcmp(rv->transfer, rm->transfer, (size_t)rv->ntransfers * sizeof *rv->transfer) == 0) &&
         rv->rounds == rm->rounds && rv->messages == rm->messages && rv->bytes == rm->bytes && rv->collectives == rm->collectives &&
         rv->iterations == rm->iterations && rv->stop == rm->stop && rv->migration_cost == rm->migration_cost &&
         rv->imbalance_cost == rm->imbalance_cost;
}

/* The methods whose step is sfc's add every rank's load before a cut: on
 * loads of tenths and a third, whose sums of doubles depend on the order
 * in which they are added (on 4 and 8 ranks a reduction tree's pairwise
 * sum is not the serial loop's), the two backends must still agree, in one
 * iteration and in forty. */
static int sfc_family_parity(int me, int P)
{
  static const char *names[] = {"sfc", "sfc-exact", "hiersfc", "sfc-shift"};
  char spec[32];
  lb_graph *g;
  int runs = 0;
  snprintf(spec, sizeof spec, "line:%d", P);
  if (!CHECK_MSG(lb_graph_create(spec, &g) == LB_OK, "%s: %s", spec, lb_errmsg())) return 0;
  double *load = malloc((size_t)P * sizeof *load);
  for (int r = 0; r < P; r++) load[r] = 0.1 * ((r * 37 + 11) % 23) + (r == 0 ? 40 : 0) + 1.0 / 3;
  for (int i = 0; i < 4; i++) {
    const lb_method *m = lb_method_find(names[i]);
    lb_params p;
    lb_result rv, rm;
    lb_params_init(&p, m);
    p.max_iters = 40;
    lb_err ev = lb_balance(g, m, &p, load, &rv);
    p.backend = LB_BACKEND_MPI;
    p.comm = MPI_COMM_WORLD;
    lb_err em = lb_balance(g, m, &p, load, &rm);
    if (!CHECK_MSG(!ev && !em, "%s on %s: %s", m->name, spec, lb_errmsg())) continue;
    const int same = same_result(g, &rv, &rm);
    if (me == 0)
      printf("%-20s %-12s tenths    %s  iterations %d, load of the last rank %.17g\n", m->name, spec, same ? "identical" : "DIFFERENT", rm.iterations,
             rm.load[P - 1]);
    CHECK(same);
    runs++;
    lb_result_free(&rv);
    lb_result_free(&rm);
  }
  free(load);
  lb_graph_destroy(&g);
  return runs;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int me, P, runs = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  char specs[6][32];
  int ns = 0;
  snprintf(specs[ns++], 32, "line:%d", P);
  snprintf(specs[ns++], 32, "ring:%d", P);
  snprintf(specs[ns++], 32, "tree:%d:2", P);
  int D = 0, A = 1;
  while ((1 << D) < P) D++;
  if ((1 << D) == P) snprintf(specs[ns++], 32, "hypercube:%d", D);
  for (int a = 2; a * a <= P; a++) if (P % a == 0) A = a;
  if (A > 1) snprintf(specs[ns++], 32, "mesh2d:%dx%d", P / A, A);
  const lb_inject inj[2] = {{3, 0, 7}, {5, P - 1, 2}};
  for (int s = 0; s < ns; s++) {
    lb_graph *g;
    if (!CHECK_MSG(lb_graph_create(specs[s], &g) == LB_OK, "%s: %s", specs[s], lb_errmsg())) MPI_Abort(MPI_COMM_WORLD, 1);
    double *load = malloc((size_t)g->n * sizeof *load), *all = malloc((size_t)g->n * sizeof *all), total = 0;
    double *cap = malloc((size_t)g->n * sizeof *cap);
    for (int r = 0; r < g->n; r++) total += load[r] = (double)((r * 37 + 11) % 23) + (r == 0 ? 40 : 0);
    for (int r = 0; r < g->n; r++) cap[r] = 1 + r % 3;
    for (int i = 0; i < 3 * lb_method_count(); i++) {
      const lb_method *m = lb_method_get(i / 3);
      int variant = i % 3;
      if (variant == 2 && !(m->flags & LB_CAPACITY)) continue;
      lb_params p;
      lb_result rv, rm;
      lb_params_init(&p, m);
      if (!(m->flags & LB_TERMINATES)) p.max_iters = 40;
      if (variant > 0) { p.target = (m->flags & LB_LOCAL) ? 0.999 : 0.9; p.max_iters = 300; p.check_interval = 3; }
      if (variant == 2) p.capacity = cap;
      if (m->flags & LB_INJECT) { p.inject = inj; p.ninject = 2; }
      trail tv = {all, 0, 0}, tm = {all, 0, 0};
      p.track_costs = 1;
      p.observer = follow;
      p.observer_ctx = &tv;
      lb_err ev = lb_balance(g, m, &p, load, &rv);
      p.backend = LB_BACKEND_MPI;
      p.comm = MPI_COMM_WORLD;
      p.observer_ctx = &tm;
      lb_err em = lb_balance(g, m, &p, load, &rm);
      if (!CHECK_MSG(ev == em, "%s on %s: virtual says %d, MPI %d (%s)", m->name, specs[s], ev, em, lb_errmsg())) continue;
      if (ev == LB_ERR_UNSUPPORTED) continue;
      if (!CHECK_MSG(!ev, "%s on %s: %s", m->name, specs[s], lb_errmsg())) continue;
      int same = same_result(g, &rv, &rm) && tv.sum == tm.sum && tv.its == tm.its;
      double sum = 0;
      for (int r = 0; r < g->n; r++) sum += rm.load[r];
      double want = total + rm.injected;
      int conserved = (m->flags & LB_INTEGRAL) ? sum == want : fabs(sum - want) <= 1e-12 * want;
      if (me == 0)
        printf("%-20s %-12s %-9s %s  iterations %d rounds %lld messages %lld bytes %lld collectives %lld  total %.17g%s\n", m->name, specs[s],
               variant == 0 ? "" : variant == 1 ? "target" : "capacity", same ? "identical" : "DIFFERENT", rm.iterations, rm.rounds,
               rm.messages, rm.bytes, rm.collectives, sum, conserved ? "" : " NOT CONSERVED");
      CHECK(same);
      CHECK(conserved);
      runs++;
      lb_result_free(&rv);
      lb_result_free(&rm);
    }
    free(load);
    free(all);
    free(cap);
    lb_graph_destroy(&g);
  }
  runs += sfc_family_parity(me, P);
  const int status = check_finish(MPI_COMM_WORLD);
  if (me == 0) printf("%s on %d processes: %d runs\n", status ? "FAILED" : "backends agree bit for bit", P, runs);
  MPI_Finalize();
  return status;
}
