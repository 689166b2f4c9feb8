/*
 * The SIPG pressure preconditioned through the continuous Q1 space
 * (Kronbichler and Wall 2018): a DG Q1 function whose nodal values agree
 * at every shared node is a continuous one, and on such functions the
 * SIPG form is the continuous form with Nitsche's Dirichlet terms (the
 * jumps vanish).  So P^T A P of the prolongation P from the forest's
 * continuous Q1 space is a continuous Q1 operator with the permeability,
 * 4 (2D) or 8 (3D) times smaller than A and with its AMG-friendly
 * stencil, and it is summed from the cells' volume and Dirichlet blocks
 * alone, as a continuous operator is assembled: MatPtAP of the whole A
 * cost 0.2 s of the mission run's 1.4 s pressure (2 ranks) and left the
 * cancelled face terms as round-off entries, 64 per 3D row where the
 * continuous operator has 27, that BoomerAMG then carried through its
 * hierarchy.  The DG smoother takes the rest, the components continuous
 * Q1 cannot represent (the jumps), which are local and damped by a
 * Gauss-Seidel sweep.  Written for 2D; compiled again with P4_TO_P8 for
 * 3D.
 */
#include "fem/impl/sipg.h"
#include "fem/impl/hypre.h"

#define VN P4EST_CHILDREN

/* Makes a smoother's KSP two Richardson iterations of its PC, returned in
 * pc. */
static PetscErrorCode richardson(KSP smoother, PC *pc)
{
  PetscFunctionBeginUser;
  PetscCall(KSPSetType(smoother, KSPRICHARDSON));
  PetscCall(KSPSetTolerances(smoother, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, 2));
  PetscCall(KSPGetPC(smoother, pc));
  PetscFunctionReturn(0);
}

