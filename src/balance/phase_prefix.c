/* The phase model of a partition by prefix sums (impl/phase.h,
 * lb_phase_model_of): no array as long as the parts, each rank reading
 * the cuts that fall in its own piece; used by every trial of
 * lb_phase_choose's search. */
#include "balance/impl/phase.h"
#include "balance/impl/lbcall.h"

#include <math.h>
#include <stdlib.h>

void lb_phase_model_set(int nparts, double time, double mean, lb_phase_model *m)
{
  m->time = time;
  m->mean = mean;
  m->lost = m->time - m->mean;
  m->imbalance_pct = lb_phase_imbalance_pct(nparts, m->time, m->lost);
}

double lb_phase_imbalance_pct(int nparts, double time, double lost)
{
  return nparts > 1 && time > 0 ? 100 * lost * nparts / (time * (nparts - 1)) : 0;
}

lb_err lb_phase_piece_locate(MPI_Comm comm, int64_t n, int nphases, const double *const *w, lb_phase_piece *p)
{
  LB_MPI(MPI_Comm_rank(comm, &p->rank));
  LB_MPI(MPI_Comm_size(comm, &p->size));
  for (int k = 0; k < nphases; k++) {
    p->total[k] = 0;
    for (int64_t i = 0; i < n; i++) p->total[k] += w[k][i];
    p->before[k] = 0;
  }
  p->first = 0;
  LB_MPI(MPI_Exscan(p->total, p->before, nphases, MPI_DOUBLE, MPI_SUM, comm));
  LB_MPI(MPI_Exscan(&n, &p->first, 1, MPI_INT64_T, MPI_SUM, comm));
  /* MPI_Exscan leaves rank 0's undefined */
  if (p->rank == 0) {
    p->first = 0;
    for (int k = 0; k < nphases; k++) p->before[k] = 0;
  }
  LB_MPI(MPI_Allreduce(MPI_IN_PLACE, p->total, nphases, MPI_DOUBLE, MPI_SUM, comm));
  LB_MPI(MPI_Allreduce(&n, &p->ncells, 1, MPI_INT64_T, MPI_SUM, comm));
  return LB_OK;
}

void lb_phase_ends_init(lb_phase_ends *e, int nphases, int nparts, const double *total, double *scratch)
{
  e->nphases = nphases;
  e->nparts = nparts;
  e->owned = 0;
  e->total = total;
  e->first = scratch;
  e->last = scratch + nphases;
  e->max = scratch + 2 * nphases;
  for (int k = 0; k < nphases; k++) e->last[k] = e->max[k] = 0;
}

void lb_phase_ends_cut(lb_phase_ends *e, int j, const double *run)
{
  for (int k = 0; k < e->nphases; k++) {
    if (e->owned) e->max[k] = fmax(e->max[k], run[k] - e->last[k]);
    else e->first[k] = run[k];
    e->last[k] = run[k];
    if (j == e->nparts - 1) e->max[k] = fmax(e->max[k], e->total[k] - run[k]);
  }
  e->owned = 1;
}

lb_err lb_phase_ends_model(lb_phase_ends *e, MPI_Comm comm, int rank, lb_phase_model *m)
{
  const int K = e->nphases, P = e->nparts;
  double time = 0, mean = 0;

  /* the part that ends at this rank's first cut began at the last cut
   * before the piece (cut 0: prefix 0) */
  LB_MPI(MPI_Exscan(MPI_IN_PLACE, e->last, K, MPI_DOUBLE, MPI_MAX, comm));
  if (e->owned)
    for (int k = 0; k < K; k++) e->max[k] = fmax(e->max[k], e->first[k] - (rank > 0 ? e->last[k] : 0));
  if (P == 1)
    for (int k = 0; k < K; k++) e->max[k] = e->total[k];
  LB_MPI(MPI_Allreduce(MPI_IN_PLACE, e->max, K, MPI_DOUBLE, MPI_MAX, comm));
  for (int k = 0; k < K; k++) {
    time += e->max[k];
    mean += e->total[k] / P;
  }
  lb_phase_model_set(P, time, mean, m);
  return LB_OK;
}

lb_err lb_phase_model_of(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, const int64_t *counts, lb_phase_model *m)
{
  double *buf = malloc(sizeof(double) * 6 * (size_t)(nphases > 0 ? nphases : 1)), *run;
  lb_phase_piece p = {buf, buf + nphases, 0, 0, 0, 0};
  lb_phase_ends e;
  int64_t cut = 0, sum = 0;
  lb_err err;
  int j = 1;

  if (!buf) return lb_error(LB_ERR_MEM, "phase model: out of memory");
  if (nphases < 1 || nparts < 1) err = lb_error(LB_ERR_ARG, "phase model: %d phases and %d parts: need at least one of each", nphases, nparts);
  else err = lb_phase_piece_locate(comm, n, nphases, w, &p);
  for (int q = 0; q < nparts; q++) sum += counts[q];
  if (!err && sum != p.ncells)
    err = lb_error(LB_ERR_ARG, "phase model: the parts hold %lld cells, the curve %lld", (long long)sum, (long long)p.ncells);
  if (err) {
    free(buf);
    return err;
  }
  run = buf + 2 * nphases;
  lb_phase_ends_init(&e, nphases, nparts, p.total, buf + 3 * nphases);
  for (int k = 0; k < nphases; k++) run[k] = p.before[k];
  /* the first cut at or after the piece */
  cut = counts[0];
  while (j < nparts && cut < p.first) cut += counts[j++];
  for (int64_t i = 0; i <= n; i++) {
    /* a cut at the curve's end (empty last parts) is the last rank's */
    while (j < nparts && cut == p.first + i && (i < n || p.rank == p.size - 1)) {
      lb_phase_ends_cut(&e, j, run);
      cut += counts[j++];
    }
    if (i == n) break;
    for (int k = 0; k < nphases; k++) run[k] += w[k][i];
  }
  err = lb_phase_ends_model(&e, comm, p.rank, m);
  free(buf);
  return err;
}
