/** \file problem.h
 * The problem interface of the AMR cycle (src/README.md, "One cycle").  A problem
 * is an ops table with a name, registered in registry.c (as the balancer
 * registers its methods); src/app runs any of them through one cycle:
 *
 *   solve -> estimate -> mark -> adapt (with transfer) -> weigh -> balance
 *   -> report -> output
 *
 * The cycle owns the forest's partition and everything common (marking,
 * weights, repartition, the report's common fields, VTK files); the problem
 * owns its discretisation and its data.  Two rules keep the cycle
 * independent of the problem:
 *  - every piece of per-cell state the problem keeps is one of its fields
 *    (AmrProblemField): the cycle carries them through repartition and
 *    saves and loads them with a checkpoint; its global state is
 *    AmrProblemState, and what else it keeps between cycles goes through
 *    the optional save and load ops;
 *  - the problem measures its own local work (thread CPU time of its
 *    element or cell loops, never its waits on other ranks) and hands it to
 *    the cycle with AmrProblemLogWork, one call per step (or
 *    AmrProblemLogWorkCounts, with its cells per load type in the step).
 *
 * This header is what a user of problems sees: the cycle calls a
 * problem's ops only through the functions below (problem.c), as PETSc
 * calls a KSP's through KSPSolve, which check their arguments and log the
 * ops as PETSc events.  The ops table and the instance's struct, which the
 * implementations fill in, are in problems/impl/problem.h.
 *
 * Compiled for 2D and 3D (P4_TO_P8). */
#ifndef AMR_PROBLEMS_PROBLEM_H
#define AMR_PROBLEMS_PROBLEM_H

#include <petscsys.h>
#include <stdint.h>
#include "mesh/checkpoint.h"
#include "mesh/mesh.h"
#include "mesh/p4est_dim.h"
#include "mesh/vtk.h"
#include "util/json.h"

typedef struct AmrProblemOps AmrProblemOps;
typedef struct _p_AmrProblem *AmrProblem;

/** A problem's global state: what a restart needs besides the forest and
 *  the fields. */
typedef struct {
  double sim_time; /**< simulated time; negative: the problem has no time */
  long long step;  /**< time steps taken; negative: no steps */
  PetscBool done;  /**< the problem reached its end (e.g. -t_final) */
} AmrProblemState;

/** The -problem name of a problem's ops. */
const char *AmrProblemOpsName(const AmrProblemOps *ops);

/** Register the problem ops under name, as PETSc's PCRegister adds a PC
 *  type: it is then found by AmrProblemFind, listed by AmrProblemGet and
 *  AmrProblemNames, and offered by the app's -problem.  name must be
 *  ops->name (the name reports print), new to the registry; ops (its
 *  struct in problems/impl/problem.h) is kept, not copied, so it must
 *  outlive its use.  The built-in problems are registered through this
 *  call by AmrProblemRegisterAll. */
PetscErrorCode AmrProblemRegister(const char name[], const AmrProblemOps *ops);

/** Register the built-in problems, once (later calls do nothing); the
 *  registry's first use calls it, so a program need not. */
PetscErrorCode AmrProblemRegisterAll(void);

/** The registered problem called name, or NULL. */
const AmrProblemOps *AmrProblemFind(const char *name);

/** The i-th registered problem, NULL past the end. */
const AmrProblemOps *AmrProblemGet(int i);

/** The registered names separated by sep into buf. */
PetscErrorCode AmrProblemNames(const char *sep, char *buf, size_t len);

/** Make a problem of ops on comm: runs its create op (its options).  An
 *  ops table without a name or one of the ops every problem has (create,
 *  setup, solve, estimate, adapt, monitor, report, destroy) is refused
 *  with PETSC_ERR_ARG_WRONG. */
PetscErrorCode AmrProblemCreate(MPI_Comm comm, const AmrProblemOps *ops, const AmrMesh *mesh, PetscInt min_level, AmrProblem *p);

/** Destroy it (its destroy op); *p NULL: nothing. */
PetscErrorCode AmrProblemDestroy(AmrProblem *p);

/** The -problem name of problem p. */
const char *AmrProblemGetName(AmrProblem p);

/** The constant data of p's ops (a family's members share their code and
 *  differ in it), for the implementations. */
const void *AmrProblemGetOpsData(AmrProblem p);

/** Check the mesh and attach p to the initial uniform forest p4est: its
 *  fields and initial data (setup op).  Once per problem: it registers the
 *  fields. */
