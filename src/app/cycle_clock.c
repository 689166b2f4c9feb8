/* The cycle's phase clock (impl/cycle.h): the one list of the cycle's
 * phases (AMR_CYCLE_PHASE_LIST) turned into the PETSc log stages, the
 * balancer's phases and the report's names, and the one switch between
 * phases that feeds all three: the log stage, this rank's wall time of the
 * phase, and the balancer's clock of each phase's own work
 * (AmrLbPhaseSwitch).  The problem switches between its own phases inside
 * the solve (AmrProblemPhase) and hands its work here (AmrProblemLogWork).
 * Compiled for 2D and 3D (P4_TO_P8). */
#include "app/impl/cycle.h"

#include <string.h>

#define AMR_CYCLE_PHASE_ENTRY(id, name, stage, model) {name, stage, model},
static const struct {
  const char *name, *stage;
  AmrLbPhaseModel model;
} phases[AMR_CYCLE_NPHASES] = {AMR_CYCLE_PHASE_LIST(AMR_CYCLE_PHASE_ENTRY)};
#undef AMR_CYCLE_PHASE_ENTRY

const char *AmrCyclePhaseName(AmrCyclePhase ph) { return phases[ph].name; }

static PetscErrorCode work_log(void *ctx, double cpu, double wall, const int64_t *counts)
{
  AmrCycle cyc = ctx;

  PetscFunctionBeginUser;
  PetscCall(AmrLbAddStep(cyc->lb, cpu, wall, counts));
  PetscFunctionReturn(0);
}

static PetscErrorCode problem_phase(void *ctx, int k)
{
  AmrCycle cyc = ctx;

  PetscFunctionBeginUser;
  PetscCall(AmrLbPhaseSwitch(cyc->lb, k));
  PetscFunctionReturn(0);
}

/* The balancer's phases: the problem's solve (one, the list's "solve",
 * unless it names its own), then the cycle's others in the list's order.
 * A phase of the problem's is fitted per load type where its cells differ,
 * with one cost for every cell where they do not, and taken as measured
 * where it is balanced apart from the mesh (the problem's phase_apart). */
static PetscErrorCode set_balancer_phases(AmrCycle cyc)
{
  const AmrProblem p = cyc->problem;
  const char *names[AMR_LB_MAX_PHASES];
  int modelled[AMR_LB_MAX_PHASES], n = 0;

  PetscFunctionBeginUser;
  for (int k = 0; k < PetscMax(p->nphases, 1); k++) {
    names[n] = p->nphases ? p->phase_name[k] : phases[AMR_CYCLE_SOLVE].name;
    modelled[n] = phases[AMR_CYCLE_SOLVE].model;
    if (p->nphases) modelled[n] = p->phase_apart[k] ? AMR_LB_PHASE_MEASURED : p->phase_typed[k] ? AMR_LB_PHASE_TYPES : AMR_LB_PHASE_CELLS;
    n++;
  }
  cyc->phase0 = n;
  for (int ph = AMR_CYCLE_SOLVE + 1; ph < AMR_CYCLE_NPHASES; ph++) {
    names[n] = phases[ph].name;
    modelled[n++] = phases[ph].model;
  }
  PetscCall(AmrLbPhasesSet(cyc->lb, n, names, modelled, AmrProblemHasCellCosts(p) ? p->cost_phase : -1));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleClockSetUp(AmrCycle cyc)
{
  /* registered once per process: a test may make several cycles */
  static PetscLogStage stage[AMR_CYCLE_NPHASES];
  static PetscBool registered;

  PetscFunctionBeginUser;
  for (int ph = 0; !registered && ph < AMR_CYCLE_NPHASES; ph++) PetscCall(PetscLogStageRegister(phases[ph].stage, &stage[ph]));
  registered = PETSC_TRUE;
  memcpy(cyc->stage, stage, sizeof stage);
  cyc->phase = AMR_CYCLE_NONE;
  if (!cyc->problem) PetscFunctionReturn(0);
  cyc->problem->log = work_log;
  cyc->problem->log_ctx = cyc;
  cyc->problem->phase = problem_phase;
  cyc->problem->phase_ctx = cyc;
  PetscCall(set_balancer_phases(cyc));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCyclePhaseEnter(AmrCycle cyc, AmrCyclePhase ph)
{
  const double now = MPI_Wtime();

  PetscFunctionBeginUser;
  if (cyc->phase != AMR_CYCLE_NONE) {
    cyc->t[cyc->phase] += now - cyc->phase_start;
    PetscCall(PetscLogStagePop());
  }
  cyc->phase = ph;
  cyc->phase_start = now;
  if (ph != AMR_CYCLE_NONE) PetscCall(PetscLogStagePush(cyc->stage[ph]));
  /* the solve starts in the problem's first phase */
  if (cyc->measuring) PetscCall(AmrLbPhaseSwitch(cyc->lb, ph == AMR_CYCLE_NONE ? -1 : ph == AMR_CYCLE_SOLVE ? 0 : cyc->phase0 + ph - AMR_CYCLE_SOLVE - 1));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleMeasureStart(AmrCycle cyc)
{
  PetscFunctionBeginUser;
  PetscCall(AmrLbWindowStart(cyc->lb, cyc->p4est, cyc->types));
  cyc->measuring = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleMeasureEnd(AmrCycle cyc, AmrLbRecord *lr, double t[AMR_CYCLE_NPHASES])
{
  PetscFunctionBeginUser;
  PetscCall(AmrCyclePhaseEnter(cyc, AMR_CYCLE_NONE));
  cyc->measuring = PETSC_FALSE;
  PetscCall(AmrLbPhasesRecord(cyc->lb, lr));
  PetscCall(AmrCycleAddTimes(cyc, t));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleAddTimes(AmrCycle cyc, double t[AMR_CYCLE_NPHASES])
{
  double max[AMR_CYCLE_NPHASES];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(cyc->t, max, AMR_CYCLE_NPHASES, MPI_DOUBLE, MPI_MAX, cyc->comm));
  for (int ph = 0; ph < AMR_CYCLE_NPHASES; ph++) cyc->t[ph] = 0;
  if (t) memcpy(t, max, sizeof max);
  PetscFunctionReturn(0);
}
