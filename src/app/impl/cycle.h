/** \file impl/cycle.h
 * Inside the cycle (app/cycle.h): its state, its phases and what its files
 * share.  Each file calls only the files listed after it (and the
 * balancing step, app/lbcycle.h), never back:
 *   cycle.c          the cycle itself: create, set up, run, adapt, balance;
 *   cycle_restart.c  checkpoint and restart: the -checkpoint options, the
 *                    checkpoint written after a cycle, the restart's
 *                    options, forest, state and report;
 *   cycle_state.c    the run's identity, a checkpoint's state checked;
 *   cycle_report.c   the report: opened (a restart's earlier records
 *                    kept), one record per cycle;
 *   cycle_output.c   the output paths checked, the VTK output of a cycle;
 *   cycle_cells.c    the per-cell arrays: fields, load types, costs;
 *   cycle_clock.c    the phase clock: the one switch between phases;
 *   cycle_signal.c   SIGINT and SIGTERM: the line naming where the run
 *                    stopped. */
#ifndef AMR_APP_IMPL_CYCLE_H
#define AMR_APP_IMPL_CYCLE_H

#include "app/cycle.h"
#include "mesh/vtk.h"
/* the cycle runs the problems' ops on their struct: the one user of the
 * private side outside src/problems */
#include "problems/impl/problem.h"

/* The cycle's phases, in the order a cycle runs them: X(ID, name, PETSc
 * log stage, AmrLbPhaseModel).  The one list: the log stages, the wall
 * times of the report (t_NAME) and of the run's summary, and the
 * balancer's phases all come from it (cycle_clock.c).  The solve's and the
 * adaptation's work follows the cells, which the model fits (the solve by
 * load type, or by the problem's own phases); the output and the
 * partition step are taken as measured. */
#define AMR_CYCLE_PHASE_LIST(X) \
  X(SOLVE, "solve", "Solve", AMR_LB_PHASE_TYPES) \
  X(ESTIMATE, "estimate", "Estimate", AMR_LB_PHASE_CELLS) \
  X(OUTPUT, "output", "Output", AMR_LB_PHASE_MEASURED) \
  X(ADAPT, "adapt", "Adapt", AMR_LB_PHASE_CELLS) \
  X(PARTITION, "partition", "Partition", AMR_LB_PHASE_MEASURED)

#define AMR_CYCLE_PHASE_ID(id, name, stage, model) AMR_CYCLE_##id,
typedef enum { AMR_CYCLE_NONE = -1, AMR_CYCLE_PHASE_LIST(AMR_CYCLE_PHASE_ID) AMR_CYCLE_NPHASES } AmrCyclePhase;
#undef AMR_CYCLE_PHASE_ID

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
  MPI_File ranks;        /* the report's per-rank side file (-report_ranks), MPI_FILE_NULL: none */
  MPI_Offset ranks_at;   /* where its next block goes */
  PetscLogStage stage[AMR_CYCLE_NPHASES];
  AmrCyclePhase phase;   /* the phase running (AmrCyclePhaseEnter), AMR_CYCLE_NONE between */
  double phase_start;    /* its wall clock at entry */
  PetscBool measuring;   /* between AmrCycleMeasureStart and End: the phases feed the balancer's model */
  double t[AMR_CYCLE_NPHASES];     /* this rank's wall s of each phase since the last AmrCycleAddTimes */
  double *eta2;          /* squared indicator per local cell */
  int *types;            /* load type per local cell */
  char checkpoint[PETSC_MAX_PATH_LEN]; /* -checkpoint PREFIX, empty: none */
  PetscInt checkpoint_interval;        /* -checkpoint_interval: every K-th cycle (0: none) */
  char restart[PETSC_MAX_PATH_LEN];    /* -restart PREFIX, empty: a new run */
  int first;             /* the first cycle this process runs (after a restart, the checkpoint's next) */
  int restarts;          /* restarts in the run's history, this one included */
  int phase0;            /* the balancer's index of the cycle's phase after the solve (the problem's phases come first) */
  const char *held_by;   /* the checkpoint that continues the run (-checkpoint's or -restart's), NULL: none yet */
  int held_next;         /* the cycle it continues at */
  uint32_t run_id;       /* the run's identity in its report, trace and checkpoints, kept across restarts */
  PetscBool run_known;   /* run_id came with the run (not from a checkpoint of a build without one): the report's and trace's are checked */
};

