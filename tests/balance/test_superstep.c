/* Lieber et al. 2016's superstep on the MPI backend: neighbour-only, on persistent
 * requests.  lb_balance's MPI calls are counted through the MPI profiling
 * interface while every method flagged LB_LOCAL (the diffusion family) runs
 * on the P processes:
 *  - every superstep is one MPI_Startall (none on a single rank);
 *  - without a target, a run of 60 iterations makes exactly as many
 *    collective calls as a run of 20: none per iteration;
 *  - with a target checked every K iterations (K = 1, 4, 7), the run makes
 *    floor(iterations / K) more collectives than without, and the result's
 *    `collectives` (reductions during the supersteps) says the same;
 *  - sfc-shift's iterations gather nothing: its run of 9 iterations calls
 *    MPI_Allgather as often as its run of 3 (the result's gathers). */
#include <stdio.h>

#include "balance/balance.h"
#include "check.h"

static long startall, coll, gathers;

int MPI_Startall(int n, MPI_Request req[]) { startall++; return PMPI_Startall(n, req); }
int MPI_Allreduce(const void *s, void *r, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
  coll++;
  return PMPI_Allreduce(s, r, c, t, op, comm);
}
int MPI_Allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
  coll++;
  gathers++;
  return PMPI_Allgather(s, sc, st, r, rc, rt, comm);
}
int MPI_Neighbor_alltoall(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
  coll++;
  return PMPI_Neighbor_alltoall(s, sc, st, r, rc, rt, comm);
}
int MPI_Neighbor_allgather(const void *s, int sc, MPI_Datatype st, void *r, int rc, MPI_Datatype rt, MPI_Comm comm)
{
  coll++;
  return PMPI_Neighbor_allgather(s, sc, st, r, rc, rt, comm);
}
int MPI_Barrier(MPI_Comm comm) { coll++; return PMPI_Barrier(comm); }
int MPI_Bcast(void *b, int c, MPI_Datatype t, int root, MPI_Comm comm) { coll++; return PMPI_Bcast(b, c, t, root, comm); }

typedef struct { long startall, coll, gathers; lb_result res; } counted;

static int run(const lb_graph *g, const lb_method *m, double target, int max_iters, int K, const double *load, counted *c)
{
  lb_params p;
  lb_params_init(&p, m);
  p.backend = LB_BACKEND_MPI;
  p.target = target;
  p.max_iters = max_iters;
  p.check_interval = K;
  long s0 = startall, c0 = coll, g0 = gathers;
  if (!CHECK_MSG(!lb_balance(g, m, &p, load, &c->res), "%s on %s: %s", m->name, g->spec, lb_errmsg())) return 1;
  c->startall = startall - s0;
  c->coll = coll - c0;
  c->gathers = gathers - g0;
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int me, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  char spec[32];
  snprintf(spec, sizeof spec, "ring:%d", P);
  lb_graph *g;
  if (!CHECK_MSG(lb_graph_create(spec, &g) == LB_OK, "%s", lb_errmsg())) MPI_Abort(MPI_COMM_WORLD, 1);
  double load[64];
  for (int r = 0; r < P; r++) load[r] = 100 + 37 * ((r * 7 + 3) % 5) + (r == 0 ? 400 : 0);
  for (int i = 0; i < lb_method_count(); i++) {
    const lb_method *m = lb_method_get(i);
    if (!(m->flags & LB_LOCAL)) continue;
    counted a, b;
    if (run(g, m, 0, 20, 1, load, &a) || run(g, m, 0, 60, 1, load, &b)) continue;
    int ok = a.coll == b.coll && a.res.collectives == b.res.collectives &&
             a.startall == (P > 1 ? a.res.rounds : 0) && b.startall == (P > 1 ? b.res.rounds : 0);
    if (me == 0)
      printf("%-20s %s: 20 and 60 iterations: %ld and %ld collective calls, %ld and %ld MPI_Startall for %lld and %lld supersteps%s\n", m->name,
             spec, a.coll, b.coll, a.startall, b.startall, a.res.rounds, b.res.rounds, ok ? "" : "  FAILED");
    CHECK(ok);
    for (int K = 1; K <= 7; K += 3) {
      counted t;
      if (run(g, m, 0.9999, 60, K, load, &t)) continue;
      long checks = t.res.iterations / K, extra = t.coll - b.coll;
      int okk = extra == checks && t.res.collectives - b.res.collectives == checks &&
                (t.res.stop != LB_STOP_TARGET || t.res.iterations % K == 0);
      if (me == 0)
        printf("  target, check every %d: %d iterations (stop %s), %ld collective calls more, %lld in the result, %ld checks%s\n", K,
               t.res.iterations, lb_stop_name(t.res.stop), extra, t.res.collectives - b.res.collectives, checks, okk ? "" : "  FAILED");
      CHECK(okk);
      lb_result_free(&t.res);
    }
    lb_result_free(&a.res);
    lb_result_free(&b.res);
  }
  counted a, b;
  const lb_method *shift = lb_method_find("sfc-shift");
  if (!run(g, shift, 0, 3, 1, load, &a) && !run(g, shift, 0, 9, 1, load, &b)) {
    const int ok = a.gathers == b.gathers && b.res.iterations == (P > 1 ? 9 : 1);
    if (me == 0)
      printf("%-20s %s: %d and %d iterations: %ld and %ld MPI_Allgather calls%s\n", shift->name, spec, a.res.iterations, b.res.iterations, a.gathers,
             b.gathers, ok ? "" : "  FAILED");
    CHECK(ok);
    lb_result_free(&a.res);
    lb_result_free(&b.res);
  }
  lb_graph_destroy(&g);
  const int status = check_finish(MPI_COMM_WORLD);
  if (me == 0) printf("%s on %d processes\n", status ? "FAILED" : "supersteps are neighbour-only, collectives only at the checks, no gather per iteration", P);
  MPI_Finalize();
  return status;
}
