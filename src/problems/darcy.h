/** \file darcy.h
 * The parts of darcy-transport (darcy_transport.c) that reactive-transport
 * (reactive_transport.c) runs too: the quarter five-spot's wells, the
 * pressure solve (SIPG, fem/sipg.h) with its locally conservative face
 * fluxes and velocity for the tracer, the transport zone, and the report
 * fields of the tracer's range and the fluxes' divergence.  A member's
 * FemAdvectProblem takes AmrDarcyVelocity, AmrDarcyInflow and AmrDarcyFlux; its
 * create, solve, report and destroy ops call these. */
#ifndef AMR_PROBLEMS_DARCY_H
#define AMR_PROBLEMS_DARCY_H

#include "problems/advection.h"

/** Create op: the advection state (AmrAdvectionCreate) with the pressure
 *  solver (options prefix darcy_) in its extra. */
PetscErrorCode AmrDarcyCreate(AmrProblem p);

/** Solve op: the pressure on the current forest, its fluxes for the
 *  tracer, the transport zone (the cells of FemAdvectCell.load_type 1 and
 *  their neighbours), then the cycle's steps (AmrAdvectionSteps), then the
 *  tracer's ranges and the fluxes' divergence for AmrDarcyReportFields. */
PetscErrorCode AmrDarcySolve(AmrProblem p);

/** Report fields: permeability (the -darcy_permeability spec) and, of the
 *  last AmrDarcySolve, tracer_min, tracer_max (cell means), tracer_min_qp,
 *  tracer_max_qp (quadrature points) and flux_divergence_max
 *  (FemAdvectFluxDivergence). */
PetscErrorCode AmrDarcyReportFields(AmrProblem p, json_line *j);

/** Destroy op: the pressure solver, then AmrAdvectionDestroy. */
PetscErrorCode AmrDarcyDestroy(AmrProblem p);

/** Estimate op: the larger of the tracer's indicator (AmrAdvectionEstimate)
 *  and min(1, J / -darcy_refine_logk), J the largest change of ln k from
 *  the cell's centre to the centres of same-size neighbours. */
PetscErrorCode AmrDarcyEstimate(AmrProblem p, double *eta2);

/** Adds the VTK cell field permeability: k at every cell's centre. */
PetscErrorCode AmrDarcyPermeabilityVTK(AmrProblem p, AmrVtkData *vd);

/** b = -k grad p in the cell of pt (ctx: the state AmrDarcyCreate made). */
void AmrDarcyVelocity(void *ctx, const FemAdvectPoint *pt, double b[3]);

/** The pressure's numerical flux at a face point (FemAdvectProblem.face_flux;
 *  ctx: the state AmrDarcyCreate made). */
double AmrDarcyFlux(void *ctx, const FemAdvectFacePoint *fp);

/** Tracer data: 1 where fluid enters, at the injection well. */
double AmrDarcyInflow(void *ctx, const double x[3], double t);

#endif
