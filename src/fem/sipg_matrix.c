/*
 * The SIPG pressure's matrix (fem/impl/sipg.h): block-sparse (MATBAIJ), a
 * cell's VN unknowns one block, so that Gauss-Seidel sweeps cell by cell
 * with each diagonal block inverted.  Its pattern, a cell and the cells
 * across its faces, is known from the face list and handed over in one
 * call per block row; the blocks are then added straight into its value
 * arrays in the order of the assembly (cell terms, then the faces' in
 * point order), so a run's matrix is the same bit for bit on any rank
 * count and no second copy of the values is held.  Why blocks of VN and
 * not MatSetValues: src/problems/README.md (darcy-transport's pressure).
 * Written for 2D; compiled again with P4_TO_P8 for 3D.
 */
#include "fem/impl/sipg.h"

#define VN P4EST_CHILDREN

/* Whether point p is the first of an interior face's points between its
 * two cells (two faces between the same two cells, a forest that wraps
 * around, count once). */
static int first_of_pair(const FemAdvectFacePoint *pts, size_t p)
{
  const FemAdvectFacePoint *f = &pts[p];
  return f->b.quad && !(p > 0 && pts[p - 1].b.quad && pts[p - 1].a.cell == f->a.cell && pts[p - 1].b.cell == f->b.cell);
}

/* The pattern (first_of_pair) and *A on it, all values 0. */
PetscErrorCode FemSipgMatrixCreate(MPI_Comm comm, size_t nl, const FemAdvectFacePoint *pts, size_t npts, const double *gidx, PetscInt first, Mat *A, FemSipgMatrix *m)
{
  PetscInt *fill, n;
  PetscBool seq, done;

  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(m, sizeof *m));
  m->cstart = first;
  m->cend = first + (PetscInt)nl;
  PetscCall(PetscCalloc2(nl + 1, &m->ncols, nl + 1, &m->offset));
  PetscCall(PetscCalloc1(nl + 1, &fill));
  for (size_t K = 0; K < nl; K++) m->ncols[K] = 1;
  for (size_t p = 0; p < npts; p++) {
    const FemAdvectFacePoint *f = &pts[p];
    if (!first_of_pair(pts, p)) continue;
    if (f->a_local) m->ncols[f->a.cell]++;
    if (f->b_local) m->ncols[f->b.cell]++;
  }
  for (size_t K = 0; K < nl; K++) m->offset[K + 1] = m->offset[K] + m->ncols[K];
  PetscCall(PetscMalloc1(m->offset[nl] + 1, &m->cols));
  for (size_t K = 0; K < nl; K++) m->cols[m->offset[K] + fill[K]++] = first + (PetscInt)K;
  for (size_t p = 0; p < npts; p++) {
    const FemAdvectFacePoint *f = &pts[p];
    if (!first_of_pair(pts, p)) continue;
    if (f->a_local) m->cols[m->offset[f->a.cell] + fill[f->a.cell]++] = (PetscInt)gidx[f->b.cell];
    if (f->b_local) m->cols[m->offset[f->b.cell] + fill[f->b.cell]++] = (PetscInt)gidx[f->a.cell];
  }
  PetscCall(PetscFree(fill));
  /* the block rows' lengths become the deduplicated ones, in place */
  for (size_t K = 0; K < nl; K++) {
    PetscCall(PetscSortRemoveDupsInt(&m->ncols[K], m->cols + m->offset[K]));
    if (K) PetscCall(PetscArraymove(m->cols + m->offset[K - 1] + m->ncols[K - 1], m->cols + m->offset[K], m->ncols[K]));
    if (K) m->offset[K] = m->offset[K - 1] + m->ncols[K - 1];
  }
  m->offset[nl] = nl ? m->offset[nl - 1] + m->ncols[nl - 1] : 0;

  n = (PetscInt)nl * VN;
  PetscCall(MatCreate(comm, &m->A));
  PetscCall(MatSetSizes(m->A, n, n, PETSC_DETERMINE, PETSC_DETERMINE));
  PetscCall(MatSetType(m->A, MATBAIJ));
  /* on one rank the global cell numbers are the local ones */
  PetscCall(MatSeqBAIJSetPreallocationCSR(m->A, VN, m->offset, m->cols, NULL));
  PetscCall(MatMPIBAIJSetPreallocationCSR(m->A, VN, m->offset, m->cols, NULL));
  PetscCall(MatSetOption(m->A, MAT_SYMMETRIC, PETSC_TRUE));

  PetscCall(PetscObjectBaseTypeCompare((PetscObject)m->A, MATSEQBAIJ, &seq));
  if (seq) m->part[0] = m->A;
  else {
    PetscCall(MatMPIBAIJGetSeqBAIJ(m->A, &m->part[0], &m->part[1], &m->garray));
    PetscCall(MatGetSize(m->part[1], NULL, &m->ngarray));
    m->ngarray /= VN;
  }
  for (int x = 0; x < 2 && m->part[x]; x++) {
    /* the block structure (blockcompressed) */
    PetscCall(MatGetRowIJ(m->part[x], 0, PETSC_FALSE, PETSC_TRUE, &n, &m->ia[x], &m->ja[x], &done));
    PetscCheck(done, PETSC_COMM_SELF, PETSC_ERR_PLIB, "SIPG: the matrix's rows are not accessible");
    PetscCall(MatSeqBAIJGetArray(m->part[x], &m->a[x]));
  }
  *A = m->A;
  PetscFunctionReturn(0);
}

