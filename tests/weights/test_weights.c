/* The weights module on tables of virtual ranks: seed 003's example, a noisy
 * synthetic recovery, and every guarded case. */

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lbweights.h"

/* Deterministic noise so the test asserts fixed numbers. */
static double uniform(unsigned *state)
{
  *state = *state * 1664525u + 1013904223u;
  return (*state >> 8) / 16777216.0;
}

/* Fit with windows of one step each: the measured time of rank i is r[i]. */
static lb_err fit_single_steps(int n, int t, const double *r, const int64_t *counts, const double *previous,
                                 lb_weights_result *res)
{
  int nsteps[16];
  const double *times[16];
  lb_weights_options opt;
  int i;
  lb_weights_options_default(&opt);
  opt.previous = previous;
  for (i = 0; i < n; i++) nsteps[i] = 1, times[i] = &r[i];
  return lb_weights_fit_table(n, nsteps, times, t, counts, &opt, res);
}

static void test_trimmed_mean(void)
{
  const double x[8] = {5, 1, 100, 2, 3, 4, -50, 6};
  CHECK_NEAR(lb_trimmed_mean(8, x, 0.25), (2 + 3 + 4 + 5) / 4.0, 1e-15);
  CHECK_NEAR(lb_trimmed_mean(8, x, 0.0), 71 / 8.0, 1e-15);
  CHECK_NEAR(lb_trimmed_mean(3, x, 0.25), 106 / 3.0, 1e-13); /* floor(0.75) = 0 trimmed */
  CHECK_NEAR(lb_trimmed_mean(1, x, 0.49), 5.0, 1e-15);
}

/* Seed 003, eq. (weights_example): 4 ranks, 2 load types. */
static const int64_t seed_counts[8] = {10, 7, 13, 4, 12, 2, 5, 8};
static const double seed_load[4] = {1.2, 0.9, 0.8, 1.1};

static void test_seed_example(void)
{
  lb_weights_result res;
  CHECK(fit_single_steps(4, 2, seed_load, seed_counts, NULL, &res) == LB_OK);
  CHECK_NEAR(res.coef[0], 0.0420, 5e-5);
  CHECK_NEAR(res.coef[1], 0.1097, 5e-5);
  CHECK_NEAR(res.coef[1] / res.coef[0], 2.61, 5e-3);
  CHECK(res.flags == 0 && res.fitted == 1 && res.rank == 2);
  /* Mean cell weight 1 over the 40 + 21 cells. */
  CHECK_NEAR((40 * res.cost[0] + 21 * res.cost[1]) / 61.0, 1.0, 1e-12);
  CHECK_NEAR(res.cost[1] / res.cost[0], res.coef[1] / res.coef[0], 1e-12);
  CHECK(res.residual > 0.0 && res.residual < 0.5);
  CHECK(res.smape > 0.0 && res.smape < 50.0);
  printf("seed 003 example: c = (%.4f, %.4f), c1/c0 = %.2f, residual %.4f, sMAPE %.2f%%\n", res.coef[0], res.coef[1],
         res.coef[1] / res.coef[0], res.residual, res.smape);
  lb_weights_result_free(&res);
}

/* The same example measured over noisy windows: one spike and one dropout
 * per window are cut by the 25% truncated mean, so the fit is unchanged
 * (times are scaled: l only depends on ratios). */
static void test_seed_example_windows(void)
{
  double win[4][8];
  const double *times[4];
  int nsteps[4], i, s;
  lb_weights_options opt;
  lb_weights_result res;
  for (i = 0; i < 4; i++) {
    for (s = 0; s < 8; s++) win[i][s] = 0.01 * seed_load[i];
    win[i][2] = 5.0;
    win[i][6] = 0.0;
    times[i] = win[i];
    nsteps[i] = 8;
  }
  lb_weights_options_default(&opt);
  CHECK(lb_weights_fit_table(4, nsteps, times, 2, seed_counts, &opt, &res) == LB_OK);
  CHECK_NEAR(res.coef[0], 0.0420, 5e-5);
  CHECK_NEAR(res.coef[1], 0.1097, 5e-5);
  CHECK_NEAR(res.load[0], 1.2, 1e-12);
  lb_weights_result_free(&res);
}

