/* Adaptive convergence and rank independence: runs -cycles cycles of
 * solve -> Kelly -> mark (-strategy) -> refine/coarsen/balance -> partition
 * on -shape and
 *  - asserts the H1 error falls at least like dofs^(-min_h1_rate), fitted
 *    over the second half of the cycles;
 *  - with -compare_serial, first runs the same cycles on rank 0 alone and
 *    asserts that every cycle has the same DoF count and the same errors
 *    (to -rel_tol) on all ranks. */
#include "mesh/p4est_dim.h"
#include <math.h>
#include <petscsys.h>
#include "app/lbcycle.h"
#include "fem/poisson.h"
#include "mesh/adapt.h"
#include "mesh/mark.h"
#include "mesh/shapes.h"
#include "problems/poisson.h"
#include "check.h"

#define MAXCYC 32

typedef struct {
  const FemProblem *prob;
  char shape[64], strategy[32];
  PetscInt degree, cycles, level0;
  AmrMarkParams mark;
} setup_t;

typedef struct {
  double dofs[MAXCYC], l2[MAXCYC], h1[MAXCYC], est[MAXCYC];
} history_t;

static PetscErrorCode run(MPI_Comm comm, const setup_t *s, history_t *h)
{
  p4est_connectivity_t *conn = AmrShapeNew(s->shape);
  p4est_t *p4est;
  FemPoisson fp;
  double *coef = NULL, *eta2;
  signed char *marks, *level;

  PetscFunctionBeginUser;
  PetscCheck(conn, comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown shape %s", s->shape);
  p4est = p4est_new_ext(comm, conn, 0, (int)s->level0, 1, 0, NULL, NULL);
  PetscCall(AmrLbPartitionEven(p4est, 0, NULL));
  PetscCall(FemPoissonCreate(comm, s->prob, (int)s->degree, NULL, NULL, &fp));
  const int vn = FemPoissonVNodes(fp);
  for (PetscInt c = 0; c < s->cycles; c++) {
    PetscInt its;
    PetscReal rnorm;
    const p4est_locidx_t n = p4est->local_num_quadrants;
    PetscCall(FemPoissonSetup(fp, p4est));
    if (coef) PetscCall(FemPoissonSetInitialGuess(fp, coef));
    PetscCall(FemPoissonAssemble(fp));
    PetscCall(FemPoissonSolve(fp, &its, &rnorm));
    PetscCall(PetscMalloc3(n, &eta2, n, &marks, n, &level));
    PetscCall(FemPoissonExactError(fp, NULL, NULL, &h->l2[c], &h->h1[c]));
    PetscCall(FemPoissonKelly(fp, eta2, &h->est[c]));
    h->dofs[c] = (double)FemPoissonGlobalSize(fp);
    PetscCall(PetscPrintf(comm, "cycle %d cells %lld dofs %d its %d L2 %.6e H1 %.6e estimate %.6e\n", (int)c,
                          (long long)p4est->global_num_quadrants, (int)h->dofs[c], (int)its, h->l2[c], h->h1[c],
                          h->est[c]));
    for (p4est_topidx_t t = p4est->first_local_tree, e = 0; t <= p4est->last_local_tree; t++) {
      p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
      for (size_t k = 0; k < tree->quadrants.elem_count; k++, e++)
        level[e] = p4est_quadrant_array_index(&tree->quadrants, k)->level;
    }
    PetscCall(AmrMark(comm, s->strategy, n, eta2, level, &s->mark, marks));
    PetscCall(PetscFree(coef));
    PetscCall(PetscMalloc1((size_t)n * vn, &coef));
    PetscCall(FemPoissonElementCoefficients(fp, coef));
    PetscCall(AmrAdapt(p4est, marks, s->mark.min_level, s->mark.max_level, vn, &coef, FemPoissonTransfer, fp));
    PetscCall(AmrLbPartitionEven(p4est, 1, &(AmrField){(void **)&coef, sizeof(double) * vn}));
    PetscCall(PetscFree3(eta2, marks, level));
  }
  PetscCall(PetscFree(coef));
  PetscCall(FemPoissonDestroy(&fp));
  p4est_destroy(p4est);
  p4est_connectivity_destroy(conn);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  setup_t s = {NULL, "lshape", "fraction", 1, 10, 1, {0.3, 0.03, 0.5, 0, 30}};
  char pname[64] = "lshape";
  PetscReal min_rate = 0, rel_tol = 1e-8;
  PetscBool compare = PETSC_FALSE;
  PetscInt maxl = 30;
  history_t par, ser;
  int rank;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  sc_init(PETSC_COMM_WORLD, 1, 1, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "Adaptive cycle test", NULL);
  PetscCall(PetscOptionsString("-problem", "problem", NULL, pname, pname, sizeof(pname), NULL));
  PetscCall(PetscOptionsString("-shape", "coarse mesh", NULL, s.shape, s.shape, sizeof(s.shape), NULL));
  PetscCall(PetscOptionsString("-strategy", "marking", NULL, s.strategy, s.strategy, sizeof(s.strategy), NULL));
  PetscCall(PetscOptionsInt("-degree", "element degree", NULL, s.degree, &s.degree, NULL));
  PetscCall(PetscOptionsInt("-cycles", "cycles", NULL, s.cycles, &s.cycles, NULL));
  PetscCall(PetscOptionsInt("-level0", "initial uniform level", NULL, s.level0, &s.level0, NULL));
  PetscCall(PetscOptionsInt("-max_level", "finest level", NULL, maxl, &maxl, NULL));
  PetscCall(PetscOptionsReal("-min_h1_rate", "smallest accepted rate vs dofs", NULL, min_rate, &min_rate, NULL));
  PetscCall(PetscOptionsBool("-compare_serial", "compare with rank 0 alone", NULL, compare, &compare, NULL));
  PetscCall(PetscOptionsReal("-rel_tol", "accepted relative difference", NULL, rel_tol, &rel_tol, NULL));
  PetscOptionsEnd();
  s.mark.max_level = (int)maxl;
  s.prob = AmrPoissonData(pname);
  PetscCheck(s.prob, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown problem %s", pname);
  PetscCheck(s.cycles <= MAXCYC, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "at most %d cycles", MAXCYC);
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));

  if (compare) {
    if (rank == 0) {
      PetscCall(PetscPrintf(PETSC_COMM_SELF, "-- rank 0 alone\n"));
      PetscCall(run(PETSC_COMM_SELF, &s, &ser));
    }
    PetscCallMPI(MPI_Bcast(&ser, sizeof(ser), MPI_BYTE, 0, PETSC_COMM_WORLD));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "-- all ranks\n"));
  }
  PetscCall(run(PETSC_COMM_WORLD, &s, &par));

  if (compare)
    for (PetscInt c = 0; c < s.cycles; c++) {
      const double d1 = fabs(par.h1[c] - ser.h1[c]) / ser.h1[c], d2 = fabs(par.l2[c] - ser.l2[c]) / ser.l2[c];
      if (!CHECK(!(par.dofs[c] != ser.dofs[c] || d1 > rel_tol || d2 > rel_tol)))
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "cycle %d differs: dofs %g vs %g, H1 rel. diff %.2e, L2 %.2e\n",
                              (int)c, par.dofs[c], ser.dofs[c], d1, d2));
    }
  if (min_rate > 0) {
    /* Least-squares slope of log(H1) against log(dofs), second half. */
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const PetscInt c0 = s.cycles / 2, m = s.cycles - c0;
    for (PetscInt c = c0; c < s.cycles; c++) {
      const double x = log(par.dofs[c]), y = log(par.h1[c]);
      sx += x; sy += y; sxx += x * x; sxy += x * y;
    }
    const double rate = -(m * sxy - sx * sy) / (m * sxx - sx * sx);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "H1 error rate against dofs over cycles %d..%d: %.3f (required %.3f)\n",
                          (int)c0, (int)s.cycles - 1, rate, (double)min_rate));
    CHECK(rate >= min_rate);
  }
  const int fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fail ? "FAILED" : "ok"));
  sc_finalize();
  PetscCall(PetscFinalize());
  return fail;
}
