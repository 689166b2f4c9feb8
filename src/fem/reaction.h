#ifndef AMRDLB_REACTION_H
#define AMRDLB_REACTION_H

/*
 * The local chemistry of reactive-transport: the advected tracer A reacts
 * with a resident species B to an immobile product C,
 *
 *     A + B -> C,   rate r = k max(A, 0) max(B, 0),
 *
 * A' = -r, B' = -r, C' = r.  A is the DG tracer of fem/advect.h; B and C
 * do not move (a solute invading a porous medium that holds a reactant:
 * behind the front B is used up, ahead of it A has not arrived), so the
 * problem keeps them per cell in the same DG basis as A.  With k large the
 * reaction is stiff and the front sharp.
 *
 * Operator splitting (Lie): after each transport step of length dt, every
 * cell integrates the reaction over dt on its own, by ROS2 (Verwer et al.
 * 1999: two-stage, second-order, L-stable Rosenbrock method with an
 * embedded first-order solution for the error estimate and step-size
 * control).  An integration starts with one step of the whole dt, so a cell
 * where nothing reacts costs one step and a cell in the front, where the
 * stiff transient must be resolved, tens to hundreds: the work per cell depends
 * on the local chemistry, which no cell count predicts.
 *
 * Degree 1 data (u = c0 + sum_k c[k] xi_k on [-1,1]^d) react at the 2^d
 * tensor Gauss points and are fitted back by the least-squares fit there,
 * which returns every linear function unchanged; degree 0 data react as
 * the cell mean.  A ROS2 step keeps every linear invariant of the system
 * (A + C, B + C), the fit is linear, so each invariant's DG coefficients,
 * and with them the integrals of A + C and B + C, change only by round-off.
 *
 * Physical range: the exact reaction only runs forward and never consumes
 * more than is there, so a point's extent (C's gain) is clamped into
 * [0, min(A, B)] along the stoichiometry, where ROS2 overshoots near a
 * stiff front; and before and after the points react, a positivity
 * limiter after Zhang and Shu (2010) scales the three species' linear
 * parts toward their means by one common factor so that each is
 * non-negative at the cell's corners.  Then the means of A, B and C stay
 * non-negative, A's mean does not grow, and as B + C stays b0 at every
 * point, B and C stay within [0, b0]; the integrals are unchanged.  Without
 * the limiter the fit's slopes (which drop the points' bilinear part) put
 * B below 0 at points, and B's cell means fell to -0.035 in
 * reactive-transport with degree 1.
 *
 * Nothing here depends on the forest: the functions work on coefficient
 * arrays, the problem owns the storage.
 */

#include <petscsys.h>

/** Species: A (advected), B (resident reactant), C (product). */
#define FEM_REACTION_NS 3

/** Most DG coefficients per species: 1 (degree 0) or dim + 1 (degree 1). */
#define FEM_REACTION_MAX_NB 4

/** Parameters of the kinetics and of the integrator (the -react_* options). */
typedef struct {
  double k; /**< rate constant of A + B -> C */
  double rtol; /**< relative tolerance of the step-size control */
  double atol; /**< absolute tolerance (concentration units) */
  double b0; /**< initial concentration of B (the problem's data) */
  double threshold; /**< concentration that counts as present (load types) */
} FemReactionParams;

/** Load types by reaction state; the values are the problem's load types. */
typedef enum {
  FEM_REACTION_INERT = 0, /**< nothing to react: no A, or no B and no C */
  FEM_REACTION_REACTING = 1, /**< A and B both present: the front */
  FEM_REACTION_REACTED = 2, /**< C formed, A or B used up: behind the front */
  FEM_REACTION_NTYPES = 3
} FemReactionState;

/** The work of one cell's integration. */
typedef struct {
  int steps; /**< ROS2 steps tried, summed over the cell's points */
  int rejected; /**< of them, rejected by the error control */
  int failed; /**< points left unsolved after 100000 steps (FemReactionIntegrate) */
  double cpu; /**< thread CPU seconds of the cell (0 when not timed) */
} FemReactionWork;

