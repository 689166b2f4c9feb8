#ifndef AMRDLB_ADVECT_H
#define AMRDLB_ADVECT_H

/*
 * Upwind discontinuous Galerkin advection u_t + div(b u) = 0 on a p4est
 * forest, degree 0 or 1, explicit SSP Runge-Kutta.  One source compiles to
 * 2D and 3D (p4est_to_p8est.h convention).
 *
 * The solution lives in the quadrants' user data (FemAdvectCell), so that
 * refinement, coarsening and partitioning carry it; the solver keeps the
 * geometry and the face list, rebuilt by FemAdvectMeshChanged() after every
 * change of the forest.
 */

#include <petscsys.h>
#include "mesh/p4est_dim.h"

/** Coefficients per cell: the constant and one linear mode per direction. */
#define FEM_ADVECT_NB (P4EST_DIM + 1)

/** Per-quadrant data: the state that adapt and partition must carry. */
typedef struct {
  double c[FEM_ADVECT_NB]; /**< u = c0 + sum_k c[1+k] xi_k, xi in [-1,1]^d */
  double indicator; /**< last jump/gradient indicator value */
  int load_type; /**< 0: transport-free cell, 1: tracer present */
  int mark; /**< adaptation in progress: +1 refine, -1 coarsen */
} FemAdvectCell;

/** A point where the velocity is wanted, with the cell that holds it, so
 *  that a velocity computed from a finite element field can be evaluated
 *  there.  Faces are evaluated from one of their cells, local or ghost. */
typedef struct {
  double x[3]; /**< physical coordinates */
  p4est_topidx_t tree; /**< the cell's tree */
  const p4est_quadrant_t *quad; /**< the cell */
  p4est_locidx_t cell; /**< local index, or local count + ghost index */
  double eta[3]; /**< coordinates in the cell, [0,1]^d */
} FemAdvectPoint;

/** A face quadrature point as both cells of the face see it, for a problem
 *  that gives the normal flux itself (FemAdvectProblem.face_flux).  Every face
 *  is seen from one canonical side a (the small side of a hanging face,
 *  else the earlier cell of the forest), on every rank alike, so the two
 *  ranks of a face compute its points bitwise equal. */
typedef struct {
  FemAdvectPoint a; /**< the point in cell a */
  FemAdvectPoint b; /**< the point in cell b; b.quad is NULL on the domain boundary */
  double ndS[3]; /**< quadrature weight times area element times the unit normal out of a */
  int a_local, b_local; /**< whether a, b are this rank's cells */
  size_t index; /**< position in the face iteration, so in FemAdvectFacePoints' list: the same
                 *   point has the same index in every iteration over one forest, so a
                 *   problem can compute its face fluxes once per forest (sipg.h) */
} FemAdvectFacePoint;

/** The data of an advection problem (the problems are in src/problems):
 *  stationary velocity, initial and inflow data. */
typedef struct {
  const char *name;
  /** Velocity b at a point; fixed until the next FemAdvectMeshChanged(). */
  void (*velocity)(void *ctx, const FemAdvectPoint *pt, double b[3]);
  /** Exact solution u(x, t); also the initial (t = 0) and inflow data. */
  double (*exact)(void *ctx, const double x[3], double t);
  /** Whether exact() is the true solution (and errors are meaningful). */
  int has_exact;
  /** Default -t_final: one revolution, or a crossing of the domain. */
  double t_final;
  /** Extra DG fields per cell that the solver does not advect (species
   *  that stay where they are): stored after the FemAdvectCell in the
   *  quadrant data (FemAdvectCellExtra), zero initially, carried through
   *  refine, coarsen and 2:1 balance with the tracer's conservative
   *  projection and through partition with the quadrant data.  At most
   *  FEM_ADVECT_MAX_EXTRA. */
  int nextra;
  /** Optional: the normal flux at a face point, integrated with its
   *  weight (b.n dS out of fp->a), in place of the velocity's on faces; the
   *  velocity then serves the volume term only.  A flux that is one value
   *  per face point on both sides and sums to zero over every cell's faces
   *  (a locally conservative Darcy flux) keeps the cell means of degree 0,
   *  and of degree 1 with the limiter, within the inflow data's range.
   *  With it, every degree integrates faces with 2 points per direction,
   *  the points of FemAdvectFacePoints(). */
  double (*face_flux)(void *ctx, const FemAdvectFacePoint *fp);
} FemAdvectProblem;

/** Most extra fields of FemAdvectProblem.nextra. */
#define FEM_ADVECT_MAX_EXTRA 4

