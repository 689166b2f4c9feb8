/*
 * The 3D SIPG pressure's smoother: symmetric Gauss-Seidel over the cells
 * of the DG matrix (MATBAIJ, a cell's 8 unknowns one block), each cell's
 * diagonal block inverted, with the blocks held in single precision:
 * the sweeps are memory-bound, and a smoother's round-off does not reach
 * the solution, which CG's residual and matrix (double) decide.  Each
 * rank sweeps its own cells (as PCSOR's local sweeps), the ghost cells'
 * values fixed during a sweep and taken anew before each one.  Only 3D;
 * the measurements that chose it: src/problems/README.md, "Why the
 * pressure's matrix and smoothers are built as they are".
 */
#include "fem/impl/sipg.h"

#ifdef P4_TO_P8
#define VN P4EST_CHILDREN
#define BS (VN * VN)

/* The matrix in single precision, attached to it (PetscObjectCompose) for
 * the smoother and the V-cycle's residual (FemSipgResidual).  The
 * pressure makes its matrix anew for every forest and never changes its
 * values, so a copy lives as long as its matrix. */
typedef struct {
  PetscInt nb; /* local cells */
  /* the local part's off-diagonal blocks by block row (ia, ja: local
   * cells), each column by column as BAIJ stores it */
  PetscInt *ia, *ja;
  float *a;
  float *d, *dinv; /* per local cell, its diagonal block and the block's inverse */
  /* the off-process part: its blocks by block row, their columns the
   * ghost cells of lvec, gathered by scatter */
  PetscInt *ib, *jb;
  float *b;
  Vec lvec;
  VecScatter scatter;
  double *rhs; /* b less the ghost cells' terms, VN per local cell */
} Blocks;

static const char blocks_name[] = "FemSipgBlocks";

static PetscErrorCode blocks_free(void *ctx)
{
  Blocks *bl = ctx;

  PetscFunctionBeginUser;
  PetscCall(PetscFree3(bl->ia, bl->ja, bl->a));
  PetscCall(PetscFree2(bl->d, bl->dinv));
  PetscCall(PetscFree3(bl->ib, bl->jb, bl->b));
  PetscCall(PetscFree(bl->rhs));
  PetscCall(VecDestroy(&bl->lvec));
  PetscCall(VecScatterDestroy(&bl->scatter));
  PetscCall(PetscFree(bl));
  PetscFunctionReturn(0);
}

/* inv = d^-1 of a symmetric positive definite block by Gauss-Jordan
 * elimination (no pivoting needed), made exactly symmetric, so that the
 * symmetric sweeps stay a symmetric preconditioner for CG. */
static PetscErrorCode invert_block(const PetscScalar *d, PetscInt K, float *inv)
{
  double m[VN][2 * VN];

  PetscFunctionBeginUser;
  for (int i = 0; i < VN; i++)
    for (int j = 0; j < VN; j++) {
      m[i][j] = d[j * VN + i];
      m[i][VN + j] = i == j;
    }
  for (int p = 0; p < VN; p++) {
    const double piv = m[p][p];
    PetscCheck(piv > 0, PETSC_COMM_SELF, PETSC_ERR_MAT_LU_ZRPVT, "the pressure's smoother: the diagonal block of cell %" PetscInt_FMT " is not positive definite", K);
    for (int j = 0; j < 2 * VN; j++) m[p][j] /= piv;
    for (int i = 0; i < VN; i++) {
      if (i == p) continue;
      const double f = m[i][p];
      for (int j = 0; j < 2 * VN; j++) m[i][j] -= f * m[p][j];
    }
  }
  for (int i = 0; i < VN; i++)
    for (int j = 0; j < VN; j++) inv[j * VN + i] = (float)(0.5 * (m[i][VN + j] + m[j][VN + i]));
  PetscFunctionReturn(0);
}

