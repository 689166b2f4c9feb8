/* The cycle's phase model and the partition of least modelled time
 * (lbphase.h). */
#include "balance/lbphase.h"
#include "balance/impl/lbcall.h"
#include "balance/impl/phase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
  lb_phase_model_set(nparts, time, mean, m);
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
  int nphases, nparts;
  const double *const *w;
  const double *mean;
  lb_phase_piece piece;
  double *combined;  /* this rank's combined weights, then the factors being tried */
  double *scratch;   /* 4 nphases: a trial's prefixes and maxima */
  double *best_max;  /* the best combination's largest part load per phase */
  int64_t *cuts;     /* NULL, or the nparts + 1 cut positions a trial records */
} search;

/* Collective calls of a trial (the combined weight's offset, total and
 * previous midpoint, then the parts' account), of the setup (the means,
 * the piece), of lb_phase_model_of, and of lb_phase_split's gather (both
 * of P-long buffers). */
#define TRIAL_COLLECTIVES 5
#define SETUP_COLLECTIVES 5
#define MODEL_COLLECTIVES 6
#define SPLIT_GATHER_COLLECTIVES 2

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
 * cell whose midpoint reaches j total / P) and accounts the parts that end
 * there (lb_phase_ends).  Per rank O(n nphases) work and five reductions
 * of at most nphases numbers, whatever the number of parts.  With s->cuts
 * the rank also records the cuts it placed. */
static lb_err trial(search *s, const double *alpha, lb_phase_model *m)
{
  const int K = s->nphases, P = s->nparts;
  const lb_phase_piece *p = &s->piece;
  const double *c = s->combined;
  double *run = s->scratch, t = 0, mid_last = 0, local, before = 0, total, mine = -HUGE_VAL, prev = -HUGE_VAL, mean = 0;
  lb_phase_ends e;
  int j;

  lb_phase_combine(s->n, K, s->w, alpha, s->mean, s->combined);
  for (int64_t i = 0; i < s->n; i++) {
    mid_last = t + 0.5 * c[i];
    t += c[i];
  }
  local = t;
  LB_MPI(MPI_Exscan(&local, &before, 1, MPI_DOUBLE, MPI_SUM, s->comm));
  if (p->rank == 0) before = 0; /* MPI_Exscan leaves rank 0's undefined */
  LB_MPI(MPI_Allreduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, s->comm));
  if (s->n > 0) mine = before + mid_last;
  LB_MPI(MPI_Exscan(&mine, &prev, 1, MPI_DOUBLE, MPI_MAX, s->comm));
  if (p->rank == 0) prev = -HUGE_VAL;
  lb_phase_ends_init(&e, K, P, p->total, s->scratch + K);
  for (int k = 0; k < K; k++) {
    run[k] = p->before[k];
    mean += p->total[k] / P;
  }
  /* every combined weight 0 (every phase's too): no part has a load */
  if (total == 0) {
    lb_phase_model_set(P, 0, mean, m);
    return LB_OK;
  }
  j = first_cut_above(total, P, prev);
  t = 0;
  for (int64_t i = 0; i <= s->n; i++) {
    const double mid = i < s->n ? before + (t + 0.5 * c[i]) : HUGE_VAL;
    /* past the last cell only the last rank places cuts (at the curve's end) */
    while (j < P && bound_of(total, j, P) <= mid && (i < s->n || p->rank == p->size - 1)) {
      lb_phase_ends_cut(&e, j, run);
      if (s->cuts) s->cuts[j] = p->first + i;
      j++;
    }
    if (i == s->n) break;
    for (int k = 0; k < K; k++) run[k] += s->w[k][i];
    t += c[i];
  }
  return lb_phase_ends_model(&e, s->comm, p->rank, m);
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
    memcpy(s->best_max, s->scratch + 3 * s->nphases, sizeof(double) * s->nphases);
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

/* The chosen combination's cut as cells per part, the same on every rank:
 * its trial once more, each rank recording the cuts it places, and one
 * reduction of the nparts + 1 positions (the one P-long collective). */
