#include "lbcurve.h"
#include "lbcall.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Where this rank's piece sits on the whole curve. */
typedef struct {
  int64_t first;  /* global index of the first local cell */
  int64_t ncells; /* cells on the whole curve */
  double before;  /* weight of all cells before the piece */
  double total;   /* weight of the whole curve */
  int unit;       /* every weight is 0: cut by cell count instead */
} piece;

static double cell_weight(const piece *p, const double *w, int64_t k) { return p->unit ? 1.0 : w[k]; }

/* Sum of w[0..n) with four running sums: a single sum is bound by the
 * latency of one addition per cell, four let the loop run at memory speed.
 * *min gets the smallest weight, so that one test after the loop catches a
 * negative weight (NaN and infinity show in the sum). */
static double block_sum(const double *w, int64_t n, double *min)
{
  double a[4] = {0.0, 0.0, 0.0, 0.0}, m[4] = {HUGE_VAL, HUGE_VAL, HUGE_VAL, HUGE_VAL};
  int64_t k = 0;
  for (; k + 4 <= n; k += 4)
    for (int i = 0; i < 4; i++) {
      a[i] += w[k + i];
      m[i] = w[k + i] < m[i] ? w[k + i] : m[i];
    }
  for (; k < n; k++) {
    a[0] += w[k];
    m[0] = w[k] < m[0] ? w[k] : m[0];
  }
  *min = fmin(fmin(m[0], m[1]), fmin(m[2], m[3]));
  return (a[0] + a[1]) + (a[2] + a[3]);
}

/* Cells the cut walk takes at a time: a block is summed quickly and only
 * walked cell by cell if a bound falls inside it. */
#define CURVE_BLOCK 1024

static double piece_sum(const piece *p, const double *w, int64_t k0, int64_t k1)
{
  double min;
  return p->unit ? (double)(k1 - k0) : block_sum(w + k0, k1 - k0, &min);
}

/* Locate the piece with one MPI_Exscan and one MPI_Allreduce; a bad weight
 * anywhere makes every rank fail with the lowest bad global index. */
static lb_err locate(MPI_Comm comm, int64_t n, const double *w, piece *p)
{
  double local[3] = {(double)n, 0.0, 0.0}, prefix[3] = {0.0, 0.0, 0.0}, global[3];
  double firstbad = -1.0;
  int64_t k;
  int rank;

  if (n < 0) return lb_error(LB_ERR_ARG, "curve: negative number of local cells %lld", (long long)n);
  double min;
  local[1] = block_sum(w, n, &min);
  if (!(min >= 0.0) || !isfinite(local[1])) {
    for (k = 0; k < n && w[k] >= 0.0 && !isinf(w[k]); k++) continue;
    if (k < n) {
      firstbad = (double)k;
      local[1] = 0.0;
      local[2] = 1.0;
    }
  }
  LB_MPI(MPI_Comm_rank(comm, &rank));
  LB_MPI(MPI_Exscan(local, prefix, 2, MPI_DOUBLE, MPI_SUM, comm));
  if (rank == 0) prefix[0] = prefix[1] = 0.0; /* MPI leaves rank 0's result undefined */
  LB_MPI(MPI_Allreduce(local, global, 3, MPI_DOUBLE, MPI_SUM, comm));
  if (global[2] > 0.0) {
    double mine = firstbad >= 0 ? prefix[0] + firstbad : HUGE_VAL, lowest;
    LB_MPI(MPI_Allreduce(&mine, &lowest, 1, MPI_DOUBLE, MPI_MIN, comm));
    return lb_error(LB_ERR_LOAD, "curve: weight of cell %.0f is negative or not finite", lowest);
  }
  if (!isfinite(global[1])) return lb_error(LB_ERR_LOAD, "curve: the sum of the cell weights overflows");
  p->first = (int64_t)prefix[0];
  p->ncells = (int64_t)global[0];
  p->unit = global[1] == 0.0;
  p->before = p->unit ? prefix[0] : prefix[1];
  p->total = p->unit ? global[0] : global[1];
  return LB_OK;
}

