/*
 * darcy-transport: a quarter five-spot on the unit square (unit cube: the
 * wells are vertical lines).  Each cycle solves -div(k grad p) = 0 with
 * p = 1 at the injection well near (0,0), p = 0 at the production well
 * near (1,1) and no flow elsewhere (SIPG Q1, fem/sipg.h), then advects the
 * tracer injected at the well with the pressure's numerical flux on the
 * faces, locally conservative, and b = -k grad p_h inside the cells (the
 * advection family, advection.h).  Only the cells of load type 1 and their
 * face neighbours advect (the transport zone), so type-1 cells really cost
 * more.  The pressure solve is timed and reported, not weighed.
 * reactive-transport shares all of this (darcy.h).
 */
#include "problems/darcy.h"

#include <math.h>
#include <string.h>

#include "fem/sipg.h"

#define DIM P4EST_DIM

/* The wells: within well_radius (in the x-y plane) of the corners. */
static const double well_radius = 0.2;

typedef struct {
  FemSipg sipg;
  p4est_t *p4est;
  long revision; /* of the forest the pressure was solved on */
  /* after the cycle's steps: the tracer's range over cell means and over
   * quadrature points, and the discrete divergence of the face fluxes */
  double tracer_min, tracer_max, tracer_min_qp, tracer_max_qp, flux_divergence;
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

static double unit_permeability(void *ctx, const double x[3])
{
  (void)ctx;
  (void)x;
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
  .k = NULL, /* the pressure's permeability is FemSipgCreate's */
  .bc = wells_bc,
};

/* Zero before the first solve and on a forest changed since. */
void DarcyVelocity(void *ctx, const AdvectPoint *pt, double b[3])
{
  const Darcy *d = ctx;
  FemSipgVelocity(d->sipg, pt, b);
}

double DarcyFlux(void *ctx, const AdvectFacePoint *fp)
{
  const Darcy *d = ctx;
  return FemSipgFlux(d->sipg, fp);
}

double DarcyInflow(void *ctx, const double x[3], double t)
{
  (void)ctx;
  (void)t;
  return xy_distance(x, 0, 0) < well_radius + 0.05 ? 1.0 : 0.0;
}

static const AdvectProblem tracer = {"darcy-transport", DarcyVelocity, DarcyInflow, 0, 1.0, 0, DarcyFlux};

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
  PetscCall(FemSipgCreate(p->comm, &pressure_problem, unit_permeability, NULL, "darcy_", &d->sipg));
  p->nsolvers = 1;
  p->solver_prefix[0] = "darcy_";
  PetscFunctionReturn(0);
}

/* Wall time this rank has spent in KSPSolve so far in the current log
 * stage (PETSc's event log; the app solves in a stage of its own). */
static PetscErrorCode ksp_time(double *t)
{
  PetscLogEvent ev;
  PetscStageLog log;
  int stage;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventGetId("KSPSolve", &ev));
  PetscCall(PetscLogGetStageLog(&log));
  PetscCall(PetscStageLogGetCurrent(log, &stage));
  PetscCall(PetscLogEventGetPerfInfo(stage < 0 ? 0 : stage, ev, &info));
  *t = info.time;
  PetscFunctionReturn(0);
}

/* Solve for the pressure on the current forest and rebuild the tracer's
 * face data with its fluxes. */
static PetscErrorCode pressure(AmrAdvection *s, Darcy *d)
{
  PetscReal rnorm;

  PetscFunctionBeginUser;
  d->p4est = AdvectForest(s->adv);
  PetscCall(FemSipgSolve(d->sipg, s->adv, &s->ksp_its, &rnorm));
  PetscCall(AdvectMeshChanged(s->adv));
  d->revision = d->p4est->revision;
  PetscFunctionReturn(0);
}

PetscErrorCode DarcySolve(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  Darcy *d = s->extra;
  PetscBool logging;
  double t0 = MPI_Wtime(), k0, k1;

  PetscFunctionBeginUser;
  /* the KSP time comes from PETSc's event log, switched on here when
   * -log_view did not */
  PetscCall(PetscLogIsActive(&logging));
  if (!logging) PetscCall(PetscLogDefaultBegin());
  PetscCall(ksp_time(&k0));
  PetscCall(pressure(s, d));
  PetscCall(ksp_time(&k1));
  s->t_poisson = MPI_Wtime() - t0;
  s->t_ksp = k1 - k0;
  {
    /* seed of the transport zone: the type-1 cells (AdvectSetActive keeps
     * its own copy); outside, cells whose tracer passes the load threshold
     * join in */
    int *zone;
    PetscCall(PetscMalloc1(s->p4est->local_num_quadrants + 1, &zone));
    PetscCall(AdvectCellTypes(s->p4est, zone));
    PetscCall(AdvectSetActive(s->adv, zone, s->load_threshold));
    PetscCall(PetscFree(zone));
  }
  PetscCall(AmrAdvectionSteps(p));
  PetscCall(AdvectMeanRange(s->adv, &d->tracer_min, &d->tracer_max));
  PetscCall(AdvectPointRange(s->adv, &d->tracer_min_qp, &d->tracer_max_qp));
  PetscCall(AdvectFluxDivergence(s->adv, &d->flux_divergence));
  PetscFunctionReturn(0);
}

PetscErrorCode DarcyReport(AmrProblem p, json_line *j)
{
  const Darcy *d = ((AmrAdvection *)p->impl)->extra;

  PetscFunctionBeginUser;
  json_real(j, "tracer_min", d->tracer_min);
  json_real(j, "tracer_max", d->tracer_max);
  json_real(j, "tracer_min_qp", d->tracer_min_qp);
  json_real(j, "tracer_max_qp", d->tracer_max_qp);
  json_real(j, "flux_divergence_max", d->flux_divergence);
  PetscFunctionReturn(0);
}

static PetscErrorCode darcy_report(AmrProblem p, json_line *j)
{
  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionReport(p, j));
  PetscCall(DarcyReport(p, j));
  PetscFunctionReturn(0);
}

/* The tracer's fields and the pressure at the corners of every cell (the
 * DG Q1 pressure, discontinuous), solved on this forest at this cycle's
 * start. */
static PetscErrorCode darcy_vtk(AmrProblem p, AmrVtkData *vd)
{
  AmrAdvection *s = p->impl;
  Darcy *d = s->extra;
  double *pressure;

  PetscFunctionBeginUser;
  PetscCheck(d->p4est && d->p4est->revision == d->revision, PETSC_COMM_SELF, PETSC_ERR_ORDER, "darcy-transport: the pressure is not of the current forest");
  PetscCall(AmrAdvectionVTK(p, vd));
  PetscCall(FemSipgCornerValues(d->sipg, &pressure));
  PetscCall(AmrVtkAddPointField(vd, "pressure", pressure));
  PetscFunctionReturn(0);
}

PetscErrorCode DarcyDestroy(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  Darcy *d = s ? s->extra : NULL;

  PetscFunctionBeginUser;
  if (d) {
    PetscCall(FemSipgDestroy(&d->sipg));
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
                                                   darcy_report,
                                                   darcy_vtk,
                                                   DarcyDestroy,
                                                   AmrAdvectionSave,
                                                   AmrAdvectionLoad,
                                                   NULL};