/** Discretisation choices (the -adv_* options). */
typedef struct {
  int degree; /**< 0 (finite volume) or 1 */
  int rk_stages; /**< 2 or 3 (SSP) */
  double cfl; /**< dt = cfl * min_K |K| / ((2p+1) outflow(K)) */
  int limiter; /**< Barth-Jespersen slope limiter for degree 1 */
} FemAdvectOptions;

typedef struct _p_FemAdvect *FemAdvect;

/**
 * Reads -adv_degree, -adv_rk, -adv_cfl and -adv_limiter from the PETSc
 * options database (and lists them under -help).  Bad values return PETSC_ERR_USER_INPUT without a PETSc
 * error trace and put one sentence naming the option into msg, so that the
 * caller can print a single "error:" line on every rank count.
 */
PetscErrorCode FemAdvectOptionsRead(MPI_Comm comm, FemAdvectOptions *opt, char *msg, size_t msglen);

/**
 * Attaches a solver to p4est: resets the quadrant data to FemAdvectCell,
 * builds the ghost layer and the face list, and projects the problem's
 * exact(x, 0) onto every cell.  ctx is passed to the problem's functions.
 */
PetscErrorCode FemAdvectCreate(p4est_t *p4est, const FemAdvectProblem *prob, void *ctx, const FemAdvectOptions *opt, FemAdvect *adv);

/**
 * Replaces the solution by the projection of exact(x, t) at the current
 * time, limited if the limiter is on.  After refining towards the initial
 * data, this gives the fine cells the data instead of the coarse cells'
 * restriction of it.
 */
PetscErrorCode FemAdvectProjectExact(FemAdvect adv);

/** Frees the solver (not the forest). */
PetscErrorCode FemAdvectDestroy(FemAdvect *adv);

/**
 * Rebuilds the ghost layer, geometry and face list.  Every other function
 * does it by itself when the forest's revision changed (refine, coarsen,
 * balance, partition); call it after a change p4est does not count, such as
 * a new velocity field.
 */
PetscErrorCode FemAdvectMeshChanged(FemAdvect adv);

/**
 * Recomputes the velocity's data (the volume term's weights, the face
 * fluxes, the time step's outflow) on the current ghost layer and cells,
 * as FemAdvectMeshChanged() does, without rebuilding the ghost layer and
 * the cells' geometry; call it when only the velocity changed.  The
 * active region is reset as by FemAdvectMeshChanged().
 */
PetscErrorCode FemAdvectVelocityChanged(FemAdvect adv);

/** The stable time step of the current mesh: equal on all ranks. */
PetscErrorCode FemAdvectTimeStep(FemAdvect adv, double *dt);

/**
 * Advances from the solver's current time by up to nsteps steps, stopping
 * exactly at t_end; returns the number of steps taken.
 */
PetscErrorCode FemAdvectAdvance(FemAdvect adv, double t_end, int nsteps, int *taken);

/** Current simulation time. */
double FemAdvectTime(FemAdvect adv);

/** What the solver accumulates over its steps: the time and this rank's
 *  share of the net boundary inflow (FemAdvectMass sums the shares). */
void FemAdvectGetHistory(FemAdvect adv, double *time, double *inflow_local);

/** Continue from a saved history (a restart): the time and this rank's
 *  share of the inflow, so that FemAdvectMass's sum goes on from the total. */
void FemAdvectSetHistory(FemAdvect adv, double time, double inflow_local);

/** The load type of every local cell of \a p4est, whose user data are
 *  FemAdvectCell, into types (local_num_quadrants values). */
PetscErrorCode FemAdvectCellTypes(p4est_t *p4est, int *types);

/**
 * This rank's own work in time steps since FemAdvectCreate(), in seconds of
 * thread CPU time and of wall time: residuals, updates and the limiter,
 * less the time inside MPI (the ghost exchanges' waits, balance/lbclock.h).
 * The load balancer turns differences of it into per-step times.
 */
void FemAdvectWorkTime(FemAdvect adv, double *cpu, double *wall);

/**
 * Global integral of u, and the net boundary inflow integrated over all
 * steps so far: mass(t) = mass(0) + inflow up to round-off.
 */
PetscErrorCode FemAdvectMass(FemAdvect adv, double *mass, double *inflow);

/** L2 error against the problem's exact solution at the current time. */
PetscErrorCode FemAdvectL2Error(FemAdvect adv, double *err);

/** Global minimum and maximum of the cell means. */
PetscErrorCode FemAdvectMeanRange(FemAdvect adv, double *umin, double *umax);

/** Global minimum and maximum of the cell means of extra field f. */
PetscErrorCode FemAdvectExtraMeanRange(FemAdvect adv, int f, double *umin, double *umax);

