/* lbbench: run any registered balancing method on any processor graph,
 * on the MPI ranks it was started with or on virtual ranks in one process,
 * and report rounds, messages, bytes, run time and the quality metrics,
 * as text and as one JSON line per run. */
#include <petscsys.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "lboptions/lboptions.h"
#include "util/fileio.h"
#include "util/options.h"
#include "util/unknown_options.h"
#include "util/json.h"
#include "bench/chainbench.h"
#include "bench/offloadbench.h"
#include "bench/repeat.h"
#include "bench/scenario.h"
#include "bench/stepbench.h"
#include "bench/taskbench.h"
#include "bench/tracebench.h"
#include "bench/zoltan_lb.h"

static const char help[] =
  "lbbench: a balancing method on a processor graph.\n"
  "  lbbench -graph SPEC -scenario SPEC -lb_method NAME [-virtual] [-trace] [-repeat N] [-capacity file:PATH] [-json FILE]\n"
  "  lbbench -chain CELLS -graph line:P|ring:P -scenario SPEC -lb_method NAME [-virtual] [-json FILE]\n"
  "  lbbench -graph mesh3d:AxBxC -tasks [AxBxC] -scenario point|box|file:PATH -lb_method NAME|zoltan-rcb|zoltan-hsfc|zoltan-graph\n"
  "  lbbench -chain -graph line:P|ring:P -scenario trace:FILE[:CYCLE] [-trace_split carry|app|even] [-refine K] [-replicate R] -lb_method NAME\n"
  "  lbbench -chain -offload -graph line:P -scenario trace:FILE[:CYCLE] [-trace_split carry|app|even] [-refine K] [-replicate R] [-virtual]\n"
  "  lbbench -chain -step -virtual -graph line:P|ring:P -scenario trace:FILE[:CYCLE] -lb_method NAME [-trace_split carry|app|even] [-refine K] [-replicate R]\n"
  "  lbbench -graph subdomains:P|SPEC -tasks trace -scenario trace:FILE[:CYCLE] -mesh MESH [-trace_split carry|app|even] [-refine K] -lb_method NAME|zoltan-*\n"
  "  lbbench -graph mesh2d:AxB|mesh3d:AxBxC -tasks trace -scenario trace:FILE[:CYCLE] [-refine K] [-replicate R] -lb_method NAME|zoltan-*\n"
  "    (without -mesh: the cells in equal-area slabs of the ranks, a task's neighbours the cells next to it on the curve)\n\n";

#define MAX_INJECT 64
#define MAX_TRACE_RANKS 4096

typedef struct {
  int me, trace, phase;
  double *all;
  char *json;            /* "[[...],[...]" built as phases arrive */
  size_t len, cap;
} trace_ctx;

static lb_err append(trace_ctx *t, const char *s)
{
  size_t k = strlen(s);
  if (t->len + k + 1 > t->cap) {
    size_t cap = 2 * (t->len + k + 1);
    char *p = realloc(t->json, cap);
    if (!p) return lb_error(LB_ERR_MEM, "out of memory for the trace");
    t->json = p;
    t->cap = cap;
  }
  memcpy(t->json + t->len, s, k + 1);
  t->len += k;
  return LB_OK;
}

/* Prints "phase k: l0 l1 ..." and keeps the vector for the JSON line. */
static lb_err trace_loads(trace_ctx *t, int n, const double *load)
{
  char num[40];
  lb_err err = append(t, t->phase ? ",[" : "[[");
  for (int r = 0; !err && r < n; r++) {
    snprintf(num, sizeof num, r ? ",%.17g" : "%.17g", load[r]);
    err = append(t, num);
  }
  if (!err) err = append(t, "]");
  if (t->me == 0) {
    printf("phase %d:", t->phase);
    for (int r = 0; r < n; r++) printf(" %g", load[r]);
    printf("\n");
  }
  t->phase++;
  return err;
}

static lb_err observe(lb_run *run, void *ctx)
{
  trace_ctx *t = ctx;
  lb_err err = lb_run_gather_loads(run, t->all);
  return err ? err : trace_loads(t, lb_run_graph(run)->n, t->all);
}

typedef struct {
  char graph[PETSC_MAX_PATH_LEN], scenario[PETSC_MAX_PATH_LEN], method[64], json[PETSC_MAX_PATH_LEN], scale[64];
  char capacity[PETSC_MAX_PATH_LEN];
  char tasks[64], chain_cells[32], trace_split[16], mesh[PETSC_MAX_PATH_LEN];
  int select;            /* index into select_names */
  PetscBool virt, trace, costs, task_mode, chain_set, help_only, offload, step;
  const lb_method *m;    /* NULL: a Zoltan method, or none given */
  lb_err err;            /* a bad value the option reader left to bench() */
  PetscReal zoltan_tol;
  PetscReal base;
  PetscInt chain, repeat, replicate, refine, passes;
  lb_params p;
  lb_inject inject[MAX_INJECT];
} bench_opts;

