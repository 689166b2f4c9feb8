/* The problem object's public functions (problem.h): its life, the calls
 * through its ops table, and what it tells the cycle.  As PETSc's
 * KSPSolve calls ksp->ops->solve, this file is the one place that calls a
 * problem's ops: here the arguments are checked and the ops logged as PETSc
 * events (-log_view lists AmrProbSolve, AmrProbEstimate, AmrProbAdapt), and an
 * optional op that is absent does its default.  The registry (finding ops
 * by name) is registry.c.  Compiled for 2D and 3D (P4_TO_P8). */
#include "problems/impl/problem.h"

#include <math.h>

/* Checked in every build: an optimised PETSc (Debian's) compiles its
 * PetscValidPointer to nothing, and a NULL here would end in a crash inside
 * the problem's op. */
#define AMR_VALID(ptr, arg) PetscCheck((ptr) != NULL, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "Null pointer: argument %d (%s)", arg, #ptr)

static PetscClassId amr_problem_classid;
static PetscLogEvent ev_solve, ev_estimate, ev_adapt;

/* The class and its events, registered once per process (a test makes
 * several problems), as PETSc's KSPInitializePackage does. */
static PetscErrorCode initialize_package(void)
{
  static PetscBool done;

  PetscFunctionBeginUser;
  if (done) PetscFunctionReturn(0);
  PetscCall(PetscClassIdRegister("AmrProblem", &amr_problem_classid));
  PetscCall(PetscLogEventRegister("AmrProbSolve", amr_problem_classid, &ev_solve));
  PetscCall(PetscLogEventRegister("AmrProbEstimate", amr_problem_classid, &ev_estimate));
  PetscCall(PetscLogEventRegister("AmrProbAdapt", amr_problem_classid, &ev_adapt));
  done = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* The ops every problem has (problems/impl/problem.h): a table without one
 * is refused when the problem is made, not when the cycle first calls it. */
static PetscErrorCode check_ops(const AmrProblemOps *ops)
{
  const struct {
    const char *name;
    int set;
  } required[] = {
    {"create", ops->create != NULL}, {"setup", ops->setup != NULL},     {"solve", ops->solve != NULL},     {"estimate", ops->estimate != NULL},
    {"adapt", ops->adapt != NULL},   {"monitor", ops->monitor != NULL}, {"report", ops->report != NULL}, {"destroy", ops->destroy != NULL},
  };

  PetscFunctionBeginUser;
  PetscCheck(ops->name && ops->name[0], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "problem ops without a name");
  for (size_t k = 0; k < sizeof required / sizeof required[0]; k++)
    PetscCheck(required[k].set, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "problem %s: no %s op", ops->name, required[k].name);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemCreate(MPI_Comm comm, const AmrProblemOps *ops, const AmrMesh *mesh, PetscInt min_level, AmrProblem *out)
{
  AmrProblem p;

  PetscFunctionBeginUser;
  AMR_VALID(ops, 2);
  AMR_VALID(mesh, 3);
  AMR_VALID(out, 5);
  PetscCall(initialize_package());
  PetscCall(check_ops(ops));
  PetscCall(PetscCalloc1(1, &p));
  p->ops = ops;
  p->comm = comm;
  p->mesh = mesh;
  p->min_level = min_level;
  p->ntypes = 1;
  p->strategy = "fraction";
  p->max_level = P4EST_QMAXLEVEL;
  p->cycles = 8;
  p->state.sim_time = -1;
  p->state.step = -1;
  p->ksp_cpu = p->ksp_wall = NAN;
  *out = p;
  PetscCall(ops->create(p));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemDestroy(AmrProblem *p)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  if (!*p) PetscFunctionReturn(0);
  PetscCall((*p)->ops->destroy(*p));
  PetscCall(PetscFree(*p));
  PetscFunctionReturn(0);
}

const char *AmrProblemGetName(AmrProblem p) { return p->ops->name; }

const void *AmrProblemGetOpsData(AmrProblem p) { return p->ops->data; }

PetscErrorCode AmrProblemSetUp(AmrProblem p, p4est_t *p4est)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  AMR_VALID(p4est, 2);
  /* a second setup would register the fields again */
  PetscCheck(!p->set_up, PETSC_COMM_SELF, PETSC_ERR_ORDER, "problem %s is set up already", p->ops->name);
  PetscCall(p->ops->setup(p, p4est));
  p->set_up = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscBool AmrProblemHasInitial(AmrProblem p) { return p->ops->initial ? PETSC_TRUE : PETSC_FALSE; }

PetscErrorCode AmrProblemInitial(AmrProblem p)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  PetscCheck(p->ops->initial, PETSC_COMM_SELF, PETSC_ERR_SUP, "problem %s: no initial data to refine towards", p->ops->name);
  PetscCall(p->ops->initial(p));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemSolve(AmrProblem p)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  PetscCall(PetscLogEventBegin(ev_solve, 0, 0, 0, 0));
  PetscCall(p->ops->solve(p));
  PetscCall(PetscLogEventEnd(ev_solve, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemEstimate(AmrProblem p, double *eta2)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  AMR_VALID(eta2, 2);
  PetscCall(PetscLogEventBegin(ev_estimate, 0, 0, 0, 0));
  PetscCall(p->ops->estimate(p, eta2));
  PetscCall(PetscLogEventEnd(ev_estimate, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemAdapt(AmrProblem p, const signed char *marks, int min_level, int max_level)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  AMR_VALID(marks, 2);
  PetscCheck(min_level >= 0 && min_level <= max_level && max_level <= P4EST_QMAXLEVEL, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "problem %s: levels %d to %d, need 0 <= min <= max <= %d", p->ops->name, min_level, max_level, P4EST_QMAXLEVEL);
  PetscCall(PetscLogEventBegin(ev_adapt, 0, 0, 0, 0));
  PetscCall(p->ops->adapt(p, marks, min_level, max_level));
  PetscCall(PetscLogEventEnd(ev_adapt, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscBool AmrProblemHasLoadTypes(AmrProblem p) { return p->ops->load_types ? PETSC_TRUE : PETSC_FALSE; }

PetscErrorCode AmrProblemLoadTypes(AmrProblem p, p4est_locidx_t n, int *types)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  AMR_VALID(types, 3);
  if (!p->ops->load_types) {
    for (p4est_locidx_t e = 0; e < n; e++) types[e] = 0;
    PetscFunctionReturn(0);
  }
  PetscCall(p->ops->load_types(p, types));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemMonitor(AmrProblem p, int cycle)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  PetscCheck(cycle >= 0, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "problem %s: cycle %d", p->ops->name, cycle);
  PetscCall(p->ops->monitor(p, cycle));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemVtk(AmrProblem p, AmrVtkData *d)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  AMR_VALID(d, 2);
  /* point degree 1 unless the op raises it */
  AmrVtkDataInit(d, p->mesh->geom, 1);
  if (p->ops->vtk) PetscCall(p->ops->vtk(p, d));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemReport(AmrProblem p, json_line *j)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  AMR_VALID(j, 2);
  PetscCall(p->ops->report(p, j));
  PetscFunctionReturn(0);
}

/* A checkpoint op (save or load), optional: nothing without it. */
static PetscErrorCode state_op(AmrProblem p, AmrCkpState st, PetscErrorCode (*op)(AmrProblem, AmrCkpState))
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  AMR_VALID(st, 2);
  if (op) PetscCall(op(p, st));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemSave(AmrProblem p, AmrCkpState st) { return state_op(p, st, p ? p->ops->save : NULL); }

PetscErrorCode AmrProblemLoad(AmrProblem p, AmrCkpState st) { return state_op(p, st, p ? p->ops->load : NULL); }

PetscBool AmrProblemHasCellCosts(AmrProblem p) { return p->ops->cell_costs ? PETSC_TRUE : PETSC_FALSE; }

PetscErrorCode AmrProblemCellCosts(AmrProblem p, double *cost)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  AMR_VALID(cost, 2);
  PetscCheck(p->ops->cell_costs, PETSC_COMM_SELF, PETSC_ERR_SUP, "problem %s does not time its cells", p->ops->name);
  PetscCall(p->ops->cell_costs(p, cost));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemAddField(AmrProblem p, const char *name, void **data, size_t size)
{
  PetscFunctionBeginUser;
  AMR_VALID(p, 1);
  PetscCheck(p->nfields < AMR_PROBLEM_MAX_FIELDS, PETSC_COMM_SELF, PETSC_ERR_PLIB, "problem %s: more than %d fields", p->ops->name,
             AMR_PROBLEM_MAX_FIELDS);
  p->field[p->nfields].name = name;
  p->field[p->nfields].data = data;
  p->field[p->nfields].size = size;
  p->nfields++;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemGetSolvers(AmrProblem p, int *n, const char *const **prefix)
{
  PetscFunctionBeginUser;
  *n = p ? p->nsolvers : 0;
  *prefix = p ? p->solver_prefix : NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemPhase(AmrProblem p, int k)
{
  PetscFunctionBeginUser;
  PetscCheck(k >= 0 && k < PetscMax(p->nphases, 1), PETSC_COMM_SELF, PETSC_ERR_PLIB, "problem %s: phase %d of %d", p->ops->name, k, p->nphases);
  if (p->phase) PetscCall(p->phase(p->phase_ctx, k));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemLogWork(AmrProblem p, double cpu, double wall)
{
  PetscFunctionBeginUser;
  PetscCall(AmrProblemLogWorkCounts(p, cpu, wall, NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemLogWorkCounts(AmrProblem p, double cpu, double wall, const int64_t *counts)
{
  PetscFunctionBeginUser;
  if (p->log) PetscCall(p->log(p->log_ctx, cpu, wall, counts));
  PetscFunctionReturn(0);
}
