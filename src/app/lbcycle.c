/* The balancing step of the AMR cycle: window of timed steps -> weights ->
 * method in chain mode -> cells per rank -> families kept together ->
 * p4est_partition_given with the cell data.  Compiled for 2D and 3D. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "app/lbcycle.h"
#include "util/options.h"
#include "balance/lbchain.h"
#include "balance/lbcurve.h"
#include "balance/lbdecide.h"
#include "balance/lbstate.h"
#include "balance/lbweights.h"

#include <math.h>
#include <string.h>
#include <time.h>


static const char *const weight_names[] = {"count", "timing", "model", "measured"};

struct AmrLb {
  AmrLbOptions o;
  MPI_Comm comm;
  int size, rank;
  lb_graph *graph;
  lb_weights_history *hist; /* timing: the stacked windows of the fit */
  int shifting;             /* sfc-shift: Niemoeller et al. 2020's sequence on the measured times */
  lb_curve_shifter shifter;
  double cost[AMR_LB_MAX_TYPES];
  double *win;      /* the last o.window step times, oldest at whead once full */
  int wn, whead;
  double cycle_cpu, cycle_wall; /* every step since the window started */
  int64_t counts[AMR_LB_MAX_TYPES]; /* the window's cells per load type at its start */
  /* cells per load type during each step of win (same ring), when the
   * problem reports them: a moving front changes the types within a window */
  int64_t *wcounts;
  int step_counts;  /* every step since the window started came with its counts */
  lb_migration_model migration;
  AmrTrace trace;           /* -trace_loads */ /* the busiest rank's measured migration times per cell moved */
  double t_start, lost, lb_total, migrate_total;
  lb_decide_state decide; /* -lb_threshold: the loss since the last rebalance */
  /* measured per-cell costs: sums and counts per type of the window (this
   * rank), and the adapted forest's costs for -lb_weights measured */
  int have_measured;
  double measured_sum[AMR_LB_MAX_TYPES], measured_n[AMR_LB_MAX_TYPES];
  double *cell_cost;
  p4est_locidx_t ncell_cost;
};

/* A failure inside the balancer library after the options were accepted
 * is a bug, not bad input. */
#define LB_CHECK(comm, call) \
  do { \
    lb_err e_ = (call); \
    PetscCheck(e_ == LB_OK, comm, PETSC_ERR_LIB, "balancer: %s", lb_errmsg()); \
  } while (0)

/* Whether option k of method i was listed already: it is one of the chosen
 * method's, or an earlier method (or option) has the same name. */
static PetscBool option_listed(const lb_method *chosen, int i, int k)
{
  const char *name = lb_method_get(i)->options[k].name;
  for (int l = 0; chosen && l < chosen->noptions; l++)
    if (!strcmp(chosen->options[l].name, name)) return PETSC_TRUE;
  for (int j = 0; j <= i; j++) {
    const lb_method *m = lb_method_get(j);
    for (int l = 0; l < (j < i ? m->noptions : k); l++)
      if (!strcmp(m->options[l].name, name)) return PETSC_TRUE;
  }
  return PETSC_FALSE;
}

