/** \file darcy.h
 * The parts of darcy-transport (darcy_transport.c) that reactive-transport
 * (reactive_transport.c) runs too: the quarter five-spot's wells, the
 * pressure solve and the Darcy velocity of the tracer, and the transport
 * zone.  A member's AdvectProblem takes DarcyVelocity and DarcyInflow; its
 * create, solve and destroy ops call these. */
#ifndef AMR_PROBLEMS_DARCY_H
#define AMR_PROBLEMS_DARCY_H

#include "problems/advection.h"

/** Create op: the advection state (AmrAdvectionCreate) with the pressure
 *  solver (options prefix darcy_) in its extra. */
PetscErrorCode DarcyCreate(AmrProblem p);

/** Solve op: the pressure on the current forest, its velocity for the
 *  tracer, the transport zone (the cells of AdvectCell.load_type 1 and
 *  their neighbours), then the cycle's steps (AmrAdvectionSteps). */
PetscErrorCode DarcySolve(AmrProblem p);

/** Destroy op: the pressure solver, then AmrAdvectionDestroy. */
PetscErrorCode DarcyDestroy(AmrProblem p);

/** Estimate op: the larger of the tracer's indicator (AmrAdvectionEstimate)
 *  and min(1, J / -darcy_refine_logk), J the largest change of ln k from
 *  the cell's centre to the centres of same-size neighbours. */
PetscErrorCode DarcyEstimate(AmrProblem p, double *eta2);

/** Adds the VTK cell field permeability: k at every cell's centre. */
PetscErrorCode DarcyPermeabilityVTK(AmrProblem p, AmrVtkData *vd);

/** Adds the report field permeability: the -darcy_permeability spec. */
PetscErrorCode DarcyReport(AmrProblem p, json_line *j);

/** b = -k grad p in the cell of pt (ctx: the state DarcyCreate made). */
void DarcyVelocity(void *ctx, const AdvectPoint *pt, double b[3]);

/** Tracer data: 1 where fluid enters, at the injection well. */
double DarcyInflow(void *ctx, const double x[3], double t);

#endif
