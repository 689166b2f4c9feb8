/* lb_weights_fit on MPI ranks (each rank's normal equations summed by one
 * reduction, its rows kept in its own history) gives the fit of the same
 * table in one process to round-off, for one window and for windows
 * stacked in a history, and both equal to round-off the least-squares
 * solution of the whole stacked system by LAPACKE_dgelsd (QR-based, what
 * the fit solved before it reduced normal equations); each rank's rows
 * packed and restored (a checkpoint's part) fit the next window bit for
 * bit as the history they came from; injected bad times
 * or options end in one error line on every rank count.
 *   test_weights_mpi [-trim F] [-bad_rank R -bad_step S]  */

#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "balance/lbstate.h"
#include "balance/lbweights.h"

enum { T = 3, S = 12 };

/* Rank i's cells of each type and its window k, a function of i and k only. */
static void rank_data(int i, int k, int64_t *counts, double *times)
{
  const double cost[T] = {1.0e-6, 3.0e-6, 0.5e-6};
  unsigned state = 777u + 31u * (unsigned)i + 1009u * (unsigned)k;
  double exact = 0.0;
  int t, s;
  for (t = 0; t < T; t++) {
    state = state * 1664525u + 1013904223u;
    counts[t] = 50 + (state >> 20) % 400;
    exact += cost[t] * counts[t];
  }
  for (s = 0; s < S; s++) {
    state = state * 1664525u + 1013904223u;
    times[s] = exact * (1.0 + 0.02 * ((state >> 8) / 16777216.0 - 0.5));
  }
}

/* Round-off between two fits of the same rows summed in other orders. */
#define ROUNDOFF 1e-12

/* The stacked system of windows k0..k1 of every rank, window k weighted by
 * forget^(k1 - k) (as rows times its square root), solved by QR: the
 * fit's raw costs as LAPACKE_dgelsd gives them. */
static void qr_fit(int size, int k0, int k1, double forget, double trim, double *coef)
{
  const int m = size * (k1 - k0 + 1);
  double *a = malloc((size_t)m * T * sizeof *a), *b = malloc((size_t)(m > T ? m : T) * sizeof *b), sv[T], times[S];
  int64_t counts[T];
  lapack_int rank;
  for (int k = k0, row = 0; k <= k1; k++)
    for (int i = 0; i < size; i++, row++) {
      const double f = sqrt(pow(forget, k1 - k));
      rank_data(i, k, counts, times);
      for (int t = 0; t < T; t++) a[row * T + t] = f * (double)counts[t];
      b[row] = f * lb_trimmed_mean(S, times, trim);
    }
  CHECK(LAPACKE_dgelsd(LAPACK_ROW_MAJOR, m, T, 1, a, T, b, 1, sv, 1e-10, &rank) == 0 && rank == T);
  for (int t = 0; t < T; t++) coef[t] = b[t];
  free(a);
  free(b);
}

static int fail(int rank, const char *prog, const char *msg)
{
  if (rank == 0) fprintf(stderr, "%s: error: %s\n", prog, msg);
  MPI_Finalize();
  return 1;
}

