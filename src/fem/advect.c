/*
 * Upwind DG advection on a p4est forest.  Written for 2D; compiled again
 * with P4_TO_P8 for 3D.
 *
 * Basis: 1 and the cell reference coordinates xi_k in [-1,1], i.e. P1 in
 * the tree's reference coordinates.  Because a quadrant is an affine image
 * of its parent in those coordinates, refinement is an exact restriction
 * and coarsening an exact L2 projection: both conserve the integral of u.
 *
 * Every face flux is computed once from a canonical side (the small side of
 * a hanging face, otherwise the smaller tree/quadrant), so the two cells of
 * a face, on one rank or on two, receive bitwise opposite mass fluxes.
 */

#include "fem/advect.h"
#include "fem/femutil.h"
#include "mesh/geom.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh/p4est_dim.h"

#define DIM P4EST_DIM
/* Most face quadrature points: 2 per tangential direction (degree 1). */
#define FQ_MAX (1 << (DIM - 1))
/* Points per direction for mass matrices, projections and errors: exact
 * for the (multi)linear tree maps times the degree-1 basis. */
#define NQ_EXACT 3

/** An interior face between a reference side a and the other side b.
 *  a, b index the state array: local cells first, then ghosts. */
typedef struct {
  p4est_locidx_t a, b;
  int a_local, b_local;
  double bn[FQ_MAX]; /* quadrature weight * b.n dS, n outward from a */
  double phia[FQ_MAX][FEM_ADVECT_NB], phib[FQ_MAX][FEM_ADVECT_NB];
} Face;

/** A domain boundary face of local cell a. */
typedef struct {
  p4est_locidx_t a;
  double bn[FQ_MAX];
  double phia[FQ_MAX][FEM_ADVECT_NB];
  double x[FQ_MAX][3];
} BFace;

struct _p_FemAdvect {
  p4est_t *p4est;
  const FemAdvectProblem *prob;
  void *ctx;
  FemAdvectOptions opt;
  int nb; /* basis functions in use: 1 or DIM + 1 */
  int nqf; /* face points per tangential direction */
  int nqv; /* volume points per direction for the volume term */
  double time;
  double inflow_local; /* net boundary inflow on this rank, all steps */

  /* mesh data, rebuilt by FemAdvectMeshChanged */
  p4est_ghost_t *ghost;
  p4est_locidx_t nlocal, nghost;
  double *vol; /* |K| */
  double *m0; /* first row of the mass matrix: integrals of phi_j */
  double *minv; /* inverse mass matrices, nb * nb per cell */
  double *gvol; /* volume-term weights: w |det J| J^{-1} b per point */
  double *outflow; /* integral of max(b.n, 0) over the cell boundary */
  Face *faces;
  size_t nfaces, capfaces;
  BFace *bfaces;
  size_t nbfaces, capbfaces;
  void **mirror_state, **mirror_mean;

  /* with an active region (FemAdvectSetActive), only its cells and their
   * face neighbours advect (active = 1), local then ghost */
  int restricted;
  double *active;
  double floor; /* FemAdvectSetActive: tracer that makes a cell outside advect */
  unsigned char *emit; /* per stage: active, or tracer above floor */

  /* work arrays */
  double *u, *u0, *rhs, *mean, *mn, *mx;
  FemAdvectCell **cells; /* user data of the local cells, in order */
  PetscErrorCode cb_err; /* first failure inside a p4est callback */
  int min_level, max_level; /* of the adaptation in progress */
  long revision;  /* of the forest the cells' data belong to */
  long frevision; /* of the forest the velocity's data belong to (-1: none) */

  /* FemAdvectFacePoints: the face iteration lists its points here, and the
   * next face list of the same forest (build_velocity) takes their
   * geometry from them, then frees them */
  int collecting;
  FemAdvectFacePoint *collect;
  size_t ncollect, capcollect;
  long crevision; /* of the forest the points belong to */
  size_t npoints; /* face points of the iteration so far: the next index */

  /* this rank's own work in time steps (thread CPU and wall seconds), and
   * the part of the steps spent in ghost exchanges, which wait on others */
  double work_cpu, work_wall, wait_cpu, wait_wall;
};

/* -log_view events, registered by the first FemAdvectCreate() */
static PetscLogEvent ev_setup, ev_advance, ev_adapt;

/* ---------------------------------------------------------------------- */
/* geometry                                                                */

/** Basis values at cell coordinates xi. */
static void basis(int nb, const double xi[DIM], double phi[FEM_ADVECT_NB])
{
  phi[0] = 1;
  for (int k = 0; k + 1 < nb; k++) phi[1 + k] = xi[k];
}

static double eval(int nb, const double *c, const double *phi)
{
  double u = 0;
  for (int j = 0; j < nb; j++) u += c[j] * phi[j];
  return u;
}

/** Iterates over the tensor points of an n-point rule in DIM directions:
 *  idx in [0, n^DIM) gives the point xi and weight w. */
static void tensor_point(int n, int idx, double xi[DIM], double *w)
{
  *w = 1;
  for (int k = 0; k < DIM; k++) {
    int i = idx % n;
    idx /= n;
    xi[k] = FemGaussX[n][i];
    *w *= FemGaussW[n][i];
  }
}

static int ipow(int b, int e)
{
  int r = 1;
  while (e-- > 0) r *= b;
  return r;
}

/** Physical point, |det| of d x / d xi, and the inverse of d x / d xi at
 *  cell coordinates xi of quadrant q in tree t. */
static double cell_map(const p4est_connectivity_t *conn, p4est_topidx_t t, const p4est_quadrant_t *q, const double xi[DIM], double x[3],
                       double jinv[3][3])
{
  double lo[3], h, r[3] = {0}, jac[3][3];
  AmrGeomQuadBox(q, lo, &h);
  for (int k = 0; k < DIM; k++) r[k] = lo[k] + 0.5 * (xi[k] + 1) * h;
  AmrGeomTreeMap(conn, t, r, x, jac);
  for (int i = 0; i < DIM; i++)
    for (int k = 0; k < DIM; k++) jac[i][k] *= 0.5 * h;
  return fabs(AmrGeomInvert(jac, jinv));
}

