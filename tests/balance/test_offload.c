/* The offload plan (lboffload.h) on constructed loads with known answers,
 * on the MPI backend (one rank per process) and the virtual one (every
 * rank in this process), which must agree item for item; the items
 * conserved, each computed once and returned to its owner; bad costs
 * refused on every rank. */
#include "balance/lboffload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failed;

#define CHECK(cond, ...) \
  do { \
    if (!(cond)) { \
      failed++; \
      printf("FAILED: " __VA_ARGS__); \
      printf("\n"); \
    } \
  } while (0)

/* A case: P ranks, rank r's items and costs (in ns) from a generator. */
typedef struct {
  const char *name;
  int P;
  void (*make)(int P, int r, int64_t *n, double *cost); /* cost NULL: the count only */
  int64_t max_after; /* the known largest load after, in quanta; -1: unknown, checked by the bound */
  int64_t moved;     /* the known number of items moved; -1: unknown */
} test_case;

static void one_holds_all(int P, int r, int64_t *n, double *cost)
{
  *n = r == 0 ? 4 * P : 0;
  for (int64_t i = 0; cost && i < *n; i++) cost[i] = 1e-9 * 10;
}

static void equal(int P, int r, int64_t *n, double *cost)
{
  (void)P;
  *n = 5 + r % 2 * 5;
  for (int64_t i = 0; cost && i < *n; i++) cost[i] = 1e-9 * (r % 2 ? 6 : 12);
}

/* 9 on rank 0 in three items of 3, nothing elsewhere (P = 2): targets 5
 * and 4; one item goes, 6 | 3 is the best whole items allow. */
static void whole_items(int P, int r, int64_t *n, double *cost)
{
  (void)P;
  *n = r == 0 ? 3 : 0;
  for (int64_t i = 0; cost && i < *n; i++) cost[i] = 3e-9;
}

/* Rank 1 has no items; the others a front of dear items among cheap ones. */
static void front(int P, int r, int64_t *n, double *cost)
{
  *n = r == 1 ? 0 : 40 + 7 * r;
  for (int64_t i = 0; cost && i < *n; i++) {
    const unsigned h = (unsigned)(r * 7919 + i * 104729) % 1000;
    cost[i] = 1e-9 * (r == P - 1 && i % 3 == 0 ? 500 + h : 1 + h % 20);
  }
}

static const test_case cases[] = {
  {"one rank holds everything", 0, one_holds_all, 40, -1},
  {"equal loads", 0, equal, 60, 0},
  {"whole items", 2, whole_items, 6, 1},
  {"a front, a rank with no items", 0, front, -1, -1},
};

/* Every rank's items of a case on P ranks: counts n[P], costs in order. */
static double *make_all(const test_case *c, int P, int64_t *n)
{
  int64_t total = 0;
  double *cost;
  for (int r = 0; r < P; r++) {
    c->make(P, r, &n[r], NULL);
    total += n[r];
  }
  cost = malloc(((size_t)total + 1) * sizeof *cost);
  for (int r = 0, off = 0; r < P; off += (int)n[r], r++) c->make(P, r, &n[r], cost + off);
  return cost;
}

/* The items' way there and back on plan o: item = (owner, index), result
 * = (owner, index, rank that computed it); every local rank's sent items
 * must come back as its own, computed by the rank the plan named. */
static void round_trip(lb_offload *o, int nlocal, const char *name)
{
  int64_t ns = 0, nr = 0, *send, *recv, *res, *back;
  for (int j = 0; j < nlocal; j++) {
    lb_offload_info in;
    lb_offload_info_get(o, j, &in);
    ns += in.nsend;
    nr += in.nrecv;
  }
  send = malloc(2 * ((size_t)ns + 1) * sizeof *send);
  recv = malloc(2 * ((size_t)nr + 1) * sizeof *recv);
  res = malloc(3 * ((size_t)nr + 1) * sizeof *res);
  back = malloc(3 * ((size_t)ns + 1) * sizeof *back);
  for (int j = 0, k = 0; j < nlocal; j++) {
    lb_offload_info in;
    lb_offload_info_get(o, j, &in);
    for (int64_t i = 0; i < in.nsend; i++, k++) {
      send[2 * k] = in.rank;
      send[2 * k + 1] = in.send[i];
    }
  }
  CHECK(lb_offload_forward_begin(o, 2 * sizeof(int64_t), send, recv) == LB_OK, "%s: forward: %s", name, lb_errmsg());
  CHECK(lb_offload_forward_end(o) == LB_OK, "%s: forward end", name);
  for (int j = 0, k = 0; j < nlocal; j++) {
    lb_offload_info in;
    lb_offload_info_get(o, j, &in);
    for (int64_t i = 0; i < in.nrecv; i++, k++) {
      CHECK(recv[2 * k] == in.recv_from[i], "%s: rank %d's item %lld came from %lld, the plan says %d", name, in.rank, (long long)i,
            (long long)recv[2 * k], in.recv_from[i]);
      res[3 * k] = recv[2 * k];
      res[3 * k + 1] = recv[2 * k + 1];
      res[3 * k + 2] = in.rank;
    }
  }
  CHECK(lb_offload_backward_begin(o, 3 * sizeof(int64_t), res, back) == LB_OK, "%s: backward: %s", name, lb_errmsg());
  CHECK(lb_offload_backward_end(o) == LB_OK, "%s: backward end", name);
  for (int j = 0, k = 0; j < nlocal; j++) {
    lb_offload_info in;
    lb_offload_info_get(o, j, &in);
    for (int64_t i = 0; i < in.nsend; i++, k++)
      CHECK(back[3 * k] == in.rank && back[3 * k + 1] == in.send[i] && back[3 * k + 2] == in.send_to[i],
            "%s: rank %d's sent item %lld came back as (%lld, %lld) from %lld", name, in.rank, (long long)in.send[i], (long long)back[3 * k],
            (long long)back[3 * k + 1], (long long)back[3 * k + 2]);
  }
  free(send);
  free(recv);
  free(res);
  free(back);
}

