/* The load trace's version 2 in the library alone: a record written with
 * the encoders reads back field for field, and lb_trace_refine turns
 * every cell into its 2^(dim k) children in curve order, each with
 * 2^-(dim k) of the parent's weight and phase weights exactly (a power of
 * two scales without rounding, so their exact sum is the parent's, and
 * their pairwise sum, family by family as refinement builds them, is the
 * parent's to the bit: ==, not within a tolerance; a plain running sum
 * rounds, 3 w/4 needs two more bits than w), which tile the parent's
 * range of the curve; a version 1 record (no
 * positions) and a refinement past p4est's level are refused.
 *   test_loadtrace DIR  (a writable directory for the trace file) */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "balance/loadtrace.h"

enum { K = 2, P = 2 };

/* A record of one 2^dim-cell tree at level 1 (one child refined to level
 * 2) and a second tree of one level 0 cell, with weights that no power
 * of two divides evenly in decimal. */
static int make(int dim, lb_load_trace *t)
{
  const int L = LB_TRACE_MAXLEVEL(dim), m = 1 << dim;
  const int64_t N = (m - 1) + m + 1;
  memset(t, 0, sizeof *t);
  t->version = 2, t->dim = dim, t->cycle = 7, t->nranks = P, t->weights = 4, t->ntypes = 2, t->flags = 1, t->nphases = K, t->ncells = N;
  strcpy(t->phase_name[0], "pressure");
  strcpy(t->phase_name[1], "transport");
  t->cost[0] = 0.25, t->cost[1] = 1.0 / 3;
  t->first = malloc(P * sizeof *t->first), t->time = malloc(P * sizeof *t->time), t->predicted = malloc(P * sizeof *t->predicted);
  t->w = malloc(N * sizeof *t->w), t->type = malloc(N), t->x = malloc(N * dim * sizeof *t->x), t->tree = malloc(N * sizeof *t->tree);
  t->level = malloc(N), t->pos = malloc(N * dim * sizeof *t->pos), t->pw = malloc(N * K * sizeof *t->pw);
  if (!t->first || !t->time || !t->predicted || !t->w || !t->type || !t->x || !t->tree || !t->level || !t->pos || !t->pw) return 1;
  t->first[0] = 0, t->first[1] = 3;
  t->time[0] = 0.5, t->time[1] = 0.7, t->predicted[0] = 0.9, t->predicted[1] = 1.1;
  int64_t i = 0;
  /* tree 0: child 0 of the root refined once more, children 1.. at level 1 */
  for (int c = 0; c < 2 * m - 1; c++, i++) {
    const int fine = c < m, level = fine ? 2 : 1, child = fine ? c : c - m + 1;
    t->tree[i] = 0, t->level[i] = (unsigned char)level;
    for (int d = 0; d < dim; d++) t->pos[i * dim + d] = ((child >> d) & 1) << (L - level);
  }
  t->tree[i] = 1, t->level[i] = 0;
  for (int d = 0; d < dim; d++) t->pos[i * dim + d] = 0;
  for (i = 0; i < N; i++) {
    t->w[i] = 0.1 + (double)i / 7;
    t->type[i] = (unsigned char)(i % 2);
    for (int d = 0; d < dim; d++) t->x[i * dim + d] = (float)(0.5 * i + d);
    for (int k = 0; k < K; k++) t->pw[k * N + i] = 1e-3 * (i + 1) / (k + 3);
  }
  return 0;
}

/* t written as a version 2 file with the app's encoders, read back whole. */
static void roundtrip(const char *dir, const lb_load_trace *t)
{
  char path[4096];
  lb_load_trace r;
  const int64_t N = t->ncells, cb = LB_TRACE_CELL_BYTES(t->dim, K), bytes = lb_trace_record_bytes(t->dim, K, P, N);
  unsigned char *buf = calloc((size_t)bytes + LB_TRACE_FILE_BYTES, 1);
  snprintf(path, sizeof path, "%s/loadtrace%dd.trace", dir, t->dim);
  if (!CHECK(buf)) return;
  lb_trace_file_header(t->dim, 0, buf);
  lb_trace_cycle_header(t, buf + LB_TRACE_FILE_BYTES);
  lb_trace_rank_arrays(P, t->first, t->time, t->predicted, buf + LB_TRACE_FILE_BYTES + LB_TRACE_CYCLE_BYTES);
  for (int64_t i = 0; i < N; i++) {
    double pw[K];
    lb_trace_cell_data c = {t->w[i], t->type[i], {0, 0, 0}, t->tree[i], t->level[i], {0, 0, 0}, pw};
    for (int d = 0; d < t->dim; d++) c.x[d] = t->x[i * t->dim + d], c.pos[d] = t->pos[i * t->dim + d];
    for (int k = 0; k < K; k++) pw[k] = t->pw[k * N + i];
    lb_trace_cell(t->dim, K, &c, buf + LB_TRACE_FILE_BYTES + LB_TRACE_CYCLE_BYTES + 24 * P + i * cb);
  }
  FILE *f = fopen(path, "wb");
  CHECK(f && fwrite(buf, 1, (size_t)bytes + LB_TRACE_FILE_BYTES, f) == (size_t)bytes + LB_TRACE_FILE_BYTES && !fclose(f));
  free(buf);
  if (!CHECK_MSG(lb_trace_read(path, -1, &r) == LB_OK, "%s", lb_errmsg())) return;
  CHECK_EQ(r.version, 2), CHECK_EQ(r.cycle, t->cycle), CHECK_EQ(r.nphases, K), CHECK_EQ(r.ncells, N), CHECK_EQ(r.weights, 4);
  CHECK(!strcmp(r.phase_name[0], "pressure") && !strcmp(r.phase_name[1], "transport"));
  CHECK(!memcmp(r.first, t->first, P * sizeof *r.first) && !memcmp(r.time, t->time, P * sizeof *r.time));
  CHECK(!memcmp(r.w, t->w, N * sizeof *r.w) && !memcmp(r.type, t->type, N) && !memcmp(r.x, t->x, N * t->dim * sizeof *r.x));
  CHECK(!memcmp(r.tree, t->tree, N * sizeof *r.tree) && !memcmp(r.level, t->level, N) && !memcmp(r.pos, t->pos, N * t->dim * sizeof *r.pos));
  CHECK(!memcmp(r.pw, t->pw, N * K * sizeof *r.pw));
  lb_trace_free(&r);
}

