/*
 * darcy-transport: a quarter five-spot on the unit square (unit cube: the
 * wells are vertical lines).  Each cycle solves -div(k grad p) = 0 with
 * p = 1 at the injection well near (0,0), p = 0 at the production well
 * near (1,1) and no flow elsewhere (SIPG Q1, fem/sipg.h), then advects the
 * tracer injected at the well with the pressure's numerical flux on the
 * faces, locally conservative, and b = -k grad p_h inside the cells (the
 * advection family, advection.h).  Only the cells of load type 1 and their
 * face neighbours advect (the transport zone), so type-1 cells really cost
 * more.  Two phases: the pressure (assembly and solve) and the transport
 * steps; -lb_weights timing weighs the steps alone.  k(x) is
 * -darcy_permeability's field (fem/permeability.h).
 * reactive-transport shares all of this (darcy.h).
 */
#include "problems/darcy.h"

#include <math.h>
#include <string.h>

#include "util/options.h"
#include "fem/permeability.h"
#include "fem/sipg.h"
#include "mesh/geom.h"

#define DIM P4EST_DIM

/* The wells: within well_radius (in the x-y plane) of the corners. */
static const double well_radius = 0.2;

typedef struct {
  FemSipg sipg;
  p4est_t *p4est;
  long revision; /* of the forest the pressure was solved on */
  FemPermeability perm; /* -darcy_permeability */
  double refine_logk;   /* -darcy_refine_logk */
  /* after the cycle's steps: the tracer's range over cell means and over
   * quadrature points, and the discrete divergence of the face fluxes */
  double tracer_min, tracer_max, tracer_min_qp, tracer_max_qp, flux_divergence;
} AmrDarcy;

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

static double permeability(void *ctx, const double x[3]) { return FemPermeabilityValue((FemPermeability)ctx, x); }

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
void AmrDarcyVelocity(void *ctx, const FemAdvectPoint *pt, double b[3])
{
  const AmrDarcy *d = ctx;
  FemSipgVelocity(d->sipg, pt, b);
}

double AmrDarcyFlux(void *ctx, const FemAdvectFacePoint *fp)
{
  const AmrDarcy *d = ctx;
  return FemSipgFlux(d->sipg, fp);
}

double AmrDarcyInflow(void *ctx, const double x[3], double t)
{
  (void)ctx;
  (void)t;
  return xy_distance(x, 0, 0) < well_radius + 0.05 ? 1.0 : 0.0;
}

static const FemAdvectProblem tracer = {"darcy-transport", AmrDarcyVelocity, AmrDarcyInflow, 0, 1.0, 0, AmrDarcyFlux};

static PetscErrorCode darcy_options(AmrProblem p, AmrDarcy *d)
{
  char spec[PETSC_MAX_PATH_LEN + 16] = "constant:1";

  PetscFunctionBeginUser;
  d->refine_logk = 10 * log(10.0);
  PetscOptionsBegin(p->comm, NULL, "Darcy flow", NULL);
  AMR_OPTION("-darcy_permeability",
             PetscOptionsString("-darcy_permeability", "Permeability k(x): " FEM_PERMEABILITY_FORMS, NULL, spec, spec, sizeof spec, NULL));
  AMR_OPTION("-darcy_refine_logk",
             PetscOptionsReal("-darcy_refine_logk", "Change of ln k within a cell width that the indicator weighs as a full tracer jump (1)", NULL,
                              d->refine_logk, &d->refine_logk, NULL));
  PetscOptionsEnd();
  PetscCheck(d->refine_logk > 0, p->comm, PETSC_ERR_USER_INPUT, "option -darcy_refine_logk %g: must be positive", d->refine_logk);
  PetscCall(FemPermeabilityCreate(p->comm, spec, &d->perm));
  /* below the refusal, a contrast that already costs digits is said once */
  if (FemPermeabilityContrast(d->perm) > 1e6)
    PetscCall(PetscPrintf(p->comm, "%s: warning: option -darcy_permeability %s: contrast %.3g (max/min): expect a flux divergence of about %.1g\n", AMR_PROGRAM, spec,
                          FemPermeabilityContrast(d->perm), 2.2e-16 * FemPermeabilityContrast(d->perm)));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrDarcyCreate(AmrProblem p)
{
  AmrAdvection *s;
  AmrDarcy *d;

  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionCreate(p));
  s = p->impl;
  PetscCall(PetscCalloc1(1, &d));
  s->extra = d;
  s->ctx = d;
  PetscCall(darcy_options(p, d));
  PetscCall(FemSipgCreate(p->comm, &pressure_problem, permeability, d->perm, "darcy_", &d->sipg));
  p->nsolvers = 1;
  p->solver_prefix[0] = "darcy_";
  /* the pressure's cost follows the cells, the transport's the tracer:
   * separated by the solve's reductions, each is balanced on its own */
  p->nphases = 2;
  p->phase_name[0] = "pressure";
  p->phase_name[1] = "transport";
  p->phase_typed[1] = 1;
  PetscFunctionReturn(0);
}

