/*
 * Adaptation of the advection solver's forest (advect.h): the jump
 * indicator, the load classification, and refine, coarsen and 2:1 balance
 * with the conservative projection of every field: a child restricts its
 * parent's polynomials exactly, a parent is the L2 projection of its
 * children, limited to their means.  Written for 2D; compiled again with
 * P4_TO_P8 for 3D.
 */
#include "fem/impl/advect.h"

#include <math.h>
#include <string.h>

#include "mesh/geom.h"

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
      w *= FemAdvectCellMap(p4est->connectivity, t, out[i], xi, x, jinv);
      basis(nb, xi, phi);
      relative_xi(out[i], xi, in[0], xp);
      basis(nb, xp, php);
      for (int f = 0; f < nf; f++) {
        const double u = eval(nb, cf[f], phi);
        for (int j = 0; j < nb; j++) rhs[f][j] += w * u * php[j];
      }
    }
  }
  FemAdvectMassMatrix(adv, t, in[0], m);
  for (int f = 0; f < nf; f++) {
    double mf[FEM_ADVECT_NB * FEM_ADVECT_NB];
    memcpy(mf, m, sizeof mf);
    FemAdvectSolveSmall(nb, mf, rhs[f]);
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
      FemAdvectMassMatrix(adv, t, out[i], mc);
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
      FemAdvectLimitCell(pf[f], xibar, mean[f] / m[0], mn[f], mx[f]);
    }
  }
}

PetscErrorCode FemAdvectIndicator(FemAdvect adv)
{
  const int nb = adv->nb;
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncMesh(adv));
  FemAdvectStateIO(adv, 0);
  FemAdvectComputeMeans(adv);
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
  PetscCall(FemAdvectSyncMesh(adv));
  FemAdvectStateIO(adv, 0);
  FemAdvectComputeMeans(adv);
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
  PetscCall(FemAdvectSyncMesh(adv));
  PetscCall(PetscLogEventBegin(adv->ev_adapt, 0, 0, 0, 0));
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
  PetscCall(PetscLogEventEnd(adv->ev_adapt, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}