/* Copies part (a SeqBAIJ of block size VN) to single precision: its block
 * structure into *ia, *ja and its blocks into *a, less the diagonal
 * blocks, which go into d and inverted into dinv (both NULL for the
 * off-process part). */
static PetscErrorCode copy_part(Mat part, float *d, float *dinv, PetscInt **ia, PetscInt **ja, float **a)
{
  const PetscInt *pi, *pj;
  PetscScalar *v;
  PetscInt n;
  PetscBool done;

  PetscFunctionBeginUser;
  PetscCall(MatGetRowIJ(part, 0, PETSC_FALSE, PETSC_TRUE, &n, &pi, &pj, &done));
  PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the pressure's smoother: the matrix's rows are not accessible");
  PetscCall(MatSeqBAIJGetArray(part, &v));
  const PetscInt nnz = pi[n] - (d ? n : 0);
  PetscCall(PetscMalloc3(n + 1, ia, nnz + 1, ja, (size_t)nnz * BS + 1, a));
  PetscInt e = 0;
  (*ia)[0] = 0;
  for (PetscInt K = 0; K < n; K++) {
    for (PetscInt q = pi[K]; q < pi[K + 1]; q++) {
      if (d && pj[q] == K) {
        for (int k = 0; k < BS; k++) d[(size_t)K * BS + k] = (float)v[(size_t)q * BS + k];
        PetscCall(invert_block(v + (size_t)q * BS, K, dinv + (size_t)K * BS));
        continue;
      }
      (*ja)[e] = pj[q];
      for (int k = 0; k < BS; k++) (*a)[(size_t)e * BS + k] = (float)v[(size_t)q * BS + k];
      e++;
    }
    (*ia)[K + 1] = e;
  }
  PetscCheck(e == nnz, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the pressure's smoother: a cell without its diagonal block");
  PetscCall(MatSeqBAIJRestoreArray(part, &v));
  PetscCall(MatRestoreRowIJ(part, 0, PETSC_FALSE, PETSC_TRUE, &n, &pi, &pj, &done));
  PetscFunctionReturn(0);
}

/* P's blocks (Blocks), made on the first call for each matrix. */
static PetscErrorCode blocks_get(Mat P, Blocks **out)
{
  Blocks *bl;
  Mat local, off = NULL;
  const PetscInt *garray;
  PetscContainer c;
  PetscBool seq;
  PetscInt n, ncols;

  PetscFunctionBeginUser;
  PetscCall(PetscObjectQuery((PetscObject)P, blocks_name, (PetscObject *)&c));
  if (c) {
    PetscCall(PetscContainerGetPointer(c, (void **)out));
    PetscFunctionReturn(0);
  }
  PetscCall(PetscCalloc1(1, &bl));
  PetscCall(PetscObjectBaseTypeCompare((PetscObject)P, MATSEQBAIJ, &seq));
  if (seq) local = P;
  else PetscCall(MatMPIBAIJGetSeqBAIJ(P, &local, &off, &garray));
  PetscCall(MatGetLocalSize(P, &n, NULL));
  bl->nb = n / VN;
  PetscCall(PetscMalloc2((size_t)n * VN + 1, &bl->d, (size_t)n * VN + 1, &bl->dinv));
  PetscCall(PetscMalloc1(n + 1, &bl->rhs));
  PetscCall(copy_part(local, bl->d, bl->dinv, &bl->ia, &bl->ja, &bl->a));
  if (off) {
    IS is;
    Vec x;

    PetscCall(copy_part(off, NULL, NULL, &bl->ib, &bl->jb, &bl->b));
    PetscCall(MatGetSize(off, NULL, &ncols));
    PetscCall(VecCreateSeq(PETSC_COMM_SELF, ncols, &bl->lvec));
    PetscCall(ISCreateBlock(PETSC_COMM_SELF, VN, ncols / VN, garray, PETSC_COPY_VALUES, &is));
    PetscCall(MatCreateVecs(P, &x, NULL));
    PetscCall(VecScatterCreate(x, is, bl->lvec, NULL, &bl->scatter));
    PetscCall(VecDestroy(&x));
    PetscCall(ISDestroy(&is));
  }
  PetscCall(PetscContainerCreate(PETSC_COMM_SELF, &c));
  PetscCall(PetscContainerSetPointer(c, bl));
  PetscCall(PetscContainerSetUserDestroy(c, blocks_free));
  PetscCall(PetscObjectCompose((PetscObject)P, blocks_name, (PetscObject)c));
  PetscCall(PetscContainerDestroy(&c));
  *out = bl;
  PetscFunctionReturn(0);
}

/* The blocks are made at the preconditioner's set-up, so that their
 * time is the set-up's. */
static PetscErrorCode smoother_setup(PC pc)
{
  Mat P;
  Blocks *bl;

  PetscFunctionBeginUser;
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(blocks_get(P, &bl));
  PetscFunctionReturn(0);
}

/* t -= blk x, blk stored column by column. */
static inline void subtract_block(double t[VN], const float *blk, const double *x)
{
  for (int j = 0; j < VN; j++)
    for (int i = 0; i < VN; i++) t[i] -= (double)blk[j * VN + i] * x[j];
}

/* One cell's update: x_K = D_K^-1 (rhs_K - sum over its off-diagonal
 * blocks of A_KL x_L). */
static inline void update_cell(const Blocks *bl, PetscInt K, const double *rhs, double *x)
{
  double t[VN], y[VN] = {0};
  for (int i = 0; i < VN; i++) t[i] = rhs[K * VN + i];
  for (PetscInt e = bl->ia[K]; e < bl->ia[K + 1]; e++) subtract_block(t, bl->a + (size_t)e * BS, x + bl->ja[e] * VN);
  const float *d = bl->dinv + (size_t)K * BS;
  for (int j = 0; j < VN; j++)
    for (int i = 0; i < VN; i++) y[i] += (double)d[j * VN + i] * t[j];
  for (int i = 0; i < VN; i++) x[K * VN + i] = y[i];
}

/* rhs = b - (the ghost cells' blocks) x's ghost values. */
static PetscErrorCode ghost_terms(Blocks *bl, Vec xv, const double *b)
{
  const double *g;

  PetscFunctionBeginUser;
  PetscCall(VecScatterBegin(bl->scatter, xv, bl->lvec, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(bl->scatter, xv, bl->lvec, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGetArrayRead(bl->lvec, &g));
  for (PetscInt K = 0; K < bl->nb; K++) {
    double t[VN];
    for (int i = 0; i < VN; i++) t[i] = b[K * VN + i];
    for (PetscInt e = bl->ib[K]; e < bl->ib[K + 1]; e++) subtract_block(t, bl->b + (size_t)e * BS, g + bl->jb[e] * VN);
    for (int i = 0; i < VN; i++) bl->rhs[K * VN + i] = t[i];
  }
  PetscCall(VecRestoreArrayRead(bl->lvec, &g));
  PetscFunctionReturn(0);
}

/* n symmetric sweeps on x from its value (0 if guesszero), as PCSOR's
 * Richardson iterations: the ghosts' terms of every sweep but a first one
 * from 0, then the local cells forward and back. */
static PetscErrorCode smoother_richardson(PC pc, Vec bv, Vec xv, Vec w, PetscReal rtol, PetscReal abstol, PetscReal dtol, PetscInt n, PetscBool guesszero,
                                          PetscInt *outits, PCRichardsonConvergedReason *reason)
{
  Blocks *bl;
  Mat P;
  const double *b;
  double *x;

  PetscFunctionBeginUser;
  (void)w, (void)rtol, (void)abstol, (void)dtol;
  PetscCall(PCGetOperators(pc, NULL, &P));
  PetscCall(blocks_get(P, &bl));
  if (guesszero) PetscCall(VecSet(xv, 0));
  PetscCall(VecGetArrayRead(bv, &b));
  for (PetscInt it = 0; it < n; it++) {
    const double *rhs = b;
    if (bl->scatter && !(it == 0 && guesszero)) {
      PetscCall(ghost_terms(bl, xv, b));
      rhs = bl->rhs;
    }
    PetscCall(VecGetArray(xv, &x));
    for (PetscInt K = 0; K < bl->nb; K++) update_cell(bl, K, rhs, x);
    for (PetscInt K = bl->nb - 1; K >= 0; K--) update_cell(bl, K, rhs, x);
    PetscCall(VecRestoreArray(xv, &x));
  }
  PetscCall(VecRestoreArrayRead(bv, &b));
  PetscCall(PetscLogFlops(4.0 * n * (bl->ia[bl->nb] + bl->nb) * BS + (bl->ib ? 2.0 * n * bl->ib[bl->nb] * BS : 0)));
  *outits = n;
  *reason = PCRICHARDSON_CONVERGED_ITS;
  PetscFunctionReturn(0);
}

/* One sweep from 0: the smoother as a preconditioner (a smoother's KSP
 * other than Richardson, or Richardson with a monitor). */
static PetscErrorCode smoother_apply(PC pc, Vec b, Vec x)
{
  PetscInt its;
  PCRichardsonConvergedReason reason;

  PetscFunctionBeginUser;
  PetscCall(smoother_richardson(pc, b, x, NULL, 0, 0, 0, 1, PETSC_TRUE, &its, &reason));
  PetscFunctionReturn(0);
}

static PetscErrorCode smoother_view(PC pc, PetscViewer viewer)
{
  PetscFunctionBeginUser;
  (void)pc;
  PetscCall(PetscViewerASCIIPrintf(viewer, "symmetric cell-block Gauss-Seidel, blocks of %d in single precision, each rank's own cells\n", VN));
  PetscFunctionReturn(0);
}

PetscErrorCode FemSipgResidual(Mat A, Vec bv, Vec xv, Vec rv)
{
  Blocks *bl;
  const double *b, *x;
  double *r;

  PetscFunctionBeginUser;
  PetscCall(blocks_get(A, &bl));
  PetscCall(VecGetArrayRead(bv, &b));
  const double *rhs = b;
  if (bl->scatter) {
    PetscCall(ghost_terms(bl, xv, b));
    rhs = bl->rhs;
  }
  PetscCall(VecGetArrayRead(xv, &x));
  PetscCall(VecGetArray(rv, &r));
  for (PetscInt K = 0; K < bl->nb; K++) {
    double t[VN];
    for (int i = 0; i < VN; i++) t[i] = rhs[K * VN + i];
    for (PetscInt e = bl->ia[K]; e < bl->ia[K + 1]; e++) subtract_block(t, bl->a + (size_t)e * BS, x + bl->ja[e] * VN);
    subtract_block(t, bl->d + (size_t)K * BS, x + K * VN);
    for (int i = 0; i < VN; i++) r[K * VN + i] = t[i];
  }
  PetscCall(VecRestoreArray(rv, &r));
  PetscCall(VecRestoreArrayRead(xv, &x));
  PetscCall(VecRestoreArrayRead(bv, &b));
  PetscCall(PetscLogFlops(2.0 * (bl->ia[bl->nb] + bl->nb + (bl->ib ? bl->ib[bl->nb] : 0)) * BS));
  PetscFunctionReturn(0);
}

PetscErrorCode FemSipgSmootherCreate(PC pc)
{
  PetscFunctionBeginUser;
  PetscCall(PCSetType(pc, PCSHELL));
  PetscCall(PCShellSetName(pc, "sipg-block-gs"));
  PetscCall(PCShellSetSetUp(pc, smoother_setup));
  PetscCall(PCShellSetApplyRichardson(pc, smoother_richardson));
  PetscCall(PCShellSetApply(pc, smoother_apply));
  PetscCall(PCShellSetView(pc, smoother_view));
  PetscFunctionReturn(0);
}
#endif
