/* The advection family (advection.h): the shared ops, and the data of
 * rotating-hill and moving-front. */
#include "problems/advection.h"

#include <math.h>
#include <limits.h>
#include <string.h>

#include "util/options.h"

#define DIM P4EST_DIM

/* rotating-hill: solid-body rotation about (1/2, 1/2[, z]) with period 1 of
 * a Gaussian centred at (1/2, 0.65[, 1/2]).  It is wide, and its tails
 * cross the boundary (the inflow data is exact), because degree 0 smears a
 * narrow hill so much that its first-order rate only shows on meshes far
 * finer than a test can afford. */
static const double hill_omega = 6.28318530717958647693, hill_sigma = 0.2;

static void hill_velocity(void *ctx, const FemAdvectPoint *pt, double b[3])
{
  const double *x = pt->x;
  (void)ctx;
  b[0] = -hill_omega * (x[1] - 0.5);
  b[1] = hill_omega * (x[0] - 0.5);
  b[2] = 0;
}

static double hill_exact(void *ctx, const double x[3], double t)
{
  /* rotate the point back to where it started */
  const double c = cos(hill_omega * t), s = sin(hill_omega * t);
  const double dx = x[0] - 0.5, dy = x[1] - 0.5;
  const double centre[3] = {0.5, 0.65, 0.5};
  double r2 = 0, x0[3];
  (void)ctx;
  x0[0] = 0.5 + c * dx + s * dy;
  x0[1] = 0.5 - s * dx + c * dy;
  x0[2] = x[2];
  for (int k = 0; k < DIM; k++) r2 += (x0[k] - centre[k]) * (x0[k] - centre[k]);
  return exp(-r2 / (2 * hill_sigma * hill_sigma));
}

/* moving-front: u = 1 behind a plane front through (1/4, 1/4[, 1/4]) at
 * t = 0 that moves with unit speed along the diagonal. */
static const double front_speed = 1;

static void front_velocity(void *ctx, const FemAdvectPoint *pt, double b[3])
{
  const double s = front_speed / sqrt((double)DIM);
  (void)ctx;
  (void)pt;
  b[0] = b[1] = s;
  b[2] = DIM == 3 ? s : 0;
}

static double front_exact(void *ctx, const double x[3], double t)
{
  double d = 0;
  (void)ctx;
  for (int k = 0; k < DIM; k++) d += (x[k] - 0.25) / sqrt((double)DIM);
  return d < front_speed * t ? 1.0 : 0.0;
}

static const FemAdvectProblem hill = {"rotating-hill", hill_velocity, hill_exact, 1, 1.0, 0, NULL};
static const FemAdvectProblem front = {"moving-front", front_velocity, front_exact, 1, 0.5, 0, NULL};

#define AMR_ADVECTION_PROBLEM(NAME, HELP, DATA) \
  { \
    .name = NAME, .help = HELP, .data = DATA, .create = AmrAdvectionCreate, .setup = AmrAdvectionSetup, .initial = AmrAdvectionInitial, \
    .solve = AmrAdvectionSteps, .estimate = AmrAdvectionEstimate, .adapt = AmrAdvectionAdapt, .load_types = AmrAdvectionLoadTypes, \
    .monitor = AmrAdvectionMonitor, .report = AmrAdvectionReport, .vtk = AmrAdvectionVTK, .destroy = AmrAdvectionDestroy, \
    .save = AmrAdvectionSave, .load = AmrAdvectionLoad, \
  }
const AmrProblemOps amr_problem_rotating_hill =
  AMR_ADVECTION_PROBLEM("rotating-hill", "Advection: a Gaussian hill in solid-body rotation, period 1 (exact solution known)", &hill);
const AmrProblemOps amr_problem_moving_front =
  AMR_ADVECTION_PROBLEM("moving-front", "Advection: a plane front moving diagonally at unit speed", &front);

/* ---- the ops ------------------------------------------------------------- */

