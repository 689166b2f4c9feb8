/* The cycle's phase model and the partition of least modelled time
 * (lbphase.h). */
#include "balance/lbphase.h"
#include "balance/lbcurve.h"
#include "balance/impl/lbcall.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void lb_phase_model_eval(int nphases, int nparts, const double *load, lb_phase_model *m)
{
  m->time = m->mean = 0;
  for (int k = 0; k < nphases; k++) {
    double max = 0, sum = 0;
    for (int q = 0; q < nparts; q++) {
      max = fmax(max, load[(size_t)k * nparts + q]);
      sum += load[(size_t)k * nparts + q];
    }
    m->time += max;
    m->mean += sum / nparts;
  }
  m->lost = m->time - m->mean;
  m->imbalance_pct = nparts > 1 && m->time > 0 ? 100 * m->lost * nparts / (m->time * (nparts - 1)) : 0;
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

void lb_phase_combine(int64_t n, int nphases, const double *const *w, const double *alpha, const double *mean, double *out)
{
  double floor = 0;
  for (int k = 0; k < nphases; k++) floor += alpha[k] * mean[k];
  floor *= 1e-6;
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
  double *combined, *load;
  int64_t *counts;
} search;

/* The model's time of the sfc cut of alpha's combined weight; the cut and
 * its loads stay in s. */
static lb_err evaluate(search *s, const double *alpha, lb_phase_model *m)
{
  lb_curve_result cut;
  lb_err err;

  lb_phase_combine(s->n, s->nphases, s->w, alpha, s->mean, s->combined);
  LB_CALL(lb_curve_sfc(s->comm, s->n, s->combined, s->nparts, &cut));
  memcpy(s->counts, cut.counts, sizeof(int64_t) * s->nparts);
  lb_curve_result_free(&cut);
  err = lb_phase_loads(s->comm, s->n, s->nphases, s->w, s->nparts, s->counts, s->load, m);
  return err;
}

/* Try alpha; keep it in res when its time is less than the best so far
 * (by more than round-off, so that ties keep the earlier, simpler one). */
static lb_err try(search *s, const double *alpha, lb_phase_choice *res, int *better)
{
  lb_phase_model m;
  LB_CALL(evaluate(s, alpha, &m));
  res->evaluated++;
  *better = res->evaluated == 1 || m.time < res->model.time * (1 - 1e-12);
  if (*better) {
    memcpy(res->alpha, alpha, sizeof(double) * s->nphases);
    memcpy(res->counts, s->counts, sizeof(int64_t) * s->nparts);
    memcpy(res->load, s->load, sizeof(double) * s->nphases * s->nparts);
    res->model = m;
  }
  return LB_OK;
}

/* Phases of at least 5% of the mean cell's weight are searched; a
 * smaller one keeps its factor 1 (each searched phase costs a dozen cuts a
 * cycle, for a phase the size of the estimate's, nothing). */
static int searched(const search *s, int k)
{
  double all = 0;
  for (int j = 0; j < s->nphases; j++) all += s->mean[j];
  return s->mean[k] >= 0.05 * all;
}

static lb_err choose(search *s, int max_rounds, lb_phase_choice *res)
{
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
  return LB_OK;
}

/* The split from the best combination's phase maxima, taken if its exact
 * time is less. */
static lb_err split(search *s, lb_phase_choice *res)
{
  const int K = s->nphases, P = s->nparts;
  double start[64];
  lb_phase_model m;
  lb_err err;

  const double *w[64];
  int J = 0;

  /* the phases the search weighs (searched()); a small one follows */
  for (int k = 0; k < K && k < 64; k++) {
    if (!searched(s, k)) continue;
    start[J] = 0;
    for (int q = 0; q < P; q++) start[J] = fmax(start[J], res->load[(size_t)k * P + q]);
    w[J++] = s->w[k];
  }
  err = lb_phase_split(s->comm, s->n, J, w, P, start, s->counts);
  if (err == LB_ERR_UNSUPPORTED) return LB_OK;
  LB_CALL(err);
  LB_CALL(lb_phase_loads(s->comm, s->n, K, s->w, P, s->counts, s->load, &m));
  res->evaluated++;
  if (m.time < res->model.time * (1 - 1e-12)) {
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

lb_err lb_phase_choose(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, int max_rounds, lb_phase_choice *res)
{
  search s = {comm, n, nphases, nparts, w, NULL, NULL, NULL, NULL};
  double *mean;
  lb_err err;

  if (nphases < 1 || nparts < 1) return lb_error(LB_ERR_ARG, "phase model: %d phases and %d parts: need at least one of each", nphases, nparts);
  memset(res, 0, sizeof *res);
  res->nphases = nphases;
  res->nparts = nparts;
  res->alpha = malloc(sizeof(double) * nphases);
  res->counts = malloc(sizeof(int64_t) * nparts);
  res->load = malloc(sizeof(double) * nphases * nparts);
  mean = malloc(sizeof(double) * nphases);
  /* the combined weights, then the factors being tried */
  s.combined = malloc(sizeof(double) * ((size_t)n + nphases));
  s.load = malloc(sizeof(double) * nphases * nparts);
  s.counts = malloc(sizeof(int64_t) * nparts);
  s.mean = mean;
  if (!res->alpha || !res->counts || !res->load || !mean || !s.combined || !s.load || !s.counts) err = lb_error(LB_ERR_MEM, "phase model: out of memory");
  else err = lb_phase_means(comm, n, nphases, w, mean);
  if (!err) err = choose(&s, max_rounds, res);
  res->alpha_time = res->model.time;
  if (!err && nphases <= 64) err = split(&s, res);
  free(mean);
  free(s.combined);
  free(s.load);
  free(s.counts);
  if (err) lb_phase_choice_free(res);
  return err;
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