/** Mass matrix of quadrant q (nb x nb, row major). */
static void mass_matrix(FemAdvect adv, p4est_topidx_t t, const p4est_quadrant_t *q, double *m)
{
  const int nb = adv->nb, np = ipow(NQ_EXACT, DIM);
  for (int i = 0; i < nb * nb; i++) m[i] = 0;
  for (int p = 0; p < np; p++) {
    double xi[DIM], w, x[3], jinv[3][3], phi[FEM_ADVECT_NB];
    tensor_point(NQ_EXACT, p, xi, &w);
    w *= cell_map(adv->p4est->connectivity, t, q, xi, x, jinv);
    basis(nb, xi, phi);
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) m[i * nb + j] += w * phi[i] * phi[j];
  }
}

/** Solves m x = b in place (b becomes x) by Gaussian elimination with
 *  partial pivoting; m is destroyed.  n <= FEM_ADVECT_NB. */
static void solve_small(int n, double *m, double *b)
{
  for (int k = 0; k < n; k++) {
    int piv = k;
    for (int i = k + 1; i < n; i++)
      if (fabs(m[i * n + k]) > fabs(m[piv * n + k])) piv = i;
    if (piv != k) {
      for (int j = 0; j < n; j++) {
        double s = m[k * n + j];
        m[k * n + j] = m[piv * n + j];
        m[piv * n + j] = s;
      }
      double s = b[k];
      b[k] = b[piv];
      b[piv] = s;
    }
    for (int i = k + 1; i < n; i++) {
      double f = m[i * n + k] / m[k * n + k];
      for (int j = k; j < n; j++) m[i * n + j] -= f * m[k * n + j];
      b[i] -= f * b[k];
    }
  }
  for (int k = n - 1; k >= 0; k--) {
    for (int j = k + 1; j < n; j++) b[k] -= m[k * n + j] * b[j];
    b[k] /= m[k * n + k];
  }
}

/** L2 projection of exact(x, t) onto the basis of quadrant q. */
static void project_exact(FemAdvect adv, p4est_topidx_t t, const p4est_quadrant_t *q, double tm, double *c)
{
  const int nb = adv->nb, np = ipow(NQ_EXACT, DIM);
  double m[FEM_ADVECT_NB * FEM_ADVECT_NB];
  for (int i = 0; i < nb; i++) c[i] = 0;
  for (int p = 0; p < np; p++) {
    double xi[DIM], w, x[3], jinv[3][3], phi[FEM_ADVECT_NB];
    tensor_point(NQ_EXACT, p, xi, &w);
    w *= cell_map(adv->p4est->connectivity, t, q, xi, x, jinv);
    basis(nb, xi, phi);
    double u = adv->prob->exact(adv->ctx, x, tm);
    for (int i = 0; i < nb; i++) c[i] += w * u * phi[i];
  }
  mass_matrix(adv, t, q, m);
  solve_small(nb, m, c);
}

/* ---------------------------------------------------------------------- */
/* p4est callbacks: initial data and conservative projection              */

static void init_cell(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  (void)t;
  memset(q->p.user_data, 0, p4est->data_size);
}

double *FemAdvectCellExtra(FemAdvectCell *cell, int f) { return (double *)(cell + 1) + (size_t)f * FEM_ADVECT_NB; }

size_t FemAdvectCellBytes(const FemAdvectProblem *prob) { return sizeof(FemAdvectCell) + (size_t)prob->nextra * FEM_ADVECT_NB * sizeof(double); }

/** Cell coordinates in quadrant q of the point with cell coordinates xi in
 *  quadrant from (same tree). */
static void relative_xi(const p4est_quadrant_t *from, const double xi[DIM], const p4est_quadrant_t *q, double out[DIM])
{
  double lof[3], hf, lo[3], h;
  AmrGeomQuadBox(from, lof, &hf);
  AmrGeomQuadBox(q, lo, &h);
  for (int k = 0; k < DIM; k++) {
    double r = lof[k] + 0.5 * (xi[k] + 1) * hf;
    out[k] = 2 * (r - lo[k]) / h - 1;
  }
}

/** The coefficient arrays of a cell: the tracer's, then the extra fields'. */
static int cell_fields(FemAdvect adv, FemAdvectCell *d, double *f[1 + FEM_ADVECT_MAX_EXTRA])
{
  f[0] = d->c;
  for (int k = 0; k < adv->prob->nextra; k++) f[1 + k] = FemAdvectCellExtra(d, k);
  return 1 + adv->prob->nextra;
}

/** Scales the linear part of degree-1 coefficients c with mean um and
 *  centroid xibar (cell coordinates) so that the vertex values stay in
 *  [mn, mx]; keeps the mean. */
static void limit_cell(double *c, const double xibar[DIM], double um, double mn, double mx)
{
  double alpha = 1;
  const double tol = 1e-13 * (fabs(mx) + fabs(mn) + 1e-300);
  for (int v = 0; v < P4EST_CHILDREN; v++) {
    double d = 0;
    for (int k = 0; k < DIM; k++) d += c[1 + k] * (((v >> k) & 1 ? 1 : -1) - xibar[k]);
    if (d > tol)
      alpha = fmin(alpha, (mx - um) / d);
    else if (d < -tol)
      alpha = fmin(alpha, (mn - um) / d);
  }
  if (alpha >= 1) return;
  alpha = fmax(alpha, 0);
  double shift = 0;
  for (int k = 0; k < DIM; k++) {
    c[1 + k] *= alpha;
    shift += c[1 + k] * xibar[k];
  }
  c[0] = um - shift;
}

