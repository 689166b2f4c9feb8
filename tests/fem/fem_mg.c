/* The geometric multigrid of FemPoisson on forests graded
 * towards the re-entrant corner of the L-shape (2D) or Fichera corner
 * (3D), or with -problem jump towards the plane x = 1/2 of the unit
 * square (cube) where k jumps by -jump_contrast, for -refine 1, 2, ...
 * levels beyond the uniform -level0, from a zero initial guess:
 *  - every transfer is the adjoint of its restriction, u . R v = P u . v,
 *  - CG with the V-cycle reaches -ksp_rtol in at most -max_its iterations
 *    on every forest, with the operator of -poisson_operator. */
#include "mesh/p4est_dim.h"
#include <math.h>
#include <string.h>
#include <petscsys.h>
#include "app/lbcycle.h"
#include "fem/impl/poisson.h"
#include "mesh/geom.h"
#include "mesh/shapes.h"
#include "problems/poisson.h"
#include "check.h"

/* Refine the cells whose closure holds the origin. */
static int refine_corner(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  const int *maxlevel = p4est->user_pointer;
  const double e0[3] = {0, 0, 0}, e1[3] = {1, 1, 1};
  double a[3], b[3];
  int inside = 1;
  AmrGeomQuadMap(p4est->connectivity, t, q, e0, a, NULL);
  AmrGeomQuadMap(p4est->connectivity, t, q, e1, b, NULL);
  for (int d = 0; d < P4EST_DIM; d++) inside &= fmin(a[d], b[d]) <= 1e-12 && fmax(a[d], b[d]) >= -1e-12;
  return q->level < *maxlevel && inside;
}

/* Refine the cells that touch the plane x = 1/2. */
static int refine_plane(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  const int *maxlevel = p4est->user_pointer;
  const double e0[3] = {0, 0, 0}, e1[3] = {1, 1, 1};
  double a[3], b[3];
  AmrGeomQuadMap(p4est->connectivity, t, q, e0, a, NULL);
  AmrGeomQuadMap(p4est->connectivity, t, q, e1, b, NULL);
  return q->level < *maxlevel && fmin(a[0], b[0]) <= 0.5 + 1e-12 && fmax(a[0], b[0]) >= 0.5 - 1e-12;
}

static PetscErrorCode check_transfers(FemPoisson fp, PetscRandom rnd, double *adj)
{
  int nlev;
  Mat P[64];
  PetscFunctionBeginUser;
  *adj = 0.0;
  PetscCall(FemPoissonMGLevels(fp->mg, &nlev, NULL, P));
  for (int l = 1; l < nlev; l++) {
    Vec u, v, Pu, Rv;
    PetscScalar uRv, Puv;
    PetscReal nPu, nv;
    PetscCall(MatCreateVecs(P[l], &u, &v));
    PetscCall(VecDuplicate(u, &Rv));
    PetscCall(VecDuplicate(v, &Pu));
    PetscCall(VecSetRandom(u, rnd));
    PetscCall(VecSetRandom(v, rnd));
    PetscCall(MatMult(P[l], u, Pu));
    PetscCall(MatMultTranspose(P[l], v, Rv));
    PetscCall(VecDot(u, Rv, &uRv));
    PetscCall(VecDot(Pu, v, &Puv));
    PetscCall(VecNorm(Pu, NORM_2, &nPu));
    PetscCall(VecNorm(v, NORM_2, &nv));
    *adj = PetscMax(*adj, PetscAbsScalar(uRv - Puv) / (nPu * nv));
    PetscCall(VecDestroy(&u));
    PetscCall(VecDestroy(&v));
    PetscCall(VecDestroy(&Pu));
    PetscCall(VecDestroy(&Rv));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt degree = 1, level0 = 2, refine = 3, max_its = 15;
  char pname[64] = "lshape";
  FemPoissonSolverOptions opt = FEM_POISSON_SOLVER_DEFAULTS;
  PetscRandom rnd;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  sc_init(PETSC_COMM_WORLD, 1, 1, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  opt.pc = FEM_POISSON_PC_MG;
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Geometric multigrid", NULL);
  PetscCall(PetscOptionsString("-problem", "lshape (graded towards the corner) or jump (towards x = 1/2)", NULL, pname, pname, sizeof pname, NULL));
  PetscCall(PetscOptionsInt("-degree", "element degree", NULL, degree, &degree, NULL));
  PetscCall(PetscOptionsInt("-level0", "uniform level", NULL, level0, &level0, NULL));
  PetscCall(PetscOptionsInt("-refine", "forests with 1, 2, ... levels graded towards the corner", NULL, refine, &refine, NULL));
  PetscCall(PetscOptionsInt("-max_its", "most CG iterations accepted", NULL, max_its, &max_its, NULL));
  PetscCall(PetscOptionsEnum("-poisson_operator", "operator", NULL, FemPoissonOperators, (PetscEnum)opt.op, (PetscEnum *)&opt.op, NULL));
  PetscCall(PetscOptionsEnum("-poisson_mg_level_operator", "the Q1 levels' operator", NULL, FemPoissonOperators, (PetscEnum)opt.level_op,
                             (PetscEnum *)&opt.level_op, NULL));
  PetscOptionsEnd();
  const int jump = !strcmp(pname, "jump");
  PetscCheck(jump || !strcmp(pname, "lshape"), PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "option -problem %s: lshape or jump", pname);
  if (jump) PetscCall(AmrPoissonJumpOptions(PETSC_COMM_WORLD));
  p4est_connectivity_t *conn = AmrShapeNew(jump ? "unit" : P4EST_DIM == 2 ? "lshape" : "fichera");
  PetscCall(PetscRandomCreate(PETSC_COMM_WORLD, &rnd));
  PetscCall(PetscRandomSetFromOptions(rnd));

  for (int k = 1; k <= refine; k++) {
    int ml = (int)(level0 + k), nlev;
    p4est_t *p4est = p4est_new_ext(PETSC_COMM_WORLD, conn, 0, (int)level0, 1, 0, NULL, &ml);
    p4est_refine(p4est, 1, jump ? refine_plane : refine_corner, NULL);
    p4est_balance(p4est, P4EST_CONNECT_FULL, NULL);
    PetscCall(AmrLbPartitionEven(p4est, 0, NULL));
    FemPoisson fp;
    PetscInt its;
    PetscReal rnorm;
    double adj;
    PetscCall(FemPoissonCreate(PETSC_COMM_WORLD, AmrPoissonData(pname), (int)degree, &opt, NULL, &fp));
    PetscCall(FemPoissonSetup(fp, p4est));
    PetscCall(FemPoissonAssemble(fp));
    PetscCall(FemPoissonSolve(fp, &its, &rnorm));
    PetscCall(FemPoissonMGLevels(fp->mg, &nlev, NULL, NULL));
    PetscCall(check_transfers(fp, rnd, &adj));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                          "refine %d: cells %lld dofs %d levels %d: CG its %d | max |u.Rv - Pu.v|/(|Pu||v|) %.2e\n",
                          k, (long long)p4est->global_num_quadrants, (int)FemPoissonGlobalSize(fp), nlev, (int)its, adj));
    CHECK(nlev >= 2 + (int)level0);
    CHECK(its <= max_its);
    CHECK(adj <= 1e-13);
    PetscCall(FemPoissonDestroy(&fp));
    p4est_destroy(p4est);
  }
  PetscCall(PetscRandomDestroy(&rnd));
  p4est_connectivity_destroy(conn);
  const int fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fail ? "FAILED" : "passed"));
  sc_finalize();
  PetscCall(PetscFinalize());
  return fail;
}
