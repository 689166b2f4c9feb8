/* Task selection and migration on P MPI processes (P = 1, 2, 4) and on P
 * virtual ranks in one process must agree exactly: every rank ends with the
 * same tasks (ids, weights, coordinates, in the same order) and all of
 * Lieber et al. 2016's metrics are equal, for every registered method, both selection
 * orders, one pass and up to 8 passes (tasks hop), and every rank mesh of P
 * ranks below. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"
#include "bench/taskmesh.h"

typedef struct {
  lb_task_metrics mt;
  lb_taskmesh mesh; /* read by the task set's callbacks: lives as long as ts */
  lb_taskset *ts;
} outcome;

static void outcome_free(outcome *o)
{
  lb_taskset_destroy(&o->ts);
  lb_taskmesh_free(&o->mesh);
}

static lb_err run(const lb_graph *g, const lb_method *m, const char *scenario, lb_select how, int passes, lb_backend be, outcome *out)
{
  lb_task_graph tg;
  lb_params p;
  lb_result res;
  char tasks[64];
  snprintf(tasks, sizeof tasks, "%dx%dx%d", 4 * g->dims[0], 4 * g->dims[1], 4 * g->dims[2]);
  out->ts = NULL;
  lb_err err = lb_taskmesh_create(g, tasks, scenario, 0, &out->mesh, &tg);
  if (err) return err;
  double *load = malloc((size_t)g->n * sizeof *load);
  lb_params_init(&p, m);
  p.backend = be;
  p.comm = MPI_COMM_WORLD;
  if (!(m->flags & LB_TERMINATES)) { p.target = 0.999; p.max_iters = 500; }
  if (!(err = lb_taskset_create(&tg, be, MPI_COMM_WORLD, &out->ts)) && !(err = lb_taskset_loads(out->ts, load)) &&
      !(err = lb_balance(g, m, &p, load, &res))) {
    int made;
    if (!(err = lb_taskset_realise(out->ts, g, &res, how, passes, &made))) err = lb_taskset_metrics(out->ts, &out->mt);
    lb_result_free(&res);
  }
  free(load);
  return err;
}

static int same_metrics(const lb_task_metrics *a, const lb_task_metrics *b)
{
  return a->load_max == b->load_max && a->load_avg == b->load_avg && a->imbalance == b->imbalance &&
         a->migration_max == b->migration_max && a->migration_tot == b->migration_tot && a->migrated == b->migrated &&
         a->migrated_weight == b->migrated_weight && a->lower_bound == b->lower_bound && a->edgecut_max == b->edgecut_max &&
         a->edgecut_tot == b->edgecut_tot && a->edges == b->edges && a->valid == b->valid;
}

static int same_list(const lb_task_list *a, const lb_task_list *b)
{
  return a->n == b->n && memcmp(a->id, b->id, (size_t)a->n * sizeof *a->id) == 0 &&
         memcmp(a->w, b->w, (size_t)a->n * sizeof *a->w) == 0 && memcmp(a->x, b->x, 3 * (size_t)a->n * sizeof *a->x) == 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int me, P, runs = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  char specs[3][32];
  int ns = 0;
  if (P == 1) snprintf(specs[ns++], 32, "mesh3d:1x1x1");
  if (P == 2) { snprintf(specs[ns++], 32, "mesh3d:2x1x1"); snprintf(specs[ns++], 32, "mesh3d:1x1x2"); }
  if (P == 4) { snprintf(specs[ns++], 32, "mesh3d:2x2x1"); snprintf(specs[ns++], 32, "mesh3d:4x1x1"); snprintf(specs[ns++], 32, "mesh3d:1x2x2"); }
  const char *scenarios[] = {"random:5", "point", "box"};
  for (int s = 0; s < ns; s++) {
    lb_graph *g;
    if (!CHECK_MSG(!lb_graph_create(specs[s], &g), "%s: %s", specs[s], lb_errmsg())) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int c = 0; c < 3; c++) {
      if (P == 1 && c > 0) continue; /* point and box need two ranks */
      for (int i = 0; i < lb_method_count(); i++)
        for (int variant = 0; variant < 3; variant++) {
          const lb_method *m = lb_method_get(i);
          const lb_select how = variant == 1 ? LB_SELECT_INDEX : LB_SELECT_GAIN;
          const int passes = variant == 2 ? 8 : 1;
          outcome v, q;
          lb_err ev = run(g, m, scenarios[c], how, passes, LB_BACKEND_VIRTUAL, &v);
          lb_err em = run(g, m, scenarios[c], how, passes, LB_BACKEND_MPI, &q);
          if (CHECK_MSG(ev == em, "%s on %s: virtual says %d, MPI %d (%s)", m->name, specs[s], ev, em, lb_errmsg()) &&
              CHECK_MSG(!ev || ev == LB_ERR_UNSUPPORTED, "%s on %s: %s", m->name, specs[s], lb_errmsg()) && !ev) {
            int ok = same_metrics(&v.mt, &q.mt) && same_list(lb_taskset_list(v.ts, me), lb_taskset_list(q.ts, me)) && v.mt.valid;
            MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            if (me == 0)
              printf("%-20s %-13s %-8s %-5s %d pass%s %s  moved %lld  imbalance %.6g  edgecut_tot %.6g\n", m->name, specs[s], scenarios[c],
                     how == LB_SELECT_GAIN ? "gain" : "index", passes, passes > 1 ? "es" : "  ", ok ? "identical" : "DIFFERENT", q.mt.migrated,
                     q.mt.imbalance, q.mt.edgecut_tot);
            CHECK(ok);
            runs++;
          }
          outcome_free(&v);
          outcome_free(&q);
        }
    }
    lb_graph_destroy(&g);
  }
  const int status = check_finish(MPI_COMM_WORLD);
  if (me == 0) printf("%s on %d processes: %d runs\n", status ? "FAILED" : "task moves and metrics agree on both backends", P, runs);
  MPI_Finalize();
  return status;
}