/* -capacity file:PATH: one positive capacity per rank of g. */
static lb_err read_capacity(const char *spec, const lb_graph *g, double *cap)
{
  if (strncmp(spec, "file:", 5) != 0 || !spec[5]) return lb_error(LB_ERR_ARG, "-capacity '%s': expected file:PATH", spec);
  char what[320], msg[512];
  snprintf(what, sizeof what, "the %d ranks of graph '%s'", g->n, g->spec);
  lb_err err = lb_read_values(spec + 5, g->n, what, cap);
  if (err) {
    snprintf(msg, sizeof msg, "%s", lb_errmsg());
    return lb_error(err, "-capacity: %s", msg);
  }
  for (int r = 0; r < g->n; r++)
    if (!(cap[r] > 0)) return lb_error(LB_ERR_ARG, "-capacity '%s': capacity %g of rank %d must be positive", spec, cap[r], r);
  return LB_OK;
}

/* The repetitions of Lieber et al. 2016's protocol; *same says whether every one
 * ended at the first run's loads after as many iterations. */
static lb_err repeat_runs(const lb_graph *g, const lb_method *m, const lb_params *p, const double *load, const lb_result *first,
                          int n, double *t, int *same)
{
  lb_params q = lb_repeat_params(m, p, first);
  *same = 1;
  for (int i = 0; i < n; i++) {
    lb_result r;
    lb_err err = lb_balance(g, m, &q, load, &r);
    if (err) return err;
    t[i] = r.runtime_s;
    *same &= r.iterations == first->iterations && memcmp(r.load, first->load, (size_t)g->n * sizeof *r.load) == 0;
    lb_result_free(&r);
  }
  return LB_OK;
}

/* One run; rank 0 prints and appends the JSON line.  stat gets the
 * iteration count and the Melhem et al. 1991 migration and imbalance costs. */
