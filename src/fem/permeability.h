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
 *                              over the unit square [cube] (src/problems/README.md)
 *
 * The field is a pure function of the spec and x: the same on every rank,
 * on any rank count and after a restart.  No forest: one library for 2D
 * and 3D (a 2D run sees the plane z = 0).
 */

#include <petscsys.h>

/** Random Fourier modes of a lognormal field. */
#define FEM_PERMEABILITY_MODES 128

/** The contrast max k / min k beyond which the Darcy flux is refused:
 *  the discrete divergence of the face fluxes grows as about 2e-16 times
 *  the contrast (measured on a checkerboard: 2.2e-10 at 1e6, 2.2e-8 at
 *  1e8, 2.2e-6 at 1e10, 7e-4 at 1e12), so the transport stops conserving
 *  mass to any useful digit past it. */
#define FEM_PERMEABILITY_MAX_CONTRAST 1e10

/** The spec forms, for -help. */
#define FEM_PERMEABILITY_FORMS "constant:K | lognormal:SIGMA,LENGTH,SEED | file:PATH"

typedef struct _p_FemPermeability *FemPermeability;

/**
 * Makes the field of spec (collective on comm).  A file is read by rank 0
 * and broadcast.  A malformed spec, an impossible parameter or a bad file
 * returns PETSC_ERR_USER_INPUT on every rank with the same one-line
 * message, naming the option -darcy_permeability (and the file); so does
 * a contrast beyond FEM_PERMEABILITY_MAX_CONTRAST.
 */
PetscErrorCode FemPermeabilityCreate(MPI_Comm comm, const char *spec, FemPermeability *perm);

/** k at x (3 coordinates; the third is 0 in 2D): pure and thread-safe. */
double FemPermeabilityValue(FemPermeability perm, const double x[3]);

/** max k / min k: over the cells of a file, on a grid of 32 points per
 *  direction for a lognormal field (the plane z = 0 in 2D). */
double FemPermeabilityContrast(FemPermeability perm);

/** The spec the field was made from (for reports). */
const char *FemPermeabilitySpec(FemPermeability perm);

/** Frees the field; *perm becomes NULL. */
PetscErrorCode FemPermeabilityDestroy(FemPermeability *perm);

#endif
