/* The Poisson discretisation's error estimates (poisson.h): the error
 * against the problem's exact solution, cell by cell, and the Kelly
 * indicator, the jumps of the normal flux k du_h/dn across the faces and
 * the Neumann residual, integrated on every face once from its small
 * side, ghost cells' coefficients exchanged first.  Written for 2D;
 * compiled again with P4_TO_P8 for 3D. */
#include "mesh/p4est_dim.h"
#include <math.h>
#include <string.h>
#include "fem/femutil.h"
#include "fem/impl/poisson.h"
#include "mesh/geom.h"

PetscErrorCode FemPoissonExactError(FemPoisson fp, double *cell_l2sq, double *cell_h1sq, double *l2, double *h1)
{
  const int vn = fp->qe.vnodes;
  const FemRule *r = &fp->qe.accurate;
  const p4est_locidx_t nel = fp->lnodes->num_local_elements;
  double *coef, sum[2] = {0, 0};

  PetscFunctionBeginUser;
  PetscCheck(fp->prob->u && fp->prob->grad, fp->comm, PETSC_ERR_SUP, "problem %s has no exact solution",
             fp->prob->name);
  PetscCall(PetscMalloc1((size_t)nel * vn, &coef));
  PetscCall(FemPoissonElementCoefficients(fp, coef));
  for (p4est_locidx_t e = 0; e < nel; e++) {
    const double *c = coef + (size_t)e * vn;
    double el2 = 0.0, eh1 = 0.0;
    for (int k = 0; k < r->npts; k++) {
      double x[3], Ji[3][3], uh = 0.0, gr[3] = {0, 0, 0}, ge[3];
      const double wq = r->w[k] * FemPoissonElementGeometry(fp, fp->etree[e], fp->equad[e], r->eta + 3 * k, x, Ji);
      const double *phi = r->phi + (size_t)k * vn, *dphi = r->dphi + (size_t)k * vn * P4EST_DIM;
      /* the reference gradient first: one transform per point, not per node */
      for (int i = 0; i < vn; i++) {
        uh += c[i] * phi[i];
        for (int b = 0; b < P4EST_DIM; b++) gr[b] += c[i] * dphi[i * P4EST_DIM + b];
      }
      fp->prob->grad(P4EST_DIM, x, ge);
      const double du = fp->prob->u(P4EST_DIM, x) - uh;
      el2 += wq * du * du;
      for (int a = 0; a < P4EST_DIM; a++) {
        double gh = 0.0;
        for (int b = 0; b < P4EST_DIM; b++) gh += gr[b] * Ji[b][a];
        eh1 += wq * (ge[a] - gh) * (ge[a] - gh);
      }
    }
    if (cell_l2sq) cell_l2sq[e] = el2;
    if (cell_h1sq) cell_h1sq[e] = eh1;
    sum[0] += el2;
    sum[1] += eh1;
  }
  PetscCall(PetscFree(coef));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_DOUBLE, MPI_SUM, fp->comm));
  *l2 = sqrt(sum[0]);
  *h1 = sqrt(sum[1]);
  PetscFunctionReturn(0);
}

typedef struct {
  FemPoisson fp;
  const double *coef;   /* local elements */
  const double *gcoef;  /* ghost elements */
  double *eta2;
  int failed;           /* a tree map could not be inverted */
} KellyCtx;

/* One quadrant adjacent to a face, local or ghost. */
typedef struct {
  p4est_topidx_t t;
  const p4est_quadrant_t *q;
  const double *coef;
  p4est_locidx_t local; /* local element index, -1 for a ghost */
  int face;
  double k;             /* k in the cell when constant per tree, else NAN */
} KellySide;

static KellySide kelly_side(KellyCtx *kc, const p4est_iter_face_side_t *s, int h)
{
  KellySide ks;
  const int vn = kc->fp->qe.vnodes;
  const int ghost = s->is_hanging ? s->is.hanging.is_ghost[h] : s->is.full.is_ghost;
  const p4est_locidx_t id = s->is_hanging ? s->is.hanging.quadid[h] : s->is.full.quadid;
  ks.t = s->treeid;
  ks.q = s->is_hanging ? s->is.hanging.quad[h] : s->is.full.quad;
  ks.face = s->face;
  if (ghost) {
    ks.local = -1;
    ks.coef = kc->gcoef + (size_t)id * vn;
  } else {
    ks.local = p4est_tree_array_index(kc->fp->p4est->trees, s->treeid)->quadrants_offset + id;
    ks.coef = kc->coef + (size_t)ks.local * vn;
  }
  ks.k = NAN;
  if (kc->fp->prob->k_per_tree) {
    const double centre[3] = {0.5, 0.5, 0.5};
    double x[3];
    FemPoissonElementMap(kc->fp, ks.t, ks.q, centre, x, NULL);
    ks.k = kc->fp->prob->k(P4EST_DIM, x, (long)ks.t);
  }
  return ks;
}

