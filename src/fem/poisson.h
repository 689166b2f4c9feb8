#ifndef AMRDLB_FEM_POISSON_H
#define AMRDLB_FEM_POISSON_H

/* Continuous Q1/Q2 finite elements for -div(k grad u) = f on a 2:1 balanced
 * p4est forest.  Unknowns are the independent nodes of p4est_lnodes; hanging
 * nodes are eliminated in the element matrices (C^T K C), Dirichlet nodes
 * are eliminated symmetrically, so the MPIAIJ matrix is SPD and CG + AMG
 * applies.  One object is reused across adaptive cycles: FemPoissonSetup
 * rebuilds everything that depends on the mesh. */

#include <petscksp.h>
#include "mesh/p4est_dim.h"
#include "fem/qelem.h"
#include "fem/pde.h"

typedef struct _p_FemPoisson *FemPoisson;

/** How the operator is applied: the assembled MPIAIJ matrix, or cell by
 *  cell with sum factorisation on the tensor Gauss points. */
typedef enum { FEM_POISSON_ASSEMBLED, FEM_POISSON_MATRIX_FREE } FemPoissonOperator;
/** The preconditioner of CG: BoomerAMG on the assembled matrix, or the
 *  geometric multigrid over the forest's coarsened levels. */
typedef enum { FEM_POISSON_PC_AMG, FEM_POISSON_PC_MG } FemPoissonPCType;
/** Option names of the two enums, in PetscOptionsEnum's form. */
extern const char *const FemPoissonOperators[];
extern const char *const FemPoissonPCTypes[];

/** The solver's choices (-poisson_operator, -poisson_pc, -poisson_mg_*). */
typedef struct {
  FemPoissonOperator op;
  FemPoissonPCType pc;
  FemPoissonOperator level_op; /**< the Q1 levels below the finest (the coarsest is always assembled) */
  int cheby_degree;       /**< Chebyshev smoothing steps per level and sweep */
  double smoothing_range; /**< Chebyshev works on [1.1 lmax / range, 1.1 lmax] */
  int eig_its;            /**< CG iterations of the largest eigenvalue's estimate */
} FemPoissonSolverOptions;
#define FEM_POISSON_SOLVER_DEFAULTS {FEM_POISSON_ASSEMBLED, FEM_POISSON_PC_AMG, FEM_POISSON_ASSEMBLED, 4, 15.0, 10}

/** Create a solver for problem prob with elements of the given degree (1 or
 *  2), with operator and preconditioner opt (NULL: the defaults, assembled
 *  + BoomerAMG; FemPoissonSetSolver).  The KSP (CG, rtol 1e-10) takes its
 *  options from the database with prefix `prefix` (may be NULL). */
PetscErrorCode FemPoissonCreate(MPI_Comm comm, const FemProblem *prob, int degree, const FemPoissonSolverOptions *opt,
                                const char *prefix, FemPoisson *fp);

/** Boundary types per coarse tree face (num_trees * P4EST_FACES entries:
 *  FEM_BC_DIRICHLET, FEM_BC_NEUMANN, or -1 to let the problem decide), as
 *  AmrMeshBoundaryTypes() makes them from named boundary parts; NULL
 *  (the default) lets the problem decide everywhere.  The table is not
 *  copied: it must outlive fp.  Call before FemPoissonSetup(). */
PetscErrorCode FemPoissonSetBoundaryTypes(FemPoisson fp, const signed char *tree_bc);

/** Choose the operator and the preconditioner (default assembled + AMG),
 *  then read the KSP's options.  An algebraic multigrid -pc_type over the
 *  matrix-free operator with geometric multigrid (which assembles no fine
 *  matrix) is a PETSC_ERR_USER_INPUT error naming the options to use.
 *  Call before FemPoissonSetup(). */
PetscErrorCode FemPoissonSetSolver(FemPoisson fp, const FemPoissonSolverOptions *opt);

/** Free everything, including the lnodes and ghost layer built by setup. */
PetscErrorCode FemPoissonDestroy(FemPoisson *fp);

/** Rebuild ghost layer, node numbering, Dirichlet data and the exactly
 *  preallocated matrix for the current forest (which must be 2:1 balanced
 *  with P4EST_CONNECT_FULL). */
