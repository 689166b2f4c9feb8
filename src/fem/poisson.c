/* The continuous Poisson discretisation (poisson.h): the object, its
 * solver options, its set-up on a forest (nodes, Dirichlet data, the
 * matrix or the matrix-free operator and the multigrid) and the solve.
 * Its element kernels are in poisson_elem.c, the assembly in
 * poisson_assemble.c, the error estimators in poisson_estimate.c, the
 * solution cell by cell and its transfer in poisson_transfer.c
 * (fem/impl/poisson.h).  Written for 2D; compiled again with P4_TO_P8 for
 * 3D. */
#include "mesh/p4est_dim.h"
#include <math.h>
#include <string.h>
#include "fem/femutil.h"
#include "fem/impl/poisson.h"
#include "mesh/geom.h"

#include "fem/impl/hypre.h"

/* Add the time since (cpu0, wall0) to the local work (a multigrid level's
 * to its finest level's). */
void FemPoissonAddWork(FemPoisson fp, double cpu0, double wall0)
{
  double cpu, wall;
  FemPoisson w = fp->work_owner ? fp->work_owner : fp;
  FemClocks(&cpu, &wall);
  w->work_cpu += cpu - cpu0;
  w->work_wall += wall - wall0;
}

void FemPoissonWorkTime(FemPoisson fp, double *cpu, double *wall)
{
  *cpu = fp->work_cpu;
  *wall = fp->work_wall;
}

void FemPoissonSolveTime(FemPoisson fp, double *cpu, double *wall)
{
  *cpu = fp->ksp_cpu;
  *wall = fp->ksp_wall;
}

PetscErrorCode FemPoissonCreateLevel(MPI_Comm comm, const FemProblem *prob, int degree, PetscBool assembled,
                                     const signed char *tree_bc, FemPoisson *out)
{
  FemPoisson fp;

  PetscFunctionBeginUser;
  PetscCheck(degree >= 1 && degree <= FEM_MAX_DEGREE, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "degree %d is not supported (use 1 or 2)", degree);
  PetscCall(PetscCalloc1(1, &fp));
  fp->comm = comm;
  fp->prob = prob;
  fp->tree_bc = tree_bc;
  fp->assembled = assembled;
  FemQElemInit(&fp->qe, degree);
  *out = fp;
  PetscFunctionReturn(0);
}

const char *const FemPoissonOperators[] = {"assembled", "matrix-free", "FemPoissonOperator", "FEM_POISSON_", NULL};
const char *const FemPoissonPCTypes[] = {"amg", "mg", "FemPoissonPCType", "FEM_POISSON_PC_", NULL};

