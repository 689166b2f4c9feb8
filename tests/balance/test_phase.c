/* The phase model (balance/lbphase.h) on a constructed case whose answer
 * is known: 100 cells on a curve, 2 parts, two phases separated by a
 * synchronisation.  Phase A costs 1 per cell everywhere; phase B costs 10
 * per cell on the first 10 cells only.  Balancing the summed weight cuts
 * after cell 9 (A 9 | 91, B 90 | 10: time 91 + 90 = 181), balancing the
 * count after cell 50 (A 50 | 50, B 100 | 0: 150); the least time is the
 * cut after cell 5 (A 5 | 95, B 50 | 50: 145), found by brute force over
 * every cut and by lb_phase_choose.  The curve is spread over the MPI
 * ranks: the same answer on 1, 2 and 4.
 *
 * Then the search's trials, timed by prefix sums with no P-long array,
 * against the model of lbcurve.h's sfc cut assembled whole: 960 cells in
 * 8 parts (more parts than ranks), rank 1 holding no cell, phase A 1 per
 * cell, phase B 5 per cell on cells 120-359.  The plain sum's trial
 * (sum_time) must equal lb_phase_loads of lb_curve_sfc's cut of the summed
 * weight: 270 + 225 = 495 (the summed weight is 2160, 270 a part: 45 of
 * B's cells, B 225, or 270 cells of A alone).  Prints "0 checks
 * failed". */
#include <stdlib.h>

#include "check.h"
#include "balance/lbcurve.h"
#include "balance/lbphase.h"

enum { N2 = 960, P2 = 8 };

/* The prefix-sum trials against the whole cut's model. */
static void check_trials(int rank, int size)
{
  /* rank 1's cells go to rank 0, so that rank 1's piece is empty */
  const int64_t lo = (int64_t)N2 * (rank == 1 ? 2 : rank) / size, hi = (int64_t)N2 * (rank == 0 && size > 1 ? 2 : rank + 1) / size;
  double *w[2], *sum = malloc(sizeof(double) * (size_t)(hi - lo + 1)), load[2 * P2];
  lb_curve_result cut;
  lb_phase_choice ch;
  lb_phase_model m, pm;

  for (int k = 0; k < 2; k++) w[k] = malloc(sizeof(double) * (size_t)(hi - lo + 1));
  for (int64_t i = lo; i < hi; i++) {
    w[0][i - lo] = 1;
    w[1][i - lo] = i >= 120 && i < 360 ? 5 : 0;
    sum[i - lo] = w[0][i - lo] + w[1][i - lo];
  }
  CHECK(!lb_curve_sfc(MPI_COMM_WORLD, hi - lo, sum, P2, &cut));
  CHECK(!lb_phase_loads(MPI_COMM_WORLD, hi - lo, 2, (const double *const *)w, P2, cut.counts, load, &m));
  CHECK_NEAR(m.time, 495, 1e-9);
  CHECK(!lb_phase_model_of(MPI_COMM_WORLD, hi - lo, 2, (const double *const *)w, P2, cut.counts, &pm));
  CHECK_NEAR(pm.time, m.time, 1e-12 * m.time);
  CHECK_NEAR(pm.imbalance_pct, m.imbalance_pct, 1e-9);
  CHECK(!lb_phase_choose(MPI_COMM_WORLD, hi - lo, 2, (const double *const *)w, P2, 3, &ch));
  CHECK_NEAR(ch.sum_time, m.time, 1e-12 * m.time);
  CHECK(ch.model.time <= m.time);
  if (rank == 0) printf("test_phase 8 parts on %d rank%s: summed weight's cut %.0f (trial %.17g), chosen %.17g\n", size, size > 1 ? "s" : "", m.time, ch.sum_time, ch.model.time);
  lb_phase_choice_free(&ch);
  lb_curve_result_free(&cut);
  for (int k = 0; k < 2; k++) free(w[k]);
  free(sum);
}

