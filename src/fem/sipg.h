#ifndef AMRDLB_FEM_SIPG_H
#define AMRDLB_FEM_SIPG_H

/*
 * A locally conservative pressure for -div(k grad p) = f: symmetric
 * interior-penalty DG (SIPG) with Q1 on every cell of the forest of an
 * advection solver (fem/advect.h), on its face points (FemAdvectFacePoints:
 * hanging faces as their small sub-faces, ghosts from its ghost layer).
 * Its numerical flux
 *
 *   F = -{k grad p}_w . n + sigma [p],  sigma = eta gamma_k / h,
 *
 * with the k-weighted average {k grad p}_w = w_a k_a grad p_a + w_b k_b
 * grad p_b (w_a = k_b / (k_a + k_b)) and gamma_k the harmonic mean of k_a
 * and k_b (Ern, Stephansen and Zunino 2009: robust for jumps of k), is one
 * value per face point for both cells, zero on Neumann faces, and sums
 * over a cell's faces to the cell's source up to the linear solver's
 * residual (test the scheme with the cell's indicator).  Handed to the
 * transport as FemAdvectProblem.face_flux, it makes the tracer's cell means
 * obey the maximum principle.
 */

#include "fem/advect.h"
#include "fem/pde.h"

typedef struct _p_FemSipg *FemSipg;

/** The permeability k(x) > 0 at a point (ctx: FemSipgCreate's kctx). */
typedef double (*FemSipgPermeability)(void *ctx, const double x[3]);

/**
 * Creates the solver: boundary types, Dirichlet data and source from prob
 * (prob->u, prob->bc, prob->f; Neumann faces are no-flow), k from perm,
 * evaluated at every quadrature point (on a face, from each side: a k that
 * jumps at the face is taken from either cell).  The KSP takes options with
 * prefix (its default: conjugate gradients to a relative residual of 1e-8,
 * then one sweep of iterative refinement to the same tolerance: about
 * 1e-16 together), and -PREFIXpc chooses its preconditioner: continuous-amg
 * (the default; block Gauss-Seidel on the DG system and BoomerAMG on the
 * continuous Q1 space of the forest, split where k jumps, as the coarse
 * correction: fem/sipg_mg.c) or amg (BoomerAMG on the DG matrix).
 */
PetscErrorCode FemSipgCreate(MPI_Comm comm, const FemProblem *prob, FemSipgPermeability perm, void *kctx, const char *prefix, FemSipg *out);

/**
 * Assembles and solves on the current forest of adv, and exchanges the
 * solution to adv's ghosts; its iterations and final residual norm.
 * Until the forest changes, FemSipgFlux, FemSipgVelocity and FemSipgValue
 * evaluate this solution; after, they return 0.
 */
PetscErrorCode FemSipgSolve(FemSipg s, FemAdvect adv, PetscInt *its, PetscReal *rnorm);

/** The numerical flux at a face point integrated with its weight,
 *  F . ndS out of fp->a (adv's face points, or FemAdvectProblem.face_flux's);
 *  at the points of the solve's forest (by fp->index) the value the solve
 *  computed from its own face terms. */
double FemSipgFlux(FemSipg s, const FemAdvectFacePoint *fp);

/** b = -k grad p_h in the cell of pt. */
void FemSipgVelocity(FemSipg s, const FemAdvectPoint *pt, double b[3]);

/** p_h in the cell of pt. */
double FemSipgValue(FemSipg s, const FemAdvectPoint *pt);

/** p_h at the corners of every local cell (the Q1 coefficients), corners
 *  in p4est's order, in a fresh array the caller frees with PetscFree. */
PetscErrorCode FemSipgCornerValues(FemSipg s, double **values);

/** This rank's KSPSolve time in the last FemSipgSolve (its refinement
 *  sweeps included), thread CPU and wall seconds, waits included. */
void FemSipgSolveTime(FemSipg s, double *cpu, double *wall);

/** Frees the solver. */
PetscErrorCode FemSipgDestroy(FemSipg *s);

#endif