/* Known costs per type, times with +-5% noise per step: the fitted cost
 * ratios come back within the noise. */
static void test_noisy_recovery(void)
{
  enum { N = 48, T = 3, S = 16 };
  const double truth[T] = {1.0e-6, 2.5e-6, 0.4e-6};
  static double win[N][S];
  const double *times[N];
  int64_t counts[N * T];
  int nsteps[N], i, t, s;
  unsigned seed = 12345;
  lb_weights_options opt;
  lb_weights_result res;
  for (i = 0; i < N; i++) {
    double exact = 0.0;
    for (t = 0; t < T; t++) {
      counts[i * T + t] = 100 + (int64_t)(900 * uniform(&seed));
      exact += truth[t] * counts[i * T + t];
    }
    for (s = 0; s < S; s++) win[i][s] = exact * (1.0 + 0.1 * (uniform(&seed) - 0.5));
    times[i] = win[i];
    nsteps[i] = S;
  }
  lb_weights_options_default(&opt);
  CHECK(lb_weights_fit_table(N, nsteps, times, T, counts, &opt, &res) == LB_OK);
  CHECK(res.flags == 0 && res.fitted);
  for (t = 1; t < T; t++) CHECK_NEAR(res.cost[t] / res.cost[0], truth[t] / truth[0], 0.05 * truth[t] / truth[0]);
  CHECK(res.smape < 5.0);
  lb_weights_result_free(&res);
}

static void test_absent_type(void)
{
  const int64_t counts[12] = {10, 7, 0, 13, 4, 0, 12, 2, 0, 5, 8, 0};
  const double previous[3] = {0.5, 1.5, 7.0};
  lb_weights_result res;
  CHECK(fit_single_steps(4, 3, seed_load, counts, previous, &res) == LB_OK);
  CHECK(res.flags == LB_WEIGHTS_ABSENT_TYPE && res.fitted);
  CHECK(res.cost[2] == 7.0 && res.coef[2] == 0.0);
  CHECK_NEAR(res.coef[0], 0.0420, 5e-5);
  CHECK_NEAR(res.coef[1], 0.1097, 5e-5);
  lb_weights_result_free(&res);
}

/* Type 1 always appears twice as often as type 0: only c0 + 2 c1 is
 * determined, and the minimum-norm solution splits it as (1, 2) / 5. */
static void test_collinear(void)
{
  const int64_t counts[8] = {10, 20, 13, 26, 12, 24, 5, 10};
  lb_weights_result res;
  CHECK(fit_single_steps(4, 2, seed_load, counts, NULL, &res) == LB_OK);
  CHECK(res.flags == LB_WEIGHTS_RANK_DEFICIENT && res.rank == 1 && res.fitted);
  CHECK_NEAR(res.coef[1], 2.0 * res.coef[0], 1e-12);
  lb_weights_result_free(&res);
}

/* Two ranks, three types: a whole plane of exact fits, of which the
 * minimum-norm one is taken (positive here, so it is used). */
static void test_underdetermined(void)
{
  const int64_t counts[6] = {10, 7, 3, 9, 8, 4};
  const double r[2] = {0.5, 0.5};
  lb_weights_result res;
  CHECK(fit_single_steps(2, 3, r, counts, NULL, &res) == LB_OK);
  CHECK(res.flags == (LB_WEIGHTS_UNDERDETERMINED | LB_WEIGHTS_RANK_DEFICIENT) && res.rank == 2 && res.fitted);
  CHECK_NEAR(res.residual, 0.0, 1e-12);
  lb_weights_result_free(&res);
}

