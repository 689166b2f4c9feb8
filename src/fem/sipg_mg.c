/*
 * The SIPG pressure preconditioned through the continuous Q1 space
 * (Kronbichler and Wall 2018): a DG Q1 function whose nodal values agree
 * at every shared node is a continuous one, and on such functions the
 * SIPG form is the continuous form with Nitsche's Dirichlet terms (the
 * jumps vanish).  So P^T A P of the prolongation P from the forest's
 * continuous Q1 space is a continuous Q1 operator with the permeability,
 * 4 (2D) or 8 (3D) times smaller than A and with its AMG-friendly
 * stencil; the DG smoother takes the rest, the components continuous Q1
 * cannot represent (the jumps), which are local and damped by a
 * Gauss-Seidel sweep.  Written for 2D; compiled again with P4_TO_P8 for
 * 3D.
 */
#include "fem/impl/sipg.h"

#define VN P4EST_CHILDREN

PetscErrorCode FemSipgContinuousPCCreate(PC pc)
{
  KSP coarse;
  PC cpc;

  PetscFunctionBeginUser;
  PetscCall(PCSetType(pc, PCMG));
  PetscCall(PCMGSetLevels(pc, 2, NULL));
  /* the coarse operator is P^T A P less its round-off (coarse_operator) */
  PetscCall(PCMGSetGalerkin(pc, PC_MG_GALERKIN_NONE));
  /* two Gauss-Seidel sweeps (each rank's own block) before and after the
   * coarse correction: one sweep took as little time but its iterations
   * grew with the ranks (lognormal sigma 2, levels 5-9: 13-14 on 1 rank,
   * 19-23 on 4), two keep 12-16 on 1 to 4 ranks; degree 2
   * Chebyshev-Jacobi, the same on any rank count (15-16), was 1.15 times
   * slower on the mission run's pressure.  In 2D the sweeps before go
   * forward and those after backward, the adjoint, so the V-cycle stays
   * symmetric for CG at 0.62 of symmetric sweeps' work: as many
   * iterations (12-15 on 1 and 4 ranks; the mission run 723 against 734
   * over its cycles) and its KSPSolve 1.02 s against 1.31 s (1 rank).
   * In 3D they took the heterogeneous run from 29 to 34 iterations and
   * saved no time: symmetric sweeps there. */
  for (int up = 0; up < 2; up++) {
    KSP smoother;
    PC spc;

    if (up) PetscCall(PCMGGetSmootherUp(pc, 1, &smoother));
    else PetscCall(PCMGGetSmootherDown(pc, 1, &smoother));
    PetscCall(KSPSetType(smoother, KSPRICHARDSON));
    PetscCall(KSPSetTolerances(smoother, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, 2));
    PetscCall(KSPGetPC(smoother, &spc));
    PetscCall(PCSetType(spc, PCSOR));
#ifndef P4_TO_P8
    PetscCall(PCSORSetSymmetric(spc, up ? SOR_LOCAL_BACKWARD_SWEEP : SOR_LOCAL_FORWARD_SWEEP));
#endif
    /* read now, not first at PCSetUp: the unknown-option check runs
     * before the first solve and would reject the -PREFIXmg_levels_
     * options */
    PetscCall(KSPSetFromOptions(smoother));
  }
  PetscCall(PCMGGetCoarseSolve(pc, &coarse));
  PetscCall(KSPSetType(coarse, KSPPREONLY));
  PetscCall(KSPGetPC(coarse, &cpc));
  PetscCall(PCSetType(cpc, PCHYPRE));
  /* BoomerAMG's classical defaults also in 3D, not FemHypre3dDefaults':
   * the continuous Q1 stencil stays sparse (27 entries) and their
   * truncated HMIS interpolation took the 3D checkerboard of contrast 1e6
   * (levels 5, 2 ranks) from 13 to 43 iterations */
  /* read now, as the smoothers' (above) */
  PetscCall(KSPSetFromOptions(coarse));
  PetscFunctionReturn(0);
}