PetscErrorCode FemSipgContinuousPCCreate(PC pc)
{
  KSP coarse, smoother;
  PC cpc, spc;

  PetscFunctionBeginUser;
  PetscCall(PCSetType(pc, PCMG));
  PetscCall(PCMGSetLevels(pc, 2, NULL));
  /* the coarse operator is P^T A P, summed from the cells' blocks (FemSipgCoarseCreate) */
  PetscCall(PCMGSetGalerkin(pc, PC_MG_GALERKIN_NONE));
  /* Two sweeps of block Gauss-Seidel (the matrix is BAIJ, a cell's
   * unknowns one block; each rank's own rows) before and after the coarse
   * correction: in 2D forward before and backward after, the adjoint, so
   * the V-cycle stays symmetric for CG; in 3D symmetric sweeps with the
   * blocks in single precision (FemSipgSmootherCreate).  Why, measured:
   * src/problems/README.md, "Why the pressure's matrix and smoothers are
   * built as they are".  The smoothers read their options now, not first
   * at PCSetUp: the unknown-option check runs before the first solve and
   * would reject the -PREFIXmg_levels_ options. */
#ifdef P4_TO_P8
  PetscCall(PCMGGetSmoother(pc, 1, &smoother));
  PetscCall(richardson(smoother, &spc));
  PetscCall(FemSipgSmootherCreate(spc));
  PetscCall(KSPSetFromOptions(smoother));
  /* the residual before the coarse correction from the same blocks: the
   * whole V-cycle in single precision, and symmetric with them */
  PetscCall(PCMGSetResidual(pc, 1, FemSipgResidual, NULL));
#else
  for (int up = 0; up < 2; up++) {
    if (up) PetscCall(PCMGGetSmootherUp(pc, 1, &smoother));
    else PetscCall(PCMGGetSmootherDown(pc, 1, &smoother));
    PetscCall(richardson(smoother, &spc));
    PetscCall(PCSetType(spc, PCSOR));
    PetscCall(PCSORSetSymmetric(spc, up ? SOR_LOCAL_BACKWARD_SWEEP : SOR_LOCAL_FORWARD_SWEEP));
    PetscCall(KSPSetFromOptions(smoother));
  }
#endif
  PetscCall(PCMGGetCoarseSolve(pc, &coarse));
  PetscCall(KSPSetType(coarse, KSPPREONLY));
  PetscCall(KSPGetPC(coarse, &cpc));
  PetscCall(PCSetType(cpc, PCHYPRE));
  /* HMIS coarsening, as the 3D Poisson solver's BoomerAMG, with FF1
   * interpolation of up to 8 weights per row.  In 3D classical
   * coarsening left the uniform level-5 forest's coarse operator 9.1
   * times the continuous one's entries, its setup and V-cycles 1.2 s of
   * the pressure's 4.4 s, against 2.6 times and 0.46 s, with 11 CG
   * iterations both.  The 3D checkerboard of contrast 1e6 (unit-split,
   * 2 ranks) decides the interpolation: at levels 5 and 6 FF1 took 13
   * and 14 iterations, ext+i 18 and 18 (with at most 4 weights 47 at
   * level 4), classical 68 and 95.  In 2D the mission run's pressure
   * took 0.89 of the time with classical coarsening's (872 iterations
   * over its cycles against 833, 2 ranks). */
  {
    const char *prefix;
    char coarse_prefix[128];

    PetscCall(PCGetOptionsPrefix(pc, &prefix));
    PetscCall(PetscSNPrintf(coarse_prefix, sizeof coarse_prefix, "%smg_coarse_", prefix ? prefix : ""));
    PetscCall(FemHypreDefaults(coarse_prefix, "FF1", 8));
  }
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

/* One cell's rows of P for the faces' terms: for each corner, up to VN
 * columns with their weights (unused columns -1); as doubles, the layout
 * FemAdvectGhostExchange sends to the ghosts. */
#define ROW_SIZE (2 * VN * VN)

struct _p_FemSipgCoarse {
  PC pc;
  Mat P;
  Mat Ac;          /* the cells' and Dirichlet faces' part of P^T A P, preallocated (coarse_pattern) */
  size_t ncells;   /* local, then ghost */
  PetscBool faces; /* some cell somewhere has a corner of its own */
  double *tied;    /* per cell: whether every corner follows the nodes (ghosts: with faces) */
  double *rows;    /* with faces, ROW_SIZE per cell; without, the local cells' rows are read from P */
  /* P's parts, read directly without faces: MatGetRow merged them into a
   * buffer for every row (the cells' blocks into Ac took 0.030 s of the
   * mission run's 0.83 s pressure on 2 ranks with it, 0.019 s without) */
  Mat part[2];
  const PetscInt *ia[2], *ja[2], *garray;
  const PetscScalar *pa[2];
  PetscInt cstart;
  /* the interior faces' part: triples between two cells, summed by
   * MatSetValuesCOO (only with faces) */
  PetscCount n, cap;
  PetscInt *ci, *cj;
  PetscScalar *cv;
};

/* P: row (first cell + K) * VN + i, the DG unknown at corner i of local
 * cell K, is row i of K's constraint matrix on the lnodes nodes listed for
 * K (the parent's where K's face hangs) where k varies by at most
 * tie_ratio among the cells at each of them, otherwise a column of its
 * own.  The columns: each rank's owned nodes that some corner uses, then
 * its own corners, numbered in rank order.  c->tied and, with faces,
 * c->rows get the local cells' parts. */
static PetscErrorCode prolongation(MPI_Comm comm, p4est_t *p4est, const FemQElem *qe, const double *kcell, FemSipgCoarse c)
{
  p4est_ghost_t *ghost = p4est_ghost_new(p4est, P4EST_CONNECT_FULL);
  p4est_lnodes_t *ln = p4est_lnodes_new(p4est, ghost, 1);
  const p4est_locidx_t nel = ln->num_local_elements, nloc = ln->num_local_nodes, owned = ln->owned_count;
  const PetscInt first = (PetscInt)p4est->global_first_quadrant[p4est->mpirank];
  PetscInt *gnum, ncols = 0, offset = 0, own_corners = 0;
  double *C, *kratio;
  char *tied;
  Vec v, lv;
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc4((size_t)nel * VN * VN + 1, &C, (size_t)nel * VN + 1, &tied, (size_t)nloc + 1, &kratio, (size_t)nloc + 1, &gnum));
  for (p4est_locidx_t K = 0; K < nel; K++) {
    double *cK = C + (size_t)K * VN * VN;
    if (!FemQElemConstraints(qe, ln->face_code[K], cK))
      for (int i = 0; i < VN * VN; i++) cK[i] = i % (VN + 1) == 0;
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
    const double *cK = C + (size_t)K * VN * VN;
    for (int i = 0; i < VN; i++) {
      tied[K * VN + i] = 1;
      for (int j = 0; j < VN; j++)
        if (cK[i * VN + j] != 0 && kratio[en[j]] > tie_ratio) tied[K * VN + i] = 0;
      if (tied[K * VN + i])
        for (int j = 0; j < VN; j++)
          if (cK[i * VN + j] != 0) a[en[j]] += 1;
      own_corners += !tied[K * VN + i];
    }
  }
  ncols = own_corners;
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
  {
    PetscInt any = own_corners > 0, anywhere;
    PetscCallMPI(MPIU_Allreduce(&any, &anywhere, 1, MPIU_INT, MPI_MAX, comm));
    c->faces = anywhere ? PETSC_TRUE : PETSC_FALSE;
  }
  if (c->faces) PetscCall(PetscMalloc1(c->ncells * ROW_SIZE + 1, &c->rows));

  /* P's rows */
  PetscCall(MatCreateAIJ(comm, (PetscInt)nel * VN, ncols, PETSC_DETERMINE, PETSC_DETERMINE, VN, NULL, VN, NULL, &c->P));
  for (p4est_locidx_t K = 0; K < nel; K++) {
    const p4est_locidx_t *en = ln->element_nodes + (size_t)K * VN;
    const double *cK = C + (size_t)K * VN * VN;
    double *cols = c->rows ? c->rows + (size_t)K * ROW_SIZE : NULL, *w = cols ? cols + VN * VN : NULL;
    for (int i = 0; i < VN; i++) {
      PetscInt row = (first + K) * VN + i, rc[VN], n = 0;
      PetscScalar rw[VN];
      if (!tied[K * VN + i]) {
        rc[n] = next++;
        rw[n++] = 1;
      } else
        for (int j = 0; j < VN; j++)
          if (cK[i * VN + j] != 0) {
            rc[n] = gnum[en[j]];
            rw[n++] = cK[i * VN + j];
          }
      for (int j = 0; cols && j < VN; j++) {
        cols[i * VN + j] = j < n ? (double)rc[j] : -1;
        w[i * VN + j] = j < n ? PetscRealPart(rw[j]) : 0;
      }
      PetscCall(MatSetValues(c->P, 1, &row, n, rc, rw, INSERT_VALUES));
    }
    c->tied[K] = 1;
    for (int i = 0; i < VN; i++) c->tied[K] = c->tied[K] && tied[K * VN + i];
  }
  PetscCall(MatAssemblyBegin(c->P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(c->P, MAT_FINAL_ASSEMBLY));
  PetscCall(MatCreate(comm, &c->Ac));
  PetscCall(MatSetSizes(c->Ac, ncols, ncols, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(c->Ac, MATAIJ));
  PetscCall(VecDestroy(&v));
  PetscCall(PetscFree4(C, tied, kratio, gnum));
  p4est_lnodes_destroy(ln);
  p4est_ghost_destroy(ghost);
  PetscFunctionReturn(0);
}

PetscErrorCode FemSipgCoarseCreate(PC pc, FemAdvect adv, const FemQElem *qe, const double *kcell, FemSipgCoarse *out)
{
  FemSipgCoarse c;
  p4est_locidx_t nlocal, nghost;
  MPI_Comm comm;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectGetComm((PetscObject)pc, &comm));
  PetscCall(PetscCalloc1(1, &c));
  c->pc = pc;
  PetscCall(FemAdvectCellCounts(adv, &nlocal, &nghost));
  c->ncells = (size_t)nlocal + (size_t)nghost;
  PetscCall(PetscMalloc1(c->ncells + 1, &c->tied));
  PetscCall(prolongation(comm, FemAdvectForest(adv), qe, kcell, c));
  if (!c->rows) {
    PetscBool seq, done;
    PetscInt n;
    PetscCall(MatGetOwnershipRangeColumn(c->P, &c->cstart, NULL));
    PetscCall(PetscObjectBaseTypeCompare((PetscObject)c->P, MATSEQAIJ, &seq));
    if (seq) c->part[0] = c->P;
    else PetscCall(MatMPIAIJGetSeqAIJ(c->P, &c->part[0], &c->part[1], &c->garray));
    for (int x = 0; x < 2 && c->part[x]; x++) {
      PetscCall(MatGetRowIJ(c->part[x], 0, PETSC_FALSE, PETSC_FALSE, &n, &c->ia[x], &c->ja[x], &done));
      PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "SIPG: the prolongation's rows are not accessible");
      PetscCall(MatSeqAIJGetArrayRead(c->part[x], &c->pa[x]));
    }
  }
  /* the ghosts' parts only for the faces' terms (FemSipgCoarseNeedsFace) */
  if (c->faces) {
    PetscCall(FemAdvectGhostExchange(adv, c->tied, 1));
    PetscCall(FemAdvectGhostExchange(adv, c->rows, ROW_SIZE));
  }
  *out = c;
  PetscFunctionReturn(0);
}

