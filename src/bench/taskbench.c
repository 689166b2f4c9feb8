/* lbbench's task mode.  Diffusive methods: the rank loads (sums of task
 * weights) go through lb_balance, every rank selects the tasks that realise
 * its flows, and the tasks move.  Zoltan baselines: Zoltan's new parts
 * become the destinations and the tasks move the same way, as do the
 * pieces of the methods that cut a curve of the tasks (taskcurve.h).  Both are then
 * measured by the same lb_taskset_metrics. */
#include "bench/taskbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "bench/chainbench.h"
#include "bench/repeat.h"
#include "bench/taskcurve.h"
#include "bench/taskmesh.h"
#include "bench/tracebench.h"
#include "bench/tracemesh.h"
#include "bench/zoltan_lb.h"

typedef struct {
  int balanced;             /* a balancing method ran (not Zoltan) */
  lb_result res;
  lb_metrics flow;
  double partition_s, select_s; /* select_s: with several passes, their migrations too */
  int passes;               /* passes of selection that moved tasks */
  lb_task_metrics tm;
  int same;                 /* every repetition found the first run's flows */
  lb_spread run, sel, total; /* of the repetitions: method, task selection, both */
  double imbalance0;        /* of the initial loads: max/avg - 1 */
  double beyond_own;        /* what the ranks must send beyond their own initial load, of the total load */
} task_run;

/* The initial imbalance, and the weight the method asks the ranks to send
 * beyond their own initial loads (summed, of the total load): a rank can
 * only pass on tasks it received if tasks hop, and Lieber et al. 2016's one
 * pass of task selection does not let them, so this much of the flows
 * stays unrealised however many tasks a rank holds. */
static lb_err one_pass_bound(const lb_graph *g, const lb_result *res, task_run *tr)
{
  double *out = calloc((size_t)g->n, sizeof *out), total = 0.0, max = 0.0, beyond = 0.0;
  if (!out) return lb_error(LB_ERR_MEM, "out of memory for %d loads", g->n);
  if (res->ntransfers > 0)
    for (int t = 0; t < res->ntransfers; t++) out[res->transfer[t].from] += res->transfer[t].amount;
  else
    for (int k = 0; k < g->m; k++) out[res->flow[k] > 0 ? g->eu[k] : g->ev[k]] += fabs(res->flow[k]);
  for (int r = 0; r < g->n; r++) {
    total += res->load0[r];
    max = fmax(max, res->load0[r]);
    beyond += fmax(0.0, out[r] - res->load0[r]);
  }
  free(out);
  tr->imbalance0 = total > 0.0 ? max * g->n / total - 1.0 : 0.0;
  tr->beyond_own = total > 0.0 ? beyond / total : 0.0;
  return LB_OK;
}

static lb_err max_time(const lb_params *p, double *t)
{
  if (p->backend == LB_BACKEND_MPI && MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_MAX, p->comm) != MPI_SUCCESS)
    return lb_error(LB_ERR_MPI, "MPI_Allreduce failed");
  return LB_OK;
}

/* Lieber et al. 2016's protocol in task mode: the method with the first run's
 * iteration count and no stop check, then the task selection, each timed
 * (the selection is redone from the first run's flows afterwards). */