PetscErrorCode AmrLbOptionsRead(MPI_Comm comm, int ntypes, AmrLbOptions *o)
{
  PetscBool trace_set;
  char method[64] = "sfc", weights[16] = "count", graph[16] = "line", initial[16] = "even", methods[512] = "none";
  PetscReal cost[AMR_LB_MAX_TYPES + 1], target = 0.99;
  PetscInt ncost = AMR_LB_MAX_TYPES + 1, window = 10, interval = 1, max_iters = 1000, check_interval = LB_CHECK_INTERVAL;
  PetscBool cost_set, threshold_set, help;
  PetscReal threshold = 0, trim = 0.25, forget = 0.9, opt[LB_MAX_OPTIONS];
  PetscInt history = 32;
  int w;

  PetscFunctionBeginUser;
  memset(o, 0, sizeof *o);
  o->ntypes = ntypes;
  for (int t = 0; t <= AMR_LB_MAX_TYPES; t++) cost[t] = 1.0;
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  for (int i = 0; i < lb_method_count(); i++) {
    PetscCall(PetscStrlcat(methods, ", ", sizeof methods));
    PetscCall(PetscStrlcat(methods, lb_method_get(i)->name, sizeof methods));
  }
  PetscOptionsBegin(comm, NULL, "Load balancing (the cycle's weigh and balance steps)", NULL);
  AMR_OPTION("-lb_method", PetscOptionsString("-lb_method", methods, NULL, method, method, sizeof method, NULL));
  AMR_OPTION("-lb_weights", PetscOptionsString("-lb_weights", "Cell weights: count (every cell 1), timing (least squares on measured times, Niemoeller et al. 2020), model (-lb_cost) or measured (each cell its own measured cost; problems that time their cells)",
                                               NULL, weights, weights, sizeof weights, NULL));
  AMR_OPTION("-lb_cost", PetscOptionsRealArray("-lb_cost", "Cost per load type, comma separated: the model weights, and timing's weights until a fit succeeds", NULL,
                                               cost, &ncost, &cost_set));
  AMR_OPTION("-lb_window", PetscOptionsInt("-lb_window", "timing: number of last timed steps the fit uses", NULL, window, &window, NULL));
  AMR_OPTION("-lb_trim", PetscOptionsReal("-lb_trim", "timing: fraction cut from each end of the sorted window (truncated mean)", NULL, trim, &trim, NULL));
  AMR_OPTION("-lb_history", PetscOptionsInt("-lb_history", "timing: number of last windows (one per cycle) whose rows the fit stacks", NULL, history, &history, NULL));
  AMR_OPTION("-lb_forget", PetscOptionsReal("-lb_forget", "timing: forgetting factor, a window k cycles old weighs forget^k in the fit", NULL, forget, &forget, NULL));
  AMR_OPTION("-lb_interval", PetscOptionsInt("-lb_interval", "Balance every K-th cycle", NULL, interval, &interval, NULL));
  AMR_OPTION("-lb_threshold", PetscOptionsReal("-lb_threshold", "PCT: balance only when the imbalance I% (measured, or predicted for the adapted mesh) exceeds PCT and the time lost to imbalance since the last rebalance reaches the predicted migration cost (rank-s); not given: balance every -lb_interval-th cycle",
                                               NULL, threshold, &threshold, &threshold_set));
  AMR_OPTION("-lb_graph", PetscOptionsString("-lb_graph", "Processor graph of the method: line (the ranks along the curve) or ring (the line closed; cells still move along the curve)",
                                             NULL, graph, graph, sizeof graph, NULL));
  AMR_OPTION("-lb_initial", PetscOptionsString("-lb_initial", "Initial partition: even (equal cell counts) or skew (equal counts of type-0 cells, the other types left where the curve puts them)",
                                               NULL, initial, initial, sizeof initial, NULL));
  AMR_OPTION("-trace_loads", PetscOptionsString("-trace_loads", "Append the weighted curve the balancer saw in every cycle to FILE (binary; lbbench -scenario trace:FILE replays it)",
                                                NULL, o->trace, o->trace, sizeof o->trace, &trace_set));
  AMR_OPTION("-lb_target", PetscOptionsReal("-lb_target", "Stop the method when avg/max >= target (0: off)", NULL, target, &target, NULL));
  AMR_OPTION("-lb_max_iters", PetscOptionsInt("-lb_max_iters", "Stop the method after this many iterations (0: off)", NULL, max_iters, &max_iters, NULL));
  AMR_OPTION("-lb_check_interval", PetscOptionsInt("-lb_check_interval", "Diffusion family: check -lb_target every K iterations (1: every iteration)", NULL, check_interval, &check_interval, NULL));
  o->method = lb_method_find(method);
  /* the chosen method's own options, -lb_NAME, defaults from its table */
  for (int k = 0; o->method && k < o->method->noptions; k++) {
    char name[64];
    opt[k] = o->method->options[k].def;
    PetscCall(PetscSNPrintf(name, sizeof name, "-lb_%s", o->method->options[k].name));
    AMR_OPTION(name, PetscOptionsReal(name, o->method->options[k].help, NULL, opt[k], &opt[k], NULL));
  }
  /* -help lists the other methods' options too, each name once */
  for (int i = 0; help && i < lb_method_count(); i++) {
    const lb_method *m = lb_method_get(i);
    for (int k = 0; k < m->noptions; k++) {
      char name[64], text[256];
      PetscReal v = m->options[k].def;
      if (option_listed(o->method, i, k)) continue;
      PetscCall(PetscSNPrintf(name, sizeof name, "-lb_%s", m->options[k].name));
      PetscCall(PetscSNPrintf(text, sizeof text, "%s: %s", m->name, m->options[k].help));
      AMR_OPTION(name, PetscOptionsReal(name, text, NULL, v, &v, NULL));
    }
  }
  PetscOptionsEnd();

  PetscCheck(o->method || !strcmp(method, "none"), comm, PETSC_ERR_USER_INPUT, "option -lb_method %s: unknown method (choose from %s)", method, methods);
  for (w = 0; w < 4; w++)
    if (!strcmp(weights, weight_names[w])) break;
  PetscCheck(w < 4, comm, PETSC_ERR_USER_INPUT, "option -lb_weights %s: unknown weight mode (count, timing, model or measured)", weights);
  o->weights = (AmrLbWeights)w;
  PetscCheck(!cost_set || ncost == ntypes, comm, PETSC_ERR_USER_INPUT,
             "option -lb_cost: needs %d value%s, one cost per load type of this problem, got %d", ntypes, ntypes > 1 ? "s" : "", (int)ncost);
  for (int t = 0; t < ntypes; t++) {
    o->cost[t] = cost_set ? cost[t] : 1.0;
    PetscCheck(o->cost[t] > 0 && isfinite(o->cost[t]), comm, PETSC_ERR_USER_INPUT, "option -lb_cost: cost %g of load type %d must be positive", o->cost[t], t);
  }
  PetscCheck(window >= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_window %" PetscInt_FMT ": must be at least 1", window);
  PetscCheck(trim >= 0 && trim < 0.5, comm, PETSC_ERR_USER_INPUT, "option -lb_trim %g: must be in [0, 0.5)", (double)trim);
  PetscCheck(history >= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_history %" PetscInt_FMT ": must be at least 1", history);
  PetscCheck(forget > 0 && forget <= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_forget %g: must be in (0, 1]", (double)forget);
  PetscCheck(interval >= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_interval %" PetscInt_FMT ": must be at least 1", interval);
  PetscCheck(!threshold_set || (threshold >= 0 && threshold < 100), comm, PETSC_ERR_USER_INPUT, "option -lb_threshold %g: must be a percentage in [0, 100)",
             (double)threshold);
  PetscCheck(!strcmp(graph, "line") || !strcmp(graph, "ring"), comm, PETSC_ERR_USER_INPUT, "option -lb_graph %s: must be line or ring", graph);
  PetscCheck(!strcmp(initial, "even") || !strcmp(initial, "skew"), comm, PETSC_ERR_USER_INPUT, "option -lb_initial %s: must be even or skew", initial);
  PetscCheck(!trace_set || o->trace[0], comm, PETSC_ERR_USER_INPUT, "option -trace_loads: needs a file name, e.g. -trace_loads out/run.trace");
  PetscCheck(max_iters >= 0, comm, PETSC_ERR_USER_INPUT, "option -lb_max_iters %" PetscInt_FMT ": must not be negative", max_iters);
  PetscCheck(check_interval >= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_check_interval %" PetscInt_FMT ": must be at least 1", check_interval);
  o->window = (int)window;
  o->trim = trim;
  o->history = (int)history;
  o->forget = forget;
  o->interval = (int)interval;
  o->threshold = threshold_set ? threshold : -1;
  o->ring = !strcmp(graph, "ring");
  o->skew = !strcmp(initial, "skew");
  if (o->method) {
    LB_CHECK(comm, lb_params_init(&o->params, o->method));
    o->params.backend = LB_BACKEND_MPI;
    o->params.comm = comm;
    o->params.target = target;
    o->params.max_iters = (int)max_iters;
    o->params.check_interval = (int)check_interval;
    for (int k = 0; k < o->method->noptions; k++) o->params.opt[k] = opt[k];
  }
  PetscFunctionReturn(0);
}

const char *AmrLbMethodName(const AmrLb lb) { return lb->o.method ? lb->o.method->name : "none"; }

PetscErrorCode AmrLbCreate(MPI_Comm comm, const AmrLbOptions *o, AmrLb *out)
{
  AmrLb lb;
  char spec[32];

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(1, &lb));
  lb->o = *o;
  lb->comm = comm;
  PetscCallMPI(MPI_Comm_size(comm, &lb->size));
  PetscCallMPI(MPI_Comm_rank(comm, &lb->rank));
  memcpy(lb->cost, o->cost, sizeof lb->cost);
  PetscCall(PetscMalloc1(o->window, &lb->win));
  PetscCall(PetscMalloc1((size_t)o->window * o->ntypes, &lb->wcounts));
  lb->t_start = MPI_Wtime();
  lb_migration_model_init(&lb->migration);
  lb_decide_init(&lb->decide);
  if (o->weights == AMR_LB_TIMING) LB_CHECK(comm, lb_weights_history_create(o->ntypes, o->history, o->forget, &lb->hist));
  if (o->trace[0]) PetscCall(AmrTraceOpen(comm, o->trace, &lb->trace));
  *out = lb;
  if (!o->method) PetscFunctionReturn(0);
  lb->shifting = !strcmp(o->method->name, "sfc-shift");
  if (lb->shifting) LB_CHECK(comm, lb_curve_shifter_init(&lb->shifter, lb->size, o->params.opt[0]));
  PetscCall(PetscSNPrintf(spec, sizeof spec, "%s:%d", o->ring ? "ring" : "line", lb->size));
  LB_CHECK(comm, lb_graph_create(spec, &lb->graph));
  {
    /* a trial on even loads: a method that cannot run on this graph, or an
     * out-of-range method option, fails here, before any cycle */
    double *load;
    lb_result res;
    lb_err err;
    PetscCall(PetscMalloc1(lb->size, &load));
    for (int r = 0; r < lb->size; r++) load[r] = LB_CHAIN_UNITS;
    err = lb_balance(lb->graph, o->method, &o->params, load, &res);
    PetscCall(PetscFree(load));
    if (!err) lb_result_free(&res);
    PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "option -lb_method %s: %s%s", o->method->name, lb_errmsg(), o->ring ? " (-lb_graph ring)" : "");
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbDestroy(AmrLb *lb)
{
  PetscFunctionBeginUser;
  if (!*lb) PetscFunctionReturn(0);
  lb_graph_destroy(&(*lb)->graph);
  PetscCall(AmrTraceClose(&(*lb)->trace));
  lb_weights_history_destroy(&(*lb)->hist);
  if ((*lb)->shifting) lb_curve_shifter_free(&(*lb)->shifter);
  PetscCall(PetscFree((*lb)->win));
  PetscCall(PetscFree((*lb)->wcounts));
  PetscCall(PetscFree((*lb)->cell_cost));
  PetscCall(PetscFree(*lb));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbWindowStart(AmrLb lb, p4est_t *p4est, const int *types)
{
  PetscFunctionBeginUser;
  memset(lb->counts, 0, sizeof lb->counts);
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) {
    const int t = types ? types[i] : 0;
    PetscCheck(t >= 0 && t < lb->o.ntypes, PETSC_COMM_SELF, PETSC_ERR_PLIB, "cell %d has load type %d, outside 0..%d", (int)i, t, lb->o.ntypes - 1);
    lb->counts[t]++;
  }
  lb->wn = lb->whead = 0;
  lb->step_counts = 1;
  lb->cycle_cpu = lb->cycle_wall = 0;
  lb->have_measured = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbWindowCosts(AmrLb lb, p4est_locidx_t n, const int *types, const double *cost)
{
  PetscFunctionBeginUser;
  memset(lb->measured_sum, 0, sizeof lb->measured_sum);
  memset(lb->measured_n, 0, sizeof lb->measured_n);
  for (p4est_locidx_t i = 0; i < n; i++) {
    const int t = types ? types[i] : 0;
    lb->measured_sum[t] += cost[i];
    lb->measured_n[t] += 1;
  }
  lb->have_measured = 1;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbCellCosts(AmrLb lb, p4est_locidx_t n, const double *cost)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(lb->cell_cost));
  PetscCall(PetscMalloc1(n + 1, &lb->cell_cost));
  PetscCall(PetscArraycpy(lb->cell_cost, cost, n));
  lb->ncell_cost = n;
  PetscFunctionReturn(0);
}

/* The per-type means of the window's measured cell costs, scaled like the
 * fitted costs (mean cell weight 1 over the window's cells); NaN for a
 * type without cells, or without measurement. */
static PetscErrorCode measured_means(AmrLb lb, double *mean)
{
  const int T = lb->o.ntypes;
  double g[2 * AMR_LB_MAX_TYPES], S = 0, N = 0;
  int have;

  PetscFunctionBeginUser;
  for (int t = 0; t < T; t++) mean[t] = NAN;
  PetscCallMPI(MPI_Allreduce(&lb->have_measured, &have, 1, MPI_INT, MPI_MIN, lb->comm));
  if (!have) PetscFunctionReturn(0);
  for (int t = 0; t < T; t++) {
    g[t] = lb->measured_sum[t];
    g[T + t] = lb->measured_n[t];
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, 2 * T, MPI_DOUBLE, MPI_SUM, lb->comm));
  for (int t = 0; t < T; t++) {
    S += g[t];
    N += g[T + t];
  }
  for (int t = 0; t < T && S > 0; t++)
    if (g[T + t] > 0) mean[t] = g[t] / g[T + t] * N / S;
  PetscFunctionReturn(0);
}

/* -lb_weights measured: every cell its own measured cost, mean cell weight
 * 1; as with cell_weights, at least one work unit of the chain. */
static PetscErrorCode measured_weights(AmrLb lb, const p4est_t *p4est, double **w)
{
  const p4est_locidx_t n = p4est->local_num_quadrants;
  double g[2];

  PetscFunctionBeginUser;
  PetscCheck(lb->cell_cost && lb->ncell_cost == n, PETSC_COMM_SELF, PETSC_ERR_PLIB, "measured weights: %d cell costs for %d cells", (int)lb->ncell_cost,
             (int)n);
  g[0] = 0;
  g[1] = (double)n;
  for (p4est_locidx_t i = 0; i < n; i++) g[0] += lb->cell_cost[i];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, g, 2, MPI_DOUBLE, MPI_SUM, lb->comm));
  PetscCall(PetscMalloc1(n + 1, w));
  for (p4est_locidx_t i = 0; i < n; i++) (*w)[i] = fmax(1.0 / LB_CHAIN_UNITS, g[0] > 0 ? lb->cell_cost[i] * g[1] / g[0] : 1.0);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbAddStep(AmrLb lb, double cpu, double wall, const int64_t *counts)
{
  PetscFunctionBeginUser;
  lb->cycle_cpu += cpu;
  lb->cycle_wall += wall;
  lb->win[lb->whead] = cpu;
  if (counts) PetscCall(PetscArraycpy(lb->wcounts + (size_t)lb->whead * lb->o.ntypes, counts, lb->o.ntypes));
  else lb->step_counts = 0;
  lb->whead = (lb->whead + 1) % lb->o.window;
  if (lb->wn < lb->o.window) lb->wn++;
  PetscFunctionReturn(0);
}

/* Cells per rank of the current partition. */
static void current_counts(const p4est_t *p4est, int64_t *counts)
{
  for (int r = 0; r < p4est->mpisize; r++) counts[r] = (int64_t)(p4est->global_first_quadrant[r + 1] - p4est->global_first_quadrant[r]);
}

/* Weight of every local cell from its load type and the costs (mean cell
 * weight 1); a cost the fit found to be zero still counts one work unit of
 * the chain, so no cell is free to move. */
static PetscErrorCode cell_weights(const p4est_t *p4est, const int *types, int ntypes, const double *cost, double **w)
{
  double q[AMR_LB_MAX_TYPES];

  PetscFunctionBeginUser;
  for (int t = 0; t < ntypes; t++) q[t] = fmax(1.0 / LB_CHAIN_UNITS, cost[t]);
  PetscCall(PetscMalloc1(p4est->local_num_quadrants + 1, w));
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) (*w)[i] = q[types ? types[i] : 0];
  PetscFunctionReturn(0);
}

/* Move the forest to the cells per rank counts (families kept together)
 * with its data, and report what moved. */
static PetscErrorCode move(p4est_t *p4est, p4est_locidx_t *counts, int nfields, const AmrField *fields, AmrMigrateStats *st)
{
  long long corrected;

  PetscFunctionBeginUser;
  PetscCall(AmrFamilyCounts(p4est, counts, &corrected));
  PetscCall(AmrMigrate(p4est, counts, nfields, fields, st));
  PetscFunctionReturn(0);
}

/* Split the curve into equal sums of w (cells of weight 0 go along), with
 * families kept together, and move the forest there with its data. */
static PetscErrorCode split(p4est_t *p4est, const double *w, int nfields, const AmrField *fields)
{
  const int P = p4est->mpisize;
  lb_curve_result cut;
  p4est_locidx_t *counts;

  PetscFunctionBeginUser;
  LB_CHECK(p4est->mpicomm, lb_curve_sfc(p4est->mpicomm, p4est->local_num_quadrants, w, P, &cut));
  PetscCall(PetscMalloc1(P, &counts));
  for (int r = 0; r < P; r++) counts[r] = (p4est_locidx_t)cut.counts[r];
  lb_curve_result_free(&cut);
  PetscCall(move(p4est, counts, nfields, fields, NULL));
  PetscCall(PetscFree(counts));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbPartitionEven(p4est_t *p4est, int nfields, const AmrField *fields)
{
  double *w;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(p4est->local_num_quadrants + 1, &w));
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) w[i] = 1.0;
  PetscCall(split(p4est, w, nfields, fields));
  PetscCall(PetscFree(w));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbInitial(AmrLb lb, p4est_t *p4est, const int *types, int nfields, const AmrField *fields)
{
  double *w;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(p4est->local_num_quadrants + 1, &w));
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) w[i] = !lb->o.skew || (types ? types[i] : 0) == 0 ? 1.0 : 0.0;
  PetscCall(split(p4est, w, nfields, fields));
  PetscCall(PetscFree(w));
  PetscFunctionReturn(0);
}