/* More cells of type 1 go with less time: the fit says c1 < 0, which no
 * cell can cost, so the previous costs stay. */
static void test_negative(void)
{
  const int64_t counts[6] = {10, 1, 10, 5, 10, 9};
  const double r[3] = {1.5, 1.0, 0.5};
  const double previous[2] = {1.0, 3.0};
  lb_weights_result res;
  CHECK(fit_single_steps(3, 2, r, counts, previous, &res) == LB_OK);
  CHECK(res.flags == LB_WEIGHTS_NEGATIVE && !res.fitted);
  CHECK(res.coef[1] < 0.0);
  CHECK(res.cost[0] == 1.0 && res.cost[1] == 3.0);
  lb_weights_result_free(&res);
}

static void test_bad_times(void)
{
  double r[4] = {1.2, 0.9, 0.8, 1.1};
  const double bad[3] = {NAN, INFINITY, -1e-3};
  lb_weights_result res;
  int k;
  for (k = 0; k < 3; k++) {
    r[2] = bad[k];
    CHECK(fit_single_steps(4, 2, r, seed_counts, NULL, &res) == LB_ERR_LOAD);
    CHECK(strstr(lb_errmsg(), "rank 2, step 0") != NULL);
  }
}

static void test_single_rank(void)
{
  const double r[1] = {0.3};
  lb_weights_result res;
  CHECK(fit_single_steps(1, 2, r, seed_counts, NULL, &res) == LB_OK);
  CHECK(res.flags == LB_WEIGHTS_SINGLE_RANK && !res.fitted);
  CHECK(res.cost[0] == 1.0 && res.cost[1] == 1.0 && res.load[0] == 1.0);
  lb_weights_result_free(&res);
}

static void test_empty_and_zero(void)
{
  const double w[2] = {0.0, 0.0};
  const double *times[4] = {w, w, w, w};
  int nsteps[4] = {2, 0, 2, 2};
  const double previous[2] = {0.7, 2.0};
  lb_weights_options opt;
  lb_weights_result res;
  lb_weights_options_default(&opt);
  opt.previous = previous;
  CHECK(lb_weights_fit_table(4, nsteps, times, 2, seed_counts, &opt, &res) == LB_OK);
  CHECK(res.flags == LB_WEIGHTS_EMPTY_WINDOW && !res.fitted && res.cost[1] == 2.0);
  lb_weights_result_free(&res);
  nsteps[1] = 2;
  CHECK(lb_weights_fit_table(4, nsteps, times, 2, seed_counts, &opt, &res) == LB_OK);
  CHECK(res.flags == LB_WEIGHTS_ZERO_TIME && !res.fitted && res.cost[0] == 0.7);
  lb_weights_result_free(&res);
}

static void test_bad_options(void)
{
  lb_weights_options opt;
  lb_weights_result res;
  const double *times[1] = {seed_load};
  int nsteps[1] = {1};
  char buf[128];
  lb_weights_options_default(&opt);
  opt.trim = 0.5;
  CHECK(lb_weights_fit_table(1, nsteps, times, 2, seed_counts, &opt, &res) == LB_ERR_ARG);
  CHECK(strstr(lb_errmsg(), "-lb_weights_trim") != NULL);
  lb_weights_flags_string(LB_WEIGHTS_ABSENT_TYPE | LB_WEIGHTS_NEGATIVE, buf, sizeof buf);
  CHECK(strcmp(buf, "absent-type,negative-cost") == 0);
}

int main(void)
{
  test_trimmed_mean();
  test_seed_example();
  test_seed_example_windows();
  test_noisy_recovery();
  test_absent_type();
  test_collinear();
  test_underdetermined();
  test_negative();
  test_bad_times();
  test_single_rank();
  test_empty_and_zero();
  test_bad_options();
  if (check_failures) fprintf(stderr, "%d checks failed\n", check_failures);
  else printf("test_weights: all checks passed\n");
  return check_failures != 0;
}