static lb_err run_one(bench_opts *o, const lb_method *m, const char *spec, int me, double stat[3])
{
  lb_graph *g = NULL;
  double *load = NULL, *cap = NULL, *times = NULL;
  trace_ctx t = {me, 0, 0, NULL, NULL, 0, 0};
  lb_result res;
  lb_spread sp = {0, 0, 0, 0, 0};
  int have_res = 0, same = 1, nrep = (int)o->repeat;
  lb_err err = lb_graph_create(spec, &g);
  if (err) goto out;
  load = malloc((size_t)g->n * sizeof *load);
  if (!load) { err = lb_error(LB_ERR_MEM, "out of memory for %d loads", g->n); goto out; }
  if ((err = lb_scenario_loads(g, o->scenario, o->base, load))) goto out;
  lb_params p = o->p;
  if (o->capacity[0]) {
    cap = malloc((size_t)g->n * sizeof *cap);
    if (!cap) { err = lb_error(LB_ERR_MEM, "out of memory for %d capacities", g->n); goto out; }
    if ((err = read_capacity(o->capacity, g, cap))) goto out;
    p.capacity = cap;
  }
  if (o->trace) {
    if (g->n > MAX_TRACE_RANKS) { err = lb_error(LB_ERR_ARG, "-trace prints every load: use it on graphs of at most %d ranks", MAX_TRACE_RANKS); goto out; }
    t.all = malloc((size_t)g->n * sizeof *t.all);
    if (!t.all) { err = lb_error(LB_ERR_MEM, "out of memory for the trace"); goto out; }
    p.observer = observe;
    p.observer_ctx = &t;
    if ((err = trace_loads(&t, g->n, load))) goto out;
  }
  if ((err = lb_balance(g, m, &p, load, &res))) goto out;
  have_res = 1;
  lb_metrics mt;
  if ((err = lb_metrics_compute(&res, &mt))) goto out;
  stat[0] = res.iterations;
  stat[1] = res.migration_cost;
  stat[2] = res.imbalance_cost;
  if (nrep > 0) {
    times = malloc((size_t)nrep * sizeof *times);
    if (!times) { err = lb_error(LB_ERR_MEM, "-repeat %d: out of memory", nrep); goto out; }
    if ((err = repeat_runs(g, m, &p, load, &res, nrep, times, &same))) goto out;
    sp = lb_spread_of(times, nrep);
  }
  /* With capacities, balance is measured against each rank's share. */
  double over_share = 0, total = 0, capsum = 0;
  for (int r = 0; cap && r < g->n; r++) { total += res.load0[r]; capsum += cap[r]; }
  for (int r = 0; cap && r < g->n; r++)
    if (res.load[r] * capsum / (total * cap[r]) > over_share) over_share = res.load[r] * capsum / (total * cap[r]);
  if (me == 0) {
    const char *backend = p.backend == LB_BACKEND_MPI ? "mpi" : "virtual";
    printf("lbbench: %s on %s (%d ranks, %s backend), scenario %s\n", m->name, g->spec, g->n, backend, o->scenario);
    printf("  iterations %d  target_iteration %d  rounds %lld  messages %lld  bytes %lld  collectives %lld  runtime %.6f s  setup %.6f s  stop %s\n",
           res.iterations, res.target_iteration, res.rounds, res.messages, res.bytes, res.collectives, res.runtime_s, res.setup_s, lb_stop_name(res.stop));
    lb_bench_memory_print(m, &res);
    printf("  max/avg %.6f  I%% %.4f  L2 %.6g (load units)  transfer_tot %.6g (of the total load)  transfer_max %.6g (of the average load)  "
           "migrated %.6g (load units)  unit_hops %.6g (load units x edges)\n",
           mt.max_over_avg, mt.imbalance_pct, mt.l2_imbalance, mt.transfer_tot, mt.transfer_max, mt.migrated_units, mt.unit_hops);
    if (cap) printf("  capacity %s: max load/share %.6f\n", o->capacity, over_share);
    lb_print_spectrum(&res);
    if (nrep > 0)
      printf("  %d repeats of %d iterations without stop check: runtime median %.6f s  25%%-75%% %.6f-%.6f s  min %.6f s  max %.6f s  loads %s\n",
             nrep, res.iterations, sp.median, sp.p25, sp.p75, sp.min, sp.max, same ? "identical to the first run" : "DIFFERENT from the first run");
    if (p.track_costs) printf("  migration_cost %.6g  imbalance_cost %.6g\n", res.migration_cost, res.imbalance_cost);
    if (res.iterations > 0 && g->m > 0)
      printf("  %.3f ns per directed edge and iteration\n", 1e9 * res.runtime_s / ((double)res.iterations * 2.0 * g->m));
    if (o->json[0]) {
      FILE *f = fopen(o->json, "a");
      if (!f) { err = lb_error(LB_ERR_FILE, "-json '%s': cannot open for appending", o->json); goto out; }
      json_line j;
      json_run_header(&j, f, m->name, g->spec, g->n, backend, o->scenario);
      lb_bench_run_json(&j, &res);
      lb_bench_memory_json(&j, m, &res);
      json_real(&j, "setup_s", res.setup_s);
      json_spectrum(&j, &res);
      if (nrep > 0) {
        json_int(&j, "repeat", nrep);
        json_bool(&j, "repeat_identical", same);
        json_spread(&j, "runtime", &sp);
      }
      if (cap) {
        json_str(&j, "capacity", o->capacity);
        json_real(&j, "max_over_share", over_share);
      }
      json_str(&j, "stop_reason", lb_stop_name(res.stop));
      lb_bench_loads_json(&j, &mt);
      if (p.track_costs) lb_bench_costs_json(&j, &res);
      if (o->trace && !(err = append(&t, "]"))) json_raw(&j, "trace", t.json);
      json_end(&j);
      if (fclose(f) && !err) err = lb_error(LB_ERR_FILE, "-json '%s': write failed", o->json);
    }
  }
out:
  if (have_res) lb_result_free(&res);
  free(t.all);
  free(t.json);
  free(load);
  free(cap);
  free(times);
  lb_graph_destroy(&g);
  return err;
}

/* -trace_split's value as the replay takes it (carry when not given). */
static lb_trace_split trace_split(const bench_opts *o)
{
  return !strcmp(o->trace_split, "even") ? LB_TRACE_SPLIT_EVEN : !strcmp(o->trace_split, "app") ? LB_TRACE_SPLIT_APP : LB_TRACE_SPLIT_CARRY;
}

/* Least-squares slope of log y over log x, or over x itself when logx is 0. */
static double fit_slope(int k, const double *x_, const double *y_, int logx)
{
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < k; i++) {
    double x = logx ? log(x_[i]) : x_[i], y = log(y_[i]);
    sx += x; sy += y; sxx += x * x; sxy += x * y;
  }
  return (k * sxy - sx * sy) / (k * sxx - sx * sx);
}

/* -scale: the graph kind at growing size d, Melhem et al. 1991 Table 1's d: ranks
 * of a line or ring, side of a d x d mesh2d, dimension D of a hypercube
 * (D = N0, N0 + 1, ..., N1; the others double).  Fits iterations ~ d^p
 * and, with -costs, each cost ~ d^p (hypercube: ~ 2^(p D)). */
