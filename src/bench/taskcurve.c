/* Task mode for the curve-cutting methods (taskcurve.h). */
#include "bench/taskcurve.h"

#include <stdlib.h>

#include "balance/lbcurve.h"

/* Hilbert's index of a point of 3 coordinates of b bits each: Skilling
 * 2004's transform of the axes into the index's transposed bits, then
 * those bits interleaved, the highest first. */
static uint64_t hilbert_index(unsigned X[3], int b)
{
  const unsigned M = 1u << (b - 1);
  unsigned t;
  for (unsigned Q = M; Q > 1; Q >>= 1) {
    const unsigned P = Q - 1;
    for (int i = 0; i < 3; i++) {
      if (X[i] & Q) {
        X[0] ^= P;
      } else {
        t = (X[0] ^ X[i]) & P;
        X[0] ^= t;
        X[i] ^= t;
      }
    }
  }
  for (int i = 1; i < 3; i++) X[i] ^= X[i - 1];
  t = 0;
  for (unsigned Q = M; Q > 1; Q >>= 1)
    if (X[2] & Q) t ^= Q - 1;
  uint64_t key = 0;
  for (int bit = b - 1; bit >= 0; bit--)
    for (int i = 0; i < 3; i++) key = key << 1 | (((X[i] ^ t) >> bit) & 1u);
  return key;
}

typedef struct {
  uint64_t key;
  int id;
} keyed;

static int by_key(const void *a, const void *b)
{
  const keyed *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key;
}

lb_err lb_taskcurve_hilbert(const int T[3], int **pos)
{
  const int64_t n = (int64_t)T[0] * T[1] * T[2];
  int b = 1;
  while ((1 << b) < T[0] || (1 << b) < T[1] || (1 << b) < T[2]) b++;
  keyed *k = malloc((size_t)n * sizeof *k);
  *pos = malloc((size_t)n * sizeof **pos);
  if (!k || !*pos) {
    free(k);
    free(*pos);
    *pos = NULL;
    return lb_error(LB_ERR_MEM, "task mode: out of memory for the curve of %lld tasks", (long long)n);
  }
  for (int64_t id = 0; id < n; id++) {
    unsigned X[3] = {(unsigned)(id % T[0]), (unsigned)(id / T[0] % T[1]), (unsigned)(id / ((int64_t)T[0] * T[1]))};
    k[id] = (keyed){hilbert_index(X, b), (int)id};
  }
  qsort(k, (size_t)n, sizeof *k, by_key);
  for (int64_t i = 0; i < n; i++) (*pos)[k[i].id] = (int)i;
  free(k);
  return LB_OK;
}

/* Every task's weight at its place on the curve, on every process. */
static lb_err curve_weights(lb_taskset *ts, int ntasks, const int *pos, const lb_params *p, double *w)
{
  int lo, hi;
  lb_taskset_local(ts, &lo, &hi);
  for (int r = lo; r < hi; r++) {
    const lb_task_list *l = lb_taskset_list(ts, r);
    for (int i = 0; i < l->n; i++) w[pos ? pos[l->id[i]] : l->id[i]] = l->w[i];
  }
  if (p->backend == LB_BACKEND_MPI && MPI_Allreduce(MPI_IN_PLACE, w, ntasks, MPI_DOUBLE, MPI_SUM, p->comm) != MPI_SUCCESS)
    return lb_error(LB_ERR_MPI, "task mode: MPI_Allreduce of the curve's weights failed");
  return LB_OK;
}

lb_err lb_taskcurve_partition(lb_taskset *ts, int nparts, int ntasks, const int *pos, const lb_method *m, const lb_params *p, double *seconds)
{
  double *w = calloc((size_t)ntasks + 1, sizeof *w);
  lb_curve_result cut = {0};
  int lo, hi, me = 0;
  if (!w) return lb_error(LB_ERR_MEM, "task mode: out of memory for the curve of %d tasks", ntasks);
  lb_err err = curve_weights(ts, ntasks, pos, p, w);
  const int mpi = p->backend == LB_BACKEND_MPI;
  if (!err && mpi && MPI_Comm_rank(p->comm, &me) != MPI_SUCCESS) err = lb_error(LB_ERR_MPI, "task mode: MPI_Comm_rank failed");
  const int64_t first = mpi ? (int64_t)ntasks * me / nparts : 0, end = mpi ? (int64_t)ntasks * (me + 1) / nparts : ntasks;
  const double t0 = MPI_Wtime();
  if (!err) err = m->partition(p, mpi ? p->comm : MPI_COMM_SELF, end - first, w + first, nparts, &cut);
  *seconds = MPI_Wtime() - t0;
  if (!err && mpi && MPI_Allreduce(MPI_IN_PLACE, seconds, 1, MPI_DOUBLE, MPI_MAX, p->comm) != MPI_SUCCESS)
    err = lb_error(LB_ERR_MPI, "task mode: MPI_Allreduce of the time failed");
  lb_taskset_local(ts, &lo, &hi);
  for (int r = lo; !err && r < hi; r++) {
    const lb_task_list *l = lb_taskset_list(ts, r);
    int *dest = lb_taskset_dest(ts, r);
    for (int i = 0; i < l->n; i++) {
      const int q = lb_curve_part_of(cut.nparts, cut.cuts, pos ? pos[l->id[i]] : l->id[i]);
      dest[i] = q == r ? -1 : q;
    }
  }
  lb_curve_result_free(&cut);
  free(w);
  return err;
}
