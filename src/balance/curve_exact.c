/* The exact 1D partition (chains-on-chains: the least possible largest
 * part over contiguous cuts of whole tasks) and HierSFC, Lieber and Nagel
 * 2014's hierarchy of sfc's prefix-sum split and exact partitions inside
 * groups of parts (lbcurve.h). */
#include "balance/lbcurve.h"
#include "balance/impl/lbcall.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The tag of a group's pieces on their way to its first process. */
#define HIER_TAG 4417

/* S[0..m]: the prefix sums of w, or of ones where unit is set (every
 * weight 0: the parts are cut by task count, as the curve's cuts are). */
static void prefix_sums(int64_t m, const double *w, int unit, double *S)
{
  S[0] = 0.0;
  for (int64_t i = 0; i < m; i++) S[i + 1] = S[i] + (unit ? 1.0 : w[i]);
}

/* The greedy probe of bottleneck B (Pinar and Aykanat 2004): each part in
 * turn takes the most tasks that keep its load S[e] - S[start] <= B, by
 * binary search on the prefix sums (monotone in e in floating point too,
 * S being non-decreasing). end[k] is part k's end; returns whether the K
 * parts reach the end of the chain. */
static int probe(const double *S, int64_t m, int K, double B, int64_t *end)
{
  int64_t start = 0;
  for (int k = 0; k < K; k++) {
    int64_t lo = start, hi = m;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (S[mid] - S[start] <= B) lo = mid;
      else hi = mid - 1;
    }
    end[k] = start = lo;
  }
  return start == m;
}

/* Largest load of a probe's parts. */
static double probe_max(const double *S, int K, const int64_t *end)
{
  double max = 0.0;
  for (int k = 0; k < K; k++) max = fmax(max, S[end[k]] - S[k ? end[k - 1] : 0]);
  return max;
}

/* The least bottleneck for which a probe fails to grow: every part of a
 * failed probe stopped before a task that would have passed B, so no
 * bottleneck below the least of those loads changes the probe. */
static double probe_next(const double *S, int64_t m, int K, const int64_t *end)
{
  double next = HUGE_VAL;
  for (int k = 0; k < K; k++) {
    const int64_t s = k ? end[k - 1] : 0;
    if (end[k] < m) next = fmin(next, S[end[k] + 1] - S[s]);
  }
  return next;
}

/* The exact bisection on the prefix sums S of m tasks into K parts: the
 * interval [lo, hi] of bottlenecks holds the optimum, hi always a load a
 * successful probe realised (its parts in end) and lo, after the first
 * failure, a load one would have: each probe at the middle moves one end
 * past the middle, so the interval halves and the loop ends on a
 * realisable value. */
static lb_err exact_prefix(const double *S, int64_t m, int K, int64_t *end)
{
  int64_t *trial = malloc((size_t)K * sizeof *trial);
  double wmax = 0.0;
  if (!trial) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", K);
  for (int64_t i = 0; i < m; i++) wmax = fmax(wmax, S[i + 1] - S[i]);
  double lo = fmax(S[m] / K, wmax), hi = S[m] / K + wmax;
  /* Miguet and Pierson's bound holds in exact arithmetic; the whole chain
   * in one part always fits */
  if (!probe(S, m, K, hi, end)) hi = S[m], probe(S, m, K, hi, end);
  hi = probe_max(S, K, end);
  while (lo < hi) {
    double mid = lo + 0.5 * (hi - lo);
    if (!(mid < hi)) mid = lo;
    if (probe(S, m, K, mid, trial)) {
      hi = probe_max(S, K, trial);
      memcpy(end, trial, (size_t)K * sizeof *end);
    } else {
      lo = probe_next(S, m, K, trial);
    }
  }
  free(trial);
  return LB_OK;
}

/* The exact partition of one chain (prefix sums S of m tasks) into K parts:
 * counts and loads. */
static lb_err exact_parts(const double *S, int64_t m, int K, int64_t *counts, double *load)
{
  int64_t *end = malloc((size_t)K * sizeof *end);
  if (!end) return lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", K);
  lb_err err = exact_prefix(S, m, K, end);
  for (int k = 0; !err && k < K; k++) {
    const int64_t s = k ? end[k - 1] : 0;
    counts[k] = end[k] - s;
    load[k] = S[end[k]] - S[s];
  }
  free(end);
  return err;
}

lb_err lb_curve_exact_chain(int64_t m, const double *w, int nparts, int64_t *counts, double *part_load)
{
  double total = 0.0;
  if (nparts < 1) return lb_error(LB_ERR_ARG, "curve: number of parts %d must be at least 1", nparts);
  if (m < 0) return lb_error(LB_ERR_ARG, "curve: negative number of tasks %lld", (long long)m);
  for (int64_t i = 0; i < m; i++) {
    if (!(w[i] >= 0.0) || isinf(w[i])) return lb_error(LB_ERR_LOAD, "curve: weight of task %lld is negative or not finite", (long long)i);
    total += w[i];
  }
  double *S = malloc(((size_t)m + 1) * sizeof *S);
  if (!S) return lb_error(LB_ERR_MEM, "curve: out of memory for %lld prefix sums", (long long)m);
  prefix_sums(m, w, total == 0.0, S);
  lb_err err = exact_parts(S, m, nparts, counts, part_load);
  free(S);
  return err;
}

