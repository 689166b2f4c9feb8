/* The assembled Poisson matrix (fem/impl/poisson.h): its exact
 * preallocation from the element-node connectivity, rows of shared nodes
 * sent to their owners, and the assembly of the matrix and the
 * right-hand side with Dirichlet nodes eliminated symmetrically.  Written
 * for 2D; compiled again with P4_TO_P8 for 3D. */
#include "mesh/p4est_dim.h"
#include <string.h>
#include "fem/femutil.h"
#include "fem/impl/poisson.h"

/* Sorts a[0..n) and drops repeats; returns the new length. */
static PetscInt sort_unique(PetscInt *a, PetscInt n)
{
  PetscInt m = 0;
  PetscSortInt(n, a);
  for (PetscInt k = 0; k < n; k++)
    if (!m || a[k] != a[m - 1]) a[m++] = a[k];
  return m;
}

/* The columns of the row of local node i: all free nodes of the elements
 * around it (a Dirichlet row keeps only its diagonal).  Appends to
 * cols[*len..], growing it. */
static PetscErrorCode node_columns(FemPoisson fp, p4est_locidx_t i, const PetscInt *ioff, const p4est_locidx_t *inc,
                                   PetscInt **cols, size_t *len, size_t *cap)
{
  const int vn = fp->qe.vnodes;
  const size_t need = *len + (size_t)(ioff[i + 1] - ioff[i]) * vn + 1;
  PetscInt n = 0, *c;

  PetscFunctionBeginUser;
  if (need > *cap) {
    *cap = 2 * need;
    PetscCall(PetscRealloc(sizeof(PetscInt) * *cap, cols));
  }
  c = *cols + *len;
  if (fp->dirichlet[i]) c[n++] = fp->gidx[i];
  else
    for (PetscInt k = ioff[i]; k < ioff[i + 1]; k++)
      for (int j = 0; j < vn; j++) {
        const p4est_locidx_t node = fp->lnodes->element_nodes[(size_t)inc[k] * vn + j];
        if (!fp->dirichlet[node]) c[n++] = fp->gidx[node];
      }
  *len += sort_unique(c, n);
  PetscFunctionReturn(0);
}

/* Exact preallocation from the element-node connectivity: every rank
 * derives the rows of its local nodes from its elements, sends the rows of
 * nodes owned elsewhere to their owners (the lnodes sharers), and each
 * owner merges them into the CSR structure of its rows. */
