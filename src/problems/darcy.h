/** \file darcy.h
 * The parts of darcy-transport (darcy_transport.c) that reactive-transport
 * (reactive_transport.c) runs too: the quarter five-spot's wells, the
 * pressure solve (SIPG, fem/sipg.h) with its locally conservative face
 * fluxes and velocity for the tracer, the transport zone, and the report
 * fields of the tracer's range and the fluxes' divergence.  A member's
 * AdvectProblem takes DarcyVelocity, DarcyInflow and DarcyFlux; its
 * create, solve, report and destroy ops call these. */
#ifndef AMR_PROBLEMS_DARCY_H
#define AMR_PROBLEMS_DARCY_H

#include "problems/advection.h"

/** Create op: the advection state (AmrAdvectionCreate) with the pressure
 *  solver (options prefix darcy_) in its extra. */
PetscErrorCode DarcyCreate(AmrProblem p);

/** Solve op: the pressure on the current forest, its fluxes for the
 *  tracer, the transport zone (the cells of AdvectCell.load_type 1 and
 *  their neighbours), then the cycle's steps (AmrAdvectionSteps), then the
 *  tracer's ranges and the fluxes' divergence for DarcyReport. */
PetscErrorCode DarcySolve(AmrProblem p);

/** Report fields: permeability (the -darcy_permeability spec) and, of the
 *  last DarcySolve, tracer_min, tracer_max (cell means), tracer_min_qp,
 *  tracer_max_qp (quadrature points) and flux_divergence_max
 *  (AdvectFluxDivergence). */
PetscErrorCode DarcyReport(AmrProblem p, json_line *j);

/** Destroy op: the pressure solver, then AmrAdvectionDestroy. */
PetscErrorCode DarcyDestroy(AmrProblem p);

/** Estimate op: the larger of the tracer's indicator (AmrAdvectionEstimate)
 *  and min(1, J / -darcy_refine_logk), J the largest change of ln k from
 *  the cell's centre to the centres of same-size neighbours. */
PetscErrorCode DarcyEstimate(AmrProblem p, double *eta2);

/** Adds the VTK cell field permeability: k at every cell's centre. */
PetscErrorCode DarcyPermeabilityVTK(AmrProblem p, AmrVtkData *vd);

/** b = -k grad p in the cell of pt (ctx: the state DarcyCreate made). */
void DarcyVelocity(void *ctx, const AdvectPoint *pt, double b[3]);

/** The pressure's numerical flux at a face point (AdvectProblem.face_flux;
 *  ctx: the state DarcyCreate made). */
double DarcyFlux(void *ctx, const AdvectFacePoint *fp);

/** Tracer data: 1 where fluid enters, at the injection well. */
double DarcyInflow(void *ctx, const double x[3], double t);

#endif