PetscErrorCode FemPoissonCreate(MPI_Comm comm, const FemProblem *prob, int degree, const FemPoissonSolverOptions *opt,
                                const char *prefix, FemPoisson *out)
{
  const FemPoissonSolverOptions defaults = FEM_POISSON_SOLVER_DEFAULTS;
  FemPoisson fp;

  PetscFunctionBeginUser;
  PetscCall(FemPoissonCreateLevel(comm, prob, degree, PETSC_TRUE, NULL, &fp));
  PetscCall(KSPCreate(comm, &fp->ksp));
  PetscCall(KSPSetType(fp->ksp, KSPCG));
  PetscCall(KSPSetTolerances(fp->ksp, 1e-10, 1e-50, PETSC_DEFAULT, 10000));
  if (prefix) PetscCall(KSPSetOptionsPrefix(fp->ksp, prefix));
  if (!opt) opt = &defaults;
#ifdef P4_TO_P8
  {
    /* only where BoomerAMG runs: an option nothing reads is an error */
    char type[64] = "";
    PetscCall(PetscOptionsGetString(NULL, prefix, "-pc_type", type, sizeof type, NULL));
    if (opt->pc == FEM_POISSON_PC_AMG || !strcmp(type, PCHYPRE)) PetscCall(FemHypreDefaults(prefix, "ext+i", 4));
  }
#endif
  /* the KSP reads its options first with the preconditioner it will use,
   * so that -help shows that one */
  PetscCall(FemPoissonSetSolver(fp, opt));
  *out = fp;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonSetSolver(FemPoisson fp, const FemPoissonSolverOptions *opt)
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCheck(opt->cheby_degree >= 1, fp->comm, PETSC_ERR_ARG_OUTOFRANGE, "the Chebyshev degree must be at least 1");
  PetscCheck(opt->smoothing_range > 1.0, fp->comm, PETSC_ERR_ARG_OUTOFRANGE, "the smoothing range must exceed 1");
  PetscCheck(opt->eig_its >= 1, fp->comm, PETSC_ERR_ARG_OUTOFRANGE, "the eigenvalue estimate needs at least 1 iteration");
  fp->opt = *opt;
  fp->assembled = opt->op == FEM_POISSON_ASSEMBLED;
  /* the -pc_ and -mg_ options of the command line still win */
  PetscCall(KSPGetPC(fp->ksp, &pc));
  PetscCall(PCSetType(pc, opt->pc == FEM_POISSON_PC_MG ? PCMG : PCHYPRE));
  PetscCall(KSPSetFromOptions(fp->ksp));
  if (!fp->assembled && opt->pc == FEM_POISSON_PC_MG) {
    /* this pair assembles no fine matrix: an algebraic multigrid given by
     * -pc_type would build one from the shell operator column by column
     * (30 s a solve at 54k DoFs) and fail a cycle later */
    PCType type;
    PetscBool amg;
    PetscCall(PCGetType(pc, &type));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &amg, PCHYPRE, PCGAMG, PCML, ""));
    PetscCheck(!amg, fp->comm, PETSC_ERR_USER_INPUT,
               "option -pc_type %s: algebraic multigrid needs the assembled matrix: use -poisson_operator assembled -poisson_pc amg (the default is matrix-free + geometric multigrid)",
               type);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode teardown(FemPoisson fp)
{
  PetscFunctionBeginUser;
  /* The KSP keeps its type and options but must forget the old sizes. */
  if (fp->ksp && fp->b) PetscCall(KSPReset(fp->ksp));
  PetscCall(FemPoissonMGDestroy(&fp->mg));
  PetscCall(FemPoissonMFDestroy(&fp->mf));
  PetscCall(MatDestroy(&fp->A));
  PetscCall(VecDestroy(&fp->b));
  PetscCall(VecDestroy(&fp->u));
  PetscCall(PetscFree(fp->gidx));
  PetscCall(PetscFree2(fp->dirichlet, fp->gval));
  PetscCall(PetscFree2(fp->etree, fp->equad));
  PetscCall(PetscFree3(fp->taffine, fp->tx0, fp->tJ));
  if (fp->lnodes) p4est_lnodes_destroy(fp->lnodes);
  if (fp->ghost) p4est_ghost_destroy(fp->ghost);
  fp->lnodes = NULL;
  fp->ghost = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonSetBoundaryTypes(FemPoisson fp, const signed char *tree_bc)
{
  PetscFunctionBeginUser;
  fp->tree_bc = tree_bc;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonDestroy(FemPoisson *fpp)
{
  FemPoisson fp = *fpp;

  PetscFunctionBeginUser;
  if (!fp) PetscFunctionReturn(0);
  PetscCall(teardown(fp));
  if (fp->ksp) PetscCall(KSPDestroy(&fp->ksp));
  for (int c = 0; c < FEM_NCODES; c++) PetscCall(PetscFree(fp->ccache[c]));
  FemQElemFree(&fp->qe);
  PetscCall(PetscFree(fp));
  *fpp = NULL;
  PetscFunctionReturn(0);
}

PetscInt FemPoissonGlobalSize(FemPoisson fp) { return fp->nglobal; }
int FemPoissonVNodes(FemPoisson fp) { return fp->qe.vnodes; }
p4est_lnodes_t *FemPoissonLNodes(FemPoisson fp) { return fp->lnodes; }
Mat FemPoissonMatrix(FemPoisson fp) { return fp->A; }
Mat FemPoissonOperatorMat(FemPoisson fp) { return fp->assembled ? fp->A : FemPoissonMFMat(fp->mf); }

PetscErrorCode FemPoissonSetup(FemPoisson fp, p4est_t *p4est)
{
  const int vn = fp->qe.vnodes;
  p4est_lnodes_t *ln;
  PetscInt *ghosts;
  Vec flag, lflag;
  PetscScalar *fa;
  int size;

  PetscFunctionBeginUser;
  PetscCall(teardown(fp));
  fp->p4est = p4est;
  fp->ghost = p4est_ghost_new(p4est, P4EST_CONNECT_FULL);
  fp->lnodes = ln = p4est_lnodes_new(p4est, fp->ghost, fp->qe.degree);
  const p4est_locidx_t nel = ln->num_local_elements, nloc = ln->num_local_nodes, owned = ln->owned_count;
  PetscCallMPI(MPI_Comm_size(fp->comm, &size));
  fp->nglobal = 0;
  for (int r = 0; r < size; r++) fp->nglobal += ln->global_owned_count[r];

  PetscCall(PetscMalloc2(nel, &fp->etree, nel, &fp->equad));
  {
    const p4est_topidx_t nt = p4est->connectivity->num_trees;
    PetscCall(PetscMalloc3(nt, &fp->taffine, 3 * (size_t)nt, &fp->tx0, 9 * (size_t)nt, &fp->tJ));
    for (p4est_topidx_t t = 0; t < nt; t++)
      fp->taffine[t] = (char)AmrGeomTreeAffine(p4est->connectivity, t, fp->tx0 + 3 * (size_t)t,
                                                  (double(*)[3])(fp->tJ + 9 * (size_t)t));
  }
  for (p4est_topidx_t t = p4est->first_local_tree, e = 0; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++, e++) {
      fp->etree[e] = t;
      fp->equad[e] = p4est_quadrant_array_index(&tree->quadrants, k);
    }
  }
  PetscCall(PetscMalloc1(nloc, &fp->gidx));
  PetscCall(PetscMalloc1(nloc - owned, &ghosts));
  for (p4est_locidx_t i = 0; i < nloc; i++)
    fp->gidx[i] = (PetscInt)(i < owned ? ln->global_offset + i : ln->nonlocal_nodes[i - owned]);
  for (p4est_locidx_t i = owned; i < nloc; i++) ghosts[i - owned] = fp->gidx[i];
  PetscCall(VecCreateGhost(fp->comm, owned, fp->nglobal, nloc - owned, ghosts, &fp->u));
  PetscCall(PetscFree(ghosts));
  PetscCall(VecCreateMPI(fp->comm, owned, fp->nglobal, &fp->b));
  PetscCall(VecSetOption(fp->b, VEC_IGNORE_NEGATIVE_INDICES, PETSC_TRUE));

  /* Dirichlet nodes: those on a Dirichlet face of some cell. */
  PetscCall(VecDuplicate(fp->u, &flag));
  PetscCall(VecGhostGetLocalForm(flag, &lflag));
  PetscCall(VecGetArray(lflag, &fa));
  for (p4est_locidx_t e = 0; e < nel; e++)
    for (int f = 0; f < P4EST_FACES; f++)
      if (FemPoissonBoundaryFace(p4est, fp->etree[e], fp->equad[e], f) && FemPoissonFaceBC(fp, fp->etree[e], fp->equad[e], f) == FEM_BC_DIRICHLET)
        for (int i = 0; i < vn; i++)
          if (FemQElemNodeOnFace(&fp->qe, i, f)) fa[ln->element_nodes[(size_t)e * vn + i]] = 1.0;
  PetscCall(VecRestoreArray(lflag, &fa));
  PetscCall(VecGhostRestoreLocalForm(flag, &lflag));
  /* A rank may hold a boundary node only through a corner of one of its
   * cells; the owner hears of every boundary face and tells all sharers. */
  PetscCall(VecGhostUpdateBegin(flag, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateEnd(flag, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateBegin(flag, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(flag, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(PetscMalloc2(nloc, &fp->dirichlet, nloc, &fp->gval));
  PetscCall(VecGhostGetLocalForm(flag, &lflag));
  PetscCall(VecGetArray(lflag, &fa));
  for (p4est_locidx_t i = 0; i < nloc; i++) {
    fp->dirichlet[i] = fa[i] > 0.5;
    /* NAN: a Dirichlet value still to evaluate */
    fp->gval[i] = fp->dirichlet[i] && fp->prob->u ? NAN : 0.0;
  }
  PetscCall(VecRestoreArray(lflag, &fa));
  PetscCall(VecGhostRestoreLocalForm(flag, &lflag));
  PetscCall(VecDestroy(&flag));
  /* The Dirichlet data at the Dirichlet nodes only, each by the first cell
   * that holds it; a constrained position holds a node of the parent's
   * face, so its coordinates come from the parent. */
  for (p4est_locidx_t e = 0; e < nel; e++) {
    const p4est_locidx_t *en = ln->element_nodes + (size_t)e * vn;
    for (int i = 0; i < vn; i++) {
      const p4est_quadrant_t *q = fp->equad[e];
      p4est_quadrant_t parent;
      const double *C;
      double eta[3], x[3];
      if (!isnan(fp->gval[en[i]])) continue;
      PetscCall(FemPoissonConstraintMatrix(fp, ln->face_code[e], &C));
      if (!FemPoissonNodeFree(C, vn, i)) {
        p4est_quadrant_parent(q, &parent);
        q = &parent;
      }
      FemQElemNode(&fp->qe, i, eta);
      FemPoissonElementMap(fp, fp->etree[e], q, eta, x, NULL);
      fp->gval[en[i]] = fp->prob->u(P4EST_DIM, x);
    }
  }

  /* BoomerAMG needs the matrix, even under a matrix-free operator */
  if (fp->assembled || (fp->ksp && fp->opt.pc == FEM_POISSON_PC_AMG)) {
    PetscCall(MatCreate(fp->comm, &fp->A));
    PetscCall(MatSetSizes(fp->A, owned, owned, fp->nglobal, fp->nglobal));
    PetscCall(MatSetType(fp->A, MATAIJ));
    PetscCall(FemPoissonPreallocate(fp));
    PetscCall(MatSetOption(fp->A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    PetscCall(MatSetOption(fp->A, MAT_SYMMETRIC, PETSC_TRUE));
  }
  if (!fp->assembled) PetscCall(FemPoissonMFCreate(fp, &fp->mf));
  if (fp->ksp && fp->opt.pc == FEM_POISSON_PC_MG) PetscCall(FemPoissonMGCreate(fp, &fp->mg));
  fp->guess = PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonSolve(FemPoisson fp, PetscInt *its, PetscReal *rnorm)
{
  KSPConvergedReason reason;
  Mat op = FemPoissonOperatorMat(fp);
  PC pc;
  PetscBool mg;
  double cpu0, wall0, cpu1, wall1;

  PetscFunctionBeginUser;
  PetscCall(KSPSetOperators(fp->ksp, op, fp->A ? fp->A : op));
  PetscCall(KSPGetPC(fp->ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &mg));
  if (mg) {
    PetscCheck(fp->mg, fp->comm, PETSC_ERR_USER_INPUT, "option -pc_type mg: use -poisson_pc mg for the geometric multigrid");
    PetscCall(FemPoissonMGSetUpPC(fp->mg, pc));
  }
  PetscCall(KSPSetInitialGuessNonzero(fp->ksp, fp->guess));
  FemClocks(&cpu0, &wall0);
  PetscCall(KSPSolve(fp->ksp, fp->b, fp->u));
  FemClocks(&cpu1, &wall1);
  fp->ksp_cpu += cpu1 - cpu0;
  fp->ksp_wall += wall1 - wall0;
  PetscCall(KSPGetConvergedReason(fp->ksp, &reason));
  PetscCall(KSPGetIterationNumber(fp->ksp, its));
  PetscCall(KSPGetResidualNorm(fp->ksp, rnorm));
  /* The reason is the same on every rank, so this is a collective error;
   * it comes from the solver options the user chose, hence USER_INPUT. */
  PetscCheck(reason > 0, fp->comm, PETSC_ERR_USER_INPUT,
             "the linear solver did not converge (%s after %" PetscInt_FMT " iterations): check the -ksp_ and -pc_ options",
             KSPConvergedReasons[reason], *its);
  PetscCall(VecGhostUpdateBegin(fp->u, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(fp->u, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}
