/*
 * The advection solver's faces (advect.h): the face list of the current
 * forest, every interior face once from its canonical side and every
 * boundary face of a local cell, with the velocity's flux at each
 * quadrature point; and the face points lent to a problem that computes
 * the flux itself (FemAdvectFacePoints: the pressure), whose geometry the
 * next face list of the same forest takes instead of computing it again.
 * Written for 2D; compiled again with P4_TO_P8 for 3D.
 */
#include "fem/impl/advect.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "mesh/geom.h"

/** Frees FemAdvectFacePoints' list. */
void FemAdvectFreeCollect(FemAdvect adv)
{
  free(adv->collect);
  adv->collect = NULL;
  adv->ncollect = adv->capcollect = 0;
}

/** One side of a face as seen by the face list: the quadrant, its tree
 *  and its index in the state array (-1 when absent). */
typedef struct {
  const p4est_quadrant_t *q;
  p4est_topidx_t tree;
  p4est_locidx_t idx;
  int local;
} FaceSide;

static FaceSide side_quad(FemAdvect adv, const p4est_iter_face_side_t *s, int j)
{
  FaceSide f;
  int ghost = s->is_hanging ? s->is.hanging.is_ghost[j] : s->is.full.is_ghost;
  p4est_locidx_t id = s->is_hanging ? s->is.hanging.quadid[j] : s->is.full.quadid;
  f.q = s->is_hanging ? s->is.hanging.quad[j] : s->is.full.quad;
  f.tree = s->treeid;
  f.local = !ghost;
  if (f.q == NULL)
    f.idx = -1;
  else if (ghost)
    f.idx = adv->nlocal + id;
  else {
    p4est_tree_t *tr = p4est_tree_array_index(adv->p4est->trees, s->treeid);
    f.idx = (p4est_locidx_t)tr->quadrants_offset + id;
  }
  return f;
}

/** Maps a point on tree face `face` of tree t to the neighbour tree's
 *  reference coordinates, following p4est_quadrant_transform_face for a
 *  quadrant of zero size. */
static void transform_point(const int ft[9], const double r[DIM], double out[DIM])
{
  out[ft[3]] = ft[6] ? 1 - r[ft[0]] : r[ft[0]];
#ifdef P4_TO_P8
  out[ft[4]] = ft[7] ? 1 - r[ft[1]] : r[ft[1]];
#endif
  double s = r[ft[2]];
  switch (ft[8]) {
  case 0:
    out[ft[5]] = -s;
    break;
  case 1:
    out[ft[5]] = s + 1;
    break;
  case 2:
    out[ft[5]] = s - 1;
    break;
  default:
    out[ft[5]] = 2 - s;
    break;
  }
}

static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
  if (need <= *cap) return 0;
  size_t nc = *cap ? 2 * *cap : 256;
  while (nc < need) nc *= 2;
  void *p = realloc(*arr, nc * elem);
  if (!p) return -1;
  *arr = p;
  *cap = nc;
  return 0;
}

/** The normal flux b.n dS at a face point: the problem's face_flux, or
 *  its velocity at side a. */
static double point_flux(FemAdvect adv, const FemAdvectFacePoint *fp)
{
  double vel[3], dot = 0;
  if (adv->prob->face_flux) return adv->prob->face_flux(adv->ctx, fp);
  adv->prob->velocity(adv->ctx, &fp->a, vel);
  for (int i = 0; i < DIM; i++) dot += vel[i] * fp->ndS[i];
  return dot;
}

/** The fluxes and basis values of face_points() at the points that
 *  FemAdvectFacePoints listed on this forest, in the same iteration, so
 *  that their geometry (the map, its inverse, the cross-tree transform) is
 *  not computed again: the same values bit for bit (2 eta - 1 is the
 *  cell coordinate face_points() computes, scaled by 2 exactly). */