static void replace_cells(p4est_t *p4est, p4est_topidx_t t, int nout, p4est_quadrant_t *out[], int nin, p4est_quadrant_t *in[])
{
  FemAdvect adv = p4est->user_pointer;
  const int nb = adv->nb;
  double *pf[1 + FEM_ADVECT_MAX_EXTRA], *cf[1 + FEM_ADVECT_MAX_EXTRA];
  if (nout == 1) {
    /* refinement: the children restrict the parent's polynomials exactly */
    const int nf = cell_fields(adv, out[0]->p.user_data, pf);
    for (int i = 0; i < nin; i++) {
      FemAdvectCell *cd = in[i]->p.user_data;
      memcpy(cd, out[0]->p.user_data, p4est->data_size);
      cell_fields(adv, cd, cf);
      double xi0[DIM] = {0}, xi[DIM], phi[FEM_ADVECT_NB];
      relative_xi(in[i], xi0, out[0], xi);
      basis(nb, xi, phi);
      for (int f = 0; f < nf; f++) {
        cf[f][0] = eval(nb, pf[f], phi);
        for (int k = 1; k < nb; k++) cf[f][k] = 0.5 * pf[f][k];
      }
    }
    return;
  }
  /* coarsening: L2 projection of the children onto the parent, which keeps
   * each field's integral because the constant is in the parent's space */
  FemAdvectCell *pd = in[0]->p.user_data;
  const int np = ipow(NQ_EXACT, DIM), nf = cell_fields(adv, pd, pf);
  double rhs[1 + FEM_ADVECT_MAX_EXTRA][FEM_ADVECT_NB] = {{0}}, m[FEM_ADVECT_NB * FEM_ADVECT_NB];
  pd->indicator = 0;
  pd->load_type = 0;
  pd->mark = 0;
  for (int i = 0; i < nout; i++) {
    FemAdvectCell *cd = out[i]->p.user_data;
    if (cd->indicator > pd->indicator) pd->indicator = cd->indicator;
    if (cd->load_type > pd->load_type) pd->load_type = cd->load_type;
    cell_fields(adv, cd, cf);
    for (int p = 0; p < np; p++) {
      double xi[DIM], w, x[3], jinv[3][3], phi[FEM_ADVECT_NB], xp[DIM], php[FEM_ADVECT_NB];
      tensor_point(NQ_EXACT, p, xi, &w);
      w *= cell_map(p4est->connectivity, t, out[i], xi, x, jinv);
      basis(nb, xi, phi);
      relative_xi(out[i], xi, in[0], xp);
      basis(nb, xp, php);
      for (int f = 0; f < nf; f++) {
        const double u = eval(nb, cf[f], phi);
        for (int j = 0; j < nb; j++) rhs[f][j] += w * u * php[j];
      }
    }
  }
  mass_matrix(adv, t, in[0], m);
  for (int f = 0; f < nf; f++) {
    double mf[FEM_ADVECT_NB * FEM_ADVECT_NB];
    memcpy(mf, m, sizeof mf);
    solve_small(nb, mf, rhs[f]);
    for (int k = 0; k < FEM_ADVECT_NB; k++) pf[f][k] = k < nb ? rhs[f][k] : 0;
  }
  if (adv->opt.limiter && nb > 1) {
    /* the projection can leave its children's range at a vertex, and a
     * refinement (2:1 balance) right after would pass that on to the
     * means: limited to the children's means, as the time steps limit */
    double xibar[DIM], mean[1 + FEM_ADVECT_MAX_EXTRA] = {0}, mn[1 + FEM_ADVECT_MAX_EXTRA], mx[1 + FEM_ADVECT_MAX_EXTRA];
    for (int k = 0; k < DIM; k++) xibar[k] = m[1 + k] / m[0];
    for (int f = 0; f < nf; f++) {
      mn[f] = INFINITY;
      mx[f] = -INFINITY;
    }
    for (int i = 0; i < nout; i++) {
      double mc[FEM_ADVECT_NB * FEM_ADVECT_NB];
      cell_fields(adv, out[i]->p.user_data, cf);
      mass_matrix(adv, t, out[i], mc);
      for (int f = 0; f < nf; f++) {
        double um = 0;
        for (int j = 0; j < nb; j++) um += mc[j] * cf[f][j];
        um /= mc[0];
        mn[f] = fmin(mn[f], um);
        mx[f] = fmax(mx[f], um);
      }
    }
    for (int f = 0; f < nf; f++) {
      for (int j = 0; j < nb; j++) mean[f] += m[j] * pf[f][j];
      limit_cell(pf[f], xibar, mean[f] / m[0], mn[f], mx[f]);
    }
  }
}

/* ---------------------------------------------------------------------- */
/* mesh data                                                               */

/** Frees FemAdvectFacePoints' list. */
static void free_collect(FemAdvect adv)
{
  free(adv->collect);
  adv->collect = NULL;
  adv->ncollect = adv->capcollect = 0;
}

static void free_mesh(FemAdvect adv)
{
  free_collect(adv);
  if (adv->ghost) p4est_ghost_destroy(adv->ghost);
  adv->ghost = NULL;
  free(adv->vol);
  free(adv->m0);
  free(adv->minv);
  free(adv->gvol);
  free(adv->outflow);
  free(adv->faces);
  free(adv->bfaces);
  free(adv->mirror_state);
  free(adv->mirror_mean);
  free(adv->u);
  free(adv->u0);
  free(adv->rhs);
  free(adv->mean);
  free(adv->mn);
  free(adv->mx);
  free(adv->cells);
  free(adv->active);
  free(adv->emit);
  adv->cells = NULL;
  adv->active = NULL;
  adv->emit = NULL;
  adv->vol = adv->m0 = adv->minv = adv->gvol = adv->outflow = NULL;
  adv->faces = NULL;
  adv->bfaces = NULL;
  adv->mirror_state = adv->mirror_mean = NULL;
  adv->u = adv->u0 = adv->rhs = adv->mean = adv->mn = adv->mx = NULL;
  adv->nfaces = adv->capfaces = adv->nbfaces = adv->capbfaces = 0;
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

static void exchange(FemAdvect adv, double *arr, void **mirrors, size_t size)
{
  double c0, w0, c1, w1;
  FemClocks(&c0, &w0);
  p4est_ghost_exchange_custom(adv->p4est, adv->ghost, size, mirrors, arr + (size_t)adv->nlocal * (size / sizeof(double)));
  FemClocks(&c1, &w1);
  adv->wait_cpu += c1 - c0;
  adv->wait_wall += w1 - w0;
}

/** Ghost exchange of nper doubles per cell of arr (local, then ghost). */
static PetscErrorCode exchange_array(FemAdvect adv, double *arr, size_t nper)
{
  const size_t nm = adv->ghost->mirrors.elem_count;
  void **mirrors;
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nm + 1, &mirrors));
  for (size_t m = 0; m < nm; m++) {
    const p4est_quadrant_t *mq = p4est_quadrant_array_index(&adv->ghost->mirrors, m);
    mirrors[m] = arr + (size_t)mq->p.piggy3.local_num * nper;
  }
  exchange(adv, arr, mirrors, nper * sizeof(double));
  PetscCall(PetscFree(mirrors));
  PetscFunctionReturn(0);
}

