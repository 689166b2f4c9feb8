/*
 * reactive-transport: darcy-transport (darcy.h) whose tracer A reacts with
 * a resident species B to an immobile product C (fem/reaction.h): after
 * every transport step each local cell integrates A + B -> C over the step
 * on its own (Lie splitting), by ROS2 with error control.  A cell where
 * nothing reacts costs one integrator step per point, a cell in the front
 * tens to hundreds, so the work follows the chemistry, not the cell count.
 *
 * B, C and each cell's measured reaction cost are extra DG fields of the
 * solver's cells (AdvectProblem.nextra): refine, coarsen and partition
 * carry them with the tracer, conservatively.  Load types: quiet (inert or
 * reacted) and reacting (load_type).  The local work logged per step is
 * the transport step plus the reaction sweep; the per-cell cost
 * (cell_costs op, -lb_weights measured) is the cell's own reaction clock
 * plus an equal share of its rank's transport work.
 */
#include "problems/darcy.h"

#include <math.h>

#include "util/options.h"
#include "fem/femutil.h"
#include "fem/reaction.h"

#define DIM P4EST_DIM

/* The extra fields of the solver's cells. */
enum { FIELD_B, FIELD_C, FIELD_COST, NFIELDS };

static const AdvectProblem reactive = {"reactive-transport", DarcyVelocity, DarcyInflow, 0, 1.0, NFIELDS, DarcyFlux};

typedef struct {
  ReactionParams react;
  double mass_b0;           /* integral of B at the start */
  double mass_a, mass_b, mass_c;
  double range_b[2], range_c[2]; /* cell means of B and C after the steps */
  long long ntype[REACTION_NTYPES]; /* cells per reaction state after the steps */
  long long steps;          /* integrator steps of the cycle, all ranks */
  double t_reaction;        /* wall seconds of the cycle's reaction sweeps, max over ranks */
  long long steps_local;
  double wall_local;
  long long front_steps;    /* integrator steps of the front's cells, this rank */
  double front_cpu;         /* their CPU seconds */
  int nranks;
  double *step_ns;          /* per rank: front_cpu per front step, ns */
  p4est_locidx_t nsolve;    /* local cells during the steps */
} Reactive;

static int nbasis(const AmrAdvection *s) { return s->opt.degree ? ADVECT_NB : 1; }

/* The load types: a cell where nothing reacts, inert or reacted, takes one
 * integrator step per point whichever state it is in, so both are one type
 * (measured per cell alike; as two types the fit would have to tell apart
 * two equal costs of 1% of a reacting cell's, which 2 ranks cannot). */
enum { LOAD_QUIET, LOAD_REACTING, NLOADTYPES };

static int cell_state(const Reactive *r, int nb, AdvectCell *d) { return (int)ReactionCellState(&r->react, nb, d->c, AdvectCellExtra(d, FIELD_B), AdvectCellExtra(d, FIELD_C)); }

static int load_type(int state) { return state == REACTION_REACTING ? LOAD_REACTING : LOAD_QUIET; }

static Reactive *reactive_state(AmrProblem p) { return ((AmrAdvection *)p->impl)->after_ctx; }

/* body for every local cell K with its data d, in curve order. */
#define FOR_LOCAL_CELLS(p4est, K, d, ...) \
  for (p4est_topidx_t t_ = (p4est)->first_local_tree; t_ <= (p4est)->last_local_tree; t_++) { \
    p4est_tree_t *tr_ = p4est_tree_array_index((p4est)->trees, t_); \
    for (size_t i_ = 0; i_ < tr_->quadrants.elem_count; i_++) { \
      const p4est_locidx_t K = tr_->quadrants_offset + (p4est_locidx_t)i_; \
      AdvectCell *d = p4est_quadrant_array_index(&tr_->quadrants, i_)->p.user_data; \
      (void)K; \
      __VA_ARGS__ \
    } \
  }

