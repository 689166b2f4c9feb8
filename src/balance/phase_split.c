/* The multi-constraint split of the curve behind lb_phase_choose
 * (lbphase.h): the cuts of least sum over phases of the largest part load,
 * found on the curve coarsened to buckets.  For caps on every phase's part
 * load, taking cells greedily until a cap would be passed needs the fewest
 * parts (a longer first part never forces more parts after it), so the
 * caps a partition into nparts parts can meet are found by that greedy
 * walk, and the search lowers the sum of the caps: each phase's cap as far
 * as the others allow, then trades between the two largest phases (raise
 * one cap by a step, lower the other as far as it then goes). */
#include "balance/lbphase.h"
#include "balance/impl/lbcall.h"
#include "balance/impl/phase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Buckets per part of the coarsened curve: a cap then moves a cut by about
 * 1/64 of a part, finer than the 2% steps of the search, while the walk
 * stays 64 P buckets long. */
#define SPLIT_BUCKETS_PER_PART 64

/* The start caps, a partition's phase maxima on cells, may be missed at
 * bucket granularity by up to a bucket's load, about 1/64 of a part: 200
 * raises by 2% (a factor 52) reach any start within the buckets' reach,
 * each small enough to keep the start's shape. */
#define SPLIT_RAISE_ROUNDS 200
#define SPLIT_RAISE 1.02

/* A cap's bisection stops within this fraction of the cap (30 halvings
 * at most): finer than a bucket's share of a part. */
#define SPLIT_CAP_TOL 1e-6
#define SPLIT_CAP_HALVINGS 30

/* Rounds of the search (lower each cap, then trade), and the least
 * relative fall of the caps' sum that counts as progress. */
#define SPLIT_ROUNDS 20
#define SPLIT_PROGRESS 1e-9

/* Buckets of the whole curve, the same on every rank: cells[i] cells with
 * load[i * K + k] in phase k. */
typedef struct {
  int K;
  int64_t nb;
  double *cells, *load;
} buckets;

/* Every process's piece in up to per_rank contiguous buckets, gathered. */
static lb_err gather(MPI_Comm comm, int64_t n, int K, const double *const *w, int per_rank, buckets *b)
{
  const int64_t nl = n < per_rank ? n : per_rank;
  const int stride = K + 1;
  int size, mine = (int)(nl * stride), *cnt, *dis;
  double *local;

  MPI_Comm_size(comm, &size);
  local = malloc(sizeof(double) * ((size_t)mine + 1));
  cnt = malloc(sizeof(int) * 2 * (size_t)size);
  if (!local || !cnt) {
    free(local);
    free(cnt);
    return lb_error(LB_ERR_MEM, "phase model: out of memory for buckets");
  }
  dis = cnt + size;
  for (int64_t i = 0; i < nl; i++) {
    const int64_t lo = n * i / nl, hi = n * (i + 1) / nl;
    double *q = local + i * stride;
    q[0] = (double)(hi - lo);
    for (int k = 0; k < K; k++) {
      q[1 + k] = 0;
      for (int64_t c = lo; c < hi; c++) q[1 + k] += w[k][c];
    }
  }
  LB_MPI(MPI_Allgather(&mine, 1, MPI_INT, cnt, 1, MPI_INT, comm));
  b->nb = 0;
  for (int r = 0; r < size; r++) {
    dis[r] = (int)(b->nb * stride);
    b->nb += cnt[r] / stride;
  }
  b->K = K;
  b->cells = malloc(sizeof(double) * ((size_t)b->nb * stride + 1));
  if (!b->cells) {
    free(local);
    free(cnt);
    return lb_error(LB_ERR_MEM, "phase model: out of memory for %lld buckets", (long long)b->nb);
  }
  LB_MPI(MPI_Allgatherv(local, mine, MPI_DOUBLE, b->cells, cnt, dis, MPI_DOUBLE, comm));
  free(local);
  free(cnt);
  /* split the rows: cells first, loads after */
  b->load = malloc(sizeof(double) * ((size_t)b->nb * K + 1));
  if (!b->load) return lb_error(LB_ERR_MEM, "phase model: out of memory for %lld buckets", (long long)b->nb);
  for (int64_t i = 0; i < b->nb; i++) {
    memcpy(b->load + i * K, b->cells + i * stride + 1, sizeof(double) * K);
    b->cells[i] = b->cells[i * stride];
  }
  return LB_OK;
}

/* The parts the greedy walk needs under caps (more than limit: limit + 1;
 * a bucket above a cap alone: limit + 1), and where each part ends (the
 * bucket after its last; NULL: not wanted). */
static int64_t walk(const buckets *b, const double *caps, int64_t limit, int64_t *ends)
{
  const int K = b->K;
  double cur[LB_PHASE_SPLIT_MAX_PHASES] = {0};
  int64_t parts = 1;

  for (int64_t i = 0; i < b->nb; i++) {
    const double *l = b->load + i * K;
    int over = 0, empty = 1;
    for (int k = 0; k < K; k++) {
      over |= cur[k] + l[k] > caps[k];
      empty &= cur[k] == 0;
    }
    if (over) {
      if (empty) return limit + 1;
      if (ends && parts <= limit) ends[parts - 1] = i;
      if (++parts > limit) return limit + 1;
      memset(cur, 0, sizeof(double) * K);
      for (int k = 0; k < K; k++)
        if (l[k] > caps[k]) return limit + 1;
    }
    for (int k = 0; k < K; k++) cur[k] += l[k];
  }
  if (ends) ends[parts - 1] = b->nb;
  return parts;
}

