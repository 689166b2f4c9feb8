#include "balance/lbweights.h"
#include "balance/impl/lbcall.h"
#include "balance/lbstate.h"
#include "balance/impl/pack.h"

#include <lapacke.h>
#include <limits.h>
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

double lb_trimmed_mean(int n, const double *x, double trim)
{
  double *s = malloc((size_t)n * sizeof *s);
  int cut = (int)floor(trim * n), i;
  double sum = 0.0;
  if (!s) return NAN;
  memcpy(s, x, (size_t)n * sizeof *s);
  lb_sort_values(n, s);
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

struct lb_weights_history {
  int ntypes, history, nranks; /* nranks: 0 until the first window */
  double forget;
  int nwin, head;              /* windows held; slot of the next window */
  double *data;                /* history x nranks x (ntypes counts, r) */
};

lb_err lb_weights_history_create(int ntypes, int history, double forget, lb_weights_history **h)
{
  *h = NULL;
  if (ntypes < 1) return lb_error(LB_ERR_ARG, "weights: number of load types %d must be at least 1", ntypes);
  if (history < 1) return lb_error(LB_ERR_ARG, "-lb_history %d: the number of stacked windows must be at least 1", history);
  if (!(forget > 0.0 && forget <= 1.0))
    return lb_error(LB_ERR_ARG, "-lb_forget %g: the forgetting factor must be in (0, 1]", forget);
  *h = calloc(1, sizeof **h);
  if (!*h) return lb_error(LB_ERR_MEM, "weights: out of memory for the history");
  (*h)->ntypes = ntypes;
  (*h)->history = history;
  (*h)->forget = forget;
  return LB_OK;
}

void lb_weights_history_destroy(lb_weights_history **h)
{
  if (!*h) return;
  free((*h)->data);
  free(*h);
  *h = NULL;
}

/* Append this window's rows (counts | r), dropping the oldest when full. */
static lb_err history_push(lb_weights_history *h, int nranks, int ntypes, const double *rows)
{
  int w = ROW_COUNTS + ntypes, k = ntypes + 1, i, t;
  double *slot;
  if (h->ntypes != ntypes)
    return lb_error(LB_ERR_ARG, "weights: the history holds %d load types, the fit has %d", h->ntypes, ntypes);
  if (!h->data) {
    h->data = malloc((size_t)h->history * nranks * k * sizeof *h->data);
    if (!h->data) return lb_error(LB_ERR_MEM, "weights: out of memory for %d windows of %d ranks", h->history, nranks);
    h->nranks = nranks;
  }
  if (h->nranks != nranks)
    return lb_error(LB_ERR_ARG, "weights: the history holds windows of %d ranks, the fit has %d", h->nranks, nranks);
  slot = h->data + (size_t)h->head * nranks * k;
  for (i = 0; i < nranks; i++) {
    for (t = 0; t < ntypes; t++) slot[(size_t)i * k + t] = rows[(size_t)i * w + ROW_COUNTS + t];
    slot[(size_t)i * k + ntypes] = rows[(size_t)i * w + ROW_R];
  }
  h->head = (h->head + 1) % h->history;
  if (h->nwin < h->history) h->nwin++;
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
  res->cost_stderr = calloc((size_t)ntypes, sizeof *res->cost_stderr);
  res->load = calloc((size_t)nranks, sizeof *res->load);
  res->predicted = calloc((size_t)nranks, sizeof *res->predicted);
  if (!res->coef || !res->cost || !res->cost_stderr || !res->load || !res->predicted) {
    lb_weights_result_free(res);
    return lb_error(LB_ERR_MEM, "weights: out of memory for %d ranks and %d types", nranks, ntypes);
  }
  for (t = 0; t < ntypes; t++) {
    res->cost[t] = opt->previous ? opt->previous[t] : 1.0;
    res->cost_stderr[t] = NAN;
  }
  return LB_OK;
}

/* Minimum-norm least squares on the columns of a (m x n, row-major) where
 * use[j] is set (all when use is NULL); x gets 0 elsewhere. */
static lb_err lsq(int m, int n, const double *a, const double *b, const int *use, double *x, int *rank)
{
  int nu = 0, ldb = m, i, j, k;
  for (j = 0; j < n; j++) nu += !use || use[j];
  if (nu > ldb) ldb = nu;
  double *ac = malloc(((size_t)m * (nu ? nu : 1) + (size_t)ldb + (size_t)(nu ? nu : 1)) * sizeof *ac);
  if (!ac) return lb_error(LB_ERR_MEM, "weights: out of memory for the least-squares system");
  double *bc = ac + (size_t)m * (nu ? nu : 1), *sv = bc + ldb;
  lapack_int r = 0, info = 0;
  for (i = 0; i < m; i++) {
    for (j = 0, k = 0; j < n; j++)
      if (!use || use[j]) ac[(size_t)i * nu + k++] = a[(size_t)i * n + j];
    bc[i] = b[i];
  }
  if (nu > 0) info = LAPACKE_dgelsd(LAPACK_ROW_MAJOR, m, nu, 1, ac, nu, bc, 1, sv, LB_WEIGHTS_RCOND, &r);
  if (info != 0) {
    free(ac);
    return lb_error(LB_ERR_LOAD, "weights: LAPACKE_dgelsd failed (info %d)", (int)info);
  }
  for (j = 0, k = 0; j < n; j++) x[j] = !use || use[j] ? bc[k++] : 0.0;
  if (rank) *rank = (int)r;
  free(ac);
  return LB_OK;
}

lb_err lb_nnls(int m, int n, const double *a, const double *b, double *x, int *clamped)
{
  int i, j, it, ok = 1;
  double an = 0.0, bn = 0.0, tol;
  *clamped = 0;
  LB_CALL(lsq(m, n, a, b, NULL, x, NULL));
  for (j = 0; j < n; j++) ok = ok && x[j] >= 0.0;
  if (ok) return LB_OK;
  *clamped = 1;
  int *passive = calloc((size_t)n, sizeof *passive);
  double *z = malloc((size_t)(m + n) * sizeof *z), *r = z + n;
  if (!passive || !z) {
    free(passive), free(z);
    return lb_error(LB_ERR_MEM, "weights: out of memory for non-negative least squares");
  }
  for (i = 0; i < m; i++) {
    bn += b[i] * b[i];
    for (j = 0; j < n; j++) an += a[(size_t)i * n + j] * a[(size_t)i * n + j];
  }
  /* a gradient below this is round-off of A^T (b - A x) */
  tol = 1e-12 * sqrt(an * bn);
  for (j = 0; j < n; j++) x[j] = 0.0;
  /* Lawson-Hanson: each outer pass frees the bound variable with the
   * steepest descent; the inner loop steps back along z - x until the
   * passive variables are positive. 3n passes suffice in practice; the
   * cap only guards against cycling in degenerate data. */
  for (it = 0; it < 3 * n + 3; it++) {
    int best = -1;
    double gbest = tol;
    for (i = 0; i < m; i++) {
      r[i] = b[i];
      for (j = 0; j < n; j++) r[i] -= a[(size_t)i * n + j] * x[j];
    }
    for (j = 0; j < n; j++) {
      double g = 0.0;
      if (passive[j]) continue;
      for (i = 0; i < m; i++) g += a[(size_t)i * n + j] * r[i];
      if (g > gbest) gbest = g, best = j;
    }
    if (best < 0) break;
    passive[best] = 1;
    for (int inner = 0; inner <= n; inner++) {
      double alpha = HUGE_VAL;
      lb_err err = lsq(m, n, a, b, passive, z, NULL);
      if (err) {
        free(passive), free(z);
        return err;
      }
      for (j = 0; j < n; j++)
        if (passive[j] && z[j] <= 0.0) {
          double s = x[j] - z[j] > 0.0 ? x[j] / (x[j] - z[j]) : 0.0;
          if (s < alpha) alpha = s;
        }
      if (alpha == HUGE_VAL) {
        memcpy(x, z, (size_t)n * sizeof *x);
        break;
      }
      for (j = 0; j < n; j++) {
        x[j] += alpha * (z[j] - x[j]);
        if (passive[j] && x[j] <= 0.0) passive[j] = 0, x[j] = 0.0;
      }
    }
  }
  free(passive), free(z);
  return LB_OK;
}

/* Standard errors of the free costs: sigma^2 (A^T W A)^{-1} with sigma^2 the
 * weighted residual over the spare rows. NaN when there is no spare row or
 * the normal matrix is singular. */
static void standard_errors(int m, int n, const double *a, double rss, double *se)
{
  int i, j, k;
  double *nm;
  for (j = 0; j < n; j++) se[j] = NAN;
  if (m <= n || !(nm = calloc((size_t)n * n, sizeof *nm))) return;
  for (i = 0; i < m; i++)
    for (j = 0; j < n; j++)
      for (k = 0; k < n; k++) nm[(size_t)j * n + k] += a[(size_t)i * n + j] * a[(size_t)i * n + k];
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', n, nm, n) == 0 && LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'U', n, nm, n) == 0)
    for (j = 0; j < n; j++) se[j] = sqrt(rss / (m - n) * nm[(size_t)j * n + j]);
  free(nm);
}

/* The stacked, forgetting-weighted system over the present types: rows of
 * the history (this window last pushed), or of this window alone. */
typedef struct {
  int m, n;      /* rows, present types */
  double *a, *b; /* sqrt(weight) times counts and times */
} stacked;

static lb_err stack(int nranks, int ntypes, const double *rows, const lb_weights_history *h, int *present,
                    int *npresent, stacked *s)
{
  int k = ntypes + 1, nwin = h ? h->nwin : 1, wdw, i, t, j, row;
  double *all = NULL, *sq = NULL;
  s->a = s->b = NULL;
  s->m = nranks * nwin;
  all = malloc((size_t)s->m * k * sizeof *all);
  sq = malloc((size_t)s->m * sizeof *sq);
  if (!all || !sq) {
    free(all), free(sq);
    return lb_error(LB_ERR_MEM, "weights: out of memory for %d stacked rows", s->m);
  }
  for (wdw = 0, row = 0; wdw < nwin; wdw++) {
    /* age 0 is the newest window */
    double f = h ? sqrt(pow(h->forget, wdw)) : 1.0;
    const double *src = h ? h->data + (size_t)((h->head - 1 - wdw + 2 * h->history) % h->history) * nranks * k : NULL;
    for (i = 0; i < nranks; i++, row++) {
      for (t = 0; t < ntypes; t++) all[(size_t)row * k + t] = src ? src[(size_t)i * k + t] : rows[(size_t)i * (ROW_COUNTS + ntypes) + ROW_COUNTS + t];
      all[(size_t)row * k + ntypes] = src ? src[(size_t)i * k + ntypes] : rows[(size_t)i * (ROW_COUNTS + ntypes) + ROW_R];
      sq[row] = f;
    }
  }
  *npresent = 0;
  for (t = 0; t < ntypes; t++) {
    double n = 0.0;
    for (i = 0; i < s->m; i++) n += all[(size_t)i * k + t];
    if (n > 0.0) present[(*npresent)++] = t;
  }
  s->n = *npresent;
  s->a = malloc(((size_t)s->m * (s->n ? s->n : 1) + (size_t)s->m) * sizeof *s->a);
  if (!s->a) {
    free(all), free(sq);
    return lb_error(LB_ERR_MEM, "weights: out of memory for %d stacked rows", s->m);
  }
  s->b = s->a + (size_t)s->m * (s->n ? s->n : 1);
  for (i = 0; i < s->m; i++) {
    for (j = 0; j < s->n; j++) s->a[(size_t)i * s->n + j] = sq[i] * all[(size_t)i * k + present[j]];
    s->b[i] = sq[i] * all[(size_t)i * k + ntypes];
  }
  free(all), free(sq);
  return LB_OK;
}

/* Solve the stacked system and fill coef, cost_stderr (in coef units for
 * now), residual, rank and the flags of the solve. */
static lb_err solve(const stacked *s, const int *present, lb_weights_result *res)
{
  int j, i, clamped = 0, rank = 0;
  double *x = malloc(((size_t)s->n * 2 + 1) * sizeof *x), *se = x + s->n, rss = 0.0;
  lb_err err;
  if (!x) return lb_error(LB_ERR_MEM, "weights: out of memory");
  err = lsq(s->m, s->n, s->a, s->b, NULL, x, &rank);
  if (!err) err = lb_nnls(s->m, s->n, s->a, s->b, x, &clamped);
  if (err) {
    free(x);
    return err;
  }
  res->rank = rank;
  if (rank < s->n) res->flags |= LB_WEIGHTS_RANK_DEFICIENT;
  if (clamped) res->flags |= LB_WEIGHTS_CLAMPED;
  for (i = 0; i < s->m; i++) {
    double p = 0.0;
    for (j = 0; j < s->n; j++) p += s->a[(size_t)i * s->n + j] * x[j];
    rss += (p - s->b[i]) * (p - s->b[i]);
  }
  res->residual = sqrt(rss);
  standard_errors(s->m, s->n, s->a, rss, se);
  for (j = 0; j < s->n; j++) {
    res->coef[present[j]] = x[j];
    res->cost_stderr[present[j]] = rank == s->n ? se[j] : NAN;
  }
  free(x);
  return LB_OK;
}

/* The common path: this window's rows of every rank are known here,
 * identically on all. */
static lb_err fit_rows(int nranks, int ntypes, const double *rows, const lb_weights_options *opt,
                       lb_weights_history *hist, lb_weights_result *res)
{
  int w = ROW_COUNTS + ntypes, i, t, npresent = 0, *present = NULL, change = 0, known = 1;
  double mean = 0.0, cells = 0.0, weighted = 0.0, sm = 0.0;
  stacked s = {0, 0, NULL, NULL};
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
  err = hist ? history_push(hist, nranks, ntypes, rows) : LB_OK;
  if (!err && !(present = malloc((size_t)ntypes * sizeof *present)))
    err = lb_error(LB_ERR_MEM, "weights: out of memory");
  if (!err) err = stack(nranks, ntypes, rows, hist, present, &npresent, &s);
  if (err) goto fail;
  res->rows = s.m;
  res->windows = hist ? hist->nwin : 1;
  if (npresent < ntypes) res->flags |= LB_WEIGHTS_ABSENT_TYPE;
  if (npresent == 0) goto done;
  if (s.m < npresent) res->flags |= LB_WEIGHTS_UNDERDETERMINED;
  if ((err = solve(&s, present, res))) goto fail;

  for (i = 0; i < nranks; i++) {
    double p = 0.0, m = res->load[i];
    for (t = 0; t < ntypes; t++) p += rows[(size_t)i * w + ROW_COUNTS + t] * res->coef[t];
    p /= mean;
    res->predicted[i] = p;
    if (fabs(p) + fabs(m) > 0.0) sm += fabs(p - m) / ((fabs(p) + fabs(m)) / 2.0);
  }
  /* Loads are times divided by their mean, so the percentage error of loads
   * equals that of times per rank. */
  res->smape = 100.0 * sm / nranks;
  /* Mean cell weight 1 over this window's cells. */
  for (i = 0; i < npresent; i++) {
    t = present[i];
    for (int r = 0; r < nranks; r++) {
      double n = rows[(size_t)r * w + ROW_COUNTS + t];
      cells += n;
      weighted += n * res->coef[t];
    }
  }
  if (!(weighted > 0.0)) {
    res->flags |= LB_WEIGHTS_ZERO_TIME;
    for (i = 0; i < npresent; i++) res->cost_stderr[present[i]] = NAN;
    goto done;
  }
  /* A change no larger than the noise of every cost is not worth a new
   * partition: the previous costs stay. An unknown error (no spare row)
   * cannot judge, and the fit is used. */
  for (i = 0; i < npresent; i++) {
    t = present[i];
    res->cost_stderr[t] *= cells / weighted;
    if (!isfinite(res->cost_stderr[t])) known = 0;
    else if (fabs(res->coef[t] * cells / weighted - res->cost[t]) > res->cost_stderr[t]) change = 1;
  }
  if (known && !change) {
    res->flags |= LB_WEIGHTS_WITHIN_NOISE;
    goto done;
  }
  for (i = 0; i < npresent; i++) res->cost[present[i]] = res->coef[present[i]] * cells / weighted;
  res->fitted = 1;
done:
  free(present);
  free(s.a);
  return LB_OK;
fail:
  free(present);
  free(s.a);
  lb_weights_result_free(res);
  return err;
}

lb_err lb_weights_fit_table(int nranks, const int *nsteps, const double *const *times, int ntypes,
                            const int64_t *counts, const lb_weights_options *opt, lb_weights_history *hist,
                            lb_weights_result *res)
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
  if (!err) err = fit_rows(nranks, ntypes, rows, opt, hist, res);
  free(rows);
  return err;
}

