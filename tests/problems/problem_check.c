/* The problem object's public functions (problems/problem.h, problem.c):
 * they refuse an ops table without a required op and bad arguments with
 * PETSc's error codes, give the optional ops their defaults, and log the
 * ops as PETSc events.  One rank, the sine problem on builtin:unit. */
#include "problems/impl/problem.h"
#include "check.h"

#include <petscsys.h>
#include <string.h>

/* How many times the event name was logged in the main stage. */
static PetscErrorCode event_count(const char *name, int *count)
{
  PetscLogEvent ev;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventGetId(name, &ev));
  PetscCall(PetscLogEventGetPerfInfo(0, ev, &info));
  *count = info.count;
  PetscFunctionReturn(0);
}

/* Every op through its function on a level-2 forest. */
static PetscErrorCode check_problem(const AmrMesh *mesh)
{
  AmrProblemOps bad = *AmrProblemFind("sine");
  AmrProblem p = NULL;
  p4est_t *p4est;
  double *eta2;
  signed char *marks;
  int *types, solves;
  p4est_locidx_t n;

  PetscFunctionBeginUser;
  bad.solve = NULL;
  CHECK_EQ(AmrProblemCreate(PETSC_COMM_WORLD, &bad, mesh, 2, &p), PETSC_ERR_ARG_WRONG);
  CHECK(p == NULL);
  PetscCall(AmrProblemCreate(PETSC_COMM_WORLD, AmrProblemFind("sine"), mesh, 2, &p));
  CHECK(!strcmp(AmrProblemGetName(p), "sine"));
  p4est = p4est_new_ext(PETSC_COMM_WORLD, mesh->conn, 0, 2, 1, 0, NULL, NULL);
  PetscCall(AmrProblemSetUp(p, p4est));
  CHECK_EQ(AmrProblemSetUp(p, p4est), PETSC_ERR_ORDER);
  n = p4est->local_num_quadrants;
  PetscCall(PetscMalloc3(n, &eta2, n, &marks, n, &types));
  for (p4est_locidx_t e = 0; e < n; e++) {
    marks[e] = 0;
    types[e] = 7;
  }
  CHECK_EQ(AmrProblemEstimate(p, NULL), PETSC_ERR_ARG_NULL);
  CHECK_EQ(AmrProblemSetUp(NULL, p4est), PETSC_ERR_ARG_NULL);
  CHECK_EQ(AmrProblemAdapt(p, marks, 3, 2), PETSC_ERR_ARG_OUTOFRANGE);
  CHECK(!AmrProblemHasInitial(p));
  CHECK_EQ(AmrProblemInitial(p), PETSC_ERR_SUP);
  CHECK(!AmrProblemHasCellCosts(p));
  CHECK_EQ(AmrProblemCellCosts(p, eta2), PETSC_ERR_SUP);
  /* one load type without the op: every cell's is 0 */
  CHECK(!AmrProblemHasLoadTypes(p));
  PetscCall(AmrProblemLoadTypes(p, n, types));
  for (p4est_locidx_t e = 0; e < n; e++) CHECK_EQ(types[e], 0);
  PetscCall(AmrProblemSolve(p));
  PetscCall(AmrProblemSolve(p));
  PetscCall(AmrProblemEstimate(p, eta2));
  PetscCall(event_count("AmrProbSolve", &solves));
  CHECK_EQ(solves, 2);
  PetscCall(event_count("AmrProbEstimate", &solves));
  CHECK_EQ(solves, 1);
  PetscCall(PetscFree3(eta2, marks, types));
  PetscCall(AmrProblemDestroy(&p));
  CHECK(p == NULL);
  p4est_destroy(p4est);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  AmrMesh mesh;
  int fail;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  /* the events' counts are kept only while PETSc logs */
  PetscCall(PetscLogDefaultBegin());
  PetscCall(AmrMeshCreate(PETSC_COMM_WORLD, "builtin:unit", &mesh));
  /* the refused calls return their codes here instead of printing a trace */
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  PetscCall(check_problem(&mesh));
  PetscCall(PetscPopErrorHandler());
  fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "problem check %s\n", fail ? "FAILED" : "passed"));
  PetscCall(AmrMeshDestroy(&mesh));
  sc_finalize();
  PetscCall(PetscFinalize());
  return fail;
}