PetscBool FemSipgCoarseNeedsFace(FemSipgCoarse c, p4est_locidx_t a, p4est_locidx_t b)
{
  return c->faces && (!c->tied[a] || !c->tied[b]);
}

/* The distinct columns of cell K's rows and the rows as a dense VN x n
 * matrix on them (row-major); returns n. */
static PetscErrorCode cell_basis(const FemSipgCoarse c, p4est_locidx_t K, PetscInt cols[2 * VN], double Pd[VN * 2 * VN], int *nc)
{
  int n = 0;

  PetscFunctionBeginUser;
  for (int i = 0; i < VN * 2 * VN; i++) Pd[i] = 0;
  for (int i = 0; i < VN; i++) {
    PetscInt nr = 0, gc[VN];
    double gw[VN];
    if (c->rows) { /* with faces: the exchanged rows, ghosts' too */
      const double *x = c->rows + (size_t)K * ROW_SIZE;
      for (int j = 0; j < VN && x[i * VN + j] >= 0; j++) {
        gc[nr] = (PetscInt)x[i * VN + j];
        gw[nr++] = x[VN * VN + i * VN + j];
      }
    } else
      for (int x = 0; x < 2 && c->part[x]; x++) {
        const PetscInt lrow = (PetscInt)K * VN + i;
        for (PetscInt e = c->ia[x][lrow]; e < c->ia[x][lrow + 1]; e++) {
          gc[nr] = x ? c->garray[c->ja[x][e]] : c->cstart + c->ja[x][e];
          gw[nr++] = PetscRealPart(c->pa[x][e]);
        }
      }
    for (PetscInt j = 0; j < nr; j++) {
      int m = 0;
      while (m < n && cols[m] != gc[j]) m++;
      if (m == n) cols[n++] = gc[j];
      Pd[i * 2 * VN + m] = gw[j];
    }
  }
  *nc = n;
  PetscFunctionReturn(0);
}