static lb_err repeat_tasks(const lb_taskbench_opts *o, const lb_graph *g, const lb_method *m, lb_taskset *ts, const double *load, task_run *tr)
{
  int n = o->repeat;
  double *t = malloc(3 * (size_t)n * sizeof *t);
  if (!t) return lb_error(LB_ERR_MEM, "-repeat %d: out of memory", n);
  lb_params q = lb_repeat_params(m, &o->p, &tr->res);
  lb_err err = LB_OK;
  tr->same = 1;
  for (int i = 0; i < n && !err; i++) {
    lb_result r;
    if ((err = lb_balance(g, m, &q, load, &r))) break;
    double t0 = MPI_Wtime();
    err = lb_taskset_select(ts, g, r.flow, o->select);
    t[n + i] = MPI_Wtime() - t0;
    if (!err) err = max_time(&o->p, &t[n + i]);
    t[i] = r.runtime_s;
    t[2 * n + i] = t[i] + t[n + i];
    tr->same &= r.iterations == tr->res.iterations && memcmp(r.flow, tr->res.flow, (size_t)g->m * sizeof *r.flow) == 0;
    lb_result_free(&r);
  }
  if (!err) {
    tr->run = lb_spread_of(t, n);
    tr->sel = lb_spread_of(t + n, n);
    tr->total = lb_spread_of(t + 2 * n, n);
  }
  free(t);
  return err;
}

/* The tasks of a run, as the report names them: the mesh's T, or the trace's cells. */
typedef struct {
  const lb_taskmesh *mesh;
  const lb_load_trace *trace;
  int ntasks;
  int split;                /* -mesh: tasks start on the start split with their face neighbours */
  double start_imbalance;   /* -mesh: of the start split's loads, max/avg - 1 */
  double load_total;        /* the tasks' total weight at the start */
  double degree;            /* -mesh: the subdomain graph of the start split: mean degree, */
  int diameter, exact, connected, edges; /* diameter (exact or a lower bound), connected, edges */
  lb_task_metrics tm0;      /* of the start */
  int max_nbr;              /* -mesh: the most face neighbours of a task (the task set's row width) */
} task_source;

