/* The problem registry: the built-in problems and any a program adds, as
 * PETSc's PCRegister keeps PC types.  A built-in problem is NAME.c
 * defining `const AmrProblemOps amr_problem_NAME`, plus X(NAME) in the
 * list below, registered through AmrProblemRegister by
 * AmrProblemRegisterAll (on the registry's first use), so that a
 * program's own problem and a built-in one take the same way in.  The
 * problem object itself is problem.c. */
#include "problems/impl/problem.h"

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