/* Cells rank r sends plus receives going from partition a to b. */
static long long moved_by(int r, const int64_t *a, const int64_t *b, int P)
{
  int64_t a0 = 0, b0 = 0;
  for (int q = 0; q < r && q < P; q++) {
    a0 += a[q];
    b0 += b[q];
  }
  const int64_t lo = a0 > b0 ? a0 : b0, hi = a0 + a[r] < b0 + b[r] ? a0 + a[r] : b0 + b[r];
  const int64_t kept = hi > lo ? hi - lo : 0;
  return (long long)(a[r] - kept + b[r] - kept);
}

static double vmax(int n, const double *x)
{
  double m = x[0];
  for (int i = 1; i < n; i++) m = fmax(m, x[i]);
  return m;
}

static double vsum(int n, const double *x)
{
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i];
  return s;
}

/* The cells per load type of this rank that the window's times belong to:
 * the mean over the window's steps of the counts during each step when the
 * problem reported them for every step, else the counts at the window's
 * start.  The mean over all the window's steps, not only those the
 * truncated mean keeps: the trim drops the fastest and the slowest steps,
 * symmetrically about the middle of a front's steady advance, and a step
 * slowed by another process has the counts of its neighbours. */
static void window_counts(const AmrLb lb, double *mean)
{
  const int T = lb->o.ntypes;

  for (int t = 0; t < T; t++) mean[t] = (double)lb->counts[t];
  if (!lb->step_counts || lb->wn == 0) return;
  for (int t = 0; t < T; t++) {
    mean[t] = 0;
    for (int k = 0; k < lb->wn; k++) mean[t] += (double)lb->wcounts[(size_t)k * T + t];
    mean[t] /= lb->wn;
  }
}

