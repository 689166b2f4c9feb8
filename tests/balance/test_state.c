/* The balancer's state between cycles as blobs (lbstate.h): a restored
 * weights history and offset-shifting sequence continue exactly as the
 * originals would have, bit for bit; a shorter restored history equals one
 * that only ever saw the newest windows; windows of another rank count and
 * the best partition of another part count are dropped; every truncated or
 * damaged blob is refused without a crash. */

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "balance/lbstate.h"

enum { RANKS = 3, TYPES = 2, STEPS = 5 };

/* Window k of a 3-rank run: counts and per-step times that change with k. */
static void window(int k, int nranks, int64_t *counts, double times[][STEPS])
{
  for (int r = 0; r < nranks; r++) {
    counts[TYPES * r] = 1000 + 37 * ((k * 7 + r * 3) % 11);
    counts[TYPES * r + 1] = 400 + 53 * ((k * 5 + r) % 7);
    for (int s = 0; s < STEPS; s++)
      times[r][s] = (1e-6 * (double)counts[TYPES * r] + 2.7e-6 * (double)counts[TYPES * r + 1]) * (1.0 + 0.01 * ((k + r * 5 + s * 3) % 9));
  }
}

static lb_err fit(lb_weights_history *h, int k, int nranks, lb_weights_result *res)
{
  int64_t counts[TYPES * 8];
  double times[8][STEPS];
  const double *tp[8];
  int nsteps[8];
  lb_weights_options opt;
  window(k, nranks, counts, times);
  for (int r = 0; r < nranks; r++) tp[r] = times[r], nsteps[r] = STEPS;
  lb_weights_options_default(&opt);
  return lb_weights_fit_table(nranks, nsteps, tp, TYPES, counts, &opt, h, res);
}

static int same_fit(const lb_weights_result *a, const lb_weights_result *b)
{
  return a->windows == b->windows && a->rows == b->rows && a->fitted == b->fitted && a->flags == b->flags &&
         !memcmp(a->cost, b->cost, TYPES * sizeof(double)) && !memcmp(a->coef, b->coef, TYPES * sizeof(double)) &&
         !memcmp(&a->residual, &b->residual, sizeof(double));
}

/* Fit window k on both histories and compare; returns the windows stacked. */
static int step_both(lb_weights_history *a, lb_weights_history *b, int k)
{
  lb_weights_result ra, rb;
  int w;
  CHECK(fit(a, k, RANKS, &ra) == LB_OK);
  CHECK(fit(b, k, RANKS, &rb) == LB_OK);
  CHECK(same_fit(&ra, &rb));
  w = ra.windows;
  lb_weights_result_free(&ra);
  lb_weights_result_free(&rb);
  return w;
}

