/* The matrix-free Poisson operator: the action of the matrix FemPoisson
 * assembles, evaluated cell by cell with sum factorisation on the tensor
 * Gauss points of the cell rule ((degree+1)^dim points, the rule the
 * assembly integrates with), hanging nodes through the element constraint
 * matrices and Dirichlet rows eliminated as the assembly does (the row of
 * a Dirichlet node is its diagonal).
 *
 * Geometry is precomputed, not recomputed: per quadrature point the
 * symmetric tensor w k |det J| J^-1 J^-T (3 numbers in 2D, 6 in 3D).  On
 * an affine tree with k constant per tree it is one tensor per cell, so
 * the common case costs almost no memory, and evaluating the multilinear
 * map and its inverse at every point of every apply (what recomputing
 * means) costs several times the sum factorisation itself. */
#include <math.h>
#include <string.h>
#include "fem/femutil.h"
#include "fem/poisson_impl.h"

/* Entries of a symmetric dim x dim tensor. */
#define FEM_NSYM (P4EST_DIM * (P4EST_DIM + 1) / 2)

struct fem_poisson_mf {
  FemPoisson fp;
  int n;                                /* nodes = Gauss points per direction */
  double B[FEM_MAX_N1 * FEM_MAX_N1];    /* B[q*n+i]: 1D basis function i at point q */
  double D[FEM_MAX_N1 * FEM_MAX_N1];    /* D[q*n+p]: derivative at point q of the Lagrange
                                           polynomial through the points that is 1 at p */
  double *geo;                          /* metric tensors, FEM_NSYM per entry */
  size_t *goff;                         /* per cell: its first tensor in geo */
  char *gconst;                         /* per cell: one tensor, to be weighted by w_q */
  Vec xg, yg;                           /* ghosted, in lnodes' local order */
  Vec diag;
  Mat A;
};

/* Index of entry (a, b) of a packed symmetric tensor. */
#ifndef P4_TO_P8
static const int sym_index[2][2] = {{0, 1}, {1, 2}};
#else
static const int sym_index[3][3] = {{0, 1, 2}, {1, 3, 4}, {2, 4, 5}};
#endif
#define sym(a, b) sym_index[a][b]

/* out = M (or M^T) applied along direction d of the n^dim tensor in; add:
 * out += instead. */
static inline void contract(int n, int d, const double *M, int trans, int add, const double *in, double *out)
{
  int s = 1, total = 1;
  for (int k = 0; k < d; k++) s *= n;
  for (int k = 0; k < P4EST_DIM; k++) total *= n;
  for (int po = 0; po < total; po += s * n)
    for (int a = 0; a < n; a++)
      for (int pi = 0; pi < s; pi++) {
        double v = 0.0;
        for (int b = 0; b < n; b++) v += (trans ? M[b * n + a] : M[a * n + b]) * in[po + b * s + pi];
        out[po + a * s + pi] = add ? out[po + a * s + pi] + v : v;
      }
}

/* y = K u on one cell: values at the points (B in every direction), their
 * reference gradients by the collocation derivative D, the metric, and
 * the transposed steps back.  Inlined for each n, so that the compiler
 * unrolls the short loops of the contractions. */
static inline void cell_apply_n(const FemPoissonMF mf, p4est_locidx_t e, const double *u, double *y, const int n)
{
  int npts = 1;
  for (int d = 0; d < P4EST_DIM; d++) npts *= n;
  const double *w = mf->fp->qe.cell.w, *G = mf->geo + mf->goff[e];
  const int cst = mf->gconst[e];
  double t0[FEM_MAX_VNODES], t1[FEM_MAX_VNODES], g[P4EST_DIM][FEM_MAX_VNODES];
  double *uq;

  contract(n, 0, mf->B, 0, 0, u, t0);
  contract(n, 1, mf->B, 0, 0, t0, t1);
  uq = t1;
#ifdef P4_TO_P8
  contract(n, 2, mf->B, 0, 0, t1, t0);
  uq = t0;
#endif
  for (int d = 0; d < P4EST_DIM; d++) contract(n, d, mf->D, 0, 0, uq, g[d]);
  for (int q = 0; q < npts; q++) {
    const double *Gq = cst ? G : G + (size_t)q * FEM_NSYM, wq = cst ? w[q] : 1.0;
    double gr[P4EST_DIM];
    for (int a = 0; a < P4EST_DIM; a++) gr[a] = g[a][q];
    for (int a = 0; a < P4EST_DIM; a++) {
      double f = 0.0;
      for (int b = 0; b < P4EST_DIM; b++) f += Gq[sym(a, b)] * gr[b];
      g[a][q] = wq * f;
    }
  }
  for (int d = 0; d < P4EST_DIM; d++) contract(n, d, mf->D, 1, d > 0, g[d], t0);
#ifndef P4_TO_P8
  contract(n, 0, mf->B, 1, 0, t0, t1);
  contract(n, 1, mf->B, 1, 0, t1, y);
#else
  contract(n, 0, mf->B, 1, 0, t0, t1);
  contract(n, 1, mf->B, 1, 0, t1, t0);
  contract(n, 2, mf->B, 1, 0, t0, y);
#endif
}

