/* The Poisson discretisation's element kernels (fem/impl/poisson.h): the
 * element map (affine trees by their precomputed Jacobian), face normals
 * and boundary types, the element stiffness and load (affine with k
 * constant per tree, else by quadrature) with the Neumann data, and the
 * hanging-node constraints applied to them.  Written for 2D; compiled
 * again with P4_TO_P8 for 3D. */
#include "mesh/p4est_dim.h"
#include <math.h>
#include <string.h>
#include "fem/femutil.h"
#include "fem/impl/poisson.h"
#include "mesh/geom.h"

PetscErrorCode FemPoissonConstraintMatrix(FemPoisson fp, p4est_lnodes_code_t fc, const double **C)
{
  PetscFunctionBeginUser;
  *C = NULL;
  if (!fc) PetscFunctionReturn(0);
  if (!fp->ccache[fc]) {
    PetscCall(PetscMalloc1((size_t)fp->qe.vnodes * fp->qe.vnodes, &fp->ccache[fc]));
    FemQElemConstraints(&fp->qe, fc, fp->ccache[fc]);
  }
  *C = fp->ccache[fc];
  PetscFunctionReturn(0);
}

/* Whether face f of quadrant q in tree t lies on the domain boundary. */
int FemPoissonBoundaryFace(const p4est_t *p4est, p4est_topidx_t t, const p4est_quadrant_t *q, int f)
{
  const p4est_connectivity_t *conn = p4est->connectivity;
  const p4est_qcoord_t h = P4EST_QUADRANT_LEN(q->level);
#ifndef P4_TO_P8
  const p4est_qcoord_t c[3] = {q->x, q->y, 0};
#else
  const p4est_qcoord_t c[3] = {q->x, q->y, q->z};
#endif
  if (conn->tree_to_tree[(size_t)t * P4EST_FACES + f] != t ||
      conn->tree_to_face[(size_t)t * P4EST_FACES + f] != f)
    return 0;
  return (f % 2) ? c[f / 2] + h == P4EST_ROOT_LEN : c[f / 2] == 0;
}

/* The map of quadrant q of tree t at reference point eta: physical point
 * and (if J is not NULL) Jacobian dx/deta.  Affine trees take the
 * precomputed tree Jacobian instead of evaluating the multilinear map. */
void FemPoissonElementMap(FemPoisson fp, p4est_topidx_t t, const p4est_quadrant_t *q, const double eta[3], double x[3],
                        double J[3][3])
{
  if (!fp->taffine[t]) {
    AmrGeomQuadMap(fp->p4est->connectivity, t, q, eta, x, J);
    return;
  }
  const double *tJ = fp->tJ + 9 * (size_t)t, *tx0 = fp->tx0 + 3 * (size_t)t;
  double h, xi[3];
  AmrGeomQuadBox(q, xi, &h);
  for (int k = 0; k < P4EST_DIM; k++) xi[k] += h * eta[k];
  for (int a = 0; a < 3; a++) {
    x[a] = tx0[a];
    for (int b = 0; b < P4EST_DIM; b++) x[a] += tJ[3 * a + b] * xi[b];
  }
  if (J) {
    memset(J, 0, 9 * sizeof(double));
    for (int a = 0; a < P4EST_DIM; a++)
      for (int b = 0; b < P4EST_DIM; b++) J[a][b] = tJ[3 * a + b] * h;
  }
}

/* Geometry at reference point eta of element quadrant q: physical point,
 * inverse Jacobian and |det J|. */
double FemPoissonElementGeometry(FemPoisson fp, p4est_topidx_t t, const p4est_quadrant_t *q, const double eta[3],
                               double x[3], double Ji[3][3])
{
  double J[3][3];
  FemPoissonElementMap(fp, t, q, eta, x, J);
  return fabs(AmrGeomInvert(J, Ji));
}

/* Outward unit normal of reference face f under inverse Jacobian Ji, and
 * the surface factor |J^-T e_f| that turns |det J| dA into dS. */
double FemPoissonFaceNormal(const double Ji[3][3], int f, double n[3])
{
  double len = 0.0;
  const double s = (f % 2) ? 1.0 : -1.0;
  for (int a = 0; a < 3; a++) {
    n[a] = a < P4EST_DIM ? s * Ji[f / 2][a] : 0.0;
    len += n[a] * n[a];
  }
  len = sqrt(len);
  for (int a = 0; a < 3; a++) n[a] /= len;
  return len;
}

