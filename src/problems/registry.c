/* The problem registry: the ops tables by name.  Adding a problem: write
 * NAME.c defining `const AmrProblemOps amr_problem_NAME`, then add X(NAME)
 * to this list.  The problem object itself is problem.c. */
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