/* The measurement half of a cycle: local work per rank, the fit (timing),
 * the prediction the weights made for the measured partition. */
static PetscErrorCode measure(AmrLb lb, AmrLbRecord *r)
{
  const int P = lb->size, T = lb->o.ntypes;
  lb_metrics mt;
  double mean[AMR_LB_MAX_TYPES], *counts, psum = 0, tsum, sm = 0;

  PetscFunctionBeginUser;
  window_counts(lb, mean);
  PetscCallMPI(MPI_Allgather(&lb->cycle_cpu, 1, MPI_DOUBLE, r->rank_time, 1, MPI_DOUBLE, lb->comm));
  PetscCallMPI(MPI_Allgather(&lb->cycle_wall, 1, MPI_DOUBLE, r->rank_time_wall, 1, MPI_DOUBLE, lb->comm));
  lb_metrics_loads(P, r->rank_time, &mt);
  tsum = vsum(P, r->rank_time);
  r->t_rank_max = vmax(P, r->rank_time);
  r->t_rank_avg = tsum / P;
  r->max_over_avg = tsum > 0 ? mt.max_over_avg : 1;
  r->imbalance_pct = tsum > 0 ? mt.imbalance_pct : 0;
  for (int t = 0; t < T; t++) r->cost_stderr[t] = NAN;
  if (lb->o.weights == AMR_LB_TIMING) {
    lb_weights_options wo;
    lb_weights_result fit;
    int64_t rounded[AMR_LB_MAX_TYPES];
    double *times;
    PetscCall(PetscMalloc1(lb->wn + 1, &times));
    /* oldest first: the ring buffer starts at whead once it is full */
    for (int k = 0; k < lb->wn; k++) times[k] = lb->win[lb->wn < lb->o.window ? k : (lb->whead + k) % lb->o.window];
    lb_weights_options_default(&wo);
    wo.trim = lb->o.trim;
    wo.previous = lb->cost;
    /* the library counts whole cells: a mean count of hundreds is off by
     * at most half a cell */
    for (int t = 0; t < T; t++) rounded[t] = (int64_t)llround(mean[t]);
    LB_CHECK(lb->comm, lb_weights_fit(lb->comm, lb->wn, times, T, rounded, &wo, lb->hist, &fit));
    PetscCall(PetscFree(times));
    memcpy(lb->cost, fit.cost, sizeof(double) * T);
    memcpy(r->cost_stderr, fit.cost_stderr, sizeof(double) * T);
    r->fitted = fit.fitted;
    r->fit_flags = fit.flags;
    lb_weights_result_free(&fit);
  } else if (lb->o.weights == AMR_LB_COUNT) {
    for (int t = 0; t < T; t++) lb->cost[t] = 1.0;
  }
  PetscCall(measured_means(lb, r->cost_measured));
  /* measured: the cells are weighed one by one; the costs per type that
   * predict rank loads are the measured means */
  for (int t = 0; t < T && lb->o.weights == AMR_LB_MEASURED; t++)
    if (isfinite(r->cost_measured[t])) lb->cost[t] = r->cost_measured[t];
  memcpy(r->cost, lb->cost, sizeof(double) * T);
  /* the weights' prediction for the partition just measured, against the
   * measurement: both as loads of mean 1 */
  PetscCall(PetscMalloc1((size_t)P * T, &counts));
  PetscCallMPI(MPI_Allgather(mean, T, MPI_DOUBLE, counts, T, MPI_DOUBLE, lb->comm));
  for (int q = 0; q < P; q++) {
    r->rank_load_predicted[q] = 0;
    for (int t = 0; t < T; t++) r->rank_load_predicted[q] += counts[(size_t)q * T + t] * lb->cost[t];
    psum += r->rank_load_predicted[q];
  }
  PetscCall(PetscFree(counts));
  for (int q = 0; q < P; q++) {
    const double p = psum > 0 ? r->rank_load_predicted[q] * P / psum : 1, m = tsum > 0 ? r->rank_time[q] * P / tsum : 1;
    r->rank_load_predicted[q] = p;
    r->rank_load_measured[q] = m;
    if (p + m > 0) sm += fabs(p - m) / ((p + m) / 2);
  }
  r->fit_smape = 100 * sm / P;
  PetscFunctionReturn(0);
}