/* Physical gradients of the basis: g[i*DIM+a] = sum_b dphi[i*DIM+b] Ji[b][a]. */
static void physical_gradients(int vn, const double *dphi, const double Ji[3][3], double *g)
{
  for (int i = 0; i < vn; i++)
    for (int a = 0; a < P4EST_DIM; a++) {
      double s = 0.0;
      for (int b = 0; b < P4EST_DIM; b++) s += dphi[i * P4EST_DIM + b] * Ji[b][a];
      g[i * P4EST_DIM + a] = s;
    }
}

/* Neumann data at boundary point x of tree t with outward normal n. */
double FemPoissonNeumannData(FemPoisson fp, p4est_topidx_t t, const double x[3], const double n[3])
{
  double gu[3] = {0, 0, 0}, g = 0.0;
  if (fp->prob->flux) return fp->prob->flux(P4EST_DIM, x, n);
  if (fp->prob->grad) fp->prob->grad(P4EST_DIM, x, gu);
  for (int a = 0; a < P4EST_DIM; a++) g += gu[a] * n[a];
  return g * fp->prob->k(P4EST_DIM, x, (long)t);
}

/* Boundary type of face f of element (t, q): the named boundary parts of
 * the mesh first (-bc_dirichlet, -bc_neumann), else the problem's choice at
 * the face centre. */
FemBC FemPoissonFaceBC(FemPoisson fp, p4est_topidx_t t, const p4est_quadrant_t *q, int f)
{
  if (fp->tree_bc && fp->tree_bc[(size_t)t * P4EST_FACES + f] >= 0) return (FemBC)fp->tree_bc[(size_t)t * P4EST_FACES + f];
  double eta[3] = {0.5, 0.5, 0.5}, x[3], Ji[3][3], n[3];
  eta[f / 2] = f % 2;
  FemPoissonElementGeometry(fp, t, q, eta, x, Ji);
  FemPoissonFaceNormal(Ji, f, n);
  return fp->prob->bc(P4EST_DIM, x, n);
}

void FemPoissonElementDofs(FemPoisson fp, p4est_locidx_t e, PetscInt *rows)
{
  const int vn = fp->qe.vnodes;
  const p4est_locidx_t *en = fp->lnodes->element_nodes + (size_t)e * vn;
  for (int i = 0; i < vn; i++) rows[i] = fp->dirichlet[en[i]] ? -1 : fp->gidx[en[i]];
}

/* Whether row i of constraint matrix C (may be NULL) leaves node i free. */
int FemPoissonNodeFree(const double *C, int n, int i)
{
  if (!C) return 1;
  for (int j = 0; j < n; j++)
    if (C[(size_t)i * n + j] != (i == j ? 1.0 : 0.0)) return 0;
  return 1;
}

/* Stiffness and load of an affine cell with constant k: K is k |det J|
 * times the reference moments weighted by M = J^-1 J^-T, the load needs
 * only f at the mapped quadrature points. */
static void element_system_affine(FemPoisson fp, p4est_locidx_t e, double *K, double *F)
{
  const FemQElem *qe = &fp->qe;
  const FemRule *r = &qe->cell;
  const int vn = qe->vnodes;
  const size_t n2 = (size_t)vn * vn;
  const p4est_topidx_t t = fp->etree[e];
  const p4est_quadrant_t *q = fp->equad[e];
  const double origin[3] = {0, 0, 0};
  double J[3][3], Ji[3][3], x0[3], M[P4EST_DIM][P4EST_DIM];

  FemPoissonElementMap(fp, t, q, origin, x0, J);
  const double adet = fabs(AmrGeomInvert(J, Ji)), kd = adet * fp->prob->k(P4EST_DIM, x0, (long)t);
  for (int a = 0; a < P4EST_DIM; a++)
    for (int b = 0; b < P4EST_DIM; b++) {
      M[a][b] = 0.0;
      for (int c = 0; c < P4EST_DIM; c++) M[a][b] += Ji[a][c] * Ji[b][c];
    }
  for (size_t k = 0; K && k < n2; k++) {
    double s = 0.0;
    for (int a = 0; a < P4EST_DIM; a++)
      for (int b = 0; b < P4EST_DIM; b++) s += M[a][b] * qe->stiff[(a * P4EST_DIM + b) * n2 + k];
    K[k] = kd * s;
  }
  memset(F, 0, sizeof(double) * vn);
  for (int k = 0; k < r->npts; k++) {
    double x[3];
    for (int a = 0; a < 3; a++) {
      x[a] = x0[a];
      for (int b = 0; b < P4EST_DIM; b++) x[a] += J[a][b] * r->eta[3 * k + b];
    }
    const double fw = r->w[k] * adet * fp->prob->f(P4EST_DIM, x);
    const double *phi = r->phi + (size_t)k * vn;
    for (int i = 0; i < vn; i++) F[i] += fw * phi[i];
  }
}