static lb_err run_scale(bench_opts *o, const lb_method *m, int me)
{
  int cube = strcmp(o->graph, "hypercube") == 0, grid = strcmp(o->graph, "mesh2d") == 0, n0, n1;
  char tail;
  if (!cube && !grid && strcmp(o->graph, "line") != 0 && strcmp(o->graph, "ring") != 0)
    return lb_error(LB_ERR_ARG, "-scale: give the graph kind line, ring, mesh2d or hypercube, not '%s'", o->graph);
  if (sscanf(o->scale, "%d:%d%c", &n0, &n1, &tail) != 2 || (cube ? n0 < 1 || n1 <= n0 : n0 < 2 || n1 < 2 * n0))
    return lb_error(LB_ERR_ARG, "-scale '%s': expected N0:N1 with %s", o->scale, cube ? "1 <= N0 < N1 (dimensions)" : "2 <= N0 and 2 N0 <= N1");
  if (!o->virt) return lb_error(LB_ERR_ARG, "-scale runs many graph sizes: it needs -virtual");
  double d[32], stat[3][32];
  int k = 0;
  for (long x = n0; x <= n1 && k < 32; x = cube ? x + 1 : 2 * x, k++) {
    char spec[PETSC_MAX_PATH_LEN + 48];
    double st[3];
    if (grid) snprintf(spec, sizeof spec, "mesh2d:%ldx%ld", x, x);
    else snprintf(spec, sizeof spec, "%s:%ld", o->graph, x);
    lb_err err = run_one(o, m, spec, me, st);
    if (err) return err;
    for (int q = 0; q < (o->p.track_costs ? 3 : 1); q++)
      if (!(st[q] > 0)) return lb_error(LB_ERR_ARG, "-scale: %s on %s gave %s 0, nothing to fit", m->name, spec, q ? "a cost of" : "iterations");
    d[k] = (double)x;
    for (int q = 0; q < 3; q++) stat[q][k] = st[q];
  }
  if (me == 0) {
    const char *dn = cube ? "D" : "d";
    /* the cost columns only with -costs, which computes them */
    printf("lbbench: %s on %s, %-4s %10s", m->name, o->graph, dn, "iterations");
    if (o->p.track_costs) printf(" %16s %16s", "migration_cost", "imbalance_cost");
    printf("\n");
    for (int i = 0; i < k; i++) {
      printf("  %6g %10g", d[i], stat[0][i]);
      if (o->p.track_costs) printf(" %16.6g %16.6g", stat[1][i], stat[2][i]);
      printf("\n");
    }
    printf("fitted exponent: %.4f (iterations ~ %s^p)\n", fit_slope(k, d, stat[0], 1), dn);
    const char *cost[3] = {NULL, "migration_cost", "imbalance_cost"};
    for (int q = 1; o->p.track_costs && q < 3; q++)
      printf("fitted exponent %s: %.4f (%s ~ %s)\n", cost[q], cube ? fit_slope(k, d, stat[q], 0) / log(2.0) : fit_slope(k, d, stat[q], 1),
             cost[q], cube ? "2^(p D)" : "d^p");
  }
  return LB_OK;
}

static lb_err parse_injections(char **list, PetscInt count, lb_inject *inj)
{
  for (PetscInt i = 0; i < count; i++) {
    char *end;
    const char *s = list[i];
    long step = strtol(s, &end, 10);
    if (end == s || *end != ':') return lb_error(LB_ERR_ARG, "-inject '%s': expected STEP:RANK:AMOUNT", list[i]);
    s = end + 1;
    long rank = strtol(s, &end, 10);
    if (end == s || *end != ':') return lb_error(LB_ERR_ARG, "-inject '%s': expected STEP:RANK:AMOUNT", list[i]);
    s = end + 1;
    double amount = strtod(s, &end);
    if (end == s || *end || step < 0 || rank < 0 || step > 1000000000 || rank > 1000000000)
      return lb_error(LB_ERR_ARG, "-inject '%s': expected STEP:RANK:AMOUNT with STEP, RANK >= 0", list[i]);
    inj[i] = (lb_inject){(int)step, (int)rank, amount};
  }
  return LB_OK;
}

static const char *const select_names[] = {"gain", "index"}, *const split_names[] = {"carry", "app", "even"};

/* What lbbench's balancer options differ in from the app's: no default
 * method, and the method stops by itself unless -lb_target or
 * -lb_max_iters says otherwise; task mode adds Zoltan's methods. */
