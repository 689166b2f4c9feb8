/* The matrix-free operator against the assembled matrix on a
 * forest with hanging nodes over a coarse mesh from meshes/ or a shape:
 * A x equal to the matrix-free apply for a random x, the same diagonal,
 * the same right-hand side, and the same solution of both paths. */
#include "mesh/p4est_dim.h"
#include <petscsys.h>
#include "app/lbcycle.h"
#include "fem/femutil.h"
#include "fem/impl/poisson.h"
#include "mesh/mesh.h"
#include "mesh/shapes.h"
#include "problems/poisson.h"
#include "check.h"

/* Refine about a third of the cells per pass (by a hash of position and
 * level), so hanging faces and edges appear everywhere. */
static int refine_some(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  const int *maxlevel = p4est->user_pointer;
  const unsigned long len = (unsigned long)P4EST_QUADRANT_LEN(q->level);
  const unsigned long h = (unsigned long)q->x / len * 7919u + (unsigned long)q->y / len * 104729u +
#ifdef P4_TO_P8
                          (unsigned long)q->z / len * 1299709u +
#endif
                          (unsigned long)t * 31u + (unsigned long)q->level * 17u;
  return q->level < *maxlevel && h % 3 == 0;
}

/* |a - b| / |a| */
static PetscErrorCode rel_diff(Vec a, Vec b, double *rel)
{
  Vec d;
  PetscReal na, nd;
  PetscFunctionBeginUser;
  PetscCall(VecDuplicate(a, &d));
  PetscCall(VecWAXPY(d, -1.0, a, b));
  PetscCall(VecNorm(a, NORM_2, &na));
  PetscCall(VecNorm(d, NORM_2, &nd));
  *rel = nd / na;
  PetscCall(VecDestroy(&d));
  PetscFunctionReturn(0);
}

/* Thread CPU per apply of the assembled and the matrix-free operator and
 * per matrix-free diagonal, medians of nrep, in microseconds per local
 * cell (rank 0's). */