static void report(const lb_taskbench_opts *o, const lb_graph *g, const task_source *src, const task_run *tr, FILE *f)
{
  const lb_taskmesh *mesh = src->mesh;
  const lb_task_metrics *m = &tr->tm;
  const char *backend = o->p.backend == LB_BACKEND_MPI ? "mpi" : "virtual", *sel = o->select == LB_SELECT_GAIN ? "gain" : "index";
  if (!f) {
    if (mesh)
      printf("lbbench: %s on %s (%d ranks, %s backend), %dx%dx%d tasks, scenario %s\n", o->method, g->spec, g->n, backend, mesh->T[0], mesh->T[1],
             mesh->T[2], o->scenario);
    else if (!src->split)
      printf("lbbench: %s on %s (%d ranks, %s backend), %d tasks: the cells of %dD trace cycle %d (%d ranks, %s weights) x %d, scenario %s\n", o->method,
             g->spec, g->n, backend, src->ntasks, src->trace->dim, src->trace->cycle, src->trace->nranks, lb_trace_weight_name(src->trace->weights),
             o->replicate, o->scenario);
    else {
      printf("lbbench: %s on %s (%d ranks, %s backend), %d tasks: the cells of %dD trace cycle %d (%d ranks, %s weights, refined %d times) with their "
             "face neighbours on mesh %s, start split %s, scenario %s\n", o->method, g->spec, g->n, backend, src->ntasks, src->trace->dim, src->trace->cycle,
             src->trace->nranks, lb_trace_weight_name(src->trace->weights), o->refine, o->mesh, lb_trace_split_name(o->split), o->scenario);
      printf("  subdomain graph of the start split: %d edges, mean degree %.4g, diameter %s%d%s  start imbalance %.6g (max/avg - 1)  "
             "tasks have up to %d neighbours\n", src->edges, src->degree, src->exact ? "" : ">= ", src->diameter, src->connected ? "" : " (NOT connected)",
             src->start_imbalance, src->max_nbr);
    }
    if (tr->balanced) {
      printf("  iterations %d  target_iteration %d  rounds %lld  messages %lld  bytes %lld  collectives %lld  runtime %.6f s  setup %.6f s  stop %s\n",
             tr->res.iterations, tr->res.target_iteration, tr->res.rounds, tr->res.messages, tr->res.bytes, tr->res.collectives, tr->res.runtime_s, tr->res.setup_s, lb_stop_name(tr->res.stop));
      lb_bench_memory_print(lb_method_find(o->method), &tr->res);
      printf("  transfer_tot %.6g (of the total load)  transfer_max %.6g (of the average load)  task selection (%s) %.6f s\n", tr->flow.transfer_tot, tr->flow.transfer_max, sel, tr->select_s);
      lb_print_spectrum(&tr->res);
      if (o->passes > 1) printf("  selection passes %d (at most %d; tasks may hop; the time above includes their migrations)\n", tr->passes, o->passes);
      printf("  before: imbalance %.6g (max/avg - 1)  beyond_own %.6g (of the total load: flow the ranks must send beyond their own tasks, which "
             "one pass of task selection cannot)\n", tr->imbalance0, tr->beyond_own);
      if (o->repeat > 0)
        printf("  %d repeats of %d iterations without stop check: runtime median %.6f s, task selection median %.6f s, "
               "total median %.6f s  25%%-75%% %.6f-%.6f s  flows %s\n", o->repeat, tr->res.iterations, tr->run.median, tr->sel.median,
               tr->total.median, tr->total.p25, tr->total.p75, tr->same ? "identical to the first run" : "DIFFERENT from the first run");
    } else {
      printf("  partition %.6f s\n", tr->partition_s);
    }
    printf("  after migration: imbalance %.6g (max/avg - 1)  migration_max %lld tasks (sent + received, busiest rank)  migration_tot %.6g "
           "(fraction of all tasks)\n", m->imbalance, m->migration_max, m->migration_tot);
    printf("  migrated weight %.6g  lower bound %.6g for the loads reached, %.6g for exact balance\n", m->migrated_weight, m->lower_bound,
           m->lower_bound_exact);
    printf("  edgecut_max %lld task edges (busiest rank)  edgecut_tot %.6g (fraction of all %lld task edges)  valid partition: %s\n", m->edgecut_max,
           m->edgecut_tot, m->edges, m->valid ? "yes" : "NO");
    if (src->split)
      printf("  at the start: edgecut_max %lld task edges  edgecut_tot %.6g  total weight %.17g, after migration %.17g\n", src->tm0.edgecut_max,
             src->tm0.edgecut_tot, src->load_total, m->load_avg * g->n);
    return;
  }
  json_line j;
  json_run_header(&j, f, o->method, g->spec, g->n, backend, o->scenario);
  if (mesh) {
    const long long T[3] = {mesh->T[0], mesh->T[1], mesh->T[2]};
    json_ints(&j, "tasks", 3, T);
  } else {
    json_int(&j, "trace_cycle", src->trace->cycle);
    json_int(&j, "trace_ranks", src->trace->nranks);
    json_int(&j, "trace_cells", (long long)src->trace->ncells);
    json_int(&j, "replicate", o->replicate);
    json_int(&j, "refine", o->refine);
  }
  if (src->split) {
    json_str(&j, "mesh", o->mesh);
    json_str(&j, "trace_split", lb_trace_split_name(o->split));
    json_real(&j, "start_imbalance", src->start_imbalance);
    json_int(&j, "subdomain_edges", src->edges);
    json_real(&j, "subdomain_degree_mean", src->degree);
    json_int(&j, "subdomain_diameter", src->diameter);
    json_bool(&j, "subdomain_diameter_exact", src->exact);
    json_bool(&j, "subdomain_connected", src->connected);
    json_int(&j, "task_max_neighbours", src->max_nbr);
  }
  json_int(&j, "ntasks", src->ntasks);
  json_real(&j, "load_total_initial", src->load_total);
  json_real(&j, "load_total", m->load_avg * g->n);
  if (tr->balanced) {
    json_str(&j, "select", sel);
    json_int(&j, "iterations", tr->res.iterations);
    json_int(&j, "target_iteration", tr->res.target_iteration);
    json_int(&j, "rounds", tr->res.rounds);
    json_int(&j, "messages", tr->res.messages);
    json_int(&j, "bytes", tr->res.bytes);
    json_int(&j, "collectives", tr->res.collectives);
    lb_bench_memory_json(&j, lb_method_find(o->method), &tr->res);
    json_real(&j, "runtime_s", tr->res.runtime_s);
    json_real(&j, "setup_s", tr->res.setup_s);
    json_spectrum(&j, &tr->res);
    json_real(&j, "select_s", tr->select_s);
    json_int(&j, "select_passes", o->passes > 1 ? tr->passes : 1);
    json_int(&j, "select_max_passes", o->passes);
    json_str(&j, "stop_reason", lb_stop_name(tr->res.stop));
    if (o->repeat > 0) {
      json_int(&j, "repeat", o->repeat);
      json_bool(&j, "repeat_identical", tr->same);
      json_spread(&j, "runtime", &tr->run);
      json_spread(&j, "select", &tr->sel);
      json_spread(&j, "total", &tr->total);
    }
    json_real(&j, "transfer_tot", tr->flow.transfer_tot);
    json_real(&j, "transfer_max", tr->flow.transfer_max);
    json_real(&j, "initial_imbalance", tr->imbalance0);
    json_real(&j, "beyond_own", tr->beyond_own);
  } else {
    json_real(&j, "runtime_s", tr->partition_s);
  }
  json_real(&j, "imbalance", m->imbalance);
  json_real(&j, "load_max", m->load_max);
  json_real(&j, "load_avg", m->load_avg);
  json_int(&j, "migration_max", m->migration_max);
  json_real(&j, "migration_tot", m->migration_tot);
  json_int(&j, "migrated_tasks", m->migrated);
  json_real(&j, "migrated_weight", m->migrated_weight);
  json_real(&j, "migration_lower_bound", m->lower_bound);
  json_real(&j, "migration_lower_bound_exact", m->lower_bound_exact);
  json_int(&j, "initial_edgecut_max", src->tm0.edgecut_max);
  json_real(&j, "initial_edgecut_tot", src->tm0.edgecut_tot);
  json_int(&j, "edgecut_max", m->edgecut_max);
  json_real(&j, "edgecut_tot", m->edgecut_tot);
  json_int(&j, "task_edges", m->edges);
  json_bool(&j, "valid", m->valid);
  json_end(&j);
}