lb_err lb_weights_fit(MPI_Comm comm, int nsteps, const double *times, int ntypes, const int64_t *counts,
                      const lb_weights_options *opt, lb_weights_history *hist, lb_weights_result *res)
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
  err = fit_rows(size, ntypes, rows, opt, hist, res);
  free(rows);
  return err;
}

void lb_weights_result_free(lb_weights_result *res)
{
  free(res->coef);
  free(res->cost);
  free(res->load);
  free(res->predicted);
  free(res->cost_stderr);
  res->coef = res->cost = res->load = res->predicted = res->cost_stderr = NULL;
}

void lb_weights_flags_string(unsigned flags, char *buf, size_t len)
{
  static const char *names[] = {"absent-type", "rank-deficient", "underdetermined", "clamped-at-zero",
                                "single-rank", "empty-window", "zero-time", "within-noise"};
  size_t k, used = 0;
  buf[0] = '\0';
  for (k = 0; k < sizeof names / sizeof names[0]; k++) {
    if (!(flags & (1u << k))) continue;
    int n = snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[k]);
    if (n < 0 || (size_t)n >= len - used) return;
    used += (size_t)n;
  }
}

/* ---------------------------------------------------- checkpoint blobs */

#define HISTORY_TAG "LBWH"
#define HISTORY_WHAT "weights history"