static void cell_apply(const FemPoissonMF mf, p4est_locidx_t e, const double *u, double *y)
{
  if (mf->n == 2) cell_apply_n(mf, e, u, y, 2);
  else cell_apply_n(mf, e, u, y, 3);
}

/* y += sum over local cells of C^T K C x_e (x_e zero at Dirichlet nodes
 * if mask), in lnodes' local order. */
static PetscErrorCode apply_cells(FemPoissonMF mf, const double *x, double *y, int mask)
{
  FemPoisson fp = mf->fp;
  const p4est_lnodes_t *ln = fp->lnodes;
  const int vn = fp->qe.vnodes;
  double cpu0, wall0;

  PetscFunctionBeginUser;
  FemClocks(&cpu0, &wall0);
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    const p4est_locidx_t *en = ln->element_nodes + (size_t)e * vn;
    double ue[FEM_MAX_VNODES], ve[FEM_MAX_VNODES], ye[FEM_MAX_VNODES];
    const double *C;
    PetscCall(constraint_matrix(fp, ln->face_code[e], &C));
    for (int i = 0; i < vn; i++) ue[i] = mask && fp->dirichlet[en[i]] ? 0.0 : x[en[i]];
    if (!C) {
      cell_apply(mf, e, ue, ye);
      for (int i = 0; i < vn; i++) y[en[i]] += ye[i];
      continue;
    }
    for (int i = 0; i < vn; i++) {
      ve[i] = 0.0;
      for (int j = 0; j < vn; j++) ve[i] += C[i * vn + j] * ue[j];
    }
    cell_apply(mf, e, ve, ye);
    for (int j = 0; j < vn; j++) {
      double s = 0.0;
      for (int i = 0; i < vn; i++) s += C[i * vn + j] * ye[i];
      y[en[j]] += s;
    }
  }
  add_work(fp, cpu0, wall0);
  PetscFunctionReturn(0);
}

/* yg = the cells' sum of x's local form (ghosts included), added up at the
 * owners. */
