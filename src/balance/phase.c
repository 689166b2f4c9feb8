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

/* Collective calls of the setup (the means, the piece). */
#define SETUP_COLLECTIVES 5

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

/* Record a cut this rank placed at its cell i, where the phases'
 * prefixes are run (s->lpos, s->lrun, grown as needed). */
static lb_err record_local(lb_phase_search *s, int64_t i, const double *run)
{
  const int K = s->nphases;
  if (s->nl == s->lcap) {
    const int cap = 2 * s->lcap + 16;
    int64_t *pos = realloc(s->lpos, sizeof(int64_t) * cap);
    double *r = pos ? realloc(s->lrun, sizeof(double) * cap * K) : NULL;
    if (pos) s->lpos = pos;
    if (r) s->lrun = r;
    if (!pos || !r) return lb_error(LB_ERR_MEM, "phase model: out of memory for %d cuts", cap);
    s->lcap = cap;
  }
  s->lpos[s->nl] = i;
  memcpy(s->lrun + (size_t)s->nl * K, run, sizeof(double) * K);
  s->nl++;
  return LB_OK;
}

lb_err lb_phase_trial(lb_phase_search *s, const double *c, lb_phase_model *m)
{
  const int K = s->nphases, P = s->nparts;
  const lb_phase_piece *p = &s->piece;
  double *run = s->scratch, t = 0, mid_last = 0, local, before = 0, total, mine = -HUGE_VAL, prev = -HUGE_VAL, mean = 0;
  lb_phase_ends e;
  int j;

  s->nl = 0;
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
      if (s->record) LB_CALL(record_local(s, i, run));
      j++;
    }
    if (i == s->n) break;
    for (int k = 0; k < K; k++) run[k] += s->w[k][i];
    t += c[i];
  }
  return lb_phase_ends_model(&e, s->comm, p->rank, m);
}

