#define _POSIX_C_SOURCE 200809L /* sigaction */
/* The one AMR cycle over a registered problem (cycle.h); its checkpoint
 * and restart are in cycle_restart.c.  Compiled for 2D and 3D (P4_TO_P8). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include "app/impl/cycle.h"

#include "mesh/p4est_dim.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/options.h"
#include "util/fileio.h"
#include "mesh/dirs.h"
#include "mesh/mark.h"

static const char *const phase_name[NPHASES] = {"solve", "estimate", "adapt", "partition", "output"};
static const char *const stage_name[NPHASES] = {"Solve", "Estimate", "Adapt", "Partition", "Output"};

static PetscErrorCode work_log(void *ctx, double cpu, double wall, const int64_t *counts)
{
  AmrCycle cyc = ctx;

  PetscFunctionBeginUser;
  PetscCall(AmrLbAddStep(cyc->lb, cpu, wall, counts));
  PetscFunctionReturn(0);
}

static PetscErrorCode phase_switch(void *ctx, int k)
{
  AmrCycle cyc = ctx;

  PetscFunctionBeginUser;
  PetscCall(AmrLbPhaseSwitch(cyc->lb, k));
  PetscFunctionReturn(0);
}

/* The phases of a cycle: the problem's solve (one, "solve", unless it
 * names its own), then the cycle's.  The solve's phases, the estimate and
 * the adaptation do work that follows the cells, which the model fits (per
 * load type where the problem says a phase's cells differ, else one cost
 * for every cell); the output, the partition step and a phase balanced
 * apart from the mesh (the problem's phase_apart) are taken as measured. */