/* The process that partitions group g: its first part's. */
static int group_root(int size, int nparts, int ngroups, int g)
{
  return size == 1 ? 0 : lb_curve_group_first(nparts, ngroups, g);
}

/* Post this process's share of every group of several parts to that
 * group's first process: its global index first, then its weights. */
static lb_err send_pieces(MPI_Comm comm, int64_t first, int64_t n, const double *w, int nparts, const lb_curve_result *gr, double **buf,
                          MPI_Request *req, int *nreq)
{
  int size, G = gr->nparts;
  int64_t total = 0;
  LB_MPI(MPI_Comm_size(comm, &size));
  *nreq = 0;
  for (int g = 0; g < G; g++) {
    const int64_t lo = gr->cuts[g] > first ? gr->cuts[g] : first, hi = gr->cuts[g + 1] < first + n ? gr->cuts[g + 1] : first + n;
    if (hi > lo && lb_curve_group_first(nparts, G, g + 1) - lb_curve_group_first(nparts, G, g) > 1) total += hi - lo + 1;
  }
  *buf = malloc(((size_t)total + 1) * sizeof **buf);
  if (!*buf) return lb_error(LB_ERR_MEM, "curve: out of memory for %lld weights", (long long)total);
  double *at = *buf;
  for (int g = 0; g < G; g++) {
    const int64_t lo = gr->cuts[g] > first ? gr->cuts[g] : first, hi = gr->cuts[g + 1] < first + n ? gr->cuts[g + 1] : first + n;
    if (hi <= lo || lb_curve_group_first(nparts, G, g + 1) - lb_curve_group_first(nparts, G, g) == 1) continue;
    at[0] = (double)lo;
    memcpy(at + 1, w + (lo - first), (size_t)(hi - lo) * sizeof *at);
    LB_MPI(MPI_Isend(at, (int)(hi - lo + 1), MPI_DOUBLE, group_root(size, nparts, G, g), HIER_TAG, comm, &req[(*nreq)++]));
    at += hi - lo + 1;
  }
  return LB_OK;
}

/* Receive group g's piece (gr->counts[g] cells from gr->cuts[g] on) from
 * the processes that hold it, into piece[1..]. */
static lb_err receive_piece(MPI_Comm comm, const lb_curve_result *gr, int g, double *piece)
{
  int64_t got = 0;
  while (got < gr->counts[g]) {
    MPI_Status st;
    int count;
    LB_MPI(MPI_Probe(MPI_ANY_SOURCE, HIER_TAG, comm, &st));
    LB_MPI(MPI_Get_count(&st, MPI_DOUBLE, &count));
    double *msg = malloc((size_t)count * sizeof *msg);
    if (!msg) return lb_error(LB_ERR_MEM, "curve: out of memory for %d weights", count);
    if (MPI_Recv(msg, count, MPI_DOUBLE, st.MPI_SOURCE, HIER_TAG, comm, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
      free(msg);
      return lb_error(LB_ERR_MPI, "curve: MPI_Recv of a group's piece failed");
    }
    const int64_t at = (int64_t)msg[0] - gr->cuts[g];
    if (at < 0 || at + count - 1 > gr->counts[g]) {
      free(msg);
      return lb_error(LB_ERR_MPI, "curve: a piece of group %d arrived outside it", g);
    }
    memcpy(piece + 1 + at, msg + 1, (size_t)(count - 1) * sizeof *msg);
    got += count - 1;
    free(msg);
  }
  return LB_OK;
}

/* Group g's exact partition into its parts, written to the counts and loads
 * of those parts in out (nparts counts, then nparts loads). The piece is
 * this process's own weights (one process) or gathered from its holders. */
static lb_err group_partition(MPI_Comm comm, const double *w, int nparts, const lb_curve_result *gr, int g, int unit, double *out)
{
  const int G = gr->nparts, q0 = lb_curve_group_first(nparts, G, g), K = lb_curve_group_first(nparts, G, g + 1) - q0;
  const int64_t m = gr->counts[g];
  double *S = malloc(((size_t)m + 1) * sizeof *S), *load = malloc((size_t)K * sizeof *load);
  int64_t *counts = malloc((size_t)K * sizeof *counts);
  int size;
  lb_err err = S && load && counts ? LB_OK : lb_error(LB_ERR_MEM, "curve: out of memory for group %d's %lld cells", g, (long long)m);
  if (!err && MPI_Comm_size(comm, &size) != MPI_SUCCESS) err = lb_error(LB_ERR_MPI, "curve: MPI_Comm_size failed");
  if (!err && size == 1 && m > 0) memcpy(S + 1, w + gr->cuts[g], (size_t)m * sizeof *S);
  else if (!err && size > 1) err = receive_piece(comm, gr, g, S);
  /* the prefix sums in place of the weights they start from */
  if (!err) prefix_sums(m, S + 1, unit, S);
  if (!err) err = exact_parts(S, m, K, counts, load);
  for (int k = 0; !err && k < K; k++) {
    out[q0 + k] = (double)counts[k];
    out[nparts + q0 + k] = load[k];
  }
  free(S);
  free(load);
  free(counts);
  return err;
}

/* The partition assembled from the groups: the coarse split's loads for
 * the groups of one part, every group's root adds its parts, and one sum
 * gives every process all of them. */
static lb_err assemble(MPI_Comm comm, int64_t n, const double *w, int nparts, const lb_curve_result *gr, int unit, double *out)
{
  const int G = gr->nparts;
  int size, me;
  LB_MPI(MPI_Comm_size(comm, &size));
  LB_MPI(MPI_Comm_rank(comm, &me));
  if (size != 1 && size != nparts)
    return lb_error(LB_ERR_ARG, "curve: HierSFC runs on one process or on one per part, not %d for %d parts", size, nparts);
  int64_t first = 0;
  long long mine = n, before = 0;
  LB_MPI(MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, comm));
  if (me > 0) first = before; /* MPI leaves rank 0's result undefined */
  MPI_Request *req = malloc((size_t)G * sizeof *req);
  double *buf = NULL;
  int nreq = 0;
  lb_err err = req ? LB_OK : lb_error(LB_ERR_MEM, "curve: out of memory for %d groups", G);
  if (!err && size > 1) err = send_pieces(comm, first, n, w, nparts, gr, &buf, req, &nreq);
  for (int g = 0; !err && g < G; g++) {
    const int q0 = lb_curve_group_first(nparts, G, g), K = lb_curve_group_first(nparts, G, g + 1) - q0;
    if (K == 1 && me == 0) {
      out[q0] = (double)gr->counts[g];
      out[nparts + q0] = gr->part_load[g];
    } else if (K > 1 && group_root(size, nparts, G, g) == me) {
      err = group_partition(comm, w, nparts, gr, g, unit, out);
    }
  }
  /* the sends complete whatever happened, so that no request outlives buf */
  if (nreq && MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS && !err) err = lb_error(LB_ERR_MPI, "curve: MPI_Waitall of the pieces failed");
  free(req);
  free(buf);
  return err;
}

