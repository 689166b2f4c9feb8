/* The BoomerAMG defaults that the 3D Poisson solvers and the SIPG
 * pressure's coarse space share (fem/impl/hypre.h).  No forest: compiled
 * alike for 2D and 3D. */
#include "fem/impl/hypre.h"

/* BoomerAMG's classical defaults build dense coarse operators for 3D
 * stencils (Q2: 125 entries per row); HMIS coarsening with truncated
 * interpolation keeps them sparse (the Poisson solver's extended ext+i
 * with 4 weights: 4x faster here).  Only defaults: explicit -pc_hypre_*
 * options still win. */
PetscErrorCode FemHypreDefaults(const char *prefix, const char *interp, int p_max)
{
  char pmax[16];
  const char *const defaults[][2] = {{"-pc_hypre_boomeramg_coarsen_type", "HMIS"}, {"-pc_hypre_boomeramg_interp_type", interp}, {"-pc_hypre_boomeramg_P_max", pmax}};

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(pmax, sizeof pmax, "%d", p_max));
  for (size_t k = 0; k < sizeof(defaults) / sizeof(defaults[0]); k++) {
    PetscBool set;
    char name[256];
    PetscCall(PetscOptionsHasName(NULL, prefix, defaults[k][0], &set));
    PetscCall(PetscSNPrintf(name, sizeof(name), "-%s%s", prefix ? prefix : "", defaults[k][0] + 1));
    if (!set) PetscCall(PetscOptionsSetValue(NULL, name, defaults[k][1]));
  }
  PetscFunctionReturn(0);
}