static double diameter(FemPoisson fp, const KellySide *s)
{
  const double e0[3] = {0, 0, 0}, e1[3] = {1, 1, 1};
  double a[3], b[3], d = 0.0;
  FemPoissonElementMap(fp, s->t, s->q, e0, a, NULL);
  FemPoissonElementMap(fp, s->t, s->q, e1, b, NULL);
  for (int k = 0; k < 3; k++) d += (a[k] - b[k]) * (a[k] - b[k]);
  return sqrt(d);
}

/* k grad(u_h) . n of side s at its reference point eta, where its inverse
 * Jacobian is Ji.  k is this side's: where it is not constant per tree,
 * taken a little inside the cell, since it may jump across the face
 * (problem jump) and on the face it is either side's. */
static double side_flux(FemPoisson fp, const KellySide *s, const double eta[3], const double Ji[3][3], const double n[3])
{
  double gr[3], gn = 0.0, k = s->k;
  FemQElemGradient(&fp->qe, eta, s->coef, gr);
  for (int a = 0; a < P4EST_DIM; a++)
    for (int b = 0; b < P4EST_DIM; b++) gn += gr[b] * Ji[b][a] * n[a];
  if (isnan(k)) {
    double inside[3], xi[3];
    for (int d = 0; d < 3; d++) inside[d] = eta[d] + 1e-6 * (0.5 - eta[d]);
    FemPoissonElementMap(fp, s->t, s->q, inside, xi, NULL);
    k = fp->prob->k(P4EST_DIM, xi, (long)s->t);
  }
  return gn * k;
}

/* Reference coordinates in quadrant b of the point at reference eta of
 * quadrant a (physical point x): direct in one tree, Newton across trees. */
static int locate(const p4est_t *p4est, const KellySide *a, const double eta[3], const double x[3],
                  const KellySide *b, double etab[3])
{
#ifndef P4_TO_P8
  const double qa[3] = {a->q->x, a->q->y, 0}, qb[3] = {b->q->x, b->q->y, 0};
#else
  const double qa[3] = {a->q->x, a->q->y, a->q->z}, qb[3] = {b->q->x, b->q->y, b->q->z};
#endif
  const double ha = P4EST_QUADRANT_LEN(a->q->level), hb = P4EST_QUADRANT_LEN(b->q->level);
  double xi[3] = {0, 0, 0};
  if (a->t == b->t) {
    for (int d = 0; d < P4EST_DIM; d++) xi[d] = qa[d] + eta[d] * ha;
  } else {
    for (int d = 0; d < P4EST_DIM; d++) xi[d] = (qb[d] + 0.5 * hb) / P4EST_ROOT_LEN;
    if (AmrGeomTreeInverse(p4est->connectivity, b->t, x, xi)) return -1;
    for (int d = 0; d < P4EST_DIM; d++) xi[d] *= P4EST_ROOT_LEN;
  }
  etab[0] = etab[1] = etab[2] = 0.0;
  for (int d = 0; d < P4EST_DIM; d++) etab[d] = (xi[d] - qb[d]) / hb;
  return 0;
}

/* Integrate the squared flux jump over the face of small side a (the
 * whole face when conforming) against side b; add to local cells. */
static void kelly_pair(KellyCtx *kc, const KellySide *a, const KellySide *b)
{
  FemPoisson fp = kc->fp;
  const FemRule *r = &fp->qe.cell;
  double integral = 0.0;
  int nf = 1;
  for (int d = 1; d < P4EST_DIM; d++) nf *= r->n1;
  for (int k = 0; k < nf; k++) {
    double eta[3], etab[3], w, x[3], Ji[3][3], Jib[3][3], xb[3], n[3];
    FemRuleFacePoint(r, a->face, k, eta, &w);
    const double ds = w * FemPoissonElementGeometry(fp, a->t, a->q, eta, x, Ji) * FemPoissonFaceNormal(Ji, a->face, n);
    if (locate(fp->p4est, a, eta, x, b, etab)) {
      kc->failed = 1;
      return;
    }
    if (a->t == b->t) {
      /* one tree's map, scaled by each quadrant's size */
      const double ratio = (double)P4EST_QUADRANT_LEN(a->q->level) / P4EST_QUADRANT_LEN(b->q->level);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Jib[i][j] = Ji[i][j] * ratio;
    } else {
      FemPoissonElementGeometry(fp, b->t, b->q, etab, xb, Jib);
    }
    const double jump = side_flux(fp, a, eta, Ji, n) - side_flux(fp, b, etab, Jib, n);
    integral += ds * jump * jump;
  }
  if (a->local >= 0) kc->eta2[a->local] += diameter(fp, a) / 24.0 * integral;
  if (b->local >= 0) kc->eta2[b->local] += diameter(fp, b) / 24.0 * integral;
}

