#ifndef AMRDLB_PERMEABILITY_H
#define AMRDLB_PERMEABILITY_H

/*
 * A scalar permeability field k(x) > 0 on the unit square or cube, made
 * from a spec string (the -darcy_permeability option of the Darcy
 * problems):
 *
 *   constant:K                 k = K everywhere
 *   lognormal:SIGMA,LENGTH,SEED  ln k a Gaussian random field, mean 0,
 *                              standard deviation SIGMA, covariance
 *                              SIGMA^2 exp(-r^2 / (2 LENGTH^2)), a sum of
 *                              FEM_PERMEABILITY_MODES random Fourier modes
 *                              drawn from SEED
 *   file:PATH                  cell-wise values on an NX x NY [x NZ] grid
 *                              over the unit square [cube] (README)
 *
 * The field is a pure function of the spec and x: the same on every rank,
 * on any rank count and after a restart.  No forest: one library for 2D
 * and 3D (a 2D run sees the plane z = 0).
 */

#include <petscsys.h>

/** Random Fourier modes of a lognormal field. */
#define FEM_PERMEABILITY_MODES 128

/** The spec forms, for -help. */
#define FEM_PERMEABILITY_FORMS "constant:K | lognormal:SIGMA,LENGTH,SEED | file:PATH"

typedef struct _p_FemPermeability *FemPermeability;

/**
 * Makes the field of spec (collective on comm).  A file is read by rank 0
 * and broadcast.  A malformed spec, an impossible parameter or a bad file
 * returns PETSC_ERR_USER_INPUT on every rank with the same one-line
 * message, naming the option -darcy_permeability (and the file).
 */
PetscErrorCode FemPermeabilityCreate(MPI_Comm comm, const char *spec, FemPermeability *perm);

/** k at x (3 coordinates; the third is 0 in 2D): pure and thread-safe. */
double FemPermeabilityValue(FemPermeability perm, const double x[3]);

/** The spec the field was made from (for reports). */
const char *FemPermeabilitySpec(FemPermeability perm);

/** Frees the field; *perm becomes NULL. */
PetscErrorCode FemPermeabilityDestroy(FemPermeability *perm);

#endif