PetscErrorCode AmrProblemSetUp(AmrProblem p, p4est_t *p4est);

/** Whether p has initial data to refine the forest towards (initial op). */
PetscBool AmrProblemHasInitial(AmrProblem p);

/** Set the initial data again on the refined forest (initial op); an
 *  error for a problem without one (AmrProblemHasInitial). */
PetscErrorCode AmrProblemInitial(AmrProblem p);

/** The work of one cycle: solve, or advance in time (solve op; event
 *  AmrProbSolve). */
PetscErrorCode AmrProblemSolve(AmrProblem p);

/** The squared error indicator of every local cell into eta2 (estimate
 *  op; event AmrProbEstimate). */
PetscErrorCode AmrProblemEstimate(AmrProblem p, double *eta2);

/** Refine the cells marked +1 (below max_level), coarsen families all
 *  marked -1 (above min_level), 2:1 balance, carrying the fields (adapt op;
 *  event AmrProbAdapt).  Levels outside 0 <= min_level <= max_level <=
 *  P4EST_QMAXLEVEL are an error. */
PetscErrorCode AmrProblemAdapt(AmrProblem p, const signed char *marks, int min_level, int max_level);

/** Whether p's cells differ in load type (load_types op). */
PetscBool AmrProblemHasLoadTypes(AmrProblem p);

/** The load type of each of the n local cells into types: the load_types
 *  op, or 0 for every cell without one. */
PetscErrorCode AmrProblemLoadTypes(AmrProblem p, p4est_locidx_t n, int *types);

/** Print p's human line of cycle (monitor op; collective); cycle >= 0. */
PetscErrorCode AmrProblemMonitor(AmrProblem p, int cycle);

/** Write p's own report fields into j (report op; collective, j writes on
 *  one rank only). */
PetscErrorCode AmrProblemReport(AmrProblem p, json_line *j);

/** p's VTK fields into d, made empty with point degree 1 on p's mesh (vtk
 *  op, which may raise the degree; no fields without one).  The arrays are
 *  PetscMalloc'd, the caller's to free after writing. */
PetscErrorCode AmrProblemVtk(AmrProblem p, AmrVtkData *d);

/** Put p's own state besides its fields and AmrProblemState into a
 *  checkpoint's record (save op; nothing without one; collective). */
PetscErrorCode AmrProblemSave(AmrProblem p, AmrCkpState st);

/** Take it back on a restart, after AmrProblemSetUp on the loaded forest
 *  with the fields' data in place (load op; nothing without one;
 *  collective). */
PetscErrorCode AmrProblemLoad(AmrProblem p, AmrCkpState st);

/** Whether p times its cells (cell_costs op). */
PetscBool AmrProblemHasCellCosts(AmrProblem p);

/** The measured cost of every local cell in the last solve into cost
 *  (cell_costs op; thread CPU seconds); an error for a problem that does
 *  not time its cells (AmrProblemHasCellCosts). */
PetscErrorCode AmrProblemCellCosts(AmrProblem p, double *cost);

/** Register a per-cell field (setup). */
PetscErrorCode AmrProblemAddField(AmrProblem p, const char *name, void **data, size_t size);

/** The PETSc solvers problem p uses: *n of them, with the options prefixes
 *  (*prefix)[0 .. *n - 1] ("" for none); p NULL: none. */
PetscErrorCode AmrProblemGetSolvers(AmrProblem p, int *n, const char *const **prefix);

/** Enter phase k (0 .. nphases - 1) of the problem's solve, as its create
 *  named them (impl/problem.h, phase_name): a phase is a stretch between
 *  synchronisations, and the cycle measures each rank's own work in each
 *  (balance/lbclock.h).  The solve starts in phase 0. */
PetscErrorCode AmrProblemPhase(AmrProblem p, int k);

/** Hand one step of local work to the cycle: thread CPU seconds (what the
 *  weights and the imbalance use) and wall seconds. */
PetscErrorCode AmrProblemLogWork(AmrProblem p, double cpu, double wall);

/** AmrProblemLogWork with this rank's cells per load type as they were
 *  during the step (p->ntypes values): the state that decided the step's
 *  work, where the types change within a cycle (a moving front).  The
 *  timing fit then weighs the step's time by these counts instead of the
 *  cycle's start (lbcycle.h, AmrLbAddStep). */
PetscErrorCode AmrProblemLogWorkCounts(AmrProblem p, double cpu, double wall, const int64_t *counts);

#endif