static const AmrLbExtraMethod zoltan_methods[] = {
  {.name = "zoltan-rcb", .summary = "Zoltan recursive coordinate bisection (task mode)"},
  {.name = "zoltan-hsfc", .summary = "Zoltan Hilbert space-filling curve (task mode)"},
  {.name = "zoltan-graph", .summary = "Zoltan PHG graph repartitioning, LB_APPROACH=REPARTITION (task mode)"},
};
static const AmrLbMethodDefaults bench_defaults = {.program = "lbbench", .method = NULL, .target = 0, .max_iters = 0, .nextra = 3, .extra = zoltan_methods};

/* Reads the options into the bench_opts ctx; o->err reports a bad value
 * found after reading, o->help_only a -help run. */
static PetscErrorCode read_options(MPI_Comm comm, void *ctx)
{
  bench_opts *o = ctx;
  AmrLbMethodChoice method;
  char *injl[MAX_INJECT];
  PetscInt ninj = MAX_INJECT;
  PetscBool set;
  int split = -1;

  PetscFunctionBeginUser;
  PetscCall(AmrOptionsCheckValues(comm));
  o->err = LB_OK;
  PetscOptionsBegin(comm, NULL, "lbbench options", NULL);
  PetscCall(PetscOptionsString("-graph", "processor graph: line:N ring:N mesh2d:AxB mesh3d:AxBxC torus3d:AxBxC hypercube:D tree:N:K file:PATH subdomains:P (-tasks trace -mesh: the parts of the start split that share a face) (with -scale: the kind only)", NULL, o->graph, o->graph, sizeof o->graph, NULL));
  PetscCall(PetscOptionsString("-scenario", "initial loads: point (Lieber et al. 2016 POINT), point:RANK:AMOUNT (AMOUNT n: the number of ranks), box, random:SEED, file:PATH (task mode: one weight per task), trace:FILE[:CYCLE] (the app's -trace_loads, with -chain or -tasks trace)", NULL, o->scenario, o->scenario, sizeof o->scenario, NULL));
  PetscCall(PetscOptionsReal("-base", "load of every rank under point and random (box: 0 means 512)", NULL, o->base, &o->base, NULL));
  PetscCall(AmrLbMethodOptionsRead(PetscOptionsObject, &bench_defaults, &method));
  PetscCall(PetscOptionsBool("-virtual", "run every rank of the graph in this process", NULL, o->virt, &o->virt, NULL));
  PetscCall(PetscOptionsBool("-offload", "with -chain and -scenario trace: instead of a method, each part's cells balanced apart from the mesh as the app's -react_offload does (balance/lboffload.h)", NULL, o->offload, &o->offload, NULL));
  PetscCall(PetscOptionsBool("-step", "with -chain, -virtual and -scenario trace: the app's balancing step with -lb_weights phases (the fit, the phase choice, the method, the decision) at P ranks, its time, memory and collectives per rank", NULL, o->step, &o->step, NULL));
  PetscCall(PetscOptionsBool("-trace", "print the load vector after every phase", NULL, o->trace, &o->trace, NULL));
  PetscCall(PetscOptionsBool("-costs", "report Melhem et al. 1991 migration and load-imbalance costs", NULL, o->costs, &o->costs, NULL));
  PetscCall(PetscOptionsString("-tasks", "task mode (Lieber et al. 2016): a task mesh of AxBxC tasks (no value: 8x8x8 per rank) on -graph mesh3d, real task selection and migration; trace: the cells of -scenario trace:FILE, with -mesh on the start split with their face neighbours, without it in slabs of -graph mesh2d or mesh3d", NULL, o->tasks, o->tasks, sizeof o->tasks, &o->task_mode));
  PetscCall(AmrOptionsChoice(PetscOptionsObject, "-select", "task mode: task selection order, gain (edge-cut gain first) or index", "selection order", 2, select_names, &o->select, NULL));
  PetscCall(PetscOptionsInt("-select_passes", "task mode: N passes of task selection and migration, each against the flow still unrealised, so tasks may hop (1: Lieber et al. 2016's one pass)", NULL, o->passes, &o->passes, NULL));
  PetscCall(PetscOptionsReal("-zoltan_imbalance_tol", "task mode: Zoltan's IMBALANCE_TOL for zoltan-rcb, zoltan-hsfc, zoltan-graph", NULL, o->zoltan_tol, &o->zoltan_tol, NULL));
  PetscCall(PetscOptionsString("-json", "append one JSON line per run to this file", NULL, o->json, o->json, sizeof o->json, NULL));
  PetscCall(PetscOptionsInt("-repeat", "N: Lieber et al. 2016's timing: after the run, N more with its iteration count and no stop check; report the median run time and the spread (0: off)",
                            NULL, o->repeat, &o->repeat, NULL));
  PetscCall(PetscOptionsString("-capacity", "file:PATH: one relative capacity per rank; methods that take capacities (chemotaxis) balance load to capacity shares",
                               NULL, o->capacity, o->capacity, sizeof o->capacity, NULL));
  PetscCall(PetscOptionsStringArray("-inject", "new load STEP:RANK:AMOUNT[,STEP:RANK:AMOUNT...] before superstep STEP", NULL, injl, &ninj, &set));
  if (!set) ninj = 0;
  PetscCall(PetscOptionsString("-chain", "CELLS: chain mode on -graph line:P or ring:P, the method's loads realised as cuts on a curve of CELLS weighted cells (scenario per cell); no value with -scenario trace: the trace's curve", NULL, o->chain_cells, o->chain_cells, sizeof o->chain_cells, &o->chain_set));
  PetscCall(AmrOptionsChoice(PetscOptionsObject, "-trace_split", "-scenario trace in chain mode, and in task mode with -mesh: the initial split, carry (default: the previous cycle's split into P parts of equal weight, sfc's, carried to this cycle's cells by curve position, as a balanced app at P ranks starts; the file's first cycle: app), app (the app's, scaled to P ranks) or even (equal cell counts)", "initial split", 3, split_names, &split, NULL));
  PetscCall(PetscOptionsInt("-refine", "-scenario trace: K, every recorded cell refined K times into its 2^(dim K) children in curve order, each 2^-(dim K) of its weight (more ranks by refinement; needs a version 2 trace)", NULL, o->refine, &o->refine, NULL));
  PetscCall(PetscOptionsString("-mesh", "-tasks trace: the coarse mesh the trace was recorded on (FILE.inp or builtin:NAME, as amr2d/amr3d's -mesh): tasks get their cells' true face neighbours, start on -trace_split's split, and -graph subdomains:P is the ranks whose cells share a face", NULL, o->mesh, o->mesh, sizeof o->mesh, NULL));
  PetscCall(PetscOptionsInt("-replicate", "-scenario trace: R copies of the recorded cells, along the curve (chain mode) or tiled in space (task mode)", NULL, o->replicate, &o->replicate, NULL));
  PetscCall(PetscOptionsString("-scale", "N0:N1: run the graph kind (line, ring, mesh2d, hypercube) at d = N0, 2 N0, ..., N1 (line:d, mesh2d:dxd; hypercube:D, D = N0..N1), virtual, and fit iterations and -costs ~ d^p (hypercube costs ~ 2^(p D))", NULL, o->scale, o->scale, sizeof o->scale, NULL));
  PetscOptionsEnd();
  PetscCall(PetscOptionsHasHelp(NULL, &o->help_only));
  PetscCall(PetscStrncpy(o->method, method.name ? method.name : "", sizeof o->method));
  PetscCall(PetscStrncpy(o->trace_split, split >= 0 ? split_names[split] : "", sizeof o->trace_split));
  o->m = method.method;
  o->p = method.params;
  if (o->repeat < 0) o->err = lb_error(LB_ERR_ARG, "-repeat %d must not be negative", (int)o->repeat);
  if (!o->err && o->passes < 1) o->err = lb_error(LB_ERR_ARG, "-select_passes %d must be at least 1", (int)o->passes);
  if (!o->err) o->err = parse_injections(injl, ninj, o->inject);
  for (PetscInt i = 0; i < ninj; i++) PetscCall(PetscFree(injl[i]));
  o->p.inject = o->inject;
  o->p.ninject = (int)ninj;
  PetscFunctionReturn(0);
}