/* "subdomains:P": P, or 0 when spec is another graph. */
static lb_err subdomains_ranks(const char *spec, int *P)
{
  char *end;
  *P = 0;
  if (strncmp(spec, "subdomains:", 11)) return LB_OK;
  const long v = strtol(spec + 11, &end, 10);
  if (end == spec + 11 || *end || v < 1 || v > (1 << 26))
    return lb_error(LB_ERR_GRAPH, "graph '%s': expected subdomains:P with 1 <= P <= %d (a graph's most ranks)", spec, 1 << 26);
  *P = (int)v;
  return LB_OK;
}

/* -tasks trace -mesh: the cells with their true face neighbours on P
 * ranks, each rank starting with its part of the start split, and the
 * processor graph: -graph's, or with subdomains:P the ranks whose parts
 * share a face. */
static lb_err trace_split_tasks(const lb_taskbench_opts *o, lb_load_trace *trace, lb_tracetasks *tt, lb_task_graph *tg, lb_graph **g, task_source *src)
{
  const lb_trace_replay rp = {o->replicate, o->refine, o->split, o->mesh, lb_zoltan_is_method(o->method) ? 1 : 2};
  lb_load_trace prev;
  int64_t n, *counts = NULL, *xadj = NULL;
  double *w = NULL;
  int P, *adj = NULL, maxdeg = 0;
  char path[4096];
  memset(&prev, 0, sizeof prev);
  if (o->replicate != 1)
    return lb_error(LB_ERR_ARG, "-replicate %d: with -mesh the tasks are the recorded cells with their true neighbours; grow P with -refine, not copies",
                    o->replicate);
  lb_err err = subdomains_ranks(o->graph, &P);
  if (!err && !P && !(err = lb_graph_create(o->graph, g))) P = (*g)->n;
  if (!err) err = lb_trace_open_scenario(o->scenario, &rp, trace, &prev);
  if (!err && !(counts = malloc((size_t)P * sizeof *counts))) err = lb_error(LB_ERR_MEM, "-graph %s: out of memory", o->graph);
  if (!err) err = lb_trace_curve(trace, &prev, &rp, P, &n, &w, counts);
  free(w);
  lb_trace_free(&prev);
  /* the file's name for messages: the scenario less "trace:" and a cycle */
  snprintf(path, sizeof path, "%s", o->scenario + 6);
  char *colon = strrchr(path, ':');
  if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) *colon = '\0';
  if (!err) err = lb_trace_mesh_adjacency(o->mesh, path, trace, &xadj, &adj, &maxdeg);
  if (!err) err = lb_tracetasks_create_split(P, trace, counts, xadj, adj, maxdeg, tt, tg);
  else {
    free(xadj);
    free(adj);
  }
  free(counts);
  if (!err && !*g) err = lb_tracetasks_subdomains(tt, o->graph, g);
  if (err) return err;
  /* the subdomain graph of the start split, whichever graph the method runs on */
  lb_graph *sg = NULL;
  if ((err = lb_tracetasks_subdomains(tt, "subdomains", &sg))) return err;
  err = lb_graph_degree_diameter(sg, &src->degree, &src->diameter, &src->exact, &src->connected);
  src->edges = sg->m;
  lb_graph_destroy(&sg);
  src->trace = trace;
  src->split = 1;
  src->max_nbr = maxdeg;
  return err;
}