static void test_history(void)
{
  lb_weights_history *h, *r4, *r2, *only2, *other;
  lb_weights_result res;
  void *blob, *blob2;
  size_t len, len2;
  int kept;

  CHECK(lb_weights_history_create(TYPES, 4, 0.9, &h) == LB_OK);
  /* six windows into a history of four: the ring has wrapped */
  for (int k = 0; k < 6; k++) {
    CHECK(fit(h, k, RANKS, &res) == LB_OK);
    lb_weights_result_free(&res);
  }
  CHECK(lb_weights_history_pack(h, &blob, &len) == LB_OK);
  CHECK(len == 8 + 8 * 5 + 4 * RANKS * (TYPES + 1) * 8);

  CHECK(lb_weights_history_create(TYPES, 4, 0.9, &r4) == LB_OK);
  CHECK(lb_weights_history_restore(r4, blob, len, RANKS, &kept) == LB_OK && kept == 4);
  CHECK(step_both(h, r4, 6) == 4);
  CHECK(step_both(h, r4, 7) == 4);
  CHECK(lb_weights_history_pack(r4, &blob2, &len2) == LB_OK);
  {
    void *b1;
    size_t l1;
    CHECK(lb_weights_history_pack(h, &b1, &l1) == LB_OK);
    CHECK(l1 == len2 && !memcmp(b1, blob2, l1));
    free(b1);
  }
  free(blob2);

  /* a shorter history keeps the newest windows: the same as a history of
   * two that saw windows 4 and 5 only */
  CHECK(lb_weights_history_create(TYPES, 2, 0.9, &r2) == LB_OK);
  CHECK(lb_weights_history_create(TYPES, 2, 0.9, &only2) == LB_OK);
  CHECK(lb_weights_history_restore(r2, blob, len, RANKS, &kept) == LB_OK && kept == 2);
  for (int k = 4; k < 6; k++) {
    CHECK(fit(only2, k, RANKS, &res) == LB_OK);
    lb_weights_result_free(&res);
  }
  CHECK(step_both(r2, only2, 6) == 2);

  /* another rank count: nothing restored, and the next fit on 4 ranks runs */
  CHECK(lb_weights_history_create(TYPES, 4, 0.9, &other) == LB_OK);
  CHECK(lb_weights_history_restore(other, blob, len, 4, &kept) == LB_OK && kept == 0);
  CHECK(fit(other, 6, 4, &res) == LB_OK && res.windows == 1);
  lb_weights_result_free(&res);
  lb_weights_history_destroy(&other);

  /* damaged blobs: every truncation, one extra byte, another version, another
   * object's blob, other load types */
  CHECK(lb_weights_history_create(TYPES, 4, 0.9, &other) == LB_OK);
  for (size_t n = 0; n < len; n++) CHECK(lb_weights_history_restore(other, blob, n, RANKS, &kept) == LB_ERR_FILE && kept == 0);
  {
    unsigned char *big = malloc(len + 1);
    memcpy(big, blob, len);
    big[len] = 0;
    CHECK(lb_weights_history_restore(other, big, len + 1, RANKS, &kept) == LB_ERR_FILE);
    big[4] ^= 2;
    CHECK(lb_weights_history_restore(other, big, len, RANKS, &kept) == LB_ERR_FILE);
    big[4] ^= 2;
    big[0] = 'X';
    CHECK(lb_weights_history_restore(other, big, len, RANKS, &kept) == LB_ERR_FILE);
    free(big);
  }
  lb_weights_history_destroy(&other);
  CHECK(lb_weights_history_create(TYPES + 1, 4, 0.9, &other) == LB_OK);
  CHECK(lb_weights_history_restore(other, blob, len, RANKS, &kept) == LB_ERR_ARG && kept == 0);
  lb_weights_history_destroy(&other);

  /* an empty history round-trips too */
  CHECK(lb_weights_history_create(TYPES, 4, 0.9, &other) == LB_OK);
  free(blob);
  CHECK(lb_weights_history_pack(other, &blob, &len) == LB_OK);
  CHECK(lb_weights_history_restore(r2, blob, len, RANKS, &kept) == LB_OK && kept == 0);
  lb_weights_history_destroy(&other);

  free(blob);
  lb_weights_history_destroy(&h);
  lb_weights_history_destroy(&r4);
  lb_weights_history_destroy(&r2);
  lb_weights_history_destroy(&only2);
}

/* Niemoeller et al. 2020's sequence on a curve whose second half really costs 3 while
 * every weight is 1: the run is packed mid-search and after settling, and
 * the restored sequences take the same steps as the original. */
enum { N = 600, P = 4 };
static double w[N], cost[N];

static void measure(const int64_t *counts, double *measured)
{
  int64_t k = 0;
  for (int q = 0; q < P; q++) {
    measured[q] = 0.0;
    for (int64_t c = 0; c < counts[q]; c++, k++) measured[q] += cost[k];
  }
}

