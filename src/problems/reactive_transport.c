/*
 * reactive-transport: darcy-transport (darcy.h) whose tracer A reacts with
 * a resident species B to an immobile product C (fem/reaction.h): after
 * every transport step each local cell integrates A + B -> C over the step
 * on its own (Lie splitting), by ROS2 with error control.  A cell where
 * nothing reacts costs one integrator step per point, a cell in the front
 * tens to hundreds, so the work follows the chemistry, not the cell count.
 *
 * B, C and each cell's measured reaction cost are extra DG fields of the
 * solver's cells (FemAdvectProblem.nextra): refine, coarsen and partition
 * carry them with the tracer, conservatively.  Load types: quiet (inert or
 * reacted) and reacting (load_type).  The local work logged per step is
 * the transport step plus the reaction sweep; the per-cell cost
 * (cell_costs op, -lb_weights measured) is the cell's own reaction clock
 * plus an equal share of its rank's transport work.
 */
#include "problems/impl/reactive.h"

#include <math.h>

#include "util/options.h"
#include "util/rankfile.h"
#include "fem/femutil.h"

#define DIM P4EST_DIM

static const FemAdvectProblem reactive = {"reactive-transport", AmrDarcyVelocity, AmrDarcyInflow, 0, 1.0, AMR_REACTIVE_NFIELDS, AmrDarcyFlux};

/* The load types: a cell where nothing reacts, inert or reacted, takes one
 * integrator step per point whichever state it is in, so both are one type
 * (measured per cell alike; as two types the fit would have to tell apart
 * two equal costs of 1% of a reacting cell's, which 2 ranks cannot). */
enum { LOAD_QUIET, LOAD_REACTING, NLOADTYPES };

static int cell_state(const AmrReactive *r, int nb, FemAdvectCell *d) { return (int)FemReactionCellState(&r->react, nb, d->c, FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_B), FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_C)); }

static int load_type(int state) { return state == FEM_REACTION_REACTING ? LOAD_REACTING : LOAD_QUIET; }

static AmrReactive *reactive_state(AmrProblem p) { return ((AmrAdvection *)p->impl)->after_ctx; }

/* The cells per reaction state that the sweep is about to meet, after the
 * transport step: the states decide how hard each cell's integration is
 * (a front moves over several cells within one cycle). */
static PetscErrorCode step_counts(AmrProblem p, int64_t *counts)
{
  AmrAdvection *s = p->impl;
  AmrReactive *r = reactive_state(p);
  const int nb = amr_reactive_nbasis(s);

  PetscFunctionBeginUser;
  for (int t = 0; t < NLOADTYPES; t++) counts[t] = 0;
  AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, { counts[load_type(cell_state(r, nb, d))]++; })
  PetscFunctionReturn(0);
}

static PetscErrorCode AmrReactiveCreate(AmrProblem p)
{
  AmrAdvection *s;
  AmrReactive *r;
  char msg[256];

  PetscFunctionBeginUser;
  PetscCall(AmrDarcyCreate(p));
  s = p->impl;
  PetscCall(PetscCalloc1(1, &r));
  s->after_ctx = r;
  PetscCallMPI(MPI_Comm_size(p->comm, &r->nranks));
  r->step_ns = NAN;
  s->after_step = AmrReactiveSweep;
  s->step_counts = step_counts;
  /* tighter than the discretisation's defaults: a reacting cell then costs
   * tens of times a cell where nothing reacts, transport included (src/problems/README.md) */
  FemReactionDefaults(&r->react);
  r->react.rtol = 1e-5;
  r->react.atol = 1e-8;
  r->react.threshold = 1e-8;
  if (FemReactionOptionsRead(p->comm, &r->react, msg, sizeof msg)) SETERRQ(p->comm, PETSC_ERR_USER_INPUT, "%s", msg);
  r->offload = PETSC_TRUE;
  PetscOptionsBegin(p->comm, NULL, "Reactive transport", NULL);
  PetscCall(AmrOptionsSwitch(PetscOptionsObject, "-react_offload",
                             "Balance each step's reaction apart from the mesh: cells of ranks above the mean cost integrated on ranks below it (true)",
                             &r->offload));
  PetscOptionsEnd();
  p->ntypes = NLOADTYPES;
  /* the cells' costs are the transport phase's work: each step's reaction
   * (unless offloaded) and an equal share of the step's transport */
  p->cost_phase = 1;
  if (r->offload) {
    /* the items' exchange separates the reaction from the transport: a
     * phase of its own, as the offload leaves it whatever the partition */
    p->nphases = 3;
    p->phase_name[2] = "reaction";
    p->phase_apart[2] = 1;
    s->after_phase = 2;
    s->step_phase = 1;
  }
  PetscFunctionReturn(0);
}

