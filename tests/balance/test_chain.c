/* Chain mode of every registered method: on a weighted curve spread over P
 * parts (one part empty, uneven pieces), the MPI backend with P processes
 * and the virtual backend with the whole curve give the same cuts; the
 * total weight is conserved, every part's weight is within one cell of the
 * method's final load, and the method reaches its target, on the line and
 * on the ring of the parts.  A curve with
 * fewer cells than parts is cut as well.  Chain mode's sfc-shift and the
 * app's cell walk (lb_curve_shift) cut the same places when the measured
 * loads are the pieces' weights: one implementation; sfc's method cuts
 * where sfc's prefix sum does at a tie; the app's step (lb_chain_partition_on)
 * cuts as lb_chain_balance_on does, without sfc's reference. */

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "balance/lbchain.h"

static int rank, size;

#define TARGET 0.98

/* Integer weights (exact sums in any order) with a heavy box. */
static double *make_curve(int64_t n)
{
  double *w = malloc((size_t)n * sizeof *w);
  for (int64_t k = 0; k < n; k++) w[k] = 1 + (k * 7919) % 13 + (k >= n / 20 && k < n / 7 ? 40 : 0);
  return w;
}

/* Part q gets a share growing with q; part 1 gets nothing when P > 2. */
static void initial_counts(int64_t n, int nparts, int64_t *counts)
{
  int64_t total = 0, given = 0;
  for (int q = 0; q < nparts; q++) total += (nparts > 2 && q == 1) ? 0 : q + 1;
  for (int q = 0; q < nparts; q++) {
    counts[q] = (nparts > 2 && q == 1) ? 0 : n * (q + 1) / total;
    given += counts[q];
  }
  counts[nparts - 1] += n - given;
}

static void set_params(const lb_method *m, lb_params *p, lb_backend backend)
{
  lb_params_init(p, m);
  p->backend = backend;
  p->comm = MPI_COMM_WORLD;
  if (!(m->flags & LB_TERMINATES)) {
    p->target = TARGET;
    p->max_iters = 20000;
  }
}

static void check_chain(const lb_method *m, const lb_chain_result *r, const double *w, int64_t n)
{
  double total = 0.0, wmax = 0.0, sum = 0.0, mx = 0.0;
  int64_t cells = 0;
  int P = r->cut.nparts;
  for (int64_t k = 0; k < n; k++) total += w[k], wmax = w[k] > wmax ? w[k] : wmax;
  for (int q = 0; q < P; q++) {
    sum += r->cut.part_load[q];
    cells += r->cut.counts[q];
    mx = r->run.load[q] > mx ? r->run.load[q] : mx;
    CHECK_NEAR(r->cut.part_load[q], r->run.load[q], wmax * (1 + 1e-9));
  }
  CHECK(sum == total && cells == n);
  if (total / P >= 10 * wmax) CHECK(total / P / mx >= TARGET);
  if (check_failures) fprintf(stderr, "  (method %s, %d parts)\n", m->name, P);
}

/* On g, the line or the ring of the size parts (lb_chain_balance_on, as
 * the app's -lb_graph); a method that does not run on g must refuse it on
 * both backends alike. */
static void test_method(const lb_graph *g, const lb_method *m, int64_t n)
{
  double *w = make_curve(n);
  int64_t *counts = malloc((size_t)size * sizeof *counts), first = 0;
  lb_params p;
  lb_chain_result mpi, virt;
  lb_err e1, e2;
  initial_counts(n, size, counts);
  for (int q = 0; q < rank; q++) first += counts[q];
  set_params(m, &p, LB_BACKEND_MPI);
  e1 = lb_chain_balance_on(g, m, &p, counts[rank], w + first, NULL, &mpi);
  set_params(m, &p, LB_BACKEND_VIRTUAL);
  e2 = lb_chain_balance_on(g, m, &p, n, w, counts, &virt);
  if (e1 == LB_ERR_UNSUPPORTED && e2 == LB_ERR_UNSUPPORTED) {
    if (rank == 0) printf("%-20s %s: not supported (%s)\n", m->name, g->spec, lb_errmsg());
  } else if (CHECK_MSG(!e1 && !e2, "method %s on %s: %s", m->name, g->spec, lb_errmsg())) {
    int same = 1;
    for (int q = 0; q <= size; q++) same = same && mpi.cut.cuts[q] == virt.cut.cuts[q];
    CHECK(same);
    /* the app's step: the same partition and bound without sfc's reference */
    lb_chain_result part;
    set_params(m, &p, LB_BACKEND_MPI);
    if (CHECK(lb_chain_partition_on(g, m, &p, counts[rank], w + first, NULL, &part) == LB_OK)) {
      for (int q = 0; q <= size; q++) same = same && part.cut.cuts[q] == mpi.cut.cuts[q];
      CHECK(same && part.migrated_cells == mpi.migrated_cells && part.sfc_cut_distance == -1 && !part.sfc.counts);
      CHECK(part.optimal_max_part_load == mpi.optimal_max_part_load || (isnan(part.optimal_max_part_load) && isnan(mpi.optimal_max_part_load)));
      lb_chain_result_free(&part);
    }
    /* MPI counts each part's from its own offset, the virtual backend from every part's counts */
    CHECK_EQ(mpi.migrated_cells, virt.migrated_cells);
    check_chain(m, &virt, w, n);
    double mx0 = 0.0;
    for (int q = 0; q < size; q++) mx0 = virt.run.load0[q] > mx0 ? virt.run.load0[q] : mx0;
    if (rank == 0)
      printf("%-20s %s %5lld cells: max/avg %.4f -> %.4f, migrated %lld cells, %d iterations, %lld from sfc's cuts\n",
             m->name, g->spec, (long long)n, mx0 * size / virt.cut.total, virt.max_over_avg,
             (long long)virt.migrated_cells, virt.run.iterations, (long long)virt.sfc_cut_distance);
    lb_chain_result_free(&mpi);
    lb_chain_result_free(&virt);
  }
  free(counts);
  free(w);
}

