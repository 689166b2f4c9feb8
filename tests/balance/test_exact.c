/* The exact 1D partition (sfc-exact) and HierSFC (Lieber and Nagel 2014):
 * chains of known optimal bottleneck (one where sfc's prefix-sum cut is a
 * whole task above it, one task heavier than the mean, equal tasks); on
 * random chains the exact bottleneck against every partition of the chain
 * (small) or against sfc's (large); HierSFC with one group is the exact
 * partition and with one group per part sfc's, any group count in
 * between; the tasks conserved and in curve order; the same cuts on the
 * MPI ranks (one part each) as with the whole curve in one process.
 *   test_exact  (on 1, 2 or 4 ranks) */

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "balance/lbcurve.h"

static int rank, size;

/* The cuts in curve order, every task in one part, each part's load the
 * sum of its tasks' weights. */
static void check_partition(const lb_curve_result *r, int64_t n, const double *w)
{
  double sum = 0.0, wmax = 0.0;
  for (int64_t k = 0; k < n; k++) wmax = fmax(wmax, w[k]);
  CHECK_EQ(r->cuts[0], 0);
  CHECK_EQ(r->cuts[r->nparts], n);
  CHECK_EQ(r->ncells, n);
  for (int q = 0; q < r->nparts; q++) {
    double got = 0.0;
    CHECK(r->cuts[q] <= r->cuts[q + 1]);
    CHECK_EQ(r->counts[q], r->cuts[q + 1] - r->cuts[q]);
    /* every weight 0: the parts are counted in tasks */
    for (int64_t k = r->cuts[q]; k < r->cuts[q + 1]; k++) got += wmax > 0.0 ? w[k] : 1.0;
    CHECK_NEAR(r->part_load[q], got, 1e-9 * (1.0 + got));
    sum += r->part_load[q];
  }
  CHECK_NEAR(sum, r->total, 1e-9 * (1.0 + r->total));
}

static int same_cuts(const lb_curve_result *a, const lb_curve_result *b)
{
  int same = a->nparts == b->nparts;
  for (int q = 0; same && q <= a->nparts; q++) same = a->cuts[q] == b->cuts[q];
  return same;
}

/* The least largest part over every placement of the nparts - 1 cuts. */
static double brute_force(int64_t n, const double *w, int nparts, int64_t from, int part)
{
  double best = HUGE_VAL, load = 0.0;
  if (part == nparts - 1) {
    for (int64_t k = from; k < n; k++) load += w[k];
    return load;
  }
  for (int64_t end = from; end <= n; end++) {
    if (end > from) load += w[end - 1];
    const double rest = brute_force(n, w, nparts, end, part + 1);
    best = fmin(best, fmax(load, rest));
  }
  return best;
}

/* A chain of known optimum: the exact partition reaches it, sfc's cut
 * reaches sfc_max. */
static void known(const char *name, int64_t n, const double *w, int nparts, double optimum, double sfc_max)
{
  lb_curve_result ex, sfc;
  int64_t *counts = malloc((size_t)nparts * sizeof *counts);
  double *load = malloc((size_t)nparts * sizeof *load), max = 0.0;
  CHECK(lb_curve_exact(MPI_COMM_SELF, n, w, nparts, &ex) == LB_OK);
  CHECK(lb_curve_sfc(MPI_COMM_SELF, n, w, nparts, &sfc) == LB_OK);
  check_partition(&ex, n, w);
  CHECK_MSG(lb_curve_max_load(&ex) == optimum, "%s: exact %g, optimum %g", name, lb_curve_max_load(&ex), optimum);
  CHECK_MSG(lb_curve_max_load(&sfc) == sfc_max, "%s: sfc %g, expected %g", name, lb_curve_max_load(&sfc), sfc_max);
  /* the serial chain partition is the same */
  CHECK(lb_curve_exact_chain(n, w, nparts, counts, load) == LB_OK);
  for (int q = 0; q < nparts; q++) {
    CHECK_EQ(counts[q], ex.counts[q]);
    max = fmax(max, load[q]);
  }
  CHECK_MSG(max == optimum, "%s: chain exact %g", name, max);
  lb_curve_result_free(&ex);
  lb_curve_result_free(&sfc);
  free(counts);
  free(load);
}

