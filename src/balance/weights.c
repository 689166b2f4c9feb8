#include "lbweights.h"
#include "lbcall.h"

#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Singular values below this fraction of the largest count as zero: counts
 * are integers, so genuinely collinear columns give ratios near machine
 * epsilon while independent ones stay far above it. */
#define LB_WEIGHTS_RCOND 1e-10

/* What one rank contributes to the fit, as doubles so that the whole table
 * travels in one MPI_Allgather (counts are exact in a double up to 2^53). */
enum { ROW_R, ROW_NSTEPS, ROW_BADSTEP, ROW_BADVALUE, ROW_COUNTS };

void lb_weights_options_default(lb_weights_options *opt)
{
  opt->trim = 0.25;
  opt->previous = NULL;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double lb_trimmed_mean(int n, const double *x, double trim)
{
  double *s = malloc((size_t)n * sizeof *s);
  int cut = (int)floor(trim * n), i;
  double sum = 0.0;
  if (!s) return NAN;
  memcpy(s, x, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_double);
  for (i = cut; i < n - cut; i++) sum += s[i];
  free(s);
  return sum / (n - 2 * cut);
}

/* Fill one row from a rank's window: the trimmed mean, or the first step
 * whose time is unusable (ROW_BADSTEP >= 0). */
static lb_err make_row(int nsteps, const double *times, int ntypes, const int64_t *counts, double trim,
                         double *row)
{
  int s, t;
  row[ROW_R] = 0.0;
  row[ROW_NSTEPS] = nsteps;
  row[ROW_BADSTEP] = -1;
  row[ROW_BADVALUE] = 0.0;
  for (t = 0; t < ntypes; t++) row[ROW_COUNTS + t] = (double)counts[t];
  for (s = 0; s < nsteps; s++) {
    if (!isfinite(times[s]) || times[s] < 0.0) {
      row[ROW_BADSTEP] = s;
      row[ROW_BADVALUE] = times[s];
      return LB_OK;
    }
  }
  if (nsteps > 0) {
    row[ROW_R] = lb_trimmed_mean(nsteps, times, trim);
    if (isnan(row[ROW_R])) return lb_error(LB_ERR_MEM, "weights: out of memory sorting the time window");
  }
  return LB_OK;
}

static lb_err check_args(int ntypes, const lb_weights_options *opt)
{
  if (ntypes < 1) return lb_error(LB_ERR_ARG, "weights: number of load types %d must be at least 1", ntypes);
  if (!(opt->trim >= 0.0 && opt->trim < 0.5))
    return lb_error(LB_ERR_ARG, "-lb_weights_trim %g: the trim fraction must be in [0, 0.5)", opt->trim);
  return LB_OK;
}

/* Rows are checked in rank order so that every rank names the same culprit. */
static lb_err check_rows(int nranks, int ntypes, const double *rows)
{
  int w = ROW_COUNTS + ntypes, i, t;
  for (i = 0; i < nranks; i++) {
    const double *row = rows + (size_t)i * w;
    if (row[ROW_BADSTEP] >= 0)
      return lb_error(LB_ERR_LOAD, "weights: rank %d, step %d: compute time %g is not a finite non-negative number",
                          i, (int)row[ROW_BADSTEP], row[ROW_BADVALUE]);
    for (t = 0; t < ntypes; t++)
      if (row[ROW_COUNTS + t] < 0)
        return lb_error(LB_ERR_LOAD, "weights: rank %d: negative count %.0f of load type %d", i,
                            row[ROW_COUNTS + t], t);
  }
  return LB_OK;
}

static lb_err alloc_result(int nranks, int ntypes, const lb_weights_options *opt, lb_weights_result *res)
{
  int t;
  memset(res, 0, sizeof *res);
  res->ntypes = ntypes;
  res->nranks = nranks;
  res->coef = calloc((size_t)ntypes, sizeof *res->coef);
  res->cost = calloc((size_t)ntypes, sizeof *res->cost);
  res->load = calloc((size_t)nranks, sizeof *res->load);
  res->predicted = calloc((size_t)nranks, sizeof *res->predicted);
  if (!res->coef || !res->cost || !res->load || !res->predicted) {
    lb_weights_result_free(res);
    return lb_error(LB_ERR_MEM, "weights: out of memory for %d ranks and %d types", nranks, ntypes);
  }
  for (t = 0; t < ntypes; t++) res->cost[t] = opt->previous ? opt->previous[t] : 1.0;
  return LB_OK;
}

/* Solve A c = l over the present types with LAPACKE_dgelsd and fill coef,
 * predicted, residual, smape and rank. */
static lb_err solve(int nranks, int ntypes, const double *rows, const int *present, int npresent,
                      lb_weights_result *res)
{
  int w = ROW_COUNTS + ntypes, ldb = nranks > npresent ? nranks : npresent, i, j, t;
  double *a = malloc((size_t)nranks * npresent * sizeof *a);
  double *b = malloc((size_t)ldb * sizeof *b);
  double *sv = malloc((size_t)npresent * sizeof *sv);
  double sq = 0.0, sm = 0.0;
  lapack_int rank = 0, info;
  if (!a || !b || !sv) {
    free(a), free(b), free(sv);
    return lb_error(LB_ERR_MEM, "weights: out of memory for the least-squares system");
  }
  for (i = 0; i < nranks; i++) {
    for (j = 0; j < npresent; j++) a[(size_t)i * npresent + j] = rows[(size_t)i * w + ROW_COUNTS + present[j]];
    b[i] = res->load[i];
  }
  info = LAPACKE_dgelsd(LAPACK_ROW_MAJOR, nranks, npresent, 1, a, npresent, b, 1, sv, LB_WEIGHTS_RCOND, &rank);
  free(a), free(sv);
  if (info != 0) {
    free(b);
    return lb_error(LB_ERR_LOAD, "weights: LAPACKE_dgelsd failed (info %d)", (int)info);
  }
  for (j = 0; j < npresent; j++) res->coef[present[j]] = b[j];
  free(b);
  res->rank = (int)rank;
  for (i = 0; i < nranks; i++) {
    double p = 0.0, m = res->load[i];
    for (t = 0; t < ntypes; t++) p += rows[(size_t)i * w + ROW_COUNTS + t] * res->coef[t];
    res->predicted[i] = p;
    sq += (p - m) * (p - m);
    if (fabs(p) + fabs(m) > 0.0) sm += fabs(p - m) / ((fabs(p) + fabs(m)) / 2.0);
  }
  res->residual = sqrt(sq);
  /* Loads are times divided by their mean, so the percentage error of loads
   * equals that of times per rank. */
  res->smape = 100.0 * sm / nranks;
  return LB_OK;
}

/* The common path: rows of every rank are known here, identically on all. */
static lb_err fit_rows(int nranks, int ntypes, const double *rows, const lb_weights_options *opt,
                         lb_weights_result *res)
{
  int w = ROW_COUNTS + ntypes, i, t, npresent = 0, *present;
  double mean = 0.0, cells = 0.0, weighted = 0.0;
  lb_err err;

  LB_CALL(check_rows(nranks, ntypes, rows));
  LB_CALL(alloc_result(nranks, ntypes, opt, res));
  for (i = 0; i < nranks; i++) {
    if (rows[(size_t)i * w + ROW_NSTEPS] == 0) res->flags |= LB_WEIGHTS_EMPTY_WINDOW;
    mean += rows[(size_t)i * w + ROW_R];
  }
  mean /= nranks;
  if (res->flags & LB_WEIGHTS_EMPTY_WINDOW) return LB_OK;
  if (mean == 0.0) {
    res->flags |= LB_WEIGHTS_ZERO_TIME;
    return LB_OK;
  }
  for (i = 0; i < nranks; i++) res->load[i] = rows[(size_t)i * w + ROW_R] / mean;
  if (nranks == 1) {
    res->flags |= LB_WEIGHTS_SINGLE_RANK;
    return LB_OK;
  }

  present = malloc((size_t)ntypes * sizeof *present);
  if (!present) {
    lb_weights_result_free(res);
    return lb_error(LB_ERR_MEM, "weights: out of memory");
  }
  for (t = 0; t < ntypes; t++) {
    double n = 0.0;
    for (i = 0; i < nranks; i++) n += rows[(size_t)i * w + ROW_COUNTS + t];
    if (n > 0.0)
      present[npresent++] = t;
    else
      res->flags |= LB_WEIGHTS_ABSENT_TYPE;
  }
  if (npresent == 0) {
    free(present);
    return LB_OK;
  }
  if (nranks < npresent) res->flags |= LB_WEIGHTS_UNDERDETERMINED;
  err = solve(nranks, ntypes, rows, present, npresent, res);
  if (err) {
    free(present);
    lb_weights_result_free(res);
    return err;
  }
  if (res->rank < npresent) res->flags |= LB_WEIGHTS_RANK_DEFICIENT;

  for (i = 0; i < npresent; i++)
    if (!(res->coef[present[i]] > 0.0)) res->flags |= LB_WEIGHTS_NEGATIVE;
  if (!(res->flags & LB_WEIGHTS_NEGATIVE)) {
    /* Mean cell weight 1: divide by the average cost of all present cells. */
    for (i = 0; i < npresent; i++) {
      double n = 0.0;
      int r;
      t = present[i];
      for (r = 0; r < nranks; r++) n += rows[(size_t)r * w + ROW_COUNTS + t];
      cells += n;
      weighted += n * res->coef[t];
    }
    for (i = 0; i < npresent; i++) res->cost[present[i]] = res->coef[present[i]] * cells / weighted;
    res->fitted = 1;
  }
  free(present);
  return LB_OK;
}

lb_err lb_weights_fit_table(int nranks, const int *nsteps, const double *const *times, int ntypes,
                              const int64_t *counts, const lb_weights_options *opt, lb_weights_result *res)
{
  int w = ROW_COUNTS + ntypes, i;
  double *rows;
  lb_err err = LB_OK;

  LB_CALL(check_args(ntypes, opt));
  if (nranks < 1) return lb_error(LB_ERR_ARG, "weights: number of ranks %d must be at least 1", nranks);
  rows = malloc((size_t)nranks * w * sizeof *rows);
  if (!rows) return lb_error(LB_ERR_MEM, "weights: out of memory for %d ranks", nranks);
  for (i = 0; i < nranks && !err; i++)
    err = make_row(nsteps[i], times[i], ntypes, counts + (size_t)i * ntypes, opt->trim, rows + (size_t)i * w);
  if (!err) err = fit_rows(nranks, ntypes, rows, opt, res);
  free(rows);
  return err;
}

lb_err lb_weights_fit(MPI_Comm comm, int nsteps, const double *times, int ntypes, const int64_t *counts,
                        const lb_weights_options *opt, lb_weights_result *res)
{
  int w = ROW_COUNTS + ntypes, size, ok;
  double *rows, *mine;
  lb_err err;

  LB_CALL(check_args(ntypes, opt));
  LB_MPI(MPI_Comm_size(comm, &size));
  rows = malloc(((size_t)size + 1) * w * sizeof *rows);
  if (!rows) return lb_error(LB_ERR_MEM, "weights: out of memory for %d ranks", size);
  mine = rows + (size_t)size * w;
  err = make_row(nsteps, times, ntypes, counts, opt->trim, mine);
  /* A local failure must not leave the other ranks waiting in the gather. */
  ok = !err;
  if (MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
    free(rows);
    return lb_error(LB_ERR_MPI, "weights: MPI_Allreduce failed");
  }
  if (!ok) {
    free(rows);
    return err ? err : lb_error(LB_ERR_MEM, "weights: out of memory on another rank");
  }
  if (MPI_Allgather(mine, w, MPI_DOUBLE, rows, w, MPI_DOUBLE, comm) != MPI_SUCCESS) {
    free(rows);
    return lb_error(LB_ERR_MPI, "weights: MPI_Allgather failed");
  }
  err = fit_rows(size, ntypes, rows, opt, res);
  free(rows);
  return err;
}

void lb_weights_result_free(lb_weights_result *res)
{
  free(res->coef);
  free(res->cost);
  free(res->load);
  free(res->predicted);
  res->coef = res->cost = res->load = res->predicted = NULL;
}

void lb_weights_flags_string(unsigned flags, char *buf, size_t len)
{
  static const char *names[] = {"absent-type", "rank-deficient", "underdetermined", "negative-cost",
                                "single-rank", "empty-window", "zero-time"};
  size_t k, used = 0;
  buf[0] = '\0';
  for (k = 0; k < sizeof names / sizeof names[0]; k++) {
    if (!(flags & (1u << k))) continue;
    int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[k]);
    if (n < 0 || (size_t)n >= len - used) return;
    used += (size_t)n;
  }
}