lb_err lb_weights_history_pack(const lb_weights_history *h, void **buf, size_t *len)
{
  const int k = h->ntypes + 1;
  lb_packer p;
  lb_pack_begin(&p, HISTORY_TAG);
  lb_pack_i64(&p, h->ntypes);
  lb_pack_i64(&p, h->nranks);
  lb_pack_i64(&p, h->nwin);
  lb_pack_f64(&p, h->forget);
  /* oldest window first, so that a history of another length can take the
   * newest ones */
  for (int w = 0; w < h->nwin; w++) {
    const double *win = h->data + (size_t)((h->head - h->nwin + w + h->history) % h->history) * h->nranks * k;
    for (size_t i = 0; i < (size_t)h->nranks * k; i++) lb_pack_f64(&p, win[i]);
  }
  return lb_pack_end(&p, buf, len);
}

lb_err lb_weights_history_restore(lb_weights_history *h, const void *buf, size_t len, int nranks, int *kept)
{
  lb_unpacker u;
  int64_t ntypes, nr, nwin;
  size_t per;
  double *rows;
  lb_err err;

  *kept = 0;
  LB_CALL(lb_unpack_begin(&u, buf, len, HISTORY_TAG, HISTORY_WHAT));
  ntypes = lb_unpack_i64(&u);
  nr = lb_unpack_i64(&u);
  nwin = lb_unpack_i64(&u);
  (void)lb_unpack_f64(&u); /* the forgetting factor: the restarted run's own */
  if (u.failed || ntypes < 1 || ntypes > INT_MAX - 1 || nr < 0 || nr > INT_MAX || nwin < 0 || (nwin > 0 && nr == 0))
    return lb_error(LB_ERR_FILE, "state: packed %s is malformed", HISTORY_WHAT);
  per = (size_t)nr * (size_t)(ntypes + 1);
  /* the windows must be exactly what is left of the blob */
  if (per ? (size_t)nwin != (u.len - u.pos) / 8 / per || (u.len - u.pos) % (8 * per) : u.len != u.pos)
    return lb_error(LB_ERR_FILE, "state: packed %s is truncated or has extra bytes", HISTORY_WHAT);
  if (ntypes != h->ntypes)
    return lb_error(LB_ERR_ARG, "state: the packed %s has %lld load types, this run's has %d", HISTORY_WHAT, (long long)ntypes, h->ntypes);
  if (nr != nranks || nwin == 0) return LB_OK;
  rows = malloc(per * sizeof *rows);
  if (!rows) return lb_error(LB_ERR_MEM, "state: out of memory for a window of %lld ranks", (long long)nr);
  /* history_push takes rows in the fit's layout: widen each (counts | r) */
  {
    const int w = ROW_COUNTS + h->ntypes, k = h->ntypes + 1;
    double *fit = calloc((size_t)nr * w, sizeof *fit);
    err = fit ? LB_OK : lb_error(LB_ERR_MEM, "state: out of memory for a window of %lld ranks", (long long)nr);
    for (int64_t win = 0; win < nwin && !err; win++) {
      for (size_t i = 0; i < per; i++) rows[i] = lb_unpack_f64(&u);
      if (win < nwin - h->history) continue;
      for (int64_t i = 0; i < nr; i++) {
        for (int t = 0; t < h->ntypes; t++) fit[i * w + ROW_COUNTS + t] = rows[i * k + t];
        fit[i * w + ROW_R] = rows[i * k + h->ntypes];
      }
      err = history_push(h, (int)nr, h->ntypes, fit);
      if (!err) (*kept)++;
    }
    free(fit);
  }
  free(rows);
  if (!err) err = lb_unpack_end(&u, HISTORY_WHAT);
  return err;
}
