/* The weights module on tables of virtual ranks: Niemoeller et al. 2020's example, a noisy
 * synthetic recovery, stacked windows with forgetting on 2 ranks, the
 * non-negative least squares against enumeration, standard errors, and
 * every guarded case. */

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "balance/lbweights.h"

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
  return lb_weights_fit_table(n, nsteps, times, t, counts, &opt, NULL, res);
}

static void test_trimmed_mean(void)
{
  const double x[8] = {5, 1, 100, 2, 3, 4, -50, 6};
  CHECK_NEAR(lb_trimmed_mean(8, x, 0.25), (2 + 3 + 4 + 5) / 4.0, 1e-15);
  CHECK_NEAR(lb_trimmed_mean(8, x, 0.0), 71 / 8.0, 1e-15);
  CHECK_NEAR(lb_trimmed_mean(3, x, 0.25), 106 / 3.0, 1e-13); /* floor(0.75) = 0 trimmed */
  CHECK_NEAR(lb_trimmed_mean(1, x, 0.49), 5.0, 1e-15);
}

/* Niemoeller et al. 2020, eq. (weights_example): 4 ranks, 2 load types. */
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
  printf("Niemoeller et al. 2020 example: c = (%.4f, %.4f), c1/c0 = %.2f, residual %.4f, sMAPE %.2f%%\n", res.coef[0], res.coef[1],
         res.coef[1] / res.coef[0], res.residual, res.smape);
  lb_weights_result_free(&res);
}

/* The same example measured over noisy windows: one spike and one dropout
 * per window are cut by the 25% truncated mean, so the fit is unchanged
 * (times are scaled by 0.01: so are the costs in seconds per cell). */
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
  CHECK(lb_weights_fit_table(4, nsteps, times, 2, seed_counts, &opt, NULL, &res) == LB_OK);
  CHECK_NEAR(res.coef[0], 0.0420e-2, 5e-7);
  CHECK_NEAR(res.coef[1], 0.1097e-2, 5e-7);
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
  CHECK(lb_weights_fit_table(N, nsteps, times, T, counts, &opt, NULL, &res) == LB_OK);
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

/* More cells of type 1 go with less time: the unconstrained fit says
 * c1 < 0, which no cell can cost; the constrained optimum holds c1 at 0 and
 * fits c0 alone: c0 = sum(n0 r) / sum(n0^2) = 30 / 300. */
static void test_negative(void)
{
  const int64_t counts[6] = {10, 1, 10, 5, 10, 9};
  const double r[3] = {1.5, 1.0, 0.5};
  const double previous[2] = {1.0, 3.0};
  lb_weights_result res;
  CHECK(fit_single_steps(3, 2, r, counts, previous, &res) == LB_OK);
  CHECK(res.flags == LB_WEIGHTS_CLAMPED && res.fitted);
  CHECK(res.coef[1] == 0.0);
  CHECK_NEAR(res.coef[0], 0.1, 1e-14);
  CHECK(res.cost[1] == 0.0 && res.cost[0] > 0.0);
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
  CHECK(lb_weights_fit_table(4, nsteps, times, 2, seed_counts, &opt, NULL, &res) == LB_OK);
  CHECK(res.flags == LB_WEIGHTS_EMPTY_WINDOW && !res.fitted && res.cost[1] == 2.0);
  lb_weights_result_free(&res);
  nsteps[1] = 2;
  CHECK(lb_weights_fit_table(4, nsteps, times, 2, seed_counts, &opt, NULL, &res) == LB_OK);
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
  lb_weights_history *h = NULL;
  CHECK(lb_weights_fit_table(1, nsteps, times, 2, seed_counts, &opt, NULL, &res) == LB_ERR_ARG);
  CHECK(strstr(lb_errmsg(), "-lb_weights_trim") != NULL);
  CHECK(lb_weights_history_create(2, 0, 0.9, &h) == LB_ERR_ARG && !h);
  CHECK(strstr(lb_errmsg(), "-lb_history 0") != NULL);
  CHECK(lb_weights_history_create(2, 4, 0.0, &h) == LB_ERR_ARG);
  CHECK(strstr(lb_errmsg(), "-lb_forget 0") != NULL);
  CHECK(lb_weights_history_create(2, 4, 1.5, &h) == LB_ERR_ARG);
  CHECK(lb_weights_history_create(2, 4, NAN, &h) == LB_ERR_ARG);
  lb_weights_flags_string(LB_WEIGHTS_ABSENT_TYPE | LB_WEIGHTS_CLAMPED | LB_WEIGHTS_WITHIN_NOISE, buf, sizeof buf);
  CHECK(strcmp(buf, "absent-type,clamped-at-zero,within-noise") == 0);
}