PetscErrorCode FemPoissonSetup(FemPoisson fp, p4est_t *p4est);

/** Assemble matrix and right-hand side. */
PetscErrorCode FemPoissonAssemble(FemPoisson fp);

/** Set the initial guess from per-element coefficients (num_local_elements
 *  x vnodes, element node order), e.g. interpolated from the previous mesh. */
PetscErrorCode FemPoissonSetInitialGuess(FemPoisson fp, const double *coef);

/** Solve; returns iterations and the final residual norm of the KSP.  A
 *  solver that does not converge is a collective PETSC_ERR_USER_INPUT
 *  error (the -ksp_/-pc_ options are the cause to check). */
PetscErrorCode FemPoissonSolve(FemPoisson fp, PetscInt *its, PetscReal *rnorm);

/** Per-element coefficients of the solution (hanging constraints applied),
 *  num_local_elements x vnodes. */
PetscErrorCode FemPoissonElementCoefficients(FemPoisson fp, double *coef);

/** Exact errors: per cell squared L2 and H1-seminorm errors (either array
 *  may be NULL) and the global norms.  Errors out if the exact solution is
 *  unknown. */
PetscErrorCode FemPoissonExactError(FemPoisson fp, double *cell_l2sq, double *cell_h1sq,
                                    double *l2, double *h1);

/** Kelly indicator: per cell eta_K^2 = h_K/24 sum_F int_F [k du/dn]^2 over
 *  interior faces (hanging ones included) and the residual of the flux on
 *  Neumann faces; returns the global sqrt(sum eta_K^2) in total. */
PetscErrorCode FemPoissonKelly(FemPoisson fp, double *eta2, double *total);

/** The continuous solution at the nodes of every local element, for
 *  output as point data: num_local_elements x vnodes values in the
 *  element's node order (equispaced, lexicographic with x fastest), in a
 *  fresh array the caller frees with PetscFree.  Hanging nodes carry their
 *  constrained values, so the field is continuous across hanging faces. */
PetscErrorCode FemPoissonPointValues(FemPoisson fp, double **values);

/** This rank's own work since FemPoissonCreate, thread CPU and wall
 *  seconds: the element loop of the assembly, the face loop of the Kelly
 *  estimate and the cell loops of the matrix-free operator (apply,
 *  diagonal, right-hand side) and of the multigrid's transfers, on every
 *  multigrid level (whose assembly loops count too), without the
 *  exchanges that wait on other ranks. */
void FemPoissonWorkTime(FemPoisson fp, double *cpu, double *wall);

/** This rank's time in KSPSolve since FemPoissonCreate, thread CPU and
 *  wall seconds: the solver's own imbalance, which the weighed local work
 *  (FemPoissonWorkTime) leaves out.  Its waits on other ranks are in the
 *  wall time, and in the CPU time as far as MPI busy-polls. */
void FemPoissonSolveTime(FemPoisson fp, double *cpu, double *wall);

/** Evaluate an element's coefficient vector at reference point eta. */
double FemPoissonEvalRef(FemPoisson fp, const double *coef, const double eta[3]);

/** Number of global DoFs (independent nodes, Dirichlet ones included). */
PetscInt FemPoissonGlobalSize(FemPoisson fp);

/** Nodes per element. */
int FemPoissonVNodes(FemPoisson fp);

/** The lnodes of the current setup (owned by fp). */
p4est_lnodes_t *FemPoissonLNodes(FemPoisson fp);

/** The assembled matrix (for inspection: MatGetInfo); NULL under a
 *  matrix-free operator with the multigrid, which assemble none. */
Mat FemPoissonMatrix(FemPoisson fp);

/** Values of the element coefficients of the children/parent after
 *  refinement or coarsening (the mesh/adapt transfer callback, with the
 *  FemPoisson as context): out quadrants and their coefficients, in
 *  quadrants whose coefficients are filled by interpolation. */
void FemPoissonTransfer(void *ctx, int nout, const p4est_quadrant_t *out[], const double *outc[],
                        int nin, const p4est_quadrant_t *in[], double *inc[]);

#endif