/** The active region from its seed cells: they and their face neighbours.
 *  A face whose upwind cell lies outside carries no flux, on both sides, so
 *  the region saves work without losing conservation. */
static PetscErrorCode sync_mesh(FemAdvect adv);
static PetscErrorCode sync_cells(FemAdvect adv);

PetscErrorCode FemAdvectSetActive(FemAdvect adv, const int *seed, double floor)
{
  double *region = adv->mn; /* local work space */
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  adv->restricted = seed != NULL;
  adv->floor = floor;
  if (!seed) PetscFunctionReturn(0);
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) adv->active[K] = region[K] = seed[K] != 0;
  PetscCall(exchange_array(adv, adv->active, 1));
  for (size_t e = 0; e < adv->nfaces; e++) {
    const Face *f = &adv->faces[e];
    if (f->a_local && adv->active[f->b]) region[f->a] = 1;
    if (f->b_local && adv->active[f->a]) region[f->b] = 1;
  }
  memcpy(adv->active, region, sizeof(double) * (size_t)adv->nlocal);
  PetscCall(exchange_array(adv, adv->active, 1));
  PetscFunctionReturn(0);
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
  PetscCall(sync_cells(adv));
  free_collect(adv);
  adv->collecting = 1;
  ierr = iterate_faces(adv);
  adv->collecting = 0;
  if (ierr) free_collect(adv);
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

/** The ghost layer and the per-cell data of the current forest, without the
 *  velocity's: the face list waits for sync_mesh or FemAdvectVelocityChanged,
 *  so that a velocity computed on this forest (darcy-transport's pressure)
 *  is integrated once, not first as the stale one and again after. */
static PetscErrorCode build_cells(FemAdvect adv)
{
  p4est_t *p4est = adv->p4est;
  const int nb = adv->nb, npv = ipow(adv->nqv, DIM);
  PetscFunctionBeginUser;
  free_mesh(adv);
  adv->ghost = p4est_ghost_new(p4est, P4EST_CONNECT_FACE);
  adv->nlocal = p4est->local_num_quadrants;
  adv->nghost = (p4est_locidx_t)adv->ghost->ghosts.elem_count;
  const size_t nl = (size_t)adv->nlocal, nt = nl + (size_t)adv->nghost;
  const size_t nm = adv->ghost->mirrors.elem_count;
  adv->vol = malloc((nl + 1) * sizeof(double));
  adv->m0 = malloc((nl * nb + 1) * sizeof(double));
  adv->minv = malloc((nl * nb * nb + 1) * sizeof(double));
  adv->gvol = malloc((nl * npv * DIM + 1) * sizeof(double));
  adv->outflow = malloc((nl + 1) * sizeof(double));
  adv->mirror_state = malloc((nm + 1) * sizeof(void *));
  adv->mirror_mean = malloc((nm + 1) * sizeof(void *));
  adv->u = malloc((nt * nb + 1) * sizeof(double));
  adv->u0 = malloc((nl * nb + 1) * sizeof(double));
  adv->rhs = malloc((nl * nb + 1) * sizeof(double));
  adv->mean = malloc((nt + 1) * sizeof(double));
  adv->mn = malloc((nl + 1) * sizeof(double));
  adv->mx = malloc((nl + 1) * sizeof(double));
  adv->cells = malloc((nl + 1) * sizeof(FemAdvectCell *));
  adv->active = malloc((nt + 1) * sizeof(double));
  adv->emit = malloc(nt + 1);
  PetscCheck(adv->cells && adv->active && adv->emit && adv->vol && adv->m0 && adv->minv && adv->gvol && adv->outflow && adv->mirror_state && adv->mirror_mean &&
                 adv->u && adv->u0 && adv->rhs && adv->mean && adv->mn && adv->mx,
             PETSC_COMM_SELF, PETSC_ERR_MEM, "advect: out of memory");
  for (size_t m = 0; m < nm; m++) {
    const p4est_quadrant_t *mq = p4est_quadrant_array_index(&adv->ghost->mirrors, m);
    adv->mirror_state[m] = adv->u + (size_t)mq->p.piggy3.local_num * nb;
    adv->mirror_mean[m] = adv->mean + mq->p.piggy3.local_num;
  }

  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      const size_t K = tr->quadrants_offset + i;
      double m[FEM_ADVECT_NB * FEM_ADVECT_NB];
      adv->cells[K] = q->p.user_data;
      mass_matrix(adv, t, q, m);
      adv->vol[K] = m[0];
      for (int j = 0; j < nb; j++) adv->m0[K * nb + j] = m[j];
      double *mi = adv->minv + K * nb * nb;
      for (int j = 0; j < nb; j++) {
        double e[FEM_ADVECT_NB] = {0}, mc[FEM_ADVECT_NB * FEM_ADVECT_NB];
        e[j] = 1;
        memcpy(mc, m, sizeof(double) * nb * nb);
        solve_small(nb, mc, e);
        for (int i2 = 0; i2 < nb; i2++) mi[i2 * nb + j] = e[i2];
      }
    }
  }
  adv->revision = p4est->revision;
  adv->frevision = -1;
  adv->restricted = 0;
  PetscFunctionReturn(0);
}

/** The velocity's data on the current cells: the volume term's weights,
 *  the face list with its fluxes, and the cells' outflow. */
static PetscErrorCode build_velocity(FemAdvect adv)
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
        w *= cell_map(p4est->connectivity, t, q, xi, pt.x, jinv);
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
  free_collect(adv);
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