/* One window of single-step times per rank into a history. */
static lb_err fit_window(lb_weights_history *h, int n, int t, const double *r, const int64_t *counts,
                         const double *previous, lb_weights_result *res)
{
  int nsteps[512];
  const double *times[512];
  lb_weights_options opt;
  lb_weights_options_default(&opt);
  opt.previous = previous;
  for (int i = 0; i < n; i++) nsteps[i] = 1, times[i] = &r[i];
  return lb_weights_fit_table(n, nsteps, times, t, counts, &opt, h, res);
}

/* 2 ranks, 2 types: the counts of window k (the mesh grows and the mix
 * moves, as adaptation and migration do). */
static void drift_counts(int k, int64_t *counts)
{
  counts[0] = 1000 + 40 * k, counts[1] = 300 + 90 * k;
  counts[2] = 900 + 70 * k, counts[3] = 500 + 20 * k + 30 * (k % 3);
}

static void exact_times(const int64_t *counts, const double *c, double *r)
{
  for (int i = 0; i < 2; i++) r[i] = c[0] * counts[2 * i] + c[1] * counts[2 * i + 1];
}

/* Noise-free windows of growing meshes: one window is a square system
 * (no spare row, unknown error), the stack of four is overdetermined and
 * recovers the costs in seconds exactly with zero standard error. */
static void test_stacked_exact(void)
{
  const double c[2] = {2e-6, 5e-6};
  int64_t counts[4];
  double r[2];
  lb_weights_history *h = NULL;
  lb_weights_result res;
  CHECK(lb_weights_history_create(2, 4, 1.0, &h) == LB_OK);
  for (int k = 0; k < 6; k++) {
    drift_counts(k, counts);
    exact_times(counts, c, r);
    CHECK(fit_window(h, 2, 2, r, counts, NULL, &res) == LB_OK);
    CHECK(res.fitted && res.rank == 2);
    CHECK(res.windows == (k < 4 ? k + 1 : 4) && res.rows == 2 * res.windows);
    CHECK_NEAR(res.coef[0] / c[0], 1.0, 1e-9);
    CHECK_NEAR(res.coef[1] / c[1], 1.0, 1e-9);
    if (k == 0) CHECK(isnan(res.cost_stderr[0]) && isnan(res.cost_stderr[1]));
    if (k >= 3) {
      CHECK_EQ(res.flags, 0);
      CHECK(res.cost_stderr[0] < 1e-9 && res.cost_stderr[1] < 1e-9);
      CHECK(res.residual < 1e-15);
    }
    lb_weights_result_free(&res);
  }
  lb_weights_history_destroy(&h);
}

/* Known costs (ratio 2.5), 2 ranks, 10 steps per window with 20% Gaussian
 * noise per step (fixed seed): over windows 20..59 the costs in use keep
 * the ratio within 15% in the median, and within 30% always; a single
 * window misses by far more. */