static int cached_face_points(FemAdvect adv, const FaceSide *a, const FaceSide *b, double bn[FQ_MAX], double phia[][FEM_ADVECT_NB], double phib[][FEM_ADVECT_NB],
                              double xs[][3])
{
  const int nb = adv->nb, np = ipow(adv->nqf, DIM - 1);
  for (int p = 0; p < np; p++) {
    double xi[DIM];
    if (adv->npoints >= adv->ncollect) return -1;
    const FemAdvectFacePoint *fp = &adv->collect[adv->npoints++];
    if (fp->a.quad != a->q || (b && fp->b.quad != b->q)) return -1;
    for (int k = 0; k < DIM; k++) xi[k] = 2 * fp->a.eta[k] - 1;
    basis(nb, xi, phia[p]);
    if (xs)
      for (int i = 0; i < 3; i++) xs[p][i] = fp->a.x[i];
    if (b) {
      for (int k = 0; k < DIM; k++) xi[k] = 2 * fp->b.eta[k] - 1;
      basis(nb, xi, phib[p]);
    }
    bn[p] = point_flux(adv, fp);
  }
  return 0;
}

/** Quadrature on face `face` of side a: weights * b.n (n outward from a),
 *  basis values of a and, when b is given, of b at the same points.  While
 *  FemAdvectFacePoints collects, the points go to its list instead and the
 *  fluxes are not evaluated. */
static int face_points(FemAdvect adv, const FaceSide *a, int face, const FaceSide *b, double bn[FQ_MAX], double phia[][FEM_ADVECT_NB],
                       double phib[][FEM_ADVECT_NB], double xs[][3])
{
  const p4est_connectivity_t *conn = adv->p4est->connectivity;
  const int ax = face / 2, up = face % 2, nb = adv->nb, n = adv->nqf;
  const int np = ipow(n, DIM - 1);
  double lo[3], h, lob[3] = {0}, hb = 1;
  int ft[9], cross = 0;
  if (!adv->collecting && adv->collect && adv->crevision == adv->revision) return cached_face_points(adv, a, b, bn, phia, phib, xs);
  AmrGeomQuadBox(a->q, lo, &h);
  if (b) {
    AmrGeomQuadBox(b->q, lob, &hb);
    double pos = lo[ax] + up * h;
    if (pos == 0.0 || pos == 1.0) {
      cross = 1;
      if (p4est_find_face_transform((p4est_connectivity_t *)conn, a->tree, face, ft) < 0) return -1;
    }
  }
  if (adv->collecting && grow((void **)&adv->collect, &adv->capcollect, adv->ncollect + np, sizeof(FemAdvectFacePoint))) return -2;
  for (int p = 0; p < np; p++) {
    double r[3] = {0}, xi[DIM], w = 1, jac[3][3], jinv[3][3];
    FemAdvectFacePoint fp = {.a = {.tree = a->tree, .quad = a->q, .cell = a->idx}, .a_local = a->local, .index = adv->npoints++};
    int idx = p;
    for (int k = 0; k < DIM; k++) {
      if (k == ax) {
        r[k] = lo[k] + up * h;
        continue;
      }
      int i = idx % n;
      idx /= n;
      r[k] = lo[k] + 0.5 * (FemGaussX[n][i] + 1) * h;
      w *= FemGaussW[n][i] * 0.5 * h;
    }
    AmrGeomTreeMap(conn, a->tree, r, fp.a.x, jac);
    double det = fabs(AmrGeomInvert(jac, jinv));
    for (int k = 0; k < DIM; k++) fp.a.eta[k] = (r[k] - lo[k]) / h;
    /* Nanson: n dS = |det J| J^{-T} N dS_ref, N = +-e_ax */
    for (int i = 0; i < DIM; i++) fp.ndS[i] = (up ? 1 : -1) * det * jinv[ax][i] * w;
    for (int k = 0; k < DIM; k++) xi[k] = 2 * (r[k] - lo[k]) / h - 1;
    basis(nb, xi, phia[p]);
    if (xs)
      for (int i = 0; i < 3; i++) xs[p][i] = fp.a.x[i];
    if (b) {
      double rb[DIM];
      if (cross)
        transform_point(ft, r, rb);
      else
        for (int k = 0; k < DIM; k++) rb[k] = r[k];
      for (int k = 0; k < DIM; k++) xi[k] = 2 * (rb[k] - lob[k]) / hb - 1;
      basis(nb, xi, phib[p]);
      fp.b = (FemAdvectPoint){.tree = b->tree, .quad = b->q, .cell = b->idx};
      for (int k = 0; k < 3; k++) fp.b.x[k] = fp.a.x[k];
      for (int k = 0; k < DIM; k++) fp.b.eta[k] = (rb[k] - lob[k]) / hb;
      fp.b_local = b->local;
    }
    if (adv->collecting) {
      adv->collect[adv->ncollect++] = fp;
      bn[p] = 0;
    } else
      bn[p] = point_flux(adv, &fp);
  }
  return 0;
}

