#ifndef AMRDLB_FEM_SIPG_IMPL_H
#define AMRDLB_FEM_SIPG_IMPL_H

/* Private to the SIPG pressure (sipg.c) and its preconditioner through the
 * continuous space (sipg_mg.c). */

#include <petscksp.h>
#include "mesh/p4est_dim.h"
#include "fem/qelem.h"

/** Makes pc (of the pressure's KSP, its options prefix already set) the
 *  two-level preconditioner through the continuous Q1 space: Gauss-Seidel
 *  on the DG system, BoomerAMG on the Galerkin product P^T A P less its
 *  round-off entries (FemSipgContinuousPCSetForest).  Call before
 *  KSPSetFromOptions, so that the -PREFIXmg_* options still win. */
PetscErrorCode FemSipgContinuousPCCreate(PC pc);

/** Hands pc the prolongation from continuous Q1 on p4est's current forest
 *  (its lnodes: hanging nodes take their parents' interpolated values) to
 *  the DG Q1 unknowns (cell on the curve * 2^d + corner, qe's node order),
 *  split where k (kcell: one value per local cell) jumps by much, and the
 *  coarse operator P^T A P of the KSP's operator A without its entries
 *  below 1e-12 of their row's diagonal (sipg_mg.c).  Call after
 *  KSPSetOperators, on every new forest. */
PetscErrorCode FemSipgContinuousPCSetForest(PC pc, p4est_t *p4est, const FemQElem *qe, const double *kcell);

#endif
