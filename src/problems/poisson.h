/** \file poisson.h
 * The Poisson family of problems: -div(k grad u) = f with continuous Q1/Q2
 * elements (fem/poisson.h).  Its members differ only in their data (a
 * FemProblem): a new one is its data and AMR_POISSON_PROBLEM (see
 * wavefront.c). */
#ifndef AMR_PROBLEMS_POISSON_H
#define AMR_PROBLEMS_POISSON_H

#include "fem/pde.h"
#include "fem/poisson.h"
#include "problems/impl/problem.h"

/** The ops of the family (the problem's data is ops->data). */
PetscErrorCode AmrPoissonCreate(AmrProblem p);
PetscErrorCode AmrPoissonSetup(AmrProblem p, p4est_t *p4est);
PetscErrorCode AmrPoissonSolve(AmrProblem p);
PetscErrorCode AmrPoissonEstimate(AmrProblem p, double *eta2);
PetscErrorCode AmrPoissonAdapt(AmrProblem p, const signed char *marks, int min_level, int max_level);
PetscErrorCode AmrPoissonMonitor(AmrProblem p, int cycle);
PetscErrorCode AmrPoissonReport(AmrProblem p, json_line *j);
PetscErrorCode AmrPoissonVTK(AmrProblem p, AmrVtkData *d);
PetscErrorCode AmrPoissonDestroy(AmrProblem p);
PetscErrorCode AmrPoissonSave(AmrProblem p, AmrCkpState st);
PetscErrorCode AmrPoissonLoad(AmrProblem p, AmrCkpState st);

/** The ops table of a Poisson problem called NAME with the FemProblem
 *  *DATA; HELP is one line for -help. */
#define AMR_POISSON_PROBLEM(NAME, HELP, DATA) \
  { \
    .name = NAME, .help = HELP, .data = DATA, .create = AmrPoissonCreate, .setup = AmrPoissonSetup, .solve = AmrPoissonSolve, \
    .estimate = AmrPoissonEstimate, .adapt = AmrPoissonAdapt, .monitor = AmrPoissonMonitor, .report = AmrPoissonReport, \
    .vtk = AmrPoissonVTK, .destroy = AmrPoissonDestroy, .save = AmrPoissonSave, .load = AmrPoissonLoad, \
  }

/** FemPoissonSolve for problem p, with this rank's KSPSolve time of the
 *  solve (FemPoissonSolveTime) in p->ksp_cpu and p->ksp_wall: the Poisson
 *  problems' and darcy-transport's pressure solve. */
PetscErrorCode AmrProblemSolveTimed(AmrProblem p, FemPoisson fp, PetscInt *its, PetscReal *rnorm);

/** Read -jump_contrast, k beyond x = 1/2 (1 before it) of the problem
 *  jump (done by AmrPoissonCreate for -problem jump). */
PetscErrorCode AmrPoissonJumpOptions(MPI_Comm comm);
/** The data of the registered Poisson problem called name; NULL when name
 *  is not a registered Poisson problem. */
const FemProblem *AmrPoissonData(const char *name);

#endif
