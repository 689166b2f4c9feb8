/* Langer 2014 in task mode: on homogeneous tasks the tree method's direct
 * transfers move exactly the fewest tasks.  Unit tasks in random numbers
 * per rank (a chain of tasks, so selection by edge-cut gain has work to
 * do): every rank ends at q or q+1 tasks, the migrated weight and the
 * migrated tasks equal the minimum sum max(0, c - q) - min(r, #{c > q}),
 * computed here, and the lower bound when the average is whole.  The task
 * mesh of lbbench with one rank loaded twice (its tasks weigh 2, the
 * others 1): migrated weight equals the lower bound on mesh3d:4x4x4
 * (virtual) and on the mesh of P ranks.  On P = 1, 2, 4 processes, both
 * backends give the same tasks on every rank and the same metrics; the
 * larger graphs run on the virtual backend in the one-process run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"
#include "bench/taskmesh.h"

typedef struct { int n, *first; } chain; /* rank r holds tasks first[r] .. first[r+1]-1 */

static int chain_nbr(const void *ctx, int id, int *nbr)
{
  const chain *c = ctx;
  int k = 0;
  if (id > 0) nbr[k++] = id - 1;
  if (id + 1 < c->first[c->n]) nbr[k++] = id + 1;
  return k;
}

static int chain_home(const void *ctx, int id, int *index)
{
  const chain *c = ctx;
  int r = 0;
  while (c->first[r + 1] <= id) r++;
  *index = id - c->first[r];
  return r;
}

static lb_err chain_initial(const void *ctx, int r, lb_task_list *l)
{
  const chain *c = ctx;
  lb_err err = LB_OK;
  for (int id = c->first[r]; id < c->first[r + 1] && !err; id++) {
    double x[3] = {id, 0, 0};
    err = lb_task_list_add(l, id, 1, x);
  }
  return err;
}

typedef struct { lb_task_metrics mt; lb_taskset *ts; } outcome;

static lb_err run(const lb_graph *g, const lb_task_graph *tg, lb_backend be, outcome *out)
{
  const lb_method *m = lb_method_find("tree");
  lb_params p;
  lb_result res;
  double *load = malloc((size_t)g->n * sizeof *load);
  lb_params_init(&p, m);
  p.backend = be;
  p.comm = MPI_COMM_WORLD;
  out->ts = NULL;
  lb_err err = lb_taskset_create(tg, be, MPI_COMM_WORLD, &out->ts);
  if (!err && !(err = lb_taskset_loads(out->ts, load)) && !(err = lb_balance(g, m, &p, load, &res))) {
    if (!(err = lb_taskset_select_result(out->ts, g, &res, LB_SELECT_GAIN)) && !(err = lb_taskset_migrate(out->ts)))
      err = lb_taskset_metrics(out->ts, &out->mt);
    lb_result_free(&res);
  }
  free(load);
  return err;
}

/* Both backends; the metrics and this process's tasks must agree.  Returns 0 if they do. */
static int both(const lb_graph *g, const lb_task_graph *tg, int me, lb_task_metrics *mt, const char *what)
{
  outcome v, q;
  lb_err ev = run(g, tg, LB_BACKEND_VIRTUAL, &v), em = run(g, tg, LB_BACKEND_MPI, &q);
  int ok = CHECK_MSG(!ev && !em, "%s: %s", what, lb_errmsg());
  if (ok) {
    const lb_task_list *a = lb_taskset_list(v.ts, me), *b = lb_taskset_list(q.ts, me);
    ok = memcmp(&v.mt, &q.mt, sizeof v.mt) == 0 && a->n == b->n && memcmp(a->id, b->id, (size_t)a->n * sizeof *a->id) == 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK_MSG(ok, "%s: the backends differ", what);
    *mt = q.mt;
  }
  lb_taskset_destroy(&v.ts);
  lb_taskset_destroy(&q.ts);
  return !ok;
}

static unsigned long long rng = 0x2545F4914F6CDD1Dull;
static unsigned next(void)
{
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (unsigned)(rng >> 11);
}

/* Virtual backend only (mpi = 0), or both backends compared. */
static int measure(const lb_graph *g, const lb_task_graph *tg, int me, int mpi, lb_task_metrics *mt, const char *what)
{
  if (mpi) return both(g, tg, me, mt, what);
  outcome v;
  lb_err err = run(g, tg, LB_BACKEND_VIRTUAL, &v);
  if (CHECK_MSG(!err, "%s: %s", what, lb_errmsg())) *mt = v.mt;
  lb_taskset_destroy(&v.ts);
  return err != LB_OK;
}