PetscErrorCode FemPoissonPreallocate(FemPoisson fp)
{
  const p4est_lnodes_t *ln = fp->lnodes;
  const int vn = fp->qe.vnodes;
  const p4est_locidx_t nel = ln->num_local_elements, nloc = ln->num_local_nodes, owned = ln->owned_count;
  const int nsh = (int)ln->sharers->elem_count;
  PetscInt *ioff, *roff, *cols = NULL, **sbuf, **rbuf, *scount, *rcount, *ia, *ja;
  p4est_locidx_t *inc, *fill;
  size_t len = 0, cap = 0;
  MPI_Request *req;
  int rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(fp->comm, &rank));
  PetscCall(PetscCalloc1(nloc + 1, &ioff));
  for (size_t k = 0; k < (size_t)nel * vn; k++) ioff[ln->element_nodes[k] + 1]++;
  for (p4est_locidx_t i = 0; i < nloc; i++) ioff[i + 1] += ioff[i];
  PetscCall(PetscMalloc1((size_t)nel * vn + 1, &inc));
  PetscCall(PetscMalloc1(nloc + 1, &fill));
  for (p4est_locidx_t i = 0; i < nloc; i++) fill[i] = (p4est_locidx_t)ioff[i];
  for (p4est_locidx_t e = 0; e < nel; e++)
    for (int j = 0; j < vn; j++) inc[fill[ln->element_nodes[(size_t)e * vn + j]]++] = e;
  PetscCall(PetscMalloc1(nloc + 1, &roff));
  roff[0] = 0;
  for (p4est_locidx_t i = 0; i < nloc; i++) {
    PetscCall(node_columns(fp, i, ioff, inc, &cols, &len, &cap));
    roff[i + 1] = (PetscInt)len;
  }
  PetscCall(PetscFree(inc));
  PetscCall(PetscFree(fill));

  /* Rows of nodes owned by sharer s: [row, ncols, cols...] per node. */
  PetscCall(PetscCalloc4(nsh, &sbuf, nsh, &rbuf, nsh, &scount, nsh, &rcount));
  PetscCall(PetscMalloc1(4 * (size_t)nsh + 1, &req));
  for (int s = 0; s < nsh; s++) {
    const p4est_lnodes_rank_t *sh = sc_array_index(ln->sharers, (size_t)s);
    if (sh->rank == rank) continue;
    for (p4est_locidx_t i = sh->owned_offset; i < sh->owned_offset + sh->owned_count; i++)
      scount[s] += 2 + roff[i + 1] - roff[i];
    PetscCall(PetscMalloc1(scount[s] + 1, &sbuf[s]));
    PetscInt *b = sbuf[s];
    for (p4est_locidx_t i = sh->owned_offset; i < sh->owned_offset + sh->owned_count; i++) {
      *b++ = fp->gidx[i];
      *b++ = roff[i + 1] - roff[i];
      for (PetscInt k = roff[i]; k < roff[i + 1]; k++) *b++ = cols[k];
    }
  }
  int nreq = 0;
  for (int s = 0; s < nsh; s++) {
    const p4est_lnodes_rank_t *sh = sc_array_index(ln->sharers, (size_t)s);
    if (sh->rank == rank) continue;
    PetscCallMPI(MPI_Irecv(&rcount[s], 1, MPIU_INT, sh->rank, 4101, fp->comm, &req[nreq++]));
    PetscCallMPI(MPI_Isend(&scount[s], 1, MPIU_INT, sh->rank, 4101, fp->comm, &req[nreq++]));
  }
  PetscCallMPI(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
  nreq = 0;
  for (int s = 0; s < nsh; s++) {
    const p4est_lnodes_rank_t *sh = sc_array_index(ln->sharers, (size_t)s);
    if (sh->rank == rank) continue;
    PetscCall(PetscMalloc1(rcount[s] + 1, &rbuf[s]));
    PetscCallMPI(MPI_Irecv(rbuf[s], (int)rcount[s], MPIU_INT, sh->rank, 4102, fp->comm, &req[nreq++]));
    PetscCallMPI(MPI_Isend(sbuf[s], (int)scount[s], MPIU_INT, sh->rank, 4102, fp->comm, &req[nreq++]));
  }
  PetscCallMPI(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));

  /* Merge: owned row i gets its own columns plus every received row i. */
  PetscInt *extra, *eoff, total = 0;
  PetscCall(PetscCalloc1(owned + 1, &eoff));
  for (int s = 0; s < nsh; s++)
    for (PetscInt k = 0; k < rcount[s]; k += 2 + rbuf[s][k + 1]) eoff[rbuf[s][k] - ln->global_offset + 1] += rbuf[s][k + 1];
  for (p4est_locidx_t i = 0; i < owned; i++) {
    eoff[i + 1] += eoff[i] + roff[i + 1] - roff[i];
  }
  total = eoff[owned];
  PetscCall(PetscMalloc1(total + 1, &extra));
  PetscCall(PetscMalloc1(owned + 1, &ia));
  for (p4est_locidx_t i = 0; i < owned; i++) {
    ia[i] = eoff[i];
    for (PetscInt k = roff[i]; k < roff[i + 1]; k++) extra[ia[i]++] = cols[k];
  }
  for (int s = 0; s < nsh; s++)
    for (PetscInt k = 0; k < rcount[s]; k += 2 + rbuf[s][k + 1]) {
      const PetscInt i = rbuf[s][k] - ln->global_offset;
      for (PetscInt m = 0; m < rbuf[s][k + 1]; m++) extra[ia[i]++] = rbuf[s][k + 2 + m];
    }
  PetscCall(PetscMalloc1(total + 1, &ja));
  ia[0] = 0;
  for (p4est_locidx_t i = 0; i < owned; i++) {
    const PetscInt n = sort_unique(extra + eoff[i], eoff[i + 1] - eoff[i]);
    PetscCall(PetscArraycpy(ja + ia[i], extra + eoff[i], n));
    ia[i + 1] = ia[i] + n;
  }
  PetscCall(MatSeqAIJSetPreallocationCSR(fp->A, ia, ja, NULL));
  PetscCall(MatMPIAIJSetPreallocationCSR(fp->A, ia, ja, NULL));

  for (int s = 0; s < nsh; s++) {
    PetscCall(PetscFree(sbuf[s]));
    PetscCall(PetscFree(rbuf[s]));
  }
  PetscCall(PetscFree4(sbuf, rbuf, scount, rcount));
  PetscCall(PetscFree(req));
  PetscCall(PetscFree(eoff));
  PetscCall(PetscFree(extra));
  PetscCall(PetscFree(ia));
  PetscCall(PetscFree(ja));
  PetscCall(PetscFree(ioff));
  PetscCall(PetscFree(roff));
  PetscCall(PetscFree(cols));
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonAssemble(FemPoisson fp)
{
  const int vn = fp->qe.vnodes;
  const p4est_lnodes_t *ln = fp->lnodes;
  double K[FEM_MAX_VNODES * FEM_MAX_VNODES], F[FEM_MAX_VNODES], cpu0, wall0;

  PetscFunctionBeginUser;
  if (!fp->A) {
    PetscCall(FemPoissonMFRHS(fp->mf, fp->b));
    PetscFunctionReturn(0);
  }
  PetscCall(MatZeroEntries(fp->A));
  PetscCall(VecZeroEntries(fp->b));
  FemClocks(&cpu0, &wall0);
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    const p4est_locidx_t *en = ln->element_nodes + (size_t)e * vn;
    PetscInt rows[FEM_MAX_VNODES];
    const double *C;
    FemPoissonElementDofs(fp, e, rows);
    FemPoissonElementSystem(fp, e, K, F);
    PetscCall(FemPoissonConstraintMatrix(fp, ln->face_code[e], &C));
    if (C) FemPoissonApplyConstraints(vn, C, K, F);
    /* Symmetric elimination of Dirichlet nodes: their columns move to the
     * right-hand side, their rows keep the diagonal with rhs diag * g. */
    for (int i = 0; i < vn; i++) {
      if (fp->dirichlet[en[i]]) {
        const PetscScalar kii = K[i * vn + i], bi = kii * fp->gval[en[i]];
        PetscCall(MatSetValue(fp->A, fp->gidx[en[i]], fp->gidx[en[i]], kii, ADD_VALUES));
        PetscCall(VecSetValue(fp->b, fp->gidx[en[i]], bi, ADD_VALUES));
        continue;
      }
      for (int j = 0; j < vn; j++)
        if (fp->dirichlet[en[j]]) F[i] -= K[i * vn + j] * fp->gval[en[j]];
    }
    PetscCall(MatSetValues(fp->A, vn, rows, vn, rows, K, ADD_VALUES));
    PetscCall(VecSetValues(fp->b, vn, rows, F, ADD_VALUES));
  }
  /* the exchange of off-rank entries waits on other ranks: not local work */
  FemPoissonAddWork(fp, cpu0, wall0);
  PetscCall(MatAssemblyBegin(fp->A, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyBegin(fp->b));
  PetscCall(MatAssemblyEnd(fp->A, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyEnd(fp->b));
  PetscFunctionReturn(0);
}
