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
#include "fem/impl/poisson.h"

/* Entries of a symmetric dim x dim tensor. */
#define FEM_NSYM (P4EST_DIM * (P4EST_DIM + 1) / 2)

/* Cells evaluated at once by the sum-factorisation kernel: every value of
 * the kernel holds FEM_MF_LANES numbers, the lanes innermost, so the
 * compiler turns the lane loops into vector instructions (the
 * contractions' own loops are 2 or 3 long, too short to vectorise). */
#define FEM_MF_LANES 4
typedef double Lanes[FEM_MF_LANES];

/* The build targets the generic x86-64 ISA (2 doubles per vector, no
 * FMA); where GCC can, the kernels get a second version for x86-64-v3
 * (AVX2 + FMA: a lane batch is one vector), chosen at load time. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
#define FEM_MF_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define FEM_MF_CLONES
#endif
/* The kernels below are inlined into each clone, with n constant. */
#if defined(__GNUC__)
#define FEM_MF_INLINE inline __attribute__((always_inline))
#else
#define FEM_MF_INLINE inline
#endif

/* A constraint matrix C of a face code by its rows that are not unit rows
 * (the hanging nodes' interpolation), the entries in row order. */
typedef struct {
  int nent, nrow;
  unsigned char rows[FEM_MAX_VNODES];  /* the rows of C that are not unit rows */
  unsigned char hang[FEM_MAX_VNODES];  /* column i of C is not e_i */
  unsigned char *row, *col;
  double *val;
} Hanging;

