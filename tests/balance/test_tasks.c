/* Task selection and migration on the virtual backend.
 * 1. A hand-checked case: a chain of 8 tasks, 4 per rank, weights 3 and 1,
 *    flow 4 from rank 0 to rank 1 (the tree method's exact flow).  Gain
 *    selection must send exactly the border task 3 (weight 3: the next,
 *    task 2, would overshoot by more than half its weight), leaving loads
 *    9 and 7, one cut edge of 7, MigrationMax 1, migrated weight 3: the
 *    lower bound for the loads reached (12 -> 9), below the 4 that exact
 *    balance would need.
 * 2. Lieber et al. 2016's BOX and POINT and a random field on 3D rank meshes, with
 *    every diffusive method: selection by edge-cut gain never cuts more
 *    task edges than moving tasks in list (index) order for the same flows;
 *    every task stays on exactly one rank; total weight and task count are
 *    conserved; at least the lower bound for the loads reached is
 *    migrated.
 * 3. A flow through a rank that holds nothing: one pass cannot realise it,
 *    two passes (tasks hop) do (hop_case).
 * 4. Direct transfers below half a task add up (carry_case). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"
#include "bench/taskmesh.h"

/* Neighbours of task id in a chain of *(const int *)ctx tasks. */
static int chain_nbr(const void *ctx, int id, int *nbr)
{
  int k = 0;
  if (id > 0) nbr[k++] = id - 1;
  if (id < *(const int *)ctx - 1) nbr[k++] = id + 1;
  return k;
}

static int chain_home(const void *ctx, int id, int *index)
{
  (void)ctx;
  *index = id % 4;
  return id / 4;
}

static lb_err chain_initial(const void *ctx, int r, lb_task_list *l)
{
  (void)ctx;
  lb_err err = LB_OK;
  for (int i = 0; i < 4 && !err; i++) {
    double x[3] = {4 * r + i, 0, 0};
    err = lb_task_list_add(l, 4 * r + i, r == 0 ? 3 : 1, x);
  }
  return err;
}

static void chain_case(void)
{
  static const int ntasks = 8;
  lb_task_graph tg = {8, 2, 2, chain_nbr, chain_home, chain_initial, &ntasks};
  lb_taskset *ts;
  lb_graph *g;
  lb_params p;
  lb_result res;
  lb_task_metrics mt;
  double load[2];
  const lb_method *m = lb_method_find("tree");
  lb_params_init(&p, m);
  if (!CHECK_MSG(!(lb_graph_create("line:2", &g) || lb_taskset_create(&tg, LB_BACKEND_VIRTUAL, MPI_COMM_WORLD, &ts) || lb_taskset_loads(ts, load) ||
                   lb_balance(g, m, &p, load, &res) || lb_taskset_select(ts, g, res.flow, LB_SELECT_GAIN)),
                 "chain: %s", lb_errmsg()))
    return;
  int dest[4];
  memcpy(dest, lb_taskset_dest(ts, 0), sizeof dest);
  int ok = res.flow[0] == 4 && dest[0] == -1 && dest[1] == -1 && dest[2] == -1 && dest[3] == 1;
  if (!CHECK_MSG(!(lb_taskset_migrate(ts) || lb_taskset_metrics(ts, &mt)), "chain: %s", lb_errmsg())) return;
  ok = ok && mt.load_max == 9 && mt.load_avg == 8 && mt.edges == 7 && mt.edgecut_max == 1 && mt.edgecut_tot == 1.0 / 7 &&
       mt.migrated == 1 && mt.migration_max == 1 && mt.migrated_weight == 3 && mt.lower_bound == 3 && mt.lower_bound_exact == 4 && mt.valid &&
       lb_taskset_list(ts, 1)->n == 5 && lb_taskset_list(ts, 1)->id[4] == 3;
  printf("chain of 8 tasks: flow %g, destinations %d %d %d %d, loads max %g avg %g, cut %lld of %lld, migrated %lld (weight %g, bound %g for the "
         "loads reached, %g for exact balance): %s\n",
         res.flow[0], dest[0], dest[1], dest[2], dest[3], mt.load_max, mt.load_avg, mt.edgecut_max, mt.edges, mt.migrated,
         mt.migrated_weight, mt.lower_bound, mt.lower_bound_exact, ok ? "ok" : "WRONG");
  lb_result_free(&res);
  lb_taskset_destroy(&ts);
  lb_graph_destroy(&g);
  CHECK(ok);
}