/* Every option again, with -help on (util/unknown_options.h). */
static PetscErrorCode reread_options(void *ctx)
{
  bench_opts o;
  (void)ctx;
  memset(&o, 0, sizeof o);
  return read_options(PETSC_COMM_WORLD, &o);
}

/* An option nothing read is an error naming it and the nearest known one. */
static lb_err check_options(void)
{
  PetscErrorCode ierr;
  char *why = NULL;
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  ierr = AmrOptionsCheckUnused(PETSC_COMM_WORLD, 0, NULL, reread_options, NULL, NULL);
  PetscPopErrorHandler();
  if (!ierr) return LB_OK;
  PetscErrorMessage(ierr, NULL, &why);
  return lb_error(LB_ERR_ARG, "%s", why && why[0] ? why : "unknown option");
}

/* -chain's value, and the trace scenario's modes: a trace replays in
 * chain mode (-chain, no value) or in task mode (-tasks trace); -replicate
 * and -trace_split belong to it. */
static lb_err trace_options(bench_opts *o)
{
  const int traced = lb_trace_is_scenario(o->scenario);
  if (o->chain_set && !traced) {
    char *end;
    long long c = strtoll(o->chain_cells, &end, 10);
    if (!o->chain_cells[0]) return lb_error(LB_ERR_ARG, "-chain needs the number of cells (no value only with -scenario trace:FILE)");
    if (*end || c < 1 || c > (1LL << 40)) return lb_error(LB_ERR_ARG, "-chain %s: the number of cells must be positive", o->chain_cells);
    o->chain = (PetscInt)c;
  }
  const int subdomains = !strncmp(o->graph, "subdomains", 10);
  if (subdomains && !(traced && !strcmp(o->tasks, "trace") && o->mesh[0]))
    return lb_error(LB_ERR_ARG, "-graph %s: the subdomain graph of a trace's start split needs -tasks trace -scenario trace:FILE[:CYCLE] -mesh MESH", o->graph);
  if (o->mesh[0] && !(traced && !strcmp(o->tasks, "trace")))
    return lb_error(LB_ERR_ARG, "-mesh %s: gives the cells of a trace their neighbours in task mode: -tasks trace -scenario trace:FILE[:CYCLE]", o->mesh);
  if (!traced) {
    if (!strcmp(o->tasks, "trace")) return lb_error(LB_ERR_ARG, "-tasks trace needs -scenario trace:FILE[:CYCLE]");
    if (o->replicate != 1 || o->trace_split[0] || o->refine)
      return lb_error(LB_ERR_ARG, "-replicate, -refine and -trace_split apply to -scenario trace:FILE[:CYCLE] only");
    return LB_OK;
  }
  if (o->chain_set && o->chain_cells[0]) return lb_error(LB_ERR_ARG, "-chain takes no value with -scenario trace: the cells come from the trace");
  if (!o->chain_set && strcmp(o->tasks, "trace")) return lb_error(LB_ERR_ARG, "-scenario trace replays in chain mode (-chain) or task mode (-tasks trace)");
  if (o->replicate < 1) return lb_error(LB_ERR_ARG, "-replicate %d: must be at least 1", (int)o->replicate);
  if (o->refine < 0) return lb_error(LB_ERR_ARG, "-refine %d: must not be negative", (int)o->refine);
  if (o->trace_split[0] && !o->chain_set && !o->mesh[0]) return lb_error(LB_ERR_ARG, "-trace_split applies to chain mode (-chain) and to task mode with -mesh");
  /* a real app at P ranks starts from the previous cycle's balanced split */
  if (!o->trace_split[0]) snprintf(o->trace_split, sizeof o->trace_split, "carry");
  return LB_OK;
}

