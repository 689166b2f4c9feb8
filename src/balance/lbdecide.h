#ifndef AMRDLB_LBDECIDE_H
#define AMRDLB_LBDECIDE_H

/* When to rebalance: a ski-rental rule over the cycles a partition serves.
 * Keeping an unbalanced partition costs the time lost to imbalance every
 * cycle (the rent); rebalancing costs the migration once (the purchase;
 * the balancer's time counts too where it is spent only to rebalance).
 * Rebalance as soon as the loss accumulated since the last rebalance has
 * reached the predicted cost of rebalancing now: the
 * criterion of Menon et al. (Meta-Balancer, "Automated load balancing
 * invocation based on application characteristics", IEEE Cluster 2012).
 * Where a rebalance removes the loss it never pays more than twice the
 * best schedule known in hindsight, and on an imbalance that grows
 * linearly it picks the period of least average cost per cycle.
 *
 * Two guards make it hold with weights that are wrong. The loss counted in
 * a cycle is its excess over the residual, the least loss measured since
 * the last rebalance: what the balancer leaves with the weights it has,
 * which rebalancing again with them would not remove (counting it would
 * rebalance every few cycles for nothing). The least, not the first cycle
 * after the rebalance, so that one cycle disturbed by another process
 * cannot hold off rebalancing for long. And a floor on the imbalance below
 * which measurement noise never triggers a rebalance.
 *
 * The loss is measured, so the rule pays at least one cycle's loss before
 * it acts, and on a mesh that adaptation has just unbalanced it would keep
 * a partition predicted to lose many times the migration in the coming
 * cycle alone. So it also rebalances when the predicted gain of the coming
 * cycle (the loss the kept partition is predicted to have beyond the new
 * one's) exceeds the cost. A prediction is only as good as the weights:
 * the cycle after such a rebalance checks it (its measured loss must be
 * at least the cost below the predicted loss of the kept partition, and
 * no more than the measured loss of the cycle that decided), and a
 * prediction that did not come true is not acted on again until the
 * measured loss has paid for a rebalance, so wrong weights cost at most
 * one extra rebalance per ski-rental one.
 *
 * Whatever paid for it, a move is made only to a partition predicted to
 * beat the kept one by more than the move costs: the loss path assumes
 * that the new partition removes the loss that accumulated, but it
 * removes only the share gain / kept of the kept partition's predicted
 * loss (none where the proposal is predicted worse, as timing weights
 * that miss a phase propose).  So the loss since the last rebalance,
 * scaled by that share, must reach the cost: the proposal's predicted
 * gain over as many cycles as the loss took to pay for the move.  A
 * proposal that fails both this and the coming cycle's gain is kept with
 * LB_DECIDE_NO_GAIN. */

#include <stdint.h>

#include "balance/balance.h"
#include "balance/lbphase.h"

/** The loss since the last rebalance, carried from cycle to cycle
 *  (identical on every rank when every rank accounts the same losses). */
typedef struct {
  double excess;   /**< sum over the cycles since the last rebalance of each one's loss beyond the residual then, rank-seconds */
  double residual; /**< least loss of a cycle since the last rebalance (0 before the first; infinite until a cycle is accounted) */
  int rebalanced;  /**< there was a rebalance: the residual is measured, not 0 */
  int trust;       /**< the predicted gain may decide (its last check came true, or none since the last rebalance by measured loss) */
  int promised;    /**< the last rebalance was decided by the predicted gain: the next cycle checks it */
  double expected; /**< what that rebalance promised: the predicted loss of the kept partition, rank-seconds ... */
  double promise_cost; /**< ... and the cost it was to save at least */
  double last;     /**< the loss of the last cycle accounted, rank-seconds */
  double before;   /**< the measured loss of the cycle that decided the promised rebalance */
} lb_decide_state;

/** Start a run: no loss, residual 0 (the initial partition was not made
 *  by a rebalance, so all its loss counts). */
void lb_decide_init(lb_decide_state *s);

/** Account one cycle's measured loss (t_max - t_avg) N, rank-seconds
 *  (finite, >= 0, else LB_ERR_ARG): the residual becomes the least loss
 *  since the last rebalance, this cycle's included, and the excess grows
 *  by this cycle's loss beyond it.  The first cycle after a rebalance by
 *  predicted gain checks the prediction: trust stays only when the loss
 *  is at least the cost below the promised loss of the kept partition and
 *  not above the loss measured before the rebalance. */
lb_err lb_decide_account(lb_decide_state *s, double loss_rank_s);

