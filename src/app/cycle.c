/* The one AMR cycle over a registered problem (cycle.h): the cycle made
 * from the options, set up on the initial forest, and run: solve,
 * estimate, output, adapt, balance, then the cycle's record and
 * checkpoint.  What it calls is in files of their own (impl/cycle.h).
 * Compiled for 2D and 3D (P4_TO_P8). */
#include "app/impl/cycle.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/options.h"
#include "mesh/mark.h"

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
  cyc->ranks = MPI_FILE_NULL;
  if (vtk[0]) PetscCall(AmrVtkSeriesCreate(comm, vtk, vtk_binary, &cyc->vtk));
  if (ops) PetscCall(AmrProblemCreate(comm, ops, mesh, min_level, &cyc->problem));
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
    PetscCheck(cyc->lbo.weights != AMR_LB_MEASURED || !p || AmrProblemHasCellCosts(p), comm, PETSC_ERR_USER_INPUT,
               "option -lb_weights measured: problem %s does not time its cells (reactive-transport does)", AmrProblemGetName(p));
    PetscCall(AmrCycleCheckpointOptions(comm, cyc));
  }
  *out = cyc;
  if (help) PetscFunctionReturn(0);
  PetscCall(AmrLbCreate(comm, &cyc->lbo, &cyc->lb));
  /* a restart takes its checkpoint's instead */
  PetscCall(AmrCycleNewRunId(cyc));
  PetscCall(AmrCycleClockSetUp(cyc));
  PetscFunctionReturn(0);
}

AmrProblem AmrCycleGetProblem(AmrCycle cyc) { return cyc->problem; }

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
  PetscCall(AmrProblemAdapt(cyc->problem, marks, o->mark.min_level, o->mark.max_level));
  PetscCall(PetscFree2(marks, level));
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
  PetscCall(AmrProblemSetUp(p, p4est));
  AmrCycleFields(cyc, &nf, fields);
  /* refine towards the initial data, split by cell count with families
   * together, then give the fine cells the data */
  for (int l = cyc->adapt.mark.min_level; AmrProblemHasInitial(p) && !cyc->fixed && l < cyc->adapt.mark.max_level; l++) {
    PetscCall(AmrCycleCellArrays(cyc));
    PetscCall(AmrProblemEstimate(p, cyc->eta2));
    PetscCall(AmrCycleAdapt(cyc, cyc->eta2));
    PetscCall(AmrLbPartitionEven(p4est, nf, fields));
    PetscCall(AmrProblemInitial(p));
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
  if (AmrProblemHasCellCosts(cyc->problem)) {
    double *cost;
    PetscCall(AmrCycleCellCosts(cyc, &cost));
    PetscCall(AmrLbCellCosts(cyc->lb, cyc->p4est->local_num_quadrants, cost));
    PetscCall(PetscFree(cost));
  }
  PetscCall(AmrLbBalance(cyc->lb, cyc->p4est, cyc->types, cycle, allow, nf, fields, lr));
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
    PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_OUTPUT));
    PetscCall(AmrCycleCellArrays(cyc));
    PetscCall(AmrCycleWriteVtk(cyc, -1));
    PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_NONE));
    PetscCall(AmrCycleAddTimes(cyc, NULL));
  }
  for (int cycle = cyc->first;; cycle++) {
    double t[AMR_CYCLE_NPHASES];
    const long long cells = (long long)p4est->global_num_quadrants;
    AmrLbRecord lr;
    PetscBool last, show;

    PetscCall(AmrCycleCellArrays(cyc));
    PetscCall(AmrCycleMeasureStart(cyc));
    PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_SOLVE));
    PetscCall(AmrProblemSolve(p));
    if (AmrProblemHasCellCosts(p)) {
      /* on the window's forest with its types, before they change */
      double *cost;
      PetscCall(AmrCycleCellCosts(cyc, &cost));
      PetscCall(AmrLbWindowCosts(cyc->lb, p4est->local_num_quadrants, cyc->types, cost));
      PetscCall(PetscFree(cost));
    }

    PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_ESTIMATE));
    PetscCall(AmrProblemEstimate(p, cyc->eta2));
    PetscCall(AmrProblemLoadTypes(p, p4est->local_num_quadrants, cyc->types));
    last = p->state.done || cycle + 1 >= cyc->cycles;
    show = monitored(cyc, cycle, last);
    if (show) PetscCall(AmrProblemMonitor(p, cycle));

    PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_OUTPUT));
    /* the last cycle always: the run's final state */
    if (cyc->vtk && (cycle % cyc->adapt.vtk_interval == 0 || last)) PetscCall(AmrCycleWriteVtk(cyc, cycle));

    /* adapt with this cycle's indicator, carrying the fields, then weigh
     * and balance for the next cycle */
    PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_ADAPT));
    if (!last && !cyc->fixed) PetscCall(AmrCycleAdapt(cyc, cyc->eta2));

    PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_PARTITION));
    PetscCall(AmrCycleBalance(cyc, cycle, !last, &lr));
    PetscCall(AmrCycleMeasureEnd(cyc, &lr, t));
    PetscCall(AmrCycleWriteRecord(cyc, cycle, cells, t, &lr));
    /* after the cycle's record is in the report (a killed run's report has
     * every cycle its checkpoint covers), and not after the last cycle,
     * which does not adapt: a checkpoint holds the forest the next cycle
     * of the run solves on.  Its time counts in the run's output total. */
    if (cyc->checkpoint[0] && cyc->checkpoint_interval > 0 && (cycle + 1) % cyc->checkpoint_interval == 0 && !last) {
      PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_OUTPUT));
      PetscCall(AmrCycleWriteCheckpoint(cyc, cycle));
      PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_NONE));
      PetscCall(AmrCycleAddTimes(cyc, NULL));
    }
    if (show) PetscCall(AmrLbRecordPrint(cyc->comm, AMR_PROGRAM, &lr, p->state.sim_time, cells, p->dofs));
    if (last) {
      if (cyc->restarts)
        PetscCall(PetscPrintf(cyc->comm, "%s: %d cycles in the run, cycles %d to %d after restart %d\n", AMR_PROGRAM, cycle + 1, cyc->first, cycle, cyc->restarts));
      else
        PetscCall(PetscPrintf(cyc->comm, "%s: %d cycles in the run\n", AMR_PROGRAM, cycle + 1));
      break;
    }
  }
  PetscCall(AmrLbSummary(cyc->lb, cyc->comm, AMR_PROGRAM));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleDestroy(AmrCycle *cyc)
{
  PetscFunctionBeginUser;
  if (!*cyc) PetscFunctionReturn(0);
  if ((*cyc)->report >= 0) close((*cyc)->report);
  if ((*cyc)->ranks != MPI_FILE_NULL) PetscCallMPI(MPI_File_close(&(*cyc)->ranks));
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
