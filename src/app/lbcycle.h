/** \file lbcycle.h
 * The balancing step of the AMR cycle (src/README.md, "One cycle"): per-rank
 * timing of local work, cell weights (count, timing-based least squares,
 * or fixed costs per load type), any balancing method in chain mode on the
 * ranks along the space-filling curve, repartition with the cell data, the
 * communication graph before and after, and the per-cycle record that the
 * report, the human line and the final summary are made of. */
#ifndef AMR_APP_LBCYCLE_H
#define AMR_APP_LBCYCLE_H

#include <stdio.h>
#include <petscsys.h>
#include "balance/balance.h"
#include "util/json.h"
#include "mesh/checkpoint.h"
#include "mesh/migrate.h"
#include "app/tracewrite.h"

/** Most load types a problem may have. */
#define AMR_LB_MAX_TYPES 8

/** Most phases a cycle may have (the problem's and the cycle's own). */
#define AMR_LB_MAX_PHASES 12

/** How the phase model predicts a phase (AmrLbPhasesSet): as measured (its
 *  time does not depend on the partition), by one cost for every cell, or
 *  by a cost per load type. */
typedef enum { AMR_LB_PHASE_MEASURED, AMR_LB_PHASE_CELLS, AMR_LB_PHASE_TYPES } AmrLbPhaseModel;

/** How cells are weighed (-lb_weights). */
typedef enum { AMR_LB_COUNT, AMR_LB_TIMING, AMR_LB_MODEL, AMR_LB_MEASURED, AMR_LB_PHASES } AmrLbWeights;

/** The -lb_* options. */
typedef struct {
  const lb_method *method;   /**< NULL: none, measure only */
  lb_params params;          /**< -lb_target, -lb_max_iters and the method's own options */
  AmrLbWeights weights;
  int ntypes;                /**< load types of the problem */
  double cost[AMR_LB_MAX_TYPES]; /**< -lb_cost: model costs, and timing's costs until a fit succeeds */
  int window;                /**< -lb_window: timed steps the fit uses */
  double trim;               /**< -lb_trim: fraction cut from each end of the window */
  int history;               /**< -lb_history: windows stacked in the fit */
  double forget;             /**< -lb_forget: weight forget^age of an older window */
  int interval;              /**< -lb_interval: balance every K-th cycle */
  double threshold;          /**< -lb_threshold: balance only above this I% (< 0: always) */
  int ring;                  /**< -lb_graph ring: the chain closed into a ring */
  int skew;                  /**< -lb_initial skew: load types other than 0 piled on the first ranks */
  char trace[PETSC_MAX_PATH_LEN]; /**< -trace_loads FILE: the weighted curve of every cycle (empty: none) */
} AmrLbOptions;

/** Read the -lb_* options for a problem with ntypes load types (listing
 *  them under -help).  Invalid values are collective PETSC_ERR_USER_INPUT
 *  errors naming the option. */
PetscErrorCode AmrLbOptionsRead(MPI_Comm comm, int ntypes, AmrLbOptions *o);

