/** \file impl/problem.h
 * The private side of the problem interface (problems/problem.h), as in
 * PETSc's impl headers: the ops table a problem fills in and the instance's
 * struct.  Included by the implementations in src/problems and by the cycle
 * in src/app, which reads the instance's state; nowhere else.  The ops are
 * called only through problem.h's functions (problem.c).
 *
 * Compiled for 2D and 3D (P4_TO_P8). */
#ifndef AMR_PROBLEMS_IMPL_PROBLEM_H
#define AMR_PROBLEMS_IMPL_PROBLEM_H

#include "problems/problem.h"

/** Most per-cell fields and VTK fields one problem has. */
#define AMR_PROBLEM_MAX_FIELDS 4

/** Most phases one problem's solve has. */
#define AMR_PROBLEM_MAX_PHASES 4

/** Most PETSc solvers one problem has. */
#define AMR_PROBLEM_MAX_SOLVERS 2

/** One piece of per-cell state: size bytes per local cell, in *data
 *  (PetscMalloc'd, local cells in curve order), or with data NULL the
 *  quadrants' user data (the forest's data_size is size).  The cycle
 *  replaces *data when it repartitions. */
typedef struct {
  const char *name;
  void **data;
  size_t size;
} AmrProblemField;

/** The operations of a problem.  Optional ones may be NULL. */
struct AmrProblemOps {
  const char *name; /**< the -problem value */
  const char *help; /**< one line for -help */
  const void *data; /**< constant data of the implementation (a family of problems shares its code) */
  /** Read the problem's options (listed under -help) and set ntypes,
   *  degree, the adaptation defaults and state.sim_time/step (negative:
   *  none).  p->mesh and p->min_level are set; under -help no forest
   *  follows.  Bad values are collective PETSC_ERR_USER_INPUT errors. */
  PetscErrorCode (*create)(AmrProblem p);
  /** Check the mesh and attach to the initial uniform forest: register the
   *  fields and set the initial data. */
  PetscErrorCode (*setup)(AmrProblem p, p4est_t *p4est);
  /** Optional: set the initial data again, after the cycle refined the
   *  forest towards it (the fine cells get the data, not the coarse cells'
   *  restriction of it).  NULL: no refinement towards initial data. */
  PetscErrorCode (*initial)(AmrProblem p);
  /** The work of one cycle: solve, or advance in time; logs its own local
   *  work with AmrProblemLogWork and keeps dofs and state up to date. */
  PetscErrorCode (*solve)(AmrProblem p);
  /** The squared error indicator of every local cell into eta2; may log
   *  local work too. */
  PetscErrorCode (*estimate)(AmrProblem p, double *eta2);
  /** Refine the cells marked +1 (below max_level), coarsen families all
   *  marked -1 (above min_level), 2:1 balance, carrying the fields. */
  PetscErrorCode (*adapt)(AmrProblem p, const signed char *marks, int min_level, int max_level);
  /** Optional: the load type (0 .. ntypes - 1) of every local cell.  NULL:
   *  one type. */
  PetscErrorCode (*load_types)(AmrProblem p, int *types);
  /** Print the problem's human line of the cycle (collective). */
  PetscErrorCode (*monitor)(AmrProblem p, int cycle);
  /** Write the problem's own report fields (collective; j writes on one
   *  rank only). */
  PetscErrorCode (*report)(AmrProblem p, json_line *j);
  /** Optional: the problem's VTK fields, added to d (mesh/vtk.h; d comes
   *  initialised with point degree 1, which the op may raise to 2): point
   *  fields (the solution at every cell's nodes) and cell fields, in
   *  PetscMalloc'd arrays the cycle frees after writing. */
  PetscErrorCode (*vtk)(AmrProblem p, AmrVtkData *d);
  /** Free the implementation's state. */
  PetscErrorCode (*destroy)(AmrProblem p);
  /** Optional: put the global state the next cycle needs besides the
   *  fields and AmrProblemState (a solver's own time, mass totals) into a
   *  checkpoint's record, as values named "problem.*" (collective; rank
   *  0's record is stored).  NULL: none. */
  PetscErrorCode (*save)(AmrProblem p, AmrCkpState st);
  /** Optional: take it back on a restart, after setup on the loaded forest
   *  with the fields' data in place; the record may come from another
   *  number of ranks (collective). */
  PetscErrorCode (*load)(AmrProblem p, AmrCkpState st);
  /** Optional: the measured cost of every local cell in the last solve
   *  (its own work, thread CPU seconds, timed per cell), on the forest as
   *  it is now: a cell adapt made since has its parent's cost or its
   *  children's mean.  -lb_weights measured weighs each cell by it; the
   *  report's weights_measured are its means per load type.  NULL: the
   *  problem cannot time its cells. */
  PetscErrorCode (*cell_costs)(AmrProblem p, double *cost);
};

/** Receives the local work a problem measures, and this rank's cells per
 *  load type during the step (ntypes values; NULL: not reported). */
typedef PetscErrorCode (*AmrWorkLogger)(void *ctx, double cpu, double wall, const int64_t *counts);

/** Receives the problem's switch to its phase k (AmrProblemPhase). */
typedef PetscErrorCode (*AmrPhaseSwitcher)(void *ctx, int k);

/** A problem instance: the ops, what the cycle gives it, what it tells the
 *  cycle. */
struct _p_AmrProblem {
  const AmrProblemOps *ops;
  MPI_Comm comm;
  const AmrMesh *mesh; /**< the coarse mesh (set before create) */
  PetscInt min_level;     /**< -amr_min_level (set before create) */
  void *impl;             /**< the implementation's state */
  /* set by create */
  int ntypes;             /**< load types of its cells, at least 1 */
  PetscInt degree;        /**< reported as degree */
  const char *strategy;   /**< default -amr_strategy */
  PetscInt max_level;     /**< default -amr_max_level */
  PetscInt cycles;        /**< default -amr_cycles (PETSC_MAX_INT: until state.done) */
  int nsolvers;           /**< PETSc solvers the problem uses ... */
  const char *solver_prefix[AMR_PROBLEM_MAX_SOLVERS]; /**< ... and their options prefixes ("" for none) */
  int nphases;            /**< phases of the solve (AmrProblemPhase), 0: one, "solve" */
  int cost_phase;         /**< with cell_costs: the phase whose work the costs measure */
  const char *phase_name[AMR_PROBLEM_MAX_PHASES];
  int phase_typed[AMR_PROBLEM_MAX_PHASES]; /**< the phase's cells cost by their load type (else alike) */
  int phase_apart[AMR_PROBLEM_MAX_PHASES]; /**< the phase's work is balanced apart from the mesh (balance/lboffload.h): its time is taken as measured, whatever the partition */
  /* kept up to date by the problem */
  AmrProblemState state;
  long long dofs;         /**< global degrees of freedom */
  double ksp_cpu, ksp_wall; /**< this rank's KSPSolve time in the last solve, thread CPU and wall s (NaN: the problem has no linear solve) */
  int nfields;
  AmrProblemField field[AMR_PROBLEM_MAX_FIELDS];
  PetscBool set_up;       /**< AmrProblemSetUp ran (once: it registers the fields) */
  /* set by the cycle */
  AmrWorkLogger log;
  void *log_ctx;
  AmrPhaseSwitcher phase;
  void *phase_ctx;
};

#endif