/* B = b0 and no C anywhere, no cost yet; the integral of B. */
static PetscErrorCode initial_species(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  AmrReactive *r = reactive_state(p);

  PetscFunctionBeginUser;
  AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, {
    for (int f = 0; f < AMR_REACTIVE_NFIELDS; f++)
      for (int k = 0; k < FEM_ADVECT_NB; k++) FemAdvectCellExtra(d, f)[k] = 0;
    FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_B)[0] = r->react.b0;
  })
  PetscCall(FemAdvectExtraMass(s->adv, AMR_REACTIVE_FIELD_B, &r->mass_b0));
  PetscFunctionReturn(0);
}

static PetscErrorCode AmrReactiveSetup(AmrProblem p, p4est_t *p4est)
{
  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionSetup(p, p4est));
  PetscCall(initial_species(p));
  PetscFunctionReturn(0);
}

static PetscErrorCode AmrReactiveInitial(AmrProblem p)
{
  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionInitial(p));
  PetscCall(initial_species(p));
  PetscFunctionReturn(0);
}

static PetscErrorCode AmrReactiveLoadTypes(AmrProblem p, int *types)
{
  AmrAdvection *s = p->impl;
  AmrReactive *r = reactive_state(p);
  const int nb = amr_reactive_nbasis(s);

  PetscFunctionBeginUser;
  AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, { types[K] = load_type(cell_state(r, nb, d)); })
  PetscFunctionReturn(0);
}

/* darcy-transport's cycle with the reaction after every step; the tracer's
 * mass is then A + C, the tracer free and bound, which keeps the balance
 * mass = mass_initial + inflow. */
