#ifndef AMRDLB_ADVECT_H
#define AMRDLB_ADVECT_H

/*
 * Upwind discontinuous Galerkin advection u_t + div(b u) = 0 on a p4est
 * forest, degree 0 or 1, explicit SSP Runge-Kutta.  One source compiles to
 * 2D and 3D (p4est_to_p8est.h convention).
 *
 * The solution lives in the quadrants' user data (advect_cell_t), so that
 * refinement, coarsening and partitioning carry it; the solver keeps the
 * geometry and the face list, rebuilt by advect_mesh_changed() after every
 * change of the forest.
 */

#include <petscsys.h>
#ifndef P4_TO_P8
#include <p4est.h>
#include <p4est_ghost.h>
#else
#include <p4est_to_p8est.h>
#include <p8est.h>
#include <p8est_ghost.h>
#endif

/** Coefficients per cell: the constant and one linear mode per direction. */
#define ADVECT_NB (P4EST_DIM + 1)

/** Per-quadrant data: the state that adapt and partition must carry. */
typedef struct
{
  double c[ADVECT_NB]; /**< u = c0 + sum_k c[1+k] xi_k, xi in [-1,1]^d */
  double indicator;    /**< last jump/gradient indicator value */
  int load_type;       /**< 0: transport-free cell, 1: tracer present */
  int mark;            /**< adaptation in progress: +1 refine, -1 coarsen */
} advect_cell_t;

/** A point where the velocity is wanted, with the cell that holds it, so
 *  that a velocity computed from a finite element field can be evaluated
 *  there.  Faces are evaluated from one of their cells, local or ghost. */
typedef struct
{
  double x[3];                  /**< physical coordinates */
  p4est_topidx_t tree;          /**< the cell's tree */
  const p4est_quadrant_t *quad; /**< the cell */
  p4est_locidx_t cell;          /**< local index, or local count + ghost index */
  double eta[3];                /**< coordinates in the cell, [0,1]^d */
} advect_point_t;

/** A test problem: stationary velocity, initial and inflow data. */
typedef struct
{
  const char *name;
  /** Velocity b at a point; fixed until the next advect_mesh_changed(). */
  void (*velocity) (void *ctx, const advect_point_t *pt, double b[3]);
  /** Exact solution u(x, t); also the initial (t = 0) and inflow data. */
  double (*exact) (void *ctx, const double x[3], double t);
  /** Whether exact() is the true solution (and errors are meaningful). */
  int has_exact;
  /** Default -t_final: one revolution, or a crossing of the domain. */
  double t_final;
  /** Whether the velocity comes from a Darcy pressure solve: ctx is then an
   *  advect_darcy_t, updated each cycle by advect_darcy_update(); the
   *  tracer moves only in the transport zone (advect_classify()). */
  int darcy;
} advect_problem_t;

/** Discretisation choices (the -adv_* options). */
typedef struct
{
  int degree;    /**< 0 (finite volume) or 1 */
  int rk_stages; /**< 2 or 3 (SSP) */
  double cfl;    /**< dt = cfl * min_K |K| / ((2p+1) outflow(K)) */
  int limiter;   /**< Barth-Jespersen slope limiter for degree 1 */
} advect_options_t;

typedef struct advect advect_t;

/** Finds a registered advection problem by name; NULL when none has it. */
const advect_problem_t *advect_problem_find (const char *name);

/** Writes the registered problem names, separated by sep, into buf. */
void advect_problem_names (char *buf, size_t len, const char *sep);

/**
 * Reads -adv_degree, -adv_rk, -adv_cfl and -adv_limiter from the PETSc
 * options database (and lists them under -help).  Bad values return PETSC_ERR_USER_INPUT without a PETSc
 * error trace and put one sentence naming the option into msg, so that the
 * caller can print a single "error:" line on every rank count.
 */
PetscErrorCode advect_options_get (MPI_Comm comm, advect_options_t *opt,
                                   char *msg, size_t msglen);

/**
 * Attaches a solver to p4est: resets the quadrant data to advect_cell_t,
 * builds the ghost layer and the face list, and projects the problem's
 * exact(x, 0) onto every cell.  ctx is passed to the problem's functions.
 */
PetscErrorCode advect_create (p4est_t *p4est, const advect_problem_t *prob,
                              void *ctx, const advect_options_t *opt,
                              advect_t **adv);

/**
 * Replaces the solution by the projection of exact(x, t) at the current
 * time, limited if the limiter is on.  After refining towards the initial
 * data, this gives the fine cells the data instead of the coarse cells'
 * restriction of it.
 */
