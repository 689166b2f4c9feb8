/* The one AMR cycle over a registered problem (cycle.h).  Compiled for 2D
 * and 3D (P4_TO_P8). */
#include "app/cycle.h"

#include "mesh/p4est_dim.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/options.h"
#include "mesh/dirs.h"
#include "mesh/mark.h"
#include "mesh/vtk.h"
/* the cycle runs the problems' ops on their struct: the one user of the
 * private side outside src/problems */
#include "problems/impl/problem.h"

enum { PH_SOLVE, PH_ESTIMATE, PH_ADAPT, PH_PARTITION, PH_OUTPUT, NPHASES };
static const char *const phase_name[NPHASES] = {"solve", "estimate", "adapt", "partition", "output"};
static const char *const stage_name[NPHASES] = {"Solve", "Estimate", "Adapt", "Partition", "Output"};

struct _p_AmrCycle {
  MPI_Comm comm;
  AmrProblem problem;
  AmrAdaptOptions adapt; /* -amr_strategy and its parameters, -amr_max_level, -report, -vtk_interval */
  PetscInt cycles;       /* -amr_cycles */
  PetscInt monitor;      /* -monitor_interval: human lines every K-th cycle (0: every cycle to 10, every 10th to 100, ...) */
  PetscBool fixed;       /* -amr_strategy uniform on a problem with time: the mesh stays */
  AmrLbOptions lbo;
  AmrLb lb;
  AmrVtkSeries *vtk;  /* -vtk: the outputs and their .pvd; NULL: none */
  p4est_t *p4est;
  FILE *report;          /* rank 0 */
  PetscLogStage stage[NPHASES];
  double total[NPHASES];
  double *eta2;          /* squared indicator per local cell */
  int *types;            /* load type per local cell */
  char checkpoint[PETSC_MAX_PATH_LEN]; /* -checkpoint PREFIX, empty: none */
  PetscInt checkpoint_interval;        /* -checkpoint_interval: every K-th cycle (0: none) */
  char restart[PETSC_MAX_PATH_LEN];    /* -restart PREFIX, empty: a new run */
  int first;             /* the first cycle this process runs (after a restart, the checkpoint's next) */
  int restarts;          /* restarts in the run's history, this one included */
};

static PetscErrorCode work_log(void *ctx, double cpu, double wall, const int64_t *counts)
{
  AmrCycle cyc = ctx;

  PetscFunctionBeginUser;
  PetscCall(AmrLbAddStep(cyc->lb, cpu, wall, counts));
  PetscFunctionReturn(0);
}