static PetscErrorCode AmrReactiveSolve(AmrProblem p)
{
  AmrAdvection *s = p->impl;
  AmrReactive *r = reactive_state(p);
  /* integrator steps, cells per load type, points left unsolved */
  long long loc[2 + FEM_REACTION_NTYPES] = {0};
  const int nb = amr_reactive_nbasis(s);

  PetscFunctionBeginUser;
  r->nsolve = s->p4est->local_num_quadrants;
  PetscCall(PetscCalloc1(r->nsolve + 1, &r->trend));
  PetscCall(PetscMalloc1(r->nsolve + 1, &r->est));
  PetscCall(PetscFree(r->off));
  PetscCall(PetscCalloc1((size_t)s->interval * OFF_N + 1, &r->off));
  /* the first plan's costs: the cells' forecast for this cycle, per step */
  AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, {
    r->est[K] = fmax(FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_COST)[0], 0) / s->interval;
    FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_COST)[0] = 0;
  })
  r->steps_local = r->failed = 0;
  r->wall_local = r->front_cpu = 0;
  r->front_steps = 0;
  r->nsteps = 0;
  PetscCall(AmrDarcySolve(p));
  PetscCall(AmrReactiveOffloadReduce(p));
  AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, {
    double *cost = FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_COST);
    cost[0] = FemReactionCostForecast(cost[0], r->trend[K], r->nsteps);
  })
  PetscCall(PetscFree(r->trend));
  PetscCall(PetscFree(r->est));
  r->mass_a = s->mass;
  PetscCall(FemAdvectExtraMass(s->adv, AMR_REACTIVE_FIELD_B, &r->mass_b));
  PetscCall(FemAdvectExtraMass(s->adv, AMR_REACTIVE_FIELD_C, &r->mass_c));
  PetscCall(FemAdvectExtraMeanRange(s->adv, AMR_REACTIVE_FIELD_B, &r->range_b[0], &r->range_b[1]));
  PetscCall(FemAdvectExtraMeanRange(s->adv, AMR_REACTIVE_FIELD_C, &r->range_c[0], &r->range_c[1]));
  s->mass = r->mass_a + r->mass_c;
  loc[0] = r->steps_local;
  AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, { loc[1 + cell_state(r, nb, d)]++; })
  loc[1 + FEM_REACTION_NTYPES] = r->failed;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, loc, 2 + FEM_REACTION_NTYPES, MPI_LONG_LONG, MPI_SUM, p->comm));
  /* a point left unsolved (FemReactionIntegrate) ends the run here, on
   * every rank at once and before the cycle's record: one rank cannot stop
   * alone between the offload's messages, and the cause is the options,
   * the same on every rank */
  PetscCheck(!loc[1 + FEM_REACTION_NTYPES], p->comm, PETSC_ERR_USER_INPUT,
             "options -react_k %g, -react_b0 %g, -react_rtol %g, -react_atol %g: the reaction found no solution within 100000 integrator steps at %lld "
             "point%s in a time step of this cycle (a rate k B beyond the step-size control: lower -react_k or -react_b0)",
             r->react.k, r->react.b0, r->react.rtol, r->react.atol, loc[1 + FEM_REACTION_NTYPES], loc[1 + FEM_REACTION_NTYPES] > 1 ? "s" : "");
  r->steps = loc[0];
  for (int t = 0; t < FEM_REACTION_NTYPES; t++) r->ntype[t] = loc[1 + t];
  PetscCallMPI(MPI_Allreduce(&r->wall_local, &r->t_reaction, 1, MPI_DOUBLE, MPI_MAX, p->comm));
  {
    /* the same arithmetic on every rank (the per-cell costs of a clock
     * reading and the projection spread over many steps): its spread over
     * ranks and cycles is the machine's, the noise floor of any fit to
     * rank times */
    r->step_ns = r->front_steps > 0 ? 1e9 * r->front_cpu / (double)r->front_steps : NAN;
  }
  PetscFunctionReturn(0);
}

/* Relative error of B + C against the initial B (A + C is the transport's
 * mass balance, AmrAdvectionBalanceError). */
static double error_bc(const AmrReactive *r) { return r->mass_b0 > 0 ? fabs(r->mass_b + r->mass_c - r->mass_b0) / r->mass_b0 : fabs(r->mass_b + r->mass_c); }

static PetscErrorCode AmrReactiveMonitor(AmrProblem p, int cycle)
{
  AmrAdvection *s = p->impl;
  AmrReactive *r = reactive_state(p);

  PetscFunctionBeginUser;
  PetscCall(PetscPrintf(p->comm,
                        "%s: cycle %d, t %.5f, step %lld: %lld cells (%lld inert, %lld reacting, %lld reacted), %lld reaction steps, A+C %.10e (error %.1e), "
                        "B+C %.10e (error %.1e)\n",
                        AMR_PROGRAM, cycle, p->state.sim_time, p->state.step, s->cells, r->ntype[FEM_REACTION_INERT], r->ntype[FEM_REACTION_REACTING],
                        r->ntype[FEM_REACTION_REACTED], r->steps, s->mass, AmrAdvectionBalanceError(s), r->mass_b + r->mass_c, error_bc(r)));
  PetscFunctionReturn(0);
}