/* One input or output path of option `option` (given as `value`): a
 * regular file, or for an output (devices) also a character device, so
 * that no rank blocks on a FIFO, reads a folder or reads /dev/zero for ever.
 * Every rank checks it itself: none waits on another's refusal. */
static lb_err regular_file(const char *option, const char *value, const char *path, int devices)
{
  const int err = AmrFileRegular(path, devices);
  return err ? lb_error(LB_ERR_FILE, "option %s %s: %s", option, AmrPathShort(value), AmrFileStrerror(err)) : LB_OK;
}

/* Every file lbbench reads or writes, before the first byte of any. */
static lb_err check_files(const bench_opts *o)
{
  char path[PETSC_MAX_PATH_LEN];
  lb_err err = LB_OK;
  if (!strncmp(o->graph, "file:", 5)) err = regular_file("-graph", o->graph, o->graph + 5, 0);
  if (!err && !strncmp(o->scenario, "file:", 5)) err = regular_file("-scenario", o->scenario, o->scenario + 5, 0);
  if (!err && lb_trace_is_scenario(o->scenario) && !(err = lb_trace_scenario_file(o->scenario, path, sizeof path)))
    err = regular_file("-scenario", o->scenario, path, 0);
  if (!err && !strncmp(o->capacity, "file:", 5)) err = regular_file("-capacity", o->capacity, o->capacity + 5, 0);
  if (!err && o->mesh[0] && strncmp(o->mesh, "builtin:", 8)) err = regular_file("-mesh", o->mesh, o->mesh, 0);
  if (!err && o->json[0]) err = regular_file("-json", o->json, o->json, 1);
  return err;
}