PetscErrorCode AmrAdvectionCreate(AmrProblem p)
{
  AmrAdvection *s;
  char msg[256];

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(1, &s));
  p->impl = s;
  s->pde = AmrProblemGetOpsData(p);
  s->interval = 10;
  s->load_threshold = 0.1;
  s->t_final = s->pde->t_final;
  s->ksp_its = -1;
  PetscOptionsBegin(p->comm, NULL, "Advection problems", NULL);
  AMR_OPTION("-t_final", PetscOptionsReal("-t_final", "Final time (default: rotating-hill one revolution, moving-front 0.5, darcy-transport 1)", NULL,
                                          s->t_final, &s->t_final, NULL));
  AMR_OPTION("-amr_interval", PetscOptionsInt("-amr_interval", "Time steps per cycle", NULL, s->interval, &s->interval, NULL));
  /* a tracer lies in [0, 1]: a threshold outside never changes a type */
  PetscCall(AmrOptionsRealIn(PetscOptionsObject, "-adv_load_threshold", "Cells whose tracer mean exceeds this are load type 1", 0, 1, 0,
                             "a tracer value from 0 to 1", &s->load_threshold));
  PetscOptionsEnd();
  if (FemAdvectOptionsRead(p->comm, &s->opt, msg, sizeof msg)) SETERRQ(p->comm, PETSC_ERR_USER_INPUT, "%s", msg);
  PetscCheck(s->t_final > 0, p->comm, PETSC_ERR_USER_INPUT, "option -t_final: must be a positive time");
  PetscCheck(s->interval >= 1, p->comm, PETSC_ERR_USER_INPUT, "option -amr_interval %" PetscInt_FMT ": must be at least 1", s->interval);
  p->ntypes = 2;
  p->degree = s->opt.degree;
  p->strategy = "threshold";
  p->max_level = PetscMin(p->min_level + 2, P4EST_QMAXLEVEL);
  p->cycles = PETSC_MAX_INT;
  p->state.sim_time = 0;
  p->state.step = 0;
  PetscFunctionReturn(0);
}