/* The reaction over dt in every local cell, each cell timed by its own
 * clock reading (ReactionCell); the cell's CPU time is added to its cost.
 * counts: the cells per reaction state as the sweep finds them, after the
 * transport step, which decides how hard each cell's integration is (a
 * front moves over several cells within one cycle); counted before the
 * clock starts, so the count is no part of the timed work. */
static PetscErrorCode react_step(AmrProblem p, double dt, double *cpu, double *wall, int64_t *counts)
{
  AmrAdvection *s = p->impl;
  Reactive *r = reactive_state(p);
  const int nb = nbasis(s), npoints = nb > 1 ? 1 << (nb - 1) : 1;
  double w0, c0, clock, *xibar;

  PetscFunctionBeginUser;
  for (int t = 0; t < NLOADTYPES; t++) counts[t] = 0;
  FOR_LOCAL_CELLS(s->p4est, K, d, { counts[load_type(cell_state(r, nb, d))]++; })
  PetscCall(PetscMalloc1((size_t)s->p4est->local_num_quadrants * DIM + 1, &xibar));
  PetscCall(AdvectCellCentroids(s->adv, xibar));
  w0 = MPI_Wtime();
  clock = c0 = FemThreadTime();
  FOR_LOCAL_CELLS(s->p4est, K, d, {
    ReactionWork w = {0, 0, 0};
    PetscCall(ReactionCell(&r->react, nb, xibar + (size_t)K * DIM, d->c, AdvectCellExtra(d, FIELD_B), AdvectCellExtra(d, FIELD_C), dt, &clock, &w));
    AdvectCellExtra(d, FIELD_COST)[0] += w.cpu;
    r->steps_local += w.steps;
    /* a point where nothing reacts takes one step: more is the front */
    if (w.steps > npoints) {
      r->front_steps += w.steps;
      r->front_cpu += w.cpu;
    }
  })
  *cpu = FemThreadTime() - c0;
  *wall = MPI_Wtime() - w0;
  PetscCall(PetscFree(xibar));
  r->wall_local += *wall;
  PetscFunctionReturn(0);
}

static PetscErrorCode reactive_create(AmrProblem p)
{
  AmrAdvection *s;
  Reactive *r;
  char msg[256];

  PetscFunctionBeginUser;
  PetscCall(DarcyCreate(p));
  s = p->impl;
  PetscCall(PetscCalloc1(1, &r));
  s->after_ctx = r;
  PetscCallMPI(MPI_Comm_size(p->comm, &r->nranks));
  PetscCall(PetscMalloc1(r->nranks, &r->step_ns));
  s->after_step = react_step;
  /* tighter than the discretisation's defaults: a reacting cell then costs
   * tens of times a cell where nothing reacts, transport included (README) */
  ReactionDefaults(&r->react);
  r->react.rtol = 1e-5;
  r->react.atol = 1e-8;
  r->react.threshold = 1e-8;
  if (ReactionOptionsGet(p->comm, &r->react, msg, sizeof msg)) SETERRQ(p->comm, PETSC_ERR_USER_INPUT, "%s", msg);
  p->ntypes = NLOADTYPES;
  PetscFunctionReturn(0);
}

/* B = b0 and no C anywhere, no cost yet; the integral of B. */
static PetscErrorCode initial_species(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  Reactive *r = reactive_state(p);

  PetscFunctionBeginUser;
  FOR_LOCAL_CELLS(s->p4est, K, d, {
    for (int f = 0; f < NFIELDS; f++)
      for (int k = 0; k < ADVECT_NB; k++) AdvectCellExtra(d, f)[k] = 0;
    AdvectCellExtra(d, FIELD_B)[0] = r->react.b0;
  })
  PetscCall(AdvectExtraMass(s->adv, FIELD_B, &r->mass_b0));
  PetscFunctionReturn(0);
}

static PetscErrorCode reactive_setup(AmrProblem p, p4est_t *p4est)
{
  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionSetup(p, p4est));
  PetscCall(initial_species(p));
  PetscFunctionReturn(0);
}

static PetscErrorCode reactive_initial(AmrProblem p)
{
  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionInitial(p));
  PetscCall(initial_species(p));
  PetscFunctionReturn(0);
}

