/** \file impl/cycle.h
 * Inside the cycle (app/cycle.h): its state and what its two files share:
 *   cycle.c          the cycle itself: solve, estimate, adapt, balance,
 *                    report, output;
 *   cycle_restart.c  checkpoint and restart: the -checkpoint options, the
 *                    checkpoint written after a cycle, the restart's
 *                    options, forest, state and report. */
#ifndef AMR_APP_IMPL_CYCLE_H
#define AMR_APP_IMPL_CYCLE_H

#include "app/cycle.h"
#include "mesh/vtk.h"
/* the cycle runs the problems' ops on their struct: the one user of the
 * private side outside src/problems */
#include "problems/impl/problem.h"

enum { PH_SOLVE, PH_ESTIMATE, PH_ADAPT, PH_PARTITION, PH_OUTPUT, NPHASES };
/* the cycle's own phases in the balancer's list, after the problem's */
enum { LB_PHASE_ESTIMATE, LB_PHASE_OUTPUT, LB_PHASE_ADAPT, LB_PHASE_PARTITION };

struct _p_AmrCycle {
  MPI_Comm comm;
  AmrProblem problem;
  AmrAdaptOptions adapt; /* -amr_strategy and its parameters, -amr_max_level, -report, -vtk_interval */
  PetscInt cycles;       /* -amr_cycles */
  PetscInt monitor;      /* -monitor_interval: human lines every K-th cycle (0: every cycle to 10, every 10th to 100, ...) */
  PetscBool fixed;       /* -amr_strategy uniform on a problem with time: the mesh stays */
  AmrLbOptions lbo;
  AmrLb lb;
  AmrVtkSeries *vtk;  /* -vtk: the outputs and their .pvd; NULL: none */
  p4est_t *p4est;
  int report;            /* rank 0: the report's descriptor (-1: none), written by AmrFileWrite, which a test's write shim can fail */
  int report_lock, checkpoint_lock; /* one run per path (AmrFileLock), -1: none */
  PetscLogStage stage[NPHASES];
  double total[NPHASES];
  double *eta2;          /* squared indicator per local cell */
  int *types;            /* load type per local cell */
  char checkpoint[PETSC_MAX_PATH_LEN]; /* -checkpoint PREFIX, empty: none */
  PetscInt checkpoint_interval;        /* -checkpoint_interval: every K-th cycle (0: none) */
  char restart[PETSC_MAX_PATH_LEN];    /* -restart PREFIX, empty: a new run */
  int first;             /* the first cycle this process runs (after a restart, the checkpoint's next) */
  int restarts;          /* restarts in the run's history, this one included */
  int phase0;            /* the balancer's index of the cycle's own phases (estimate, output, adapt, partition) after the problem's */
  const char *held_by;   /* the checkpoint that continues the run (-checkpoint's or -restart's), NULL: none yet */
  int held_next;         /* the cycle it continues at */
  uint32_t run_id;       /* the run's identity in its report, trace and checkpoints, kept across restarts */
  PetscBool run_known;   /* run_id came with the run (not from a checkpoint of a build without one): the report's and trace's are checked */
};

/* cycle.c: the problem's outside fields as the repartition takes them */
void AmrCycleFields(AmrCycle cyc, int *n, AmrField fields[]);
/* cycle.c: fresh per-cell arrays for the current forest, and its load types */
PetscErrorCode AmrCycleCellArrays(AmrCycle cyc);
/* cycle.c: refuse -vtk and -checkpoint paths that cannot take the files */
PetscErrorCode AmrCycleCheckOutputs(AmrCycle cyc);
/* cycle.c: SIGINT and SIGTERM print where the run stopped (the last cycle
 * done, the checkpoint that continues it) instead of a trace */
PetscErrorCode AmrCycleCatchInterrupts(AmrCycle cyc, int done);
/* cycle.c: while defer is true an interrupt waits (for the line to name the
 * checkpoint being written); false ends the run if one came meanwhile */
void AmrCycleDeferInterrupts(PetscBool defer);
/* cycle.c: open the report (-report), keeping a restart's earlier lines */
PetscErrorCode AmrCycleOpenReport(AmrCycle cyc);

/* cycle_restart.c: read -checkpoint, -checkpoint_interval, -restart */
PetscErrorCode AmrCycleCheckpointOptions(MPI_Comm comm, AmrCycle cyc);
/* cycle_restart.c: the checkpoint after cycle's balancing step */
PetscErrorCode AmrCycleWriteCheckpoint(AmrCycle cyc, int cycle);
/* cycle_restart.c, rank 0: what a restart keeps of the existing report:
 * *whole, how many records of cycles 0, 1, ... before cyc->first it starts
 * with, in order, each ended by its newline (-1: no report to continue);
 * *keep, their bytes; *partial, the bytes of a record cut at the file's end
 * (no newline), 0 when none; *foreign, 1 when a record before cyc->first
 * was written by another run (run_id).  Returns 0 or the error code of a
 * failed read (AmrFileStrerror). */
int AmrCycleReportKept(AmrCycle cyc, long *whole, long *keep, long *partial, int *foreign);
/* cycle_state.c: every entry of a checkpoint's state the restart takes,
 * checked against the forest and the options (one error line naming the
 * entry and the checkpoint) */
PetscErrorCode AmrCycleCheckState(AmrCycle cyc, AmrCkpState st, p4est_t *p4est);
/* cycle_state.c: a new run's identity (collective: rank 0 draws it) */
PetscErrorCode AmrCycleNewRunId(AmrCycle cyc);

#endif