/** The defaults: k 1e5, rtol 1e-2, atol 1e-5, b0 0.5, threshold 1e-5 (a
 *  concentration below atol reacts in one step, see src/problems/README.md,
 *  "Reactive transport"). */
void FemReactionDefaults(FemReactionParams *p);

/**
 * Reads -react_k, -react_rtol, -react_atol, -react_b0 and
 * -react_threshold over the values in p, which are the defaults listed
 * under -help (FemReactionDefaults, or a problem's own).  A bad value
 * returns PETSC_ERR_USER_INPUT without a PETSc error trace and puts one
 * sentence naming the option into msg, as the -adv_* options do.
 */
PetscErrorCode FemReactionOptionsRead(MPI_Comm comm, FemReactionParams *p, char *msg, size_t msglen);

/**
 * One ROS2 step of size h from y (A, B, C), in place.  Returns the error
 * estimate (difference to the embedded first-order solution) in the
 * weighted RMS norm of rtol and atol: at most 1 means within tolerance.
 */
double FemReactionStep(const FemReactionParams *p, double y[FEM_REACTION_NS], double h);

/**
 * Integrates the reaction at one point from y over time t in place with
 * error-controlled steps, the first of size t.  Adds its steps to w (which
 * the caller zeroes).  After 100000 steps it stops where it is and
 * counts the point in w->failed: a tolerance far below round-off, or a
 * rate k B so large that no step is accepted (-react_k 1e40 on the
 * default problem).  The point is one of many that ranks integrate
 * between their messages, so the caller decides, for all ranks at once
 * (reactive-transport: one error line naming the options at the end of
 * the cycle).
 */
PetscErrorCode FemReactionIntegrate(const FemReactionParams *p, double y[FEM_REACTION_NS], double t, FemReactionWork *w);

/**
 * The reaction of one cell over dt: a, b, c are the nb DG coefficients of
 * A, B and C in the basis of fem/advect.h (nb = 1, 3 or 4), in place;
 * xibar (nb - 1 values, or NULL for the centre) is the cell's centroid in
 * reference coordinates, where the DG function's value is its physical
 * mean (FemAdvectCellCentroids).  A cell where no point reacts and no species
 * dips below 0 at a corner keeps them bit for bit.  w receives the
 * cell's steps and its points left unsolved (FemReactionIntegrate).  Timing, the cost -lb_weights measured gives the cell:
 * with clock set to lb_clock_thread_cpu() (balance/lbclock.h) before a sweep over cells, each cell
 * reads the clock once, puts the thread CPU time since the previous
 * reading into w->cpu and the reading into *clock (a reading costs about
 * 0.4 us, as much as several cells where nothing reacts: one per cell, not
 * two).  clock NULL: not timed, w->cpu = 0.
 */
PetscErrorCode FemReactionCell(const FemReactionParams *p, int nb, const double *xibar, double *a, double *b, double *c, double dt, double *clock, FemReactionWork *w);

/**
 * The load type of a cell from its coefficients (as FemReactionCell takes
 * them): reacting when A and B both exceed the threshold at one of the
 * points the reaction integrates at, else reacted when the mean of C does,
 * else inert.
 */
FemReactionState FemReactionCellState(const FemReactionParams *p, int nb, const double *a, const double *b, const double *c);

/**
 * A cell's reaction clock forecast for the next cycle of n sweeps, from
 * this cycle's: S0 the clock summed over its n sweeps, S1 the sum of sweep
 * index (0 to n - 1) times the sweep's clock.  The least-squares line
 * through the sweeps taken to the middle of the next cycle with half its
 * slope, kept within 0.1 S0 and 3 S0; S0 itself for fewer than 3 sweeps.
 */
double FemReactionCostForecast(double S0, double S1, int n);

#endif