/* cycle_cells.c: the problem's outside fields as the repartition takes them */
void AmrCycleFields(AmrCycle cyc, int *n, AmrField fields[]);
/* cycle_cells.c: fresh per-cell arrays for the current forest, and its load types */
PetscErrorCode AmrCycleCellArrays(AmrCycle cyc);
/* cycle_cells.c: the problem's measured cost of every local cell into a
 * fresh array (free with PetscFree) */
PetscErrorCode AmrCycleCellCosts(AmrCycle cyc, double **cost);

/* cycle_output.c: refuse -vtk and -checkpoint paths that cannot take the files */
PetscErrorCode AmrCycleCheckOutputs(AmrCycle cyc);
/* cycle_output.c: the VTK output of cycle (< 0: the initial state, which
 * has no indicator yet) */
PetscErrorCode AmrCycleWriteVtk(AmrCycle cyc, int cycle);

/* cycle_signal.c: SIGINT and SIGTERM print where the run stopped (the last
 * cycle done, the checkpoint that continues it) instead of a trace */
PetscErrorCode AmrCycleCatchInterrupts(AmrCycle cyc, int done);
/* cycle_signal.c: while defer is true an interrupt waits (for the line to
 * name the checkpoint being written); false ends the run if one came
 * meanwhile */
void AmrCycleDeferInterrupts(PetscBool defer);

/* cycle_report.c: open the report (-report), keeping a restart's earlier lines */
PetscErrorCode AmrCycleOpenReport(AmrCycle cyc);
/* cycle_report.c: the record of cycle: the common fields with the
 * phases' wall times t (max over ranks), the balancer's (lr), the
 * problem's; then the interrupt line names cycle as done */
PetscErrorCode AmrCycleWriteRecord(AmrCycle cyc, int cycle, long long cells, const double *t, const AmrLbRecord *lr);

/* cycle_clock.c: the log stages, the balancer's phases (the problem's
 * then the cycle's), the problem's work and phase switches fed to the
 * balancer; once, when the cycle is made */
PetscErrorCode AmrCycleClockSetUp(AmrCycle cyc);
/* cycle_clock.c: the one switch: leave the phase running (its wall time,
 * its log stage) and enter ph (AMR_CYCLE_NONE: none), and while measuring
 * switch the balancer's phase with it */
PetscErrorCode AmrCyclePhaseEnter(AmrCycle cyc, AmrCyclePhase ph);
/* cycle_clock.c: a cycle's measurement starts on the current forest (the
 * balancer's window with the cells' load types) */
PetscErrorCode AmrCycleMeasureStart(AmrCycle cyc);
/* cycle_clock.c: and ends: the phase running ends, the balancer records its
 * phase model into lr, the phases' wall times (max over ranks) go into t */
PetscErrorCode AmrCycleMeasureEnd(AmrCycle cyc, AmrLbRecord *lr, double t[AMR_CYCLE_NPHASES]);
/* cycle_clock.c: the phases' wall times since the last call, max over
 * ranks, into t (may be NULL) and the run's totals (collective) */
PetscErrorCode AmrCycleAddTimes(AmrCycle cyc, double t[AMR_CYCLE_NPHASES]);
/* cycle_clock.c: the name of phase ph (the report's t_NAME) */
const char *AmrCyclePhaseName(AmrCyclePhase ph);

/* cycle_restart.c: read -checkpoint, -checkpoint_interval, -restart */
PetscErrorCode AmrCycleCheckpointOptions(MPI_Comm comm, AmrCycle cyc);
/* cycle_restart.c: the checkpoint after cycle's balancing step */
PetscErrorCode AmrCycleWriteCheckpoint(AmrCycle cyc, int cycle);
/* cycle_state.c: every entry of a checkpoint's state the restart takes,
 * checked against the forest and the options (one error line naming the
 * entry and the checkpoint) */
PetscErrorCode AmrCycleCheckState(AmrCycle cyc, AmrCkpState st, p4est_t *p4est);
/* cycle_state.c: a new run's identity (collective: rank 0 draws it) */
PetscErrorCode AmrCycleNewRunId(AmrCycle cyc);

#endif
