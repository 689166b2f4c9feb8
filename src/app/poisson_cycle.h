/** \file poisson_cycle.h
 * The Poisson cycle of amr2d/amr3d: setup -> assemble -> solve -> estimate
 * -> mark -> adapt -> partition, with one human line and one JSON line per
 * cycle, VTK output and a PETSc log stage per phase. */
#ifndef AMR_APP_POISSON_CYCLE_H
#define AMR_APP_POISSON_CYCLE_H

#include <petscsys.h>
#ifndef P4_TO_P8
#include <p4est.h>
#else
#include <p4est_to_p8est.h>
#include <p8est.h>
#endif
#include "app/adapt_options.h"
#include "app/lbcycle.h"
#include "fem/problem.h"
#include "mesh/mark.h"

/** Options of the Poisson cycle. */
typedef struct {
  const fem_problem_t *problem; /**< NULL: no -problem given, no cycle */
  PetscInt degree, cycles;
  AmrAdaptOptions adapt;           /**< -amr_strategy and its parameters, -amr_max_level, -report, -vtk_interval */
  char vtk[PETSC_MAX_PATH_LEN];    /**< empty: no VTK */
  AmrLbOptions lb;                 /**< -lb_*: weighing and balancing (one load type) */
  char bc_dirichlet[PETSC_MAX_PATH_LEN], bc_neumann[PETSC_MAX_PATH_LEN]; /**< -bc_*: set names of the mesh file */
  signed char *tree_bc;            /**< per tree face from the -bc_* options (amr_mesh_boundary_types), NULL: the problem's */
} AmrPoissonOptions;

/** Read -problem, -degree, -amr_strategy, -amr_refine_fraction,
 *  -amr_coarsen_fraction, -amr_doerfler_theta, -amr_max_level,
 *  -amr_cycles, -report, -vtk_interval, -bc_dirichlet, -bc_neumann and the -lb_* options; min_level (the initial uniform
 *  level, never coarsened) and the -vtk prefix come from the driver.
 *  Invalid values are collective PETSC_ERR_USER_INPUT errors naming the
 *  option. */
PetscErrorCode AmrPoissonOptionsRead(MPI_Comm comm, PetscInt min_level, const char *vtk, AmrPoissonOptions *o);

/** Check that the coarse mesh suits the solver: planar in 2D, and the
 *  geometry is the (bi/tri)linear map of the tree vertices (geom_is_null). */
PetscErrorCode AmrPoissonCheckMesh(MPI_Comm comm, const p4est_connectivity_t *conn, PetscBool geom_is_null,
                                   const char *mesh_name);

/** Run the cycles on p4est (2:1 balanced, no cell data), adapting it and
 *  rebalancing it in place with the built-in balancer (the assembly is
 *  each rank's timed local work), and print the run's summary. */
PetscErrorCode AmrPoissonRun(MPI_Comm comm, p4est_t *p4est, const AmrPoissonOptions *o);

#endif