struct _p_FemPoissonMF {
  FemPoisson fp;
  int n;                                /* nodes = Gauss points per direction */
  double B[FEM_MAX_N1 * FEM_MAX_N1];    /* B[q*n+i]: 1D basis function i at point q */
  double D[FEM_MAX_N1 * FEM_MAX_N1];    /* D[q*n+p]: derivative at point q of the Lagrange
                                           polynomial through the points that is 1 at p */
  double H[3][FEM_MAX_N1 * FEM_MAX_N1]; /* B B, B B', B' B' pointwise ([q*n+i]): the 1D
                                           factors of the diagonal */
  Lanes *geo;                           /* metric tensors by batch of FEM_MF_LANES cells,
                                           FEM_NSYM per entry, lanes innermost */
  size_t *goff;                         /* per batch: its first tensor in geo */
  char *gconst;                         /* per batch: one tensor, to be weighted by w_q */
  Hanging *hc[FEM_NCODES];              /* sparse constraints by face code */
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

/* out = M (or M^T) applied along direction d of the n^dim tensor in, lane
 * by lane; add: out += instead.  Inlined with constant n and d, so all
 * bounds are constants. */
static FEM_MF_INLINE void contract(const int n, const int d, const double *restrict M, const int trans, const int add,
                            const Lanes *restrict in, Lanes *restrict out)
{
  const int s = d == 0 ? 1 : d == 1 ? n : n * n, total = P4EST_DIM == 2 ? n * n : n * n * n;
  for (int po = 0; po < total; po += s * n)
    for (int a = 0; a < n; a++)
      for (int pi = 0; pi < s; pi++) {
        Lanes v = {0};
        for (int b = 0; b < n; b++) {
          const double m = trans ? M[b * n + a] : M[a * n + b];
          for (int l = 0; l < FEM_MF_LANES; l++) v[l] += m * in[po + b * s + pi][l];
        }
        for (int l = 0; l < FEM_MF_LANES; l++) out[po + a * s + pi][l] = add ? out[po + a * s + pi][l] + v[l] : v[l];
      }
}

/* The metric at the points of a batch, weighted by w_q:
 * f[a] = w_q G(q) g[.][q], lane by lane (whole vectors). */
static FEM_MF_INLINE void apply_metric(const int npts, const double *w, const Lanes *G, const int cst,
                                       Lanes g[P4EST_DIM][FEM_MAX_VNODES])
{
  for (int q = 0; q < npts; q++) {
    const Lanes *Gq = cst ? G : G + (size_t)q * FEM_NSYM;
    const double wq = cst ? w[q] : 1.0;
    Lanes f[P4EST_DIM];
    for (int a = 0; a < P4EST_DIM; a++)
      for (int l = 0; l < FEM_MF_LANES; l++) {
        double t = 0.0;
        for (int b = 0; b < P4EST_DIM; b++) t += Gq[sym(a, b)][l] * g[b][q][l];
        f[a][l] = wq * t;
      }
    for (int a = 0; a < P4EST_DIM; a++)
      for (int l = 0; l < FEM_MF_LANES; l++) g[a][q][l] = f[a][l];
  }
}

/* y = K u on a batch of FEM_MF_LANES cells (G, cst: the batch's metric):
 * values at the points (B in every direction), their reference gradients
 * by the collocation derivative D, the metric, and the transposed steps
 * back. */
static FEM_MF_INLINE void kernel(const FemPoissonMF mf, const int n, const Lanes *G, const int cst, const Lanes *u,
                                 Lanes *y)
{
  const int npts = P4EST_DIM == 2 ? n * n : n * n * n;
  const double *w = mf->fp->qe.cell.w;
  Lanes t0[FEM_MAX_VNODES], t1[FEM_MAX_VNODES], g[P4EST_DIM][FEM_MAX_VNODES];

  contract(n, 0, mf->B, 0, 0, u, t0);
#ifndef P4_TO_P8
  contract(n, 1, mf->B, 0, 0, t0, t1);
  for (int d = 0; d < P4EST_DIM; d++) contract(n, d, mf->D, 0, 0, t1, g[d]);
#else
  contract(n, 1, mf->B, 0, 0, t0, t1);
  contract(n, 2, mf->B, 0, 0, t1, t0);
  for (int d = 0; d < P4EST_DIM; d++) contract(n, d, mf->D, 0, 0, t0, g[d]);
#endif
  /* two copies, so that neither tests cst per point */
  if (cst) apply_metric(npts, w, G, 1, g);
  else apply_metric(npts, w, G, 0, g);
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

FEM_MF_CLONES static void kernel2(const FemPoissonMF mf, const Lanes *G, int cst, const Lanes *u, Lanes *y)
{
  kernel(mf, 2, G, cst, u, y);
}

FEM_MF_CLONES static void kernel3(const FemPoissonMF mf, const Lanes *G, int cst, const Lanes *u, Lanes *y)
{
  kernel(mf, 3, G, cst, u, y);
}

static void cell_kernel(const FemPoissonMF mf, const Lanes *G, int cst, const Lanes *u, Lanes *y)
{
  if (mf->n == 2) kernel2(mf, G, cst, u, y);
  else kernel3(mf, G, cst, u, y);
}

/* v = C u into lane l (C of h; h NULL: the identity). */
static inline void constrain(const Hanging *h, int vn, const double *u, Lanes *v, int l)
{
  for (int i = 0; i < vn; i++) v[i][l] = u[i];
  if (!h) return;
  for (int k = 0; k < h->nrow; k++) v[h->rows[k]][l] = 0.0;
  for (int k = 0; k < h->nent; k++) v[h->row[k]][l] += h->val[k] * u[h->col[k]];
}

/* u = C^T v of lane l. */
static inline void constrain_t(const Hanging *h, int vn, const Lanes *v, int l, double *u)
{
  for (int i = 0; i < vn; i++) u[i] = v[i][l];
  if (!h) return;
  for (int k = 0; k < h->nrow; k++) u[h->rows[k]] = 0.0;
  for (int k = 0; k < h->nent; k++) u[h->col[k]] += h->val[k] * v[h->row[k]][l];
}

/* The sparse form of every face code's constraint matrix that a local
 * cell has. */
static PetscErrorCode hanging_tables(FemPoissonMF mf)
{
  FemPoisson fp = mf->fp;
  const p4est_lnodes_t *ln = fp->lnodes;
  const int vn = fp->qe.vnodes;

  PetscFunctionBeginUser;
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    const p4est_lnodes_code_t fc = ln->face_code[e];
    const double *C;
    Hanging *h;
    if (!fc || mf->hc[fc]) continue;
    PetscCall(FemPoissonConstraintMatrix(fp, fc, &C));
    PetscCall(PetscCalloc1(1, &h));
    for (int i = 0; i < vn; i++) {
      if (FemPoissonNodeFree(C, vn, i)) continue;
      h->rows[h->nrow++] = (unsigned char)i;
      for (int j = 0; j < vn; j++) h->nent += C[i * vn + j] != 0.0;
    }
    PetscCall(PetscMalloc3(h->nent + 1, &h->row, h->nent + 1, &h->col, h->nent + 1, &h->val));
    h->nent = 0;
    for (int k = 0; k < h->nrow; k++) {
      const int i = h->rows[k];
      h->hang[i] = 1;
      for (int j = 0; j < vn; j++)
        if (C[i * vn + j] != 0.0) {
          h->row[h->nent] = (unsigned char)i;
          h->col[h->nent] = (unsigned char)j;
          h->val[h->nent++] = C[i * vn + j];
          h->hang[j] = 1;
        }
    }
    mf->hc[fc] = h;
  }
  PetscFunctionReturn(0);
}

/* y += sum over local cells of C^T K C x_e, in lnodes' local order, the
 * cells FEM_MF_LANES at a time (the last batch repeats its first cell in
 * the lanes it lacks, and drops their results).  Inlined with constant n,
 * so the gather and scatter loops have constant bounds too. */
static FEM_MF_INLINE void apply_cells_n(const FemPoissonMF mf, const int n, const double *x, double *y)
{
  FemPoisson fp = mf->fp;
  const p4est_lnodes_t *ln = fp->lnodes;
  const p4est_locidx_t nel = ln->num_local_elements;
  const int vn = P4EST_DIM == 2 ? n * n : n * n * n;

  for (p4est_locidx_t e0 = 0; e0 < nel; e0 += FEM_MF_LANES) {
    const int nb = nel - e0 < FEM_MF_LANES ? (int)(nel - e0) : FEM_MF_LANES;
    const size_t batch = (size_t)e0 / FEM_MF_LANES;
    Lanes u[FEM_MAX_VNODES], v[FEM_MAX_VNODES];
    for (int l = 0; l < FEM_MF_LANES; l++) {
      const p4est_locidx_t e = e0 + (l < nb ? l : 0);
      const p4est_locidx_t *en = ln->element_nodes + (size_t)e * vn;
      double ue[FEM_MAX_VNODES];
      for (int i = 0; i < vn; i++) ue[i] = x[en[i]];
      constrain(mf->hc[ln->face_code[e]], vn, ue, u, l);
    }
    kernel(mf, n, mf->geo + mf->goff[batch], mf->gconst[batch], u, v);
    for (int l = 0; l < nb; l++) {
      const p4est_locidx_t *en = ln->element_nodes + (size_t)(e0 + l) * vn;
      double ye[FEM_MAX_VNODES];
      constrain_t(mf->hc[ln->face_code[e0 + l]], vn, v, l, ye);
      for (int i = 0; i < vn; i++) y[en[i]] += ye[i];
    }
  }
}

FEM_MF_CLONES static void apply_cells2(const FemPoissonMF mf, const double *x, double *y) { apply_cells_n(mf, 2, x, y); }

FEM_MF_CLONES static void apply_cells3(const FemPoissonMF mf, const double *x, double *y) { apply_cells_n(mf, 3, x, y); }

static void apply_cells(FemPoissonMF mf, const double *x, double *y)
{
  double cpu0, wall0;

  FemClocks(&cpu0, &wall0);
  if (mf->n == 2) apply_cells2(mf, x, y);
  else apply_cells3(mf, x, y);
  FemPoissonAddWork(mf->fp, cpu0, wall0);
}

/* yg = the cells' sum of x's local form (ghosts included; its Dirichlet
 * entries zeroed first if mask), added up at the owners. */
static PetscErrorCode apply_local(FemPoissonMF mf, int mask)
{
  const p4est_locidx_t nloc = mf->fp->lnodes->num_local_nodes;
  Vec lx, ly;
  PetscScalar *xa, *ya;

  PetscFunctionBeginUser;
  PetscCall(VecGhostGetLocalForm(mf->xg, &lx));
  PetscCall(VecGhostGetLocalForm(mf->yg, &ly));
  PetscCall(VecZeroEntries(ly));
  PetscCall(VecGetArray(lx, &xa));
  PetscCall(VecGetArray(ly, &ya));
  for (p4est_locidx_t i = 0; mask && i < nloc; i++)
    if (mf->fp->dirichlet[i]) xa[i] = 0.0;
  apply_cells(mf, xa, ya);
  PetscCall(VecRestoreArray(ly, &ya));
  PetscCall(VecRestoreArray(lx, &xa));
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

/* The diagonal of K on FEM_MF_LANES cells: K_ii = sum_q sum_ab G_ab(q)
 * d_a phi_i(q) d_b phi_i(q), and each product of two reference gradient
 * components is a product of the 1D factors H (B B, B B' or B' B' by
 * direction), so per pair (a, b) the sum over the points is the transposed
 * contraction of G_ab by those factors: dim(dim+1)/2 sum factorisations,
 * about the cost of one apply, instead of one apply per column. */
static FEM_MF_INLINE void diag_kernel(const FemPoissonMF mf, const int n, const Lanes *G, const int cst, Lanes *dg)
{
  const int npts = P4EST_DIM == 2 ? n * n : n * n * n;
  const double *w = mf->fp->qe.cell.w;
  Lanes gq[FEM_MAX_VNODES], t0[FEM_MAX_VNODES], t1[FEM_MAX_VNODES];

  for (int i = 0; i < npts; i++)
    for (int l = 0; l < FEM_MF_LANES; l++) dg[i][l] = 0.0;
  for (int a = 0; a < P4EST_DIM; a++)
    for (int b = a; b < P4EST_DIM; b++) {
      const double *h[P4EST_DIM];
      for (int d = 0; d < P4EST_DIM; d++) h[d] = mf->H[(d == a) + (d == b)];
      for (int q = 0; q < npts; q++)
        for (int l = 0; l < FEM_MF_LANES; l++)
          gq[q][l] = (a == b ? 1.0 : 2.0) * (cst ? w[q] * G[sym(a, b)][l] : G[(size_t)q * FEM_NSYM + sym(a, b)][l]);
      contract(n, 0, h[0], 1, 0, gq, t0);
#ifndef P4_TO_P8
      contract(n, 1, h[1], 1, 0, t0, t1);
#else
      contract(n, 1, h[1], 1, 0, t0, t1);
      contract(n, 2, h[2], 1, 0, t1, t0);
      for (int i = 0; i < npts; i++)
        for (int l = 0; l < FEM_MF_LANES; l++) t1[i][l] = t0[i][l];
#endif
      for (int i = 0; i < npts; i++)
        for (int l = 0; l < FEM_MF_LANES; l++) dg[i][l] += t1[i][l];
    }
}

FEM_MF_CLONES static void diag_kernel2(const FemPoissonMF mf, const Lanes *G, int cst, Lanes *dg)
{
  diag_kernel(mf, 2, G, cst, dg);
}

FEM_MF_CLONES static void diag_kernel3(const FemPoissonMF mf, const Lanes *G, int cst, Lanes *dg)
{
  diag_kernel(mf, 3, G, cst, dg);
}

/* The diagonal of C^T K C of cell e into d: K's own diagonal where the
 * column of C is a unit vector, else c^T K c of the column c, applied a
 * lane's worth of columns at a time. */
static void hanging_diagonal(const FemPoissonMF mf, p4est_locidx_t e, const Hanging *h, const Lanes *dg, int l0,
                             double *d)
{
  const int vn = mf->fp->qe.vnodes;
  const size_t batch = (size_t)e / FEM_MF_LANES;
  const int cst = mf->gconst[batch], ng = FEM_NSYM * (cst ? 1 : vn), le = (int)(e % FEM_MF_LANES);
  const Lanes *Gb = mf->geo + mf->goff[batch];
  int col[FEM_MF_LANES], nc = 0;
  Lanes u[FEM_MAX_VNODES], v[FEM_MAX_VNODES], G[FEM_NSYM * FEM_MAX_VNODES];

  /* cell e's metric in every lane: the lanes are its columns */
  for (int j = 0; j < ng; j++)
    for (int l = 0; l < FEM_MF_LANES; l++) G[j][l] = Gb[j][le];
  for (int j = 0; j <= vn; j++) {
    if (j < vn && !h->hang[j]) {
      d[j] = dg[j][l0];
      continue;
    }
    if (j < vn) {
      double c[FEM_MAX_VNODES] = {0};
      c[j] = 1.0;
      constrain(h, vn, c, u, nc);
      col[nc++] = j;
    }
    if (nc == FEM_MF_LANES || (j == vn && nc)) {
      cell_kernel(mf, G, cst, u, v);
      for (int k = 0; k < nc; k++) {
        d[col[k]] = 0.0;
        for (int i = 0; i < vn; i++) d[col[k]] += u[i][k] * v[i][k];
      }
      nc = 0;
    }
  }
}

/* The diagonal of the operator: per cell that of C^T K C, summed at the
 * owners. */
PetscErrorCode FemPoissonMFDiagonal(FemPoissonMF mf)
{
  FemPoisson fp = mf->fp;
  const p4est_lnodes_t *ln = fp->lnodes;
  const p4est_locidx_t nel = ln->num_local_elements;
  const int vn = fp->qe.vnodes;
  Vec ld;
  PetscScalar *da;
  double cpu0, wall0;

  PetscFunctionBeginUser;
  PetscCall(VecGhostGetLocalForm(mf->yg, &ld));
  PetscCall(VecZeroEntries(ld));
  PetscCall(VecGetArray(ld, &da));
  FemClocks(&cpu0, &wall0);
  for (p4est_locidx_t e0 = 0; e0 < nel; e0 += FEM_MF_LANES) {
    const int nb = nel - e0 < FEM_MF_LANES ? (int)(nel - e0) : FEM_MF_LANES;
    const size_t batch = (size_t)e0 / FEM_MF_LANES;
    Lanes dg[FEM_MAX_VNODES];
    if (mf->n == 2) diag_kernel2(mf, mf->geo + mf->goff[batch], mf->gconst[batch], dg);
    else diag_kernel3(mf, mf->geo + mf->goff[batch], mf->gconst[batch], dg);
    for (int l = 0; l < nb; l++) {
      const p4est_locidx_t e = e0 + l, *en = ln->element_nodes + (size_t)e * vn;
      const Hanging *h = mf->hc[ln->face_code[e]];
      double d[FEM_MAX_VNODES];
      if (h) hanging_diagonal(mf, e, h, dg, l, d);
      else
        for (int i = 0; i < vn; i++) d[i] = dg[i][l];
      for (int i = 0; i < vn; i++) da[en[i]] += d[i];
    }
  }
  FemPoissonAddWork(fp, cpu0, wall0);
  PetscCall(VecRestoreArray(ld, &da));
  PetscCall(VecGhostRestoreLocalForm(mf->yg, &ld));
  PetscCall(VecGhostUpdateBegin(mf->yg, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateEnd(mf->yg, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecCopy(mf->yg, mf->diag));
  PetscFunctionReturn(0);
}

/* Metric tensor(s) w k |det J| J^-1 J^-T of every local cell, by batch
 * of FEM_MF_LANES cells (the last batch's missing lanes repeat its first
 * cell): one tensor per lane where every cell of the batch is affine with
 * k constant per tree, else one per point and lane. */
static PetscErrorCode compute_geometry(FemPoissonMF mf)
{
  FemPoisson fp = mf->fp;
  const FemRule *r = &fp->qe.cell;
  const p4est_locidx_t nel = fp->lnodes->num_local_elements;
  const size_t nbatch = ((size_t)nel + FEM_MF_LANES - 1) / FEM_MF_LANES;
  size_t total = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(nbatch + 1, &mf->goff, nbatch + 1, &mf->gconst));
  for (size_t k = 0; k < nbatch; k++) {
    mf->gconst[k] = 1;
    for (p4est_locidx_t e = (p4est_locidx_t)(k * FEM_MF_LANES); e < nel && e < (p4est_locidx_t)((k + 1) * FEM_MF_LANES); e++)
      if (!fp->prob->k_per_tree || !fp->taffine[fp->etree[e]]) mf->gconst[k] = 0;
    mf->goff[k] = total;
    total += FEM_NSYM * (size_t)(mf->gconst[k] ? 1 : r->npts);
  }
  PetscCall(PetscMalloc1(total + 1, &mf->geo));
  for (size_t k = 0; k < nbatch; k++) {
    const int np = mf->gconst[k] ? 1 : r->npts;
    for (int l = 0; l < FEM_MF_LANES; l++) {
      const p4est_locidx_t e0 = (p4est_locidx_t)(k * FEM_MF_LANES), e = e0 + l < nel ? e0 + l : e0;
      const p4est_topidx_t t = fp->etree[e];
      for (int q = 0; q < np; q++) {
        const double origin[3] = {0, 0, 0};
        double x[3], Ji[3][3];
        Lanes *G = mf->geo + mf->goff[k] + (size_t)q * FEM_NSYM;
        const double adet = FemPoissonElementGeometry(fp, t, fp->equad[e], mf->gconst[k] ? origin : r->eta + 3 * q, x, Ji);
        const double s = (mf->gconst[k] ? 1.0 : r->w[q]) * adet * fp->prob->k(P4EST_DIM, x, (long)t);
        for (int a = 0; a < P4EST_DIM; a++)
          for (int b = a; b < P4EST_DIM; b++) {
            double m = 0.0;
            for (int c = 0; c < P4EST_DIM; c++) m += Ji[a][c] * Ji[b][c];
            G[sym(a, b)][l] = s * m;
          }
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
  for (int q = 0; q < n; q++)
    for (int i = 0; i < n; i++) {
      double db = 0.0; /* basis i's derivative at point q */
      for (int p = 0; p < n; p++) db += mf->D[q * n + p] * mf->B[p * n + i];
      mf->H[0][q * n + i] = mf->B[q * n + i] * mf->B[q * n + i];
      mf->H[1][q * n + i] = mf->B[q * n + i] * db;
      mf->H[2][q * n + i] = db * db;
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
  PetscCall(hanging_tables(mf));
  PetscCall(VecDuplicate(fp->u, &mf->xg));
  PetscCall(VecDuplicate(fp->u, &mf->yg));
  PetscCall(VecDuplicate(fp->b, &mf->diag));
  PetscCall(FemPoissonMFDiagonal(mf));
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
  for (int c = 0; c < FEM_NCODES; c++)
    if (mf->hc[c]) {
      PetscCall(PetscFree3(mf->hc[c]->row, mf->hc[c]->col, mf->hc[c]->val));
      PetscCall(PetscFree(mf->hc[c]));
    }
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
  PetscCall(VecSetOption(b, VEC_IGNORE_NEGATIVE_INDICES, PETSC_TRUE)); /* Dirichlet rows */
  PetscCall(VecZeroEntries(b));
  FemClocks(&cpu0, &wall0);
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    double F[FEM_MAX_VNODES];
    PetscInt rows[FEM_MAX_VNODES];
    const double *C;
    FemPoissonElementDofs(fp, e, rows);
    FemPoissonElementSystem(fp, e, NULL, F);
    PetscCall(FemPoissonConstraintMatrix(fp, ln->face_code[e], &C));
    if (C) FemPoissonApplyConstraints(vn, C, NULL, F);
    PetscCall(VecSetValues(b, vn, rows, F, ADD_VALUES));
  }
  FemPoissonAddWork(fp, cpu0, wall0);
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