/** One cycle's balancing record: what was measured, predicted and moved. */
typedef struct {
  int cycle;
  int rebalanced;            /**< 1 when the partition was changed */
  double t_rank_max, t_rank_avg; /**< local work of the cycle per rank (thread CPU s) */
  double imbalance_pct, max_over_avg; /**< measured, of the local work */
  double predicted_imbalance_pct; /**< of the weights of the partition the next cycle runs on */
  double kept_imbalance_pct; /**< of the weights, had the partition been kept on the adapted forest */
  double cost[AMR_LB_MAX_TYPES]; /**< weight per load type, mean cell weight 1 */
  double cost_stderr[AMR_LB_MAX_TYPES]; /**< timing: standard error of each fitted cost (NaN: unknown) */
  double cost_measured[AMR_LB_MAX_TYPES]; /**< mean measured cost of a cell per load type, scaled like cost (NaN: not measured) */
  int fitted;                /**< timing: the costs come from this cycle's fit */
  unsigned fit_flags;        /**< lb_weights_flag bits of the fit */
  double fit_smape;          /**< sMAPE of predicted against measured load per rank, percent */
  int lb_iterations;
  int lb_target_iteration;   /**< first iteration at which the method met -lb_target (-1: never or not run) */
  long long lb_rounds;
  long long cut_cells;       /**< this rank's cells by the method's cuts, before families are kept together (-1: not run) */
  long long cut_migrated_cells; /**< cells those cuts move (-1: not run) */
  double trace_write_s;      /**< -trace_loads: appending the cycle (thread CPU s, max over ranks) */
  double lb_time_s;          /**< weights, balancer and cut positions (max over ranks, wall) */
  double part_load_max;      /**< the largest part weight of the partition the next cycle runs on (mean cell weight 1) */
  double part_load_optimum;  /**< the least largest part of any contiguous cut of the same weighted curve (the exact 1D partition) */
  double predicted_gain_s;   /**< saved per -lb_interval by the proposed partition, by the weights (reported only) */
  double predicted_migration_s; /**< migration time of the proposed partition: median time per cell of the last migrations x cells */
  /* -lb_threshold's ski-rental rule (src/balance/lbdecide.h): its inputs and outcome */
  double excess_loss_rank_s;  /**< measured (t_rank_max - t_rank_avg) P since the last rebalance beyond the residual, this cycle's included */
  double residual_loss_rank_s; /**< the least loss of a cycle since the last rebalance, this cycle's included (0 before the first) */
  double balance_cost_rank_s; /**< predicted_migration_s P; NaN when the cycle had no chance to balance */
  double predicted_loss_rank_s; /**< the coming cycle's loss on the kept partition by the weights, (max - mean) P; NaN: no chance */
  double predicted_cycle_gain_rank_s; /**< what the proposed partition saves of it in the coming cycle; NaN: no chance */
  double decision_imbalance_pct; /**< the I% the -lb_threshold floor was compared with (NaN: not a balancing cycle) */
  double proposed_imbalance_pct; /**< the phase model's I% for the next cycle on the proposed partition, taken or not (NaN: no chance, or no phases) */
  const char *decision;      /**< "rebalance", "below_floor", "below_cost", "gain", "no_gain" (the rule), "always" (no -lb_threshold), "no_chance" */
  long long migrated_cells_tot, migrated_cells_max; /**< cells that changed rank; largest sent + received */
  double migrate_time_s;     /**< repartition with the data (max over ranks, wall) */
  long long edge_cut;        /**< cell faces between ranks after the cycle */
  int comm_edges, comm_edges_added, comm_edges_removed;
  double total_s, lost_rank_s, lb_total_s, migrate_total_s; /**< run totals so far */
  int nranks;
  /* this rank's own values of the per-rank quantities: the report writes
   * their reductions over the ranks and each rank's row of the side file,
   * so that no rank holds every rank's */
  long long rank_cells;      /**< this rank's cells for the next cycle */
  double rank_predicted;     /**< its predicted load for the next cycle, mean 1 over the ranks */
  double rank_time;          /**< its measured local work this cycle, thread CPU s */
  double rank_time_wall;     /**< the same work in wall seconds */
  double rank_load_measured; /**< rank_time over the ranks' mean */
  double rank_load_predicted; /**< what the weights predicted for it on this cycle's partition, mean 1 over the ranks */
  /* the phase model (AmrLbPhaseSwitch): every phase's own work on this
   * rank, the cycle's time as the sum over phases of the slowest rank */
  int nphases;
  const char *phase_name[AMR_LB_MAX_PHASES];
  int phase_modelled[AMR_LB_MAX_PHASES]; /**< AmrLbPhaseModel of each phase */
  double phase_own_cpu[AMR_LB_MAX_PHASES];  /**< this rank's thread CPU s less the CPU s inside MPI */
  double phase_own_wall[AMR_LB_MAX_PHASES]; /**< its wall s less the wall s inside MPI */
  double phase_wall[AMR_LB_MAX_PHASES];     /**< its wall s in the phase, waits included */
  int phase_predicted;       /**< the model predicted the next cycle: phase_next holds it */
  double phase_next[AMR_LB_MAX_PHASES]; /**< each modelled phase's own CPU s the model predicts for this rank in the next cycle on its partition (NaN: a phase not modelled) */
  double phase_kept[AMR_LB_MAX_PHASES]; /**< the same on the kept partition, which phase_next becomes where the step keeps it */
  double phase_cost_s[AMR_LB_MAX_PHASES][AMR_LB_MAX_TYPES]; /**< fitted seconds per cell of each type in one cycle of the phase */
  double phase_alpha[AMR_LB_MAX_PHASES]; /**< -lb_weights phases: each modelled phase's factor in the chosen cell weight (NaN: not chosen this cycle, or the split was) */
  int phase_split;           /**< -lb_weights phases: the multi-constraint split of the curve was chosen */
  double cycle_time_s;       /**< measured: sum over phases of the largest own CPU */
  double cycle_mean_s;       /**< measured: sum over phases of the mean own CPU */
  double cycle_imbalance_pct; /**< I% of those two */
  double cycle_wall_s;       /**< the cycle's wall clock (largest over ranks) */
  double predicted_s;        /**< the time the last cycle's model predicted for this one (NaN: none) */
  double predicted_cycle_imbalance_pct; /**< and its I%, for the partition this cycle ran on (NaN: none) */
  double next_predicted_s;   /**< the model's time for the next cycle on its partition */
  double next_kept_s;        /**< ... had the partition been kept */
  double next_initial_s;     /**< ... on the initial partition, never balanced */
  double next_imbalance_pct; /**< the model's I% for the next cycle */
  double next_kept_imbalance_pct; /**< ... had the partition been kept */
  double next_mean_s;        /**< the model's mean over ranks for the next cycle (the same on any partition) */
  double model_total_s, lost_s, gain_s; /**< run totals: measured model time, its loss, modelled gain over the initial partition */
} AmrLbRecord;

