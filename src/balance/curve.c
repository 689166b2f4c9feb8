#include "balance/lbcurve.h"
#include "balance/impl/lbcall.h"

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

lb_err lb_curve_result_alloc(int nparts, lb_curve_result *res)
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
  LB_CALL(lb_curve_result_alloc(nparts, res));
  err = cut(comm, n, w, p, nparts, bound, res);
  if (err) lb_curve_result_free(res);
  return err;
}

lb_err lb_curve_sfc(MPI_Comm comm, int64_t n, const double *w, int nparts, lb_curve_result *res)
{
  return lb_curve_groups(comm, n, w, nparts, nparts, res);
}

lb_err lb_curve_groups(MPI_Comm comm, int64_t n, const double *w, int nparts, int ngroups, lb_curve_result *res)
{
  piece p;
  double *bound;
  lb_err err;
  int j;

  LB_CALL(check_nparts(nparts));
  if (ngroups < 1 || ngroups > nparts) return lb_error(LB_ERR_ARG, "curve: %d groups of %d parts", ngroups, nparts);
  LB_CALL(locate(comm, n, w, &p));
  bound = malloc(((size_t)ngroups + 1) * sizeof *bound);
  if (!bound) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", ngroups);
  /* group j starts where sfc's cut before its first part lies, so that
   * with one part per group this is sfc's split to the last bit */
  for (j = 0; j <= ngroups; j++) bound[j] = p.total * lb_curve_group_first(nparts, ngroups, j) / nparts;
  err = cut_at(comm, n, w, &p, ngroups, bound, res);
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

lb_err lb_curve_piece(MPI_Comm comm, int64_t n, const double *w, int64_t *first, int64_t *ncells, double *weight)
{
  piece p = {0, 0, 0.0, 0.0, 0}; /* set by locate, which GCC cannot see */
  LB_CALL(locate(comm, n, w, &p));
  *first = p.first;
  *ncells = p.ncells;
  *weight = piece_sum(&p, w, 0, n);
  return LB_OK;
}

lb_err lb_curve_shift_bounds(int nparts, const double *load, const double *pw, double penalty, double *bound)
{
  double mean = 0.0, lj = 0.0, li = 0.0, pi = 0.0;
  int i, j;
  if (nparts < 1) return lb_error(LB_ERR_ARG, "curve: number of parts %d must be at least 1", nparts);
  if (!(penalty >= 1.0) || isinf(penalty))
    return lb_error(LB_ERR_ARG, "-lb_penalty %g must be finite and at least 1", penalty);
  for (i = 0; i < nparts; i++) {
    if (!(load[i] >= 0.0) || isinf(load[i]))
      return lb_error(LB_ERR_LOAD, "curve: load %g of part %d is negative or not finite", load[i], i);
    mean += load[i] / nparts;
  }
  bound[0] = 0.0;
  for (i = 0; i < nparts; i++) bound[i + 1] = bound[i] + pw[i];
  if (mean == 0.0) return LB_OK; /* nothing measured: the cuts stay */
  /* Offset j has s_j = L_j - j with L_j = sum_{i<j} l_i, l_i = load_i /
   * mean. The walk moves it over cells with shares l_i w_k / W_i until the
   * penalised counter s_j - f * (shares passed) changes sign: its stop is
   * the share position T_j = L_j - s_j / f, which lies in the part i with
   * L_i <= T_j < L_{i+1}, at weight W_{<i} + (T_j - L_i) / l_i * W_i. T_j
   * grows with j, so one sweep maps every offset; parts of load 0 hold no
   * share and are passed over. */
  double *pstart = malloc(((size_t)nparts + 1) * sizeof *pstart);
  if (!pstart) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
  memcpy(pstart, bound, ((size_t)nparts + 1) * sizeof *pstart);
  for (j = 1, i = 0; j < nparts; j++) {
    lj += load[j - 1] / mean;
    double t = lj - (lj - j) / penalty;
    while (i < nparts && (li + load[i] / mean <= t || load[i] == 0.0)) li += load[i] / mean, pi = pstart[i + 1], i++;
    bound[j] = i == nparts ? pstart[nparts] : pw[i] == 0.0 ? pi : pi + (t - li) / (load[i] / mean) * pw[i];
  }
  free(pstart);
  return LB_OK;
}

/* lb_curve_shift on the curve already located in p (one locate's
 * collectives per shift, also from the shifter). */
static lb_err shift_located(MPI_Comm comm, int64_t n, const double *w, const piece *pp, int nparts, const int64_t *cur_counts,
                            const double *load, double penalty, lb_curve_result *res)
{
  piece p = *pp;
  double *buf, *pw, *pw_start, *lstart, *bound, mean = 0.0;
  lb_err err;
  int q, i, j;

  buf = malloc(4 * ((size_t)nparts + 1) * sizeof *buf);
  if (!buf) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
  pw = buf, pw_start = pw + nparts + 1, lstart = pw_start + nparts + 1, bound = lstart + nparts + 1;
  err = part_weights(comm, n, w, &p, nparts, cur_counts, pw);
  if (!err) err = lb_curve_shift_bounds(nparts, load, pw, penalty, bound);
  if (err) {
    free(buf);
    return err;
  }
  for (q = 0; q < nparts; q++) mean += load[q] / nparts;
  pw_start[0] = lstart[0] = 0.0;
  for (q = 0; q < nparts; q++) {
    pw_start[q + 1] = pw_start[q] + pw[q];
    lstart[q + 1] = lstart[q] + (mean > 0.0 ? load[q] / mean : 1.0);
  }
  bound[nparts] = p.total;
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
      share = pw[i] == 0.0 ? lstart[i] : lstart[i] + (lstart[i + 1] - lstart[i]) * (x - pw_start[i]) / pw[i];
      res->s_before[j] = lstart[j] - j;
      res->s_after[j] = res->s_before[j] + penalty * (share - lstart[j]);
    }
  }
  free(buf);
  return err;
}

