/* The cycle's phase model and the partition of least modelled time
 * (lbphase.h). */
#include "balance/lbphase.h"
#include "balance/lbcurve.h"
#include "balance/impl/lbcall.h"
#include "balance/impl/phase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The model's figures from the sum over phases of the largest part load
 * and of the mean part load. */
static void model_of(int nparts, double time, double mean, lb_phase_model *m)
{
  m->time = time;
  m->mean = mean;
  m->lost = m->time - m->mean;
  m->imbalance_pct = nparts > 1 && m->time > 0 ? 100 * m->lost * nparts / (m->time * (nparts - 1)) : 0;
}

void lb_phase_model_eval(int nphases, int nparts, const double *load, lb_phase_model *m)
{
  double time = 0, mean = 0;
  for (int k = 0; k < nphases; k++) {
    double max = 0, sum = 0;
    for (int q = 0; q < nparts; q++) {
      max = fmax(max, load[(size_t)k * nparts + q]);
      sum += load[(size_t)k * nparts + q];
    }
    time += max;
    mean += sum / nparts;
  }
  model_of(nparts, time, mean, m);
}

/* The global index of this rank's first cell on the curve. */
static lb_err first_cell(MPI_Comm comm, int64_t n, int64_t *first)
{
  int rank;
  *first = 0;
  LB_MPI(MPI_Exscan(&n, first, 1, MPI_INT64_T, MPI_SUM, comm));
  MPI_Comm_rank(comm, &rank);
  if (rank == 0) *first = 0; /* MPI_Exscan leaves rank 0's undefined */
  return LB_OK;
}

/* Every phase in one pass and one reduction (the search evaluates tens of
 * cuts a cycle: a reduction per phase made it 4% of the run on 8 ranks). */
