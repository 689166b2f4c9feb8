/*
 * darcy-transport: a quarter five-spot on the unit square (unit cube: the
 * wells are vertical lines).  Each cycle solves -div(k grad p) = 0 with
 * p = 1 at the injection well near (0,0), p = 0 at the production well
 * near (1,1) and no flow elsewhere (continuous Q1, fem/poisson.h), then
 * advects the tracer injected at the well with b = -k grad p (the
 * advection family, advection.h).  Only the cells of load type 1 and their
 * face neighbours advect (the transport zone), so type-1 cells really cost
 * more.  The pressure solve is timed and reported, not weighed.
 * reactive-transport shares all of this (darcy.h).
 */
#include "problems/darcy.h"

#include <math.h>
#include <string.h>

#include "fem/poisson.h"
#include "mesh/geom.h"
#include "problems/poisson.h"

#define DIM P4EST_DIM

/* The wells: within well_radius (in the x-y plane) of the corners. */
static const double well_radius = 0.2;

typedef struct {
  FemPoisson fp;
  FemQElem qe;
  p4est_t *p4est;
  double *coef; /* Q1 pressure coefficients per cell, local then ghost */
  size_t ncoef;
  long revision; /* of the forest the pressure was solved on */
} Darcy;

static double xy_distance(const double x[3], double cx, double cy) { return sqrt((x[0] - cx) * (x[0] - cx) + (x[1] - cy) * (x[1] - cy)); }

static double pressure_bc_value(int dim, const double x[3])
{
  (void)dim;
  return x[0] + x[1] < 1 ? 1.0 : 0.0;
}

static double zero_source(int dim, const double x[3])
{
  (void)dim;
  (void)x;
  return 0;
}

static double unit_permeability(int dim, const double x[3], long tree)
{
  (void)dim;
  (void)x;
  (void)tree;
  return 1;
}

static FemBC wells_bc(int dim, const double x[3], const double n[3])
{
  (void)dim;
  (void)n;
  return xy_distance(x, 0, 0) < well_radius || xy_distance(x, 1, 1) < well_radius ? FEM_BC_DIRICHLET : FEM_BC_NEUMANN;
}

static const FemProblem pressure_problem = {
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

/* Zero before the first solve. */
void DarcyVelocity(void *ctx, const AdvectPoint *pt, double b[3])
{
  const Darcy *d = ctx;
  double dphi[FEM_MAX_VNODES * DIM], x[3], J[3][3], Ji[3][3], g[DIM] = {0};
  b[0] = b[1] = b[2] = 0;
  if (!d->coef || (size_t)pt->cell >= d->ncoef) return;
  const int vn = d->qe.vnodes;
  const double *c = d->coef + (size_t)pt->cell * vn;
  FemQElemEval(&d->qe, pt->eta, NULL, dphi);
  AmrGeomQuadMap(d->p4est->connectivity, pt->tree, pt->quad, pt->eta, x, J);
  AmrGeomInvert(J, Ji);
  for (int i = 0; i < vn; i++)
    for (int a = 0; a < DIM; a++)
      for (int e = 0; e < DIM; e++) g[a] += c[i] * dphi[i * DIM + e] * Ji[e][a];
  const double k = unit_permeability(DIM, x, pt->tree);
  for (int a = 0; a < DIM; a++) b[a] = -k * g[a];
}

double DarcyInflow(void *ctx, const double x[3], double t)
{
  (void)ctx;
  (void)t;
  return xy_distance(x, 0, 0) < well_radius + 0.05 ? 1.0 : 0.0;
}

static const AdvectProblem tracer = {"darcy-transport", DarcyVelocity, DarcyInflow, 0, 1.0, 0};

PetscErrorCode DarcyCreate(AmrProblem p)
{
  AmrAdvection *s;
  Darcy *d;

  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionCreate(p));
  s = p->impl;
  PetscCall(PetscCalloc1(1, &d));
  s->extra = d;
  s->ctx = d;
  PetscCheck(!FemQElemInit(&d->qe, 1), p->comm, PETSC_ERR_PLIB, "Q1 element");
  PetscCall(FemPoissonCreate(p->comm, &pressure_problem, 1, "darcy_", &d->fp));
  p->nsolvers = 1;
  p->solver_prefix[0] = "darcy_";
  PetscFunctionReturn(0);
}