/* -checkpoint, -checkpoint_interval, -restart. */
static PetscErrorCode checkpoint_options(MPI_Comm comm, AmrCycle cyc)
{
  PetscBool set_ckp, set_restart;
  PetscInt interval = 1;

  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, NULL, "Checkpoint and restart", NULL);
  AMR_OPTION("-checkpoint", PetscOptionsString("-checkpoint", "Write a checkpoint PREFIX.manifest, PREFIX.S.forest, PREFIX.S.state after the balancing step of every -checkpoint_interval-th cycle (replaced atomically)",
                                               NULL, cyc->checkpoint, cyc->checkpoint, sizeof cyc->checkpoint, &set_ckp));
  AMR_OPTION("-checkpoint_interval", PetscOptionsInt("-checkpoint_interval", "Checkpoint every K-th cycle (0: none)", NULL, interval, &interval, NULL));
  AMR_OPTION("-restart", PetscOptionsString("-restart", "Continue the run of checkpoint PREFIX, with its options; options given here override them (not -problem, -mesh, -degree)",
                                            NULL, cyc->restart, cyc->restart, sizeof cyc->restart, &set_restart));
  PetscOptionsEnd();
  PetscCheck(!set_ckp || cyc->checkpoint[0], comm, PETSC_ERR_USER_INPUT, "option -checkpoint: needs a file name prefix, e.g. -checkpoint out/run");
  PetscCheck(!set_restart || cyc->restart[0], comm, PETSC_ERR_USER_INPUT, "option -restart: needs the prefix of a checkpoint, e.g. -restart out/run");
  PetscCheck(interval >= 0, comm, PETSC_ERR_USER_INPUT, "option -checkpoint_interval %" PetscInt_FMT ": must not be negative", interval);
  cyc->checkpoint_interval = interval;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleCreate(MPI_Comm comm, const AmrMesh *mesh, PetscInt min_level, const char *vtk, PetscBool vtk_binary, AmrCycle *out)
{
  char name[64] = "", names[512], phelp[640];
  const AmrProblemOps *ops = NULL;
  AmrCycle cyc;
  PetscBool help;

  PetscFunctionBeginUser;
  *out = NULL;
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  PetscCall(AmrProblemNames(", ", names, sizeof names));
  PetscCall(PetscSNPrintf(phelp, sizeof phelp, "Problem of the adaptive cycle (none: build the mesh only; -problem NAME -help lists its options): %s", names));
  PetscOptionsBegin(comm, NULL, "Problem", NULL);
  AMR_OPTION("-problem", PetscOptionsString("-problem", phelp, NULL, name, name, sizeof name, NULL));
  PetscOptionsEnd();
  if (name[0]) {
    ops = AmrProblemFind(name);
    PetscCheck(ops, comm, PETSC_ERR_USER_INPUT, "option -problem %s: unknown problem (choose from %s)", name, names);
  }
  if (!ops && !help) PetscFunctionReturn(0);

  PetscCall(PetscCalloc1(1, &cyc));
  cyc->comm = comm;
  if (vtk[0]) PetscCall(AmrVtkSeriesCreate(comm, vtk, vtk_binary, &cyc->vtk));
  if (ops) {
    PetscCall(AmrProblemCreate(comm, ops, mesh, min_level, &cyc->problem));
    cyc->problem->log = work_log;
    cyc->problem->log_ctx = cyc;
  }
  {
    const AmrProblem p = cyc->problem;
    PetscInt cycles = p ? p->cycles : 8;
    AmrAdaptOptionsDefaults(p ? p->strategy : "fraction", min_level, p ? p->max_level : P4EST_QMAXLEVEL, &cyc->adapt);
    PetscCall(AmrAdaptOptionsRead(comm, &cyc->adapt));
    PetscInt monitor = 0;
    PetscOptionsBegin(comm, NULL, "Cycle", NULL);
    AMR_OPTION("-amr_cycles",
               PetscOptionsInt("-amr_cycles",
                               "Stationary problems (Poisson family): the number of solve-estimate-adapt cycles, default 8; problems with time: "
                               "an upper bound on the cycles (one cycle = the time steps up to the next adaptation), the run ends at -t_final "
                               "(default: no bound)",
                               NULL, cycles, &cycles, NULL));
    AMR_OPTION("-monitor_interval", PetscOptionsInt("-monitor_interval",
                                                    "Print the human lines of every K-th cycle (the first and the last always; the report has every "
                                                    "cycle); 0: every cycle up to 10, every 10th up to 100, every 100th up to 1000, ...",
                                                    NULL, monitor, &monitor, NULL));
    PetscOptionsEnd();
    PetscCheck(cycles >= 1, comm, PETSC_ERR_USER_INPUT, "option -amr_cycles %" PetscInt_FMT ": must be at least 1", cycles);
    PetscCheck(monitor >= 0, comm, PETSC_ERR_USER_INPUT, "option -monitor_interval %" PetscInt_FMT ": must not be negative", monitor);
    cyc->cycles = cycles;
    cyc->monitor = monitor;
    cyc->fixed = !strcmp(cyc->adapt.strategy, "uniform") && p && p->state.sim_time >= 0;
    PetscCall(AmrLbOptionsRead(comm, p ? p->ntypes : 1, &cyc->lbo));
    PetscCheck(cyc->lbo.weights != AMR_LB_MEASURED || !p || p->ops->cell_costs, comm, PETSC_ERR_USER_INPUT,
               "option -lb_weights measured: problem %s does not time its cells (reactive-transport does)", p->ops->name);
    PetscCall(checkpoint_options(comm, cyc));
  }
  *out = cyc;
  if (help) PetscFunctionReturn(0);
  {
    /* registered once per process: a test may make several cycles */
    static PetscLogStage stage[NPHASES];
    static PetscBool registered;
    for (int ph = 0; !registered && ph < NPHASES; ph++) PetscCall(PetscLogStageRegister(stage_name[ph], &stage[ph]));
    registered = PETSC_TRUE;
    memcpy(cyc->stage, stage, sizeof stage);
  }
  PetscCall(AmrLbCreate(comm, &cyc->lbo, &cyc->lb));
  PetscFunctionReturn(0);
}

AmrProblem AmrCycleGetProblem(AmrCycle cyc) { return cyc->problem; }

/* The problem's outside fields as the repartition takes them. */
static void cycle_fields(AmrCycle cyc, int *n, AmrField fields[])
{
  const AmrProblem p = cyc->problem;
  *n = 0;
  for (int k = 0; k < p->nfields; k++)
    if (p->field[k].data) {
      fields[*n].data = p->field[k].data;
      fields[*n].size = p->field[k].size;
      (*n)++;
    }
}

/* The problem's measured cost of every local cell into a fresh array. */
static PetscErrorCode cell_costs(AmrCycle cyc, double **cost)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(cyc->p4est->local_num_quadrants + 1, cost));
  PetscCall(cyc->problem->ops->cell_costs(cyc->problem, *cost));
  PetscFunctionReturn(0);
}

/* Fresh per-cell arrays for the current forest, and its load types. */
static PetscErrorCode cell_arrays(AmrCycle cyc)
{
  const p4est_locidx_t n = cyc->p4est->local_num_quadrants;

  PetscFunctionBeginUser;
  PetscCall(PetscFree(cyc->types));
  PetscCall(PetscFree(cyc->eta2));
  PetscCall(PetscCalloc1(n + 1, &cyc->types));
  PetscCall(PetscMalloc1(n + 1, &cyc->eta2));
  if (cyc->problem->ops->load_types) PetscCall(cyc->problem->ops->load_types(cyc->problem, cyc->types));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleAdapt(AmrCycle cyc, const double *eta2)
{
  p4est_t *p4est = cyc->p4est;
  const p4est_locidx_t n = p4est->local_num_quadrants;
  const AmrAdaptOptions *o = &cyc->adapt;
  signed char *marks, *level;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(n + 1, &marks, n + 1, &level));
  if (!strcmp(o->strategy, "threshold")) {
    /* on the indicator itself: sqrt of a square gives it back exactly */
    for (p4est_locidx_t e = 0; e < n; e++) {
      const double eta = sqrt(eta2[e]);
      marks[e] = eta > o->refine_tol ? 1 : eta < o->coarsen_tol ? -1 : 0;
    }
  } else {
    for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
      p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
      for (size_t k = 0; k < tr->quadrants.elem_count; k++) level[tr->quadrants_offset + k] = p4est_quadrant_array_index(&tr->quadrants, k)->level;
    }
    PetscCall(AmrMark(cyc->comm, o->strategy, (long)n, eta2, level, &o->mark, marks));
  }
  PetscCall(cyc->problem->ops->adapt(cyc->problem, marks, o->mark.min_level, o->mark.max_level));
  PetscCall(PetscFree2(marks, level));
  PetscFunctionReturn(0);
}