/* A Neumann face carries the residual g - k du_h/dn, counted twice since
 * no neighbour shares it. */
static void kelly_boundary(KellyCtx *kc, const KellySide *a)
{
  FemPoisson fp = kc->fp;
  const FemRule *r = &fp->qe.cell;
  double integral = 0.0;
  int nf = 1;
  if (a->local < 0 || FemPoissonFaceBC(fp, a->t, a->q, a->face) != FEM_BC_NEUMANN) return;
  for (int d = 1; d < P4EST_DIM; d++) nf *= r->n1;
  for (int k = 0; k < nf; k++) {
    double eta[3], w, x[3], Ji[3][3], n[3];
    FemRuleFacePoint(r, a->face, k, eta, &w);
    const double ds = w * FemPoissonElementGeometry(fp, a->t, a->q, eta, x, Ji) * FemPoissonFaceNormal(Ji, a->face, n);
    const double res = FemPoissonNeumannData(fp, a->t, x, n) - side_flux(fp, a, eta, Ji, n);
    integral += ds * res * res;
  }
  kc->eta2[a->local] += diameter(fp, a) / 12.0 * integral;
}

static void kelly_face(p4est_iter_face_info_t *info, void *user)
{
  KellyCtx *kc = user;
  p4est_iter_face_side_t *s = (p4est_iter_face_side_t *)info->sides.array;
  if (info->sides.elem_count == 1) {
    KellySide a = kelly_side(kc, &s[0], 0);
    kelly_boundary(kc, &a);
    return;
  }
  /* Put the hanging (small) side first. */
  const int small = s[1].is_hanging ? 1 : 0;
  KellySide b = kelly_side(kc, &s[1 - small], 0);
  if (!s[small].is_hanging) {
    KellySide a = kelly_side(kc, &s[small], 0);
    kelly_pair(kc, &a, &b);
    return;
  }
  for (int h = 0; h < P4EST_HALF; h++) {
    KellySide a = kelly_side(kc, &s[small], h);
    kelly_pair(kc, &a, &b);
  }
}

PetscErrorCode FemPoissonKelly(FemPoisson fp, double *eta2, double *total)
{
  const int vn = fp->qe.vnodes;
  const p4est_locidx_t nel = fp->lnodes->num_local_elements;
  const size_t nmirror = fp->ghost->mirrors.elem_count, nghost = fp->ghost->ghosts.elem_count;
  double *coef, *gcoef, sum = 0.0, cpu0, wall0;
  void **mirror;
  KellyCtx kc;
  int failed;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)nel * vn + 1, &coef));
  PetscCall(PetscMalloc1(nghost * vn + 1, &gcoef));
  PetscCall(PetscMalloc1(nmirror + 1, &mirror));
  PetscCall(FemPoissonElementCoefficients(fp, coef));
  for (size_t m = 0; m < nmirror; m++) {
    const p4est_quadrant_t *mq = p4est_quadrant_array_index(&fp->ghost->mirrors, m);
    mirror[m] = coef + (size_t)mq->p.piggy3.local_num * vn;
  }
  p4est_ghost_exchange_custom(fp->p4est, fp->ghost, sizeof(double) * vn, mirror, gcoef);
  /* a rank without cells may give no array (memset takes no null
   * pointer, even for no bytes) */
  if (nel) memset(eta2, 0, sizeof(double) * nel);
  kc.fp = fp;
  kc.coef = coef;
  kc.gcoef = gcoef;
  kc.eta2 = eta2;
  kc.failed = 0;
  FemClocks(&cpu0, &wall0);
#ifndef P4_TO_P8
  p4est_iterate(fp->p4est, fp->ghost, &kc, NULL, kelly_face, NULL);
#else
  p8est_iterate(fp->p4est, fp->ghost, &kc, NULL, kelly_face, NULL, NULL);
#endif
  FemPoissonAddWork(fp, cpu0, wall0);
  PetscCall(PetscFree(coef));
  PetscCall(PetscFree(gcoef));
  PetscCall(PetscFree(mirror));
  PetscCallMPI(MPI_Allreduce(&kc.failed, &failed, 1, MPI_INT, MPI_MAX, fp->comm));
  PetscCheck(!failed, fp->comm, PETSC_ERR_PLIB, "a coarse cell's map could not be inverted (degenerate mesh?)");
  for (p4est_locidx_t e = 0; e < nel; e++) sum += eta2[e];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, fp->comm));
  *total = sqrt(sum);
  PetscFunctionReturn(0);
}