typedef struct _p_AmrLb *AmrLb;

/** Create the balancer of a run; tries the method once on the processor
 *  graph so that a method that cannot run there (or a bad method option)
 *  is a user error before the first cycle. */
PetscErrorCode AmrLbCreate(MPI_Comm comm, const AmrLbOptions *o, AmrLb *lb);

/** Free it. */
PetscErrorCode AmrLbDestroy(AmrLb *lb);

/** Start a new window of timed steps on the current forest: counts this
 *  rank's cells of every load type (types[i] of local cell i; NULL: all
 *  type 0).  Call after every change of the forest, since the times of a
 *  window must belong to one set of counts. */
PetscErrorCode AmrLbWindowStart(AmrLb lb, p4est_t *p4est, const int *types);

/** The phases of the cycle in their order, named: a phase is a stretch
 *  of the cycle between synchronisations, whose time is that of its
 *  slowest rank; modelled[k], an AmrLbPhaseModel: how the model predicts
 *  it for other partitions (the cells' share of its measured time, by
 *  least squares per load type for AMR_LB_PHASE_TYPES).  cost_phase: the phase whose work the cells' measured
 *  costs (AmrLbCellCosts) describe, which the model then weighs cell by
 *  cell instead of by load type (-1: none).  Call once, before the first
 *  cycle. */
PetscErrorCode AmrLbPhasesSet(AmrLb lb, int nphases, const char *const names[], const int modelled[], int cost_phase);

/** Switch this rank's clock to phase k (-1: none, between cycles): its own
 *  work since the last switch (thread CPU and wall less the time inside
 *  MPI, balance/lbclock.h) goes to the phase it leaves.  A visit to a
 *  phase is one sample of its fit unless AmrLbAddStep marked samples in
 *  it (then the rest of the visit joins the last). */
PetscErrorCode AmrLbPhaseSwitch(AmrLb lb, int k);

/** This rank's own work of every phase of the cycle into rec, and the
 *  cycle's model from its reductions over the ranks (each phase's largest
 *  and summed own work): the measured cycle time, loss and I%, the
 *  prediction the last cycle made for it, the run totals.  Call after the
 *  cycle's last phase, before its report (collective). */
PetscErrorCode AmrLbPhasesRecord(AmrLb lb, AmrLbRecord *rec);

/** Record one step of this rank's own local work: thread CPU seconds (what
 *  the weights and the imbalance use) and wall seconds (reported), and the
 *  rank's cells per load type during the step (the state that decided its
 *  work; NULL: not known).  When every step of a window has its counts, the
 *  timing fit's row of the window takes their mean over the steps instead
 *  of the counts at AmrLbWindowStart.  The step also closes a sample of
 *  the current phase's own work, with the same counts. */
PetscErrorCode AmrLbAddStep(AmrLb lb, double cpu, double wall, const int64_t *counts);

/** The measured cost of every local cell of the window's forest (types as
 *  given to AmrLbWindowStart): their means per load type become the
 *  record's cost_measured.  Call once per window, after its steps. */
PetscErrorCode AmrLbWindowCosts(AmrLb lb, p4est_locidx_t n, const int *types, const double *cost);