/* Solve for the pressure on the current forest (this rank's KSPSolve time
 * into the problem's ksp_cpu, ksp_wall) and rebuild the tracer's face data
 * with its fluxes (the forest's ghost layer and cell geometry, built for the
 * solve, are kept). */
static PetscErrorCode pressure(AmrProblem p, AmrAdvection *s, AmrDarcy *d)
{
  PetscReal rnorm;

  PetscFunctionBeginUser;
  d->p4est = FemAdvectForest(s->adv);
  PetscCall(FemSipgSolve(d->sipg, s->adv, &s->ksp_its, &rnorm));
  FemSipgSolveTime(d->sipg, &p->ksp_cpu, &p->ksp_wall);
  PetscCall(FemAdvectVelocityChanged(s->adv));
  d->revision = d->p4est->revision;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrDarcySolve(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  AmrDarcy *d = s->extra;
  double t0 = MPI_Wtime();

  PetscFunctionBeginUser;
  PetscCall(pressure(p, s, d));
  s->t_poisson = MPI_Wtime() - t0;
  s->t_ksp = p->ksp_wall;
  PetscCall(AmrProblemPhase(p, 1));
  {
    /* seed of the transport zone: the type-1 cells (FemAdvectSetActive keeps
     * its own copy); outside, cells whose tracer passes the load threshold
     * join in */
    int *zone;
    PetscCall(PetscMalloc1(s->p4est->local_num_quadrants + 1, &zone));
    PetscCall(FemAdvectCellTypes(s->p4est, zone));
    PetscCall(FemAdvectSetActive(s->adv, zone, s->load_threshold));
    PetscCall(PetscFree(zone));
  }
  PetscCall(AmrAdvectionSteps(p));
  PetscCall(FemAdvectMeanRange(s->adv, &d->tracer_min, &d->tracer_max));
  PetscCall(FemAdvectPointRange(s->adv, &d->tracer_min_qp, &d->tracer_max_qp));
  PetscCall(FemAdvectFluxDivergence(s->adv, &d->flux_divergence));
  PetscFunctionReturn(0);
}

/* The largest change of ln k from the centre of the cell to the points one
 * cell width away across its faces (the centres of same-size neighbours;
 * outside the domain a file's field is its boundary cells'). */
static double logk_jump(const AmrDarcy *d, const p4est_connectivity_t *conn, p4est_topidx_t t, const p4est_quadrant_t *q)
{
  double eta[3] = {0.5, 0.5, 0.5}, x[3], centre, jump = 0;

  AmrGeomQuadMap(conn, t, q, eta, x, NULL);
  centre = log(FemPermeabilityValue(d->perm, x));
  for (int a = 0; a < DIM; a++) {
    for (int side = -1; side <= 1; side += 2) {
      eta[a] = 0.5 + side;
      AmrGeomQuadMap(conn, t, q, eta, x, NULL);
      jump = fmax(jump, fabs(log(FemPermeabilityValue(d->perm, x)) - centre));
    }
    eta[a] = 0.5;
  }
  return jump;
}

/* The larger of the tracer's indicator and min(1, jump of ln k /
 * -darcy_refine_logk): a term that scales with the cell width where ln k
 * is smooth, so that the threshold strategy's gap between its refine and
 * coarsen thresholds keeps the children of a refined cell (a term that is
 * 0 or 1 refines a cell, finds its children below it, coarsens them, and
 * so on every other cycle), and stays at the full jump along a jump. */
PetscErrorCode AmrDarcyEstimate(AmrProblem p, double *eta2)
{
  AmrAdvection *s = p->impl;
  const AmrDarcy *d = s->extra;

  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionEstimate(p, eta2));
  for (p4est_topidx_t t = s->p4est->first_local_tree; t <= s->p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(s->p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const double term = fmin(1, logk_jump(d, s->p4est->connectivity, t, p4est_quadrant_array_index(&tr->quadrants, i)) / d->refine_logk);
      eta2[tr->quadrants_offset + i] = fmax(eta2[tr->quadrants_offset + i], term * term);
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrDarcyPermeabilityVTK(AmrProblem p, AmrVtkData *vd)
{
  AmrAdvection *s = p->impl;
  const AmrDarcy *d = s->extra;
  const double centre[3] = {0.5, 0.5, 0.5};
  double *k, x[3];

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)s->p4est->local_num_quadrants + 1, &k));
  for (p4est_topidx_t t = s->p4est->first_local_tree; t <= s->p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(s->p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      AmrGeomQuadMap(s->p4est->connectivity, t, p4est_quadrant_array_index(&tr->quadrants, i), centre, x, NULL);
      k[tr->quadrants_offset + i] = FemPermeabilityValue(d->perm, x);
    }
  }
  PetscCall(AmrVtkAddCellField(vd, "permeability", k));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrDarcyReportFields(AmrProblem p, json_line *j)
{
  const AmrDarcy *d = ((AmrAdvection *)p->impl)->extra;

  PetscFunctionBeginUser;
  json_str(j, "permeability", FemPermeabilitySpec(d->perm));
  json_real(j, "tracer_min", d->tracer_min);
  json_real(j, "tracer_max", d->tracer_max);
  json_real(j, "tracer_min_qp", d->tracer_min_qp);
  json_real(j, "tracer_max_qp", d->tracer_max_qp);
  json_real(j, "flux_divergence_max", d->flux_divergence);
  PetscFunctionReturn(0);
}

/* darcy-transport's report: the advection family's and the Darcy fields. */
static PetscErrorCode AmrDarcyReport(AmrProblem p, json_line *j)
{
  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionReport(p, j));
  PetscCall(AmrDarcyReportFields(p, j));
  PetscFunctionReturn(0);
}