/* Entries of a block's P_a^T blk P_b below this fraction of its largest
 * are round-off and are left out.  On a cell of constant k that is a
 * parallelepiped the Q1 stiffness couples the two ends of an edge by
 * exactly 0 (by round-off, 1e-17 of the diagonal), and in 3D those are 6
 * of the 27 entries of a continuous row; stored, they took the 3D
 * heterogeneous run's coarse operator from 30 to 39 entries per row and
 * BoomerAMG's hierarchy with it (its KSPSolve 1.5 times as long, the same
 * iterations).  Genuine entries are at least about 1 / contrast of the
 * largest (a node where k jumps by the contrast couples through the
 * harmonic mean), and the contrast is at most
 * FEM_PERMEABILITY_MAX_CONTRAST = 1e10. */
static const double drop_tol = 1e-12;

PetscErrorCode FemSipgCoarseAdd(FemSipgCoarse c, p4est_locidx_t a, p4est_locidx_t b, const double *blk)
{
  PetscInt ca[2 * VN], cbb[2 * VN];
  double Pa[VN * 2 * VN], Pbb[VN * 2 * VN], T[VN * 2 * VN], C[2 * VN * 2 * VN], scale = 0;
  const PetscInt *cb = ca;
  const double *Pb = Pa;
  int na, nb;

  PetscFunctionBeginUser;
  PetscCall(cell_basis(c, a, ca, Pa, &na));
  nb = na;
  if (a != b) { /* a cell's own block: its basis on both sides */
    PetscCall(cell_basis(c, b, cbb, Pbb, &nb));
    cb = cbb;
    Pb = Pbb;
  }
  /* T = blk Pb, then C = Pa^T T */
  for (int i = 0; i < VN; i++)
    for (int m = 0; m < nb; m++) {
      double t = 0;
      for (int j = 0; j < VN; j++) t += blk[i * VN + j] * Pb[j * 2 * VN + m];
      T[i * 2 * VN + m] = t;
    }
  for (int l = 0; l < na; l++)
    for (int m = 0; m < nb; m++) {
      double t = 0;
      for (int i = 0; i < VN; i++) t += Pa[i * 2 * VN + l] * T[i * 2 * VN + m];
      C[l * nb + m] = t;
      scale = PetscMax(scale, PetscAbsReal(t));
    }
  for (int l = 0; l < na * nb; l++)
    if (PetscAbsReal(C[l]) <= drop_tol * scale) C[l] = 0;
  if (c->n + (PetscCount)na * nb > c->cap) {
    c->cap = PetscMax(2 * c->cap, c->n + (PetscCount)na * nb + 1024);
    PetscCall(PetscRealloc(sizeof(PetscInt) * (size_t)c->cap, &c->ci));
    PetscCall(PetscRealloc(sizeof(PetscInt) * (size_t)c->cap, &c->cj));
    PetscCall(PetscRealloc(sizeof(PetscScalar) * (size_t)c->cap, &c->cv));
  }
  for (int l = 0; l < na; l++)
    for (int m = 0; m < nb; m++) {
      if (C[l * nb + m] == 0) continue;
      c->ci[c->n] = ca[l];
      c->cj[c->n] = cb[m];
      c->cv[c->n++] = C[l * nb + m];
    }
  PetscFunctionReturn(0);
}