/** The error of a face_points() return value. */
static PetscErrorCode face_error(int rc) { return rc == -2 ? PETSC_ERR_MEM : PETSC_ERR_PLIB; }

static void add_face(FemAdvect adv, const FaceSide *a, int face, const FaceSide *b)
{
  Face scratch, *f = &scratch; /* collecting: the points only */
  if (adv->cb_err) return;
  if (!a->local && !b->local) return;
  if (!adv->collecting) {
    if (grow((void **)&adv->faces, &adv->capfaces, adv->nfaces + 1, sizeof(Face))) {
      adv->cb_err = PETSC_ERR_MEM;
      return;
    }
    f = &adv->faces[adv->nfaces];
  }
  memset(f, 0, sizeof(*f));
  f->a = a->idx;
  f->b = b->idx;
  f->a_local = a->local;
  f->b_local = b->local;
  int rc = face_points(adv, a, face, b, f->bn, f->phia, f->phib, NULL);
  if (rc) {
    adv->cb_err = face_error(rc);
    return;
  }
  if (!adv->collecting) adv->nfaces++;
}

/** Whether side x comes before side y in the forest's global order. */
static int side_before(const FaceSide *x, const FaceSide *y)
{
  if (x->tree != y->tree) return x->tree < y->tree;
  return p4est_quadrant_compare(x->q, y->q) < 0;
}

static void face_cb(p4est_iter_face_info_t *info, void *user)
{
  FemAdvect adv = user;
  sc_array_t *sides = &info->sides;
  p4est_iter_face_side_t *s0 = p4est_iter_fside_array_index_int(sides, 0);
  if (adv->cb_err) return;
  if (sides->elem_count == 1) {
    FaceSide a = side_quad(adv, s0, 0);
    BFace scratch, *f = &scratch; /* collecting: the points only */
    if (!a.local) return;
    if (!adv->collecting) {
      if (grow((void **)&adv->bfaces, &adv->capbfaces, adv->nbfaces + 1, sizeof(BFace))) {
        adv->cb_err = PETSC_ERR_MEM;
        return;
      }
      f = &adv->bfaces[adv->nbfaces++];
    }
    memset(f, 0, sizeof(*f));
    f->a = a.idx;
    int rc = face_points(adv, &a, s0->face, NULL, f->bn, f->phia, NULL, f->x);
    if (rc) adv->cb_err = face_error(rc);
    return;
  }
  p4est_iter_face_side_t *s1 = p4est_iter_fside_array_index_int(sides, 1);
  if (s1->is_hanging) {
    p4est_iter_face_side_t *t = s0;
    s0 = s1;
    s1 = t;
  }
  FaceSide b = side_quad(adv, s1, 0);
  if (s0->is_hanging) {
    for (int j = 0; j < P4EST_HALF; j++) {
      FaceSide a = side_quad(adv, s0, j);
      if (a.idx >= 0 && b.idx >= 0) add_face(adv, &a, s0->face, &b);
    }
    return;
  }
  FaceSide a = side_quad(adv, s0, 0);
  if (a.idx < 0 || b.idx < 0) return;
  if (side_before(&a, &b))
    add_face(adv, &a, s0->face, &b);
  else
    add_face(adv, &b, s1->face, &a);
}