static void known_chains(void)
{
  /* sfc cuts {1,1}{1}{1,2}{1}: a part one whole task above {1,1}{1,1}{2}{1} */
  const double above[] = {1, 1, 1, 1, 2, 1};
  known("one task above", 6, above, 4, 2.0, 3.0);
  /* a task of 10 against a mean of 5: the optimum is that task alone */
  const double heavy[] = {1, 1, 10, 1, 1, 1};
  known("heavy task", 6, heavy, 3, 10.0, 10.0);
  const double heavy4[] = {1, 2, 9, 1, 1};
  known("heavy task, 4 parts", 5, heavy4, 4, 9.0, 9.0);
  /* 1000 equal tasks in 7 parts: ceil(1000 / 7) */
  double *ones = malloc(1000 * sizeof *ones);
  for (int k = 0; k < 1000; k++) ones[k] = 1.0;
  known("equal tasks", 1000, ones, 7, 143.0, 143.0);
  free(ones);
  /* more parts than tasks: empty parts, the heaviest task alone */
  const double few[] = {3, 5};
  known("more parts than tasks", 2, few, 4, 5.0, 5.0);
}

/* Integer weights 0..9 (sums exact in any order, so the backends' sums agree to the bit). */
static void random_chain(unsigned seed, int64_t n, double *w)
{
  srand(seed);
  for (int64_t k = 0; k < n; k++) w[k] = (double)(rand() % 10);
}

/* Small random chains: the exact bottleneck is the brute force's. */
static void against_brute_force(void)
{
  double w[9];
  for (unsigned seed = 1; seed <= 40; seed++) {
    const int64_t n = 3 + seed % 7;
    const int nparts = 1 + (int)(seed % 4);
    lb_curve_result ex;
    random_chain(seed, n, w);
    CHECK(lb_curve_exact(MPI_COMM_SELF, n, w, nparts, &ex) == LB_OK);
    CHECK_MSG(lb_curve_max_load(&ex) == brute_force(n, w, nparts, 0, 0), "seed %u: %g against %g", seed, lb_curve_max_load(&ex),
              brute_force(n, w, nparts, 0, 0));
    check_partition(&ex, n, w);
    lb_curve_result_free(&ex);
  }
}

/* HierSFC on one chain for every group count: G = 1 is the exact
 * partition, G = nparts sfc's, every G between them in quality; the same
 * on the MPI ranks when there is one per part. */
static void hier_chain(int64_t n, const double *w, int nparts)
{
  lb_curve_result ex, sfc, h, hw;
  CHECK(lb_curve_exact(MPI_COMM_SELF, n, w, nparts, &ex) == LB_OK);
  CHECK(lb_curve_sfc(MPI_COMM_SELF, n, w, nparts, &sfc) == LB_OK);
  const double opt = lb_curve_max_load(&ex), heur = lb_curve_max_load(&sfc);
  CHECK(opt <= heur);
  for (int G = 1; G <= nparts; G++) {
    CHECK(lb_curve_hier(MPI_COMM_SELF, n, w, nparts, G, &h) == LB_OK);
    check_partition(&h, n, w);
    if (G == 1) CHECK_MSG(same_cuts(&h, &ex), "one group is not the exact partition (%d parts)", nparts);
    if (G == nparts) CHECK_MSG(same_cuts(&h, &sfc), "one group per part is not sfc (%d parts)", nparts);
    CHECK_MSG(lb_curve_max_load(&h) >= opt && lb_curve_max_load(&h) <= heur, "%d groups: %g outside [%g, %g]", G, lb_curve_max_load(&h), opt, heur);
    if (nparts == size) {
      const int64_t first = n * rank / size, count = n * (rank + 1) / size - first;
      CHECK(lb_curve_hier(MPI_COMM_WORLD, count, w + first, nparts, G, &hw) == LB_OK);
      CHECK_MSG(same_cuts(&h, &hw), "%d groups: the MPI ranks cut otherwise than one process", G);
      for (int q = 0; q < nparts; q++) CHECK(h.part_load[q] == hw.part_load[q]);
      lb_curve_result_free(&hw);
    }
    lb_curve_result_free(&h);
  }
  lb_curve_result_free(&ex);
  lb_curve_result_free(&sfc);
}

static void hier_chains(void)
{
  const int64_t n = 5000;
  double *w = malloc((size_t)n * sizeof *w);
  for (unsigned seed = 1; seed <= 3; seed++) {
    random_chain(seed, n, w);
    hier_chain(n, w, size);
    hier_chain(n, w, 4);
    hier_chain(n, w, 16);
  }
  /* the chain where sfc is a task above, on this many ranks too */
  const double above[] = {1, 1, 1, 1, 2, 1};
  hier_chain(6, above, 4);
  hier_chain(6, above, size);
  /* every weight 0: cut by task count, as sfc's cut is */
  memset(w, 0, (size_t)n * sizeof *w);
  hier_chain(n, w, size);
  free(w);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  known_chains();
  against_brute_force();
  hier_chains();
  const int status = check_finish(MPI_COMM_WORLD);
  if (rank == 0) printf("test_exact: %d ranks, %d checks failed\n", size, check_failures);
  MPI_Finalize();
  return status;
}