/* Solve for the pressure on the current forest, hand b = -k grad p to the
 * tracer's cells and ghosts, and rebuild its face data for the new
 * velocity. */
static PetscErrorCode pressure(AmrProblem p, AmrAdvection *s, Darcy *d)
{
  p4est_locidx_t nlocal, nghost;
  PetscReal rnorm;

  PetscFunctionBeginUser;
  d->p4est = AdvectForest(s->adv);
  PetscCall(FemPoissonSetup(d->fp, d->p4est));
  PetscCall(FemPoissonAssemble(d->fp));
  PetscCall(AmrProblemSolveTimed(p, d->fp, &s->ksp_its, &rnorm));
  PetscCall(AdvectCellCounts(s->adv, &nlocal, &nghost));
  const int vn = FemPoissonVNodes(d->fp);
  PetscCall(PetscFree(d->coef));
  d->ncoef = (size_t)nlocal + (size_t)nghost;
  PetscCall(PetscMalloc1(d->ncoef * vn + 1, &d->coef));
  PetscCall(FemPoissonElementCoefficients(d->fp, d->coef));
  PetscCall(AdvectGhostExchange(s->adv, d->coef, (size_t)vn));
  PetscCall(AdvectMeshChanged(s->adv));
  d->revision = d->p4est->revision;
  PetscFunctionReturn(0);
}

PetscErrorCode DarcySolve(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  Darcy *d = s->extra;
  double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  PetscCall(pressure(p, s, d));
  s->t_poisson = MPI_Wtime() - t0;
  s->t_ksp = p->ksp_wall;
  {
    int *zone; /* seed of the transport zone: the type-1 cells (AdvectSetActive keeps its own copy) */
    PetscCall(PetscMalloc1(s->p4est->local_num_quadrants + 1, &zone));
    PetscCall(AdvectCellTypes(s->p4est, zone));
    PetscCall(AdvectSetActive(s->adv, zone));
    PetscCall(PetscFree(zone));
  }
  PetscCall(AmrAdvectionSteps(p));
  PetscFunctionReturn(0);
}

/* The tracer's fields and the pressure at the corners of every cell (Q1,
 * hanging nodes constrained), solved on this forest at this cycle's start;
 * the initial state, before the first solve, has the tracer only. */
static PetscErrorCode darcy_vtk(AmrProblem p, AmrVtkData *vd)
{
  AmrAdvection *s = p->impl;
  Darcy *d = s->extra;
  double *pressure;

  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionVTK(p, vd));
  if (!d->p4est) PetscFunctionReturn(0);
  PetscCheck(d->p4est->revision == d->revision, PETSC_COMM_SELF, PETSC_ERR_ORDER, "darcy-transport: the pressure is not of the current forest");
  PetscCall(FemPoissonPointValues(d->fp, &pressure));
  PetscCall(AmrVtkAddPointField(vd, "pressure", pressure));
  PetscFunctionReturn(0);
}

PetscErrorCode DarcyDestroy(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  Darcy *d = s ? s->extra : NULL;

  PetscFunctionBeginUser;
  if (d) {
    PetscCall(FemPoissonDestroy(&d->fp));
    FemQElemFree(&d->qe);
    PetscCall(PetscFree(d->coef));
    PetscCall(PetscFree(s->extra));
  }
  PetscCall(AmrAdvectionDestroy(p));
  PetscFunctionReturn(0);
}

const AmrProblemOps amr_problem_darcy_transport = {"darcy-transport",
                                                   "Advection: quarter five-spot, tracer carried by the Darcy velocity of a pressure solve",
                                                   &tracer,
                                                   DarcyCreate,
                                                   AmrAdvectionSetup,
                                                   AmrAdvectionInitial,
                                                   DarcySolve,
                                                   AmrAdvectionEstimate,
                                                   AmrAdvectionAdapt,
                                                   AmrAdvectionLoadTypes,
                                                   AmrAdvectionMonitor,
                                                   AmrAdvectionReport,
                                                   darcy_vtk,
                                                   DarcyDestroy,
                                                   AmrAdvectionSave,
                                                   AmrAdvectionLoad,
                                                   NULL};