static PetscErrorCode apply_local(FemPoissonMF mf, int mask)
{
  Vec lx, ly;
  const PetscScalar *xa;
  PetscScalar *ya;

  PetscFunctionBeginUser;
  PetscCall(VecGhostGetLocalForm(mf->xg, &lx));
  PetscCall(VecGhostGetLocalForm(mf->yg, &ly));
  PetscCall(VecZeroEntries(ly));
  PetscCall(VecGetArrayRead(lx, &xa));
  PetscCall(VecGetArray(ly, &ya));
  PetscCall(apply_cells(mf, xa, ya, mask));
  PetscCall(VecRestoreArray(ly, &ya));
  PetscCall(VecRestoreArrayRead(lx, &xa));
  PetscCall(VecGhostRestoreLocalForm(mf->yg, &ly));
  PetscCall(VecGhostRestoreLocalForm(mf->xg, &lx));
  PetscCall(VecGhostUpdateBegin(mf->yg, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateEnd(mf->yg, ADD_VALUES, SCATTER_REVERSE));
  PetscFunctionReturn(0);
}

static PetscErrorCode mult(Mat A, Vec x, Vec y)
{
  FemPoissonMF mf;
  const PetscScalar *xa, *ga, *da;
  PetscScalar *ya;
  PetscInt n;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &mf));
  PetscCall(VecCopy(x, mf->xg));
  PetscCall(VecGhostUpdateBegin(mf->xg, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(mf->xg, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(apply_local(mf, 1));
  PetscCall(VecGetLocalSize(y, &n));
  PetscCall(VecGetArrayRead(x, &xa));
  PetscCall(VecGetArrayRead(mf->yg, &ga));
  PetscCall(VecGetArrayRead(mf->diag, &da));
  PetscCall(VecGetArray(y, &ya));
  for (PetscInt i = 0; i < n; i++) ya[i] = mf->fp->dirichlet[i] ? da[i] * xa[i] : ga[i];
  PetscCall(VecRestoreArray(y, &ya));
  PetscCall(VecRestoreArrayRead(mf->diag, &da));
  PetscCall(VecRestoreArrayRead(mf->yg, &ga));
  PetscCall(VecRestoreArrayRead(x, &xa));
  PetscFunctionReturn(0);
}

static PetscErrorCode get_diagonal(Mat A, Vec d)
{
  FemPoissonMF mf;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(A, &mf));
  PetscCall(VecCopy(mf->diag, d));
  PetscFunctionReturn(0);
}

/* The diagonal of C^T K C per cell, from the cell operator applied to the
 * columns of C (unit vectors without hanging nodes), summed at the owners. */
static PetscErrorCode compute_diagonal(FemPoissonMF mf)
{
  FemPoisson fp = mf->fp;
  const p4est_lnodes_t *ln = fp->lnodes;
  const int vn = fp->qe.vnodes;
  Vec ld;
  PetscScalar *da;
  double cpu0, wall0;

  PetscFunctionBeginUser;
  PetscCall(VecGhostGetLocalForm(mf->yg, &ld));
  PetscCall(VecZeroEntries(ld));
  PetscCall(VecGetArray(ld, &da));
  FemClocks(&cpu0, &wall0);
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    const double *C;
    PetscCall(constraint_matrix(fp, ln->face_code[e], &C));
    for (int j = 0; j < vn; j++) {
      double ve[FEM_MAX_VNODES], ye[FEM_MAX_VNODES], s = 0.0;
      for (int i = 0; i < vn; i++) ve[i] = C ? C[i * vn + j] : (double)(i == j);
      cell_apply(mf, e, ve, ye);
      for (int i = 0; i < vn; i++) s += ve[i] * ye[i];
      da[ln->element_nodes[(size_t)e * vn + j]] += s;
    }
  }
  add_work(fp, cpu0, wall0);
  PetscCall(VecRestoreArray(ld, &da));
  PetscCall(VecGhostRestoreLocalForm(mf->yg, &ld));
  PetscCall(VecGhostUpdateBegin(mf->yg, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateEnd(mf->yg, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecCopy(mf->yg, mf->diag));
  PetscFunctionReturn(0);
}

/* Metric tensor(s) w k |det J| J^-1 J^-T of every local cell. */
static PetscErrorCode compute_geometry(FemPoissonMF mf)
{
  FemPoisson fp = mf->fp;
  const FemRule *r = &fp->qe.cell;
  const p4est_locidx_t nel = fp->lnodes->num_local_elements;
  size_t total = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(nel + 1, &mf->goff, nel + 1, &mf->gconst));
  for (p4est_locidx_t e = 0; e < nel; e++) {
    mf->gconst[e] = (char)(fp->prob->k_per_tree && fp->taffine[fp->etree[e]]);
    mf->goff[e] = total;
    total += FEM_NSYM * (size_t)(mf->gconst[e] ? 1 : r->npts);
  }
  PetscCall(PetscMalloc1(total + 1, &mf->geo));
  for (p4est_locidx_t e = 0; e < nel; e++) {
    const p4est_topidx_t t = fp->etree[e];
    const int np = mf->gconst[e] ? 1 : r->npts;
    for (int q = 0; q < np; q++) {
      const double origin[3] = {0, 0, 0};
      double x[3], Ji[3][3], *G = mf->geo + mf->goff[e] + (size_t)q * FEM_NSYM;
      const double adet = element_geometry(fp, t, fp->equad[e], mf->gconst[e] ? origin : r->eta + 3 * q, x, Ji);
      const double s = (mf->gconst[e] ? 1.0 : r->w[q]) * adet * fp->prob->k(P4EST_DIM, x, (long)t);
      for (int a = 0; a < P4EST_DIM; a++)
        for (int b = a; b < P4EST_DIM; b++) {
          double m = 0.0;
          for (int c = 0; c < P4EST_DIM; c++) m += Ji[a][c] * Ji[b][c];
          G[sym(a, b)] = s * m;
        }
    }
  }
  PetscFunctionReturn(0);
}

/* The 1D tables: the basis at the Gauss points and the derivative of the
 * Lagrange polynomials through the Gauss points there (the collocation
 * derivative, so D B is the basis derivative at the points). */
static void tables(FemPoissonMF mf)
{
  const FemQElem *qe = &mf->fp->qe;
  const double *x = qe->cell.x1;
  const int n = mf->n;
  for (int q = 0; q < n; q++)
    for (int i = 0; i < n; i++) {
      double der;
      FemLagrange1d(qe->degree, i, x[q], &mf->B[q * n + i], &der);
    }
  for (int q = 0; q < n; q++)
    for (int p = 0; p < n; p++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) {
        if (k == p) continue;
        double prod = 1.0 / (x[p] - x[k]);
        for (int m = 0; m < n; m++)
          if (m != p && m != k) prod *= (x[q] - x[m]) / (x[p] - x[m]);
        s += prod;
      }
      mf->D[q * n + p] = s;
    }
}