/* The method's cuts (cells per rank) as the next split and in the report,
 * with the cells they move: what lbbench's replay of the trace gives. */
static PetscErrorCode cut_record(int P, const int64_t *cur, const int64_t *cut, int64_t *next, AmrLbRecord *r)
{
  PetscFunctionBeginUser;
  memcpy(next, cut, sizeof(int64_t) * P);
  PetscCall(PetscMalloc1(P, &r->cut_cells));
  for (int q = 0; q < P; q++) r->cut_cells[q] = (long long)cut[q];
  r->cut_migrated_cells = (long long)lb_curve_migrated(P, cur, cut);
  PetscFunctionReturn(0);
}

/* The method's target loads on the processor graph (the line or the ring
 * of the ranks along the curve), realised as cut positions on the weighted
 * curve by the library's chain mode: new cells per rank. sfc-shift is seed
 * 003's sequence instead: sfc first, then every cut shifted once by the
 * local work each rank measured in the cycle that just ran, so that it
 * corrects what the weights miss. */
static PetscErrorCode targets(AmrLb lb, p4est_locidx_t n, const double *w, const int64_t *cur, int64_t *next, AmrLbRecord *r)
{
  lb_chain_result res;

  PetscFunctionBeginUser;
  if (lb->shifting) {
    lb_curve_result cut;
    lb_curve_shift_action act;
    LB_CHECK(lb->comm, lb_curve_shifter_step(&lb->shifter, lb->comm, n, w, cur, r->rank_time, &cut, &act));
    r->lb_iterations = act == LB_SHIFT_BEST ? 0 : 1;
    PetscCall(cut_record(lb->size, cur, cut.counts, next, r));
    lb_curve_result_free(&cut);
    PetscFunctionReturn(0);
  }
  LB_CHECK(lb->comm, lb_chain_balance_on(lb->graph, lb->o.method, &lb->o.params, n, w, NULL, &res));
  r->lb_iterations = res.run.iterations;
  r->lb_target_iteration = res.run.target_iteration;
  r->lb_rounds = res.run.rounds;
  PetscCall(cut_record(lb->size, cur, res.cut.counts, next, r));
  lb_chain_result_free(&res);
  PetscFunctionReturn(0);
}

/* -trace_loads: append the curve the balancer weighs this cycle, on the
 * split it starts from, with the measurement of the cycle that just ran. */