/** The cells' data if the forest changed since they were built (its
 *  revision is the same on all ranks, so all ranks rebuild together):
 *  enough for the ghost exchange, the cell counts and the face points. */
static PetscErrorCode sync_cells(FemAdvect adv)
{
  PetscFunctionBeginUser;
  if (adv->p4est->revision != adv->revision) {
    PetscCall(PetscLogEventBegin(ev_setup, 0, 0, 0, 0));
    PetscCall(build_cells(adv));
    PetscCall(PetscLogEventEnd(ev_setup, 0, 0, 0, 0));
  }
  PetscFunctionReturn(0);
}

/** All mesh data of the current forest, the velocity's included. */
static PetscErrorCode sync_mesh(FemAdvect adv)
{
  PetscFunctionBeginUser;
  PetscCall(sync_cells(adv));
  if (adv->frevision != adv->revision) {
    PetscCall(PetscLogEventBegin(ev_setup, 0, 0, 0, 0));
    PetscCall(build_velocity(adv));
    PetscCall(PetscLogEventEnd(ev_setup, 0, 0, 0, 0));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectMeshChanged(FemAdvect adv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(ev_setup, 0, 0, 0, 0));
  PetscCall(build_cells(adv));
  PetscCall(build_velocity(adv));
  PetscCall(PetscLogEventEnd(ev_setup, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectVelocityChanged(FemAdvect adv)
{
  PetscFunctionBeginUser;
  PetscCall(sync_cells(adv));
  PetscCall(PetscLogEventBegin(ev_setup, 0, 0, 0, 0));
  PetscCall(build_velocity(adv));
  PetscCall(PetscLogEventEnd(ev_setup, 0, 0, 0, 0));
  adv->restricted = 0;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------------- */
/* time stepping                                                           */

PetscErrorCode FemAdvectGhostExchange(FemAdvect adv, double *arr, size_t nper)
{
  PetscFunctionBeginUser;
  PetscCall(sync_cells(adv));
  PetscCall(exchange_array(adv, arr, nper));
  PetscFunctionReturn(0);
}

p4est_t *FemAdvectForest(FemAdvect adv) { return adv->p4est; }

PetscErrorCode FemAdvectCellCounts(FemAdvect adv, p4est_locidx_t *nlocal, p4est_locidx_t *nghost)
{
  PetscFunctionBeginUser;
  PetscCall(sync_cells(adv));
  *nlocal = adv->nlocal;
  *nghost = adv->nghost;
  PetscFunctionReturn(0);
}

/** M^{-1} times the DG residual of state u at time t; returns the boundary
 *  outflow integral of this rank. */
static double residual(FemAdvect adv, double t)
{
  const int nb = adv->nb, npv = ipow(adv->nqv, DIM);
  const int nqf = ipow(adv->nqf, DIM - 1);
  const double *u = adv->u;
  double *r = adv->rhs, outflow = 0;
  memset(r, 0, sizeof(double) * (size_t)adv->nlocal * nb);
  double phiv[1 << DIM][FEM_ADVECT_NB]; /* basis at the volume points */
  for (int p = 0; nb > 1 && p < npv; p++) {
    double xi[DIM], w;
    tensor_point(adv->nqv, p, xi, &w);
    basis(nb, xi, phiv[p]);
  }
  const int restricted = adv->restricted;
  const unsigned char *emit = adv->emit;
  if (restricted)
    for (p4est_locidx_t K = 0; K < adv->nlocal + adv->nghost; K++) {
      int e = adv->active[K] != 0;
      for (int j = 0; j < nb && !e; j++) e = fabs(u[(size_t)K * nb + j]) > adv->floor;
      adv->emit[K] = (unsigned char)e;
    }
  if (nb > 1)
    for (p4est_locidx_t K = 0; K < adv->nlocal; K++)
      for (int p = 0; p < npv && (!restricted || emit[K]); p++) {
        double uq = eval(nb, u + (size_t)K * nb, phiv[p]);
        const double *g = adv->gvol + ((size_t)K * npv + p) * DIM;
        for (int k = 0; k < DIM; k++) r[(size_t)K * nb + 1 + k] += uq * g[k];
      }
  for (size_t e = 0; e < adv->nfaces; e++) {
    const Face *f = &adv->faces[e];
    const double *ua = u + (size_t)f->a * nb, *ub = u + (size_t)f->b * nb;
    for (int p = 0; p < nqf; p++) {
      if (restricted && !emit[f->bn[p] > 0 ? f->a : f->b]) continue;
      double flux = f->bn[p] * (f->bn[p] > 0 ? eval(nb, ua, f->phia[p]) : eval(nb, ub, f->phib[p]));
      if (f->a_local)
        for (int i = 0; i < nb; i++) r[(size_t)f->a * nb + i] -= flux * f->phia[p][i];
      if (f->b_local)
        for (int i = 0; i < nb; i++) r[(size_t)f->b * nb + i] += flux * f->phib[p][i];
    }
  }
  for (size_t e = 0; e < adv->nbfaces; e++) {
    const BFace *f = &adv->bfaces[e];
    const double *ua = u + (size_t)f->a * nb;
    for (int p = 0; p < nqf && (!restricted || emit[f->a]); p++) {
      double uu = f->bn[p] > 0 ? eval(nb, ua, f->phia[p]) : adv->prob->exact(adv->ctx, f->x[p], t);
      double flux = f->bn[p] * uu;
      outflow += flux;
      for (int i = 0; i < nb; i++) r[(size_t)f->a * nb + i] -= flux * f->phia[p][i];
    }
  }
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    double tmp[FEM_ADVECT_NB];
    const double *mi = adv->minv + (size_t)K * nb * nb;
    for (int i = 0; i < nb; i++) {
      tmp[i] = 0;
      for (int j = 0; j < nb; j++) tmp[i] += mi[i * nb + j] * r[(size_t)K * nb + j];
    }
    memcpy(r + (size_t)K * nb, tmp, sizeof(double) * nb);
  }
  return outflow;
}

/** Cell means of the local cells of state u, then exchanged to ghosts. */
static void compute_means(FemAdvect adv)
{
  const int nb = adv->nb;
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    double s = 0;
    for (int j = 0; j < nb; j++) s += adv->m0[(size_t)K * nb + j] * adv->u[(size_t)K * nb + j];
    adv->mean[K] = s / adv->vol[K];
  }
  exchange(adv, adv->mean, adv->mirror_mean, sizeof(double));
}

/** Barth-Jespersen: scales the linear part of every cell so that its
 *  vertex values stay within the means of the cell and its face
 *  neighbours; keeps every cell mean, hence conservative. */
static void limit(FemAdvect adv)
{
  const int nb = adv->nb;
  compute_means(adv);
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) adv->mn[K] = adv->mx[K] = adv->mean[K];
  for (size_t e = 0; e < adv->nfaces; e++) {
    const Face *f = &adv->faces[e];
    double ma = adv->mean[f->a], mb = adv->mean[f->b];
    if (f->a_local) {
      adv->mn[f->a] = fmin(adv->mn[f->a], mb);
      adv->mx[f->a] = fmax(adv->mx[f->a], mb);
    }
    if (f->b_local) {
      adv->mn[f->b] = fmin(adv->mn[f->b], ma);
      adv->mx[f->b] = fmax(adv->mx[f->b], ma);
    }
  }
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    double xibar[DIM];
    for (int k = 0; k < DIM; k++) xibar[k] = adv->m0[(size_t)K * nb + 1 + k] / adv->vol[K];
    limit_cell(adv->u + (size_t)K * nb, xibar, adv->mean[K], adv->mn[K], adv->mx[K]);
  }
}

PetscErrorCode FemAdvectTimeStep(FemAdvect adv, double *dt)
{
  double local = INFINITY;
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++)
    if (adv->outflow[K] > 0) local = fmin(local, adv->opt.cfl * adv->vol[K] / ((2 * adv->opt.degree + 1) * adv->outflow[K]));
  PetscCallMPI(MPI_Allreduce(&local, dt, 1, MPI_DOUBLE, MPI_MIN, adv->p4est->mpicomm));
  PetscFunctionReturn(0);
}