PetscErrorCode FemPoissonMFCreate(FemPoisson fp, FemPoissonMF *out)
{
  FemPoissonMF mf;
  PetscInt n, N;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(1, &mf));
  mf->fp = fp;
  mf->n = fp->qe.n1;
  PetscCheck(fp->qe.cell.n1 == mf->n, fp->comm, PETSC_ERR_PLIB, "sum factorisation needs as many points as nodes per direction");
  tables(mf);
  PetscCall(compute_geometry(mf));
  PetscCall(VecDuplicate(fp->u, &mf->xg));
  PetscCall(VecDuplicate(fp->u, &mf->yg));
  PetscCall(VecDuplicate(fp->b, &mf->diag));
  PetscCall(compute_diagonal(mf));
  PetscCall(VecGetLocalSize(fp->b, &n));
  PetscCall(VecGetSize(fp->b, &N));
  PetscCall(MatCreateShell(fp->comm, n, n, N, N, mf, &mf->A));
  PetscCall(MatShellSetOperation(mf->A, MATOP_MULT, (void (*)(void))mult));
  PetscCall(MatShellSetOperation(mf->A, MATOP_MULT_TRANSPOSE, (void (*)(void))mult));
  PetscCall(MatShellSetOperation(mf->A, MATOP_GET_DIAGONAL, (void (*)(void))get_diagonal));
  PetscCall(MatSetOption(mf->A, MAT_SYMMETRIC, PETSC_TRUE));
  *out = mf;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonMFDestroy(FemPoissonMF *mfp)
{
  FemPoissonMF mf = *mfp;

  PetscFunctionBeginUser;
  if (!mf) PetscFunctionReturn(0);
  PetscCall(MatDestroy(&mf->A));
  PetscCall(VecDestroy(&mf->xg));
  PetscCall(VecDestroy(&mf->yg));
  PetscCall(VecDestroy(&mf->diag));
  PetscCall(PetscFree2(mf->goff, mf->gconst));
  PetscCall(PetscFree(mf->geo));
  PetscCall(PetscFree(mf));
  *mfp = NULL;
  PetscFunctionReturn(0);
}

Mat FemPoissonMFMat(FemPoissonMF mf) { return mf->A; }

PetscErrorCode FemPoissonMFRHS(FemPoissonMF mf, Vec b)
{
  FemPoisson fp = mf->fp;
  const p4est_lnodes_t *ln = fp->lnodes;
  const int vn = fp->qe.vnodes;
  Vec lx;
  PetscScalar *xa, *ba;
  const PetscScalar *ya, *da;
  PetscInt n;
  double cpu0, wall0;

  PetscFunctionBeginUser;
  PetscCall(VecSetOption(b, VEC_IGNORE_NEGATIVE_INDICES, PETSC_TRUE)); /* Dirichlet rows of edof */
  PetscCall(VecZeroEntries(b));
  FemClocks(&cpu0, &wall0);
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    double F[FEM_MAX_VNODES];
    const double *C;
    element_system(fp, e, NULL, F);
    PetscCall(constraint_matrix(fp, ln->face_code[e], &C));
    if (C) apply_constraints(vn, C, NULL, F);
    PetscCall(VecSetValues(b, vn, fp->edof + (size_t)e * vn, F, ADD_VALUES));
  }
  add_work(fp, cpu0, wall0);
  PetscCall(VecAssemblyBegin(b));
  PetscCall(VecAssemblyEnd(b));
  /* Dirichlet lifting: the free rows lose K g, the Dirichlet rows are
   * diag * g, as in the assembled elimination. */
  PetscCall(VecGhostGetLocalForm(mf->xg, &lx));
  PetscCall(VecGetArray(lx, &xa));
  for (p4est_locidx_t i = 0; i < ln->num_local_nodes; i++) xa[i] = fp->dirichlet[i] ? fp->gval[i] : 0.0;
  PetscCall(VecRestoreArray(lx, &xa));
  PetscCall(VecGhostRestoreLocalForm(mf->xg, &lx));
  PetscCall(apply_local(mf, 0));
  PetscCall(VecGetLocalSize(b, &n));
  PetscCall(VecGetArray(b, &ba));
  PetscCall(VecGetArrayRead(mf->yg, &ya));
  PetscCall(VecGetArrayRead(mf->diag, &da));
  for (PetscInt i = 0; i < n; i++) ba[i] = fp->dirichlet[i] ? da[i] * fp->gval[i] : ba[i] - ya[i];
  PetscCall(VecRestoreArrayRead(mf->diag, &da));
  PetscCall(VecRestoreArrayRead(mf->yg, &ya));
  PetscCall(VecRestoreArray(b, &ba));
  PetscFunctionReturn(0);
}
