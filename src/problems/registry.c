/* The problem registry: the built-in problems and any a program adds, as
 * PETSc's PCRegister keeps PC types.  A built-in problem is NAME.c
 * defining `const AmrProblemOps amr_problem_NAME`, plus X(NAME) in the
 * list below, registered through AmrProblemRegister by
 * AmrProblemRegisterAll (on the registry's first use), so that a
 * program's own problem and a built-in one take the same way in. */
#include "problems/impl/problem.h"

#include <math.h>
#include <string.h>

#define AMR_PROBLEM_LIST(X) \
  X(sine)                   \
  X(lshape)                 \
  X(peak)                   \
  X(interface)              \
  X(linear)                 \
  X(quadratic)              \
  X(jump)                   \
  X(wavefront)              \
  X(plate_hole)             \
  X(rotating_hill)          \
  X(moving_front)           \
  X(darcy_transport)        \
  X(reactive_transport)

#define AMR_DECLARE(id) extern const AmrProblemOps amr_problem_##id;
AMR_PROBLEM_LIST(AMR_DECLARE)
#undef AMR_DECLARE

/* A fixed table, so that the pointers AmrProblemFind hands out stay valid
 * while problems are added; 64 is about five times the built-in ones. */
#define AMR_PROBLEMS_MAX 64

static const AmrProblemOps *problems[AMR_PROBLEMS_MAX];
static int nproblems = -1; /* -1: the built-in ones not registered yet */

PetscErrorCode AmrProblemRegisterAll(void)
{
  PetscFunctionBeginUser;
  if (nproblems >= 0) PetscFunctionReturn(0);
  nproblems = 0;
#define AMR_REGISTER(id) PetscCall(AmrProblemRegister(amr_problem_##id.name, &amr_problem_##id));
  AMR_PROBLEM_LIST(AMR_REGISTER)
#undef AMR_REGISTER
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemRegister(const char name[], const AmrProblemOps *ops)
{
  PetscFunctionBeginUser;
  PetscCall(AmrProblemRegisterAll());
  PetscCheck(name && name[0], PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "AmrProblemRegister: a problem needs a name");
  PetscCheck(ops && ops->create && ops->destroy, PETSC_COMM_SELF, PETSC_ERR_ARG_NULL, "AmrProblemRegister: problem %s has no create or destroy op", name);
  /* the name is the one on the command line and in reports: one name a table */
  PetscCheck(ops->name && !strcmp(ops->name, name), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "AmrProblemRegister: problem %s has the name %s in its ops",
             name, ops->name ? ops->name : "(null)");
  PetscCheck(!AmrProblemFind(name), PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE, "AmrProblemRegister: a problem %s is registered already", name);
  PetscCheck(nproblems < AMR_PROBLEMS_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "AmrProblemRegister: problem %s: %d problems registered already", name,
             AMR_PROBLEMS_MAX);
  problems[nproblems++] = ops;
  PetscFunctionReturn(0);
}

const AmrProblemOps *AmrProblemGet(int i)
{
  /* an error registering the built-in ones has printed its trace: no problem then */
  if (AmrProblemRegisterAll()) return NULL;
  return i >= 0 && i < nproblems ? problems[i] : NULL;
}

const AmrProblemOps *AmrProblemFind(const char *name)
{
  for (int i = 0; AmrProblemGet(i); i++)
    if (!strcmp(problems[i]->name, name)) return problems[i];
  return NULL;
}

const char *AmrProblemOpsName(const AmrProblemOps *ops) { return ops->name; }

PetscErrorCode AmrProblemNames(const char *sep, char *buf, size_t len)
{
  PetscFunctionBeginUser;
  buf[0] = '\0';
  for (int i = 0; AmrProblemGet(i); i++) {
    if (i) PetscCall(PetscStrlcat(buf, sep, len));
    PetscCall(PetscStrlcat(buf, problems[i]->name, len));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemCreate(MPI_Comm comm, const AmrProblemOps *ops, const AmrMesh *mesh, PetscInt min_level, AmrProblem *out)
{
  AmrProblem p;

  PetscFunctionBeginUser;
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
  if (!*p) PetscFunctionReturn(0);
  PetscCall((*p)->ops->destroy(*p));
  PetscCall(PetscFree(*p));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemAddField(AmrProblem p, const char *name, void **data, size_t size)
{
  PetscFunctionBeginUser;
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
