/** \file advection.h
 * The advection family of problems: a tracer advected by upwind DG
 * (fem/advect.h) with explicit time steps, -amr_interval of them per
 * cycle, two load types (a tracer mean above -adv_load_threshold makes a
 * cell type 1).  rotating-hill and moving-front are these ops with their
 * data; darcy-transport (darcy_transport.c, darcy.h) adds a pressure
 * solve before the steps, reactive-transport (reactive_transport.c) a
 * reaction after each step. */
#ifndef AMR_PROBLEMS_ADVECTION_H
#define AMR_PROBLEMS_ADVECTION_H

#include "fem/advect.h"
#include "problems/impl/problem.h"

/** The state of an advection problem. */
typedef struct {
  const FemAdvectProblem *pde; /**< velocity, initial and inflow data */
  void *ctx;                   /**< passed to pde's functions */
  FemAdvectOptions opt;        /**< -adv_degree, -adv_rk, -adv_cfl, -adv_limiter */
  FemAdvect adv;
  p4est_t *p4est;
  double t_final;              /**< -t_final */
  PetscInt interval;           /**< -amr_interval: steps per cycle */
  double load_threshold;       /**< -adv_load_threshold */
  double mass0, mass, inflow, l2;
  long long cells, type1;      /**< cells, and of load type 1, after the steps */
  PetscInt ksp_its;            /**< pressure solve (-1: none) */
  double t_poisson, t_ksp, t_advection; /**< wall seconds of the cycle, max over ranks */
  void *extra;                 /**< a member's own state (darcy-transport) */
  /** Optional: a member's own local work after each transport step of
   *  length dt (reactive-transport's reaction, Lie splitting), its thread
   *  CPU and wall seconds into cpu and wall.  With after_phase 0 they are
   *  logged with the step's; else the work runs in problem phase
   *  after_phase and is logged apart from the step, which runs in phase
   *  step_phase. */
  PetscErrorCode (*after_step)(AmrProblem p, double dt, double *cpu, double *wall);
  /** With after_step: the rank's cells per load type (p->ntypes) that
   *  after_step's work is about to meet (the member's load types are the
   *  states its work depends on), logged with the step. */
  PetscErrorCode (*step_counts)(AmrProblem p, int64_t *counts);
  int after_phase, step_phase;
  void *after_ctx;             /**< the after_step member's own state */
  double step_cpu;             /**< this rank's transport work (thread CPU s) in the last cycle's steps */
} AmrAdvection;

PetscErrorCode AmrAdvectionCreate(AmrProblem p);
PetscErrorCode AmrAdvectionSetup(AmrProblem p, p4est_t *p4est);
PetscErrorCode AmrAdvectionInitial(AmrProblem p);
PetscErrorCode AmrAdvectionEstimate(AmrProblem p, double *eta2);
PetscErrorCode AmrAdvectionAdapt(AmrProblem p, const signed char *marks, int min_level, int max_level);
PetscErrorCode AmrAdvectionLoadTypes(AmrProblem p, int *types);
PetscErrorCode AmrAdvectionMonitor(AmrProblem p, int cycle);
PetscErrorCode AmrAdvectionReport(AmrProblem p, json_line *j);
PetscErrorCode AmrAdvectionVTK(AmrProblem p, AmrVtkData *d);
/** The report fields of AmrAdvectionReport but the load-type counts, for a
 *  member with load types of its own. */
PetscErrorCode AmrAdvectionReportTransport(AmrProblem p, json_line *j);
PetscErrorCode AmrAdvectionDestroy(AmrProblem p);
PetscErrorCode AmrAdvectionSave(AmrProblem p, AmrCkpState st);
PetscErrorCode AmrAdvectionLoad(AmrProblem p, AmrCkpState st);

/** The time steps of one cycle (the timed local work, one log entry per
 *  step), then the load types and the cycle's numbers: the solve op of the
 *  advection family, and the transport part of its members' solves. */
PetscErrorCode AmrAdvectionSteps(AmrProblem p);

/** Relative error of the mass balance: mass against the initial mass and
 *  the boundary inflow. */
double AmrAdvectionBalanceError(const AmrAdvection *s);

#endif