/** Copies the state between the quadrant data and the work array. */
static void state_io(FemAdvect adv, int to_cells)
{
  const size_t bytes = sizeof(double) * adv->nb;
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    double *s = adv->u + (size_t)K * adv->nb;
    if (to_cells)
      memcpy(adv->cells[K]->c, s, bytes);
    else
      memcpy(s, adv->cells[K]->c, bytes);
  }
}

/** One SSP-RK step in Shu-Osher form, tracking the boundary inflow with
 *  the same convex combinations so that mass balance holds exactly. */
static void rk_step(FemAdvect adv, double dt)
{
  static const double a2[2] = {0, 0.5}, a3[3] = {0, 0.75, 1.0 / 3};
  static const double c2[2] = {0, 1}, c3[3] = {0, 1, 0.5};
  const int ns = adv->opt.rk_stages, nb = adv->nb;
  const double *a = ns == 2 ? a2 : a3, *ct = ns == 2 ? c2 : c3;
  const size_t n = (size_t)adv->nlocal * nb;
  double phi = 0; /* outflow accumulated by the stages */
  /* a step's own work is its time minus its waits in ghost exchanges:
   * MPI spins while it waits, so CPU time alone would count them too */
  double c0, w0, c1, w1;
  const double waitc = adv->wait_cpu, waitw = adv->wait_wall;
  FemClocks(&c0, &w0);
  memcpy(adv->u0, adv->u, n * sizeof(double));
  for (int s = 0; s < ns; s++) {
    exchange(adv, adv->u, adv->mirror_state, nb * sizeof(double));
    double out = residual(adv, adv->time + ct[s] * dt);
    for (size_t i = 0; i < n; i++) adv->u[i] = a[s] * adv->u0[i] + (1 - a[s]) * (adv->u[i] + dt * adv->rhs[i]);
    phi = (1 - a[s]) * (phi + dt * out);
    if (adv->opt.limiter && nb > 1) limit(adv);
  }
  adv->inflow_local -= phi;
  FemClocks(&c1, &w1);
  adv->work_cpu += (c1 - c0) - (adv->wait_cpu - waitc);
  adv->work_wall += (w1 - w0) - (adv->wait_wall - waitw);
}