/* sfc and one sfc-shift iteration on the loads of Niemoeller et al. 2020's example
 * (s_j = 0.25, 0.45, 0.25): the flow across edge (j-1, j) is s_j / penalty. */
static void test_shift_flows(void)
{
  const double load[4] = {1.25, 1.2, 0.8, 0.75};
  const double want_sfc[3] = {0.25, 0.45, 0.25}, want_shift[3] = {0.2, 0.36, 0.2};
  const double after_shift[4] = {1.05, 1.04, 0.96, 0.95};
  lb_graph *g = NULL;
  lb_params p;
  lb_result res;
  CHECK(lb_graph_create("line:4", &g) == LB_OK);
  lb_params_init(&p, lb_method_find("sfc"));
  CHECK(lb_balance(g, lb_method_find("sfc"), &p, load, &res) == LB_OK);
  for (int k = 0; k < 3; k++) CHECK_NEAR(res.flow[k], want_sfc[k], 1e-12);
  for (int r = 0; r < 4; r++) CHECK_NEAR(res.load[r], 1.0, 1e-12);
  lb_result_free(&res);
  lb_params_init(&p, lb_method_find("sfc-shift"));
  p.max_iters = 1;
  CHECK(lb_balance(g, lb_method_find("sfc-shift"), &p, load, &res) == LB_OK);
  for (int k = 0; k < 3; k++) CHECK_NEAR(res.flow[k], want_shift[k], 1e-12);
  for (int r = 0; r < 4; r++) CHECK_NEAR(res.load[r], after_shift[r], 1e-12);
  lb_result_free(&res);
  lb_graph_destroy(&g);
  CHECK(lb_graph_create("mesh2d:2x2", &g) == LB_OK);
  lb_params_init(&p, lb_method_find("sfc"));
  CHECK(lb_balance(g, lb_method_find("sfc"), &p, load, &res) == LB_ERR_UNSUPPORTED);
  lb_graph_destroy(&g);
}

/* One shift of lbbench's chain mode against lb_curve_shift with the parts'
 * weights as measured loads, on 7 uneven parts of a curve with real
 * weights (no ties at the cut midpoints). */
static void test_shift_same_code(void)
{
  enum { N = 3000, P = 7 };
  static double w[N];
  int64_t counts[P];
  double pw[P];
  unsigned state = 5;
  lb_params p;
  lb_chain_result chain;
  lb_curve_result walk;
  const lb_method *m = lb_method_find("sfc-shift");
  for (int k = 0; k < N; k++) {
    state = state * 1664525u + 1013904223u;
    w[k] = 0.5 + (state >> 8) / 16777216.0 + (k > 2000 ? 3.0 : 0.0);
  }
  initial_counts(N, P, counts);
  lb_params_init(&p, m);
  p.backend = LB_BACKEND_VIRTUAL;
  p.max_iters = 1;
  p.opt[0] = 1.5;
  CHECK(lb_chain_balance(m, &p, N, w, P, counts, &chain) == LB_OK);
  CHECK(lb_curve_part_loads(MPI_COMM_SELF, N, w, P, counts, pw) == LB_OK);
  CHECK(lb_curve_shift(MPI_COMM_SELF, N, w, P, counts, pw, 1.5, &walk) == LB_OK);
  for (int q = 0; q <= P; q++) CHECK_EQ(chain.cut.cuts[q], walk.cuts[q]);
  CHECK(chain.migrated_cells > 0);
  lb_chain_result_free(&chain);
  lb_curve_result_free(&walk);
}

/* sfc in chain mode cuts where sfc's own prefix sum does at a tie: 793
 * cells of weight 1 split 408 | 385 (the app's reactive-transport run on
 * 2 ranks, cycle 5) have their mean 396.5 at the midpoint of cell 396,
 * which goes to part 1 (a cell whose midpoint is at a bound starts the
 * next part). The method's targets must be exactly 396.5 for that: the
 * walk on doubles made part 0's one ulp more and kept cell 396 there. */
static void test_sfc_tie(void)
{
  enum { N = 793 };
  static double w[N];
  const int64_t counts[2] = {408, 385};
  lb_params p;
  lb_chain_result res;
  const lb_method *m = lb_method_find("sfc");
  for (int k = 0; k < N; k++) w[k] = 1.0;
  set_params(m, &p, LB_BACKEND_VIRTUAL);
  CHECK(lb_chain_balance(m, &p, N, w, 2, counts, &res) == LB_OK);
  CHECK_EQ(res.cut.cuts[1], 396);
  CHECK_EQ(res.sfc_cut_distance, 0);
  lb_chain_result_free(&res);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  test_shift_flows();
  test_shift_same_code();
  test_sfc_tie();
  for (int kind = 0; kind < 2; kind++) {
    char spec[32];
    lb_graph *g = NULL;
    snprintf(spec, sizeof spec, "%s:%d", kind ? "ring" : "line", size);
    CHECK(lb_graph_create(spec, &g) == LB_OK);
    for (int i = 0; g && i < lb_method_count(); i++) {
      test_method(g, lb_method_get(i), 3000);
      test_method(g, lb_method_get(i), 3); /* fewer cells than parts at 4 ranks */
    }
    lb_graph_destroy(&g);
  }
  const int status = check_finish(MPI_COMM_WORLD);
  if (rank == 0) printf("test_chain: %d ranks, %d checks failed\n", size, check_failures);
  MPI_Finalize();
  return status;
}