/** The measured cost of every local cell of the adapted forest that the
 *  next AmrLbBalance weighs (copied): -lb_weights measured weighs every
 *  cell by it, the phase model the cells of its cost phase. */
PetscErrorCode AmrLbCellCosts(AmrLb lb, p4est_locidx_t n, const double *cost);

/** Repartition by equal cell counts, families kept on one rank so they can
 *  be coarsened, carrying the quadrant data and the nfields outside arrays:
 *  the app's repartition when nothing has been measured (refinement
 *  towards initial data, tests).  Collective. */
PetscErrorCode AmrLbPartitionEven(p4est_t *p4est, int nfields, const AmrField *fields);

/** Split the forest initially by -lb_initial (even cell counts, or skew),
 *  carrying the quadrant data and the nfields outside arrays. */
PetscErrorCode AmrLbInitial(AmrLb lb, p4est_t *p4est, const int *types, int nfields, const AmrField *fields);

/**
 * The weigh and balance steps of one cycle, after adaptation: measure the
 * window's local work, weigh the cells of the adapted forest (types of its
 * local cells, NULL: all type 0), and when allowed (not the last cycle,
 * the -lb_interval cycle) run the method in chain mode and keep families
 * together; repartition with the quadrant data and the nfields outside
 * arrays unless -lb_threshold's rule declines (the imbalance, measured or
 * predicted for the adapted forest if the partition were kept, at or below
 * the floor, or the time lost since the last rebalance short of the
 * predicted cost of this one).  Fills rec.
 */
PetscErrorCode AmrLbBalance(AmrLb lb, p4est_t *p4est, const int *types, int cycle, PetscBool allow, int nfields,
                            const AmrField *fields, AmrLbRecord *rec);

/** Write the record's fields into a report line (collective: every
 *  per-rank quantity as its reductions over the ranks, each rank's own
 *  value into j's side-file row). */
PetscErrorCode AmrLbRecordJSON(json_line *j, const AmrLb lb, const AmrLbRecord *r);

/** Print the human line of a cycle (sim_time < 0: a problem without time):
 *  the phase model's measured and predicted I%, what moved, the cycle's
 *  wall time, its modelled time and last cycle's prediction of it. */
PetscErrorCode AmrLbRecordPrint(MPI_Comm comm, const char *program, const AmrLbRecord *r, double sim_time, long long cells,
                                long long dofs);

/** Print the run summary: total time, time lost to imbalance (the phase
 *  model's), balancing and migration, and their shares of the run; then
 *  the phase model's account: each phase's time and loss, the gain over
 *  the initial partition kept, the last cycle's prediction against its
 *  measurement. */
PetscErrorCode AmrLbSummary(AmrLb lb, MPI_Comm comm, const char *program);

/** Put the balancer's state into a checkpoint record: the weights' mode
 *  and costs, the timing fit's stacked windows, sfc-shift's sequence, the
 *  measured migration times per cell, the -lb_threshold rule's loss since
 *  the last rebalance, the elapsed time and the run totals; the phase
 *  model's totals, its prediction for the next cycle, the initial
 *  partition's positions and, with phases weights, every phase's fit. */
PetscErrorCode AmrLbSave(AmrLb lb, AmrCkpState st);

/** Continue from a saved state (a restart, possibly on another number of
 *  ranks and with other -lb_* options): the run totals, the elapsed time,
 *  the migration times and the -lb_threshold rule's state always; the fitted costs and the windows with timing weights (the
 *  windows of another rank count are dropped); sfc-shift's sequence with
 *  sfc-shift (restarted from the current partition on another rank
 *  count); the phase model's state (the initial positions on as many
 *  ranks only, the phases' fits with phases weights). */
PetscErrorCode AmrLbLoad(AmrLb lb, AmrCkpState st);

/** The run id that -trace_loads's file header carries (a new run's). */
PetscErrorCode AmrLbSetRun(AmrLb lb, uint32_t run);

/** A restart's -trace_loads (collective; nothing without one): the file
 *  header carries run; the checkpoint's trace file goes on after its last
 *  cycle, another file is begun anew.  Called before anything is written:
 *  with check_run, a file holding another run's trace is refused and left
 *  as it is (AmrTraceContinue). */
PetscErrorCode AmrLbContinueTrace(AmrLb lb, AmrCkpState st, uint32_t run, PetscBool check_run);

/** Name of the method ("none" for NULL) and of a weight mode. */
const char *AmrLbMethodName(const AmrLb lb);

#endif