/* Three unit tasks in a chain, all on rank 0 of the line 0 - 1 - 2.  The
 * exact flows send 2 to rank 1 and 1 on to rank 2: rank 1 must pass on a
 * task it receives, which one pass cannot (loads 1 2 0), and two passes
 * do (1 1 1: three hops, two of them through rank 1, migration_max 3,
 * migrated weight 3 against the lower bound 2 of the loads reached). */
static int hop_home(const void *ctx, int id, int *index)
{
  (void)ctx;
  *index = id;
  return 0;
}

static lb_err hop_initial(const void *ctx, int r, lb_task_list *l)
{
  lb_err err = LB_OK;
  (void)ctx;
  for (int i = 0; i < 3 && r == 0 && !err; i++) {
    const double x[3] = {i, 0, 0};
    err = lb_task_list_add(l, i, 1, x);
  }
  return err;
}

static void hop_case(int passes, const double *want, int want_passes, long long want_moved, long long want_max)
{
  static const int ntasks = 3;
  lb_task_graph tg = {3, 3, 2, chain_nbr, hop_home, hop_initial, &ntasks};
  lb_taskset *ts = NULL;
  lb_graph *g = NULL;
  lb_result res;
  lb_task_metrics mt;
  double load[3];
  int made = 0, ok;

  memset(&res, 0, sizeof res);
  if (!CHECK_MSG(!(lb_graph_create("line:3", &g) || lb_taskset_create(&tg, LB_BACKEND_VIRTUAL, MPI_COMM_WORLD, &ts)), "hop: %s", lb_errmsg())) return;
  double flow[2];
  for (int q = 0; q < 2; q++) flow[q] = (g->eu[q] + g->ev[q] == 1 ? 2 : 1) * (g->eu[q] < g->ev[q] ? 1 : -1);
  res.n = 3;
  res.flow = flow;
  ok = CHECK_MSG(!(lb_taskset_realise(ts, g, &res, LB_SELECT_GAIN, passes, &made) || lb_taskset_metrics(ts, &mt) || lb_taskset_loads(ts, load)),
                 "hop: %s", lb_errmsg());
  ok = ok && load[0] == want[0] && load[1] == want[1] && load[2] == want[2] && made == want_passes && mt.migrated == want_moved &&
       mt.migration_max == want_max && mt.migrated_weight == (double)want_moved && mt.lower_bound == 2 && mt.valid;
  printf("3 tasks on rank 0 of line:3, flows 2 and 1, at most %d pass%s: loads %g %g %g, %d pass%s, %lld moved (weight %g, bound %g), "
         "migration_max %lld: %s\n", passes, passes > 1 ? "es" : "", load[0], load[1], load[2], made, made > 1 ? "es" : "", mt.migrated,
         mt.migrated_weight, mt.lower_bound, mt.migration_max, ok ? "ok" : "WRONG");
  lb_taskset_destroy(&ts);
  lb_graph_destroy(&g);
  CHECK(ok);
}

/* Direct transfers below half a task: rank 0 of the three tasks sends 0.4
 * to rank 1 and 0.4 to rank 2 (a tree method's pieces of one excess).
 * Each alone moves nothing; the first's shortfall carried to the second
 * sends one task there: loads 2 0 1, one task moved. */
static void carry_case(void)
{
  static const int ntasks = 3;
  lb_task_graph tg = {3, 3, 2, chain_nbr, hop_home, hop_initial, &ntasks};
  lb_transfer xfer[2] = {{0, 1, 0.4}, {0, 2, 0.4}};
  lb_taskset *ts = NULL;
  lb_graph *g = NULL;
  lb_result res;
  lb_task_metrics mt;
  double load[3];
  int ok;

  memset(&res, 0, sizeof res);
  res.n = 3;
  res.ntransfers = 2;
  res.transfer = xfer;
  if (!CHECK_MSG(!(lb_graph_create("line:3", &g) || lb_taskset_create(&tg, LB_BACKEND_VIRTUAL, MPI_COMM_WORLD, &ts)), "carry: %s", lb_errmsg())) return;
  ok = CHECK_MSG(!(lb_taskset_select_result(ts, g, &res, LB_SELECT_GAIN) || lb_taskset_migrate(ts) || lb_taskset_metrics(ts, &mt) ||
                   lb_taskset_loads(ts, load)),
                 "carry: %s", lb_errmsg());
  ok = ok && load[0] == 2 && load[1] == 0 && load[2] == 1 && mt.migrated == 1 && mt.valid;
  printf("transfers of 0.4 and 0.4 tasks from rank 0: loads %g %g %g, %lld moved: %s\n", load[0], load[1], load[2], mt.migrated,
         ok ? "ok" : "WRONG");
  lb_taskset_destroy(&ts);
  lb_graph_destroy(&g);
  CHECK(ok);
}

