#ifndef AMRDLB_FEM_HYPRE_IMPL_H
#define AMRDLB_FEM_HYPRE_IMPL_H

/* Private to the solvers of fem/ that precondition with BoomerAMG: the
 * 3D Poisson solver (poisson.c), the SIPG pressure (sipg.c) and its coarse
 * space (sipg_mg.c). */

#include <petscsys.h>

/** Sets the options database's defaults for BoomerAMG (HMIS coarsening,
 *  interpolation \a interp with at most \a p_max weights per row) under
 *  \a prefix, where not given: for every 3D solver preconditioned by hypre
 *  and the SIPG pressure's coarse space. */
PetscErrorCode FemHypreDefaults(const char *prefix, const char *interp, int p_max);

#endif