/* Frees c; PCMG holds its own references to P and Ac. */
static PetscErrorCode coarse_destroy(FemSipgCoarse *cp)
{
  FemSipgCoarse c = *cp;

  PetscFunctionBeginUser;
  for (int x = 0; x < 2 && c->part[x]; x++) {
    PetscInt n;
    PetscBool done;
    PetscCall(MatSeqAIJRestoreArrayRead(c->part[x], &c->pa[x]));
    PetscCall(MatRestoreRowIJ(c->part[x], 0, PETSC_FALSE, PETSC_FALSE, &n, &c->ia[x], &c->ja[x], &done));
  }
  PetscCall(MatDestroy(&c->P));
  PetscCall(MatDestroy(&c->Ac));
  PetscCall(PetscFree(c->rows));
  PetscCall(PetscFree(c->tied));
  PetscCall(PetscFree(c->ci));
  PetscCall(PetscFree(c->cj));
  PetscCall(PetscFree(c->cv));
  PetscCall(PetscFree(c));
  *cp = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode FemSipgCoarseFinish(FemSipgCoarse *cp)
{
  FemSipgCoarse c = *cp;
  KSP coarse;
  PetscInt M, N;
  MPI_Comm comm;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectGetComm((PetscObject)c->pc, &comm));
  PetscCall(PCMGSetInterpolation(c->pc, 1, c->P));
  /* every block's entries summed by MatSetValuesCOO, in an order fixed
   * by the triples' (rank by rank, each in the order of the assembly):
   * MatSetValues' stash summed another rank's rows in the order its
   * messages arrived, and the pressure at 8 ranks differed from run to run
   * in the last bits */
  PetscCall(MatSetPreallocationCOO(c->Ac, c->n, c->ci, c->cj));
  PetscCall(MatSetValuesCOO(c->Ac, c->cv, INSERT_VALUES));
  PetscCall(PCMGGetCoarseSolve(c->pc, &coarse));
  PetscCall(KSPSetOperators(coarse, c->Ac, c->Ac));
  PetscCall(MatGetSize(c->P, &M, &N));
  /* every corner its own coarse unknown (each cell a cell of a
   * checkerboard): PCMG tells interpolation from restriction by the sizes
   * and would restrict with P instead of P^T */
  if (M == N) {
    Mat R;
    PetscCall(MatTranspose(c->P, MAT_INITIAL_MATRIX, &R));
    PetscCall(PCMGSetRestriction(c->pc, 1, R));
    PetscCall(MatDestroy(&R));
  }
  PetscCall(coarse_destroy(cp));
  PetscFunctionReturn(0);
}

