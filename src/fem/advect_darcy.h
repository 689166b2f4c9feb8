#ifndef AMRDLB_ADVECT_DARCY_H
#define AMRDLB_ADVECT_DARCY_H

/*
 * darcy-transport: a quarter five-spot on the unit square (unit cube: the
 * wells are vertical lines).  Each cycle solves -div(k grad p) = 0 with
 * p = 1 at the injection well near (0,0), p = 0 at the production well
 * near (1,1) and no flow elsewhere (continuous Q1, fem/poisson.h), and
 * advects a tracer injected at the well with b = -k grad p.
 */

#include "fem/advect.h"

typedef struct advect_darcy advect_darcy_t;

/** Creates the pressure solver (KSP options prefix "darcy_"). */
PetscErrorCode advect_darcy_create (MPI_Comm comm, advect_darcy_t **d);

/** Frees it. */
PetscErrorCode advect_darcy_destroy (advect_darcy_t **d);

/**
 * Solves for the pressure on the current forest of adv (2:1 balanced across
 * corners), hands b = -k grad p to adv's cells and ghosts, and rebuilds
 * adv's face data for the new velocity.  Returns the KSP iterations.
 */
PetscErrorCode advect_darcy_update (advect_darcy_t *d, advect_t *adv,
                                    PetscInt *its);

/**
 * The pressure of the last update at the corners of every local cell (Q1
 * nodal values, hanging nodes constrained), for output as point data, in
 * a fresh array the caller frees with PetscFree; the forest must not have
 * changed since that update.
 */
PetscErrorCode advect_darcy_pressure_values (advect_darcy_t *d,
                                             double **values);

#endif