/* The pairwise sum of v[0..n), n a power of two. */
static double pairwise(const double *v, int64_t n, int64_t stride)
{
  return n == 1 ? v[0] : pairwise(v, n / 2, stride) + pairwise(v + n / 2 * stride, n / 2, stride);
}

/* Refine t k times and check every family against its parent. */
static void refine(const lb_load_trace *t0, int k)
{
  lb_load_trace t;
  const int dim = t0->dim, L = LB_TRACE_MAXLEVEL(dim);
  const int64_t N = t0->ncells, m = (int64_t)1 << (dim * k);
  if (make(dim, &t)) {
    CHECK(!"out of memory");
    return;
  }
  if (!CHECK_MSG(lb_trace_refine(&t, k) == LB_OK, "%s", lb_errmsg())) return;
  CHECK_EQ(t.ncells, N * m);
  CHECK_EQ(t.first[1], t0->first[1] * m);
  int families = 0;
  for (int64_t i = 0; i < N; i++) {
    const double share = 1.0 / (double)m;
    const double sum = pairwise(t.w + i * m, m, 1), psum[K] = {pairwise(t.pw + i * m, m, 1), pairwise(t.pw + t.ncells + i * m, m, 1)};
    int ok = 1;
    /* the children tile the parent's range of the curve, in order */
    uint64_t z = lb_trace_morton(dim, t0->pos + i * dim);
    const uint64_t step = (uint64_t)1 << (dim * (L - t0->level[i] - k));
    for (int64_t j = i * m; j < (i + 1) * m; j++, z += step) {
      ok = ok && t.w[j] == t0->w[i] * share && t.pw[j] == t0->pw[i] * share && t.pw[t.ncells + j] == t0->pw[N + i] * share;
      ok = ok && t.tree[j] == t0->tree[i] && t.level[j] == t0->level[i] + k && t.type[j] == t0->type[i] && lb_trace_morton(dim, t.pos + j * dim) == z;
    }
    CHECK_MSG(ok, "%dD -refine %d: the children of cell %lld are not its children in curve order with its weights' share", dim, k, (long long)i);
    families += CHECK_MSG(sum == t0->w[i] && psum[0] == t0->pw[i] && psum[1] == t0->pw[N + i], "%dD -refine %d: cell %lld weighs %.17g, its children %.17g",
                          dim, k, (long long)i, t0->w[i], sum);
  }
  CHECK_EQ(families, N);
  lb_trace_free(&t);
}

/* Refine t k times without load types, centres and phase weights (what a
 * replay that reads none drops first): the estimate counts only what t
 * holds, nothing dropped comes back, and what is refined equals the full
 * refinement's. */
static void refine_lean(int dim, int k)
{
  lb_load_trace full, lean;
  if (!CHECK(!make(dim, &full) && !make(dim, &lean))) return;
  const int64_t N = lean.ncells, M = N << (dim * k);
  const int64_t before = lb_trace_refine_bytes(&lean, k);
  free(lean.type), free(lean.x), free(lean.pw);
  lean.type = NULL, lean.x = NULL, lean.pw = NULL;
  /* weight, level, tree and position, old and new cells together */
  CHECK_EQ(lb_trace_refine_bytes(&lean, k), (8 + 1 + 4 + 4 * dim) * (N + M));
  CHECK(lb_trace_refine_bytes(&lean, k) < before);
  if (CHECK_MSG(lb_trace_refine(&full, k) == LB_OK && lb_trace_refine(&lean, k) == LB_OK, "%s", lb_errmsg())) {
    CHECK_EQ(lean.ncells, M);
    CHECK(!lean.type && !lean.x && !lean.pw);
    CHECK(!memcmp(lean.w, full.w, M * sizeof *lean.w) && !memcmp(lean.level, full.level, M));
    CHECK(!memcmp(lean.tree, full.tree, M * sizeof *lean.tree) && !memcmp(lean.pos, full.pos, M * dim * sizeof *lean.pos));
    CHECK(!memcmp(lean.first, full.first, P * sizeof *lean.first));
  }
  lb_trace_free(&full);
  lb_trace_free(&lean);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  for (int dim = 2; dim <= 3; dim++) {
    lb_load_trace t;
    if (!CHECK(!make(dim, &t))) break;
    if (argc > 1) roundtrip(argv[1], &t);
    refine(&t, 1);
    refine(&t, 2);
    refine_lean(dim, 2);
    /* past p4est's largest level */
    CHECK(lb_trace_refine(&t, LB_TRACE_MAXLEVEL(dim)) == LB_ERR_ARG && strstr(lb_errmsg(), "-refine"));
    /* version 1: no positions */
    free(t.pos);
    t.pos = NULL;
    CHECK(lb_trace_refine(&t, 1) == LB_ERR_ARG && strstr(lb_errmsg(), "no cell positions"));
    lb_trace_free(&t);
  }
  if (!check_failures) printf("loadtrace check passed: version 2 round trip, -refine 1 and 2 conserve every cell's weights in 2D and 3D, a lean record refines alike\n");
  MPI_Finalize();
  return check_failures != 0;
}
