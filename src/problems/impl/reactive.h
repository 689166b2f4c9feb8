/** \file impl/reactive.h
 * Inside reactive-transport: the problem's state, shared by its ops
 * (reactive_transport.c) and its reaction sweep (reactive_sweep.c). */
#ifndef AMR_PROBLEMS_IMPL_REACTIVE_H
#define AMR_PROBLEMS_IMPL_REACTIVE_H

#include "problems/darcy.h"
#include "fem/reaction.h"

/* The extra fields of the solver's cells. */
enum { AMR_REACTIVE_FIELD_B, AMR_REACTIVE_FIELD_C, AMR_REACTIVE_FIELD_COST, AMR_REACTIVE_NFIELDS };

/* What one step's offload did on this rank (reduced over the ranks once a
 * cycle, AmrReactiveOffloadReduce): the planned reaction loads before
 * and after in seconds (then their maxima) and before again (then the
 * mean), items sent, item messages sent and received (then one way), the
 * plan's messages and its own work in seconds (then the slowest rank's). */
enum { OFF_BEFORE, OFF_AFTER, OFF_MEAN, OFF_MOVED, OFF_MESSAGES, OFF_PLAN_MESSAGES, OFF_PLAN_S, OFF_N };

typedef struct {
  FemReactionParams react;
  PetscBool offload;        /**< -react_offload: each step's cells integrated on the ranks that have time */
  double mass_b0;           /* integral of B at the start */
  double mass_a, mass_b, mass_c;
  double range_b[2], range_c[2]; /* cell means of B and C after the steps */
  long long ntype[FEM_REACTION_NTYPES]; /* cells per reaction state after the steps */
  long long steps;          /* integrator steps of the cycle, all ranks */
  double t_reaction;        /* wall seconds of the cycle's reaction sweeps, max over ranks */
  long long steps_local;    /* integrator steps this rank computed (its own cells' or others') */
  long long failed;         /* points this rank left unsolved in the cycle's sweeps (FemReactionIntegrate) */
  double wall_local;
  long long front_steps;    /* integrator steps of front cells this rank computed */
  double front_cpu;         /* their CPU seconds */
  int nranks;
  double step_ns;           /* this rank's front_cpu per front step, ns (NaN: none) */
  p4est_locidx_t nsolve;    /* local cells during the steps */
  double *trend;            /* per local cell during the steps: sum of step index x the cell's reaction clock */
  double *est;              /* per local cell during the steps: its reaction clock in the last step, the next plan's cost */
  int nsteps;               /* reaction sweeps of the cycle so far */
  double *off;              /* OFF_N values per sweep of the cycle (-amr_interval of them), then reduced */
} AmrReactive;

/* body for every local cell K with its data d, in curve order. */
#define AMR_REACTIVE_FOR_CELLS(p4est, K, d, ...) \
  for (p4est_topidx_t t_ = (p4est)->first_local_tree; t_ <= (p4est)->last_local_tree; t_++) { \
    p4est_tree_t *tr_ = p4est_tree_array_index((p4est)->trees, t_); \
    for (size_t i_ = 0; i_ < tr_->quadrants.elem_count; i_++) { \
      const p4est_locidx_t K = tr_->quadrants_offset + (p4est_locidx_t)i_; \
      FemAdvectCell *d = p4est_quadrant_array_index(&tr_->quadrants, i_)->p.user_data; \
      (void)K; \
      __VA_ARGS__ \
    } \
  }

/** DG coefficients per species of the problem's cells. */
static inline int amr_reactive_nbasis(const AmrAdvection *s) { return s->opt.degree ? FEM_ADVECT_NB : 1; }

/** The reaction over dt in every local cell (the after_step of
 *  AmrAdvection): here, or with r->offload on the ranks the plan names. */
PetscErrorCode AmrReactiveSweep(AmrProblem p, double dt, double *cpu, double *wall);

/** The cycle's offload figures over the ranks (collective): sums, and
 *  maxima of the loads and the plan's time. */
PetscErrorCode AmrReactiveOffloadReduce(AmrProblem p);

/** The offload's report fields, one value per step of the cycle. */
PetscErrorCode AmrReactiveOffloadReport(AmrProblem p, json_line *j);

#endif
