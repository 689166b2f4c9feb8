/* The multi-constraint split of the curve by prefix sums (lb_phase_split
 * and lb_phase_choose, lbphase.h) on constructed cases, against the bucket
 * walk it replaced (main 5fb4a13: its cuts and times recorded below, on 1
 * process) and, for three parts or fewer, against the least time over
 * every cut found here by brute force.
 *
 * - front, ends, three: lb_phase_split from the equal-count cut's phase
 *   maxima gives the walk's cuts, and lb_phase_choose the walk's choice
 *   (front: 5 | 95, the optimum 145; ends: 30 30 30, the optimum 60).
 * - blocks, eight, t8 (test_phase's eight parts): the split is chosen over
 *   the best combination, as the walk's was, its time within 5% of the
 *   walk's (blocks 43 against 41, eight 154 against 148 on 1 process and
 *   161 on 2, t8 414 against 410).
 *
 * Each case runs with the curve spread over the MPI ranks (rank 1 holding
 * no cell where there are more) and, as on the virtual backend, whole in
 * one process on MPI_COMM_SELF: the same cuts on 1, 2 and 4 ranks and in
 * one process (the walk's depended on the number of processes).  Prints
 * "0 checks failed". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "balance/lbphase.h"

enum { MAXK = 3, MAXP = 8 };

typedef struct {
  const char *name;
  int n, K, P;
  double (*cost)(int k, int i); /* phase k's weight of cell i */
  int same;                     /* 1: the walk's cuts are expected; 0: its time within 5% */
  int64_t walk_split[MAXP];     /* the walk's lb_phase_split from the equal-count maxima */
  int64_t walk_chosen[MAXP];    /* the walk's lb_phase_choose */
  double walk_time;             /* the time of the walk's choice */
} split_case;

/* phase 0 one per cell; phase 1 ten per cell on the first ten cells */
static double front(int k, int i) { return k == 0 ? 1 : i < 10 ? 10 : 0; }

/* phase 0 one per cell; phase 1 five per cell at both ends */
static double ends(int k, int i) { return k == 0 ? 1 : i < 6 || i >= 84 ? 5 : 0; }

/* three phases: one per cell; four per cell on cells 10-19; two per
 * cell on cells 50-69 */
static double three(int k, int i) { return k == 0 ? 1 : k == 1 ? 4.0 * (i >= 10 && i < 20) : 2.0 * (i >= 50 && i < 70); }

/* phase 0 on cells 0-39 and 60-79, phase 1 (three per cell) between */
static double blocks(int k, int i)
{
  const int mid = i >= 40 && i < 60;
  return k == 0 ? !mid : 3.0 * mid;
}

/* phase 0 one per cell, phase 1 eight per cell on cells 100-139 */
static double eight(int k, int i) { return k == 0 ? 1 : 8.0 * (i >= 100 && i < 140); }

/* phase 0 one per cell, phase 1 five per cell on cells 120-359 */
static double t8(int k, int i) { return k == 0 ? 1 : 5.0 * (i >= 120 && i < 360); }

static const split_case cases[] = {
  {"front", 100, 2, 2, front, 1, {50, 50}, {5, 95}, 145},
  {"ends", 90, 2, 3, ends, 1, {30, 30, 30}, {30, 30, 30}, 60},
  {"three", 90, 3, 3, three, 1, {30, 30, 30}, {30, 30, 30}, 90},
  {"blocks", 80, 2, 4, blocks, 0, {20, 27, 7, 26}, {20, 27, 7, 26}, 41},
  {"eight", 400, 2, 8, eight, 0, {68, 42, 10, 10, 68, 68, 68, 66}, {68, 42, 10, 10, 68, 68, 68, 66}, 148},
  {"t8", 960, 2, 8, t8, 0, {165, 48, 49, 49, 165, 165, 165, 154}, {165, 48, 49, 49, 165, 165, 165, 154}, 410},
};

/* Phase k's largest part load under cuts (cells per part), by hand. */
static double phase_max(const split_case *c, int k, const int64_t *counts)
{
  double max = 0;
  for (int q = 0, i = 0; q < c->P; q++) {
    double load = 0;
    for (int64_t e = i + counts[q]; i < e; i++) load += c->cost(k, i);
    max = fmax(max, load);
  }
  return max;
}

/* The model's time of cuts: the sum over phases of the largest part load. */
static double time_of(const split_case *c, const int64_t *counts)
{
  double t = 0;
  for (int k = 0; k < c->K; k++) t += phase_max(c, k, counts);
  return t;
}

