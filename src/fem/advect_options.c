/*
 * The -adv_* options of the DG advection solver.
 */

#include "fem/advect.h"
#include "fem/femutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


PetscErrorCode AdvectOptionsGet(MPI_Comm comm, AdvectOptions *opt, char *msg, size_t msglen)
{
  char degree[64] = "1", rk[64] = "", cfl[64] = "0.5", limiter[64] = "false";
  PetscBool set;
  long iv;
  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, NULL, "Advection (upwind DG) options", NULL);
  PetscCall(PetscOptionsString("-adv_degree", "DG degree: 0 (finite volume) or 1", NULL, degree, degree, sizeof degree, NULL));
  PetscCall(PetscOptionsString("-adv_rk", "SSP Runge-Kutta stages: 2 or 3 (default: degree + 2)", NULL, rk, rk, sizeof rk, NULL));
  PetscCall(PetscOptionsString("-adv_cfl", "CFL number in (0, 1]: dt = cfl |K| / ((2p+1) outflow(K))", NULL, cfl, cfl, sizeof cfl, NULL));
  PetscCall(PetscOptionsString("-adv_limiter", "Barth-Jespersen slope limiter for degree 1", NULL, limiter, limiter, sizeof limiter, &set));
  PetscOptionsEnd();
  msg[0] = 0;
  if (set && !limiter[0]) strcpy(limiter, "true"); /* a bare -adv_limiter switches it on */
  if (!FemParseInt(degree, &iv) || (iv != 0 && iv != 1)) {
    snprintf(msg, msglen, "option -adv_degree: '%s' is not 0 or 1", degree);
    PetscFunctionReturn(PETSC_ERR_USER_INPUT);
  }
  opt->degree = (int)iv;
  opt->rk_stages = opt->degree + 2;
  if (rk[0]) {
    if (!FemParseInt(rk, &iv) || (iv != 2 && iv != 3)) {
      snprintf(msg, msglen, "option -adv_rk: '%s' is not 2 or 3", rk);
      PetscFunctionReturn(PETSC_ERR_USER_INPUT);
    }
    opt->rk_stages = (int)iv;
  }
  if (!FemParseReal(cfl, &opt->cfl) || opt->cfl <= 0 || opt->cfl > 1) {
    snprintf(msg, msglen, "option -adv_cfl: '%s' is not a number in (0, 1]", cfl);
    PetscFunctionReturn(PETSC_ERR_USER_INPUT);
  }
  if (!strcmp(limiter, "1") || !strcmp(limiter, "true") || !strcmp(limiter, "yes"))
    opt->limiter = 1;
  else if (!strcmp(limiter, "0") || !strcmp(limiter, "false") || !strcmp(limiter, "no"))
    opt->limiter = 0;
  else {
    snprintf(msg, msglen, "option -adv_limiter: '%s' is not true or false", limiter);
    PetscFunctionReturn(PETSC_ERR_USER_INPUT);
  }
  PetscFunctionReturn(0);
}