static PetscErrorCode set_phases(AmrCycle cyc)
{
  static const char *const own[] = {"estimate", "output", "adapt", "partition"};
  static const int own_modelled[] = {AMR_LB_PHASE_CELLS, AMR_LB_PHASE_MEASURED, AMR_LB_PHASE_CELLS, AMR_LB_PHASE_MEASURED};
  const AmrProblem p = cyc->problem;
  const char *names[AMR_LB_MAX_PHASES];
  int modelled[AMR_LB_MAX_PHASES], n = 0;

  PetscFunctionBeginUser;
  if (!p) PetscFunctionReturn(0);
  for (int k = 0; k < PetscMax(p->nphases, 1); k++) {
    names[n] = p->nphases ? p->phase_name[k] : "solve";
    modelled[n] = AMR_LB_PHASE_TYPES;
    if (p->nphases) modelled[n] = p->phase_apart[k] ? AMR_LB_PHASE_MEASURED : p->phase_typed[k] ? AMR_LB_PHASE_TYPES : AMR_LB_PHASE_CELLS;
    n++;
  }
  cyc->phase0 = n;
  for (int k = 0; k < 4; k++) {
    names[n] = own[k];
    modelled[n++] = own_modelled[k];
  }
  PetscCall(AmrLbPhasesSet(cyc->lb, n, names, modelled, p->ops->cell_costs ? p->cost_phase : -1));
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
  cyc->report = cyc->report_lock = cyc->checkpoint_lock = -1;
  if (vtk[0]) PetscCall(AmrVtkSeriesCreate(comm, vtk, vtk_binary, &cyc->vtk));
  if (ops) {
    PetscCall(AmrProblemCreate(comm, ops, mesh, min_level, &cyc->problem));
    cyc->problem->log = work_log;
    cyc->problem->log_ctx = cyc;
    cyc->problem->phase = phase_switch;
    cyc->problem->phase_ctx = cyc;
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
    PetscCall(AmrCycleCheckpointOptions(comm, cyc));
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
  /* a restart takes its checkpoint's instead */
  PetscCall(AmrCycleNewRunId(cyc));
  PetscCall(set_phases(cyc));
  PetscFunctionReturn(0);
}

AmrProblem AmrCycleGetProblem(AmrCycle cyc) { return cyc->problem; }

/* The problem's outside fields as the repartition takes them. */
void AmrCycleFields(AmrCycle cyc, int *n, AmrField fields[])
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
PetscErrorCode AmrCycleCellArrays(AmrCycle cyc)
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

/* Open the report, opened only once every option was accepted so that a
 * typo does not truncate the report of an earlier run.  A restart keeps
 * the lines of the cycles before its first (those of the interrupted run
 * up to its checkpoint) and appends to them. */
PetscErrorCode AmrCycleOpenReport(AmrCycle cyc)
{
  PetscMPIInt rank;
  long whole = -1, keep = 0, partial = 0;
  int fail[3] = {0, 0, 0}; /* read, write, another run's records */
  const char *shown = AmrPathShort(cyc->adapt.report);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(cyc->comm, &rank));
  if (cyc->adapt.report[0]) PetscCall(AmrMakeParentDirs(cyc->comm, "-report", cyc->adapt.report, cyc->adapt.report));
  if (cyc->adapt.report[0]) PetscCall(AmrFileCheckRegular(cyc->comm, "-report", cyc->adapt.report, 1));
  /* before the file is read or cut: another run may be writing it */
  if (cyc->adapt.report[0]) PetscCall(AmrFileLock(cyc->comm, "-report", cyc->adapt.report, &cyc->report_lock));
  if (cyc->adapt.report[0] && rank == 0) {
    fail[0] = AmrCycleReportKept(cyc, &whole, &keep, &partial, &fail[2]);
    /* a report that lost records before the checkpoint, or holds another
     * run's, stays as it is; one continued is cut after its kept records,
     * not rewritten, so that a full disk now cannot take them */
    if (!fail[0] && !fail[2] && (whole < 0 || whole >= cyc->first)) {
      fail[1] = AmrFileOpen(cyc->adapt.report, O_WRONLY | O_CREAT | (whole < 0 ? O_TRUNC : 0), 1, &cyc->report);
      if (!fail[1] && whole >= 0 && ftruncate(cyc->report, (off_t)keep)) fail[1] = errno;
      if (!fail[1] && lseek(cyc->report, 0, SEEK_END) < 0) fail[1] = errno;
    }
  }
  PetscCallMPI(MPI_Bcast(fail, 3, MPI_INT, 0, cyc->comm));
  PetscCheck(!fail[0], cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot read: %s", shown, AmrFileStrerror(fail[0]));
  PetscCheck(!fail[2], cyc->comm, PETSC_ERR_USER_INPUT,
             "option -report %s: holds the records of another run, not of checkpoint '%s.manifest' (run_id %08x): left as it is (give this run's report, or another file)",
             shown, AmrPathShort(cyc->restart), (unsigned)cyc->run_id);
  PetscCallMPI(MPI_Bcast(&whole, 1, MPI_LONG, 0, cyc->comm));
  PetscCheck(whole < 0 || whole >= cyc->first, cyc->comm, PETSC_ERR_USER_INPUT,
             "option -report %s: holds %ld whole records, the checkpoint continues after cycle %d: a record was cut or lost (restore the report, or give another file)",
             shown, whole, cyc->first - 1);
  PetscCheck(!fail[1], cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot write: %s", shown, AmrFileStrerror(fail[1]));
  /* the one line that says a record was dropped, as the issue asks */
  if (partial > 0 && whole >= 0)
    PetscCall(PetscPrintf(cyc->comm, "%s: option -report %s: its last record was cut (%ld bytes without an end of line): cut back to the record of cycle %d\n", AMR_PROGRAM,
                          cyc->adapt.report, partial, cyc->first - 1));
  PetscFunctionReturn(0);
}

/* The line an interrupt prints on rank 0, rewritten after every cycle and
 * checkpoint into the buffer the handler is not reading, then published by
 * one store: the handler may run at any instruction.  The human lines are
 * every 10th cycle after cycle 10, so this line names the last cycle done. */
static char interrupt_line[2][2 * PETSC_MAX_PATH_LEN + 256];
static size_t interrupt_len[2];
static volatile sig_atomic_t interrupt_current = -1; /* -1: print nothing (not rank 0) */
/* PETSc and MPI run threads of their own, any of which may take the
 * signal: a mask on this thread would not hold it back, a flag does */
static volatile sig_atomic_t interrupt_deferred, interrupt_pending;

static void on_interrupt(int sig)
{
  const int k = interrupt_current;
  if (interrupt_deferred) {
    interrupt_pending = sig;
    return;
  }
  if (k >= 0) {
    ssize_t unused = write(STDERR_FILENO, interrupt_line[k], interrupt_len[k]);
    (void)unused;
  }
  _exit(128 + sig);
}

void AmrCycleDeferInterrupts(PetscBool defer)
{
  interrupt_deferred = defer;
  if (!defer && interrupt_pending) on_interrupt(interrupt_pending);
}

PetscErrorCode AmrCycleCatchInterrupts(AmrCycle cyc, int done)
{
  const int k = interrupt_current == 0 ? 1 : 0;
  char *l = interrupt_line[k];
  const size_t len = sizeof interrupt_line[k];
  PetscMPIInt rank;
  struct sigaction sa;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(cyc->comm, &rank));
  if (done < 0) PetscCall(PetscSNPrintf(l, len, "%s: interrupted before cycle %d was done", AMR_PROGRAM, cyc->first));
  else PetscCall(PetscSNPrintf(l, len, "%s: interrupted after cycle %d", AMR_PROGRAM, done));
  if (cyc->held_by)
    PetscCall(PetscSNPrintf(l + strlen(l), len - strlen(l), "; checkpoint %s continues the run at cycle %d: -restart %s\n", cyc->held_by, cyc->held_next,
                            cyc->held_by));
  else if (cyc->checkpoint[0] && cyc->checkpoint_interval) PetscCall(PetscSNPrintf(l + strlen(l), len - strlen(l), "; no checkpoint written yet\n"));
  else PetscCall(PetscSNPrintf(l + strlen(l), len - strlen(l), "; no checkpoint (-checkpoint PREFIX writes one)\n"));
  interrupt_len[k] = strlen(l);
  if (rank == 0) interrupt_current = k;
  /* over PETSc's handler, whose trace would say nothing of the run */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  PetscCheck(!sigaction(SIGINT, &sa, NULL) && !sigaction(SIGTERM, &sa, NULL), cyc->comm, PETSC_ERR_SYS, "cannot catch SIGINT and SIGTERM: %s",
             strerror(errno));
  PetscFunctionReturn(0);
}

/* Output paths that cannot take the files are refused before the first
 * cycle, not after its work. */
PetscErrorCode AmrCycleCheckOutputs(AmrCycle cyc)
{
  PetscFunctionBeginUser;
  if (cyc->vtk) {
    const char *prefix;
    const int *cycles;
    const double *times;
    int n;
    AmrVtkSeriesEntries(cyc->vtk, &prefix, &n, &cycles, &times);
    PetscCall(AmrCheckOutputDir(cyc->comm, "-vtk", prefix));
  }
  if (cyc->checkpoint[0] && cyc->checkpoint_interval) {
    char path[PETSC_MAX_PATH_LEN + 16];
    PetscCall(AmrCheckOutputDir(cyc->comm, "-checkpoint", cyc->checkpoint));
    /* the manifest is read and replaced after the first cycle: a folder
     * or a FIFO in its place is refused before it */
    PetscCall(PetscSNPrintf(path, sizeof path, "%s.manifest", cyc->checkpoint));
    PetscCall(AmrFileCheckRegular(cyc->comm, "-checkpoint", path, 0));
    PetscCall(PetscSNPrintf(path, sizeof path, "%s.manifest.new", cyc->checkpoint));
    PetscCall(AmrFileCheckRegular(cyc->comm, "-checkpoint", path, 0));
    PetscCall(AmrFileLock(cyc->comm, "-checkpoint", cyc->checkpoint, &cyc->checkpoint_lock));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleSetup(AmrCycle cyc, p4est_t *p4est)
{
  const AmrProblem p = cyc->problem;
  AmrField fields[AMR_PROBLEM_MAX_FIELDS];
  int nf;

  PetscFunctionBeginUser;
  PetscCall(AmrCycleCheckOutputs(cyc));
  PetscCall(AmrCycleOpenReport(cyc));
  cyc->p4est = p4est;
  PetscCall(p->ops->setup(p, p4est));
  AmrCycleFields(cyc, &nf, fields);
  /* refine towards the initial data, split by cell count with families
   * together, then give the fine cells the data */
  for (int l = cyc->adapt.mark.min_level; p->ops->initial && !cyc->fixed && l < cyc->adapt.mark.max_level; l++) {
    PetscCall(AmrCycleCellArrays(cyc));
    PetscCall(p->ops->estimate(p, cyc->eta2));
    PetscCall(AmrCycleAdapt(cyc, cyc->eta2));
    PetscCall(AmrLbPartitionEven(p4est, nf, fields));
    PetscCall(p->ops->initial(p));
  }
  PetscCall(AmrCycleCellArrays(cyc));
  PetscCall(AmrLbInitial(cyc->lb, p4est, cyc->types, nf, fields));
  PetscCall(AmrCycleCatchInterrupts(cyc, -1));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleBalance(AmrCycle cyc, int cycle, PetscBool allow, AmrLbRecord *lr)
{
  AmrField fields[AMR_PROBLEM_MAX_FIELDS];
  int nf;

  PetscFunctionBeginUser;
  PetscCall(AmrCycleCellArrays(cyc));
  AmrCycleFields(cyc, &nf, fields);
  /* measured weights weigh every cell by its cost; the phase model weighs
   * the cells of the phase whose work the costs measure by them */
  if (cyc->problem->ops->cell_costs) {
    double *cost;
    PetscCall(cell_costs(cyc, &cost));
    PetscCall(AmrLbCellCosts(cyc->lb, cyc->p4est->local_num_quadrants, cost));
    PetscCall(PetscFree(cost));
  }
  PetscCall(AmrLbBalance(cyc->lb, cyc->p4est, cyc->types, cycle, allow, nf, fields, lr));
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
  char *line = NULL;
  size_t len = 0;
  FILE *mem = NULL;
  int err = 0, cut = 0;

  PetscFunctionBeginUser;
  /* composed whole first: a record that cannot be written fails with the
   * system's reason, at once */
  if (cyc->report >= 0 && !(mem = open_memstream(&line, &len))) err = errno;
  json_begin(&j, mem);
  json_str(&j, "program", AMR_PROGRAM);
  json_int(&j, "dim", P4EST_DIM);
  json_str(&j, "problem", p->ops->name);
  json_str(&j, "mesh", p->mesh->name);
  json_int(&j, "degree", p->degree);
  json_int(&j, "ranks", cyc->p4est->mpisize);
  json_int(&j, "cycle", cycle);
  {
    char id[16];
    PetscCall(PetscSNPrintf(id, sizeof id, "%08x", (unsigned)cyc->run_id));
    json_str(&j, "run_id", id);
  }
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
  /* with the system before the cycle's checkpoint: a killed run loses no
   * record, and a full disk ends the run before the checkpoint that would
   * continue after the lost record */
  if (mem && fclose(mem)) err = errno;
  if (mem && !err) {
    /* every record before this one was written whole: this is where it
     * starts (write(2), not stdio: a test's shim can fail it part way) */
    const off_t at = lseek(cyc->report, 0, SEEK_CUR);
    err = AmrFileWrite(cyc->report, line, len, -1);
    /* the part of the record a full disk took is cut, so that the report
     * ends with a whole record, as a restart needs */
    cut = err && at >= 0 && !ftruncate(cyc->report, at);
  }
  free(line);
  {
    int ec[2] = {err, cut};
    PetscCallMPI(MPI_Bcast(ec, 2, MPI_INT, 0, cyc->comm));
    PetscCheck(!ec[0], cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot write: %s%s", AmrPathShort(cyc->adapt.report), strerror(ec[0]),
               ec[1] ? " (cut back to its last whole record)" : "");
  }
  PetscCall(AmrCycleCatchInterrupts(cyc, cycle));
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

/* Switch the rank's clock to one of the cycle's own phases. */
static PetscErrorCode cycle_phase(AmrCycle cyc, int k)
{
  PetscFunctionBeginUser;
  PetscCall(AmrLbPhaseSwitch(cyc->lb, cyc->phase0 + k));
  PetscFunctionReturn(0);
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
    PetscCall(AmrCycleCellArrays(cyc));
    PetscCall(write_vtk(cyc, -1));
    PetscCall(PetscLogStagePop());
    cyc->total[PH_OUTPUT] += MPI_Wtime() - t0;
  }
  for (int cycle = cyc->first;; cycle++) {
    double t[NPHASES] = {0}, t0;
    const long long cells = (long long)p4est->global_num_quadrants;
    AmrLbRecord lr;
    PetscBool last, show;

    PetscCall(AmrCycleCellArrays(cyc));
    PetscCall(AmrLbWindowStart(cyc->lb, p4est, cyc->types));
    PetscCall(PetscLogStagePush(cyc->stage[PH_SOLVE]));
    t0 = MPI_Wtime();
    PetscCall(AmrLbPhaseSwitch(cyc->lb, 0));
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
    PetscCall(cycle_phase(cyc, LB_PHASE_ESTIMATE));
    PetscCall(p->ops->estimate(p, cyc->eta2));
    if (p->ops->load_types) PetscCall(p->ops->load_types(p, cyc->types));
    t[PH_ESTIMATE] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());
    last = p->state.done || cycle + 1 >= cyc->cycles;
    show = monitored(cyc, cycle, last);
    if (show) PetscCall(p->ops->monitor(p, cycle));

    PetscCall(PetscLogStagePush(cyc->stage[PH_OUTPUT]));
    t0 = MPI_Wtime();
    PetscCall(cycle_phase(cyc, LB_PHASE_OUTPUT));
    /* the last cycle always: the run's final state */
    if (cyc->vtk && (cycle % cyc->adapt.vtk_interval == 0 || last)) PetscCall(write_vtk(cyc, cycle));
    t[PH_OUTPUT] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    /* adapt with this cycle's indicator, carrying the fields, then weigh
     * and balance for the next cycle */
    PetscCall(PetscLogStagePush(cyc->stage[PH_ADAPT]));
    t0 = MPI_Wtime();
    PetscCall(cycle_phase(cyc, LB_PHASE_ADAPT));
    if (!last && !cyc->fixed) PetscCall(AmrCycleAdapt(cyc, cyc->eta2));
    t[PH_ADAPT] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(cyc->stage[PH_PARTITION]));
    t0 = MPI_Wtime();
    PetscCall(cycle_phase(cyc, LB_PHASE_PARTITION));
    PetscCall(AmrCycleBalance(cyc, cycle, !last, &lr));
    PetscCall(AmrLbPhaseSwitch(cyc->lb, -1));
    t[PH_PARTITION] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());
    PetscCall(AmrLbPhasesRecord(cyc->lb, &lr));

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
      PetscCall(AmrCycleWriteCheckpoint(cyc, cycle));
      PetscCall(PetscLogStagePop());
      tc = MPI_Wtime() - tc;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &tc, 1, MPI_DOUBLE, MPI_MAX, cyc->comm));
      cyc->total[PH_OUTPUT] += tc;
    }
    if (show) PetscCall(AmrLbRecordPrint(cyc->comm, AMR_PROGRAM, &lr, p->state.sim_time, cells, p->dofs));
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
  if ((*cyc)->report >= 0) close((*cyc)->report);
  AmrFileUnlock(&(*cyc)->report_lock);
  AmrFileUnlock(&(*cyc)->checkpoint_lock);
  PetscCall(AmrProblemDestroy(&(*cyc)->problem));
  PetscCall(AmrLbDestroy(&(*cyc)->lb));
  PetscCall(AmrVtkSeriesDestroy(&(*cyc)->vtk));
  PetscCall(PetscFree((*cyc)->types));
  PetscCall(PetscFree((*cyc)->eta2));
  PetscCall(PetscFree(*cyc));
  PetscFunctionReturn(0);
}