/* Lower caps[k] as far as nparts parts still meet the caps (bisection
 * between lo and the feasible caps[k]). */
static void lower(const buckets *b, double *caps, int k, double lo, int64_t nparts)
{
  double hi = caps[k];
  for (int it = 0; it < SPLIT_CAP_HALVINGS && hi - lo > SPLIT_CAP_TOL * hi; it++) {
    caps[k] = 0.5 * (lo + hi);
    if (walk(b, caps, nparts, NULL) <= nparts) hi = caps[k];
    else lo = caps[k];
  }
  caps[k] = hi;
}

static double sum(int K, const double *x)
{
  double s = 0;
  for (int k = 0; k < K; k++) s += x[k];
  return s;
}

/* The caps of least sum the search finds from the feasible caps given. */
static void search(const buckets *b, double *caps, const double *lo, int64_t nparts)
{
  static const double step[] = {0.02, 0.05, 0.1, 0.2, 0.4};
  const int K = b->K;
  double trial[LB_PHASE_SPLIT_MAX_PHASES];
  int big[2] = {0, K > 1 ? 1 : 0};

  /* the two phases of the largest caps trade with each other */
  for (int k = 0; k < K; k++)
    if (caps[k] > caps[big[0]]) big[0] = k;
  big[1] = big[0] == 0 && K > 1 ? 1 : 0;
  for (int k = 0; k < K; k++)
    if (k != big[0] && caps[k] > caps[big[1]]) big[1] = k;
  for (int round = 0; round < SPLIT_ROUNDS; round++) {
    const double before = sum(K, caps);
    for (int k = 0; k < K; k++) lower(b, caps, k, lo[k], nparts);
    for (int d = 0; d < 2 && K > 1; d++) {
      const int up = big[d], down = big[1 - d];
      for (size_t s = 0; s < sizeof step / sizeof *step; s++) {
        memcpy(trial, caps, sizeof(double) * K);
        trial[up] *= 1 + step[s];
        lower(b, trial, down, lo[down], nparts);
        if (sum(K, trial) < sum(K, caps) * (1 - LB_PHASE_BETTER)) memcpy(caps, trial, sizeof(double) * K);
      }
    }
    if (sum(K, caps) >= before * (1 - SPLIT_PROGRESS)) break;
  }
}

/* The greedy walk's parts under caps as cells per part, nparts of them:
 * parts the walk does not need split the part of most buckets in two. */
static lb_err counts_of(const buckets *b, const double *caps, int64_t nparts, int64_t *counts)
{
  int64_t *ends = malloc(sizeof(int64_t) * (size_t)(nparts + 1)), m;
  if (!ends) return lb_error(LB_ERR_MEM, "phase model: out of memory");
  m = walk(b, caps, nparts, ends);
  while (m < nparts) {
    int64_t widest = 0, first = 0, w = -1;
    for (int64_t p = 0, start = 0; p < m; start = ends[p], p++)
      if (ends[p] - start > w) {
        w = ends[p] - start;
        widest = p;
        first = start;
      }
    if (w < 2) break;
    memmove(ends + widest + 1, ends + widest, sizeof(int64_t) * (size_t)(m - widest));
    ends[widest] = first + w / 2;
    m++;
  }
  for (int64_t p = 0, start = 0; p < nparts; p++) {
    const int64_t end = p < m ? ends[p] : b->nb;
    counts[p] = 0;
    for (int64_t i = start; i < end; i++) counts[p] += (int64_t)b->cells[i];
    start = end;
  }
  free(ends);
  return LB_OK;
}

lb_err lb_phase_split(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, const double *start, int64_t *counts)
{
  buckets b = {0, 0, NULL, NULL};
  double caps[LB_PHASE_SPLIT_MAX_PHASES], lo[LB_PHASE_SPLIT_MAX_PHASES], total;
  int size, per_rank;
  lb_err err;

  if (nphases > LB_PHASE_SPLIT_MAX_PHASES) return lb_error(LB_ERR_ARG, "phase model: %d phases, at most %d", nphases, LB_PHASE_SPLIT_MAX_PHASES);
  if (nparts > LB_PHASE_SPLIT_MAX_PARTS) return LB_ERR_UNSUPPORTED;
  MPI_Comm_size(comm, &size);
  /* the buckets of all parts, each process its share */
  per_rank = (int)fmax(1, ceil((double)SPLIT_BUCKETS_PER_PART * nparts / size));
  err = gather(comm, n, nphases, w, per_rank, &b);
  if (err || b.nb < nparts) {
    free(b.cells);
    free(b.load);
    return err ? err : LB_ERR_UNSUPPORTED;
  }
  for (int k = 0; k < nphases; k++) {
    double mx = 0;
    total = 0;
    for (int64_t i = 0; i < b.nb; i++) {
      total += b.load[i * nphases + k];
      mx = fmax(mx, b.load[i * nphases + k]);
    }
    lo[k] = fmax(total / nparts, mx);
    caps[k] = fmax(start[k], lo[k]);
  }
  /* the start, a partition's maxima, need not be met at bucket granularity */
  for (int it = 0; it < SPLIT_RAISE_ROUNDS && walk(&b, caps, nparts, NULL) > nparts; it++)
    for (int k = 0; k < nphases; k++) caps[k] *= SPLIT_RAISE;
  if (walk(&b, caps, nparts, NULL) <= nparts) {
    search(&b, caps, lo, nparts);
    err = counts_of(&b, caps, nparts, counts);
  } else
    err = LB_ERR_UNSUPPORTED;
  free(b.cells);
  free(b.load);
  return err;
}