/* The cycle number of a report line, -1 if it has none. */
static long line_cycle(const char *line)
{
  const char *c = strstr(line, "\"cycle\":");
  return c ? strtol(c + 8, NULL, 10) : -1;
}

/* Open the report, opened only once every option was accepted so that a
 * typo does not truncate the report of an earlier run.  A restart keeps
 * the lines of the cycles before its first (those of the interrupted run
 * up to its checkpoint) and appends to them. */
static PetscErrorCode open_report(AmrCycle cyc)
{
  PetscMPIInt rank;
  int fail = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(cyc->comm, &rank));
  if (cyc->adapt.report[0]) PetscCall(AmrMakeParentDirs(cyc->comm, "-report", cyc->adapt.report, cyc->adapt.report));
  if (cyc->adapt.report[0] && rank == 0) {
    char *kept = NULL, line[1 << 16];
    size_t len = 0, cap = 0;
    FILE *old = cyc->first > 0 ? fopen(cyc->adapt.report, "r") : NULL;
    /* lines longer than the buffer belong to a record of many ranks: kept
     * or dropped with the piece that has the cycle number */
    int keep = 1;
    while (old && fgets(line, sizeof line, old)) {
      const size_t n = strlen(line);
      if (!len || kept[len - 1] == '\n') keep = line_cycle(line) < cyc->first;
      if (!keep) continue;
      if (len + n + 1 > cap) {
        char *more = realloc(kept, 2 * (len + n + 1));
        if (!more) break;
        kept = more;
        cap = 2 * (len + n + 1);
      }
      memcpy(kept + len, line, n + 1);
      len += n;
    }
    if (old) fclose(old);
    cyc->report = fopen(cyc->adapt.report, "w");
    fail = cyc->report ? 0 : errno;
    if (cyc->report && len) fputs(kept, cyc->report);
    free(kept);
  }
  PetscCallMPI(MPI_Bcast(&fail, 1, MPI_INT, 0, cyc->comm));
  PetscCheck(!fail, cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot open for writing: %s", cyc->adapt.report, strerror(fail));
  PetscFunctionReturn(0);
}

/* A -checkpoint directory that cannot take the files is refused before
 * the first cycle, not after it. */
