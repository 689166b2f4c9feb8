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
 * This header is what a user of problems sees; the ops table and the
 * instance's struct, which the implementations fill in and the cycle
 * drives, are in problems/impl/problem.h.
 *
 * Compiled for 2D and 3D (P4_TO_P8). */
#ifndef AMR_PROBLEMS_PROBLEM_H
#define AMR_PROBLEMS_PROBLEM_H

#include <petscsys.h>
#include <stdint.h>
#include "mesh/mesh.h"

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

/** Make a problem of ops on comm: runs its create op (its options). */
PetscErrorCode AmrProblemCreate(MPI_Comm comm, const AmrProblemOps *ops, const AmrMesh *mesh, PetscInt min_level, AmrProblem *p);

/** Destroy it. */
PetscErrorCode AmrProblemDestroy(AmrProblem *p);

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
