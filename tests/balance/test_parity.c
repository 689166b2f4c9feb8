/* One method code, two backends: on P MPI processes (P = 1, 2, 4) every
 * method gives bit-identical final loads and flows, and the same rounds,
 * messages and bytes, on the MPI backend and on the virtual backend, for
 * every graph of P ranks below.  Ripple also gets injected load. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance.h"

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int me, P, bad = 0, runs = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  char specs[6][32];
  int ns = 0;
  snprintf(specs[ns++], 32, "line:%d", P);
  snprintf(specs[ns++], 32, "ring:%d", P);
  snprintf(specs[ns++], 32, "tree:%d:2", P);
  if ((P & (P - 1)) == 0) snprintf(specs[ns++], 32, "hypercube:%d", P == 1 ? 0 : P == 2 ? 1 : 2);
  if (P == 4) snprintf(specs[ns++], 32, "mesh2d:2x2");
  const lb_inject inj[2] = {{3, 0, 7}, {5, P - 1, 2}};
  for (int s = 0; s < ns; s++) {
    lb_graph *g;
    if (lb_graph_create(specs[s], &g)) { printf("%s: %s\n", specs[s], lb_errmsg()); MPI_Abort(MPI_COMM_WORLD, 1); }
    double *load = malloc((size_t)g->n * sizeof *load), total = 0;
    for (int r = 0; r < g->n; r++) total += load[r] = (double)((r * 37 + 11) % 23) + (r == 0 ? 40 : 0);
    for (int i = 0; i < lb_method_count(); i++) {
      const lb_method *m = lb_method_get(i);
      lb_params p;
      lb_result rv, rm;
      lb_params_init(&p, m);
      if (!(m->flags & LB_TERMINATES)) p.max_iters = 40;
      if (m->flags & LB_INJECT) { p.inject = inj; p.ninject = 2; }
      lb_err ev = lb_balance(g, m, &p, load, &rv);
      p.backend = LB_BACKEND_MPI;
      p.comm = MPI_COMM_WORLD;
      lb_err em = lb_balance(g, m, &p, load, &rm);
      if (ev != em) { if (me == 0) printf("%s on %s: virtual says %d, MPI %d (%s)\n", m->name, specs[s], ev, em, lb_errmsg()); bad = 1; continue; }
      if (ev == LB_ERR_UNSUPPORTED) continue;
      if (ev) { if (me == 0) printf("%s on %s: %s\n", m->name, specs[s], lb_errmsg()); bad = 1; continue; }
      int same = memcmp(rv.load, rm.load, (size_t)g->n * sizeof(double)) == 0 &&
                 memcmp(rv.flow, rm.flow, (size_t)g->m * sizeof(double)) == 0 &&
                 rv.rounds == rm.rounds && rv.messages == rm.messages && rv.bytes == rm.bytes &&
                 rv.iterations == rm.iterations && rv.stop == rm.stop;
      double sum = 0;
      for (int r = 0; r < g->n; r++) sum += rm.load[r];
      double want = total + rm.injected;
      int conserved = (m->flags & LB_INTEGRAL) ? sum == want : fabs(sum - want) <= 1e-12 * want;
      if (me == 0)
        printf("%-20s %-12s %s  rounds %lld messages %lld bytes %lld  total %.17g%s\n", m->name, specs[s],
               same ? "identical" : "DIFFERENT", rm.rounds, rm.messages, rm.bytes, sum, conserved ? "" : " NOT CONSERVED");
      if (!same || !conserved) bad = 1;
      runs++;
      lb_result_free(&rv);
      lb_result_free(&rm);
    }
    free(load);
    lb_graph_destroy(&g);
  }
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (me == 0) printf("%s on %d processes: %d runs\n", bad ? "FAILED" : "backends agree bit for bit", P, runs);
  MPI_Finalize();
  return bad;
}
