/*
 * darcy-transport: pressure by continuous Q1 (fem/poisson.h), velocity
 * b = -k grad p evaluated in the cell that asks (local or ghost), tracer by
 * the DG advection solver.
 */

#include "fem/advect_darcy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fem/poisson.h"
#include "mesh/geom.h"

#define DIM P4EST_DIM

/* The wells: within well_radius (in the x-y plane) of the corners. */
static const double well_radius = 0.2;

struct advect_darcy
{
  FemPoisson fp;
  fem_qelem_t qe;
  p4est_t *p4est;
  double *coef; /* Q1 coefficients per cell, local then ghost */
  size_t ncoef;
};

static double
xy_distance (const double x[3], double cx, double cy)
{
  return sqrt ((x[0] - cx) * (x[0] - cx) + (x[1] - cy) * (x[1] - cy));
}

static double
pressure_bc_value (int dim, const double x[3])
{
  (void) dim;
  return x[0] + x[1] < 1 ? 1.0 : 0.0;
}

static double
zero_source (int dim, const double x[3])
{
  (void) dim;
  (void) x;
  return 0;
}

static double
unit_permeability (int dim, const double x[3], long tree)
{
  (void) dim;
  (void) x;
  (void) tree;
  return 1;
}

static fem_bc_t
wells_bc (int dim, const double x[3], const double n[3])
{
  (void) dim;
  (void) n;
  return xy_distance (x, 0, 0) < well_radius || xy_distance (x, 1, 1) < well_radius
           ? FEM_BC_DIRICHLET : FEM_BC_NEUMANN;
}

static const fem_problem_t pressure_problem = {
  .name = "darcy-pressure",
  .help = "quarter five-spot: p = 1 at the injection well, 0 at the production well",
  .domain = "unit square or cube",
  .dims = (1 << 2) | (1 << 3),
  .u = pressure_bc_value,
  .grad = NULL,
  .f = zero_source,
  .k = unit_permeability,
  .bc = wells_bc,
};

/** b = -k grad p in the cell of pt; zero before the first solve. */
static void
darcy_velocity (void *ctx, const advect_point_t *pt, double b[3])
{
  const advect_darcy_t *d = ctx;
  b[0] = b[1] = b[2] = 0;
  if (!d->coef || (size_t) pt->cell >= d->ncoef)
    return;
  double dphi[FEM_MAX_VNODES * DIM], x[3], J[3][3], Ji[3][3], g[DIM] = {0};
  const int vn = d->qe.vnodes;
  const double *c = d->coef + (size_t) pt->cell * vn;
  fem_qelem_eval (&d->qe, pt->eta, NULL, dphi);
  amr_geom_quad_map (d->p4est->connectivity, pt->tree, pt->quad, pt->eta, x, J);
  amr_geom_invert (J, Ji);
  for (int i = 0; i < vn; i++)
    for (int a = 0; a < DIM; a++)
      for (int e = 0; e < DIM; e++)
        g[a] += c[i] * dphi[i * DIM + e] * Ji[e][a];
  const double k = unit_permeability (DIM, x, pt->tree);
  for (int a = 0; a < DIM; a++)
    b[a] = -k * g[a];
}

/** Tracer data: 1 where fluid enters, at the injection well. */
static double
darcy_inflow (void *ctx, const double x[3], double t)
{
  (void) ctx;
  (void) t;
  return xy_distance (x, 0, 0) < well_radius + 0.05 ? 1.0 : 0.0;
}

const advect_problem_t advect_darcy_problem = {
  "darcy-transport", darcy_velocity, darcy_inflow, 0, 1.0, 1
};

PetscErrorCode
advect_darcy_create (MPI_Comm comm, advect_darcy_t **out)
{
  advect_darcy_t *d;
  PetscFunctionBeginUser;
  PetscCall (PetscCalloc1 (1, &d));
  PetscCheck (!fem_qelem_init (&d->qe, 1), comm, PETSC_ERR_PLIB, "Q1 element");
  PetscCall (FemPoissonCreate (comm, &pressure_problem, 1, "darcy_", &d->fp));
  *out = d;
  PetscFunctionReturn (0);
}

PetscErrorCode
advect_darcy_destroy (advect_darcy_t **d)
{
  PetscFunctionBeginUser;
  if (!*d)
    PetscFunctionReturn (0);
  PetscCall (FemPoissonDestroy (&(*d)->fp));
  fem_qelem_free (&(*d)->qe);
  free ((*d)->coef);
  PetscCall (PetscFree (*d));
  PetscFunctionReturn (0);
}

PetscErrorCode
advect_darcy_update (advect_darcy_t *d, advect_t *adv, PetscInt *its)
{
  p4est_locidx_t nlocal, nghost;
  PetscReal rnorm;
  PetscFunctionBeginUser;
  d->p4est = advect_forest (adv);
  PetscCall (FemPoissonSetup (d->fp, d->p4est));
  PetscCall (FemPoissonAssemble (d->fp));
  PetscCall (FemPoissonSolve (d->fp, its, &rnorm));
  PetscCall (advect_cell_counts (adv, &nlocal, &nghost));
  const int vn = FemPoissonVNodes (d->fp);
  free (d->coef);
  d->ncoef = (size_t) nlocal + (size_t) nghost;
  d->coef = malloc ((d->ncoef * vn + 1) * sizeof (double));
  PetscCheck (d->coef, PETSC_COMM_SELF, PETSC_ERR_MEM, "darcy: out of memory");
  PetscCall (FemPoissonElementCoefficients (d->fp, d->coef));
  PetscCall (advect_ghost_exchange (adv, d->coef, (size_t) vn));
  PetscCall (advect_mesh_changed (adv));
  PetscFunctionReturn (0);
}