/* A method that cuts a curve (sfc-exact, hiersfc): the tasks along
 * Hilbert's curve over the task mesh, or a trace's along the app's, cut
 * into one piece per rank, as Zoltan's parts are taken. */
static lb_err curve_partition(const lb_taskbench_opts *o, const lb_graph *g, lb_taskset *ts, const task_source *src, const lb_method *m, task_run *tr)
{
  int *pos = NULL;
  if (o->repeat > 0 || o->passes > 1)
    return lb_error(LB_ERR_ARG, "-repeat and -select_passes are for the balancing methods' flows, not %s's cut of the curve", o->method);
  lb_err err = src->mesh ? lb_taskcurve_hilbert(src->mesh->T, &pos) : LB_OK;
  if (!err) err = lb_taskcurve_partition(ts, g->n, src->ntasks, pos, m, &o->p, &tr->partition_s);
  free(pos);
  return err;
}

lb_err lb_taskbench_run(const lb_taskbench_opts *o, int me)
{
  lb_graph *g = NULL;
  lb_taskmesh mesh = {0};
  lb_load_trace trace;
  lb_tracetasks tt;
  lb_task_graph tg;
  task_source src;
  memset(&src, 0, sizeof src);
  lb_taskset *ts = NULL;
  double *load = NULL;
  task_run tr;
  memset(&tr, 0, sizeof tr);
  int zoltan = lb_zoltan_is_method(o->method);
  const lb_method *m = zoltan ? NULL : lb_method_find(o->method);
  const int traced = lb_trace_is_scenario(o->scenario);
  memset(&trace, 0, sizeof trace);
  memset(&tt, 0, sizeof tt);
  lb_err err = LB_OK;
  if (traced && o->mesh) {
    if ((err = trace_split_tasks(o, &trace, &tt, &tg, &g, &src))) goto out;
  } else if (traced) {
    const lb_trace_replay rp = {o->replicate, o->refine, LB_TRACE_SPLIT_APP, NULL, 0};
    if ((err = lb_graph_create(o->graph, &g)) || (err = lb_trace_open_scenario(o->scenario, &rp, &trace, NULL)) ||
        (err = lb_tracetasks_create(g, &trace, o->replicate, &tt, &tg)))
      goto out;
    src.trace = &trace;
  } else {
    if ((err = lb_graph_create(o->graph, &g))) goto out;
    if ((err = lb_taskmesh_create(g, o->tasks, o->scenario, o->base, &mesh, &tg))) goto out;
    src.mesh = &mesh;
  }
  src.ntasks = tg.ntasks;
  /* only Zoltan's baselines read the tasks' coordinates; the trace's cells
   * go before the task set is built, their centres and weights once it holds them */
  if (traced) lb_trace_release_cells(&trace, zoltan);
  if ((err = lb_taskset_create_coords(&tg, zoltan, o->p.backend, o->p.comm, &ts))) goto out;
  if (traced) {
    lb_trace_release_cells(&trace, 0);
    lb_tracetasks_release(&tt);
  }
  {
    double *l0 = malloc((size_t)g->n * sizeof *l0), max = 0;
    if (!l0) { err = lb_error(LB_ERR_MEM, "out of memory for %d loads", g->n); goto out; }
    err = lb_taskset_loads(ts, l0);
    src.load_total = 0;
    for (int r = 0; r < g->n; r++) {
      src.load_total += l0[r];
      max = fmax(max, l0[r]);
    }
    src.start_imbalance = src.load_total > 0 ? max * g->n / src.load_total - 1.0 : 0.0;
    free(l0);
    if (err) goto out;
  }
  /* the start's edge cut, which the app measures as its edge_cut */
  if ((err = lb_taskset_metrics(ts, &src.tm0))) goto out;
  if (zoltan) {
    if ((err = lb_zoltan_partition(ts, o->method, o->p.backend, o->p.comm, o->zoltan_tol, &tr.partition_s))) goto out;
  } else if (m->partition) {
    if ((err = curve_partition(o, g, ts, &src, m, &tr))) goto out;
  } else {
    load = malloc((size_t)g->n * sizeof *load);
    if (!load) { err = lb_error(LB_ERR_MEM, "out of memory for %d loads", g->n); goto out; }
    if ((err = lb_taskset_loads(ts, load)) || (err = lb_balance(g, m, &o->p, load, &tr.res))) goto out;
    tr.balanced = 1;
    if ((err = lb_metrics_compute(&tr.res, &tr.flow)) || (err = one_pass_bound(g, &tr.res, &tr))) goto out;
    if (o->repeat > 0 && (err = repeat_tasks(o, g, m, ts, load, &tr))) goto out;
    double t0 = MPI_Wtime();
    if (o->passes > 1) err = lb_taskset_realise(ts, g, &tr.res, o->select, o->passes, &tr.passes);
    else err = lb_taskset_select_result(ts, g, &tr.res, o->select);
    if (err) goto out;
    tr.select_s = MPI_Wtime() - t0;
    if ((err = max_time(&o->p, &tr.select_s))) goto out;
  }
  /* one pass (and Zoltan's parts) moves here; several moved as they went */
  if ((!tr.passes && (err = lb_taskset_migrate(ts))) || (err = lb_taskset_metrics(ts, &tr.tm))) goto out;
  if (me == 0) {
    report(o, g, &src, &tr, NULL);
    if (o->json && o->json[0]) {
      FILE *f = fopen(o->json, "a");
      if (!f) { err = lb_error(LB_ERR_FILE, "-json '%s': cannot open for appending", o->json); goto out; }
      report(o, g, &src, &tr, f);
      if (fclose(f)) err = lb_error(LB_ERR_FILE, "-json '%s': write failed", o->json);
    }
  }
out:
  if (tr.balanced) lb_result_free(&tr.res);
  free(load);
  lb_taskset_destroy(&ts);
  lb_taskmesh_free(&mesh);
  lb_tracetasks_free(&tt);
  lb_trace_free(&trace);
  lb_graph_destroy(&g);
  return err;
}