/* The tracer's fields, the permeability and the pressure at the corners
 * of every cell (the DG Q1 pressure, discontinuous), solved on this forest
 * at this cycle's start; the initial state, before the first solve, has no
 * pressure. */
static PetscErrorCode AmrDarcyVTK(AmrProblem p, AmrVtkData *vd)
{
  AmrAdvection *s = p->impl;
  AmrDarcy *d = s->extra;
  double *pressure;

  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionVTK(p, vd));
  PetscCall(AmrDarcyPermeabilityVTK(p, vd));
  if (!d->p4est) PetscFunctionReturn(0);
  PetscCheck(d->p4est->revision == d->revision, PETSC_COMM_SELF, PETSC_ERR_ORDER, "darcy-transport: the pressure is not of the current forest");
  PetscCall(FemSipgCornerValues(d->sipg, &pressure));
  PetscCall(AmrVtkAddPointField(vd, "pressure", pressure));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrDarcyDestroy(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  AmrDarcy *d = s ? s->extra : NULL;

  PetscFunctionBeginUser;
  if (d) {
    PetscCall(FemSipgDestroy(&d->sipg));
    PetscCall(FemPermeabilityDestroy(&d->perm));
    PetscCall(PetscFree(s->extra));
  }
  PetscCall(AmrAdvectionDestroy(p));
  PetscFunctionReturn(0);
}

const AmrProblemOps amr_problem_darcy_transport = {
  .name = "darcy-transport",
  .help = "Advection: quarter five-spot, tracer carried by the Darcy velocity of a pressure solve",
  .data = &tracer,
  .create = AmrDarcyCreate,
  .setup = AmrAdvectionSetup,
  .initial = AmrAdvectionInitial,
  .solve = AmrDarcySolve,
  .estimate = AmrDarcyEstimate,
  .adapt = AmrAdvectionAdapt,
  .load_types = AmrAdvectionLoadTypes,
  .monitor = AmrAdvectionMonitor,
  .report = AmrDarcyReport,
  .vtk = AmrDarcyVTK,
  .destroy = AmrDarcyDestroy,
  .save = AmrAdvectionSave,
  .load = AmrAdvectionLoad,
};