/* The least time over every cut into P <= 3 parts. */
static double brute_force(const split_case *c)
{
  int64_t counts[3] = {0, 0, 0};
  double best = HUGE_VAL;
  for (int a = 0; a <= c->n; a++)
    for (int b = c->P == 3 ? a : c->n; b <= c->n; b++) {
      counts[0] = a;
      counts[1] = c->P == 3 ? b - a : c->n - a;
      counts[2] = c->n - b;
      best = fmin(best, time_of(c, counts));
    }
  return best;
}

/* The case's weights of cells lo..hi-1. */
static void weights_of(const split_case *c, int lo, int hi, double **w)
{
  for (int k = 0; k < c->K; k++) {
    w[k] = malloc(sizeof(double) * (size_t)(hi - lo + 1));
    for (int i = lo; i < hi; i++) w[k][i - lo] = c->cost(k, i);
  }
}

/* lb_phase_split from the phase maxima of the equal-count cut, and
 * lb_phase_choose, with the cells lo..hi-1 on this process of comm. */
static void run_case(const split_case *c, MPI_Comm comm, int lo, int hi, int64_t *split, int64_t *chosen, int *took_split)
{
  double *w[MAXK], start[MAXK];
  int64_t even[MAXP];
  lb_phase_choice ch;

  weights_of(c, lo, hi, w);
  for (int q = 0; q < c->P; q++) even[q] = (int64_t)c->n * (q + 1) / c->P - (int64_t)c->n * q / c->P;
  for (int k = 0; k < c->K; k++) start[k] = phase_max(c, k, even);
  CHECK(!lb_phase_split(comm, hi - lo, c->K, (const double *const *)w, c->P, start, split));
  CHECK(!lb_phase_choose(comm, hi - lo, c->K, (const double *const *)w, c->P, 3, &ch));
  for (int q = 0; q < c->P; q++) chosen[q] = ch.counts[q];
  *took_split = ch.split;
  lb_phase_choice_free(&ch);
  for (int k = 0; k < c->K; k++) free(w[k]);
}

static void print_cuts(const char *what, int P, const int64_t *counts)
{
  printf(" %s", what);
  for (int q = 0; q < P; q++) printf(" %lld", (long long)counts[q]);
}

int main(int argc, char **argv)
{
  int rank, size;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const split_case *c = &cases[i];
    /* rank 1's cells go to rank 0, so that rank 1's piece is empty */
    const int lo = c->n * (rank == 1 ? 2 : rank) / size, hi = c->n * (rank == 0 && size > 1 ? 2 : rank + 1) / size;
    int64_t split[MAXP], chosen[MAXP], whole_split[MAXP], whole_chosen[MAXP];
    int took, whole_took;
    const double best = c->P <= 3 ? brute_force(c) : NAN;

    run_case(c, MPI_COMM_WORLD, lo, hi, split, chosen, &took);
    run_case(c, MPI_COMM_SELF, 0, c->n, whole_split, whole_chosen, &whole_took);
    if (rank == 0) {
      printf("%s, %d parts: split %g, chosen %g (walk's %g, brute force %g):", c->name, c->P, time_of(c, split), time_of(c, chosen), c->walk_time, best);
      print_cuts("split", c->P, split);
      print_cuts("| chosen", c->P, chosen);
      printf("\n");
    }
    for (int q = 0; q < c->P; q++) {
      CHECK_EQ(split[q], whole_split[q]);
      CHECK_EQ(chosen[q], whole_chosen[q]);
      if (c->same) {
        CHECK_EQ(split[q], c->walk_split[q]);
        CHECK_EQ(chosen[q], c->walk_chosen[q]);
      }
    }
    CHECK_EQ(took, whole_took);
    CHECK_NEAR(time_of(c, c->walk_chosen), c->walk_time, 0);
    if (c->same) CHECK_EQ(took, 0);
    else {
      CHECK_EQ(took, 1);
      CHECK(time_of(c, chosen) <= 1.05 * c->walk_time);
    }
    if (c->P <= 3) CHECK(time_of(c, chosen) >= best);
  }
  CHECK_NEAR(brute_force(&cases[0]), 145, 0);
  CHECK_NEAR(brute_force(&cases[1]), 60, 0);
  const int failed = check_finish(MPI_COMM_WORLD);
  if (rank == 0) printf("%d checks failed\n", check_failures);
  MPI_Finalize();
  return failed;
}