/* One run with the given selection; fills mt and the total weight and count after migration. */
static lb_err mesh_run(const lb_graph *g, const lb_method *m, const char *scenario, lb_select how,
                       lb_task_metrics *mt, double *w0, double *w1, long long *count)
{
  lb_taskmesh mesh;
  lb_task_graph tg;
  lb_taskset *ts = NULL;
  lb_params p;
  lb_result res;
  double *load = malloc((size_t)g->n * sizeof *load);
  lb_err err = lb_taskmesh_create(g, "", scenario, 0, &mesh, &tg);
  if (err) { free(load); return err; }
  lb_params_init(&p, m);
  p.target = 0.999;
  p.max_iters = 5000;
  if (!(err = lb_taskset_create(&tg, LB_BACKEND_VIRTUAL, MPI_COMM_WORLD, &ts)) && !(err = lb_taskset_loads(ts, load)) &&
      !(err = lb_balance(g, m, &p, load, &res))) {
    *w0 = 0;
    for (int r = 0; r < g->n; r++) *w0 += load[r];
    if (!(err = lb_taskset_select(ts, g, res.flow, how)) && !(err = lb_taskset_migrate(ts)) &&
        !(err = lb_taskset_metrics(ts, mt)) && !(err = lb_taskset_loads(ts, load))) {
      *w1 = 0;
      *count = 0;
      for (int r = 0; r < g->n; r++) { *w1 += load[r]; *count += lb_taskset_list(ts, r)->n; }
    }
    lb_result_free(&res);
  }
  lb_taskset_destroy(&ts);
  lb_taskmesh_free(&mesh);
  free(load);
  return err;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int runs = 0;
  chain_case();
  hop_case(1, (const double[]){1, 2, 0}, 1, 2, 2);
  hop_case(4, (const double[]){1, 1, 1}, 2, 3, 3);
  carry_case();
  const char *specs[] = {"mesh3d:4x2x2", "mesh3d:3x3x2"};
  const char *scenarios[] = {"box", "point", "random:11"};
  const char *methods[] = {"diffusion", "second-order", "chebyshev", "chemotaxis", "dimension-exchange"};
  for (int s = 0; s < 2; s++) {
    lb_graph *g;
    if (!CHECK_MSG(!lb_graph_create(specs[s], &g), "%s", lb_errmsg())) break;
    for (int c = 0; c < 3; c++)
      for (int i = 0; i < 5; i++) {
        const lb_method *m = lb_method_find(methods[i]);
        lb_task_metrics a, b;
        double w0, w1, v0, v1;
        long long n1, n2;
        lb_err err = mesh_run(g, m, scenarios[c], LB_SELECT_GAIN, &a, &w0, &w1, &n1);
        if (!err) err = mesh_run(g, m, scenarios[c], LB_SELECT_INDEX, &b, &v0, &v1, &n2);
        if (!CHECK_MSG(!err, "%s on %s: %s", methods[i], specs[s], lb_errmsg())) continue;
        long long nt = (long long)g->n * 512;
        int ok = a.edgecut_tot <= b.edgecut_tot && a.valid && b.valid && n1 == nt && n2 == nt &&
                 fabs(w1 - w0) <= 1e-12 * w0 && fabs(v1 - v0) <= 1e-12 * v0 &&
                 a.migrated_weight >= a.lower_bound * (1 - 1e-12) && b.migrated_weight >= b.lower_bound * (1 - 1e-12);
        printf("%-18s %-13s %-9s edgecut_tot gain %.6f index %.6f  imbalance %.5f  migrated weight %.1f (bound %.1f)%s\n", methods[i],
               specs[s], scenarios[c], a.edgecut_tot, b.edgecut_tot, a.imbalance, a.migrated_weight, a.lower_bound, ok ? "" : "  FAILED");
        CHECK(ok);
        runs++;
      }
    lb_graph_destroy(&g);
  }
  printf("%s: %d mesh runs\n", check_failures ? "FAILED" : "gain selection never cuts more than index order; tasks and weight conserved", runs);
  MPI_Finalize();
  return check_failures != 0;
}
