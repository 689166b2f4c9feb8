/* The problem registry.  Adding a problem: write NAME.c defining
 * `const AmrProblemOps amr_problem_NAME`, then add X(NAME) to this list. */
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

#define AMR_DECLARE(name) extern const AmrProblemOps amr_problem_##name;
AMR_PROBLEM_LIST(AMR_DECLARE)
#undef AMR_DECLARE

#define AMR_ENTRY(name) &amr_problem_##name,
static const AmrProblemOps *const problems[] = {AMR_PROBLEM_LIST(AMR_ENTRY)};
#undef AMR_ENTRY

const AmrProblemOps *AmrProblemGet(int i)
{
  return i >= 0 && i < (int)(sizeof problems / sizeof problems[0]) ? problems[i] : NULL;
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
