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

/* Eigenvalues of the normal matrix scaled to a unit diagonal below this
 * fraction of the largest count as zero: they are the squared singular
 * values of the column-scaled stacked matrix, so genuinely collinear
 * counts give ratios near machine epsilon (round-off of the sums), while
 * independent ones stay above it; this threshold, the square of 1e-6 on
 * the singular values, leaves seven decades between the two. */
#define LB_WEIGHTS_RCOND 1e-12

/* What one rank contributes to the fit, as doubles (counts are exact in a
 * double up to 2^53). */
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
  if (ntypes < 1 || ntypes > LB_WEIGHTS_MAX_TYPES)
    return lb_error(LB_ERR_ARG, "weights: number of load types %d must be from 1 to %d", ntypes, LB_WEIGHTS_MAX_TYPES);
  if (!(opt->trim >= 0.0 && opt->trim < 0.5))
    return lb_error(LB_ERR_ARG, "-lb_weights_trim %g: the trim fraction must be in [0, 0.5)", opt->trim);
  return LB_OK;
}

/* The rows of ranks first, first + 1, ... are checked in rank order so
 * that every rank names the same culprit. */
static lb_err check_rows(int first, int nrows, int ntypes, const double *rows)
{
  int w = ROW_COUNTS + ntypes, i, t;
  for (i = 0; i < nrows; i++) {
    const double *row = rows + (size_t)i * w;
    if (row[ROW_BADSTEP] >= 0)
      return lb_error(LB_ERR_LOAD, "weights: rank %d, step %d: compute time %g is not a finite non-negative number",
                          first + i, (int)row[ROW_BADSTEP], row[ROW_BADVALUE]);
    for (t = 0; t < ntypes; t++)
      if (row[ROW_COUNTS + t] < 0)
        return lb_error(LB_ERR_LOAD, "weights: rank %d: negative count %.0f of load type %d", first + i,
                            row[ROW_COUNTS + t], t);
  }
  return LB_OK;
}

/* Where a fit's rows are: ranks [first, first + nlocal) of nranks are held
 * by this process; comm is the ranks' communicator, or MPI_COMM_NULL when
 * this process holds every rank's rows (lb_weights_fit_table: no MPI). */
typedef struct {
  MPI_Comm comm;
  int nranks, first, nlocal;
} holder;

/* Sum x[0..n) over the processes. */
static lb_err sum_all(const holder *w, double *x, int n)
{
  if (w->comm == MPI_COMM_NULL) return LB_OK;
  LB_MPI(MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_DOUBLE, MPI_SUM, w->comm));
  return LB_OK;
}

/* Every rank's per values, in rank order, from each process's nlocal ranks. */
static lb_err gather_all(const holder *w, const double *mine, int per, double *all)
{
  if (w->comm == MPI_COMM_NULL) {
    memcpy(all, mine, (size_t)w->nlocal * per * sizeof *all);
    return LB_OK;
  }
  LB_MPI(MPI_Allgather(mine, w->nlocal * per, MPI_DOUBLE, all, w->nlocal * per, MPI_DOUBLE, w->comm));
  return LB_OK;
}