static double gauss(unsigned *state)
{
  double u = uniform(state), v = uniform(state);
  return sqrt(-2.0 * log(u > 0.0 ? u : 1e-12)) * cos(6.283185307179586 * v);
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double noisy_median_error(int history, double forget, double *worst)
{
  const double c[2] = {1e-6, 2.5e-6};
  double win[2][10], cost[2] = {1.0, 1.0}, err[40];
  const double *times[2] = {win[0], win[1]};
  int nsteps[2] = {10, 10};
  unsigned seed = 4242;
  int64_t counts[4];
  lb_weights_history *h = NULL;
  lb_weights_options opt;
  lb_weights_result res;
  lb_weights_options_default(&opt);
  opt.previous = cost;
  CHECK(lb_weights_history_create(2, history, forget, &h) == LB_OK);
  *worst = 0.0;
  for (int k = 0; k < 60; k++) {
    drift_counts(k, counts);
    for (int i = 0; i < 2; i++)
      for (int s = 0; s < 10; s++)
        win[i][s] = (c[0] * counts[2 * i] + c[1] * counts[2 * i + 1]) * fmax(0.05, 1.0 + 0.2 * gauss(&seed));
    CHECK(lb_weights_fit_table(2, nsteps, times, 2, counts, &opt, h, &res) == LB_OK);
    memcpy(cost, res.cost, sizeof cost);
    lb_weights_result_free(&res);
    if (k >= 20) {
      err[k - 20] = fabs(cost[1] / cost[0] - 2.5) / 2.5;
      *worst = fmax(*worst, err[k - 20]);
    }
  }
  lb_weights_history_destroy(&h);
  qsort(err, 40, sizeof *err, cmp_double);
  return err[20];
}

static void test_noisy_two_ranks(void)
{
  double worst1, worst, median1 = noisy_median_error(1, 1.0, &worst1), median = noisy_median_error(32, 0.9, &worst);
  printf("2 ranks, 20%% noise: cost ratio error median %.3f worst %.3f (H 32, forget 0.9) against %.3f %.3f (one window)\n",
         median, worst, median1, worst1);
  CHECK(median < 0.15);
  CHECK(worst < 0.3);
  CHECK(median1 > 2.0 * median);
}

/* The constrained optimum by enumeration: for every set S of free columns
 * the unconstrained least squares on S (normal equations), kept if all its
 * values are positive; the best residual of those is the NNLS optimum. */
static int solve_small(int n, double *m, double *x)
{
  for (int p = 0; p < n; p++) {
    int piv = p;
    for (int i = p + 1; i < n; i++)
      if (fabs(m[i * (n + 1) + p]) > fabs(m[piv * (n + 1) + p])) piv = i;
    if (fabs(m[piv * (n + 1) + p]) < 1e-14) return 0;
    for (int j = 0; j <= n; j++) {
      double t = m[p * (n + 1) + j];
      m[p * (n + 1) + j] = m[piv * (n + 1) + j], m[piv * (n + 1) + j] = t;
    }
    for (int i = 0; i < n; i++) {
      if (i == p) continue;
      double f = m[i * (n + 1) + p] / m[p * (n + 1) + p];
      for (int j = p; j <= n; j++) m[i * (n + 1) + j] -= f * m[p * (n + 1) + j];
    }
  }
  for (int p = 0; p < n; p++) x[p] = m[p * (n + 1) + n] / m[p * (n + 1) + p];
  return 1;
}

static double residual(int m, int n, const double *a, const double *b, const double *x)
{
  double r2 = 0.0;
  for (int i = 0; i < m; i++) {
    double r = b[i];
    for (int j = 0; j < n; j++) r -= a[i * n + j] * x[j];
    r2 += r * r;
  }
  return sqrt(r2);
}

static void test_nnls_enumeration(void)
{
  enum { M = 6, N = 4 };
  unsigned seed = 31337;
  int clamped_cases = 0;
  for (int cs = 0; cs < 300; cs++) {
    double a[M * N], b[M], x[N], best[N] = {0, 0, 0, 0}, bestres;
    int n = 2 + cs % 3, clamped;
    for (int i = 0; i < M; i++) {
      for (int j = 0; j < n; j++) a[i * n + j] = uniform(&seed);
      b[i] = 2.0 * uniform(&seed) - 0.5;
    }
    bestres = residual(M, n, a, b, best);
    for (int set = 1; set < 1 << n; set++) {
      int idx[N], k = 0;
      double m[N * (N + 1)], y[N], full[N] = {0, 0, 0, 0};
      for (int j = 0; j < n; j++)
        if (set >> j & 1) idx[k++] = j;
      for (int p = 0; p < k; p++) {
        for (int q = 0; q <= k; q++) {
          double sum = 0.0;
          for (int i = 0; i < M; i++) sum += a[i * n + idx[p]] * (q < k ? a[i * n + idx[q]] : b[i]);
          m[p * (k + 1) + q] = sum;
        }
      }
      if (!solve_small(k, m, y)) continue;
      int feasible = 1;
      for (int p = 0; p < k; p++) feasible = feasible && y[p] > 0.0, full[idx[p]] = y[p];
      if (feasible && residual(M, n, a, b, full) < bestres) {
        bestres = residual(M, n, a, b, full);
        memcpy(best, full, sizeof best);
      }
    }
    CHECK(lb_nnls(M, n, a, b, x, &clamped) == LB_OK);
    clamped_cases += clamped;
    for (int j = 0; j < n; j++) {
      CHECK(x[j] >= 0.0);
      CHECK_NEAR(x[j], best[j], 1e-8);
    }
    CHECK_NEAR(residual(M, n, a, b, x), bestres, 1e-10);
  }
  printf("NNLS: 300 random cases agree with the enumeration of active sets, %d with a bound active\n", clamped_cases);
  CHECK(clamped_cases > 50);
}

/* The cost of type 1 doubles at window 10 (noise-free): with forget 0.5 the
 * fit follows within 4 windows, without forgetting the old windows hold it
 * back. */
static double ratio_after_change(double forget, int after)
{
  int64_t counts[4];
  double r[2], ratio = 0.0;
  lb_weights_history *h = NULL;
  lb_weights_result res;
  CHECK(lb_weights_history_create(2, 8, forget, &h) == LB_OK);
  for (int k = 0; k < 10 + after; k++) {
    const double c[2] = {1e-6, k < 10 ? 2e-6 : 4e-6};
    drift_counts(k, counts);
    exact_times(counts, c, r);
    CHECK(fit_window(h, 2, 2, r, counts, NULL, &res) == LB_OK);
    ratio = res.cost[1] / res.cost[0];
    lb_weights_result_free(&res);
  }
  lb_weights_history_destroy(&h);
  return ratio;
}

static void test_forgetting(void)
{
  double fast = ratio_after_change(0.5, 4), slow = ratio_after_change(1.0, 4);
  printf("cost ratio 2 -> 4, 4 windows later: %.3f with forget 0.5, %.3f without forgetting\n", fast, slow);
  CHECK(fabs(fast - 4.0) < 0.1 * 4.0);
  CHECK(fabs(slow - 4.0) > 0.2 * 4.0);
  CHECK_NEAR(ratio_after_change(0.5, 0), 2.0, 1e-9);
}

/* N ranks, one window, 10% noise: the standard error shrinks like
 * 1/sqrt(rows), and the truth lies within a few of them. */
static void noisy_ranks(int n, unsigned seed, int64_t *counts, double *r)
{
  for (int i = 0; i < n; i++) {
    counts[2 * i] = 200 + (int64_t)(800 * uniform(&seed));
    counts[2 * i + 1] = 200 + (int64_t)(800 * uniform(&seed));
    r[i] = (1e-6 * counts[2 * i] + 3e-6 * counts[2 * i + 1]) * (1.0 + 0.1 * gauss(&seed));
  }
}

static void test_stderr_rows(void)
{
  static int64_t counts[2 * 512];
  static double r[512];
  double se[3];
  const int ns[3] = {32, 128, 512};
  lb_weights_result res;
  for (int k = 0; k < 3; k++) {
    noisy_ranks(ns[k], 99u + (unsigned)k, counts, r);
    CHECK(fit_window(NULL, ns[k], 2, r, counts, NULL, &res) == LB_OK);
    se[k] = res.cost_stderr[1] / res.cost[1];
    CHECK(fabs(res.cost[1] / res.cost[0] - 3.0) < 4.0 * 3.0 * hypot(se[k], res.cost_stderr[0] / res.cost[0]));
    lb_weights_result_free(&res);
  }
  printf("relative standard error of c1 over 32, 128, 512 rows: %.4f %.4f %.4f\n", se[0], se[1], se[2]);
  CHECK(fabs(se[0] / se[1] - 2.0) < 0.5);
  CHECK(fabs(se[1] / se[2] - 2.0) < 0.5);
}

/* A fit that moves every cost by less than its standard error keeps the
 * previous costs, with the flag; a larger move is taken. */
static void test_within_noise(void)
{
  static int64_t counts[2 * 64];
  static double r[64];
  double near[2], far[2];
  lb_weights_result res;
  noisy_ranks(64, 7u, counts, r);
  CHECK(fit_window(NULL, 64, 2, r, counts, NULL, &res) == LB_OK);
  CHECK(res.fitted && res.flags == 0);
  for (int t = 0; t < 2; t++) {
    near[t] = res.cost[t] + 0.5 * res.cost_stderr[t];
    far[t] = res.cost[t] + (t ? -3.0 : 0.5) * res.cost_stderr[t];
  }
  lb_weights_result_free(&res);
  CHECK(fit_window(NULL, 64, 2, r, counts, near, &res) == LB_OK);
  CHECK(res.flags == LB_WEIGHTS_WITHIN_NOISE && !res.fitted);
  CHECK(res.cost[0] == near[0] && res.cost[1] == near[1]);
  lb_weights_result_free(&res);
  CHECK(fit_window(NULL, 64, 2, r, counts, far, &res) == LB_OK);
  CHECK(res.flags == 0 && res.fitted);
  lb_weights_result_free(&res);
}

/* A rank without cells (and so without work) adds a zero row: the costs
 * are those of the other ranks. */
static void test_rank_without_cells(void)
{
  const int64_t counts3[6] = {10, 7, 0, 0, 13, 4}, counts2[4] = {10, 7, 13, 4};
  const double r3[3] = {1.2, 0.0, 0.9}, r2[2] = {1.2, 0.9};
  lb_weights_result a, b;
  CHECK(fit_single_steps(3, 2, r3, counts3, NULL, &a) == LB_OK);
  CHECK(fit_single_steps(2, 2, r2, counts2, NULL, &b) == LB_OK);
  CHECK(a.fitted && b.fitted && a.load[1] == 0.0);
  CHECK_NEAR(a.coef[0], b.coef[0], 1e-14);
  CHECK_NEAR(a.coef[1], b.coef[1], 1e-14);
  lb_weights_result_free(&a);
  lb_weights_result_free(&b);
}

/* A bad time is an error naming the rank and step, also with a history,
 * which it leaves as it was. */
static void test_bad_time_history(void)
{
  int64_t counts[4];
  double r[2];
  const double c[2] = {1e-6, 2e-6};
  lb_weights_history *h = NULL;
  lb_weights_result res;
  CHECK(lb_weights_history_create(2, 4, 0.9, &h) == LB_OK);
  drift_counts(0, counts);
  exact_times(counts, c, r);
  r[1] = -1.0;
  CHECK(fit_window(h, 2, 2, r, counts, NULL, &res) == LB_ERR_LOAD);
  CHECK(strstr(lb_errmsg(), "rank 1, step 0") != NULL);
  exact_times(counts, c, r);
  CHECK(fit_window(h, 2, 2, r, counts, NULL, &res) == LB_OK);
  CHECK(res.windows == 1);
  lb_weights_result_free(&res);
  lb_weights_history_destroy(&h);
  CHECK(h == NULL);
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
  test_stacked_exact();
  test_noisy_two_ranks();
  test_nnls_enumeration();
  test_forgetting();
  test_stderr_rows();
  test_within_noise();
  test_rank_without_cells();
  test_bad_time_history();
  if (check_failures) fprintf(stderr, "%d checks failed\n", check_failures);
  else printf("test_weights: all checks passed\n");
  return check_failures != 0;
}