static void unit_tasks(const char *spec, int me, int mpi)
{
  lb_graph *g;
  if (!CHECK_MSG(!lb_graph_create(spec, &g), "%s: %s", spec, lb_errmsg())) return;
  int n = g->n;
  for (int trial = 0; trial < 6; trial++) {
    chain c = {n, malloc(((size_t)n + 1) * sizeof(int))};
    c.first[0] = 0;
    for (int r = 0; r < n; r++) c.first[r + 1] = c.first[r] + (trial % 2 ? (int)(next() % 40) : (r == (int)(next() % n) ? 37 * n : 5));
    long long W = c.first[n], q = W / n, rem = W % n, above = 0, excess = 0;
    for (int r = 0; r < n; r++) {
      long long cnt = c.first[r + 1] - c.first[r];
      if (cnt > q) { above++; excess += cnt - q; }
    }
    long long minimum = excess - (rem < above ? rem : above);
    lb_task_graph tg = {(int)W, n, 2, chain_nbr, chain_home, chain_initial, &c};
    lb_task_metrics mt;
    char what[96];
    snprintf(what, sizeof what, "%s, unit tasks, trial %d", spec, trial);
    if (!measure(g, &tg, me, mpi, &mt, what)) {
      int ok = mt.valid && mt.migrated == minimum && mt.migrated_weight == (double)minimum && mt.load_max == (double)(q + (rem > 0)) &&
               mt.migrated_weight >= mt.lower_bound && (rem != 0 || mt.lower_bound_exact == (double)minimum);
      if (me == 0)
        printf("%-44s migrated %lld tasks, weight %g, minimum %lld, lower bound %g, max load %g (q %lld, r %lld): %s\n", what,
               mt.migrated, mt.migrated_weight, minimum, mt.lower_bound, mt.load_max, q, rem, ok ? "ok" : "WRONG");
      CHECK(ok);
    }
    free(c.first);
  }
  lb_graph_destroy(&g);
}

/* lbbench's task mesh, rank 0 loaded twice: its tasks weigh 2, the others 1. */
static void task_mesh(const char *spec, int me, int mpi)
{
  lb_graph *g;
  lb_taskmesh mesh = {0};
  lb_task_graph tg;
  if (!CHECK_MSG(!lb_graph_create(spec, &g) && !lb_taskmesh_create(g, "", "point:0:512", 0, &mesh, &tg), "%s: %s", spec, lb_errmsg())) return;
  lb_task_metrics mt;
  char what[96];
  snprintf(what, sizeof what, "%s, task mesh, point:0:512", spec);
  if (!measure(g, &tg, me, mpi, &mt, what)) {
    double want = g->n > 1 ? 512.0 * (g->n - 1) / g->n : 0;
    int ok = mt.valid && mt.migrated_weight == mt.lower_bound && mt.lower_bound == want && mt.lower_bound_exact == want && mt.imbalance == 0;
    if (me == 0)
      printf("%-44s migrated weight %g, lower bound %g (want %g), %lld tasks, imbalance %g: %s\n", what, mt.migrated_weight,
             mt.lower_bound, want, mt.migrated, mt.imbalance, ok ? "ok" : "WRONG");
    CHECK(ok);
  }
  lb_taskmesh_free(&mesh);
  lb_graph_destroy(&g);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int me, P;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  char spec[64];
  snprintf(spec, sizeof spec, "line:%d", P);
  unit_tasks(spec, me, 1);
  snprintf(spec, sizeof spec, "tree:%d:2", P);
  unit_tasks(spec, me, 1);
  if (P == 1) {
    const char *virt[] = {"line:64", "tree:100:3", "mesh3d:4x4x4", "hypercube:6"};
    for (int i = 0; i < 4; i++) unit_tasks(virt[i], me, 0);
  }
  snprintf(spec, sizeof spec, "mesh3d:%dx%dx1", P > 1 ? 2 : 1, P > 2 ? P / 2 : 1);
  task_mesh(spec, me, 1);
  if (P == 1) task_mesh("mesh3d:4x4x4", me, 0);
  const int status = check_finish(MPI_COMM_WORLD);
  if (me == 0) printf("%s on %d processes\n", status ? "FAILED" : "tree moves the fewest homogeneous tasks on both backends", P);
  MPI_Finalize();
  return status;
}