lb_err lb_phase_loads(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, const int64_t *counts, double *load,
                      lb_phase_model *m)
{
  const size_t L = (size_t)nphases * nparts;
  int64_t first = 0, start = 0, total = 0;
  double *sums;
  int q = 0;

  LB_CALL(first_cell(comm, n, &first));
  sums = calloc(L + 1, sizeof *sums);
  if (!sums) return lb_error(LB_ERR_MEM, "phase model: out of memory for %d parts", nparts);
  for (int p = 0; p < nparts; p++) total += counts[p];
  for (int64_t i = 0; i < n; i++) {
    while (q < nparts - 1 && first + i >= start + counts[q]) start += counts[q++];
    for (int k = 0; k < nphases; k++) sums[(size_t)k * nparts + q] += w[k][i];
  }
  sums[L] = (double)n;
  if (MPI_Allreduce(MPI_IN_PLACE, sums, (int)L + 1, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) {
    free(sums);
    return lb_error(LB_ERR_MPI, "phase model: MPI_Allreduce failed");
  }
  if ((int64_t)sums[L] != total) {
    const long long cells = (long long)sums[L];
    free(sums);
    return lb_error(LB_ERR_ARG, "phase model: the parts hold %lld cells, the curve %lld", (long long)total, cells);
  }
  memcpy(load, sums, sizeof(double) * L);
  free(sums);
  if (m) lb_phase_model_eval(nphases, nparts, load, m);
  return LB_OK;
}

lb_err lb_phase_means(MPI_Comm comm, int64_t n, int nphases, const double *const *w, double *mean)
{
  double *s = calloc((size_t)nphases + 1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "phase model: out of memory");
  for (int k = 0; k < nphases; k++)
    for (int64_t i = 0; i < n; i++) s[k] += w[k][i];
  s[nphases] = (double)n;
  if (MPI_Allreduce(MPI_IN_PLACE, s, nphases + 1, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) {
    free(s);
    return lb_error(LB_ERR_MPI, "phase model: MPI_Allreduce failed");
  }
  for (int k = 0; k < nphases; k++) mean[k] = s[nphases] > 0 ? s[k] / s[nphases] : 0;
  free(s);
  return LB_OK;
}

/* A cell whose combined weight is 0 weighs this fraction of the mean
 * cell's: small enough to change no part's load measurably, but positive,
 * so that the cut's midpoints grow along the curve and a run of such
 * cells is cut by count, not all left to one part. */
#define PHASE_ZERO_WEIGHT 1e-6

void lb_phase_combine(int64_t n, int nphases, const double *const *w, const double *alpha, const double *mean, double *out)
{
  double floor = 0;
  for (int k = 0; k < nphases; k++) floor += alpha[k] * mean[k];
  floor *= PHASE_ZERO_WEIGHT;
  for (int64_t i = 0; i < n; i++) {
    double c = 0;
    for (int k = 0; k < nphases; k++) c += alpha[k] * w[k][i];
    out[i] = c > floor ? c : floor;
  }
}

/* What one search needs besides its best so far. */
typedef struct {
  MPI_Comm comm;
  int64_t n;
  int nphases, nparts, rank, size;
  const double *const *w;
  const double *mean;
  const double *total;  /* each phase's weight on the whole curve */
  const double *before; /* each phase's weight before this rank's piece */
  double *combined, *load;
  double *scratch;      /* 4 nphases: a trial's phase prefixes and maxima */
  int64_t *counts;
} search;

/* The sfc cut of alpha's combined weight into counts and its loads per
 * phase and part into load (P-long arrays, the same on every rank); the
 * model into m. */
static lb_err evaluate(search *s, const double *alpha, int64_t *counts, double *load, lb_phase_model *m)
{
  lb_curve_result cut;

  lb_phase_combine(s->n, s->nphases, s->w, alpha, s->mean, s->combined);
  LB_CALL(lb_curve_sfc(s->comm, s->n, s->combined, s->nparts, &cut));
  memcpy(counts, cut.counts, sizeof(int64_t) * s->nparts);
  lb_curve_result_free(&cut);
  return lb_phase_loads(s->comm, s->n, s->nphases, s->w, s->nparts, counts, load, m);
}

/* Collective calls of lb_curve_sfc (its locate's two, its cut's one) and
 * of lb_phase_loads (the offset, the sums), and of them those of P-long
 * buffers (the cut positions, the loads); of one trial (all of a few
 * numbers); of lb_phase_split's gather (both P-long) and of the setup
 * (the means, the phases' totals and prefixes). */
#define SFC_COLLECTIVES 3
#define LOADS_COLLECTIVES 2
#define TRIAL_COLLECTIVES 5
#define SPLIT_GATHER_COLLECTIVES 2
#define SETUP_COLLECTIVES 3

/* sfc's cut position j on the combined weight's axis (lbcurve.h: the
 * same expression, so that the same cells fall below it). */
static double bound_of(double total, int j, int nparts) { return total * j / nparts; }

/* The first cut whose bound lies above x (nparts: none): O(1) from the
 * estimate x / total, not a walk over the cuts. */
static int first_cut_above(double total, int nparts, double x)
{
  int j = x > 0 ? (int)fmin(nparts, floor(x / total * nparts)) : 1;
  if (j < 1) j = 1;
  while (j > 1 && bound_of(total, j - 1, nparts) > x) j--;
  while (j < nparts && bound_of(total, j, nparts) <= x) j++;
  return j;
}

/* The model of alpha's sfc cut by prefix sums, with no P-long array: each
 * rank places the cuts whose bounds fall between the previous piece's last
 * cell midpoint and its own (lb_curve_sfc's rule: cut j before the first
 * cell whose midpoint reaches j total / P), reads each phase's prefix sum
 * there, and the parts that end at its cuts give their loads as
 * differences of those prefixes; the part that begins before the piece
 * takes the last prefix before it by one MPI_Exscan (MPI_MAX: prefixes
 * grow along the curve).  Per rank O(n nphases) work and five reductions
 * of at most nphases numbers, whatever the number of parts. */
static lb_err trial(search *s, const double *alpha, lb_phase_model *m)
{
  const int K = s->nphases, P = s->nparts;
  const double *c = s->combined;
  double *run = s->scratch, *first = run + K, *last = first + K, *max = last + K;
  double t = 0, mid_last = 0, local, before = 0, total, mine = -HUGE_VAL, prev = -HUGE_VAL, mean = 0, time = 0;
  int j, owned = 0;

  lb_phase_combine(s->n, K, s->w, alpha, s->mean, s->combined);
  for (int64_t i = 0; i < s->n; i++) {
    mid_last = t + 0.5 * c[i];
    t += c[i];
  }
  local = t;
  LB_MPI(MPI_Exscan(&local, &before, 1, MPI_DOUBLE, MPI_SUM, s->comm));
  if (s->rank == 0) before = 0; /* MPI_Exscan leaves rank 0's undefined */
  LB_MPI(MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, s->comm));
  if (s->n > 0) mine = before + mid_last;
  LB_MPI(MPI_Exscan(&mine, &prev, 1, MPI_DOUBLE, MPI_MAX, s->comm));
  if (s->rank == 0) prev = -HUGE_VAL;
  for (int k = 0; k < K; k++) {
    run[k] = s->before[k];
    last[k] = 0;
    max[k] = 0;
    mean += s->total[k] / P;
  }
  /* every combined weight 0 (every phase's too): no part has a load */
  if (total == 0) {
    model_of(P, 0, mean, m);
    return LB_OK;
  }
  j = first_cut_above(total, P, prev);
  t = 0;
  for (int64_t i = 0; i <= s->n; i++) {
    const double mid = i < s->n ? before + (t + 0.5 * c[i]) : HUGE_VAL;
    /* past the last cell only the last rank places cuts (at the curve's end) */
    while (j < P && bound_of(total, j, P) <= mid && (i < s->n || s->rank == s->size - 1)) {
      for (int k = 0; k < K; k++) {
        if (owned) max[k] = fmax(max[k], run[k] - last[k]);
        else first[k] = run[k];
        last[k] = run[k];
      }
      owned = 1;
      if (++j == P)
        for (int k = 0; k < K; k++) max[k] = fmax(max[k], s->total[k] - run[k]);
    }
    if (i == s->n) break;
    for (int k = 0; k < K; k++) run[k] += s->w[k][i];
    t += c[i];
  }
  /* the part that ends at this rank's first cut began at the last cut
   * before the piece (cut 0: prefix 0) */
  LB_MPI(MPI_Exscan(MPI_IN_PLACE, last, K, MPI_DOUBLE, MPI_MAX, s->comm));
  if (owned)
    for (int k = 0; k < K; k++) max[k] = fmax(max[k], first[k] - (s->rank > 0 ? last[k] : 0));
  if (P == 1)
    for (int k = 0; k < K; k++) max[k] = s->total[k];
  LB_MPI(MPI_Allreduce(MPI_IN_PLACE, max, K, MPI_DOUBLE, MPI_MAX, s->comm));
  for (int k = 0; k < K; k++) time += max[k];
  model_of(P, time, mean, m);
  return LB_OK;
}


/* Try alpha; keep it in res when its time is less than the best so far. */
static lb_err try(search *s, const double *alpha, lb_phase_choice *res, int *better)
{
  lb_phase_model m;
  LB_CALL(trial(s, alpha, &m));
  res->evaluated++;
  res->collectives += TRIAL_COLLECTIVES;
  *better = res->evaluated == 1 || m.time < res->model.time * (1 - LB_PHASE_BETTER);
  if (*better) {
    memcpy(res->alpha, alpha, sizeof(double) * s->nphases);
    res->model = m;
  }
  return LB_OK;
}

/* The share of the mean cell's weight below which a phase keeps factor 1
 * and is not searched: each searched phase costs a dozen cuts a cycle,
 * and one the size of the estimate's moves no cut it would find. */
#define PHASE_SEARCHED_SHARE 0.05

static int searched(const search *s, int k)
{
  double all = 0;
  for (int j = 0; j < s->nphases; j++) all += s->mean[j];
  return s->mean[k] >= PHASE_SEARCHED_SHARE * all;
}

static lb_err choose(search *s, int max_rounds, lb_phase_choice *res)
{
  /* the factors a sweep tries on one phase: a step of 2 and one of 4 each
   * way, coarse enough that a dozen cuts cover a decade of ratios, with
   * the halving steps the finer ones the next sweep refines from */
  static const double factor[] = {0.25, 0.5, 2, 4};
  const int K = s->nphases;
  double *a = s->combined + s->n, amax;
  int better, moved = 1;

  for (int k = 0; k < K; k++) a[k] = 1;
  LB_CALL(try(s, a, res, &better));
  res->sum_time = res->model.time;
  for (int k = 0; k < K && K > 1; k++) {
    if (!searched(s, k)) continue;
    for (int j = 0; j < K; j++) a[j] = j == k || !searched(s, j);
    LB_CALL(try(s, a, res, &better));
  }
  for (int round = 0; round < max_rounds && moved; round++) {
    moved = 0;
    for (int k = 0; k < K; k++) {
      if (!searched(s, k)) continue;
      for (size_t f = 0; f < sizeof factor / sizeof *factor; f++) {
        memcpy(a, res->alpha, sizeof(double) * K);
        amax = 0;
        for (int j = 0; j < K; j++) amax = fmax(amax, a[j]);
        /* a phase left out comes back in at a share of the largest */
        a[k] = a[k] > 0 ? a[k] * factor[f] : amax * factor[f] / 4;
        LB_CALL(try(s, a, res, &better));
        moved |= better;
      }
    }
  }
  /* the chosen combination's cut and loads, P-long, once */
  res->collectives += SFC_COLLECTIVES + LOADS_COLLECTIVES;
  res->long_collectives += 2;
  return evaluate(s, res->alpha, res->counts, res->load, &res->model);
}

/* The split from the best combination's phase maxima, taken if its exact
 * time is less. */
static lb_err split(search *s, lb_phase_choice *res)
{
  const int K = s->nphases, P = s->nparts;
  double start[LB_PHASE_SPLIT_MAX_PHASES];
  const double *w[LB_PHASE_SPLIT_MAX_PHASES];
  lb_phase_model m;
  lb_err err;
  int J = 0;

  /* the phases the search weighs (searched()); a small one follows */
  for (int k = 0; k < K && k < LB_PHASE_SPLIT_MAX_PHASES; k++) {
    if (!searched(s, k)) continue;
    start[J] = 0;
    for (int q = 0; q < P; q++) start[J] = fmax(start[J], res->load[(size_t)k * P + q]);
    w[J++] = s->w[k];
  }
  if (P > LB_PHASE_SPLIT_MAX_PARTS) return LB_OK;
  res->split_s = MPI_Wtime();
  err = lb_phase_split(s->comm, s->n, J, w, P, start, s->counts);
  res->split_s = MPI_Wtime() - res->split_s;
  res->collectives += SPLIT_GATHER_COLLECTIVES;
  res->long_collectives += SPLIT_GATHER_COLLECTIVES;
  if (err == LB_ERR_UNSUPPORTED) return LB_OK;
  LB_CALL(err);
  LB_CALL(lb_phase_loads(s->comm, s->n, K, s->w, P, s->counts, s->load, &m));
  res->collectives += LOADS_COLLECTIVES;
  res->long_collectives++;
  res->evaluated++;
  if (m.time < res->model.time * (1 - LB_PHASE_BETTER)) {
    memcpy(res->counts, s->counts, sizeof(int64_t) * P);
    memcpy(res->load, s->load, sizeof(double) * K * P);
    res->model = m;
    res->split = 1;
  }
  return LB_OK;
}

lb_err lb_phase_counts_weights(MPI_Comm comm, int64_t n, int nparts, const int64_t *counts, double *w)
{
  int64_t first = 0, total = 0, start = 0;
  int q = 0;

  for (int p = 0; p < nparts; p++) total += counts[p];
  LB_CALL(first_cell(comm, n, &first));
  for (int64_t i = 0; i < n; i++) {
    while (q < nparts - 1 && first + i >= start + counts[q]) start += counts[q++];
    w[i] = counts[q] > 0 ? (double)total / ((double)nparts * (double)counts[q]) : 1;
  }
  return LB_OK;
}

/* Each phase's weight on the whole curve and before this rank's piece,
 * the prefix sums a trial's cuts read. */
static lb_err phase_prefix(MPI_Comm comm, int rank, int64_t n, int nphases, const double *const *w, double *total, double *before)
{
  for (int k = 0; k < nphases; k++) {
    total[k] = 0;
    for (int64_t i = 0; i < n; i++) total[k] += w[k][i];
    before[k] = 0;
  }
  LB_MPI(MPI_Exscan(total, before, nphases, MPI_DOUBLE, MPI_SUM, comm));
  if (rank == 0)
    for (int k = 0; k < nphases; k++) before[k] = 0; /* MPI_Exscan leaves rank 0's undefined */
  LB_MPI(MPI_Allreduce(MPI_IN_PLACE, total, nphases, MPI_DOUBLE, MPI_SUM, comm));
  return LB_OK;
}

lb_err lb_phase_choose(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, int max_rounds, lb_phase_choice *res)
{
  search s;
  double *mean, *prefix;
  lb_err err;

  if (nphases < 1 || nparts < 1) return lb_error(LB_ERR_ARG, "phase model: %d phases and %d parts: need at least one of each", nphases, nparts);
  memset(res, 0, sizeof *res);
  memset(&s, 0, sizeof s);
  s.comm = comm;
  s.n = n;
  s.nphases = nphases;
  s.nparts = nparts;
  s.w = w;
  MPI_Comm_rank(comm, &s.rank);
  MPI_Comm_size(comm, &s.size);
  res->nphases = nphases;
  res->nparts = nparts;
  res->alpha = malloc(sizeof(double) * nphases);
  res->counts = malloc(sizeof(int64_t) * nparts);
  res->load = malloc(sizeof(double) * nphases * nparts);
  /* the means, the phases' totals and prefixes, a trial's scratch */
  mean = malloc(sizeof(double) * 7 * (size_t)nphases);
  /* the combined weights, then the factors being tried */
  s.combined = malloc(sizeof(double) * ((size_t)n + nphases));
  s.load = malloc(sizeof(double) * nphases * nparts);
  s.counts = malloc(sizeof(int64_t) * nparts);
  s.mean = mean;
  prefix = mean + nphases;
  s.total = prefix;
  s.before = prefix + nphases;
  s.scratch = prefix + 2 * nphases;
  if (!res->alpha || !res->counts || !res->load || !mean || !s.combined || !s.load || !s.counts) err = lb_error(LB_ERR_MEM, "phase model: out of memory");
  else err = lb_phase_means(comm, n, nphases, w, mean);
  if (!err) err = phase_prefix(comm, s.rank, n, nphases, w, prefix, prefix + nphases);
  res->collectives = SETUP_COLLECTIVES;
  if (!err) err = choose(&s, max_rounds, res);
  res->alpha_time = res->model.time;
  if (!err && nphases <= LB_PHASE_SPLIT_MAX_PHASES) err = split(&s, res);
  free(mean);
  free(s.combined);
  free(s.load);
  free(s.counts);
  if (err) lb_phase_choice_free(res);
  return err;
}

lb_err lb_phase_choice_weights(MPI_Comm comm, int64_t n, const double *const *w, const lb_phase_choice *ch, double floor, double *out)
{
  double g[2] = {0, (double)n}, mean[LB_PHASE_SPLIT_MAX_PHASES];

  if (ch->nphases > LB_PHASE_SPLIT_MAX_PHASES) return lb_error(LB_ERR_ARG, "phase model: %d phases, at most %d", ch->nphases, LB_PHASE_SPLIT_MAX_PHASES);
  if (ch->split) LB_CALL(lb_phase_counts_weights(comm, n, ch->nparts, ch->counts, out));
  else {
    LB_CALL(lb_phase_means(comm, n, ch->nphases, w, mean));
    lb_phase_combine(n, ch->nphases, w, ch->alpha, mean, out);
  }
  for (int64_t i = 0; i < n; i++) g[0] += out[i];
  LB_MPI(MPI_Allreduce(MPI_IN_PLACE, g, 2, MPI_DOUBLE, MPI_SUM, comm));
  for (int64_t i = 0; i < n; i++) out[i] = fmax(floor, g[0] > 0 ? out[i] * g[1] / g[0] : 1.0);
  return LB_OK;
}

void lb_phase_choice_free(lb_phase_choice *res)
{
  free(res->alpha);
  free(res->counts);
  free(res->load);
  res->alpha = NULL;
  res->counts = NULL;
  res->load = NULL;
}