lb_err lb_curve_shift(MPI_Comm comm, int64_t n, const double *w, int nparts, const int64_t *cur_counts,
                      const double *load, double penalty, lb_curve_result *res)
{
  piece p;
  LB_CALL(check_nparts(nparts));
  LB_CALL(locate(comm, n, w, &p));
  LB_CALL(check_partition(&p, nparts, cur_counts));
  return shift_located(comm, n, w, &p, nparts, cur_counts, load, penalty, res);
}

/* The result for a partition given by its cell counts. */
static lb_err result_of_counts(MPI_Comm comm, int64_t n, const double *w, const piece *p, int nparts,
                               const int64_t *counts, lb_curve_result *res)
{
  double max = 0.0;
  lb_err err;
  int q;
  LB_CALL(lb_curve_result_alloc(nparts, res));
  err = part_weights(comm, n, w, p, nparts, counts, res->part_load);
  if (err) {
    lb_curve_result_free(res);
    return err;
  }
  res->ncells = p->ncells;
  res->total = p->total;
  for (q = 0; q < nparts; q++) {
    res->counts[q] = counts[q];
    res->cuts[q + 1] = res->cuts[q] + counts[q];
    if (res->part_load[q] > max) max = res->part_load[q];
  }
  res->quality = max > 0.0 ? p->total / nparts / max : 1.0;
  return LB_OK;
}

lb_err lb_curve_shifter_init(lb_curve_shifter *s, int nparts, double penalty)
{
  memset(s, 0, sizeof *s);
  LB_CALL(check_nparts(nparts));
  if (!(penalty >= 1.0) || isinf(penalty))
    return lb_error(LB_ERR_ARG, "-lb_penalty %g must be finite and at least 1", penalty);
  s->nparts = nparts;
  s->penalty = penalty;
  s->best_counts = calloc((size_t)nparts, sizeof *s->best_counts);
  if (!s->best_counts) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
  return LB_OK;
}

void lb_curve_shifter_free(lb_curve_shifter *s)
{
  free(s->best_counts);
  s->best_counts = NULL;
}

lb_err lb_curve_shifter_step(lb_curve_shifter *s, MPI_Comm comm, int64_t n, const double *w, const int64_t *cur_counts,
                             const double *measured, lb_curve_result *res, lb_curve_shift_action *action)
{
  const int P = s->nparts;
  double sum = 0.0, max = 0.0, mo;
  piece p;
  int q;

  if (s->steps == 0) {
    LB_CALL(lb_curve_sfc(comm, n, w, P, res));
    s->steps++;
    *action = LB_SHIFT_SFC;
    return LB_OK;
  }
  for (q = 0; q < P; q++) {
    if (!(measured[q] >= 0.0) || isinf(measured[q]))
      return lb_error(LB_ERR_LOAD, "curve: load %g of part %d is negative or not finite", measured[q], q);
    sum += measured[q];
    max = measured[q] > max ? measured[q] : max;
  }
  mo = sum > 0.0 ? max * P / sum : 1.0;
  LB_CALL(locate(comm, n, w, &p));
  LB_CALL(check_partition(&p, P, cur_counts));
  if (!s->have_best || s->best_ncells != p.ncells || s->best_total != p.total) {
    /* a new curve (adaptation): nothing measured before compares */
    s->have_best = 1;
    s->settled = 0;
    s->best_max_over_avg = mo;
    s->best_ncells = p.ncells;
    s->best_total = p.total;
    memcpy(s->best_counts, cur_counts, (size_t)P * sizeof *cur_counts);
  } else if (mo < s->best_max_over_avg) {
    s->best_max_over_avg = mo;
    memcpy(s->best_counts, cur_counts, (size_t)P * sizeof *cur_counts);
  } else {
    s->settled = 1;
  }
  s->steps++;
  if (s->settled) {
    *action = LB_SHIFT_BEST;
    return result_of_counts(comm, n, w, &p, P, s->best_counts, res);
  }
  *action = LB_SHIFT_SHIFTED;
  return shift_located(comm, n, w, &p, P, cur_counts, measured, s->penalty, res);
}

int64_t lb_curve_migrated(int nparts, const int64_t *old_counts, const int64_t *new_counts)
{
  int64_t a = 0, b = 0, moved = 0;
  for (int q = 0; q < nparts; q++) {
    moved += old_counts[q] - lb_curve_kept(a, a + old_counts[q], b, b + new_counts[q]);
    a += old_counts[q];
    b += new_counts[q];
  }
  return moved;
}

int64_t lb_curve_most_moved(int nparts, const int64_t *old_counts, const int64_t *new_counts)
{
  int64_t a = 0, b = 0, most = 0;
  for (int q = 0; q < nparts; q++) {
    const int64_t kept = lb_curve_kept(a, a + old_counts[q], b, b + new_counts[q]), m = old_counts[q] + new_counts[q] - 2 * kept;
    most = m > most ? m : most;
    a += old_counts[q];
    b += new_counts[q];
  }
  return most;
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
