/** \file cycle.h
 * The one AMR cycle of amr2d/amr3d (src/README.md, "One cycle"), over any
 * registered problem (problems/problem.h):
 *
 *   solve -> estimate -> mark -> adapt with transfer -> weigh -> balance
 *   -> report -> output
 *
 * with one report schema (common fields, the balancer's, the problem's),
 * one human line per cycle from the problem and one from the balancer, VTK
 * output every -vtk_interval cycles, a checkpoint every
 * -checkpoint_interval cycles (-restart continues from it), and a PETSc log
 * stage per phase. */
#ifndef AMR_APP_CYCLE_H
#define AMR_APP_CYCLE_H

#include <petscsys.h>
#include "app/adapt_options.h"
#include "app/lbcycle.h"
#include "mesh/mesh.h"
#include "problems/problem.h"

typedef struct _p_AmrCycle *AmrCycle;

/** Read -problem and, when it is given, the problem's options, the shared
 *  adaptation and output options, -amr_cycles and the -lb_* options.
 *  *cyc is NULL when no -problem is given.  Under -help every option is
 *  listed (a problem's own ones with -problem NAME).  Bad values are
 *  collective PETSC_ERR_USER_INPUT errors naming the option.  min_level,
 *  vtk (the -vtk prefix, empty: none) and vtk_binary (-vtk_binary) come
 *  from the driver. */
PetscErrorCode AmrCycleCreate(MPI_Comm comm, const AmrMesh *mesh, PetscInt min_level, const char *vtk, PetscBool vtk_binary, AmrCycle *cyc);

/** Open the report, attach the problem to the uniform forest p4est (no
 *  user data): its fields and initial data, refinement towards the initial data when the
 *  problem has it, and the -lb_initial split. */
PetscErrorCode AmrCycleSetup(AmrCycle cyc, p4est_t *p4est);

/** Before any option is read: with -restart PREFIX, add the options the
 *  checkpoint's run was started with that are not given again (given ones
 *  override them).  Reads and checks only the checkpoint's manifest and
 *  state record; a bad checkpoint is a collective user error naming it. */
PetscErrorCode AmrCycleRestartOptions(MPI_Comm comm);

/** Whether the run continues from a checkpoint (-restart). */
PetscBool AmrCycleRestarts(AmrCycle cyc);

/** Instead of AmrCycleSetup with -restart: check that the checkpoint is of
 *  this problem, degree and mesh, load its forest with the fields on this
 *  run's ranks (the checkpoint's partition on as many ranks, else even),
 *  attach the problem and restore its state, the balancer's and the run
 *  totals, and open the report (keeping its lines of the cycles before the
 *  restart).  *p4est is the loaded forest on coarse mesh conn; the caller
 *  destroys it after the cycle. */
PetscErrorCode AmrCycleRestart(AmrCycle cyc, p4est_connectivity_t *conn, p4est_t **p4est);

/** Run the cycles until -amr_cycles or the problem's end and print the
 *  run's summary. */
PetscErrorCode AmrCycleRun(AmrCycle cyc);

/** Mark by the -amr_strategy from the squared indicators of the local
 *  cells and adapt the forest through the problem, carrying its fields. */
PetscErrorCode AmrCycleAdapt(AmrCycle cyc, const double *eta2);

/** Weigh the cells of the (adapted) forest by their load types and, when
 *  allow is true, balance and repartition it with the problem's fields
 *  (AmrLbBalance); fills lr. */
PetscErrorCode AmrCycleBalance(AmrCycle cyc, int cycle, PetscBool allow, AmrLbRecord *lr);

/** The problem the cycle runs. */
AmrProblem AmrCycleGetProblem(AmrCycle cyc);

/** Free everything but the forest. */
PetscErrorCode AmrCycleDestroy(AmrCycle *cyc);

#endif
