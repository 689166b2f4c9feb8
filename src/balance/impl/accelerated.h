/* Private to methods/: the flow recurrence shared by second-order diffusion
 * and Chebyshev (improved) diffusion.  Iteration k moves, on every edge,
 *     y_k = w_k a (l_i - l_j) + (w_k - 1) y_{k-1},
 * the flow form of  l_k = w_k M l_{k-1} + (1 - w_k) l_{k-2}  with
 * M = I - a L; the two methods differ only in the weights w_k. */
#ifndef AMRDLB_ACCELERATED_H
#define AMRDLB_ACCELERATED_H

#include "balance/balance.h"

typedef struct accel_state accel_state;

/** Weight w_k of iteration k >= 1, given the previous weight. */
typedef double (*accel_weight)(const accel_state *s, int k, double prev);

struct accel_state {
  double a;             /**< first-order parameter */
  double beta;          /**< second-order: the constant weight */
  double sigma2;        /**< Chebyshev: squared spectral radius of M off the constant vector */
  double w;             /**< weight of the last iteration */
  accel_weight weight;
  double *prev;         /**< flow of the last iteration per directed edge */
};

/** Allocate the state for graph g with first-order parameter a, declare the
 *  channels; the caller fills beta or sigma2. */
lb_err lb_accel_setup(lb_run *run, double a, accel_weight weight, accel_state **s);
/** One superstep of the recurrence. */
lb_err lb_accel_step(lb_run *run, void *state, int lo, int hi);
/** Free the state. */
void lb_accel_destroy(void *state);

#endif