/* Stiffness and load by quadrature: any cell, any k(x). */
static void element_system_quadrature(FemPoisson fp, p4est_locidx_t e, double *K, double *F)
{
  const FemQElem *qe = &fp->qe;
  const FemRule *r = &qe->cell;
  const int vn = qe->vnodes;
  const p4est_topidx_t t = fp->etree[e];
  double g[FEM_MAX_VNODES * P4EST_DIM];

  if (K) memset(K, 0, sizeof(double) * vn * vn);
  memset(F, 0, sizeof(double) * vn);
  for (int k = 0; k < r->npts; k++) {
    double x[3], Ji[3][3];
    const double wq = r->w[k] * FemPoissonElementGeometry(fp, t, fp->equad[e], r->eta + 3 * k, x, Ji);
    const double kw = wq * fp->prob->k(P4EST_DIM, x, (long)t), fw = wq * fp->prob->f(P4EST_DIM, x);
    const double *phi = r->phi + (size_t)k * vn;
    for (int i = 0; i < vn; i++) F[i] += fw * phi[i];
    if (!K) continue;
    physical_gradients(vn, r->dphi + (size_t)k * vn * P4EST_DIM, Ji, g);
    for (int i = 0; i < vn; i++) {
      for (int j = i; j < vn; j++) {
        double s = 0.0;
        for (int a = 0; a < P4EST_DIM; a++) s += g[i * P4EST_DIM + a] * g[j * P4EST_DIM + a];
        K[i * vn + j] += kw * s;
      }
    }
  }
  for (int i = 0; K && i < vn; i++)
    for (int j = 0; j < i; j++) K[i * vn + j] = K[j * vn + i];
}

/* Adds the Neumann data k du/dn of the element's Neumann faces to F. */
static void element_neumann(FemPoisson fp, p4est_locidx_t e, double *F)
{
  const FemQElem *qe = &fp->qe;
  const FemRule *r = &qe->cell;
  const p4est_topidx_t t = fp->etree[e];
  const p4est_quadrant_t *q = fp->equad[e];
  int nf = 1;

  for (int d = 1; d < P4EST_DIM; d++) nf *= r->n1;
  for (int f = 0; f < P4EST_FACES; f++) {
    if (!FemPoissonBoundaryFace(fp->p4est, t, q, f) || FemPoissonFaceBC(fp, t, q, f) != FEM_BC_NEUMANN) continue;
    for (int k = 0; k < nf; k++) {
      double eta[3], w, x[3], Ji[3][3], n[3], phi[FEM_MAX_VNODES];
      FemRuleFacePoint(r, f, k, eta, &w);
      const double adet = FemPoissonElementGeometry(fp, t, q, eta, x, Ji);
      const double ds = w * adet * FemPoissonFaceNormal(Ji, f, n), gn = FemPoissonNeumannData(fp, t, x, n);
      FemQElemEval(qe, eta, phi, NULL);
      for (int i = 0; i < qe->vnodes; i++) F[i] += ds * gn * phi[i];
    }
  }
}

/* Element stiffness K (vn x vn; NULL: the load only) and load F, before
 * constraints. */
void FemPoissonElementSystem(FemPoisson fp, p4est_locidx_t e, double *K, double *F)
{
  if (fp->prob->k_per_tree && fp->taffine[fp->etree[e]]) element_system_affine(fp, e, K, F);
  else element_system_quadrature(fp, e, K, F);
  element_neumann(fp, e, F);
}

/* K <- C^T K C (unless K is NULL) and F <- C^T F for an element with
 * hanging nodes. */
void FemPoissonApplyConstraints(int n, const double *C, double *K, double *F)
{
  double T[FEM_MAX_VNODES * FEM_MAX_VNODES], G[FEM_MAX_VNODES];
  for (int i = 0; K && i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += K[i * n + k] * C[k * n + j];
      T[i * n + j] = s;
    }
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int k = 0; k < n; k++) s += C[k * n + i] * F[k];
    G[i] = s;
    for (int j = 0; K && j < n; j++) {
      double u = 0.0;
      for (int k = 0; k < n; k++) u += C[k * n + i] * T[k * n + j];
      K[i * n + j] = u;
    }
  }
  memcpy(F, G, sizeof(double) * n);
}
