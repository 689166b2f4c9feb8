/* The one AMR cycle over a registered problem (cycle.h).  Compiled for 2D
 * and 3D (P4_TO_P8). */
#include "app/cycle.h"

#ifndef P4_TO_P8
#include <p4est_bits.h>
#else
#include <p8est_bits.h>
#endif
#include <errno.h>
#include <math.h>
#include <string.h>

#include "app/options.h"
#include "mesh/mark.h"
#include "mesh/vtk.h"

enum { PH_SOLVE, PH_ESTIMATE, PH_ADAPT, PH_PARTITION, PH_OUTPUT, NPHASES };
static const char *const phase_name[NPHASES] = {"solve", "estimate", "adapt", "partition", "output"};
static const char *const stage_name[NPHASES] = {"Solve", "Estimate", "Adapt", "Partition", "Output"};

struct _p_AmrCycle {
  MPI_Comm comm;
  AmrProblem problem;
  AmrAdaptOptions adapt; /* -amr_strategy and its parameters, -amr_max_level, -report, -vtk_interval */
  PetscInt cycles;       /* -amr_cycles */
  PetscBool fixed;       /* -amr_strategy uniform on a problem with time: the mesh stays */
  AmrLbOptions lbo;
  AmrLb lb;
  char vtk[PETSC_MAX_PATH_LEN];
  p4est_t *p4est;
  FILE *report;          /* rank 0 */
  PetscLogStage stage[NPHASES];
  double total[NPHASES];
  double *eta2;          /* squared indicator per local cell */
  int *types;            /* load type per local cell */
};

static PetscErrorCode work_log(void *ctx, double cpu, double wall)
{
  AmrCycle cyc = ctx;

  PetscFunctionBeginUser;
  PetscCall(AmrLbAddStep(cyc->lb, cpu, wall));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleCreate(MPI_Comm comm, const amr_mesh_t *mesh, PetscInt min_level, const char *vtk, AmrCycle *out)
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
  PetscCall(PetscStrncpy(cyc->vtk, vtk, sizeof cyc->vtk));
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
    PetscOptionsBegin(comm, NULL, "Cycle", NULL);
    AMR_OPTION("-amr_cycles", PetscOptionsInt("-amr_cycles", "Number of cycles (problems with time: at most this many, until -t_final)", NULL, cycles,
                                              &cycles, NULL));
    PetscOptionsEnd();
    PetscCheck(cycles >= 1, comm, PETSC_ERR_USER_INPUT, "option -amr_cycles %" PetscInt_FMT ": must be at least 1", cycles);
    cyc->cycles = cycles;
    cyc->fixed = !strcmp(cyc->adapt.strategy, "uniform") && p && p->state.sim_time >= 0;
    PetscCall(AmrLbOptionsRead(comm, p ? p->ntypes : 1, &cyc->lbo));
    PetscCheck(cyc->lbo.weights != AMR_LB_MEASURED || !p || p->ops->cell_costs, comm, PETSC_ERR_USER_INPUT,
               "option -lb_weights measured: problem %s does not time its cells (reactive-transport does)", p->ops->name);
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

PetscErrorCode AmrCycleSetup(AmrCycle cyc, p4est_t *p4est)
{
  const AmrProblem p = cyc->problem;
  AmrField fields[AMR_PROBLEM_MAX_FIELDS];
  PetscMPIInt rank;
  int nf, fail = 0;

  PetscFunctionBeginUser;
  /* opened only now that every option was accepted: a typo does not
   * truncate the report of an earlier run */
  PetscCallMPI(MPI_Comm_rank(cyc->comm, &rank));
  if (cyc->adapt.report[0] && rank == 0) {
    cyc->report = fopen(cyc->adapt.report, "w");
    fail = cyc->report ? 0 : errno;
  }
  PetscCallMPI(MPI_Bcast(&fail, 1, MPI_INT, 0, cyc->comm));
  PetscCheck(!fail, cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot open for writing: %s", cyc->adapt.report, strerror(fail));
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

/* The cycle's VTK file: the problem's cell fields, the indicator and the
 * load type, besides the tree, level and rank the writer adds. */
static PetscErrorCode write_vtk(AmrCycle cyc, int cycle)
{
  const AmrProblem p = cyc->problem;
  const p4est_locidx_t n = cyc->p4est->local_num_quadrants;
  const char *names[AMR_PROBLEM_MAX_FIELDS + 2];
  sc_array_t *values[AMR_PROBLEM_MAX_FIELDS + 2];
  char prefix[PETSC_MAX_PATH_LEN + 16];
  int nv = 0;

  PetscFunctionBeginUser;
  if (p->ops->vtk) PetscCall(p->ops->vtk(p, &nv, names, values));
  names[nv] = "indicator";
  values[nv] = sc_array_new_count(sizeof(double), (size_t)n);
  for (p4est_locidx_t e = 0; e < n; e++) *(double *)sc_array_index(values[nv], (size_t)e) = sqrt(cyc->eta2[e]);
  nv++;
  if (p->ops->load_types) {
    names[nv] = "load_type";
    values[nv] = sc_array_new_count(sizeof(double), (size_t)n);
    for (p4est_locidx_t e = 0; e < n; e++) *(double *)sc_array_index(values[nv], (size_t)e) = cyc->types[e];
    nv++;
  }
  PetscCall(PetscSNPrintf(prefix, sizeof prefix, "%s_%04d", cyc->vtk, cycle));
  PetscCall(amr_vtk_write(cyc->p4est, p->mesh->geom, prefix, nv, names, values));
  for (int k = 0; k < nv; k++) sc_array_destroy(values[k]);
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
  json_int(&j, "degree", p->degree);
  json_int(&j, "ranks", cyc->p4est->mpisize);
  json_int(&j, "cycle", cycle);
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
  PetscCall(p->ops->report(p, &j));
  json_end(&j);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleRun(AmrCycle cyc)
{
  const AmrProblem p = cyc->problem;
  p4est_t *p4est = cyc->p4est;

  PetscFunctionBeginUser;
  for (int cycle = 0;; cycle++) {
    double t[NPHASES] = {0}, t0;
    const long long cells = (long long)p4est->global_num_quadrants;
    AmrLbRecord lr;
    PetscBool last;

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
    PetscCall(p->ops->monitor(p, cycle));
    last = p->state.done || cycle + 1 >= cyc->cycles;

    PetscCall(PetscLogStagePush(cyc->stage[PH_OUTPUT]));
    t0 = MPI_Wtime();
    if (cyc->vtk[0] && cycle % cyc->adapt.vtk_interval == 0) PetscCall(write_vtk(cyc, cycle));
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
    PetscCall(AmrLbRecordPrint(cyc->comm, AMR_PROGRAM, &lr, p->state.sim_time, cells, p->dofs, t[PH_SOLVE]));
    PetscCall(AmrLbRecordFree(&lr));
    if (last) break;
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
  PetscCall(PetscFree((*cyc)->types));
  PetscCall(PetscFree((*cyc)->eta2));
  PetscCall(PetscFree(*cyc));
  PetscFunctionReturn(0);
}