/** Global minimum and maximum of u at the quadrature points of the volume
 *  and face terms of every cell (degree 1: values the means do not show). */
PetscErrorCode FemAdvectPointRange(FemAdvect adv, double *umin, double *umax);

/**
 * The face quadrature points of the current mesh with face_flux's rule,
 * in the order of p4est's face iteration: every interior face with a local
 * side (hanging faces as their small sub-faces) and every domain boundary
 * face of a local cell; the points of one face are consecutive.  The
 * list (count in *n) is the solver's: valid until its velocity's data are
 * next built (FemAdvectVelocityChanged, or the first step after the
 * forest changed), which take their points' geometry from it, and not
 * freed by the caller.
 */
PetscErrorCode FemAdvectFacePoints(FemAdvect adv, const FemAdvectFacePoint **pts, size_t *n);

/**
 * Discrete divergence of the face fluxes the transport integrates with:
 * the largest |sum of a local cell's outward fluxes| over all cells,
 * relative to the largest |flux through a face| (0 when no flux).
 * Collective.
 */
PetscErrorCode FemAdvectFluxDivergence(FemAdvect adv, double *div);

/**
 * Computes the jump/gradient indicator of every local cell: the largest
 * jump of cell means across its faces and, for degree 1, the variation of u
 * inside the cell.  Stored in FemAdvectCell.indicator.
 */
PetscErrorCode FemAdvectIndicator(FemAdvect adv);

/**
 * Refines the local cells marked +1 (below max_level), coarsens families
 * all marked -1 (above min_level), restores 2:1 balance across faces and
 * corners, each with conservative projection.  Families split between
 * ranks are not coarsened: repartition keeping families together (the
 * app's repartition does).
 */
PetscErrorCode FemAdvectAdapt(FemAdvect adv, const signed char *marks, int min_level, int max_level);

/** Sets load_type = 1 where the cell mean exceeds threshold, else 0. */
PetscErrorCode FemAdvectClassify(FemAdvect adv, double threshold);

/**
 * Restricts the advection to an active region until the mesh changes: the
 * local cells with seed[K] != 0 and their face neighbours (on any rank),
 * and in every stage the cells outside it with a tracer coefficient above
 * floor in magnitude.  The other cells hold still for the stage: no
 * volume term, no flux out through their faces, so the work outside is
 * saved and the scheme stays conservative.  A cell that receives more
 * than floor joins in the next stage, so with floor below 5/6 of the
 * inflow data's maximum (and a flux that sums to zero over every cell)
 * the cell means stay within the data's range: a region fixed for many
 * steps let tracer pile up in cells that received it but never passed it
 * on.  seed NULL: every cell.
 */
PetscErrorCode FemAdvectSetActive(FemAdvect adv, const int *seed, double floor);

/** The forest the solver works on. */
p4est_t *FemAdvectForest(FemAdvect adv);

/** Numbers of local cells and of ghost cells (face neighbours on other
 *  ranks) of the current mesh. */
PetscErrorCode FemAdvectCellCounts(FemAdvect adv, p4est_locidx_t *nlocal, p4est_locidx_t *nghost);

/**
 * Fills the ghost part of arr (nper doubles per cell, local cells first,
 * then ghosts in the order of FemAdvectPoint.cell) from the owners.
 */
PetscErrorCode FemAdvectGhostExchange(FemAdvect adv, double *arr, size_t nper);

/** The DG solution at the corners of every local cell, for output as
 *  discontinuous point data: local quadrants x P4EST_CHILDREN values,
 *  corners in p4est's order (x fastest), in a fresh array the caller
 *  frees with PetscFree. */
PetscErrorCode FemAdvectCornerValues(FemAdvect adv, double **values);
/** Coefficients of extra field f (0 <= f < nextra) of a cell, FEM_ADVECT_NB
 *  doubles in the basis of FemAdvectCell.c; cell is the quadrant's user data. */
double *FemAdvectCellExtra(FemAdvectCell *cell, int f);

/** Bytes of quadrant data per cell: the FemAdvectCell and the extra fields. */
size_t FemAdvectCellBytes(const FemAdvectProblem *prob);

/** Global integral of extra field f. */
PetscErrorCode FemAdvectExtraMass(FemAdvect adv, int f, double *mass);

/** Fills xibar with each local cell's centroid in reference coordinates
 *  on [-1, 1]^d (dim values per local cell): a DG function's value there
 *  is its physical cell mean, which is c[0] only on affine cells. */
PetscErrorCode FemAdvectCellCentroids(FemAdvect adv, double *xibar);

/** Fills values with each local cell's mean (length = local quadrants). */
PetscErrorCode FemAdvectCellMeans(FemAdvect adv, double *values);

#endif