PetscErrorCode advect_project_exact (advect_t *adv);

/** Frees the solver (not the forest). */
PetscErrorCode advect_destroy (advect_t **adv);

/**
 * Rebuilds the ghost layer, geometry and face list.  Every other function
 * does it by itself when the forest's revision changed (refine, coarsen,
 * balance, partition); call it after a change p4est does not count, such as
 * a new velocity field.
 */
PetscErrorCode advect_mesh_changed (advect_t *adv);

/** The stable time step of the current mesh: equal on all ranks. */
PetscErrorCode advect_time_step (advect_t *adv, double *dt);

/**
 * Advances from the solver's current time by up to nsteps steps, stopping
 * exactly at t_end; returns the number of steps taken.
 */
PetscErrorCode advect_advance (advect_t *adv, double t_end, int nsteps,
                               int *taken);

/** Current simulation time. */
double advect_time (const advect_t *adv);

/**
 * This rank's own work in time steps since advect_create(), in seconds of
 * thread CPU time and of wall time: residuals, updates and the limiter,
 * without the ghost exchanges that wait on other ranks.  The load balancer
 * turns differences of it into per-step times.
 */
/** The load type of every local cell of \a p4est, whose user data are
 *  advect_cell_t, in a fresh array (*types is freed first; size
 *  local_num_quadrants + 1, so it is never empty). */
PetscErrorCode advect_cell_types (p4est_t *p4est, int **types);

void advect_work_time (const advect_t *adv, double *cpu, double *wall);

/**
 * Global integral of u, and the net boundary inflow integrated over all
 * steps so far: mass(t) = mass(0) + inflow up to round-off.
 */
PetscErrorCode advect_mass (advect_t *adv, double *mass, double *inflow);

/** L2 error against the problem's exact solution at the current time. */
PetscErrorCode advect_l2_error (advect_t *adv, double *err);

/** Global minimum and maximum of the cell means. */
PetscErrorCode advect_mean_range (advect_t *adv, double *umin, double *umax);

/**
 * Computes the jump/gradient indicator of every local cell: the largest
 * jump of cell means across its faces and, for degree 1, the variation of u
 * inside the cell.  Stored in advect_cell_t.indicator.
 */
PetscErrorCode advect_indicator (advect_t *adv);

/**
 * Marks by thresholds on the indicator (computed here): +1 where it
 * exceeds refine_tol, -1 where it is below coarsen_tol, else 0.  marks has
 * one entry per local cell.
 */
PetscErrorCode advect_mark_threshold (advect_t *adv, double refine_tol,
                                      double coarsen_tol, signed char *marks);

/**
 * Refines the local cells marked +1 (below max_level), coarsens families
 * all marked -1 (above min_level), restores 2:1 balance across faces and
 * corners, each with conservative projection.  Families split between
 * ranks are not coarsened; repartition with p4est_partition_ext(p4est, 1,
 * ...) to keep them together.
 */
PetscErrorCode advect_adapt (advect_t *adv, const signed char *marks,
                             int min_level, int max_level);

/** Sets load_type = 1 where the cell mean exceeds threshold, else 0.  For
 *  darcy-transport this also moves the transport zone: only type-1 cells
 *  and their face neighbours advect, so type-1 cells really cost more. */
PetscErrorCode advect_classify (advect_t *adv, double threshold);

/** The forest the solver works on. */
p4est_t *advect_forest (const advect_t *adv);

/** Numbers of local cells and of ghost cells (face neighbours on other
 *  ranks) of the current mesh. */
PetscErrorCode advect_cell_counts (advect_t *adv, p4est_locidx_t *nlocal,
                                  p4est_locidx_t *nghost);

/**
 * Fills the ghost part of arr (nper doubles per cell, local cells first,
 * then ghosts in the order of advect_point_t.cell) from the owners.
 */
PetscErrorCode advect_ghost_exchange (advect_t *adv, double *arr, size_t nper);

/** The DG solution at the corners of every local cell, for output as
 *  discontinuous point data: local quadrants x P4EST_CHILDREN values,
 *  corners in p4est's order (x fastest), in a fresh array the caller
 *  frees with PetscFree. */
PetscErrorCode advect_corner_values (advect_t *adv, double **values);

/** Fills values with each local cell's mean (length = local quadrants). */
PetscErrorCode advect_cell_means (advect_t *adv, double *values);

#endif