static lb_err chosen_counts(search *s, lb_phase_choice *res)
{
  const int P = s->nparts;
  lb_phase_model m;
  lb_err err;

  if (!(s->cuts = calloc((size_t)P + 1, sizeof *s->cuts))) return lb_error(LB_ERR_MEM, "phase model: out of memory for %d parts", P);
  err = trial(s, res->alpha, &m);
  if (!err && MPI_Allreduce(MPI_IN_PLACE, s->cuts, P + 1, MPI_INT64_T, MPI_SUM, s->comm) != MPI_SUCCESS)
    err = lb_error(LB_ERR_MPI, "phase model: MPI_Allreduce of the cut positions failed");
  s->cuts[P] = s->piece.ncells;
  for (int q = 0; q < P; q++) res->counts[q] = s->cuts[q + 1] - s->cuts[q];
  res->collectives += TRIAL_COLLECTIVES + 1;
  res->long_collectives++;
  free(s->cuts);
  s->cuts = NULL;
  return err;
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
  return chosen_counts(s, res);
}

/* The split from the best combination's phase maxima, taken if its exact
 * time is less. */
static lb_err split(search *s, lb_phase_choice *res)
{
  const int K = s->nphases, P = s->nparts;
  double start[LB_PHASE_SPLIT_MAX_PHASES];
  const double *w[LB_PHASE_SPLIT_MAX_PHASES];
  int64_t *counts;
  lb_phase_model m;
  lb_err err;
  int J = 0;

  if (P > LB_PHASE_SPLIT_MAX_PARTS) return LB_OK;
  /* the phases the search weighs (searched()); a small one follows */
  for (int k = 0; k < K && k < LB_PHASE_SPLIT_MAX_PHASES; k++) {
    if (!searched(s, k)) continue;
    start[J] = s->best_max[k];
    w[J++] = s->w[k];
  }
  if (!(counts = malloc(sizeof(int64_t) * P))) return lb_error(LB_ERR_MEM, "phase model: out of memory for %d parts", P);
  res->split_s = MPI_Wtime();
  err = lb_phase_split(s->comm, s->n, J, w, P, start, counts);
  res->split_s = MPI_Wtime() - res->split_s;
  res->collectives += SPLIT_GATHER_COLLECTIVES;
  res->long_collectives += SPLIT_GATHER_COLLECTIVES;
  if (err == LB_ERR_UNSUPPORTED) err = LB_OK;
  else if (!err) {
    err = lb_phase_model_of(s->comm, s->n, K, s->w, P, counts, &m);
    res->evaluated++;
    res->collectives += MODEL_COLLECTIVES;
    if (!err && m.time < res->model.time * (1 - LB_PHASE_BETTER)) {
      memcpy(res->counts, counts, sizeof(int64_t) * P);
      res->model = m;
      res->split = 1;
    }
  }
  free(counts);
  return err;
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

lb_err lb_phase_choose(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, int max_rounds, lb_phase_choice *res)
{
  search s;
  double *mean;
  lb_err err;

  if (nphases < 1 || nparts < 1) return lb_error(LB_ERR_ARG, "phase model: %d phases and %d parts: need at least one of each", nphases, nparts);
  memset(res, 0, sizeof *res);
  memset(&s, 0, sizeof s);
  s.comm = comm;
  s.n = n;
  s.nphases = nphases;
  s.nparts = nparts;
  s.w = w;
  res->nphases = nphases;
  res->nparts = nparts;
  res->alpha = malloc(sizeof(double) * nphases);
  res->counts = malloc(sizeof(int64_t) * nparts);
  /* the means, the piece's totals and prefixes, the best maxima, a
   * trial's scratch */
  mean = malloc(sizeof(double) * 8 * (size_t)nphases);
  /* the combined weights, then the factors being tried */
  s.combined = malloc(sizeof(double) * ((size_t)n + nphases));
  s.mean = mean;
  if (mean) {
    s.piece.total = mean + nphases;
    s.piece.before = mean + 2 * nphases;
    s.best_max = mean + 3 * nphases;
    s.scratch = mean + 4 * nphases;
  }
  if (!res->alpha || !res->counts || !mean || !s.combined) err = lb_error(LB_ERR_MEM, "phase model: out of memory");
  else err = lb_phase_means(comm, n, nphases, w, mean);
  if (!err) err = lb_phase_piece_locate(comm, n, nphases, w, &s.piece);
  res->collectives = SETUP_COLLECTIVES;
  if (!err) err = choose(&s, max_rounds, res);
  res->alpha_time = res->model.time;
  if (!err && nphases <= LB_PHASE_SPLIT_MAX_PHASES) err = split(&s, res);
  free(mean);
  free(s.combined);
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
  res->alpha = NULL;
  res->counts = NULL;
}