lb_err lb_curve_hier(MPI_Comm comm, int64_t n, const double *w, int nparts, int ngroups, lb_curve_result *res)
{
  lb_curve_result gr;
  double *out = NULL, wmax = 0.0, max = 0.0;
  memset(res, 0, sizeof *res);
  LB_CALL(lb_curve_groups(comm, n, w, nparts, ngroups, &gr));
  /* every weight 0 anywhere on the curve: it is cut by cell count */
  for (int64_t i = 0; i < n; i++) wmax = fmax(wmax, w[i]);
  lb_err err = MPI_Allreduce(MPI_IN_PLACE, &wmax, 1, MPI_DOUBLE, MPI_MAX, comm) == MPI_SUCCESS ? LB_OK : lb_error(LB_ERR_MPI, "curve: MPI_Allreduce failed");
  if (!err && !(out = calloc(2 * (size_t)nparts, sizeof *out))) err = lb_error(LB_ERR_MEM, "curve: out of memory for %d parts", nparts);
  /* the roots' errors do not stop the others' sum: every process fails alike */
  lb_err mine = err ? err : assemble(comm, n, w, nparts, &gr, wmax == 0.0, out);
  int bad = mine != LB_OK;
  if (!err && MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) err = lb_error(LB_ERR_MPI, "curve: MPI_Allreduce failed");
  if (!err && bad) err = mine ? mine : lb_error(LB_ERR_MPI, "curve: HierSFC failed on another process");
  if (!err && MPI_Allreduce(MPI_IN_PLACE, out, 2 * nparts, MPI_DOUBLE, MPI_SUM, comm) != MPI_SUCCESS)
    err = lb_error(LB_ERR_MPI, "curve: MPI_Allreduce of the parts failed");
  if (!err) err = lb_curve_result_alloc(nparts, res);
  for (int q = 0; !err && q < nparts; q++) {
    res->counts[q] = (int64_t)out[q];
    res->cuts[q + 1] = res->cuts[q] + res->counts[q];
    res->part_load[q] = out[nparts + q];
    max = fmax(max, res->part_load[q]);
  }
  if (!err) {
    res->ncells = gr.ncells;
    res->total = gr.total;
    res->quality = max > 0.0 ? gr.total / nparts / max : 1.0;
  }
  free(out);
  lb_curve_result_free(&gr);
  return err;
}

lb_err lb_curve_exact(MPI_Comm comm, int64_t n, const double *w, int nparts, lb_curve_result *res)
{
  return lb_curve_hier(comm, n, w, nparts, 1, res);
}

double lb_curve_max_load(const lb_curve_result *res)
{
  double max = 0.0;
  for (int q = 0; q < res->nparts; q++) max = fmax(max, res->part_load[q]);
  return max;
}