/* Try alpha; keep it in res when its time is less than the best so far. */
static lb_err try(lb_phase_search *s, const double *alpha, lb_phase_choice *res, int *better)
{
  lb_phase_model m;
  lb_phase_combine(s->n, s->nphases, s->w, alpha, s->mean, s->combined);
  LB_CALL(lb_phase_trial(s, s->combined, &m));
  res->evaluated++;
  res->collectives += LB_PHASE_TRIAL_COLLECTIVES;
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

int lb_phase_searched(const lb_phase_search *s, int k)
{
  double all = 0;
  for (int j = 0; j < s->nphases; j++) all += s->mean[j];
  return s->mean[k] >= PHASE_SEARCHED_SHARE * all;
}

lb_err lb_phase_cut_counts(lb_phase_search *s, const double *c, lb_phase_choice *res)
{
  const int P = s->nparts;
  lb_phase_model m;
  lb_err err;

  if (!(s->cuts = calloc((size_t)P + 1, sizeof *s->cuts))) return lb_error(LB_ERR_MEM, "phase model: out of memory for %d parts", P);
  err = lb_phase_trial(s, c, &m);
  if (!err && MPI_Allreduce(MPI_IN_PLACE, s->cuts, P + 1, MPI_INT64_T, MPI_SUM, s->comm) != MPI_SUCCESS)
    err = lb_error(LB_ERR_MPI, "phase model: MPI_Allreduce of the cut positions failed");
  s->cuts[P] = s->piece.ncells;
  for (int q = 0; q < P; q++) res->counts[q] = s->cuts[q + 1] - s->cuts[q];
  res->collectives += LB_PHASE_TRIAL_COLLECTIVES + 1;
  res->long_collectives++;
  free(s->cuts);
  s->cuts = NULL;
  return err;
}

static lb_err choose(lb_phase_search *s, int max_rounds, lb_phase_choice *res)
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
    if (!lb_phase_searched(s, k)) continue;
    for (int j = 0; j < K; j++) a[j] = j == k || !lb_phase_searched(s, j);
    LB_CALL(try(s, a, res, &better));
  }
  for (int round = 0; round < max_rounds && moved; round++) {
    moved = 0;
    for (int k = 0; k < K; k++) {
      if (!lb_phase_searched(s, k)) continue;
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
  lb_phase_combine(s->n, K, s->w, res->alpha, s->mean, s->combined);
  return lb_phase_cut_counts(s, s->combined, res);
}

/* The split from the best combination's phase maxima, taken if its time
 * is less. */
static lb_err split(lb_phase_search *s, lb_phase_choice *res)
{
  lb_phase_choice sp;
  lb_err err;

  memset(&sp, 0, sizeof sp);
  sp.alpha = malloc(sizeof(double) * s->nphases);
  sp.counts = malloc(sizeof(int64_t) * s->nparts);
  res->split_s = MPI_Wtime();
  if (!sp.alpha || !sp.counts) err = lb_error(LB_ERR_MEM, "phase model: out of memory for %d parts", s->nparts);
  else err = lb_phase_split_search(s, s->best_max, &sp);
  res->split_s = MPI_Wtime() - res->split_s;
  res->evaluated += sp.evaluated;
  res->collectives += sp.collectives;
  res->long_collectives += sp.long_collectives;
  if (!err && sp.model.time < res->model.time * (1 - LB_PHASE_BETTER)) {
    memcpy(res->counts, sp.counts, sizeof(int64_t) * s->nparts);
    res->model = sp.model;
    res->split = 1;
  }
  lb_phase_choice_free(&sp);
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

lb_err lb_phase_search_open(lb_phase_search *s, MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, lb_phase_choice *res)
{
  memset(res, 0, sizeof *res);
  memset(s, 0, sizeof *s);
  if (nphases < 1 || nparts < 1) return lb_error(LB_ERR_ARG, "phase model: %d phases and %d parts: need at least one of each", nphases, nparts);
  s->comm = comm;
  s->n = n;
  s->nphases = nphases;
  s->nparts = nparts;
  s->w = w;
  res->nphases = nphases;
  res->nparts = nparts;
  res->alpha = malloc(sizeof(double) * nphases);
  res->counts = malloc(sizeof(int64_t) * nparts);
  /* the means, the piece's totals and prefixes, the best maxima, a
   * trial's scratch */
  s->mean = malloc(sizeof(double) * 8 * (size_t)nphases);
  /* the combined weights, then the factors being tried */
  s->combined = malloc(sizeof(double) * ((size_t)n + nphases));
  res->collectives = SETUP_COLLECTIVES;
  if (!res->alpha || !res->counts || !s->mean || !s->combined) return lb_error(LB_ERR_MEM, "phase model: out of memory");
  s->piece.total = s->mean + nphases;
  s->piece.before = s->mean + 2 * nphases;
  s->best_max = s->mean + 3 * nphases;
  s->scratch = s->mean + 4 * nphases;
  LB_CALL(lb_phase_means(comm, n, nphases, w, s->mean));
  return lb_phase_piece_locate(comm, n, nphases, w, &s->piece);
}

void lb_phase_search_close(lb_phase_search *s)
{
  free(s->mean);
  free(s->combined);
  free(s->lpos);
  free(s->lrun);
}

lb_err lb_phase_choose(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, int max_rounds, lb_phase_choice *res)
{
  lb_phase_search s;
  lb_err err = lb_phase_search_open(&s, comm, n, nphases, w, nparts, res);

  if (!err) err = choose(&s, max_rounds, res);
  res->alpha_time = res->model.time;
  if (!err) err = split(&s, res);
  lb_phase_search_close(&s);
  if (err) lb_phase_choice_free(res);
  return err;
}

lb_err lb_phase_choice_weights(MPI_Comm comm, int64_t n, const double *const *w, const lb_phase_choice *ch, double floor, double *out)
{
  double g[2] = {0, (double)n}, *mean;

  if (ch->split) LB_CALL(lb_phase_counts_weights(comm, n, ch->nparts, ch->counts, out));
  else {
    lb_err err = (mean = malloc(sizeof(double) * ch->nphases)) ? LB_OK : lb_error(LB_ERR_MEM, "phase model: out of memory");
    if (!err) err = lb_phase_means(comm, n, ch->nphases, w, mean);
    if (!err) lb_phase_combine(n, ch->nphases, w, ch->alpha, mean, out);
    free(mean);
    LB_CALL(err);
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