/** The inputs of one decision (every rank passes the same values). */
typedef struct {
  double lost_rank_s;   /**< measured time lost to imbalance since the last rebalance, this cycle's included
                             (lb_decide_state.excess), rank-seconds */
  double cost_rank_s;   /**< predicted cost of rebalancing now (what declining would save: the migration time) x P, rank-seconds */
  double kept_rank_s;   /**< predicted loss of the coming cycle on the kept partition, (max - mean) x P of its predicted loads, rank-seconds */
  double gain_rank_s;   /**< predicted gain of the coming cycle: kept_rank_s minus the new partition's predicted loss, rank-seconds */
  double imbalance_pct; /**< the imbalance I% the floor is compared with */
  double floor_pct;     /**< no rebalance while imbalance_pct <= floor_pct (0 <= floor_pct < 100) */
} lb_decide_input;

/** The outcome, with its reason. */
typedef enum {
  LB_DECIDE_REBALANCE,   /**< above the floor, and the loss since the last rebalance, times the share gain/kept of it the proposal removes, reached the cost */
  LB_DECIDE_BELOW_FLOOR, /**< imbalance at or below the floor: keep the partition */
  LB_DECIDE_BELOW_COST,  /**< the loss so far is less than the cost: keep the partition, the loss goes on accumulating */
  LB_DECIDE_GAIN,        /**< above the floor, the coming cycle's predicted gain exceeds the cost (trusted predictions only), and the loss path did not rebalance */
  LB_DECIDE_NO_GAIN      /**< the loss so far reached the cost, but the proposal is not predicted to gain it back: keep the partition, the loss goes on accumulating */
} lb_decision;

/**
 * Decide whether to rebalance now: LB_DECIDE_REBALANCE when imbalance_pct >
 * floor_pct, lost_rank_s >= cost_rank_s, gain_rank_s > 0 and lost_rank_s x
 * gain_rank_s / kept_rank_s >= cost_rank_s. With a constant loss L per cycle
 * that the proposal removes (gain = kept) and cost C that is ceil(C / L)
 * cycles after the last rebalance.  Else LB_DECIDE_GAIN when above the
 * floor, s trusts predictions and gain_rank_s > cost_rank_s; else
 * LB_DECIDE_BELOW_COST while lost_rank_s < cost_rank_s, LB_DECIDE_NO_GAIN
 * after.  Inputs that are negative or not finite, and a floor outside
 * [0, 100), are LB_ERR_ARG.
 */
lb_err lb_decide(const lb_decide_state *s, const lb_decide_input *in, lb_decision *d);

/** The partition was just rebalanced: the excess restarts at 0 and the
 *  residual is measured afresh.  d is the decision that rebalanced
 *  (LB_DECIDE_REBALANCE also for a rebalance without the rule): a
 *  rebalance by measured loss restores the trust in predictions; one by
 *  LB_DECIDE_GAIN (with the inputs it was decided on) is checked by the
 *  next lb_decide_account. */
void lb_decide_rebalanced(lb_decide_state *s, lb_decision d, const lb_decide_input *in);

/** The phase model of the cycle measured, whose loss lb_decide_account
 *  takes: own[k] is this rank's own work in phase k (nphases values, each
 *  rank its own).  The sum over phases of the slowest rank and of the
 *  mean need no rank's value but the largest and the sum, so two
 *  MPI_Allreduce of nphases values replace a P-long gather (collective). */
lb_err lb_decide_measured_model(MPI_Comm comm, int nphases, const double *own, lb_phase_model *m);

/** "rebalance", "below_floor", "below_cost", "gain" or "no_gain". */
const char *lb_decision_name(lb_decision d);

/** Migrations the prediction of the next one looks back on (odd: one median). */
#define LB_MIGRATION_HISTORY 9

/** The migrations measured in a run: seconds per cell moved of the last
 *  LB_MIGRATION_HISTORY ones. A single migration measured while the
 *  process was descheduled can take a thousand times the usual time per
 *  cell; predicted from it, every later rebalance would look too dear to
 *  pay off and the partition would be kept for the rest of the run, so the
 *  prediction takes the median, which one such outlier cannot move far. */
typedef struct {
  double per_cell[LB_MIGRATION_HISTORY];
  int n, head;
} lb_migration_model;

/** An empty model: it predicts 0 s until a migration was measured. */
void lb_migration_model_init(lb_migration_model *m);

/** Record a migration that moved cells (> 0; the busiest rank's cells sent
 *  and received) in seconds (finite, >= 0); other values are LB_ERR_ARG. */
lb_err lb_migration_model_add(lb_migration_model *m, int64_t cells, double seconds);

/** Predicted seconds to move cells (>= 0): the median seconds per cell of
 *  the recorded migrations (the mean of the middle two of an even count)
 *  times cells. */
double lb_migration_model_predict(const lb_migration_model *m, int64_t cells);

#endif