struct lb_weights_history {
  int ntypes, history;
  int nranks, nlocal;          /* ranks of the fit and rows held per window; 0 until the first window */
  double forget;
  int nwin, head;              /* windows held; slot of the next window */
  double *data;                /* history x nlocal x (ntypes counts, r): the rows this process made */
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

/* Append this window's rows (counts | r) of the nlocal ranks held here,
 * dropping the oldest window when full. */
static lb_err history_push(lb_weights_history *h, int nranks, int nlocal, int ntypes, const double *rows)
{
  int w = ROW_COUNTS + ntypes, k = ntypes + 1, i, t;
  double *slot;
  if (h->ntypes != ntypes)
    return lb_error(LB_ERR_ARG, "weights: the history holds %d load types, the fit has %d", h->ntypes, ntypes);
  if (!h->data) {
    h->data = malloc((size_t)h->history * nlocal * k * sizeof *h->data);
    if (!h->data) return lb_error(LB_ERR_MEM, "weights: out of memory for %d windows of %d ranks", h->history, nlocal);
    h->nranks = nranks;
    h->nlocal = nlocal;
  }
  if (h->nranks != nranks || h->nlocal != nlocal)
    return lb_error(LB_ERR_ARG, "weights: the history holds windows of %d ranks, the fit has %d", h->nranks, nranks);
  slot = h->data + (size_t)h->head * nlocal * k;
  for (i = 0; i < nlocal; i++) {
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

/* The minimum-norm solution of the normal equations N x = c (N = A^T A,
 * c = A^T b of a least-squares problem; n x n, row-major) over the
 * columns use[j] (all when use is NULL); x gets 0 elsewhere.  The rank
 * comes from the eigenvalues of N scaled to a unit diagonal, which the
 * columns' units (counts of hundreds against thousands) do not spoil; of
 * full rank the scaled system is solved by Cholesky, else N's own
 * pseudo-inverse on its rank largest eigenvalues gives the minimum norm
 * in the costs' units, the solution LAPACKE_dgelsd gives on A. */
static lb_err solve_normal(int n, const double *N, const double *c, const int *use, double *x, int *rank)
{
  int k = 0, idx[LB_WEIGHTS_MAX_TYPES], r = 0, i, j;
  double s[LB_WEIGHTS_MAX_TYPES * LB_WEIGHTS_MAX_TYPES], d[LB_WEIGHTS_MAX_TYPES], ev[LB_WEIGHTS_MAX_TYPES], y[LB_WEIGHTS_MAX_TYPES];

  if (n > LB_WEIGHTS_MAX_TYPES) return lb_error(LB_ERR_ARG, "weights: %d load types, at most %d", n, LB_WEIGHTS_MAX_TYPES);
  for (j = 0; j < n; j++) {
    x[j] = 0.0;
    if (!use || use[j]) idx[k++] = j;
  }
  if (rank) *rank = 0;
  if (k == 0) return LB_OK;
  for (i = 0; i < k; i++) d[i] = N[idx[i] * n + idx[i]] > 0.0 ? 1.0 / sqrt(N[idx[i] * n + idx[i]]) : 0.0;
  for (i = 0; i < k; i++)
    for (j = 0; j < k; j++) s[i * k + j] = d[i] * N[idx[i] * n + idx[j]] * d[j];
  if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'N', 'U', k, s, k, ev) != 0) return lb_error(LB_ERR_LOAD, "weights: LAPACKE_dsyev failed");
  for (i = 0; i < k; i++) r += ev[i] > LB_WEIGHTS_RCOND * ev[k - 1];
  if (rank) *rank = r;
  if (r == k) {
    for (i = 0; i < k; i++) {
      y[i] = d[i] * c[idx[i]];
      for (j = 0; j < k; j++) s[i * k + j] = d[i] * N[idx[i] * n + idx[j]] * d[j];
    }
    if (LAPACKE_dposv(LAPACK_ROW_MAJOR, 'U', k, 1, s, k, y, 1) != 0) return lb_error(LB_ERR_LOAD, "weights: LAPACKE_dposv failed");
    for (i = 0; i < k; i++) x[idx[i]] = d[i] * y[i];
    return LB_OK;
  }
  for (i = 0; i < k; i++)
    for (j = 0; j < k; j++) s[i * k + j] = N[idx[i] * n + idx[j]];
  if (LAPACKE_dsyev(LAPACK_ROW_MAJOR, 'V', 'U', k, s, k, ev) != 0) return lb_error(LB_ERR_LOAD, "weights: LAPACKE_dsyev failed");
  /* the eigenvalues ascend: the rank largest are the last; column e of s
   * is the eigenvector of ev[e] */
  for (int e = k - r; e < k; e++) {
    double vc = 0.0;
    for (i = 0; i < k; i++) vc += s[i * k + e] * c[idx[i]];
    for (i = 0; i < k; i++) x[idx[i]] += s[i * k + e] * vc / ev[e];
  }
  return LB_OK;
}

/* Lawson and Hanson's active-set non-negative least squares on the normal
 * equations (N, c, and bb = b^T b for the tolerance), as lb_nnls. */
static lb_err nnls_normal(int n, const double *N, const double *c, double bb, double *x, int *clamped, int *rank)
{
  int passive[LB_WEIGHTS_MAX_TYPES] = {0}, j, it, ok = 1;
  double z[LB_WEIGHTS_MAX_TYPES], an = 0.0, tol;
  *clamped = 0;
  LB_CALL(solve_normal(n, N, c, NULL, x, rank));
  for (j = 0; j < n; j++) ok = ok && x[j] >= 0.0;
  if (ok) return LB_OK;
  *clamped = 1;
  for (j = 0; j < n; j++) an += N[j * n + j];
  /* a gradient below this is round-off of A^T (b - A x) */
  tol = 1e-12 * sqrt(an * bb);
  for (j = 0; j < n; j++) x[j] = 0.0;
  /* Lawson-Hanson: each outer pass frees the bound variable with the
   * steepest descent; the inner loop steps back along z - x until the
   * passive variables are positive. 3n passes suffice in practice; the
   * cap only guards against cycling in degenerate data. */
  for (it = 0; it < 3 * n + 3; it++) {
    int best = -1;
    double gbest = tol;
    for (j = 0; j < n; j++) {
      double g = c[j];
      if (passive[j]) continue;
      for (int k = 0; k < n; k++) g -= N[j * n + k] * x[k];
      if (g > gbest) gbest = g, best = j;
    }
    if (best < 0) break;
    passive[best] = 1;
    for (int inner = 0; inner <= n; inner++) {
      double alpha = HUGE_VAL;
      LB_CALL(solve_normal(n, N, c, passive, z, NULL));
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
  return LB_OK;
}

lb_err lb_nnls(int m, int n, const double *a, const double *b, double *x, int *clamped)
{
  double N[LB_WEIGHTS_MAX_TYPES * LB_WEIGHTS_MAX_TYPES] = {0}, c[LB_WEIGHTS_MAX_TYPES] = {0}, bb = 0.0;
  if (n > LB_WEIGHTS_MAX_TYPES) return lb_error(LB_ERR_ARG, "weights: %d unknowns, at most %d", n, LB_WEIGHTS_MAX_TYPES);
  for (int i = 0; i < m; i++) {
    const double *ai = a + (size_t)i * n;
    for (int j = 0; j < n; j++) {
      c[j] += ai[j] * b[i];
      for (int k = 0; k < n; k++) N[j * n + k] += ai[j] * ai[k];
    }
    bb += b[i] * b[i];
  }
  return nnls_normal(n, N, c, bb, x, clamped, NULL);
}

/* Standard errors of the free costs: sigma^2 (A^T W A)^{-1} with sigma^2 the
 * weighted residual over the spare rows (m rows, n free costs, their
 * normal matrix nm, n x n). NaN when there is no spare row or the normal
 * matrix is singular. */
static void standard_errors(int m, int n, const double *nm, double rss, double *se)
{
  double inv[LB_WEIGHTS_MAX_TYPES * LB_WEIGHTS_MAX_TYPES];
  int j;
  for (j = 0; j < n; j++) se[j] = NAN;
  if (m <= n) return;
  memcpy(inv, nm, sizeof(double) * (size_t)n * n);
  if (LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'U', n, inv, n) == 0 && LAPACKE_dpotri(LAPACK_ROW_MAJOR, 'U', n, inv, n) == 0)
    for (j = 0; j < n; j++) se[j] = sqrt(rss / (m - n) * inv[(size_t)j * n + j]);
}

/* Stacked row wdw, i of the rows held here: held rank i's row of the
 * window wdw windows old in the history (without one, this window's row)
 * as (counts | r) into row, and its forgetting weight. */
static double stacked_row(const lb_weights_history *h, const double *rows, int ntypes, int wdw, int i, double *row)
{
  const int k = ntypes + 1;
  if (!h) {
    for (int t = 0; t < ntypes; t++) row[t] = rows[(size_t)i * (ROW_COUNTS + ntypes) + ROW_COUNTS + t];
    row[ntypes] = rows[(size_t)i * (ROW_COUNTS + ntypes) + ROW_R];
    return 1.0;
  }
  memcpy(row, h->data + ((size_t)((h->head - 1 - wdw + 2 * h->history) % h->history) * h->nlocal + i) * k, sizeof(double) * k);
  return pow(h->forget, wdw);
}

/* Offsets into the reduced sums of a fit over T types: the normal matrix
 * (T x T), A^T b, b^T b, the stacked cells of each type (which types are
 * present), this window's cells of each type. */
#define NE_N 0
#define NE_C(T) ((T) * (T))
#define NE_BB(T) (NE_C(T) + (T))
#define NE_CELLS(T) (NE_BB(T) + 1)
#define NE_WINDOW(T) (NE_CELLS(T) + (T))
#define NE_LEN(T) (NE_WINDOW(T) + (T))

/* The forgetting-weighted normal equations of the stacked rows held here,
 * summed over the processes: T^2 + 3 T + 1 numbers, one reduction. */
static lb_err normal_equations(const holder *w, int T, const double *rows, const lb_weights_history *h, double *ne)
{
  const int nwin = h ? h->nwin : 1;
  double row[LB_WEIGHTS_MAX_TYPES + 1];
  memset(ne, 0, sizeof(double) * NE_LEN(T));
  for (int wdw = 0; wdw < nwin; wdw++)
    for (int i = 0; i < w->nlocal; i++) {
      const double f = stacked_row(h, rows, T, wdw, i, row);
      for (int j = 0; j < T; j++) {
        for (int k = 0; k < T; k++) ne[NE_N + j * T + k] += f * row[j] * row[k];
        ne[NE_C(T) + j] += f * row[j] * row[T];
        ne[NE_CELLS(T) + j] += row[j];
      }
      ne[NE_BB(T)] += f * row[T] * row[T];
    }
  for (int i = 0; i < w->nlocal; i++)
    for (int j = 0; j < T; j++) ne[NE_WINDOW(T) + j] += rows[(size_t)i * (ROW_COUNTS + T) + ROW_COUNTS + j];
  return sum_all(w, ne, NE_LEN(T));
}

/* The forgetting-weighted squared residual of the held stacked rows for
 * the costs x (ntypes values), summed over the processes with the SMAPE
 * terms of this window's ranks (predicted loads pred, measured loads). */
static lb_err residuals(const holder *w, int T, const double *rows, const lb_weights_history *h, const double *x, const double *pred,
                        const double *load, double *rss, double *sm)
{
  const int nwin = h ? h->nwin : 1;
  double row[LB_WEIGHTS_MAX_TYPES + 1], s[2] = {0.0, 0.0};
  for (int wdw = 0; wdw < nwin; wdw++)
    for (int i = 0; i < w->nlocal; i++) {
      const double f = stacked_row(h, rows, T, wdw, i, row);
      double p = 0.0;
      for (int j = 0; j < T; j++) p += row[j] * x[j];
      s[0] += f * (p - row[T]) * (p - row[T]);
    }
  for (int i = 0; i < w->nlocal; i++) {
    const double p = pred[i], m = load[i];
    if (fabs(p) + fabs(m) > 0.0) s[1] += fabs(p - m) / ((fabs(p) + fabs(m)) / 2.0);
  }
  LB_CALL(sum_all(w, s, 2));
  *rss = s[0];
  *sm = s[1];
  return LB_OK;
}

/* Solve the reduced normal equations over the present types and fill
 * coef, rank and the flags of the solve; x and the present types' normal
 * matrix nm are left for the residual and the standard errors. */
static lb_err solve(int T, const double *ne, int npresent, const int *present, double *nm, double *x, lb_weights_result *res)
{
  double c[LB_WEIGHTS_MAX_TYPES];
  int clamped = 0, rank = 0;
  for (int j = 0; j < npresent; j++) {
    c[j] = ne[NE_C(T) + present[j]];
    for (int k = 0; k < npresent; k++) nm[j * npresent + k] = ne[NE_N + present[j] * T + present[k]];
  }
  LB_CALL(nnls_normal(npresent, nm, c, ne[NE_BB(T)], x, &clamped, &rank));
  res->rank = rank;
  if (rank < npresent) res->flags |= LB_WEIGHTS_RANK_DEFICIENT;
  if (clamped) res->flags |= LB_WEIGHTS_CLAMPED;
  for (int j = 0; j < npresent; j++) res->coef[present[j]] = x[j];
  return LB_OK;
}

/* The fit on the rows held here (w), this window's: every process has the
 * same result.  Costs O(H nlocal T^2) here, and three reductions of at
 * most T^2 + 3 T + 1 numbers and two gathers of one number per rank (the
 * result's per-rank loads) over the processes. */
static lb_err fit_rows(const holder *w, int ntypes, const double *rows, const lb_weights_options *opt, lb_weights_history *hist,
                       lb_weights_result *res)
{
  const int T = ntypes, rw = ROW_COUNTS + ntypes, nranks = w->nranks;
  int npresent = 0, present[LB_WEIGHTS_MAX_TYPES], change = 0, known = 1, i, t;
  double win[2] = {0.0, 0.0}, mean, cells = 0.0, weighted = 0.0, rss, sm;
  double ne[NE_LEN(LB_WEIGHTS_MAX_TYPES)], nm[LB_WEIGHTS_MAX_TYPES * LB_WEIGHTS_MAX_TYPES], x[LB_WEIGHTS_MAX_TYPES],
    se[LB_WEIGHTS_MAX_TYPES], *mine;
  lb_err err;

  if (T > LB_WEIGHTS_MAX_TYPES) return lb_error(LB_ERR_ARG, "weights: %d load types, at most %d", T, LB_WEIGHTS_MAX_TYPES);
  LB_CALL(alloc_result(nranks, ntypes, opt, res));
  for (i = 0; i < w->nlocal; i++) {
    win[0] += rows[(size_t)i * rw + ROW_R];
    win[1] += rows[(size_t)i * rw + ROW_NSTEPS] == 0;
  }
  if ((err = sum_all(w, win, 2))) goto fail;
  mean = win[0] / nranks;
  if (win[1] > 0) res->flags |= LB_WEIGHTS_EMPTY_WINDOW;
  if (res->flags & LB_WEIGHTS_EMPTY_WINDOW) return LB_OK;
  if (mean == 0.0) {
    res->flags |= LB_WEIGHTS_ZERO_TIME;
    return LB_OK;
  }
  /* this window's loads and predictions of the ranks held here, then of all */
  if (!(mine = malloc(2 * ((size_t)w->nlocal + 1) * sizeof *mine))) {
    err = lb_error(LB_ERR_MEM, "weights: out of memory for %d ranks", w->nlocal);
    goto fail;
  }
  for (i = 0; i < w->nlocal; i++) mine[i] = rows[(size_t)i * rw + ROW_R] / mean;
  err = gather_all(w, mine, 1, res->load);
  if (!err && nranks == 1) res->flags |= LB_WEIGHTS_SINGLE_RANK;
  if (err || nranks == 1) goto done;
  if (hist && (err = history_push(hist, nranks, w->nlocal, ntypes, rows))) goto done;
  if ((err = normal_equations(w, T, rows, hist, ne))) goto done;
  res->rows = nranks * (hist ? hist->nwin : 1);
  res->windows = hist ? hist->nwin : 1;
  for (t = 0; t < T; t++)
    if (ne[NE_CELLS(T) + t] > 0.0) present[npresent++] = t;
  if (npresent < ntypes) res->flags |= LB_WEIGHTS_ABSENT_TYPE;
  if (npresent == 0) goto done;
  if (res->rows < npresent) res->flags |= LB_WEIGHTS_UNDERDETERMINED;
  if ((err = solve(T, ne, npresent, present, nm, x, res))) goto done;
  for (i = 0; i < w->nlocal; i++) {
    double p = 0.0;
    for (t = 0; t < T; t++) p += rows[(size_t)i * rw + ROW_COUNTS + t] * res->coef[t];
    mine[w->nlocal + i] = p / mean;
  }
  if ((err = residuals(w, T, rows, hist, res->coef, mine + w->nlocal, mine, &rss, &sm))) goto done;
  if ((err = gather_all(w, mine + w->nlocal, 1, res->predicted))) goto done;
  res->residual = sqrt(rss);
  standard_errors(res->rows, npresent, nm, rss, se);
  for (i = 0; i < npresent; i++) res->cost_stderr[present[i]] = res->rank == npresent ? se[i] : NAN;
  /* Loads are times divided by their mean, so the percentage error of loads
   * equals that of times per rank. */
  res->smape = 100.0 * sm / nranks;
  /* Mean cell weight 1 over this window's cells. */
  for (i = 0; i < npresent; i++) {
    cells += ne[NE_WINDOW(T) + present[i]];
    weighted += ne[NE_WINDOW(T) + present[i]] * res->coef[present[i]];
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
  free(mine);
  if (!err) return LB_OK;
fail:
  lb_weights_result_free(res);
  return err;
}

lb_err lb_weights_fit_table(int nranks, const int *nsteps, const double *const *times, int ntypes,
                            const int64_t *counts, const lb_weights_options *opt, lb_weights_history *hist,
                            lb_weights_result *res)
{
  const holder all = {MPI_COMM_NULL, nranks, 0, nranks};
  int w = ROW_COUNTS + ntypes, i;
  double *rows;
  lb_err err = LB_OK;

  LB_CALL(check_args(ntypes, opt));
  if (nranks < 1) return lb_error(LB_ERR_ARG, "weights: number of ranks %d must be at least 1", nranks);
  rows = malloc((size_t)nranks * w * sizeof *rows);
  if (!rows) return lb_error(LB_ERR_MEM, "weights: out of memory for %d ranks", nranks);
  for (i = 0; i < nranks && !err; i++)
    err = make_row(nsteps[i], times[i], ntypes, counts + (size_t)i * ntypes, opt->trim, rows + (size_t)i * w);
  if (!err) err = check_rows(0, nranks, ntypes, rows);
  if (!err) err = fit_rows(&all, ntypes, rows, opt, hist, res);
  free(rows);
  return err;
}

lb_err lb_weights_fit(MPI_Comm comm, int nsteps, const double *times, int ntypes, const int64_t *counts,
                      const lb_weights_options *opt, lb_weights_history *hist, lb_weights_result *res)
{
  int w = ROW_COUNTS + ntypes, size, rank, flag[2];
  double row[ROW_COUNTS + LB_WEIGHTS_MAX_TYPES];
  holder me;
  lb_err err;

  LB_CALL(check_args(ntypes, opt));
  LB_MPI(MPI_Comm_size(comm, &size));
  LB_MPI(MPI_Comm_rank(comm, &rank));
  me = (holder){comm, size, rank, 1};
  err = make_row(nsteps, times, ntypes, counts, opt->trim, row);
  /* A local failure must not leave the other ranks waiting; the lowest
   * rank with a bad time or count is named alike on every rank. */
  flag[0] = !err;
  flag[1] = !err && check_rows(rank, 1, ntypes, row) ? rank : INT_MAX;
  LB_MPI(MPI_Allreduce(MPI_IN_PLACE, flag, 2, MPI_INT, MPI_MIN, comm));
  if (!flag[0]) return err ? err : lb_error(LB_ERR_MEM, "weights: out of memory on another rank");
  if (flag[1] < INT_MAX) {
    LB_MPI(MPI_Bcast(row, w, MPI_DOUBLE, flag[1], comm));
    return check_rows(flag[1], 1, ntypes, row);
  }
  return fit_rows(&me, ntypes, row, opt, hist, res);
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
  const size_t per = (size_t)h->nlocal * (h->ntypes + 1);
  lb_packer p;

  lb_pack_begin(&p, HISTORY_TAG);
  lb_pack_i64(&p, h->ntypes);
  lb_pack_i64(&p, h->nranks);
  lb_pack_i64(&p, h->nlocal);
  lb_pack_i64(&p, h->nwin);
  lb_pack_f64(&p, h->forget);
  /* oldest window first, so that a history of another length can take the
   * newest ones */
  for (int w = 0; w < h->nwin; w++) {
    const double *win = h->data + (size_t)((h->head - h->nwin + w + h->history) % h->history) * per;
    for (size_t i = 0; i < per; i++) lb_pack_f64(&p, win[i]);
  }
  return lb_pack_end(&p, buf, len);
}

lb_err lb_weights_history_restore(lb_weights_history *h, const void *buf, size_t len, int nranks, int *kept)
{
  lb_unpacker u;
  int64_t ntypes, nr, nrows, nwin;
  size_t per;
  lb_err err;

  *kept = 0;
  LB_CALL(lb_unpack_begin(&u, buf, len, HISTORY_TAG, HISTORY_WHAT));
  ntypes = lb_unpack_i64(&u);
  nr = lb_unpack_i64(&u);
  nrows = lb_unpack_i64(&u);
  nwin = lb_unpack_i64(&u);
  (void)lb_unpack_f64(&u); /* the forgetting factor: the restarted run's own */
  if (u.failed || ntypes < 1 || ntypes > INT_MAX - 1 || nr < 0 || nr > INT_MAX || nrows < 0 || nrows > nr || nwin < 0 || (nwin > 0 && nrows == 0))
    return lb_error(LB_ERR_FILE, "state: packed %s is malformed", HISTORY_WHAT);
  per = (size_t)nrows * (size_t)(ntypes + 1);
  /* the windows must be exactly what is left of the blob */
  if (per ? (size_t)nwin != (u.len - u.pos) / 8 / per || (u.len - u.pos) % (8 * per) : u.len != u.pos)
    return lb_error(LB_ERR_FILE, "state: packed %s is truncated or has extra bytes", HISTORY_WHAT);
  if (ntypes != h->ntypes)
    return lb_error(LB_ERR_ARG, "state: the packed %s has %lld load types, this run's has %d", HISTORY_WHAT, (long long)ntypes, h->ntypes);
  if (nr != nranks || nwin == 0) return LB_OK;
  /* history_push takes rows in the fit's layout: widen each (counts | r) */
  {
    const int w = ROW_COUNTS + h->ntypes, k = h->ntypes + 1;
    double *fit = calloc((size_t)nrows * w, sizeof *fit);
    err = fit ? LB_OK : lb_error(LB_ERR_MEM, "state: out of memory for a window of %lld rows", (long long)nrows);
    for (int64_t win = 0; win < nwin && !err; win++) {
      const int skip = win < nwin - h->history;
      for (int64_t i = 0; i < nrows; i++)
        for (int t = 0; t < k; t++) {
          const double v = lb_unpack_f64(&u);
          fit[(size_t)i * w + (t < h->ntypes ? ROW_COUNTS + t : ROW_R)] = v;
        }
      if (skip) continue;
      err = history_push(h, (int)nr, (int)nrows, h->ntypes, fit);
      if (!err) (*kept)++;
    }
    free(fit);
  }
  if (!err) err = lb_unpack_end(&u, HISTORY_WHAT);
  return err;
}