static PetscErrorCode check_checkpoint_dir(AmrCycle cyc)
{
  char dir[PETSC_MAX_PATH_LEN];
  char *slash;
  int fail = 0;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  if (!cyc->checkpoint[0] || !cyc->checkpoint_interval) PetscFunctionReturn(0);
  PetscCall(AmrMakeParentDirs(cyc->comm, "-checkpoint", cyc->checkpoint, cyc->checkpoint));
  PetscCallMPI(MPI_Comm_rank(cyc->comm, &rank));
  PetscCall(PetscStrncpy(dir, cyc->checkpoint, sizeof dir));
  slash = strrchr(dir, '/');
  if (slash) slash[slash == dir ? 1 : 0] = '\0';
  else PetscCall(PetscStrncpy(dir, ".", sizeof dir));
  if (rank == 0 && access(dir, W_OK | X_OK)) fail = errno;
  PetscCallMPI(MPI_Bcast(&fail, 1, MPI_INT, 0, cyc->comm));
  PetscCheck(!fail, cyc->comm, PETSC_ERR_USER_INPUT, "option -checkpoint %s: cannot write into directory '%s': %s", cyc->checkpoint, dir, strerror(fail));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleSetup(AmrCycle cyc, p4est_t *p4est)
{
  const AmrProblem p = cyc->problem;
  AmrField fields[AMR_PROBLEM_MAX_FIELDS];
  int nf;

  PetscFunctionBeginUser;
  PetscCall(check_checkpoint_dir(cyc));
  PetscCall(open_report(cyc));
  cyc->p4est = p4est;
  PetscCall(p->ops->setup(p, p4est));
  cycle_fields(cyc, &nf, fields);
  /* refine towards the initial data, split by cell count with families
   * together, then give the fine cells the data */
  for (int l = cyc->adapt.mark.min_level; p->ops->initial && !cyc->fixed && l < cyc->adapt.mark.max_level; l++) {
    PetscCall(cell_arrays(cyc));
    PetscCall(p->ops->estimate(p, cyc->eta2));
    PetscCall(AmrCycleAdapt(cyc, cyc->eta2));
    PetscCall(AmrLbPartitionEven(p4est, nf, fields));
    PetscCall(p->ops->initial(p));
  }
  PetscCall(cell_arrays(cyc));
  PetscCall(AmrLbInitial(cyc->lb, p4est, cyc->types, nf, fields));
  PetscFunctionReturn(0);
}

/* The VTK series' outputs up to the checkpoint, so that a restart's .pvd
 * lists the whole run (vtk.prefix: a restart writing another series
 * starts it anew). */
static PetscErrorCode save_vtk_series(AmrCycle cyc, AmrCkpState st)
{
  const char *prefix;
  const int *cycles;
  const double *times;
  int64_t *c;
  int n;

  PetscFunctionBeginUser;
  if (!cyc->vtk) PetscFunctionReturn(0);
  AmrVtkSeriesEntries(cyc->vtk, &prefix, &n, &cycles, &times);
  PetscCall(PetscMalloc1((size_t)n + 1, &c));
  for (int i = 0; i < n; i++) c[i] = cycles[i];
  PetscCall(AmrCkpStateSetString(st, "vtk.prefix", prefix));
  PetscCall(AmrCkpStateSetBytes(st, "vtk.cycles", c, sizeof(int64_t) * n));
  PetscCall(AmrCkpStateSetBytes(st, "vtk.times", times, sizeof(double) * n));
  PetscCall(PetscFree(c));
  PetscFunctionReturn(0);
}

static PetscErrorCode load_vtk_series(AmrCycle cyc, AmrCkpState st)
{
  const char *prefix, *saved;
  const int *cycles;
  const double *times;
  const void *bc, *bt;
  size_t nc, nt;
  int *c, n;
  double *t;
  PetscBool has;

  PetscFunctionBeginUser;
  if (!cyc->vtk) PetscFunctionReturn(0);
  PetscCall(AmrCkpStateHas(st, "vtk.prefix", &has));
  if (!has) PetscFunctionReturn(0);
  PetscCall(AmrCkpStateGetString(st, "vtk.prefix", &saved));
  AmrVtkSeriesEntries(cyc->vtk, &prefix, &n, &cycles, &times);
  if (strcmp(saved, prefix)) PetscFunctionReturn(0);
  PetscCall(AmrCkpStateGetBytes(st, "vtk.cycles", &bc, &nc));
  PetscCall(AmrCkpStateGetBytes(st, "vtk.times", &bt, &nt));
  PetscCheck(nc % sizeof(int64_t) == 0 && nt / sizeof(double) == nc / sizeof(int64_t) && nt % sizeof(double) == 0, cyc->comm, PETSC_ERR_USER_INPUT,
             "checkpoint '%s.manifest': malformed vtk.cycles or vtk.times entry", cyc->restart);
  n = (int)(nc / sizeof(int64_t));
  PetscCall(PetscMalloc2((size_t)n + 1, &c, (size_t)n + 1, &t));
  for (int i = 0; i < n; i++) {
    int64_t v;
    memcpy(&v, (const char *)bc + sizeof v * i, sizeof v);
    c[i] = (int)v;
  }
  if (n) memcpy(t, bt, nt);
  PetscCall(AmrVtkSeriesRestore(cyc->vtk, n, c, t));
  PetscCall(PetscFree2(c, t));
  PetscFunctionReturn(0);
}

PetscBool AmrCycleRestarts(AmrCycle cyc) { return cyc && cyc->problem && cyc->restart[0] ? PETSC_TRUE : PETSC_FALSE; }

/* Copy every local quadrant's user data (qsize bytes each, curve order)
 * into buf, or back from it into the forest (to_forest). */
static void copy_quadrant_data(p4est_t *p4est, size_t qsize, char *buf, PetscBool to_forest)
{
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count && qsize; i++) {
      void *q = p4est_quadrant_array_index(&tr->quadrants, i)->p.user_data;
      char *b = buf + qsize * (tr->quadrants_offset + i);
      if (to_forest) memcpy(q, b, qsize);
      else memcpy(b, q, qsize);
    }
  }
}