enum { N = 100, P = 2, K = 2 };

static double cost_a(int i) { return 1.0 + 0.0 * i; }
static double cost_b(int i) { return i < 10 ? 10.0 : 0.0; }

/* The model's time of the cut after cell m, by hand. */
static double time_of_cut(int m)
{
  double a[2] = {0}, b[2] = {0};
  for (int i = 0; i < N; i++) {
    a[i >= m] += cost_a(i);
    b[i >= m] += cost_b(i);
  }
  return fmax(a[0], a[1]) + fmax(b[0], b[1]);
}

int main(int argc, char **argv)
{
  int rank, size, best = 0;
  double *w[K], load[K * P];
  int64_t first, n, counts[P];
  lb_phase_choice ch;
  lb_phase_model m;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  first = (int64_t)N * rank / size;
  n = (int64_t)N * (rank + 1) / size - first;
  for (int k = 0; k < K; k++) w[k] = malloc(sizeof(double) * (size_t)(n + 1));
  for (int64_t i = 0; i < n; i++) {
    w[0][i] = cost_a((int)(first + i));
    w[1][i] = cost_b((int)(first + i));
  }
  for (int c = 1; c < N; c++)
    if (time_of_cut(c) < time_of_cut(best) || !best) best = c;
  CHECK_EQ(best, 5);
  CHECK_NEAR(time_of_cut(best), 145, 0);
  CHECK_NEAR(time_of_cut(9), 181, 0);
  CHECK_NEAR(time_of_cut(50), 150, 0);

  /* the model of a given partition: count's cut */
  counts[0] = counts[1] = 50;
  CHECK(!lb_phase_loads(MPI_COMM_WORLD, n, K, (const double *const *)w, P, counts, load, &m));
  CHECK_NEAR(m.time, 150, 1e-12);
  CHECK_NEAR(m.mean, 100, 1e-12);
  CHECK_NEAR(m.lost, 50, 1e-12);
  CHECK_NEAR(m.imbalance_pct, 100 * 50.0 * 2 / (150 * 1), 1e-12);

  CHECK(!lb_phase_choose(MPI_COMM_WORLD, n, K, (const double *const *)w, P, 3, &ch));
  CHECK_NEAR(ch.sum_time, 181, 1e-9);
  CHECK_NEAR(ch.model.time, 145, 1e-9);
  CHECK_EQ(ch.counts[0], 5);
  CHECK_EQ(ch.counts[1], 95);
  CHECK(!lb_phase_loads(MPI_COMM_WORLD, n, K, (const double *const *)w, P, ch.counts, load, &m));
  CHECK_NEAR(load[0], 5, 1e-9);
  CHECK_NEAR(load[2], 50, 1e-9);
  CHECK_NEAR(m.time, ch.model.time, 1e-12 * m.time);
  /* the same model by prefix sums */
  CHECK(!lb_phase_model_of(MPI_COMM_WORLD, n, K, (const double *const *)w, P, ch.counts, &m));
  CHECK_NEAR(m.time, 145, 1e-12);
  CHECK_NEAR(m.mean, 100, 1e-12);
  CHECK(ch.evaluated >= 3);
  if (rank == 0)
    printf("test_phase on %d rank%s: sum-weight cut %.0f, chosen cut %lld | %lld with time %.0f (alpha %g, %g) after %d combinations\n", size, size > 1 ? "s" : "",
           ch.sum_time, (long long)ch.counts[0], (long long)ch.counts[1], ch.model.time, ch.alpha[0], ch.alpha[1], ch.evaluated);
  lb_phase_choice_free(&ch);
  for (int k = 0; k < K; k++) free(w[k]);
  check_trials(rank, size);
  const int failed = check_finish(MPI_COMM_WORLD);
  if (rank == 0) printf("%d checks failed\n", check_failures);
  MPI_Finalize();
  return failed;
}
