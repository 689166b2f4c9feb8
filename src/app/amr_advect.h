/** \file amr_advect.h
 * The advection problems of amr2d/amr3d (rotating-hill, moving-front,
 * darcy-transport): options, the cycle of steps, adaptation and
 * repartitioning, the JSON Lines report and VTK output. */
#ifndef AMR_ADVECT_H
#define AMR_ADVECT_H

#include <petscsys.h>
#include "app/lbcycle.h"
#include "app/adapt_options.h"
#include "fem/advect.h"
#include "mesh/mesh.h"

/** Everything an advection run reads from the options database. */
typedef struct {
  const advect_problem_t *prob; /**< NULL: -problem is not an advection problem */
  advect_options_t adv;         /**< -adv_degree, -adv_rk, -adv_cfl, -adv_limiter */
  PetscReal t_final;            /**< -t_final, default: the problem's */
  PetscInt interval;            /**< -amr_interval: steps per adapt interval */
  AmrAdaptOptions adapt;        /**< -amr_strategy (threshold, fraction, doerfler, uniform), -amr_max_level, -report, -vtk_interval */
  PetscReal load_threshold;     /**< -adv_load_threshold: tracer above it = load type 1 */
  AmrLbOptions lb;              /**< -lb_*: weighing and balancing (load types 0 and 1) */
} amr_advect_options_t;

/** Reads -problem and the advection options (listing them under -help).
 *  o->prob stays NULL when -problem is absent or names a Poisson problem
 *  (fem/problem.h); a name neither knows is a user error.  min_level is the
 *  initial uniform level (-amr_min_level). */
PetscErrorCode amr_advect_options(MPI_Comm comm, PetscInt min_level, amr_advect_options_t *o);

/** Runs the advection problem of o on the uniform forest p4est of mesh:
 *  refines towards the initial data, splits the forest by -lb_initial,
 *  then cycles (solve pressure for darcy-transport, -amr_interval timed
 *  steps, report, VTK, adapt, weigh, balance) until -t_final and prints
 *  the run's summary.  vtk is the -vtk prefix (empty: none), vtk_binary
 *  the -vtk_binary option. */
PetscErrorCode amr_advect_run(MPI_Comm comm, const amr_mesh_t *mesh, p4est_t *p4est, PetscInt min_level,
                              const char *vtk, PetscBool vtk_binary, const amr_advect_options_t *o);

#endif