PetscErrorCode AmrCycleRestart(AmrCycle cyc, p4est_connectivity_t *conn, p4est_t **out)
{
  const AmrProblem p = cyc->problem;
  const char *prefix = cyc->restart;
  AmrField stored[AMR_PROBLEM_MAX_FIELDS], fields[AMR_PROBLEM_MAX_FIELDS];
  void *arrays[AMR_PROBLEM_MAX_FIELDS] = {NULL};
  const void *buf;
  size_t len, qsize;
  int64_t v, sizes[AMR_PROBLEM_MAX_FIELDS];
  AmrCkpState st;
  p4est_t *p4est;
  PetscMPIInt size;
  char *qdata;
  int nstored, nf;

  PetscFunctionBeginUser;
  *out = NULL;
  PetscCallMPI(MPI_Comm_size(cyc->comm, &size));
  /* what a restart may not change, checked before the forest is read */
  PetscCall(AmrCheckpointReadState(cyc->comm, prefix, &st));
  PetscCall(AmrCkpStateCheckString(st, "problem", p->ops->name));
  PetscCall(AmrCkpStateCheckInt(st, "degree", p->degree));
  PetscCall(AmrCkpStateCheckString(st, "mesh", p->mesh->name));
  PetscCall(AmrCkpStateGetInt(st, "layout.quadrant_data", &v));
  qsize = (size_t)v;
  PetscCall(AmrCkpStateGetBytes(st, "layout.fields", &buf, &len));
  PetscCheck(len % sizeof(int64_t) == 0 && len / sizeof(int64_t) <= AMR_PROBLEM_MAX_FIELDS, cyc->comm, PETSC_ERR_USER_INPUT,
             "checkpoint '%s.manifest': malformed layout.fields entry", prefix);
  nstored = (int)(len / sizeof(int64_t));
  memcpy(sizes, buf, len);
  PetscCall(AmrCkpStateDestroy(&st));
  for (int k = 0; k < nstored; k++) {
    stored[k].data = &arrays[k];
    stored[k].size = (size_t)sizes[k];
  }
  PetscCall(AmrCheckpointRead(cyc->comm, prefix, conn, qsize, nstored, stored, &p4est, NULL, &st));
  PetscCall(AmrCkpStateGetInt(st, "cycle.next", &v));
  cyc->first = (int)v;
  PetscCheck(cyc->first < cyc->cycles, cyc->comm, PETSC_ERR_USER_INPUT, "option -amr_cycles %" PetscInt_FMT ": checkpoint '%s.manifest' continues at cycle %d",
             cyc->cycles, prefix, cyc->first);
  PetscCall(AmrCkpStateGetInt(st, "cycle.restarts", &v));
  cyc->restarts = (int)v + 1;

  /* on as many ranks the checkpoint's partition, else an even one with
   * families kept together (the balancer takes over from there) */
  PetscCall(AmrCkpStateGetBytes(st, "cycle.rank_cells", &buf, &len));
  if (len == sizeof(int64_t) * size) {
    p4est_locidx_t *counts;
    PetscCall(PetscMalloc1(size, &counts));
    for (int r = 0; r < size; r++) {
      int64_t c;
      memcpy(&c, (const char *)buf + sizeof(int64_t) * r, sizeof c);
      counts[r] = (p4est_locidx_t)c;
    }
    PetscCall(AmrMigrate(p4est, counts, nstored, stored, NULL));
    PetscCall(PetscFree(counts));
  } else {
    PetscCall(AmrLbPartitionEven(p4est, nstored, stored));
  }

  /* the problem on the loaded forest, then its data back in place: setup
   * may have reset the quadrant data to initial values */
  PetscCall(PetscMalloc1(qsize * (size_t)p4est->local_num_quadrants + 1, &qdata));
  copy_quadrant_data(p4est, qsize, qdata, PETSC_FALSE);
  PetscCall(check_checkpoint_dir(cyc));
  PetscCall(open_report(cyc));
  cyc->p4est = p4est;
  *out = p4est;
  PetscCall(p->ops->setup(p, p4est));
  cycle_fields(cyc, &nf, fields);
  {
    PetscBool same = p4est->data_size == qsize && nf == nstored;
    for (int k = 0; same && k < nf; k++) same = fields[k].size == stored[k].size;
    PetscCheck(same, cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest' holds other cell data than problem %s has", prefix, p->ops->name);
  }
  copy_quadrant_data(p4est, qsize, qdata, PETSC_TRUE);
  PetscCall(PetscFree(qdata));
  for (int k = 0; k < nf; k++) {
    PetscCall(PetscFree(*fields[k].data));
    *fields[k].data = arrays[k];
  }

  /* the state of the run at the end of the checkpoint's cycle */
  {
    double t;
    PetscCall(AmrCkpStateGetReal(st, "state.sim_time", &t));
    p->state.sim_time = t;
    PetscCall(AmrCkpStateGetInt(st, "state.step", &v));
    p->state.step = (long long)v;
    PetscCall(AmrCkpStateGetInt(st, "state.done", &v));
    p->state.done = v ? PETSC_TRUE : PETSC_FALSE;
    PetscCall(AmrCkpStateGetBytes(st, "cycle.phase_totals", &buf, &len));
    if (len == sizeof cyc->total) memcpy(cyc->total, buf, len);
  }
  if (p->ops->load) PetscCall(p->ops->load(p, st));
  PetscCall(AmrLbLoad(cyc->lb, st));
  PetscCall(load_vtk_series(cyc, st));
  PetscCall(AmrCkpStateDestroy(&st));
  PetscCall(cell_arrays(cyc));
  PetscCall(PetscPrintf(cyc->comm, "%s: restarted from checkpoint %s at cycle %d: %lld cells on %d rank%s\n", AMR_PROGRAM, prefix, cyc->first,
                        (long long)p4est->global_num_quadrants, size, size > 1 ? "s" : ""));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleBalance(AmrCycle cyc, int cycle, PetscBool allow, AmrLbRecord *lr)
{
  AmrField fields[AMR_PROBLEM_MAX_FIELDS];
  int nf;

  PetscFunctionBeginUser;
  PetscCall(cell_arrays(cyc));
  cycle_fields(cyc, &nf, fields);
  if (cyc->lbo.weights == AMR_LB_MEASURED) {
    double *cost;
    PetscCall(cell_costs(cyc, &cost));
    PetscCall(AmrLbCellCosts(cyc->lb, cyc->p4est->local_num_quadrants, cost));
    PetscCall(PetscFree(cost));
  }
  PetscCall(AmrLbBalance(cyc->lb, cyc->p4est, cyc->types, cycle, allow, nf, fields, lr));
  PetscFunctionReturn(0);
}

/* ---- checkpoint and restart ---------------------------------------------- */

/* Write the checkpoint after cycle's balancing step: the forest with the
 * problem's fields, what the next cycle needs (problem state, the
 * problem's own, the balancer's), the options and the run totals. */
static PetscErrorCode write_checkpoint(AmrCycle cyc, int cycle)
{
  const AmrProblem p = cyc->problem;
  p4est_t *p4est = cyc->p4est;
  AmrField fields[AMR_PROBLEM_MAX_FIELDS];
  int64_t sizes[AMR_PROBLEM_MAX_FIELDS], *cells;
  AmrCkpState st;
  char *options;
  int nf;

  PetscFunctionBeginUser;
  cycle_fields(cyc, &nf, fields);
  PetscCall(AmrCkpStateCreate(cyc->comm, &st));
  PetscCall(AmrCkpStateSetString(st, "program", AMR_PROGRAM));
  PetscCall(AmrCkpStateSetString(st, "problem", p->ops->name));
  PetscCall(AmrCkpStateSetInt(st, "degree", p->degree));
  PetscCall(AmrCkpStateSetString(st, "mesh", p->mesh->name));
  PetscCall(PetscOptionsGetAll(NULL, &options));
  PetscCall(AmrCkpStateSetString(st, "options", options));
  PetscCall(PetscFree(options));
  /* the layout, which the restart needs before the problem is set up */
  PetscCall(AmrCkpStateSetInt(st, "layout.quadrant_data", (int64_t)p4est->data_size));
  for (int k = 0; k < nf; k++) sizes[k] = (int64_t)fields[k].size;
  PetscCall(AmrCkpStateSetBytes(st, "layout.fields", sizes, sizeof(int64_t) * nf));
  /* the partition, which a restart on as many ranks takes back */
  PetscCall(PetscMalloc1(p4est->mpisize, &cells));
  for (int r = 0; r < p4est->mpisize; r++) cells[r] = (int64_t)(p4est->global_first_quadrant[r + 1] - p4est->global_first_quadrant[r]);
  PetscCall(AmrCkpStateSetBytes(st, "cycle.rank_cells", cells, sizeof(int64_t) * p4est->mpisize));
  PetscCall(PetscFree(cells));
  PetscCall(AmrCkpStateSetInt(st, "cycle.next", cycle + 1));
  PetscCall(AmrCkpStateSetInt(st, "cycle.restarts", cyc->restarts));
  PetscCall(AmrCkpStateSetBytes(st, "cycle.phase_totals", cyc->total, sizeof cyc->total));
  PetscCall(AmrCkpStateSetReal(st, "state.sim_time", p->state.sim_time));
  PetscCall(AmrCkpStateSetInt(st, "state.step", p->state.step));
  PetscCall(AmrCkpStateSetInt(st, "state.done", p->state.done));
  PetscCall(AmrLbSave(cyc->lb, st));
  PetscCall(save_vtk_series(cyc, st));
  if (p->ops->save) PetscCall(p->ops->save(p, st));
  PetscCall(AmrCheckpointWrite(cyc->checkpoint, p4est, nf, fields, st));
  PetscCall(AmrCkpStateDestroy(&st));
  PetscFunctionReturn(0);
}

/* Options of the checkpoint's run that are not given again, so that a
 * restart continues the run it continues; -restart itself is this run's. */
PetscErrorCode AmrCycleRestartOptions(MPI_Comm comm)
{
  char prefix[PETSC_MAX_PATH_LEN] = "", **names, **values, **gnames, **gvalues, *current;
  const char *stored;
  PetscBool set, help;
  PetscOptions old, now;
  AmrCkpState st;
  PetscInt n, ng;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-restart", prefix, sizeof prefix, &set));
  if (help || !set || !prefix[0]) PetscFunctionReturn(0);
  PetscCall(AmrCheckpointReadState(comm, prefix, &st));
  PetscCall(AmrCkpStateCheckString(st, "program", AMR_PROGRAM));
  PetscCall(AmrCkpStateGetString(st, "options", &stored));
  PetscCall(PetscOptionsCreate(&old));
  PetscCall(PetscOptionsInsertString(old, stored));
  PetscCall(PetscOptionsLeftGet(old, &n, &names, &values));
  /* what was given (a copy, as none of it counts as read there) */
  PetscCall(PetscOptionsGetAll(NULL, &current));
  PetscCall(PetscOptionsCreate(&now));
  PetscCall(PetscOptionsInsertString(now, current));
  PetscCall(PetscFree(current));
  PetscCall(PetscOptionsLeftGet(now, &ng, &gnames, &gvalues));
  for (PetscInt i = 0; i < n; i++) {
    char dashed[256];
    PetscBool given = PETSC_FALSE, has;
    if (!strcmp(names[i], "restart") || !strcmp(names[i], "help") || !strcmp(names[i], "options_file")) continue;
    for (PetscInt k = 0; k < ng && !given; k++) given = !strcmp(names[i], gnames[k]);
    if (given) continue;
    PetscCall(PetscSNPrintf(dashed, sizeof dashed, "-%s", names[i]));
    PetscCall(PetscOptionsSetValue(NULL, dashed, values[i]));
    /* marked as read: one the restart does not use (another method's
     * option after -lb_method was changed) is not a typo of this run */
    PetscCall(PetscOptionsHasName(NULL, NULL, dashed, &has));
  }
  PetscCall(PetscOptionsLeftRestore(now, &ng, &gnames, &gvalues));
  PetscCall(PetscOptionsLeftRestore(old, &n, &names, &values));
  PetscCall(PetscOptionsDestroy(&now));
  PetscCall(PetscOptionsDestroy(&old));
  PetscCall(AmrCkpStateDestroy(&st));
  PetscFunctionReturn(0);
}

/* The cycle's VTK output at the problem's time (the cycle without one):
 * the problem's point and cell fields, the indicator and the load type,
 * besides the tree, level and rank the writer adds.  cycle < 0: the
 * initial state, which has no indicator yet. */
static PetscErrorCode write_vtk(AmrCycle cyc, int cycle)
{
  const AmrProblem p = cyc->problem;
  const p4est_locidx_t n = cyc->p4est->local_num_quadrants;
  AmrVtkData d;
  double *eta, *type = NULL;

  PetscFunctionBeginUser;
  AmrVtkDataInit(&d, p->mesh->geom, 1);
  if (p->ops->vtk) PetscCall(p->ops->vtk(p, &d));
  if (cycle >= 0) {
    PetscCall(PetscMalloc1((size_t)n + 1, &eta));
    for (p4est_locidx_t e = 0; e < n; e++) eta[e] = sqrt(cyc->eta2[e]);
    PetscCall(AmrVtkAddCellField(&d, "indicator", eta));
  }
  if (p->ops->load_types) {
    PetscCall(PetscMalloc1((size_t)n + 1, &type));
    for (p4est_locidx_t e = 0; e < n; e++) type[e] = cyc->types[e];
    PetscCall(AmrVtkAddCellField(&d, "load_type", type));
  }
  PetscCall(AmrVtkSeriesWrite(cyc->vtk, cyc->p4est, cycle, p->state.sim_time >= 0 ? p->state.sim_time : cycle, &d));
  /* the problem's arrays are the cycle's to free, as ours */
  for (int k = 0; k < d.npoint; k++) PetscCall(PetscFree(d.point[k].values));
  for (int k = 0; k < d.ncell; k++) PetscCall(PetscFree(d.cell[k].values));
  PetscFunctionReturn(0);
}

/* Each rank's KSPSolve time of the cycle, wall and thread CPU, beside the
 * weighed local work (rank_time): the solve's own imbalance, which the
 * weights do not see.  Absent for a problem without a linear solve. */
static PetscErrorCode report_ksp(AmrCycle cyc, json_line *j)
{
  const AmrProblem p = cyc->problem;
  const int P = cyc->p4est->mpisize;
  double mine[2] = {p->ksp_wall, p->ksp_cpu}, *all, *wall, *cpu;

  PetscFunctionBeginUser;
  if (isnan(mine[0])) PetscFunctionReturn(0);
  PetscCall(PetscMalloc3(2 * P, &all, P, &wall, P, &cpu));
  PetscCallMPI(MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, cyc->comm));
  for (int r = 0; r < P; r++) {
    wall[r] = all[2 * r];
    cpu[r] = all[2 * r + 1];
  }
  json_reals(j, "rank_ksp_time", P, wall);
  json_reals(j, "rank_ksp_cpu", P, cpu);
  PetscCall(PetscFree3(all, wall, cpu));
  PetscFunctionReturn(0);
}

/* The report line of a cycle: the common fields, the balancer's, the
 * problem's. */
static PetscErrorCode write_report(AmrCycle cyc, int cycle, long long cells, const double *t, const AmrLbRecord *lr)
{
  const AmrProblem p = cyc->problem;
  json_line j;

  PetscFunctionBeginUser;
  json_begin(&j, cyc->report);
  json_str(&j, "program", AMR_PROGRAM);
  json_int(&j, "dim", P4EST_DIM);
  json_str(&j, "problem", p->ops->name);
  json_str(&j, "mesh", p->mesh->name);
  json_int(&j, "degree", p->degree);
  json_int(&j, "ranks", cyc->p4est->mpisize);
  json_int(&j, "cycle", cycle);
  json_bool(&j, "restarted", cyc->restarts > 0);
  if (p->state.sim_time >= 0)
    json_real(&j, "sim_time", p->state.sim_time);
  else
    json_null(&j, "sim_time");
  if (p->state.step >= 0)
    json_int(&j, "step", p->state.step);
  else
    json_null(&j, "step");
  json_int(&j, "cells", cells);
  json_int(&j, "dofs", p->dofs);
  for (int ph = 0; ph < NPHASES; ph++) {
    char key[32];
    PetscCall(PetscSNPrintf(key, sizeof key, "t_%s", phase_name[ph]));
    json_real(&j, key, t[ph]);
  }
  AmrLbRecordJSON(&j, cyc->lb, lr);
  PetscCall(report_ksp(cyc, &j));
  PetscCall(p->ops->report(p, &j));
  json_end(&j);
  /* on disk before the cycle's checkpoint: a killed run loses no record */
  if (cyc->report) fflush(cyc->report);
  PetscFunctionReturn(0);
}

/* Whether a cycle's human lines are printed (-monitor_interval): a long
 * run prints tens of lines, not one per cycle. */
static PetscBool monitored(const AmrCycle cyc, int cycle, PetscBool last)
{
  int every = 1;
  if (last || cycle == cyc->first) return PETSC_TRUE;
  if (cyc->monitor > 0) return cycle % cyc->monitor == 0 ? PETSC_TRUE : PETSC_FALSE;
  while (cycle >= 10 * every) every *= 10;
  return cycle % every == 0 ? PETSC_TRUE : PETSC_FALSE;
}

PetscErrorCode AmrCycleRun(AmrCycle cyc)
{
  const AmrProblem p = cyc->problem;
  p4est_t *p4est = cyc->p4est;

  PetscFunctionBeginUser;
  /* a problem with time shows where it starts (not again on a restart) */
  if (cyc->vtk && cyc->first == 0 && p->state.sim_time >= 0) {
    double t0 = MPI_Wtime();
    PetscCall(PetscLogStagePush(cyc->stage[PH_OUTPUT]));
    PetscCall(cell_arrays(cyc));
    PetscCall(write_vtk(cyc, -1));
    PetscCall(PetscLogStagePop());
    cyc->total[PH_OUTPUT] += MPI_Wtime() - t0;
  }
  for (int cycle = cyc->first;; cycle++) {
    double t[NPHASES] = {0}, t0;
    const long long cells = (long long)p4est->global_num_quadrants;
    AmrLbRecord lr;
    PetscBool last, show;

    PetscCall(cell_arrays(cyc));
    PetscCall(AmrLbWindowStart(cyc->lb, p4est, cyc->types));
    PetscCall(PetscLogStagePush(cyc->stage[PH_SOLVE]));
    t0 = MPI_Wtime();
    PetscCall(p->ops->solve(p));
    t[PH_SOLVE] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());
    if (p->ops->cell_costs) {
      /* on the window's forest with its types, before they change */
      double *cost;
      PetscCall(cell_costs(cyc, &cost));
      PetscCall(AmrLbWindowCosts(cyc->lb, p4est->local_num_quadrants, cyc->types, cost));
      PetscCall(PetscFree(cost));
    }

    PetscCall(PetscLogStagePush(cyc->stage[PH_ESTIMATE]));
    t0 = MPI_Wtime();
    PetscCall(p->ops->estimate(p, cyc->eta2));
    if (p->ops->load_types) PetscCall(p->ops->load_types(p, cyc->types));
    t[PH_ESTIMATE] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());
    last = p->state.done || cycle + 1 >= cyc->cycles;
    show = monitored(cyc, cycle, last);
    if (show) PetscCall(p->ops->monitor(p, cycle));

    PetscCall(PetscLogStagePush(cyc->stage[PH_OUTPUT]));
    t0 = MPI_Wtime();
    /* the last cycle always: the run's final state */
    if (cyc->vtk && (cycle % cyc->adapt.vtk_interval == 0 || last)) PetscCall(write_vtk(cyc, cycle));
    t[PH_OUTPUT] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    /* adapt with this cycle's indicator, carrying the fields, then weigh
     * and balance for the next cycle */
    PetscCall(PetscLogStagePush(cyc->stage[PH_ADAPT]));
    t0 = MPI_Wtime();
    if (!last && !cyc->fixed) PetscCall(AmrCycleAdapt(cyc, cyc->eta2));
    t[PH_ADAPT] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(cyc->stage[PH_PARTITION]));
    t0 = MPI_Wtime();
    PetscCall(AmrCycleBalance(cyc, cycle, !last, &lr));
    t[PH_PARTITION] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, t, NPHASES, MPI_DOUBLE, MPI_MAX, cyc->comm));
    for (int ph = 0; ph < NPHASES; ph++) cyc->total[ph] += t[ph];
    PetscCall(write_report(cyc, cycle, cells, t, &lr));
    /* after the cycle's record is in the report (a killed run's report has
     * every cycle its checkpoint covers), and not after the last cycle,
     * which does not adapt: a checkpoint holds the forest the next cycle
     * of the run solves on.  Its time counts in the run's output total. */
    if (cyc->checkpoint[0] && cyc->checkpoint_interval > 0 && (cycle + 1) % cyc->checkpoint_interval == 0 && !last) {
      double tc = MPI_Wtime();
      PetscCall(PetscLogStagePush(cyc->stage[PH_OUTPUT]));
      PetscCall(write_checkpoint(cyc, cycle));
      PetscCall(PetscLogStagePop());
      tc = MPI_Wtime() - tc;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &tc, 1, MPI_DOUBLE, MPI_MAX, cyc->comm));
      cyc->total[PH_OUTPUT] += tc;
    }
    if (show) PetscCall(AmrLbRecordPrint(cyc->comm, AMR_PROGRAM, &lr, p->state.sim_time, cells, p->dofs, t[PH_SOLVE]));
    PetscCall(AmrLbRecordFree(&lr));
    if (last) {
      if (cyc->restarts)
        PetscCall(PetscPrintf(cyc->comm, "%s: %d cycles in the run, cycles %d to %d after restart %d\n", AMR_PROGRAM, cycle + 1, cyc->first, cycle, cyc->restarts));
      else
        PetscCall(PetscPrintf(cyc->comm, "%s: %d cycles in the run\n", AMR_PROGRAM, cycle + 1));
      break;
    }
  }
  PetscCall(PetscPrintf(cyc->comm, "%s: phases (max over ranks):", AMR_PROGRAM));
  for (int ph = 0; ph < NPHASES; ph++) PetscCall(PetscPrintf(cyc->comm, " %s %.3f", phase_name[ph], cyc->total[ph]));
  PetscCall(PetscPrintf(cyc->comm, " s\n"));
  PetscCall(AmrLbSummary(cyc->lb, cyc->comm, AMR_PROGRAM));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleDestroy(AmrCycle *cyc)
{
  PetscFunctionBeginUser;
  if (!*cyc) PetscFunctionReturn(0);
  if ((*cyc)->report) fclose((*cyc)->report);
  PetscCall(AmrProblemDestroy(&(*cyc)->problem));
  PetscCall(AmrLbDestroy(&(*cyc)->lb));
  PetscCall(AmrVtkSeriesDestroy(&(*cyc)->vtk));
  PetscCall(PetscFree((*cyc)->types));
  PetscCall(PetscFree((*cyc)->eta2));
  PetscCall(PetscFree(*cyc));
  PetscFunctionReturn(0);
}