static PetscErrorCode reactive_load_types(AmrProblem p, int *types)
{
  AmrAdvection *s = p->impl;
  Reactive *r = reactive_state(p);
  const int nb = nbasis(s);

  PetscFunctionBeginUser;
  FOR_LOCAL_CELLS(s->p4est, K, d, { types[K] = load_type(cell_state(r, nb, d)); })
  PetscFunctionReturn(0);
}

/* darcy-transport's cycle with the reaction after every step; the tracer's
 * mass is then A + C, the tracer free and bound, which keeps the balance
 * mass = mass_initial + inflow. */
static PetscErrorCode reactive_solve(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  Reactive *r = reactive_state(p);
  long long loc[1 + REACTION_NTYPES] = {0};
  const int nb = nbasis(s);

  PetscFunctionBeginUser;
  FOR_LOCAL_CELLS(s->p4est, K, d, { AdvectCellExtra(d, FIELD_COST)[0] = 0; })
  r->steps_local = 0;
  r->wall_local = r->front_cpu = 0;
  r->front_steps = 0;
  r->nsolve = s->p4est->local_num_quadrants;
  PetscCall(DarcySolve(p));
  r->mass_a = s->mass;
  PetscCall(AdvectExtraMass(s->adv, FIELD_B, &r->mass_b));
  PetscCall(AdvectExtraMass(s->adv, FIELD_C, &r->mass_c));
  PetscCall(AdvectExtraMeanRange(s->adv, FIELD_B, &r->range_b[0], &r->range_b[1]));
  PetscCall(AdvectExtraMeanRange(s->adv, FIELD_C, &r->range_c[0], &r->range_c[1]));
  s->mass = r->mass_a + r->mass_c;
  loc[0] = r->steps_local;
  FOR_LOCAL_CELLS(s->p4est, K, d, { loc[1 + cell_state(r, nb, d)]++; })
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, loc, 1 + REACTION_NTYPES, MPI_LONG_LONG, MPI_SUM, p->comm));
  r->steps = loc[0];
  for (int t = 0; t < REACTION_NTYPES; t++) r->ntype[t] = loc[1 + t];
  PetscCallMPI(MPI_Allreduce(&r->wall_local, &r->t_reaction, 1, MPI_DOUBLE, MPI_MAX, p->comm));
  {
    /* the same arithmetic on every rank (the per-cell costs of a clock
     * reading and the projection spread over many steps): its spread over
     * ranks and cycles is the machine's, the noise floor of any fit to
     * rank times */
    const double ns = r->front_steps > 0 ? 1e9 * r->front_cpu / (double)r->front_steps : NAN;
    PetscCallMPI(MPI_Allgather(&ns, 1, MPI_DOUBLE, r->step_ns, 1, MPI_DOUBLE, p->comm));
  }
  PetscFunctionReturn(0);
}

/* Relative error of B + C against the initial B (A + C is the transport's
 * mass balance, AmrAdvectionBalanceError). */
static double error_bc(const Reactive *r) { return r->mass_b0 > 0 ? fabs(r->mass_b + r->mass_c - r->mass_b0) / r->mass_b0 : fabs(r->mass_b + r->mass_c); }

static PetscErrorCode reactive_monitor(AmrProblem p, int cycle)
{
  AmrAdvection *s = p->impl;
  Reactive *r = reactive_state(p);

  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(p->comm,
                        "%s: cycle %d, t %.5f, step %lld: %lld cells (%lld inert, %lld reacting, %lld reacted), %lld reaction steps, A+C %.10e (error %.1e), "
                        "B+C %.10e (error %.1e)\n",
                        AMR_PROGRAM, cycle, p->state.sim_time, p->state.step, s->cells, r->ntype[REACTION_INERT], r->ntype[REACTION_REACTING],
                        r->ntype[REACTION_REACTED], r->steps, s->mass, AmrAdvectionBalanceError(s), r->mass_b + r->mass_c, error_bc(r)));
  PetscFunctionReturn(0);
}