/* Where k varies by more than this among the cells at a node, every
 * cell's corner there is a coarse unknown of its own: across such a jump
 * the SIPG solution is nearly discontinuous (the penalty is the harmonic
 * mean, the small k), and the high cells of a checkerboard that touch
 * only at the node are not coupled at all, so a continuous coarse space
 * misses it: CG needed 80-100 iterations on the checkerboard of contrast
 * 1.3e6 (tests/fem/permeability/checker16.txt), 11-14 with the split
 * (splitting only the lower cells' corners did not help: 79-92).  A
 * lognormal field of sigma 2 varies by far less between neighbouring
 * cells and stays continuous (a ratio of 1e4 took its 3D iterations from
 * 19 to 22). */
static const double tie_ratio = 100;

/* The local form of a ghosted vector of lnodes' local nodes, combined
 * over the ranks that share each node with mode (ADD_VALUES, MAX_VALUES)
 * and handed back to them all. */
static PetscErrorCode node_reduce(Vec v, InsertMode mode)
{
  PetscFunctionBeginUser;
  PetscCall(VecGhostUpdateBegin(v, mode, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateEnd(v, mode, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}

/* P: row (first cell + K) * VN + i, the DG unknown at corner i of local
 * cell K, is row i of K's constraint matrix on the lnodes nodes listed for
 * K (the parent's where K's face hangs) where k varies by at most
 * tie_ratio among the cells at each of them, otherwise a column of its
 * own.  The
 * columns: each rank's owned nodes that some corner uses, then its own
 * corners, numbered in rank order. */
static PetscErrorCode prolongation(MPI_Comm comm, p4est_t *p4est, const FemQElem *qe, const double *kcell, Mat *P)
{
  p4est_ghost_t *ghost = p4est_ghost_new(p4est, P4EST_CONNECT_FULL);
  p4est_lnodes_t *ln = p4est_lnodes_new(p4est, ghost, 1);
  const p4est_locidx_t nel = ln->num_local_elements, nloc = ln->num_local_nodes, owned = ln->owned_count;
  const PetscInt first = (PetscInt)p4est->global_first_quadrant[p4est->mpirank];
  PetscInt *gnum, ncols = 0, offset = 0;
  double *C, *kratio;
  char *tied;
  Vec v, lv;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc4((size_t)nel * VN * VN + 1, &C, (size_t)nel * VN + 1, &tied, (size_t)nloc + 1, &kratio, (size_t)nloc + 1, &gnum));
  for (p4est_locidx_t K = 0; K < nel; K++) {
    double *c = C + (size_t)K * VN * VN;
    if (!FemQElemConstraints(qe, ln->face_code[K], c))
      for (int i = 0; i < VN * VN; i++) c[i] = i % (VN + 1) == 0;
  }
  for (p4est_locidx_t i = owned; i < nloc; i++) gnum[i] = (PetscInt)ln->nonlocal_nodes[i - owned];
  PetscCall(VecCreateGhost(comm, owned, PETSC_DETERMINE, nloc - owned, gnum + owned, &v));

  /* the ratio of the largest to the smallest k at every node: the
   * largest of k, then of 1 / k */
  for (int pass = 0; pass < 2; pass++) {
    PetscCall(VecGhostGetLocalForm(v, &lv));
    PetscCall(VecSet(lv, 0));
    PetscCall(VecGetArray(lv, &a));
    for (p4est_locidx_t K = 0; K < nel; K++)
      for (int i = 0; i < VN; i++) {
        PetscScalar *ai = &a[ln->element_nodes[(size_t)K * VN + i]];
        *ai = PetscMax(PetscRealPart(*ai), pass ? 1 / kcell[K] : kcell[K]);
      }
    PetscCall(VecRestoreArray(lv, &a));
    PetscCall(VecGhostRestoreLocalForm(v, &lv));
    PetscCall(node_reduce(v, MAX_VALUES));
    PetscCall(VecGhostGetLocalForm(v, &lv));
    PetscCall(VecGetArray(lv, &a));
    for (p4est_locidx_t i = 0; i < nloc; i++) kratio[i] = pass ? kratio[i] * PetscRealPart(a[i]) : PetscRealPart(a[i]);
    if (!pass) {
      PetscCall(VecRestoreArray(lv, &a));
      PetscCall(VecGhostRestoreLocalForm(v, &lv));
    }
  }

  /* which corners follow the nodes, and how many corners use each node */
  PetscCall(PetscArrayzero(a, nloc));
  for (p4est_locidx_t K = 0; K < nel; K++) {
    const p4est_locidx_t *en = ln->element_nodes + (size_t)K * VN;
    const double *c = C + (size_t)K * VN * VN;
    for (int i = 0; i < VN; i++) {
      tied[K * VN + i] = 1;
      for (int j = 0; j < VN; j++)
        if (c[i * VN + j] != 0 && kratio[en[j]] > tie_ratio) tied[K * VN + i] = 0;
      if (tied[K * VN + i])
        for (int j = 0; j < VN; j++)
          if (c[i * VN + j] != 0) a[en[j]] += 1;
      ncols += !tied[K * VN + i];
    }
  }
  PetscCall(VecRestoreArray(lv, &a));
  PetscCall(VecGhostRestoreLocalForm(v, &lv));
  PetscCall(node_reduce(v, ADD_VALUES));

  /* the numbering: the used owned nodes, then the own corners */
  PetscCall(VecGhostGetLocalForm(v, &lv));
  PetscCall(VecGetArray(lv, &a));
  for (p4est_locidx_t i = 0; i < owned; i++) ncols += PetscRealPart(a[i]) > 0;
  PetscCallMPI(MPI_Exscan(&ncols, &offset, 1, MPIU_INT, MPI_SUM, comm));
  if (p4est->mpirank == 0) offset = 0;
  PetscInt next = offset;
  for (p4est_locidx_t i = 0; i < owned; i++) a[i] = PetscRealPart(a[i]) > 0 ? (PetscScalar)next++ : -1;
  PetscCall(VecRestoreArray(lv, &a));
  PetscCall(VecGhostRestoreLocalForm(v, &lv));
  PetscCall(VecGhostUpdateBegin(v, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(v, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostGetLocalForm(v, &lv));
  PetscCall(VecGetArray(lv, &a));
  for (p4est_locidx_t i = 0; i < nloc; i++) gnum[i] = (PetscInt)PetscRealPart(a[i]);
  PetscCall(VecRestoreArray(lv, &a));
  PetscCall(VecGhostRestoreLocalForm(v, &lv));
  PetscCall(VecDestroy(&v));

  PetscCall(MatCreateAIJ(comm, (PetscInt)nel * VN, ncols, PETSC_DETERMINE, PETSC_DETERMINE, VN, NULL, VN, NULL, P));
  for (p4est_locidx_t K = 0; K < nel; K++) {
    const p4est_locidx_t *en = ln->element_nodes + (size_t)K * VN;
    const double *c = C + (size_t)K * VN * VN;
    for (int i = 0; i < VN; i++) {
      const PetscInt row = (first + K) * VN + i;
      if (!tied[K * VN + i]) PetscCall(MatSetValue(*P, row, next++, 1.0, INSERT_VALUES));
      else
        for (int j = 0; j < VN; j++)
          if (c[i * VN + j] != 0) PetscCall(MatSetValue(*P, row, gnum[en[j]], c[i * VN + j], INSERT_VALUES));
    }
  }
  PetscCall(MatAssemblyBegin(*P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*P, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree4(C, tied, kratio, gnum));
  p4est_lnodes_destroy(ln);
  p4est_ghost_destroy(ghost);
  PetscFunctionReturn(0);
}

/* Entries of P^T A P below this fraction of their row's diagonal are
 * round-off and are dropped (coarse_operator). */
static const double drop_tol = 1e-12;

/* P^T A P without the entries that are zero but for round-off.  The face
 * terms of A couple every corner of a cell to every corner of its face
 * neighbours, so the product's pattern couples each continuous node to
 * the nodes two cells away: 64 entries per row in 3D where the continuous
 * Q1 operator has 27, the others its cancelled face terms (on continuous
 * functions the jumps vanish), of order 1e-16 of the diagonal.
 * BoomerAMG's work follows the pattern, not the values: on the 3D
 * heterogeneous run its setup and V-cycles were 58% of the pressure's
 * KSPSolve, with coarse operators of 130-190 entries per row.  Genuine
 * entries are at least about 1 / contrast of the diagonal (a node where
 * k jumps by the contrast couples through the harmonic mean), and the
 * contrast is at most FEM_PERMEABILITY_MAX_CONTRAST = 1e10, so drop_tol
 * keeps them.  The row's own diagonal makes the product unsymmetric by at
 * most drop_tol relative, far below what CG notices. */
static PetscErrorCode coarse_operator(Mat A, Mat P, Mat *Ac)
{
  Mat G;
  MPI_Comm comm;
  PetscInt rstart, rend, cstart, cend, m, n, *dnz, *onz, *keep_cols;
  PetscScalar *keep_vals;
  PetscInt maxrow = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectGetComm((PetscObject)A, &comm));
  PetscCall(MatPtAP(A, P, MAT_INITIAL_MATRIX, PETSC_DEFAULT, &G));
  PetscCall(MatGetOwnershipRange(G, &rstart, &rend));
  PetscCall(MatGetOwnershipRangeColumn(G, &cstart, &cend));
  PetscCall(MatGetLocalSize(G, &m, &n));
  PetscCall(PetscCalloc2(m + 1, &dnz, m + 1, &onz));
  for (int pass = 0; pass < 2; pass++) {
    for (PetscInt r = rstart; r < rend; r++) {
      const PetscInt *cols;
      const PetscScalar *vals;
      PetscInt nc, nk = 0;
      double diag = 0;
      PetscCall(MatGetRow(G, r, &nc, &cols, &vals));
      for (PetscInt c = 0; c < nc; c++)
        if (cols[c] == r) diag = PetscAbsScalar(vals[c]);
      for (PetscInt c = 0; c < nc; c++) {
        if (PetscAbsScalar(vals[c]) <= drop_tol * diag) continue;
        if (pass) {
          keep_cols[nk] = cols[c];
          keep_vals[nk] = vals[c];
        } else if (cols[c] >= cstart && cols[c] < cend) dnz[r - rstart]++;
        else onz[r - rstart]++;
        nk++;
      }
      if (!pass) maxrow = PetscMax(maxrow, nc);
      PetscCall(MatRestoreRow(G, r, &nc, &cols, &vals));
      if (pass) PetscCall(MatSetValues(*Ac, 1, &r, nk, keep_cols, keep_vals, INSERT_VALUES));
    }
    if (!pass) {
      PetscCall(MatCreateAIJ(comm, m, n, PETSC_DETERMINE, PETSC_DETERMINE, 0, dnz, 0, onz, Ac));
      PetscCall(PetscMalloc2(maxrow + 1, &keep_cols, maxrow + 1, &keep_vals));
    }
  }
  PetscCall(MatAssemblyBegin(*Ac, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*Ac, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(keep_cols, keep_vals));
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(MatDestroy(&G));
  PetscFunctionReturn(0);
}

PetscErrorCode FemSipgContinuousPCSetForest(PC pc, p4est_t *p4est, const FemQElem *qe, const double *kcell)
{
  Mat P, A, Ac;
  KSP coarse;
  PetscInt M, N;
  MPI_Comm comm;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCall(prolongation(comm, p4est, qe, kcell, &P));
  PetscCall(PCMGSetInterpolation(pc, 1, P));
  PetscCall(PCGetOperators(pc, &A, NULL));
  PetscCall(coarse_operator(A, P, &Ac));
  PetscCall(PCMGGetCoarseSolve(pc, &coarse));
  PetscCall(KSPSetOperators(coarse, Ac, Ac));
  PetscCall(MatDestroy(&Ac));
  PetscCall(MatGetSize(P, &M, &N));
  /* every corner its own coarse unknown (each cell a cell of a
   * checkerboard): PCMG tells interpolation from restriction by the sizes
   * and would restrict with P instead of P^T */
  if (M == N) {
    Mat R;
    PetscCall(MatTranspose(P, MAT_INITIAL_MATRIX, &R));
    PetscCall(PCMGSetRestriction(pc, 1, R));
    PetscCall(MatDestroy(&R));
  }
  PetscCall(MatDestroy(&P));
  PetscFunctionReturn(0);
}