static PetscErrorCode AmrReactiveReport(AmrProblem p, json_line *j)
{
  AmrReactive *r = reactive_state(p);

  PetscFunctionBeginUser;
  json_int(j, "cells_inert", r->ntype[FEM_REACTION_INERT]);
  json_int(j, "cells_reacting", r->ntype[FEM_REACTION_REACTING]);
  json_int(j, "cells_reacted", r->ntype[FEM_REACTION_REACTED]);
  PetscCall(AmrAdvectionReportTransport(p, j));
  PetscCall(AmrDarcyReportFields(p, j));
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
  {
    static const char *const key[] = {"rank_reaction_step_ns"};
    PetscCallMPI(json_rank_reals(j, p->comm, 1, key, &r->step_ns));
  }
  PetscCall(AmrReactiveOffloadReport(p, j));
  PetscFunctionReturn(0);
}

static PetscErrorCode AmrReactiveVTK(AmrProblem p, AmrVtkData *vd)
{
  AmrAdvection *s = p->impl;
  static const char *const species[] = {"B", "C", "reaction_cost"};

  PetscFunctionBeginUser;
  PetscCall(AmrAdvectionVTK(p, vd));
  PetscCall(AmrDarcyPermeabilityVTK(p, vd));
  for (int f = 0; f < AMR_REACTIVE_NFIELDS; f++) {
    double *v;
    PetscCall(PetscMalloc1((size_t)s->p4est->local_num_quadrants + 1, &v));
    AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, { v[K] = FemAdvectCellExtra(d, f)[0]; })
    PetscCall(AmrVtkAddCellField(vd, species[f], v));
  }
  PetscFunctionReturn(0);
}

/* The cell's reaction clock of the last cycle (carried through adapt as a
 * cell-wise constant: a child has its parent's, a coarsened cell its
 * children's volume-weighted mean), plus the rank's transport work shared
 * equally by the cells it advected: the DG loops do about the same work
 * per cell, and no clock per cell is read inside them.  With the offload
 * the reaction is no work of the cell's rank: the transport's share alone. */
static PetscErrorCode AmrReactiveCellCosts(AmrProblem p, double *cost)
{
  AmrAdvection *s = p->impl;
  const AmrReactive *r = reactive_state(p);
  const double share = r->nsolve > 0 ? s->step_cpu / r->nsolve : 0;

  PetscFunctionBeginUser;
  AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, { cost[K] = (r->offload ? 0 : FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_COST)[0]) + share; })
  PetscFunctionReturn(0);
}

static PetscErrorCode AmrReactiveDestroy(AmrProblem p)
{
  AmrAdvection *s = p->impl;

  PetscFunctionBeginUser;
  if (s && s->after_ctx) PetscCall(PetscFree(reactive_state(p)->off));
  if (s) PetscCall(PetscFree(s->after_ctx));
  PetscCall(AmrDarcyDestroy(p));
  PetscFunctionReturn(0);
}

const AmrProblemOps amr_problem_reactive_transport = {
  .name = "reactive-transport",
  .help = "Darcy transport with A + B -> C per cell after each step (ROS2, error control): the front costs tens of times more",
  .data = &reactive,
  .create = AmrReactiveCreate,
  .setup = AmrReactiveSetup,
  .initial = AmrReactiveInitial,
  .solve = AmrReactiveSolve,
  .estimate = AmrDarcyEstimate,
  .adapt = AmrAdvectionAdapt,
  .load_types = AmrReactiveLoadTypes,
  .monitor = AmrReactiveMonitor,
  .report = AmrReactiveReport,
  .vtk = AmrReactiveVTK,
  .destroy = AmrReactiveDestroy,
  .save = AmrAdvectionSave, /* B's initial integral is setup's, from the initial data, on any forest */
  .load = AmrAdvectionLoad,
  .cell_costs = AmrReactiveCellCosts,
};