static PetscErrorCode reactive_report(AmrProblem p, json_line *j)
{
  Reactive *r = reactive_state(p);

  PetscFunctionBeginUser;
  json_int(j, "cells_inert", r->ntype[REACTION_INERT]);
  json_int(j, "cells_reacting", r->ntype[REACTION_REACTING]);
  json_int(j, "cells_reacted", r->ntype[REACTION_REACTED]);
  PetscCall(AmrAdvectionReportTransport(p, j));
  PetscCall(DarcyReport(p, j));
  json_real(j, "b_min", r->range_b[0]);
  json_real(j, "b_max", r->range_b[1]);
  json_real(j, "c_min", r->range_c[0]);
  json_real(j, "c_max", r->range_c[1]);
  json_real(j, "mass_a", r->mass_a);
  json_real(j, "mass_b", r->mass_b);
  json_real(j, "mass_c", r->mass_c);
  json_real(j, "mass_b_initial", r->mass_b0);
  json_real(j, "mass_bc_error", error_bc(r));
  json_int(j, "reaction_steps", r->steps);
  json_real(j, "t_reaction", r->t_reaction);
  json_reals(j, "rank_reaction_step_ns", r->nranks, r->step_ns);
  PetscFunctionReturn(0);
}

static PetscErrorCode reactive_vtk(AmrProblem p, AmrVtkData *vd)
{
  AmrAdvection *s = p->impl;
  static const char *const species[] = {"B", "C", "reaction_cost"};

  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionVTK(p, vd));
  PetscCall(DarcyPermeabilityVTK(p, vd));
  for (int f = 0; f < NFIELDS; f++) {
    double *v;
    PetscCall(PetscMalloc1((size_t)s->p4est->local_num_quadrants + 1, &v));
    FOR_LOCAL_CELLS(s->p4est, K, d, { v[K] = AdvectCellExtra(d, f)[0]; })
    PetscCall(AmrVtkAddCellField(vd, species[f], v));
  }
  PetscFunctionReturn(0);
}

/* The cell's reaction clock of the last cycle (carried through adapt as a
 * cell-wise constant: a child has its parent's, a coarsened cell its
 * children's volume-weighted mean), plus the rank's transport work shared
 * equally by the cells it advected: the DG loops do about the same work
 * per cell, and no clock per cell is read inside them. */
static PetscErrorCode reactive_cell_costs(AmrProblem p, double *cost)
{
  AmrAdvection *s = p->impl;
  const Reactive *r = reactive_state(p);
  const double share = r->nsolve > 0 ? s->step_cpu / r->nsolve : 0;

  PetscFunctionBeginUser;
  FOR_LOCAL_CELLS(s->p4est, K, d, { cost[K] = AdvectCellExtra(d, FIELD_COST)[0] + share; })
  PetscFunctionReturn(0);
}

static PetscErrorCode reactive_destroy(AmrProblem p)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  if (s && s->after_ctx) PetscCall(PetscFree(reactive_state(p)->step_ns));
  if (s) PetscCall(PetscFree(s->after_ctx));
  PetscCall(DarcyDestroy(p));
  PetscFunctionReturn(0);
}

const AmrProblemOps amr_problem_reactive_transport = {
  .name = "reactive-transport",
  .help = "Darcy transport with A + B -> C per cell after each step (ROS2, error control): the front costs tens of times more",
  .data = &reactive,
  .create = reactive_create,
  .setup = reactive_setup,
  .initial = reactive_initial,
  .solve = reactive_solve,
  .estimate = DarcyEstimate,
  .adapt = AmrAdvectionAdapt,
  .load_types = reactive_load_types,
  .monitor = reactive_monitor,
  .report = reactive_report,
  .vtk = reactive_vtk,
  .destroy = reactive_destroy,
  .save = AmrAdvectionSave, /* B's initial integral is setup's, from the initial data, on any forest */
  .load = AmrAdvectionLoad,
  .cell_costs = reactive_cell_costs,
};
