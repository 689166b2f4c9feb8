/* Convergence under uniform refinement: solves -problem on meshes of the
 * levels -levels a,b,.. of -shape and asserts the observed L2 and H1 rates
 * (log2 of successive error ratios) reach -min_l2_rate and -min_h1_rate. */
#include "mesh/p4est_dim.h"
#include <math.h>
#include <petscsys.h>
#include "fem/poisson.h"
#include "mesh/shapes.h"
#include "problems/poisson.h"
#include "check.h"

int main(int argc, char **argv)
{
  char pname[64] = "sine", shape[64] = "unit";
  PetscInt degree = 1, levels[8] = {2, 3, 4}, nlev = 8;
  PetscReal min_l2 = 0, min_h1 = 0, l2[8], h1[8];

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  sc_init(PETSC_COMM_WORLD, 1, 1, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Uniform convergence test", NULL);
  PetscCall(PetscOptionsString("-problem", "problem", NULL, pname, pname, sizeof(pname), NULL));
  PetscCall(PetscOptionsString("-shape", "coarse mesh", NULL, shape, shape, sizeof(shape), NULL));
  PetscCall(PetscOptionsInt("-degree", "element degree", NULL, degree, &degree, NULL));
  PetscCall(PetscOptionsIntArray("-levels", "refinement levels", NULL, levels, &nlev, NULL));
  PetscCall(PetscOptionsReal("-min_l2_rate", "smallest accepted L2 rate", NULL, min_l2, &min_l2, NULL));
  PetscCall(PetscOptionsReal("-min_h1_rate", "smallest accepted H1 rate", NULL, min_h1, &min_h1, NULL));
  PetscOptionsEnd();
  if (nlev == 8) nlev = 3;
  const FemProblem *prob = AmrPoissonData(pname);
  PetscCheck(prob, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown problem %s", pname);
  p4est_connectivity_t *conn = AmrShapeNew(shape);
  PetscCheck(conn, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown shape %s", shape);

  FemPoisson fp;
  PetscCall(FemPoissonCreate(PETSC_COMM_WORLD, prob, (int)degree, NULL, NULL, &fp));
  for (PetscInt k = 0; k < nlev; k++) {
    p4est_t *p4est = p4est_new_ext(PETSC_COMM_WORLD, conn, 0, (int)levels[k], 1, 0, NULL, NULL);
    PetscInt its;
    PetscReal rnorm;
    PetscCall(FemPoissonSetup(fp, p4est));
    PetscCall(FemPoissonAssemble(fp));
    PetscCall(FemPoissonSolve(fp, &its, &rnorm));
    PetscCall(FemPoissonExactError(fp, NULL, NULL, &l2[k], &h1[k]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "level %d dofs %d its %d L2 %.4e H1 %.4e", (int)levels[k],
                          (int)FemPoissonGlobalSize(fp), (int)its, l2[k], h1[k]));
    if (k > 0) {
      const double r2 = log2(l2[k - 1] / l2[k]) / (levels[k] - levels[k - 1]);
      const double r1 = log2(h1[k - 1] / h1[k]) / (levels[k] - levels[k - 1]);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, " rate L2 %.3f H1 %.3f", r2, r1));
      CHECK(!(r2 < min_l2 || r1 < min_h1));
    }
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "\n"));
    PetscCall(FemPoissonDestroy(&fp));
    PetscCall(FemPoissonCreate(PETSC_COMM_WORLD, prob, (int)degree, NULL, NULL, &fp));
    p4est_destroy(p4est);
  }
  PetscCall(FemPoissonDestroy(&fp));
  p4est_connectivity_destroy(conn);
  const int fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fail ? "rates too low" : "rates ok"));
  sc_finalize();
  PetscCall(PetscFinalize());
  return fail;
}