static PetscErrorCode bench(FemPoisson fa, FemPoisson fm, int nrep)
{
  Mat A = FemPoissonMatrix(fa), M = FemPoissonOperatorMat(fm);
  Vec x, y;
  double t[3][64];
  const double ncell = (double)fa->lnodes->num_local_elements;

  PetscFunctionBeginUser;
  nrep = nrep > 64 ? 64 : nrep;
  PetscCall(MatCreateVecs(A, &x, &y));
  PetscCall(VecSet(x, 1.0));
  for (int r = 0; r < nrep; r++) {
    double c0, c1, w;
    FemClocks(&c0, &w);
    PetscCall(MatMult(A, x, y));
    FemClocks(&c1, &w);
    t[0][r] = c1 - c0;
    PetscCall(MatMult(M, x, y));
    FemClocks(&c0, &w);
    t[1][r] = c0 - c1;
    PetscCall(FemPoissonMFDiagonal(fm->mf));
    FemClocks(&c1, &w);
    t[2][r] = c1 - c0;
  }
  for (int k = 0; k < 3; k++) PetscCall(PetscSortReal(nrep, t[k]));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "bench (rank 0, %d cells, thread CPU, median of %d): assembled %.3f us/cell, matrix-free %.3f us/cell, diagonal %.3f us/cell\n",
                        (int)ncell, nrep, 1e6 * t[0][nrep / 2] / ncell, 1e6 * t[1][nrep / 2] / ncell, 1e6 * t[2][nrep / 2] / ncell));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&y));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char shape[64] = "", meshfile[PETSC_MAX_PATH_LEN] = "", pname[64] = "linear";
  char dirichlet[PETSC_MAX_PATH_LEN] = "", neumann[PETSC_MAX_PATH_LEN] = "";
  PetscInt degree = 1, level0 = 1, maxlevel = 3, nbench = 0;
  PetscReal tol = 1e-12, soltol = 1e-8;
  AmrMesh mesh = {0};
  p4est_connectivity_t *conn;
  signed char *tree_bc = NULL;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  sc_init(PETSC_COMM_WORLD, 1, 1, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Matrix-free against assembled", NULL);
  PetscCall(PetscOptionsString("-shape", "built-in coarse mesh (mesh/shapes.h)", NULL, shape, shape, sizeof(shape), NULL));
  PetscCall(PetscOptionsString("-mesh", "coarse mesh file", NULL, meshfile, meshfile, sizeof(meshfile), NULL));
  PetscCall(PetscOptionsString("-bc_dirichlet", "Dirichlet boundary parts", NULL, dirichlet, dirichlet, sizeof(dirichlet), NULL));
  PetscCall(PetscOptionsString("-bc_neumann", "Neumann boundary parts", NULL, neumann, neumann, sizeof(neumann), NULL));
  PetscCall(PetscOptionsString("-problem", "Poisson problem", NULL, pname, pname, sizeof(pname), NULL));
  PetscCall(PetscOptionsInt("-degree", "element degree", NULL, degree, &degree, NULL));
  PetscCall(PetscOptionsInt("-level0", "uniform level", NULL, level0, &level0, NULL));
  PetscCall(PetscOptionsInt("-maxlevel", "finest level", NULL, maxlevel, &maxlevel, NULL));
  PetscCall(PetscOptionsReal("-tol", "largest relative difference of A x, diagonal and b", NULL, tol, &tol, NULL));
  PetscCall(PetscOptionsInt("-bench", "time this many applies of each operator and of the diagonal (0: none)", NULL, nbench, &nbench, NULL));
  PetscCall(PetscOptionsReal("-soltol", "largest relative difference of the solutions", NULL, soltol, &soltol, NULL));
  PetscOptionsEnd();
  const FemProblem *prob = AmrPoissonData(pname);
  PetscCheck(prob, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown problem %s", pname);
  if (meshfile[0]) {
    PetscCall(AmrMeshCreate(PETSC_COMM_WORLD, meshfile, &mesh));
    PetscCall(AmrMeshBoundaryTypes(PETSC_COMM_WORLD, &mesh, dirichlet, neumann, &tree_bc));
    conn = mesh.conn;
  } else {
    conn = AmrShapeNew(shape);
    PetscCheck(conn, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown shape %s", shape);
  }

  int ml = (int)maxlevel;
  p4est_t *p4est = p4est_new_ext(PETSC_COMM_WORLD, conn, 0, (int)level0, 1, 0, NULL, &ml);
  p4est_refine(p4est, 1, refine_some, NULL);
  p4est_balance(p4est, P4EST_CONNECT_FULL, NULL);
  PetscCall(AmrLbPartitionEven(p4est, 0, NULL));

  const FemPoissonSolverOptions mfopt = {FEM_POISSON_MATRIX_FREE, FEM_POISSON_PC_AMG, FEM_POISSON_ASSEMBLED, 4, 15.0, 10};
  FemPoisson fa, fm;
  PetscCall(FemPoissonCreate(PETSC_COMM_WORLD, prob, (int)degree, NULL, NULL, &fa));
  PetscCall(FemPoissonCreate(PETSC_COMM_WORLD, prob, (int)degree, &mfopt, NULL, &fm));
  PetscCall(FemPoissonSetBoundaryTypes(fa, tree_bc));
  PetscCall(FemPoissonSetBoundaryTypes(fm, tree_bc));
  PetscCall(FemPoissonSetup(fa, p4est));
  PetscCall(FemPoissonSetup(fm, p4est));
  PetscCall(FemPoissonAssemble(fa));
  PetscCall(FemPoissonAssemble(fm));

  long hanging = 0;
  for (p4est_locidx_t e = 0; e < fa->lnodes->num_local_elements; e++) hanging += fa->lnodes->face_code[e] != 0;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &hanging, 1, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD));
  CHECK(hanging > 0);

  Mat A = FemPoissonMatrix(fa), M = FemPoissonOperatorMat(fm);
  Vec x, ya, ym, b;
  PetscRandom rnd;
  double dmult, ddiag, drhs, dsol;
  PetscCall(MatCreateVecs(A, &x, &ya));
  PetscCall(VecDuplicate(ya, &ym));
  PetscCall(VecDuplicate(ya, &b));
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetFromOptions(rnd));
  PetscCall(VecSetRandom(x, rnd));
  PetscCall(MatMult(A, x, ya));
  PetscCall(MatMult(M, x, ym));
  PetscCall(rel_diff(ya, ym, &dmult));
  PetscCall(MatGetDiagonal(A, ya));
  PetscCall(MatGetDiagonal(M, ym));
  PetscCall(rel_diff(ya, ym, &ddiag));
  PetscCall(FemPoissonMFRHS(fm->mf, b));
  PetscCall(rel_diff(fa->b, b, &drhs));

  if (nbench > 0) PetscCall(bench(fa, fm, (int)nbench));

  PetscInt its[2];
  PetscReal rnorm;
  PetscCall(FemPoissonSolve(fa, &its[0], &rnorm));
  PetscCall(FemPoissonSolve(fm, &its[1], &rnorm));
  PetscCall(rel_diff(fa->u, fm->u, &dsol));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "cells %lld (%ld with hanging nodes) dofs %d: |Ax - A_mf x|/|Ax| %.2e diagonal %.2e rhs %.2e "
                        "solution %.2e (its %d, %d)\n",
                        (long long)p4est->global_num_quadrants, hanging, (int)FemPoissonGlobalSize(fa), dmult, ddiag, drhs,
                        dsol, (int)its[0], (int)its[1]));
  CHECK(dmult <= tol);
  CHECK(ddiag <= tol);
  CHECK(drhs <= tol);
  CHECK(dsol <= soltol);

  PetscCall(PetscRandomDestroy(&rnd));
  PetscCall(VecDestroy(&x));
  PetscCall(VecDestroy(&ya));
  PetscCall(VecDestroy(&ym));
  PetscCall(VecDestroy(&b));
  PetscCall(FemPoissonDestroy(&fa));
  PetscCall(FemPoissonDestroy(&fm));
  p4est_destroy(p4est);
  PetscCall(PetscFree(tree_bc));
  if (meshfile[0]) PetscCall(AmrMeshDestroy(&mesh));
  else p4est_connectivity_destroy(conn);
  const int fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fail ? "DIFFERENT" : "same"));
  sc_finalize();
  PetscCall(PetscFinalize());
  return fail;
}