static lb_err alloc_result(int nparts, lb_curve_result *res)
{
  memset(res, 0, sizeof *res);
  res->nparts = nparts;
  res->cuts = calloc((size_t)nparts + 1, sizeof *res->cuts);
  res->counts = calloc((size_t)nparts, sizeof *res->counts);
  res->part_load = calloc((size_t)nparts, sizeof *res->part_load);
  if (!res->cuts || !res->counts || !res->part_load) {
    lb_curve_result_free(res);
    return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
  }
  return LB_OK;
}

/* Cut j (0 < j < nparts) is the number of cells whose midpoint lies below
 * bound[j] on the cumulative-weight axis. That count and the weight left of
 * the cut are sums over the pieces, so one MPI_Allreduce assembles them; a
 * piece adds 0 for bounds before it and all its cells for bounds after it.
 * bound must be non-decreasing. */
static lb_err cut(MPI_Comm comm, int64_t n, const double *w, const piece *p, int nparts, const double *bound,
                    lb_curve_result *res)
{
  double *c = calloc(2 * (size_t)(nparts + 1), sizeof *c), *left, s = p->before, max = 0.0;
  int64_t k0, k1, k;
  int j = 1, q;

  if (!c) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
  left = c + nparts + 1;
  for (k0 = 0; k0 < n && j < nparts; k0 = k1) {
    k1 = n - k0 > CURVE_BLOCK ? k0 + CURVE_BLOCK : n;
    double bs = piece_sum(p, w, k0, k1);
    /* Every midpoint in the block is at most s + bs. */
    if (s + bs < bound[j]) {
      s += bs;
      continue;
    }
    for (k = k0; k < k1; k++) {
      double wk = cell_weight(p, w, k), mid = s + 0.5 * wk;
      while (j < nparts && bound[j] <= mid) {
        c[j] = (double)k;
        left[j] = s - p->before;
        j++;
      }
      s += wk;
    }
  }
  for (; j < nparts; j++) {
    c[j] = (double)n;
    left[j] = s - p->before;
  }
  if (MPI_Allreduce(MPI_IN_PLACE, c, 2 * (nparts + 1), MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS) {
    free(c);
    return lb_error(LB_ERR_MPI, "curve: MPI_Allreduce of the cut positions failed");
  }
  res->ncells = p->ncells;
  res->total = p->total;
  for (j = 1; j < nparts; j++) res->cuts[j] = (int64_t)c[j];
  res->cuts[0] = 0;
  res->cuts[nparts] = p->ncells;
  left[0] = 0.0;
  left[nparts] = p->total;
  for (q = 0; q < nparts; q++) {
    res->counts[q] = res->cuts[q + 1] - res->cuts[q];
    res->part_load[q] = left[q + 1] - left[q];
    if (res->part_load[q] > max) max = res->part_load[q];
  }
  res->quality = max > 0.0 ? p->total / nparts / max : 1.0;
  free(c);
  return LB_OK;
}

static lb_err check_nparts(int nparts)
{
  if (nparts < 1) return lb_error(LB_ERR_ARG, "curve: number of parts %d must be at least 1", nparts);
  return LB_OK;
}

/* Cut at the given bounds; owns nothing, frees the result on failure. */
static lb_err cut_at(MPI_Comm comm, int64_t n, const double *w, const piece *p, int nparts, const double *bound,
                       lb_curve_result *res)
{
  lb_err err;
  LB_CALL(alloc_result(nparts, res));
  err = cut(comm, n, w, p, nparts, bound, res);
  if (err) lb_curve_result_free(res);
  return err;
}

lb_err lb_curve_sfc(MPI_Comm comm, int64_t n, const double *w, int nparts, lb_curve_result *res)
{
  piece p;
  double *bound;
  lb_err err;
  int j;

  LB_CALL(check_nparts(nparts));
  LB_CALL(locate(comm, n, w, &p));
  bound = malloc(((size_t)nparts + 1) * sizeof *bound);
  if (!bound) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
  for (j = 0; j <= nparts; j++) bound[j] = p.total * j / nparts;
  err = cut_at(comm, n, w, &p, nparts, bound, res);
  free(bound);
  return err;
}

lb_err lb_curve_targets(MPI_Comm comm, int64_t n, const double *w, int nparts, const double *target,
                          lb_curve_result *res)
{
  piece p;
  double *bound, sum = 0.0;
  lb_err err;
  int q;

  LB_CALL(check_nparts(nparts));
  for (q = 0; q < nparts; q++) {
    if (!isfinite(target[q])) return lb_error(LB_ERR_LOAD, "curve: target load of part %d is not finite", q);
    if (target[q] > 0.0) sum += target[q];
  }
  LB_CALL(locate(comm, n, w, &p));
  bound = malloc(((size_t)nparts + 1) * sizeof *bound);
  if (!bound) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
  /* Targets are rescaled to the curve's total so that rounding in the
   * method's loads cannot leave cells without a part. */
  bound[0] = 0.0;
  for (q = 0; q < nparts; q++) {
    double t = sum > 0.0 ? (target[q] > 0.0 ? target[q] : 0.0) : 1.0;
    bound[q + 1] = bound[q] + t;
  }
  for (q = 0; q <= nparts; q++) bound[q] = p.total * (bound[q] / bound[nparts]);
  err = cut_at(comm, n, w, &p, nparts, bound, res);
  free(bound);
  return err;
}

/* Weight of every current part, from the pieces that hold its cells. */
static lb_err part_weights(MPI_Comm comm, int64_t n, const double *w, const piece *p, int nparts,
                           const int64_t *cur_counts, double *pw)
{
  int64_t start = 0;
  int q;
  for (q = 0; q < nparts; q++) {
    int64_t lo = start > p->first ? start - p->first : 0, hi = start + cur_counts[q] - p->first;
    if (hi > n) hi = n;
    pw[q] = hi > lo ? piece_sum(p, w, lo, hi) : 0.0;
    start += cur_counts[q];
  }
  LB_MPI(MPI_Allreduce(MPI_IN_PLACE, pw, nparts, MPI_DOUBLE, MPI_SUM, comm));
  return LB_OK;
}

/* A current partition must cover the curve exactly. */
static lb_err check_partition(const piece *p, int nparts, const int64_t *cur_counts)
{
  int64_t sum = 0;
  int q;
  for (q = 0; q < nparts; q++) {
    if (cur_counts[q] < 0) return lb_error(LB_ERR_ARG, "curve: part %d has a negative cell count", q);
    sum += cur_counts[q];
  }
  if (sum != p->ncells)
    return lb_error(LB_ERR_ARG, "curve: the current partition has %lld cells, the curve %lld", (long long)sum,
                    (long long)p->ncells);
  return LB_OK;
}

lb_err lb_curve_part_loads(MPI_Comm comm, int64_t n, const double *w, int nparts, const int64_t *cur_counts,
                           double *loads)
{
  piece p;
  LB_CALL(check_nparts(nparts));
  LB_CALL(locate(comm, n, w, &p));
  LB_CALL(check_partition(&p, nparts, cur_counts));
  return part_weights(comm, n, w, &p, nparts, cur_counts, loads);
}

lb_err lb_curve_shift(MPI_Comm comm, int64_t n, const double *w, int nparts, const int64_t *cur_counts,
                        const double *load, double penalty, lb_curve_result *res)
{
  piece p;
  double *buf, *pw, *pw_start, *lstart, *bound;
  lb_err err;
  int q, i, j;

  LB_CALL(check_nparts(nparts));
  if (!(penalty >= 1.0) || isinf(penalty))
    return lb_error(LB_ERR_ARG, "-lb_penalty %g must be finite and at least 1", penalty);
  for (q = 0; q < nparts; q++) {
    if (!(load[q] >= 0.0) || isinf(load[q]))
      return lb_error(LB_ERR_LOAD, "curve: load %g of part %d is negative or not finite", load[q], q);
  }
  LB_CALL(locate(comm, n, w, &p));
  LB_CALL(check_partition(&p, nparts, cur_counts));
  buf = malloc(4 * ((size_t)nparts + 1) * sizeof *buf);
  if (!buf) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
  pw = buf, pw_start = pw + nparts + 1, lstart = pw_start + nparts + 1, bound = lstart + nparts + 1;
  err = part_weights(comm, n, w, &p, nparts, cur_counts, pw);
  if (err) {
    free(buf);
    return err;
  }
  pw_start[0] = lstart[0] = 0.0;
  for (q = 0; q < nparts; q++) {
    pw_start[q + 1] = pw_start[q] + pw[q];
    lstart[q + 1] = lstart[q] + load[q];
  }
  /* The walk stops where |s_j^k| is smallest: at the cell boundary nearest
   * to the share position T_j = L_j - s_j / penalty, i.e. at the cell whose
   * midpoint passes T_j. T_j increases with j, so one sweep maps all of them
   * to the weight axis. */
  bound[0] = 0.0;
  bound[nparts] = p.total;
  for (j = 1, i = 0; j < nparts; j++) {
    double s = lstart[j] - j, t = lstart[j] - s / penalty;
    while (i < nparts && (lstart[i + 1] <= t || load[i] == 0.0)) i++;
    if (i == nparts)
      bound[j] = p.total;
    else if (pw[i] == 0.0)
      bound[j] = pw_start[i];
    else
      bound[j] = pw_start[i] + (t - lstart[i]) / load[i] * pw[i];
  }
  err = cut_at(comm, n, w, &p, nparts, bound, res);
  if (!err) {
    res->s_before = calloc((size_t)nparts + 1, sizeof *res->s_before);
    res->s_after = calloc((size_t)nparts + 1, sizeof *res->s_after);
    if (!res->s_before || !res->s_after) {
      lb_curve_result_free(res);
      err = lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
    }
  }
  if (!err) {
    /* Map each new cut back to the share axis (part i spans [L_i, L_i + l_i)
     * there) to evaluate the penalised counter where the walk stopped. */
    double x = 0.0, share;
    for (j = 1, i = 0; j < nparts; j++) {
      x += res->part_load[j - 1];
      while (i + 1 < nparts && pw_start[i + 1] <= x) i++;
      share = pw[i] == 0.0 ? lstart[i] : lstart[i] + load[i] * (x - pw_start[i]) / pw[i];
      res->s_before[j] = lstart[j] - j;
      res->s_after[j] = res->s_before[j] + penalty * (share - lstart[j]);
    }
  }
  free(buf);
  return err;
}

int64_t lb_curve_migrated(int nparts, const int64_t *old_counts, const int64_t *new_counts)
{
  int64_t a = 0, b = 0, total = 0, kept = 0;
  int q;
  for (q = 0; q < nparts; q++) {
    int64_t lo = a > b ? a : b, hi = a + old_counts[q] < b + new_counts[q] ? a + old_counts[q] : b + new_counts[q];
    if (hi > lo) kept += hi - lo;
    a += old_counts[q];
    b += new_counts[q];
    total += old_counts[q];
  }
  return total - kept;
}

int64_t lb_curve_cut_distance(int nparts, const int64_t *cuts_a, const int64_t *cuts_b)
{
  int64_t max = 0;
  int j;
  for (j = 0; j <= nparts; j++) {
    int64_t d = cuts_a[j] > cuts_b[j] ? cuts_a[j] - cuts_b[j] : cuts_b[j] - cuts_a[j];
    if (d > max) max = d;
  }
  return max;
}

void lb_curve_result_free(lb_curve_result *res)
{
  free(res->cuts);
  free(res->counts);
  free(res->part_load);
  free(res->s_before);
  free(res->s_after);
  res->cuts = res->counts = NULL;
  res->part_load = res->s_before = res->s_after = NULL;
}
