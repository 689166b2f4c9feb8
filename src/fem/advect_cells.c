/*
 * The advection solver's cells (advect.h): their geometry (the tree map at
 * cell coordinates, mass matrices and their inverses), the ghost layer and
 * the per-forest arrays, rebuilt when the forest's revision changed, and
 * the ghost exchange of cell arrays.  Written for 2D; compiled again with
 * P4_TO_P8 for 3D.
 */
#include "fem/impl/advect.h"

#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "mesh/geom.h"

/** Physical point, |det| of d x / d xi, and the inverse of d x / d xi at
 *  cell coordinates xi of quadrant q in tree t. */
double FemAdvectCellMap(const p4est_connectivity_t *conn, p4est_topidx_t t, const p4est_quadrant_t *q, const double xi[DIM], double x[3],
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
void FemAdvectMassMatrix(FemAdvect adv, p4est_topidx_t t, const p4est_quadrant_t *q, double *m)
{
  const int nb = adv->nb, np = ipow(NQ_EXACT, DIM);
  for (int i = 0; i < nb * nb; i++) m[i] = 0;
  for (int p = 0; p < np; p++) {
    double xi[DIM], w, x[3], jinv[3][3], phi[FEM_ADVECT_NB];
    tensor_point(NQ_EXACT, p, xi, &w);
    w *= FemAdvectCellMap(adv->p4est->connectivity, t, q, xi, x, jinv);
    basis(nb, xi, phi);
    for (int i = 0; i < nb; i++)
      for (int j = 0; j < nb; j++) m[i * nb + j] += w * phi[i] * phi[j];
  }
}

/** Solves m x = b in place (b becomes x) by Gaussian elimination with
 *  partial pivoting; m is destroyed.  n <= FEM_ADVECT_NB. */
void FemAdvectSolveSmall(int n, double *m, double *b)
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

void FemAdvectFreeMesh(FemAdvect adv)
{
  FemAdvectFreeCollect(adv);
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

/** The ghost layer and the per-cell data of the current forest, without the
 *  velocity's: the face list waits for FemAdvectSyncMesh or FemAdvectVelocityChanged,
 *  so that a velocity computed on this forest (darcy-transport's pressure)
 *  is integrated once, not first as the stale one and again after. */
static PetscErrorCode build_cells(FemAdvect adv)
{
  p4est_t *p4est = adv->p4est;
  const int nb = adv->nb, npv = ipow(adv->nqv, DIM);
  PetscFunctionBeginUser;
  FemAdvectFreeMesh(adv);
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
      FemAdvectMassMatrix(adv, t, q, m);
      adv->vol[K] = m[0];
      for (int j = 0; j < nb; j++) adv->m0[K * nb + j] = m[j];
      double *mi = adv->minv + K * nb * nb;
      for (int j = 0; j < nb; j++) {
        double e[FEM_ADVECT_NB] = {0}, mc[FEM_ADVECT_NB * FEM_ADVECT_NB];
        e[j] = 1;
        memcpy(mc, m, sizeof(double) * nb * nb);
        FemAdvectSolveSmall(nb, mc, e);
        for (int i2 = 0; i2 < nb; i2++) mi[i2 * nb + j] = e[i2];
      }
    }
  }
  adv->revision = p4est->revision;
  adv->frevision = -1;
  adv->restricted = 0;
  PetscFunctionReturn(0);
}

/** The cells' data if the forest changed since they were built (its
 *  revision is the same on all ranks, so all ranks rebuild together):
 *  enough for the ghost exchange, the cell counts and the face points. */
PetscErrorCode FemAdvectSyncCells(FemAdvect adv)
{
  PetscFunctionBeginUser;
  if (adv->p4est->revision != adv->revision) {
    PetscCall(PetscLogEventBegin(adv->ev_setup, 0, 0, 0, 0));
    PetscCall(build_cells(adv));
    PetscCall(PetscLogEventEnd(adv->ev_setup, 0, 0, 0, 0));
  }
  PetscFunctionReturn(0);
}

/** All mesh data of the current forest, the velocity's included. */
PetscErrorCode FemAdvectSyncMesh(FemAdvect adv)
{
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncCells(adv));
  if (adv->frevision != adv->revision) {
    PetscCall(PetscLogEventBegin(adv->ev_setup, 0, 0, 0, 0));
    PetscCall(FemAdvectBuildVelocity(adv));
    PetscCall(PetscLogEventEnd(adv->ev_setup, 0, 0, 0, 0));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectMeshChanged(FemAdvect adv)
{
  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(adv->ev_setup, 0, 0, 0, 0));
  PetscCall(build_cells(adv));
  PetscCall(FemAdvectBuildVelocity(adv));
  PetscCall(PetscLogEventEnd(adv->ev_setup, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectVelocityChanged(FemAdvect adv)
{
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncCells(adv));
  PetscCall(PetscLogEventBegin(adv->ev_setup, 0, 0, 0, 0));
  PetscCall(FemAdvectBuildVelocity(adv));
  PetscCall(PetscLogEventEnd(adv->ev_setup, 0, 0, 0, 0));
  adv->restricted = 0;
  PetscFunctionReturn(0);
}

void FemAdvectExchange(FemAdvect adv, double *arr, void **mirrors, size_t size)
{
  p4est_ghost_exchange_custom(adv->p4est, adv->ghost, size, mirrors, arr + (size_t)adv->nlocal * (size / sizeof(double)));
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
  FemAdvectExchange(adv, arr, mirrors, nper * sizeof(double));
  PetscCall(PetscFree(mirrors));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectGhostExchange(FemAdvect adv, double *arr, size_t nper)
{
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncCells(adv));
  PetscCall(exchange_array(adv, arr, nper));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectCellCounts(FemAdvect adv, p4est_locidx_t *nlocal, p4est_locidx_t *nghost)
{
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncCells(adv));
  *nlocal = adv->nlocal;
  *nghost = adv->nghost;
  PetscFunctionReturn(0);
}
