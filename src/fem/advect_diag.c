/*
 * What the advection solver reports (advect.h): the integrals of the
 * fields and the boundary inflow, the L2 error, the ranges of the cell
 * means and of the point values, the cell means, centroids and corner
 * values for output, and the discrete divergence of the face fluxes.
 * Written for 2D; compiled again with P4_TO_P8 for 3D.
 */
#include "fem/impl/advect.h"

#include <math.h>
#include <string.h>

PetscErrorCode FemAdvectMass(FemAdvect adv, double *mass, double *inflow)
{
  const int nb = adv->nb;
  double loc[2] = {0, adv->inflow_local}, glob[2];
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncMesh(adv));
  FemAdvectStateIO(adv, 0);
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
  PetscCall(FemAdvectSyncMesh(adv));
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
  PetscCall(FemAdvectSyncMesh(adv));
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
        w *= FemAdvectCellMap(p4est->connectivity, t, q, xi, x, jinv);
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
  PetscCall(FemAdvectSyncMesh(adv));
  FemAdvectStateIO(adv, 0);
  FemAdvectComputeMeans(adv);
  memcpy(values, adv->mean, sizeof(double) * (size_t)adv->nlocal);
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectCornerValues(FemAdvect adv, double **values)
{
  const int nb = adv->nb;
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncMesh(adv));
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
  PetscCall(FemAdvectSyncMesh(adv));
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
  PetscCall(FemAdvectSyncMesh(adv));
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
  PetscCall(FemAdvectSyncMesh(adv));
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