PetscErrorCode FemAdvectAdvance(FemAdvect adv, double t_end, int nsteps, int *taken)
{
  double dt;
  int n = 0;
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  PetscCall(PetscLogEventBegin(ev_advance, 0, 0, 0, 0));
  PetscCall(FemAdvectTimeStep(adv, &dt));
  state_io(adv, 0);
  /* a coarsened cell's L2 projection can undershoot its children's
   * bounds: limited again, every stage starts from a limited state, which
   * keeps the means within the data's range */
  if (adv->opt.limiter && adv->nb > 1) limit(adv);
  while (n < nsteps && adv->time < t_end) {
    double h = dt;
    int last = adv->time + h >= t_end - 1e-12 * h;
    if (last) h = t_end - adv->time;
    rk_step(adv, h);
    adv->time = last ? t_end : adv->time + h;
    n++;
  }
  state_io(adv, 1);
  if (taken) *taken = n;
  PetscCall(PetscLogEventEnd(ev_advance, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

double FemAdvectTime(FemAdvect adv) { return adv->time; }

void FemAdvectGetHistory(FemAdvect adv, double *time, double *inflow_local)
{
  *time = adv->time;
  *inflow_local = adv->inflow_local;
}

void FemAdvectSetHistory(FemAdvect adv, double time, double inflow_local)
{
  adv->time = time;
  adv->inflow_local = inflow_local;
}

void FemAdvectWorkTime(FemAdvect adv, double *cpu, double *wall)
{
  *cpu = adv->work_cpu;
  *wall = adv->work_wall;
}

/* ---------------------------------------------------------------------- */
/* diagnostics                                                             */

PetscErrorCode FemAdvectMass(FemAdvect adv, double *mass, double *inflow)
{
  const int nb = adv->nb;
  double loc[2] = {0, adv->inflow_local}, glob[2];
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  state_io(adv, 0);
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++)
    for (int j = 0; j < nb; j++) loc[0] += adv->m0[(size_t)K * nb + j] * adv->u[(size_t)K * nb + j];
  PetscCallMPI(MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_SUM, adv->p4est->mpicomm));
  *mass = glob[0];
  if (inflow) *inflow = glob[1];
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectExtraMass(FemAdvect adv, int f, double *mass)
{
  const int nb = adv->nb;
  double loc = 0;
  PetscFunctionBeginUser;
  PetscCheck(f >= 0 && f < adv->prob->nextra, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "extra field %d of %d", f, adv->prob->nextra);
  PetscCall(sync_mesh(adv));
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    const double *c = FemAdvectCellExtra(adv->cells[K], f);
    for (int j = 0; j < nb; j++) loc += adv->m0[(size_t)K * nb + j] * c[j];
  }
  PetscCallMPI(MPI_Allreduce(&loc, mass, 1, MPI_DOUBLE, MPI_SUM, adv->p4est->mpicomm));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectCellCentroids(FemAdvect adv, double *xibar)
{
  const int nb = adv->nb;
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++)
    for (int k = 0; k < DIM; k++) xibar[(size_t)K * DIM + k] = nb > 1 ? adv->m0[(size_t)K * nb + 1 + k] / adv->vol[K] : 0;
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectL2Error(FemAdvect adv, double *err)
{
  p4est_t *p4est = adv->p4est;
  const int nb = adv->nb, np = ipow(NQ_EXACT, DIM);
  double loc = 0, glob;
  PetscFunctionBeginUser;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      const FemAdvectCell *d = q->p.user_data;
      for (int p = 0; p < np; p++) {
        double xi[DIM], w, x[3], jinv[3][3], phi[FEM_ADVECT_NB];
        tensor_point(NQ_EXACT, p, xi, &w);
        w *= cell_map(p4est->connectivity, t, q, xi, x, jinv);
        basis(nb, xi, phi);
        double e = eval(nb, d->c, phi) - adv->prob->exact(adv->ctx, x, adv->time);
        loc += w * e * e;
      }
    }
  }
  PetscCallMPI(MPI_Allreduce(&loc, &glob, 1, MPI_DOUBLE, MPI_SUM, p4est->mpicomm));
  *err = sqrt(glob);
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectCellMeans(FemAdvect adv, double *values)
{
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  state_io(adv, 0);
  compute_means(adv);
  memcpy(values, adv->mean, sizeof(double) * (size_t)adv->nlocal);
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectCornerValues(FemAdvect adv, double **values)
{
  const int nb = adv->nb;
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  PetscCall(PetscMalloc1((size_t)adv->nlocal * P4EST_CHILDREN + 1, values));
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    const double *c = adv->cells[K]->c;
    for (int v = 0; v < P4EST_CHILDREN; v++) {
      /* corner v sits at xi_k = -1 or +1 by bit k of v */
      double u = c[0];
      for (int k = 0; k + 1 < nb; k++) u += (v >> k & 1) ? c[1 + k] : -c[1 + k];
      (*values)[(size_t)K * P4EST_CHILDREN + v] = u;
    }
  }
  PetscFunctionReturn(0);
}

/** Global range of the cell means of the tracer (f < 0) or of extra field f. */
static PetscErrorCode mean_range(FemAdvect adv, int f, double *umin, double *umax)
{
  const int nb = adv->nb;
  double loc[2] = {INFINITY, INFINITY}, glob[2];
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    const double *c = f < 0 ? adv->cells[K]->c : FemAdvectCellExtra(adv->cells[K], f);
    double m = 0;
    for (int j = 0; j < nb; j++) m += adv->m0[(size_t)K * nb + j] * c[j];
    m /= adv->vol[K];
    loc[0] = fmin(loc[0], m);
    loc[1] = fmin(loc[1], -m);
  }
  PetscCallMPI(MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MIN, adv->p4est->mpicomm));
  *umin = glob[0];
  *umax = -glob[1];
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectMeanRange(FemAdvect adv, double *umin, double *umax)
{
  PetscFunctionBeginUser;
  PetscCall(mean_range(adv, -1, umin, umax));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectExtraMeanRange(FemAdvect adv, int f, double *umin, double *umax)
{
  PetscFunctionBeginUser;
  PetscCheck(f >= 0 && f < adv->prob->nextra, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "extra field %d of %d", f, adv->prob->nextra);
  PetscCall(mean_range(adv, f, umin, umax));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectPointRange(FemAdvect adv, double *umin, double *umax)
{
  const int nb = adv->nb, n = adv->nqf, npv = ipow(n, DIM);
  double loc[2] = {INFINITY, INFINITY}, glob[2];
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    const double *c = adv->cells[K]->c;
    for (int p = 0; p < npv; p++) {
      double xi[DIM], w, phi[FEM_ADVECT_NB];
      tensor_point(n, p, xi, &w);
      /* the volume point, then its projections onto the faces across
       * each direction: the face rule's points */
      for (int f = -1; f < 2 * DIM; f++) {
        double xf[DIM];
        for (int k = 0; k < DIM; k++) xf[k] = xi[k];
        if (f >= 0) xf[f / 2] = f % 2 ? 1 : -1;
        basis(nb, xf, phi);
        const double u = eval(nb, c, phi);
        loc[0] = fmin(loc[0], u);
        loc[1] = fmin(loc[1], -u);
      }
    }
  }
  PetscCallMPI(MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MIN, adv->p4est->mpicomm));
  *umin = glob[0];
  *umax = -glob[1];
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectFluxDivergence(FemAdvect adv, double *div)
{
  const int nqf = ipow(adv->nqf, DIM - 1);
  double *sum, loc[2] = {0, 0}, glob[2];
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  PetscCall(PetscCalloc1((size_t)adv->nlocal + 1, &sum));
  for (size_t e = 0; e < adv->nfaces; e++) {
    const Face *f = &adv->faces[e];
    double F = 0;
    for (int p = 0; p < nqf; p++) F += f->bn[p];
    if (f->a_local) sum[f->a] += F;
    if (f->b_local) sum[f->b] -= F;
    loc[1] = fmax(loc[1], fabs(F));
  }
  for (size_t e = 0; e < adv->nbfaces; e++) {
    double F = 0;
    for (int p = 0; p < nqf; p++) F += adv->bfaces[e].bn[p];
    sum[adv->bfaces[e].a] += F;
    loc[1] = fmax(loc[1], fabs(F));
  }
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) loc[0] = fmax(loc[0], fabs(sum[K]));
  PetscCall(PetscFree(sum));
  PetscCallMPI(MPI_Allreduce(loc, glob, 2, MPI_DOUBLE, MPI_MAX, adv->p4est->mpicomm));
  *div = glob[1] > 0 ? glob[0] / glob[1] : 0;
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------------- */
/* adaptation                                                              */

PetscErrorCode FemAdvectIndicator(FemAdvect adv)
{
  const int nb = adv->nb;
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  state_io(adv, 0);
  compute_means(adv);
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    double v = 0;
    for (int k = 1; k < nb; k++) v += fabs(adv->u[(size_t)K * nb + k]);
    adv->mx[K] = 2 * v; /* variation of the linear part across the cell */
  }
  for (size_t e = 0; e < adv->nfaces; e++) {
    const Face *f = &adv->faces[e];
    double j = fabs(adv->mean[f->a] - adv->mean[f->b]);
    if (f->a_local) adv->mx[f->a] = fmax(adv->mx[f->a], j);
    if (f->b_local) adv->mx[f->b] = fmax(adv->mx[f->b], j);
  }
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) adv->cells[K]->indicator = adv->mx[K];
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectClassify(FemAdvect adv, double threshold)
{
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  state_io(adv, 0);
  compute_means(adv);
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) adv->cells[K]->load_type = adv->mean[K] > threshold;
  PetscFunctionReturn(0);
}

