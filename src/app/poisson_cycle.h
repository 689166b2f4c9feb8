#ifndef AMRDLB_APP_POISSON_CYCLE_H
#define AMRDLB_APP_POISSON_CYCLE_H

/* The Poisson cycle of amr2d/amr3d: solve -> estimate -> mark -> adapt ->
 * partition, with one human line and one JSON line per cycle, VTK output
 * and PETSc log stages per phase. */

#include <petscsys.h>
#ifndef P4_TO_P8
#include <p4est.h>
#else
#include <p8est.h>
#endif
#include "fem/problem.h"
#include "mesh/mark.h"

/** Options of the Poisson cycle (see AmrPoissonOptionsRead). */
typedef struct {
  const fem_problem_t *problem;
  PetscInt degree, cycles, vtk_interval;
  char strategy[32];
  amr_mark_params_t mark;
  char report[PETSC_MAX_PATH_LEN], vtk[PETSC_MAX_PATH_LEN];
} AmrPoissonOptions;

/** Read -problem, -degree, -amr_* , -report, -vtk, -vtk_interval from the
 *  options database.  An invalid value leaves a one-line explanation
 *  naming the option in msg (empty when all is well). */
PetscErrorCode AmrPoissonOptionsRead(MPI_Comm comm, AmrPoissonOptions *o, char *msg, size_t len);

/** Run the cycles on p4est (2:1 balanced, no cell data); the forest is
 *  adapted and repartitioned in place.  If the report file cannot be
 *  opened, returns with a one-line explanation in msg. */
PetscErrorCode AmrPoissonRun(MPI_Comm comm, p4est_t *p4est, const AmrPoissonOptions *o, char *msg, size_t len);

#endif