/* Adds the VN x VN block blk (row-major) to the block of local cell K's
 * rows and the columns of the cell numbered gcell (BAIJ stores a block
 * column by column). */
PetscErrorCode FemSipgMatrixAdd(FemSipgMatrix *m, size_t K, PetscInt gcell, const double *blk)
{
  const int x = gcell >= m->cstart && gcell < m->cend ? 0 : 1;
  PetscInt lcol = gcell - m->cstart, pos;

  PetscFunctionBeginUser;
  if (x) PetscCall(PetscFindInt(gcell, m->ngarray, m->garray, &lcol));
  PetscCheck(lcol >= 0 && m->part[x], PETSC_COMM_SELF, PETSC_ERR_PLIB, "SIPG: cell %" PetscInt_FMT " is not in the pattern", gcell);
  const PetscInt start = m->ia[x][K];
  PetscCall(PetscFindInt(lcol, m->ia[x][K + 1] - start, m->ja[x] + start, &pos));
  PetscCheck(pos >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "SIPG: cell %" PetscInt_FMT " is not in the pattern of local cell %zu", gcell, K);
  PetscScalar *v = m->a[x] + (start + pos) * VN * VN;
  for (int i = 0; i < VN; i++)
    for (int j = 0; j < VN; j++) v[j * VN + i] += blk[i * VN + j];
  PetscFunctionReturn(0);
}

/* Hands the values back to the matrix and frees the pattern. */
PetscErrorCode FemSipgMatrixFinish(FemSipgMatrix *m)
{
  PetscInt n;
  PetscBool done;

  PetscFunctionBeginUser;
  for (int x = 0; x < 2 && m->part[x]; x++) {
    PetscCall(MatSeqBAIJRestoreArray(m->part[x], &m->a[x]));
    PetscCall(MatRestoreRowIJ(m->part[x], 0, PETSC_FALSE, PETSC_TRUE, &n, &m->ia[x], &m->ja[x], &done));
  }
  /* a new state for the matrix, whose values changed behind its back */
  PetscCall(MatAssemblyBegin(m->A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(m->A, MAT_FINAL_ASSEMBLY));
  PetscCall(PetscFree2(m->ncols, m->offset));
  PetscCall(PetscFree(m->cols));
  PetscFunctionReturn(0);
}