/** The face iteration: the face list, or while collecting the points. */
static PetscErrorCode iterate_faces(FemAdvect adv)
{
  PetscFunctionBeginUser;
  adv->cb_err = 0;
  adv->npoints = 0;
#ifndef P4_TO_P8
  p4est_iterate(adv->p4est, adv->ghost, adv, NULL, face_cb, NULL);
#else
  p8est_iterate(adv->p4est, adv->ghost, adv, NULL, face_cb, NULL, NULL);
#endif
  PetscCheck(adv->cb_err != PETSC_ERR_MEM, PETSC_COMM_SELF, PETSC_ERR_MEM, "advect: out of memory building the face list");
  PetscCheck(!adv->cb_err, PETSC_COMM_SELF, PETSC_ERR_PLIB, "advect: a tree face without neighbour tree inside the forest");
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectFacePoints(FemAdvect adv, const FemAdvectFacePoint **pts, size_t *n)
{
  PetscErrorCode ierr;
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncCells(adv));
  FemAdvectFreeCollect(adv);
  adv->collecting = 1;
  ierr = iterate_faces(adv);
  adv->collecting = 0;
  if (ierr) FemAdvectFreeCollect(adv);
  PetscCall(ierr);
  /* held through the solve that asked for it, where the memory peaks: no
   * room to grow left over */
  if (adv->ncollect && adv->ncollect < adv->capcollect) {
    FemAdvectFacePoint *tight = realloc(adv->collect, adv->ncollect * sizeof(FemAdvectFacePoint));
    if (tight) {
      adv->collect = tight;
      adv->capcollect = adv->ncollect;
    }
  }
  adv->crevision = adv->revision;
  *pts = adv->collect;
  *n = adv->ncollect;
  PetscFunctionReturn(0);
}

/** The velocity's data on the current cells: the volume term's weights,
 *  the face list with its fluxes, and the cells' outflow. */
PetscErrorCode FemAdvectBuildVelocity(FemAdvect adv)
{
  p4est_t *p4est = adv->p4est;
  const int nb = adv->nb, npv = ipow(adv->nqv, DIM);
  PetscFunctionBeginUser;
  for (p4est_topidx_t t = p4est->first_local_tree; nb > 1 && t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      const size_t K = tr->quadrants_offset + i;
      for (int p = 0; p < npv; p++) {
        double xi[DIM], w, jinv[3][3], vel[3];
        FemAdvectPoint pt = {.tree = t, .quad = q, .cell = (p4est_locidx_t)K};
        tensor_point(adv->nqv, p, xi, &w);
        w *= FemAdvectCellMap(p4est->connectivity, t, q, xi, pt.x, jinv);
        for (int k = 0; k < DIM; k++) pt.eta[k] = 0.5 * (xi[k] + 1);
        adv->prob->velocity(adv->ctx, &pt, vel);
        for (int k = 0; k < DIM; k++) {
          double g = 0;
          for (int i2 = 0; i2 < DIM; i2++) g += jinv[k][i2] * vel[i2];
          adv->gvol[(K * npv + p) * DIM + k] = w * g;
        }
      }
    }
  }

  adv->nfaces = adv->nbfaces = 0;
  PetscCall(iterate_faces(adv));
  FemAdvectFreeCollect(adv);
  const int nqf = ipow(adv->nqf, DIM - 1);
  memset(adv->outflow, 0, sizeof(double) * ((size_t)adv->nlocal + 1));
  for (size_t e = 0; e < adv->nfaces; e++) {
    const Face *f = &adv->faces[e];
    for (int p = 0; p < nqf; p++) {
      if (f->bn[p] > 0 && f->a_local) adv->outflow[f->a] += f->bn[p];
      if (f->bn[p] < 0 && f->b_local) adv->outflow[f->b] -= f->bn[p];
    }
  }
  for (size_t e = 0; e < adv->nbfaces; e++)
    for (int p = 0; p < nqf; p++)
      if (adv->bfaces[e].bn[p] > 0) adv->outflow[adv->bfaces[e].a] += adv->bfaces[e].bn[p];
  adv->frevision = adv->revision;
  PetscFunctionReturn(0);
}