static lb_err bench(int me)
{
  bench_opts o;
  memset(&o, 0, sizeof o);
  o.zoltan_tol = 1.001; /* the diffusion runs' usual target 0.999 */
  o.replicate = 1;
  o.passes = 1;
  char msg[512];
  lb_err err;
  if (AmrOptionsQuietly(PETSC_COMM_WORLD, read_options, &o, msg, sizeof msg)) return lb_error(LB_ERR_ARG, "%s", msg);
  if (o.help_only) return LB_OK;
  if (o.err) return o.err;
  const lb_method *m = o.m;
  if ((err = check_options())) return err;
  if (!o.graph[0]) return lb_error(LB_ERR_ARG, "-graph is required (e.g. -graph line:16)");
  if (!o.scenario[0]) return lb_error(LB_ERR_ARG, "-scenario is required (e.g. -scenario point:0:16)");
  if (o.offload) {
    const lb_offloadbench_opts oo = {o.graph, o.scenario, o.json, {(int)o.replicate, (int)o.refine, trace_split(&o), NULL, 0}, o.trace_split[0] ? o.trace_split : "carry",
                                     o.virt, PETSC_COMM_WORLD};
    if (!o.chain_set || o.method[0] || o.task_mode) return lb_error(LB_ERR_ARG, "-offload runs in chain mode (-chain) instead of a method: give no -lb_method and no -tasks");
    if ((err = trace_options(&o))) return err;
    return lb_offloadbench_run(&oo, me);
  }
  if (!o.method[0]) return lb_error(LB_ERR_METHOD, "-lb_method is required (see -help)");
  if (o.step) {
    lb_stepbench_opts so = {o.graph, o.scenario, o.json, {(int)o.replicate, (int)o.refine, trace_split(&o), NULL, 0}, o.trace_split[0] ? o.trace_split : "carry", m, o.p};
    if (!o.chain_set || !o.virt || o.task_mode || !m) return lb_error(LB_ERR_ARG, "-step replays the app's step in chain mode on the virtual backend: give -chain -virtual and a balancing method, no -tasks");
    if ((err = trace_options(&o))) return err;
    if ((err = check_files(&o))) return err;
    so.p.backend = LB_BACKEND_VIRTUAL;
    return lb_stepbench_run(&so);
  }
  int zoltan = lb_zoltan_is_method(o.method);
  o.p.backend = o.virt ? LB_BACKEND_VIRTUAL : LB_BACKEND_MPI;
  o.p.comm = PETSC_COMM_WORLD;
  o.p.track_costs = o.costs;
  if ((err = trace_options(&o))) return err;
  if ((err = check_files(&o))) return err;
  if (o.capacity[0] && (o.chain_set || o.task_mode || zoltan))
    return lb_error(LB_ERR_ARG, "-capacity runs on rank loads only, not with -chain, -tasks or zoltan-*");
  if (o.repeat > 0 && (o.chain_set || zoltan))
    return lb_error(LB_ERR_ARG, "-repeat times the balancing methods on rank loads or tasks, not -chain or zoltan-*");
  if (o.passes > 1 && !o.task_mode) return lb_error(LB_ERR_ARG, "-select_passes %d: task selection runs in task mode only (-tasks)", (int)o.passes);
  if (o.chain_set) {
    if (o.scale[0] || o.trace || o.p.ninject)
      return lb_error(LB_ERR_ARG, "-chain cannot be combined with -scale, -trace or -inject");
    const lb_chainbench_opts co = {o.graph, o.scenario, o.json, o.trace_split, trace_split(&o), o.base, o.p, (long long)o.chain, (int)o.replicate,
                                   (int)o.refine};
    return lb_chainbench_run(&co, m, me);
  }
  if (o.task_mode || zoltan) {
    if (o.trace || o.scale[0] || o.p.ninject > 0 || o.costs)
      return lb_error(LB_ERR_ARG, "-trace, -scale, -inject and -costs are not available in task mode (-tasks, zoltan-*)");
    const lb_select sel = o.select == 1 ? LB_SELECT_INDEX : LB_SELECT_GAIN;
    if (o.passes > 1 && zoltan) return lb_error(LB_ERR_ARG, "-select_passes is for the balancing methods' flows, not %s's parts", o.method);
    lb_taskbench_opts to = {o.graph, o.scenario, o.method, o.tasks, o.json, o.base, o.p, sel, o.zoltan_tol, (int)o.repeat, (int)o.replicate, (int)o.refine, (int)o.passes,
                            o.mesh[0] ? o.mesh : NULL, trace_split(&o)};
    return lb_taskbench_run(&to, me);
  }
  if (!o.scale[0]) {
    double stat[3];
    return run_one(&o, m, o.graph, me, stat);
  }
  return run_scale(&o, m, me);
}

int main(int argc, char **argv)
{
  if (AmrInitialize(&argc, &argv, "lbbench", help)) return 1;
  if (lb_zoltan_init(argc, argv)) {
    fprintf(stderr, "lbbench: error: %s\n", lb_errmsg());
    AmrFinalize();
    return 1;
  }
  PetscMPIInt me;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &me));
  lb_err err = bench(me);
  if (err && me == 0) {
    fprintf(stderr, "lbbench: error: %s\n", lb_errmsg());
    fflush(stderr);
  }
  fflush(stdout);
  return AmrFinalize() || err ? 1 : 0;
}