static void test_shifter(void)
{
  lb_curve_shifter ref, copy, fewer;
  int64_t counts[P], counts2[P];
  double measured[P];
  lb_curve_shift_action act, act2;
  void *blob = NULL;
  size_t len = 0;
  int restored = 0;
  long packed_steps = 0;

  for (int k = 0; k < N; k++) w[k] = 1.0, cost[k] = k < N / 2 ? 1.0 : 3.0;
  for (int q = 0; q < P; q++) counts[q] = N / P;
  CHECK(lb_curve_shifter_init(&ref, P, 1.25) == LB_OK);
  CHECK(lb_curve_shifter_init(&copy, P, 1.25) == LB_OK);
  for (int st = 0; st < 16; st++) {
    lb_curve_result r1, r2;
    measure(counts, measured);
    /* restore a copy after 3 steps (still shifting), and again once the
     * original has settled, and follow it alongside */
    if (st == 3 || (ref.settled && restored == 1)) {
      free(blob);
      CHECK(lb_curve_shifter_pack(&ref, &blob, &len) == LB_OK);
      packed_steps = ref.steps;
      /* the best partition's counts are the parts' own: not in the blob */
      CHECK(len == 8 + 8 * 7);
      CHECK(lb_curve_shifter_restore(&copy, blob, len, ref.best_counts) == LB_OK);
      CHECK(copy.steps == ref.steps && copy.have_best == ref.have_best && copy.settled == ref.settled);
      restored++;
    }
    CHECK(lb_curve_shifter_step(&ref, MPI_COMM_SELF, N, w, counts, measured, &r1, &act) == LB_OK);
    if (restored) {
      CHECK(lb_curve_shifter_step(&copy, MPI_COMM_SELF, N, w, counts, measured, &r2, &act2) == LB_OK);
      CHECK(act == act2 && !memcmp(r1.counts, r2.counts, sizeof counts));
      lb_curve_result_free(&r2);
    }
    memcpy(counts, r1.counts, sizeof counts);
    lb_curve_result_free(&r1);
  }
  CHECK_EQ(restored, 2);
  CHECK(ref.settled && copy.settled);

  /* restored on another number of parts: steps kept, the search restarts */
  CHECK(lb_curve_shifter_init(&fewer, P - 1, 2.0) == LB_OK);
  CHECK(lb_curve_shifter_restore(&fewer, blob, len, ref.best_counts) == LB_OK);
  CHECK(fewer.steps == packed_steps && packed_steps > 3);
  CHECK(!fewer.have_best && !fewer.settled && fewer.penalty == 2.0);
  for (int q = 0; q < P - 1; q++) counts2[q] = N / (P - 1);
  {
    lb_curve_result r;
    double m3[P - 1];
    int64_t k = 0;
    for (int q = 0; q < P - 1; q++) {
      m3[q] = 0.0;
      for (int64_t c = 0; c < counts2[q]; c++, k++) m3[q] += cost[k];
    }
    CHECK(lb_curve_shifter_step(&fewer, MPI_COMM_SELF, N, w, counts2, m3, &r, &act) == LB_OK && act == LB_SHIFT_SHIFTED);
    lb_curve_result_free(&r);
  }

  /* the same parts without the best partition's counts: the sequence
   * keeps its steps and searches again */
  {
    lb_curve_shifter lost;
    CHECK(lb_curve_shifter_init(&lost, P, 1.25) == LB_OK);
    CHECK(lb_curve_shifter_restore(&lost, blob, len, NULL) == LB_OK);
    CHECK(lost.steps == packed_steps && !lost.have_best && !lost.settled);
    lb_curve_shifter_free(&lost);
  }

  /* a blob of the earlier layout, its counts after the rest, restores
   * them; damaged blobs are refused */
  for (size_t n = 0; n < len; n++) CHECK(lb_curve_shifter_restore(&copy, blob, n, ref.best_counts) == LB_ERR_FILE);
  {
    const size_t olen = len + 8 * P;
    unsigned char *old = malloc(olen);
    lb_curve_shifter was;
    memcpy(old, blob, len);
    for (int q = 0; q < P; q++)
      for (int b = 0; b < 8; b++) old[len + 8 * q + b] = (unsigned char)((uint64_t)ref.best_counts[q] >> (8 * b));
    CHECK(lb_curve_shifter_init(&was, P, 1.25) == LB_OK);
    CHECK(lb_curve_shifter_restore(&was, old, olen, NULL) == LB_OK);
    CHECK(was.have_best && was.settled && !memcmp(was.best_counts, ref.best_counts, P * sizeof *ref.best_counts));
    lb_curve_shifter_free(&was);
    CHECK(lb_curve_shifter_restore(&copy, old, olen - 8, NULL) == LB_ERR_FILE); /* 3 counts for 4 parts */
    old[8] = 100;                                                               /* nparts 100 with 4 counts stored */
    CHECK(lb_curve_shifter_restore(&copy, old, olen, NULL) == LB_ERR_FILE);
    memcpy(old, "LBWH", 4);
    CHECK(lb_curve_shifter_restore(&copy, old, olen, NULL) == LB_ERR_FILE);
    free(old);
  }
  free(blob);
  lb_curve_shifter_free(&ref);
  lb_curve_shifter_free(&copy);
  lb_curve_shifter_free(&fewer);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  test_history();
  test_shifter();
  printf("test_state: %d checks failed\n", check_failures);
  MPI_Finalize();
  return check_failures != 0;
}