static PetscErrorCode trace_cycle(AmrLb lb, p4est_t *p4est, const int *types, const double *w, int eligible, AmrLbRecord *r)
{
  lb_load_trace h;

  PetscFunctionBeginUser;
  memset(&h, 0, sizeof h);
  h.cycle = r->cycle;
  h.weights = (int)lb->o.weights;
  h.ntypes = lb->o.ntypes;
  h.flags = (eligible ? LB_TRACE_BALANCED : 0) | (lb->o.ring ? LB_TRACE_RING : 0);
  memcpy(h.cost, r->cost, sizeof(double) * lb->o.ntypes);
  h.time = r->rank_time;
  h.predicted = r->rank_load_predicted;
  PetscCall(AmrTraceAppend(lb->trace, p4est, &h, w, types, &r->trace_write_s));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbBalance(AmrLb lb, p4est_t *p4est, const int *types, int cycle, PetscBool allow, int nfields, const AmrField *fields,
                            AmrLbRecord *r)
{
  const int P = lb->size;
  const p4est_locidx_t n = p4est->local_num_quadrants;
  double *w, *before, *after, t0, tl[3];
  int64_t *cur, *next;
  p4est_locidx_t *counts;
  AmrCommGraph g0, g1;
  lb_metrics mt;
  lb_decide_input decide_in = {0};
  lb_decision decision = LB_DECIDE_REBALANCE; /* also what a rebalance without -lb_threshold counts as */
  int eligible;

  PetscFunctionBeginUser;
  memset(r, 0, sizeof *r);
  r->cycle = cycle;
  r->nranks = P;
  r->lb_target_iteration = -1;
  r->cut_migrated_cells = -1;
  PetscCall(PetscMalloc6(P, &r->rank_cells, P, &r->rank_predicted, P, &r->rank_time, P, &r->rank_time_wall, P, &r->rank_load_measured, P,
                         &r->rank_load_predicted));
  PetscCall(PetscMalloc5(P, &before, P, &after, P, &cur, P, &next, P, &counts));
  t0 = MPI_Wtime();
  PetscCall(measure(lb, r));
  if (lb->o.weights == AMR_LB_MEASURED)
    PetscCall(measured_weights(lb, p4est, &w));
  else
    PetscCall(cell_weights(p4est, types, lb->o.ntypes, lb->cost, &w));
  current_counts(p4est, cur);
  memcpy(next, cur, sizeof(int64_t) * P);
  LB_CHECK(lb->comm, lb_curve_part_loads(lb->comm, n, w, P, cur, before));
  lb_metrics_loads(P, before, &mt);
  r->kept_imbalance_pct = mt.imbalance_pct;
  LB_CHECK(lb->comm, lb_decide_account(&lb->decide, (r->t_rank_max - r->t_rank_avg) * P));
  r->excess_loss_rank_s = lb->decide.excess;
  r->residual_loss_rank_s = lb->decide.residual;
  r->balance_cost_rank_s = NAN;
  r->predicted_loss_rank_s = r->predicted_cycle_gain_rank_s = NAN;
  r->decision = "no_chance";
  eligible = allow && lb->o.method && (cycle + 1) % lb->o.interval == 0;
  if (lb->trace) PetscCall(trace_cycle(lb, p4est, types, w, eligible, r));
  if (eligible) {
    PetscCall(targets(lb, n, w, cur, next, r));
    for (int q = 0; q < P; q++) counts[q] = (p4est_locidx_t)next[q];
    {
      long long corrected;
      PetscCall(AmrFamilyCounts(p4est, counts, &corrected));
    }
    for (int q = 0; q < P; q++) next[q] = counts[q];
  }
  tl[0] = MPI_Wtime() - t0;
  LB_CHECK(lb->comm, lb_curve_part_loads(lb->comm, n, w, P, next, after));
  if (eligible) {
    /* what the new partition saves by the weights until the next chance to
     * balance (reported), and what the move is predicted to take */
    const double unit = r->t_rank_avg * P / vsum(P, before);
    long long mmax = 0;
    for (int q = 0; q < P; q++) mmax = PetscMax(mmax, moved_by(q, cur, next, P));
    r->predicted_gain_s = unit * (vmax(P, before) - vmax(P, after)) * lb->o.interval;
    r->predicted_migration_s = lb_migration_model_predict(&lb->migration, mmax);
    /* -lb_threshold: one cycle's gain against the migration would keep a
     * partition that loses a little every cycle forever; the ski-rental
     * rule weighs the loss of every cycle since the last rebalance (beyond
     * the least one since then) against the cost of this one, in
     * rank-seconds. That cost is the migration: the balancer has run
     * already, on every cycle that may balance, so declining would not
     * save its time (on 4 oversubscribed ranks it takes 0.2-0.8 s wall a
     * cycle, and counting it there vetoed every rebalance). Adaptation
     * since the measurement can have unbalanced the partition that
     * measured well: the floor looks at both. */
    r->balance_cost_rank_s = r->predicted_migration_s * P;
    /* and the coming cycle alone, by the weights: the kept partition's
     * loss and what the new one saves of it */
    decide_in.lost_rank_s = r->excess_loss_rank_s;
    decide_in.cost_rank_s = r->balance_cost_rank_s;
    decide_in.kept_rank_s = unit * (vmax(P, before) - vsum(P, before) / P) * P;
    decide_in.gain_rank_s = fmax(0, unit * (vmax(P, before) - vmax(P, after)) * P);
    decide_in.imbalance_pct = fmax(r->imbalance_pct, r->kept_imbalance_pct);
    decide_in.floor_pct = lb->o.threshold;
    r->predicted_loss_rank_s = decide_in.kept_rank_s;
    r->predicted_cycle_gain_rank_s = decide_in.gain_rank_s;
    if (lb->o.threshold < 0) {
      r->rebalanced = 1;
      r->decision = "always";
    } else {
      LB_CHECK(lb->comm, lb_decide(&lb->decide, &decide_in, &decision));
      r->rebalanced = decision == LB_DECIDE_REBALANCE || decision == LB_DECIDE_GAIN;
      r->decision = lb_decision_name(decision);
    }
  }
  PetscCall(AmrCommGraphMeasure(p4est, &g0));
  if (r->rebalanced) {
    AmrMigrateStats st;
    PetscCall(AmrMigrate(p4est, counts, nfields, fields, &st));
    PetscCall(AmrCommGraphMeasure(p4est, &g1));
    AmrCommGraphDiff(&g0, &g1, &r->comm_edges_added, &r->comm_edges_removed);
    r->migrated_cells_tot = st.shipped;
    r->migrated_cells_max = st.max_moved;
    r->migrate_time_s = st.wall_s;
    if (st.max_moved > 0) LB_CHECK(lb->comm, lb_migration_model_add(&lb->migration, st.max_moved, st.wall_s));
    lb_decide_rebalanced(&lb->decide, decision, &decide_in);
    PetscCall(AmrCommGraphFree(&g0));
    g0 = g1;
  } else {
    memcpy(after, before, sizeof(double) * P);
    memcpy(next, cur, sizeof(int64_t) * P);
  }
  r->comm_edges = g0.nedges;
  r->edge_cut = g0.edge_cut;
  PetscCall(AmrCommGraphFree(&g0));
  lb_metrics_loads(P, after, &mt);
  r->predicted_imbalance_pct = mt.imbalance_pct;
  {
    const double s = vsum(P, after);
    for (int q = 0; q < P; q++) {
      r->rank_cells[q] = (long long)next[q];
      r->rank_predicted[q] = s > 0 ? after[q] * P / s : 1;
    }
  }
  tl[1] = MPI_Wtime() - lb->t_start;
  tl[2] = r->trace_write_s;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, tl, 3, MPI_DOUBLE, MPI_MAX, lb->comm));
  r->lb_time_s = tl[0];
  r->trace_write_s = tl[2];
  lb->lost += (r->t_rank_max - r->t_rank_avg) * P;
  lb->lb_total += r->lb_time_s;
  lb->migrate_total += r->migrate_time_s;
  r->total_s = tl[1];
  r->lost_rank_s = lb->lost;
  r->lb_total_s = lb->lb_total;
  r->migrate_total_s = lb->migrate_total;
  PetscCall(PetscFree(w));
  PetscCall(PetscFree5(before, after, cur, next, counts));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbRecordFree(AmrLbRecord *r)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree6(r->rank_cells, r->rank_predicted, r->rank_time, r->rank_time_wall, r->rank_load_measured, r->rank_load_predicted));
  PetscCall(PetscFree(r->cut_cells));
  PetscFunctionReturn(0);
}

