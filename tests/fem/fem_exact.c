/* Exactness on meshes with hanging nodes: the problem `linear` (Q1),
 * `quadratic` (Q2) or `jump` (k piecewise constant per tree) lies in the
 * finite element space, so the discrete
 * solution must equal it up to round-off on a graded forest whose hanging
 * faces (and, in 3D, edges) cross tree and rank boundaries.  The solution is
 * then carried through refinement, coarsening, balance and repartitioning
 * by AmrAdapt and the app's repartition (AmrLbPartitionEven), which must keep it exact as well.  The matrix
 * must be preallocated exactly (MatGetInfo: no mallocs, no unused entries). */
#include "mesh/p4est_dim.h"
#include <math.h>
#include <petscsys.h>
#include "app/lbcycle.h"
#include "fem/poisson.h"
#include "mesh/adapt.h"
#include "mesh/geom.h"
#include "mesh/shapes.h"
#include "problems/poisson.h"
#include "check.h"

/* Refine towards a point off every grid line, so that levels grade across
 * trees. */
static PetscReal target[3] = {0.31, 0.27, 0.23};

static int refine_near_point(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  const double centre[3] = {0.5, 0.5, 0.5};
  const int *maxlevel = p4est->user_pointer;
  double x[3], d = 0.0;
  AmrGeomQuadMap(p4est->connectivity, t, q, centre, x, NULL);
  for (int a = 0; a < P4EST_DIM; a++) d += (x[a] - target[a]) * (x[a] - target[a]);
  return q->level < *maxlevel && sqrt(d) < 0.6 * pow(0.5, q->level);
}

static PetscErrorCode check(FemPoisson fp, const char *what, double tol)
{
  double l2, h1;
  long hanging = 0;
  const p4est_lnodes_t *ln = FemPoissonLNodes(fp);
  PetscFunctionBeginUser;
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) hanging += ln->face_code[e] != 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &hanging, 1, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD));
  CHECK(hanging);
  PetscCall(FemPoissonExactError(fp, NULL, NULL, &l2, &h1));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: dofs %d cells with hanging nodes %ld L2 error %.3e H1 error %.3e\n",
                        what, (int)FemPoissonGlobalSize(fp), hanging, l2, h1));
  CHECK(l2 <= tol && h1 <= tol);
  PetscFunctionReturn(0);
}

/* Exact preallocation: no mallocs during assembly, no unused entries. */
static PetscErrorCode check_preallocation(FemPoisson fp)
{
  MatInfo info;
  PetscFunctionBeginUser;
  PetscCall(MatGetInfo(FemPoissonMatrix(fp), MAT_GLOBAL_SUM, &info));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "matrix: nonzeros %.0f allocated %.0f unneeded %.0f mallocs %.0f\n",
                        info.nz_used, info.nz_allocated, info.nz_unneeded, info.mallocs));
  CHECK(info.mallocs == 0 && info.nz_unneeded == 0 && info.nz_allocated == info.nz_used);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char shape[64] = "unit-split", pname[64] = "";
  PetscInt degree = 1, maxlevel = 5;
  PetscReal tol = 1e-10;
  PetscInt its;
  PetscReal rnorm;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  sc_init(PETSC_COMM_WORLD, 1, 1, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Exactness with hanging nodes", NULL);
  PetscCall(PetscOptionsString("-shape", "coarse mesh", NULL, shape, shape, sizeof(shape), NULL));
  PetscCall(PetscOptionsInt("-degree", "element degree", NULL, degree, &degree, NULL));
  PetscCall(PetscOptionsString("-problem", "problem (default: linear for Q1, quadratic for Q2)", NULL, pname, pname,
                               sizeof(pname), NULL));
  PetscCall(PetscOptionsInt("-maxlevel", "finest level", NULL, maxlevel, &maxlevel, NULL));
  PetscInt nt = 3;
  PetscCall(PetscOptionsRealArray("-target", "point the forest is graded towards", NULL, target, &nt, NULL));
  PetscCall(PetscOptionsReal("-tol", "largest accepted error", NULL, tol, &tol, NULL));
  PetscOptionsEnd();
  const FemProblem *prob = AmrPoissonData(pname[0] ? pname : degree == 1 ? "linear" : "quadratic");
  PetscCheck(prob, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown problem %s", pname);
  p4est_connectivity_t *conn = AmrShapeNew(shape);
  PetscCheck(conn, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown shape %s", shape);

  int ml = (int)maxlevel;
  p4est_t *p4est = p4est_new_ext(PETSC_COMM_WORLD, conn, 0, 1, 1, 0, NULL, &ml);
  p4est_refine(p4est, 1, refine_near_point, NULL);
  p4est_balance(p4est, P4EST_CONNECT_FULL, NULL);
  PetscCall(AmrLbPartitionEven(p4est, 0, NULL));

  FemPoisson fp;
  PetscCall(FemPoissonCreate(PETSC_COMM_WORLD, prob, (int)degree, NULL, NULL, &fp));
  PetscCall(FemPoissonSetup(fp, p4est));
  PetscCall(FemPoissonAssemble(fp));
  PetscCall(check_preallocation(fp));
  PetscCall(FemPoissonSolve(fp, &its, &rnorm));
  PetscCall(check(fp, "solve on graded forest", tol));

  /* Refine every third cell, mark every other cell for coarsening, carry
   * the solution along and look at it on the new mesh before any solve. */
  const int vn = FemPoissonVNodes(fp);
  const p4est_locidx_t n = p4est->local_num_quadrants;
  double *coef;
  signed char *marks;
  PetscCall(PetscMalloc1((size_t)n * vn, &coef));
  PetscCall(PetscMalloc1(n, &marks));
  PetscCall(FemPoissonElementCoefficients(fp, coef));
  for (p4est_locidx_t e = 0; e < n; e++) {
    const p4est_gloidx_t g = p4est->global_first_quadrant[p4est->mpirank] + e;
    marks[e] = g % 3 == 0 ? 1 : (g % 2 ? -1 : 0);
  }
  PetscCall(AmrAdapt(p4est, marks, 0, (int)maxlevel + 1, vn, &coef, FemPoissonTransfer, fp));
  PetscCall(AmrLbPartitionEven(p4est, 1, &(AmrField){(void **)&coef, sizeof(double) * vn}));
  PetscCall(FemPoissonSetup(fp, p4est));
  PetscCall(FemPoissonSetInitialGuess(fp, coef));
  PetscCall(check(fp, "transferred to adapted forest", tol));
  PetscCall(FemPoissonAssemble(fp));
  PetscCall(check_preallocation(fp));
  PetscCall(FemPoissonSolve(fp, &its, &rnorm));
  PetscCall(check(fp, "solve on adapted forest", tol));

  PetscCall(PetscFree(coef));
  PetscCall(PetscFree(marks));
  PetscCall(FemPoissonDestroy(&fp));
  p4est_destroy(p4est);
  p4est_connectivity_destroy(conn);
  const int fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fail ? "NOT exact" : "exact"));
  sc_finalize();
  PetscCall(PetscFinalize());
  return fail;
}