int main(int argc, char **argv)
{
  int rank, size, i, badrank = -1, badstep = 0;
  int64_t counts[T];
  double times[S];
  lb_weights_options opt;
  lb_weights_result res;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  lb_weights_options_default(&opt);
  for (i = 1; i < argc; i++) {
    if (i + 1 < argc && !strcmp(argv[i], "-trim"))
      opt.trim = atof(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "-bad_rank"))
      badrank = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "-bad_step"))
      badstep = atoi(argv[++i]);
    else
      return fail(rank, argv[0], "unknown option or missing value");
  }
  rank_data(rank, 0, counts, times);
  if (rank == badrank && badstep >= 0 && badstep < S) times[badstep] = NAN;
  if (lb_weights_fit(MPI_COMM_WORLD, S, times, T, counts, &opt, NULL, &res)) return fail(rank, argv[0], lb_errmsg());

  if (rank == 0) {
    int64_t *all = malloc((size_t)size * T * sizeof *all);
    double *win = malloc((size_t)size * S * sizeof *win);
    const double **ptr = malloc((size_t)size * sizeof *ptr);
    int *nsteps = malloc((size_t)size * sizeof *nsteps), t;
    lb_weights_result ref;
    for (i = 0; i < size; i++) {
      rank_data(i, 0, all + (size_t)i * T, win + (size_t)i * S);
      ptr[i] = win + (size_t)i * S;
      nsteps[i] = S;
    }
    double qr[T];
    CHECK(lb_weights_fit_table(size, nsteps, ptr, T, all, &opt, NULL, &ref) == LB_OK);
    CHECK(ref.flags == res.flags && ref.fitted == res.fitted);
    for (t = 0; t < T; t++) {
      CHECK_NEAR(res.coef[t], ref.coef[t], ROUNDOFF * ref.coef[t]);
      CHECK_NEAR(res.cost[t], ref.cost[t], ROUNDOFF * ref.cost[t]);
    }
    CHECK_NEAR(res.residual, ref.residual, 1e-9 * ref.residual);
    CHECK_NEAR(res.smape, ref.smape, ROUNDOFF * ref.smape);
    if (size > T) {
      qr_fit(size, 0, 0, 1.0, opt.trim, qr);
      for (t = 0; t < T; t++) CHECK_NEAR(res.coef[t], qr[t], 1e-10 * qr[t]);
    }
    printf("ranks %d flags %u fitted %d cost %.6f %.6f %.6f residual %.3e smape %.3f%%\n", size, res.flags,
           res.fitted, res.cost[0], res.cost[1], res.cost[2], res.residual, res.smape);
    lb_weights_result_free(&ref);
    free(all), free(win), free(ptr), free(nsteps);
  }
  lb_weights_result_free(&res);

  /* Five windows through a history of 3 with forgetting 0.8. */
  {
    lb_weights_history *h = NULL, *href = NULL;
    int64_t *all = malloc((size_t)size * T * sizeof *all);
    double *win = malloc((size_t)size * S * sizeof *win);
    const double **ptr = malloc((size_t)size * sizeof *ptr);
    int *nsteps = malloc((size_t)size * sizeof *nsteps), t, k;
    CHECK(lb_weights_history_create(T, 3, 0.8, &h) == LB_OK);
    CHECK(lb_weights_history_create(T, 3, 0.8, &href) == LB_OK);
    for (k = 1; k <= 5; k++) {
      lb_weights_result ref;
      rank_data(rank, k, counts, times);
      if (lb_weights_fit(MPI_COMM_WORLD, S, times, T, counts, &opt, h, &res)) return fail(rank, argv[0], lb_errmsg());
      for (i = 0; i < size; i++) {
        rank_data(i, k, all + (size_t)i * T, win + (size_t)i * S);
        ptr[i] = win + (size_t)i * S;
        nsteps[i] = S;
      }
      CHECK(lb_weights_fit_table(size, nsteps, ptr, T, all, &opt, href, &ref) == LB_OK);
      CHECK(ref.flags == res.flags && ref.fitted == res.fitted && ref.rows == res.rows);
      if (size > 1) CHECK(res.windows == (k < 3 ? k : 3) && res.rows == size * res.windows);
      for (t = 0; t < T; t++) {
        CHECK_NEAR(res.coef[t], ref.coef[t], ROUNDOFF * ref.coef[t]);
        CHECK_NEAR(res.cost[t], ref.cost[t], ROUNDOFF * ref.cost[t]);
        CHECK(isnan(ref.cost_stderr[t]) == isnan(res.cost_stderr[t]));
        if (!isnan(ref.cost_stderr[t])) CHECK_NEAR(res.cost_stderr[t], ref.cost_stderr[t], 1e-9 * ref.cost_stderr[t]);
      }
      if (size * res.windows > T) {
        double qr[T];
        qr_fit(size, k - res.windows + 1, k, 0.8, opt.trim, qr);
        for (t = 0; t < T; t++) CHECK_NEAR(res.coef[t], qr[t], 1e-10 * qr[t]);
      }
      if (rank == 0 && k == 5)
        printf("ranks %d, 5 windows in a history of 3: flags %u cost %.6f %.6f %.6f stderr %.2e %.2e %.2e\n", size,
               res.flags, res.cost[0], res.cost[1], res.cost[2], res.cost_stderr[0], res.cost_stderr[1],
               res.cost_stderr[2]);
      lb_weights_result_free(&ref);
      lb_weights_result_free(&res);
    }
    /* A checkpoint's part: each rank packs its own rows (the blob does not
     * grow with the ranks), restores them, and the next fit is the same
     * bit for bit (one rank fits nothing and stacks no window). */
    if (size > 1) {
      lb_weights_history *back = NULL;
      lb_weights_result again;
      void *blob = NULL;
      size_t len = 0;
      int kept = 0;
      CHECK(lb_weights_history_pack(h, &blob, &len) == LB_OK);
      CHECK(len == 8 + 8 * 5 + 3 * (T + 1) * 8);
      CHECK(lb_weights_history_create(T, 3, 0.8, &back) == LB_OK);
      CHECK(lb_weights_history_restore(back, blob, len, size, &kept) == LB_OK && kept == 3);
      rank_data(rank, 6, counts, times);
      if (lb_weights_fit(MPI_COMM_WORLD, S, times, T, counts, &opt, h, &res)) return fail(rank, argv[0], lb_errmsg());
      if (lb_weights_fit(MPI_COMM_WORLD, S, times, T, counts, &opt, back, &again)) return fail(rank, argv[0], lb_errmsg());
      CHECK(again.windows == res.windows && again.rows == res.rows && !memcmp(again.cost, res.cost, T * sizeof(double)) &&
            !memcmp(again.coef, res.coef, T * sizeof(double)));
      lb_weights_result_free(&again);
      lb_weights_result_free(&res);
      lb_weights_history_destroy(&back);
      free(blob);
    }
    lb_weights_history_destroy(&h);
    lb_weights_history_destroy(&href);
    free(all), free(win), free(ptr), free(nsteps);
  }
  const int status = check_finish(MPI_COMM_WORLD);
  MPI_Finalize();
  return status;
}