void AmrLbRecordJSON(json_line *j, const AmrLb lb, const AmrLbRecord *r)
{
  char flags[256];
  lb_weights_flags_string(r->fit_flags, flags, sizeof flags);
  json_str(j, "lb_method", AmrLbMethodName(lb));
  json_str(j, "lb_weights", weight_names[lb->o.weights]);
  json_str(j, "lb_graph", lb->o.ring ? "ring" : "line");
  json_bool(j, "rebalanced", r->rebalanced);
  json_real(j, "t_rank_max", r->t_rank_max);
  json_real(j, "t_rank_avg", r->t_rank_avg);
  json_real(j, "imbalance_pct", r->imbalance_pct);
  json_real(j, "max_over_avg", r->max_over_avg);
  json_real(j, "predicted_imbalance_pct", r->predicted_imbalance_pct);
  json_real(j, "kept_imbalance_pct", r->kept_imbalance_pct);
  json_reals(j, "weights", lb->o.ntypes, r->cost);
  json_reals(j, "weights_stderr", lb->o.ntypes, r->cost_stderr);
  json_reals(j, "weights_measured", lb->o.ntypes, r->cost_measured);
  json_bool(j, "weights_fitted", r->fitted);
  json_str(j, "fit_flags", flags);
  json_real(j, "fit_smape", r->fit_smape);
  json_int(j, "lb_iterations", r->lb_iterations);
  if (r->lb_target_iteration >= 0)
    json_int(j, "lb_target_iteration", r->lb_target_iteration);
  else
    json_null(j, "lb_target_iteration");
  if (r->cut_cells) {
    json_ints(j, "lb_cut_cells", r->nranks, r->cut_cells);
    json_int(j, "lb_cut_migrated_cells", r->cut_migrated_cells);
  } else {
    json_null(j, "lb_cut_cells");
    json_null(j, "lb_cut_migrated_cells");
  }
  json_int(j, "lb_rounds", r->lb_rounds);
  json_real(j, "lb_time_s", r->lb_time_s);
  json_real(j, "predicted_gain_s", r->predicted_gain_s);
  json_real(j, "predicted_migration_s", r->predicted_migration_s);
  json_real(j, "excess_loss_rank_s", r->excess_loss_rank_s);
  json_real(j, "residual_loss_rank_s", r->residual_loss_rank_s);
  json_real(j, "balance_cost_rank_s", r->balance_cost_rank_s);
  json_real(j, "predicted_loss_rank_s", r->predicted_loss_rank_s);
  json_real(j, "predicted_cycle_gain_rank_s", r->predicted_cycle_gain_rank_s);
  json_str(j, "lb_decision", r->decision);
  json_int(j, "migrated_cells_tot", r->migrated_cells_tot);
  json_int(j, "migrated_cells_max", r->migrated_cells_max);
  json_real(j, "migrate_time_s", r->migrate_time_s);
  json_int(j, "edge_cut", r->edge_cut);
  json_int(j, "comm_edges", r->comm_edges);
  json_int(j, "comm_edges_added", r->comm_edges_added);
  json_int(j, "comm_edges_removed", r->comm_edges_removed);
  json_real(j, "total_s", r->total_s);
  json_real(j, "lost_rank_s", r->lost_rank_s);
  json_real(j, "lb_total_s", r->lb_total_s);
  json_real(j, "migrate_total_s", r->migrate_total_s);
  if (lb->trace)
    json_real(j, "trace_write_s", r->trace_write_s);
  else
    json_null(j, "trace_write_s");
  json_ints(j, "rank_cells", r->nranks, r->rank_cells);
  json_reals(j, "rank_predicted", r->nranks, r->rank_predicted);
  json_reals(j, "rank_time", r->nranks, r->rank_time);
  json_reals(j, "rank_time_wall", r->nranks, r->rank_time_wall);
  json_reals(j, "rank_load_measured", r->nranks, r->rank_load_measured);
  json_reals(j, "rank_load_predicted", r->nranks, r->rank_load_predicted);
}

PetscErrorCode AmrLbRecordPrint(MPI_Comm comm, const char *program, const AmrLbRecord *r, double sim_time, long long cells, long long dofs, double solve_s)
{
  char t[32] = "", why[128] = "";

  PetscFunctionBeginUser;
  if (sim_time >= 0) PetscCall(PetscSNPrintf(t, sizeof t, ", t %.5f", sim_time));
  /* why -lb_threshold's rule did or did not rebalance */
  if (!strcmp(r->decision, "rebalance"))
    PetscCall(PetscSNPrintf(why, sizeof why, ", loss since balance %.3g >= cost %.3g rank-s", r->excess_loss_rank_s, r->balance_cost_rank_s));
  else if (!strcmp(r->decision, "gain"))
    PetscCall(PetscSNPrintf(why, sizeof why, ", next cycle's predicted gain %.3g > cost %.3g rank-s", r->predicted_cycle_gain_rank_s, r->balance_cost_rank_s));
  else if (!strcmp(r->decision, "below_cost"))
    PetscCall(PetscSNPrintf(why, sizeof why, " (kept: loss since balance %.3g < cost %.3g rank-s)", r->excess_loss_rank_s, r->balance_cost_rank_s));
  else if (!strcmp(r->decision, "below_floor"))
    PetscCall(PetscSNPrintf(why, sizeof why, " (kept: I%% %.1f at or below the -lb_threshold floor)", fmax(r->imbalance_pct, r->kept_imbalance_pct)));
  else if (!r->rebalanced)
    PetscCall(PetscSNPrintf(why, sizeof why, " (not rebalanced)"));
  PetscCall(PetscPrintf(comm,
                        "%s: lb cycle %d%s: %lld cells, %lld dofs, I%% %.1f measured -> %.1f predicted, migrated %lld cells, balancer %.4f s %d its, solve %.3f s%s\n",
                        program, r->cycle, t, cells, dofs, r->imbalance_pct, r->predicted_imbalance_pct, r->migrated_cells_tot, r->lb_time_s,
                        r->lb_iterations, solve_s, why));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbSummary(AmrLb lb, MPI_Comm comm, const char *program)
{
  double total = MPI_Wtime() - lb->t_start;
  const double P = lb->size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_DOUBLE, MPI_MAX, comm));
  PetscCall(PetscPrintf(comm,
                        "%s: summary (%s, %s weights): total %.3f s, lost to imbalance %.3f rank-s (%.1f%% of %d ranks x total), balancing %.4f s (%.2f%%), "
                        "migrating %.4f s (%.2f%%)\n",
                        program, AmrLbMethodName(lb), weight_names[lb->o.weights], total, lb->lost, 100 * lb->lost / (P * total), lb->size, lb->lb_total,
                        100 * lb->lb_total / total, lb->migrate_total, 100 * lb->migrate_total / total));
  PetscFunctionReturn(0);
}