/* The load types and the mass of the initial data. */
static PetscErrorCode initial_numbers(AmrProblem p)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  PetscCall(FemAdvectClassify(s->adv, s->load_threshold));
  PetscCall(FemAdvectMass(s->adv, &s->mass0, NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionSetup(AmrProblem p, p4est_t *p4est)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  PetscCheck(!p->mesh->geom, p->comm, PETSC_ERR_USER_INPUT,
             "option -mesh: %s is curved; advection needs trees that are the (bi/tri)linear maps of their vertices", p->mesh->name);
  s->p4est = p4est;
  PetscCall(FemAdvectCreate(p4est, s->pde, s->ctx, &s->opt, &s->adv));
  PetscCall(AmrProblemAddField(p, "FemAdvectCell", NULL, FemAdvectCellBytes(s->pde)));
  PetscCall(initial_numbers(p));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionInitial(AmrProblem p)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  PetscCall(FemAdvectProjectExact(s->adv));
  PetscCall(initial_numbers(p));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionSteps(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  double t0 = MPI_Wtime(), times[3];
  long long type1 = 0;
  int64_t *counts;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(p->ntypes, &counts));
  /* one step at a time, so that each step's own work is timed (the same
   * steps as one call for the whole interval) */
  s->step_cpu = 0;
  for (PetscInt k = 0; k < s->interval && FemAdvectTime(s->adv) < s->t_final; k++) {
    double c0, c1, w0, w1, rc = 0, rw = 0;
    const double t = FemAdvectTime(s->adv);
    int n;
    FemAdvectWorkTime(s->adv, &c0, &w0);
    PetscCall(FemAdvectAdvance(s->adv, s->t_final, 1, &n));
    FemAdvectWorkTime(s->adv, &c1, &w1);
    s->step_cpu += c1 - c0;
    if (s->after_step) {
      PetscCall(s->step_counts(p, counts));
      if (s->after_phase) {
        /* the step's sample closes before the work of the other phase */
        PetscCall(AmrProblemLogWorkCounts(p, c1 - c0, w1 - w0, counts));
        PetscCall(AmrProblemPhase(p, s->after_phase));
        PetscCall(s->after_step(p, FemAdvectTime(s->adv) - t, &rc, &rw));
        PetscCall(AmrProblemPhase(p, s->step_phase));
      } else {
        PetscCall(s->after_step(p, FemAdvectTime(s->adv) - t, &rc, &rw));
        PetscCall(AmrProblemLogWorkCounts(p, c1 - c0 + rc, w1 - w0 + rw, counts));
      }
    } else PetscCall(AmrProblemLogWork(p, c1 - c0, w1 - w0));
    p->state.step += n;
  }
  PetscCall(PetscFree(counts));
  s->t_advection = MPI_Wtime() - t0;
  PetscCall(FemAdvectClassify(s->adv, s->load_threshold));
  p->state.sim_time = FemAdvectTime(s->adv);
  p->state.done = p->state.sim_time >= s->t_final;
  PetscCall(FemAdvectMass(s->adv, &s->mass, &s->inflow));
  s->l2 = NAN;
  if (s->pde->has_exact) PetscCall(FemAdvectL2Error(s->adv, &s->l2));
  for (p4est_topidx_t t = s->p4est->first_local_tree; t <= s->p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(s->p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++)
      type1 += ((const FemAdvectCell *)p4est_quadrant_array_index(&tr->quadrants, i)->p.user_data)->load_type == 1;
  }
  PetscCallMPI(MPI_Allreduce(&type1, &s->type1, 1, MPI_LONG_LONG, MPI_SUM, p->comm));
  s->cells = (long long)s->p4est->global_num_quadrants;
  times[0] = s->t_poisson;
  times[1] = s->t_ksp;
  times[2] = s->t_advection;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, times, 3, MPI_DOUBLE, MPI_MAX, p->comm));
  s->t_poisson = times[0];
  s->t_ksp = times[1];
  s->t_advection = times[2];
  p->dofs = s->cells * (s->opt.degree ? P4EST_DIM + 1 : 1);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionEstimate(AmrProblem p, double *eta2)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  PetscCall(FemAdvectIndicator(s->adv));
  for (p4est_topidx_t t = s->p4est->first_local_tree; t <= s->p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(s->p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const double e = ((const FemAdvectCell *)p4est_quadrant_array_index(&tr->quadrants, i)->p.user_data)->indicator;
      eta2[tr->quadrants_offset + i] = e * e;
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionAdapt(AmrProblem p, const signed char *marks, int min_level, int max_level)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  PetscCall(FemAdvectAdapt(s->adv, marks, min_level, max_level));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionLoadTypes(AmrProblem p, int *types)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  PetscCall(FemAdvectCellTypes(s->p4est, types));
  PetscFunctionReturn(0);
}

double AmrAdvectionBalanceError(const AmrAdvection *s) { return fabs(s->mass - s->mass0 - s->inflow) / fabs(s->mass0); }

PetscErrorCode AmrAdvectionMonitor(AmrProblem p, int cycle)
{
  AmrAdvection *s = p->impl;
  char l2[64] = "";

  PetscFunctionBeginUser;
  if (!isnan(s->l2)) PetscCall(PetscSNPrintf(l2, sizeof l2, ", L2 error %.4e", s->l2));
  PetscCall(PetscPrintf(p->comm, "%s: cycle %d, t %.5f, step %lld: %lld cells (%lld of type 1), mass %.10e, balance error %.1e%s\n", AMR_PROGRAM, cycle,
                        p->state.sim_time, p->state.step, s->cells, s->type1, s->mass, AmrAdvectionBalanceError(s), l2));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionReport(AmrProblem p, json_line *j)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  json_int(j, "cells_type0", s->cells - s->type1);
  json_int(j, "cells_type1", s->type1);
  PetscCall(AmrAdvectionReportTransport(p, j));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionReportTransport(AmrProblem p, json_line *j)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  json_real(j, "mass", s->mass);
  json_real(j, "mass_initial", s->mass0);
  json_real(j, "boundary_inflow", s->inflow);
  json_real(j, "mass_balance_error", AmrAdvectionBalanceError(s));
  json_real(j, "t_poisson", s->t_poisson);
  json_real(j, "t_ksp", s->t_ksp);
  json_real(j, "t_advection", s->t_advection);
  if (s->ksp_its >= 0)
    json_int(j, "ksp_its", s->ksp_its);
  else
    json_null(j, "ksp_its");
  if (s->pde->has_exact) json_real(j, "l2_error", s->l2);
  json_real(j, "error", s->l2);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionVTK(AmrProblem p, AmrVtkData *d)
{
  AmrAdvection *s = p->impl;
  double *corners, *mean;

  PetscFunctionBeginUser;
  PetscCall(FemAdvectCornerValues(s->adv, &corners));
  PetscCall(AmrVtkAddPointField(d, "tracer", corners));
  PetscCall(PetscMalloc1((size_t)s->p4est->local_num_quadrants + 1, &mean));
  PetscCall(FemAdvectCellMeans(s->adv, mean));
  PetscCall(AmrVtkAddCellField(d, "tracer", mean));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionSave(AmrProblem p, AmrCkpState st)
{
  AmrAdvection *s = p->impl;
  double t, inflow, total = 0;

  PetscFunctionBeginUser;
  FemAdvectGetHistory(s->adv, &t, &inflow);
  /* every rank's share of the inflow in its own part: on as many ranks the
   * sum goes on in the same order, bit for bit; the total for another
   * rank count */
  PetscCallMPI(MPI_Reduce(&inflow, &total, 1, MPI_DOUBLE, MPI_SUM, 0, p->comm));
  PetscCall(AmrCkpStateSetReal(st, "problem.time", t));
  PetscCall(AmrCkpStateSetReal(st, "problem.mass_initial", s->mass0));
  PetscCall(AmrCkpStateSetReal(st, "problem.inflow_total", total));
  PetscCall(AmrCkpStateSetRankBytes(st, "problem.inflow", &inflow, sizeof inflow));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionLoad(AmrProblem p, AmrCkpState st)
{
  AmrAdvection *s = p->impl;
  PetscMPIInt rank, size;
  const void *buf;
  size_t len;
  double t, inflow = 0;
  int parts, bad;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(p->comm, &rank));
  PetscCallMPI(MPI_Comm_size(p->comm, &size));
  PetscCall(AmrCkpStateGetReal(st, "problem.time", &t));
  PetscCall(AmrCkpStateGetReal(st, "problem.mass_initial", &s->mass0));
  PetscCall(AmrCkpStateRankParts(st, &parts));
  if (parts == size) {
    PetscCall(AmrCkpStateGetRankBytes(st, "problem.inflow", &buf, &len));
    bad = buf && len == sizeof inflow ? INT_MAX : rank;
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, p->comm));
    PetscCheck(bad == INT_MAX, p->comm, PETSC_ERR_USER_INPUT, "checkpoint: the part of rank %d has no problem.inflow", bad);
    memcpy(&inflow, buf, sizeof inflow);
  } else if (rank == 0) {
    /* another number of ranks: the total on rank 0 */
    PetscCall(AmrCkpStateGetReal(st, "problem.inflow_total", &inflow));
  }
  FemAdvectSetHistory(s->adv, t, inflow);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdvectionDestroy(AmrProblem p)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  if (!s) PetscFunctionReturn(0);
  PetscCall(FemAdvectDestroy(&s->adv));
  PetscCall(PetscFree(p->impl));
  PetscFunctionReturn(0);
}