/* The checks every plan passes: loads conserved, no rank above the
 * larger of its load before and its target plus its dearest item, the
 * known answers, and the round trip. */
static void check_plan(lb_offload *o, const test_case *c, int nlocal, const int64_t *n, const double *cost)
{
  lb_offload_stats st;
  int64_t sum_after = 0, maxq = 0;
  CHECK(lb_offload_stats_get(o, &st) == LB_OK, "%s: stats", c->name);
  for (int j = 0, off = 0; j < nlocal; off += (int)n[j], j++) {
    lb_offload_info in;
    lb_offload_info_get(o, j, &in);
    sum_after += in.load_after;
    for (int64_t i = 0; i < n[j]; i++) maxq = fmax(maxq, llround(cost[off + i] / 1e-9));
  }
  if (nlocal > 1) {
    const int64_t target = st.total / st.nranks + 1;
    CHECK(sum_after == st.total, "%s: loads after sum to %lld, before %lld", c->name, (long long)sum_after, (long long)st.total);
    for (int j = 0; j < nlocal; j++) {
      lb_offload_info in;
      lb_offload_info_get(o, j, &in);
      CHECK(in.load_after <= (in.load_before > target + maxq ? in.load_before : target + maxq),
            "%s: rank %d holds %lld after, target %lld, dearest item %lld", c->name, j, (long long)in.load_after, (long long)target, (long long)maxq);
    }
  }
  CHECK(st.max_after <= st.max_before, "%s: max %lld after, %lld before", c->name, (long long)st.max_after, (long long)st.max_before);
  if (c->max_after >= 0) CHECK(st.max_after == c->max_after, "%s: max after %lld, known %lld", c->name, (long long)st.max_after, (long long)c->max_after);
  if (c->moved >= 0) CHECK(st.moved == c->moved, "%s: %lld items moved, known %lld", c->name, (long long)st.moved, (long long)c->moved);
  round_trip(o, nlocal, c->name);
}

int main(int argc, char **argv)
{
  int size, rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const test_case *c = &cases[k];
    const int P = c->P ? c->P : (size > 1 ? size : 8);
    int64_t *n = malloc((size_t)P * sizeof *n);
    double *cost;
    lb_offload *v, *m = NULL;
    if (size > 1 && P != size) {
      free(n);
      continue;
    }
    cost = make_all(c, P, n);
    /* the virtual backend: every rank here */
    CHECK(lb_offload_plan(MPI_COMM_SELF, P, n, cost, 1e-9, &v) == LB_OK, "%s: virtual plan: %s", c->name, lb_errmsg());
    if (rank == 0) check_plan(v, c, P, n, cost);
    if (size > 1) {
      /* MPI: this rank's items only; the same plan for it */
      int64_t off = 0;
      lb_offload_info a, b;
      for (int r = 0; r < rank; r++) off += n[r];
      CHECK(lb_offload_plan(MPI_COMM_WORLD, 1, &n[rank], cost + off, 1e-9, &m) == LB_OK, "%s: MPI plan: %s", c->name, lb_errmsg());
      check_plan(m, c, 1, &n[rank], cost + off);
      lb_offload_info_get(v, rank, &a);
      lb_offload_info_get(m, 0, &b);
      CHECK(a.nsend == b.nsend && a.nrecv == b.nrecv && a.load_after == b.load_after, "%s: rank %d: virtual sends %lld, receives %lld, MPI %lld, %lld",
            c->name, rank, (long long)a.nsend, (long long)a.nrecv, (long long)b.nsend, (long long)b.nrecv);
      for (int64_t i = 0; i < a.nsend && a.nsend == b.nsend; i++)
        CHECK(a.send[i] == b.send[i] && a.send_to[i] == b.send_to[i], "%s: rank %d's sent item %lld differs between the backends", c->name, rank,
              (long long)i);
      for (int64_t i = 0; i < a.nrecv && a.nrecv == b.nrecv; i++)
        CHECK(a.recv_from[i] == b.recv_from[i], "%s: rank %d's received item %lld differs between the backends", c->name, rank, (long long)i);
      lb_offload_destroy(&m);
    }
    if (rank == 0) {
      lb_offload_stats st;
      lb_offload_stats_get(v, &st);
      printf("%s, %d ranks: max %lld -> %lld quanta (mean %.1f), %lld of %lld items moved in %lld messages\n", c->name, P, (long long)st.max_before,
             (long long)st.max_after, (double)st.total / P, (long long)st.moved, (long long)st.items, (long long)st.messages);
    }
    lb_offload_destroy(&v);
    free(cost);
    free(n);
  }
  {
    /* a NaN on the last rank: every rank refused, none left waiting */
    double c[2] = {1e-6, rank == size - 1 ? NAN : 2e-6};
    int64_t n2 = 2;
    lb_offload *o;
    const lb_err e = lb_offload_plan(MPI_COMM_WORLD, 1, &n2, c, 1e-9, &o);
    CHECK(e == LB_ERR_LOAD && strstr(lb_errmsg(), "not finite"), "a NaN cost: code %d, '%s'", (int)e, lb_errmsg());
    CHECK(lb_offload_plan(MPI_COMM_WORLD, 1, &n2, c, 0, &o) == LB_ERR_ARG, "a zero quantum accepted");
  }
  MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("%d checks failed\n", failed);
  MPI_Finalize();
  return failed != 0;
}