static int refine_cb(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  FemAdvect adv = p4est->user_pointer;
  const FemAdvectCell *d = q->p.user_data;
  (void)t;
  return q->level < adv->max_level && d->mark > 0;
}

static int coarsen_cb(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q[])
{
  FemAdvect adv = p4est->user_pointer;
  (void)t;
  if (q[0]->level <= adv->min_level) return 0;
  for (int i = 0; i < P4EST_CHILDREN; i++)
    if (((const FemAdvectCell *)q[i]->p.user_data)->mark >= 0) return 0;
  return 1;
}

PetscErrorCode FemAdvectAdapt(FemAdvect adv, const signed char *marks, int min_level, int max_level)
{
  p4est_t *p4est = adv->p4est;
  void *saved = p4est->user_pointer;
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  PetscCall(PetscLogEventBegin(ev_adapt, 0, 0, 0, 0));
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) adv->cells[K]->mark = marks[K];
  adv->min_level = min_level;
  adv->max_level = max_level;
  p4est->user_pointer = adv;
  p4est_refine_ext(p4est, 0, max_level, refine_cb, NULL, replace_cells);
  p4est_coarsen_ext(p4est, 0, 0, coarsen_cb, NULL, replace_cells);
  /* corner balance, which a continuous solver on the same forest (a
   * pressure for the velocity) needs; the DG scheme itself would do with
   * faces */
  p4est_balance_ext(p4est, P4EST_CONNECT_FULL, NULL, replace_cells);
  p4est->user_pointer = saved;
  PetscCall(PetscLogEventEnd(ev_adapt, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* ---------------------------------------------------------------------- */
/* set-up                                                                  */

PetscErrorCode FemAdvectCreate(p4est_t *p4est, const FemAdvectProblem *prob, void *ctx, const FemAdvectOptions *opt, FemAdvect *out)
{
  FemAdvect adv;
  static PetscClassId classid;
  PetscFunctionBeginUser;
  if (!classid) {
    PetscCall(PetscClassIdRegister("Advection", &classid));
    PetscCall(PetscLogEventRegister("FemAdvectSetup", classid, &ev_setup));
    PetscCall(PetscLogEventRegister("FemAdvectAdvance", classid, &ev_advance));
    PetscCall(PetscLogEventRegister("FemAdvectAdapt", classid, &ev_adapt));
  }
  PetscCheck(prob->nextra >= 0 && prob->nextra <= FEM_ADVECT_MAX_EXTRA, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%d extra fields (at most %d)", prob->nextra,
             FEM_ADVECT_MAX_EXTRA);
  PetscCall(PetscCalloc1(1, &adv));
  adv->p4est = p4est;
  adv->prob = prob;
  adv->ctx = ctx;
  adv->opt = *opt;
  adv->nb = opt->degree ? FEM_ADVECT_NB : 1;
  adv->nqf = prob->face_flux ? 2 : opt->degree + 1;
  adv->nqv = opt->degree + 1;
  void *saved = p4est->user_pointer;
  p4est_reset_data(p4est, FemAdvectCellBytes(prob), init_cell, saved);
  PetscCall(FemAdvectMeshChanged(adv));
  PetscCall(FemAdvectProjectExact(adv));
  *out = adv;
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectProjectExact(FemAdvect adv)
{
  p4est_t *p4est = adv->p4est;
  PetscFunctionBeginUser;
  PetscCall(sync_mesh(adv));
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      project_exact(adv, t, q, adv->time, adv->cells[tr->quadrants_offset + i]->c);
    }
  }
  if (adv->opt.limiter && adv->nb > 1) {
    state_io(adv, 0);
    limit(adv);
    state_io(adv, 1);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectDestroy(FemAdvect *adv)
{
  PetscFunctionBeginUser;
  if (!*adv) PetscFunctionReturn(0);
  free_mesh(*adv);
  PetscCall(PetscFree(*adv));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectCellTypes(p4est_t *p4est, int *types)
{
  PetscFunctionBeginUser;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++)
      types[tr->quadrants_offset + i] = ((const FemAdvectCell *)p4est_quadrant_array_index(&tr->quadrants, i)->p.user_data)->load_type;
  }
  PetscFunctionReturn(0);
}