/* ---- checkpoint and restart --------------------------------------------- */

PetscErrorCode AmrLbSave(AmrLb lb, AmrCkpState st)
{
  void *buf = NULL;
  size_t len = 0;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateSetString(st, "lb.weights", weight_names[lb->o.weights]));
  PetscCall(AmrCkpStateSetBytes(st, "lb.cost", lb->cost, sizeof(double) * lb->o.ntypes));
  PetscCall(AmrCkpStateSetBytes(st, "lb.migration_per_cell", lb->migration.per_cell, sizeof lb->migration.per_cell));
  PetscCall(AmrCkpStateSetInt(st, "lb.migration_n", lb->migration.n));
  PetscCall(AmrCkpStateSetInt(st, "lb.migration_head", lb->migration.head));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_excess", lb->decide.excess));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_residual", lb->decide.residual));
  PetscCall(AmrCkpStateSetInt(st, "lb.decide_rebalanced", lb->decide.rebalanced));
  PetscCall(AmrCkpStateSetInt(st, "lb.decide_trust", lb->decide.trust));
  PetscCall(AmrCkpStateSetInt(st, "lb.decide_promised", lb->decide.promised));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_expected", lb->decide.expected));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_promise_cost", lb->decide.promise_cost));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_last", lb->decide.last));
  PetscCall(AmrCkpStateSetReal(st, "lb.decide_before", lb->decide.before));
  PetscCall(AmrCkpStateSetReal(st, "lb.elapsed_s", MPI_Wtime() - lb->t_start));
  PetscCall(AmrCkpStateSetReal(st, "lb.lost_rank_s", lb->lost));
  PetscCall(AmrCkpStateSetReal(st, "lb.lb_total_s", lb->lb_total));
  PetscCall(AmrCkpStateSetReal(st, "lb.migrate_total_s", lb->migrate_total));
  if (lb->trace) {
    const char *path;
    int64_t end;
    AmrTraceEnd(lb->trace, &path, &end);
    PetscCall(AmrCkpStateSetString(st, "lb.trace_file", path));
    PetscCall(AmrCkpStateSetInt(st, "lb.trace_end", end));
  }
  if (lb->hist) {
    LB_CHECK(lb->comm, lb_weights_history_pack(lb->hist, &buf, &len));
    PetscCall(AmrCkpStateSetBytes(st, "lb.weights_history", buf, len));
    free(buf);
  }
  if (lb->shifting) {
    LB_CHECK(lb->comm, lb_curve_shifter_pack(&lb->shifter, &buf, &len));
    PetscCall(AmrCkpStateSetBytes(st, "lb.shifter", buf, len));
    free(buf);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbLoad(AmrLb lb, AmrCkpState st)
{
  const char *weights;
  const void *buf;
  size_t len;
  double elapsed;
  int64_t n, head;
  PetscBool has;

  PetscFunctionBeginUser;
  /* the run totals go on, whatever the restart changed */
  PetscCall(AmrCkpStateGetBytes(st, "lb.migration_per_cell", &buf, &len));
  PetscCall(AmrCkpStateGetInt(st, "lb.migration_n", &n));
  PetscCall(AmrCkpStateGetInt(st, "lb.migration_head", &head));
  PetscCheck(len == sizeof lb->migration.per_cell && n >= 0 && n <= LB_MIGRATION_HISTORY && head >= 0 && head < LB_MIGRATION_HISTORY, lb->comm,
             PETSC_ERR_USER_INPUT, "checkpoint: the balancer's migration times are malformed");
  memcpy(lb->migration.per_cell, buf, len);
  lb->migration.n = (int)n;
  lb->migration.head = (int)head;
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_excess", &lb->decide.excess));
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_residual", &lb->decide.residual));
  PetscCall(AmrCkpStateGetInt(st, "lb.decide_rebalanced", &n));
  lb->decide.rebalanced = n != 0;
  PetscCall(AmrCkpStateGetInt(st, "lb.decide_trust", &n));
  lb->decide.trust = n != 0;
  PetscCall(AmrCkpStateGetInt(st, "lb.decide_promised", &n));
  lb->decide.promised = n != 0;
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_expected", &lb->decide.expected));
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_promise_cost", &lb->decide.promise_cost));
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_last", &lb->decide.last));
  PetscCall(AmrCkpStateGetReal(st, "lb.decide_before", &lb->decide.before));
  PetscCall(AmrCkpStateGetReal(st, "lb.elapsed_s", &elapsed));
  PetscCall(AmrCkpStateGetReal(st, "lb.lost_rank_s", &lb->lost));
  PetscCall(AmrCkpStateGetReal(st, "lb.lb_total_s", &lb->lb_total));
  PetscCall(AmrCkpStateGetReal(st, "lb.migrate_total_s", &lb->migrate_total));
  lb->t_start = MPI_Wtime() - elapsed;
  /* fitted costs and stacked windows only feed timing weights; count and
   * model weights take the restart's options */
  PetscCall(AmrCkpStateGetString(st, "lb.weights", &weights));
  PetscCall(AmrCkpStateGetBytes(st, "lb.cost", &buf, &len));
  if (lb->o.weights == AMR_LB_TIMING && !strcmp(weights, weight_names[AMR_LB_TIMING]) && len == sizeof(double) * lb->o.ntypes) memcpy(lb->cost, buf, len);
  PetscCall(AmrCkpStateHas(st, "lb.weights_history", &has));
  if (lb->hist && has) {
    int kept;
    PetscCall(AmrCkpStateGetBytes(st, "lb.weights_history", &buf, &len));
    LB_CHECK(lb->comm, lb_weights_history_restore(lb->hist, buf, len, lb->size, &kept));
  }
  /* the trace of the same file goes on after the checkpoint's last cycle */
  PetscCall(AmrCkpStateHas(st, "lb.trace_file", &has));
  if (lb->trace && has) {
    const char *saved, *path;
    int64_t end;
    PetscCall(AmrCkpStateGetString(st, "lb.trace_file", &saved));
    AmrTraceEnd(lb->trace, &path, &end);
    PetscCall(AmrCkpStateGetInt(st, "lb.trace_end", &end));
    if (!strcmp(saved, path)) AmrTraceSetEnd(lb->trace, end);
  }
  PetscCall(AmrCkpStateHas(st, "lb.shifter", &has));
  if (lb->shifting && has) {
    PetscCall(AmrCkpStateGetBytes(st, "lb.shifter", &buf, &len));
    LB_CHECK(lb->comm, lb_curve_shifter_restore(&lb->shifter, buf, len));
  }
  PetscFunctionReturn(0);
}
