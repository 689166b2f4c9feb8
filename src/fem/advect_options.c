/*
 * The -adv_* options of the DG advection solver.
 */

#include "fem/advect.h"
#include "util/options.h"

/* The -adv_* options into ctx, an FemAdvectOptions; a bad value is an error
 * naming the option (FemAdvectOptionsRead hands its message to the caller). */
static PetscErrorCode advect_read(MPI_Comm comm, void *ctx)
{
  FemAdvectOptions *opt = ctx;
  PetscBool limiter = PETSC_FALSE;

  PetscFunctionBeginUser;
  opt->degree = 1;
  opt->cfl = 0.5;
  PetscOptionsBegin(comm, NULL, "Advection (upwind DG) options", NULL);
  PetscCall(AmrOptionsIntIn(PetscOptionsObject, "-adv_degree", "DG degree: 0 (finite volume) or 1", 0, 1, "0 or 1", &opt->degree, NULL));
  opt->rk_stages = opt->degree + 2;
  PetscCall(AmrOptionsIntIn(PetscOptionsObject, "-adv_rk", "SSP Runge-Kutta stages: 2 or 3 (default: degree + 2)", 2, 3, "2 or 3", &opt->rk_stages, NULL));
  PetscCall(AmrOptionsRealIn(PetscOptionsObject, "-adv_cfl", "CFL number in (0, 1]: dt = cfl |K| / ((2p+1) outflow(K))", 0, 1, AMR_OPEN_LO,
                             "a number in (0, 1]", &opt->cfl));
  PetscCall(AmrOptionsSwitch(PetscOptionsObject, "-adv_limiter", "Barth-Jespersen slope limiter for degree 1", &limiter));
  PetscOptionsEnd();
  opt->limiter = limiter ? 1 : 0;
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectOptionsRead(MPI_Comm comm, FemAdvectOptions *opt, char *msg, size_t msglen)
{
  return AmrOptionsQuietly(comm, advect_read, opt, msg, msglen);
}
