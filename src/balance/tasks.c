/* Task sets: the set and its neighbours' owners, the migration of the
 * selected tasks, and Lieber et al. 2016's metrics (the selection of the
 * tasks that realise balancing flows is tasks_select.c).  All communication goes through one
 * record exchange (each rank sends fixed-width records to any ranks): on
 * the virtual backend a stable shuffle in memory, on MPI an all-to-all of
 * counts plus an all-to-allv.  Records arrive grouped by source rank in
 * ascending order on both, which is what keeps the backends identical. */
#include "balance/impl/taskset.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define TASK_RECORD 5 /* id, weight, 3 coordinates (2 without coordinates) */

/* Records of w doubles, each addressed to (or, received, coming from) a peer rank. */
typedef struct { int n, cap, w; int *peer; double *v; } xlist;

static lb_err xl_add(xlist *l, int peer, const double *rec)
{
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 64;
    int *p = realloc(l->peer, (size_t)cap * sizeof *p);
    if (!p) return lb_error(LB_ERR_MEM, "out of memory for task records");
    l->peer = p;
    double *v = realloc(l->v, (size_t)cap * l->w * sizeof *v);
    if (!v) return lb_error(LB_ERR_MEM, "out of memory for task records");
    l->v = v;
    l->cap = cap;
  }
  l->peer[l->n] = peer;
  memcpy(l->v + (size_t)l->n * l->w, rec, (size_t)l->w * sizeof *rec);
  l->n++;
  return LB_OK;
}

static xlist *xl_new(int count, int w)
{
  xlist *l = calloc((size_t)count, sizeof *l);
  if (l)
    for (int i = 0; i < count; i++) l[i].w = w;
  return l;
}

static void xl_free(xlist *l, int count)
{
  if (!l) return;
  for (int i = 0; i < count; i++) { free(l[i].peer); free(l[i].v); }
  free(l);
}


/* Collective: out[i] holds the records of local rank lo+i; in[i] receives
 * the records addressed to it (peer set to the sender).  in must be empty. */
static lb_err exchange(lb_taskset *ts, const xlist *out, xlist *in)
{
  int P = ts->tg.nranks, nloc = ts->hi - ts->lo, w = out[0].w;
  lb_err err = LB_OK;
  if (ts->be == LB_BACKEND_VIRTUAL) {
    for (int i = 0; i < nloc; i++)
      for (int k = 0; k < out[i].n && !err; k++)
        err = xl_add(&in[out[i].peer[k] - ts->lo], ts->lo + i, out[i].v + (size_t)k * w);
    return err;
  }
  int *sc = calloc((size_t)P, sizeof *sc), *rc = malloc((size_t)P * sizeof *rc);
  int *sd = malloc(((size_t)P + 1) * sizeof *sd), *rd = malloc(((size_t)P + 1) * sizeof *rd);
  double *sbuf = malloc(((size_t)out[0].n * w + 1) * sizeof *sbuf), *rbuf = NULL;
  if (!sc || !rc || !sd || !rd || !sbuf) { err = lb_error(LB_ERR_MEM, "out of memory for a task exchange"); goto out; }
  for (int k = 0; k < out[0].n; k++) sc[out[0].peer[k]] += w;
  sd[0] = 0;
  for (int d = 0; d < P; d++) sd[d + 1] = sd[d] + sc[d];
  for (int d = 0; d < P; d++) rd[d] = sd[d]; /* fill pointers, stable by destination */
  for (int k = 0; k < out[0].n; k++) {
    int d = out[0].peer[k];
    memcpy(sbuf + rd[d], out[0].v + (size_t)k * w, (size_t)w * sizeof *sbuf);
    rd[d] += w;
  }
  if (MPI_Alltoall(sc, 1, MPI_INT, rc, 1, MPI_INT, ts->comm) != MPI_SUCCESS) { err = lb_error(LB_ERR_MPI, "MPI_Alltoall failed in a task exchange"); goto out; }
  rd[0] = 0;
  for (int s = 0; s < P; s++) rd[s + 1] = rd[s] + rc[s];
  rbuf = malloc(((size_t)rd[P] + 1) * sizeof *rbuf);
  if (!rbuf) { err = lb_error(LB_ERR_MEM, "out of memory for a task exchange"); goto out; }
  if (MPI_Alltoallv(sbuf, sc, sd, MPI_DOUBLE, rbuf, rc, rd, MPI_DOUBLE, ts->comm) != MPI_SUCCESS) {
    err = lb_error(LB_ERR_MPI, "MPI_Alltoallv failed in a task exchange");
    goto out;
  }
  for (int s = 0; s < P && !err; s++)
    for (int k = rd[s]; k < rd[s + 1] && !err; k += w) err = xl_add(&in[0], s, rbuf + k);
out:
  free(sc); free(rc); free(sd); free(rd); free(sbuf); free(rbuf);
  return err;
}

lb_err lb_taskset_reduce_ll(lb_taskset *ts, long long *v, int n, MPI_Op op)
{
  if (ts->be == LB_BACKEND_MPI) MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_LONG_LONG, op, ts->comm));
  return LB_OK;
}

/* all[r] = v[r - lo] for every rank r. */
static lb_err gather(lb_taskset *ts, const double *v, double *all)
{
  if (ts->be == LB_BACKEND_MPI) MPI_TRY(MPI_Allgather(v, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, ts->comm));
  else memcpy(all, v, (size_t)ts->tg.nranks * sizeof *all);
  return LB_OK;
}

lb_err lb_task_list_add(lb_task_list *l, int id, double w, const double x[3])
{
  if (l->n == l->cap) {
    /* by a quarter, not doubling: a rank of 1025 tasks would hold room
     * for 2048, 12 bytes a task idle at 131072 ranks of 1000 */
    if (l->cap > INT_MAX - l->cap / 4 - 64) return lb_error(LB_ERR_MEM, "more tasks on one rank than an int counts");
    int cap = l->cap + l->cap / 4 + 64;
    int *ni = realloc(l->id, (size_t)cap * sizeof *ni);
    if (!ni) return lb_error(LB_ERR_MEM, "out of memory for tasks");
    l->id = ni;
    double *nw = realloc(l->w, (size_t)cap * sizeof *nw);
    if (!nw) return lb_error(LB_ERR_MEM, "out of memory for tasks");
    l->w = nw;
    if (!l->no_x) {
      double *nx = realloc(l->x, 3 * (size_t)cap * sizeof *nx);
      if (!nx) return lb_error(LB_ERR_MEM, "out of memory for tasks");
      l->x = nx;
    }
    l->cap = cap;
  }
  l->id[l->n] = id;
  l->w[l->n] = w;
  if (!l->no_x) memcpy(l->x + 3 * (size_t)l->n, x, 3 * sizeof *x);
  l->n++;
  return LB_OK;
}

void lb_taskset_local(const lb_taskset *ts, int *lo, int *hi)
{
  *lo = ts->lo;
  *hi = ts->hi;
}

const lb_task_list *lb_taskset_list(const lb_taskset *ts, int r) { return &ts->list[r - ts->lo]; }

void lb_taskset_neighbours(const lb_taskset *ts, int r, const int **start, const int **nbr, const int **own)
{
  *start = ts->nstart[r - ts->lo];
  *nbr = ts->nbr[r - ts->lo];
  *own = ts->own[r - ts->lo];
}

int *lb_taskset_dest(lb_taskset *ts, int r) { return ts->dest[r - ts->lo]; }

/* Sizes the per-task arrays of local rank i to its list; destinations
 * reset to -1; the neighbour rows are counted and sized by update_owners. */
static lb_err resize_task_arrays(lb_taskset *ts, int i)
{
  size_t n = (size_t)ts->list[i].n + 1;
  free(ts->dest[i]); free(ts->nstart[i]); free(ts->nbr[i]); free(ts->own[i]);
  ts->nbr[i] = ts->own[i] = NULL;
  ts->dest[i] = malloc(n * sizeof(int));
  ts->nstart[i] = calloc(n, sizeof(int));
  if (!ts->dest[i] || !ts->nstart[i]) return lb_error(LB_ERR_MEM, "out of memory for %zu tasks", n);
  for (size_t t = 0; t < n; t++) ts->dest[i][t] = -1;
  return LB_OK;
}

/* The neighbour rows of local rank i: counted first (into a row of the
 * most neighbours), then sized to their sum and filled. */
static lb_err neighbour_rows(lb_taskset *ts, int i)
{
  const lb_task_list *L = &ts->list[i];
  int *row = malloc(((size_t)ts->tg.max_nbr + 1) * sizeof *row), *s = ts->nstart[i];
  if (!row) return lb_error(LB_ERR_MEM, "out of memory for task neighbours");
  s[0] = 0;
  for (int t = 0; t < L->n; t++) {
    const int c = ts->tg.neighbours(ts->tg.ctx, L->id[t], row);
    if (s[t] > INT_MAX - c) { free(row); return lb_error(LB_ERR_MEM, "rank %d: more task neighbours than an int counts", ts->lo + i); }
    s[t + 1] = s[t] + c;
  }
  free(row);
  ts->nbr[i] = malloc(((size_t)s[L->n] + 1) * sizeof(int));
  ts->own[i] = malloc(((size_t)s[L->n] + 1) * sizeof(int));
  if (!ts->nbr[i] || !ts->own[i]) return lb_error(LB_ERR_MEM, "out of memory for %d task neighbours", s[L->n]);
  for (int t = 0; t < L->n; t++) ts->tg.neighbours(ts->tg.ctx, L->id[t], ts->nbr[i] + s[t]);
  return LB_OK;
}

/* Looks up the current owner of every neighbour of every local task: known
 * at once when the neighbour's home rank is local, else asked of the home. */
static lb_err update_owners(lb_taskset *ts)
{
  int nloc = ts->hi - ts->lo;
  xlist *req = xl_new(nloc, 2), *got = xl_new(nloc, 2), *rep = xl_new(nloc, 2), *ans = xl_new(nloc, 2);
  lb_err err = LB_OK;
  if (!req || !got || !rep || !ans) { err = lb_error(LB_ERR_MEM, "out of memory for owner lookups"); goto out; }
  for (int i = 0; i < nloc && !err; i++) err = neighbour_rows(ts, i);
  for (int i = 0; i < nloc && !err; i++) {
    const int *nb = ts->nbr[i], *s = ts->nstart[i];
    for (int e = 0; e < s[ts->list[i].n] && !err; e++) {
      int idx, h = ts->tg.home(ts->tg.ctx, nb[e], &idx);
      if (h >= ts->lo && h < ts->hi) {
        ts->own[i][e] = ts->where[h - ts->lo][idx];
      } else {
        double rec[2] = {nb[e], (double)e};
        err = xl_add(&req[i], h, rec);
      }
    }
  }
  if (err || (err = exchange(ts, req, got))) goto out;
  for (int i = 0; i < nloc && !err; i++)
    for (int k = 0; k < got[i].n && !err; k++) {
      int idx;
      ts->tg.home(ts->tg.ctx, (int)got[i].v[2 * k], &idx);
      double rec[2] = {got[i].v[2 * k + 1], ts->where[i][idx]};
      err = xl_add(&rep[i], got[i].peer[k], rec);
    }
  if (err || (err = exchange(ts, rep, ans))) goto out;
  for (int i = 0; i < nloc; i++)
    for (int k = 0; k < ans[i].n; k++) ts->own[i][(size_t)ans[i].v[2 * k]] = (int)ans[i].v[2 * k + 1];
out:
  xl_free(req, nloc); xl_free(got, nloc); xl_free(rep, nloc); xl_free(ans, nloc);
  return err;
}

void lb_taskset_destroy(lb_taskset **pts)
{
  lb_taskset *ts = pts ? *pts : NULL;
  if (!ts) return;
  int nloc = ts->hi - ts->lo;
  for (int i = 0; i < nloc; i++) {
    if (ts->list) { free(ts->list[i].id); free(ts->list[i].w); free(ts->list[i].x); }
    if (ts->dest) free(ts->dest[i]);
    if (ts->where) free(ts->where[i]);
    if (ts->nstart) free(ts->nstart[i]);
    if (ts->nbr) free(ts->nbr[i]);
    if (ts->own) free(ts->own[i]);
  }
  free(ts->list); free(ts->dest); free(ts->where); free(ts->nhome);
  free(ts->nstart); free(ts->nbr); free(ts->own);
  free(ts->sent); free(ts->recv); free(ts->wsent); free(ts->load0);
  free(ts);
  *pts = NULL;
}

lb_err lb_taskset_create(const lb_task_graph *tg, lb_backend be, MPI_Comm comm, lb_taskset **out)
{
  return lb_taskset_create_coords(tg, 1, be, comm, out);
}

lb_err lb_taskset_create_coords(const lb_task_graph *tg, int coords, lb_backend be, MPI_Comm comm, lb_taskset **out)
{
  *out = NULL;
  if (tg->nranks < 1 || tg->ntasks < 0 || tg->max_nbr < 0) return lb_error(LB_ERR_ARG, "task graph with %d ranks, %d tasks", tg->nranks, tg->ntasks);
  lb_taskset *ts = calloc(1, sizeof *ts);
  if (!ts) return lb_error(LB_ERR_MEM, "out of memory for a task set");
  ts->tg = *tg;
  ts->be = be;
  ts->comm = comm;
  lb_err err = LB_OK;
  if (be == LB_BACKEND_MPI) {
    int me, size;
    if (MPI_Comm_rank(comm, &me) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) { free(ts); return lb_error(LB_ERR_MPI, "MPI_Comm_rank failed"); }
    if (size != tg->nranks) {
      free(ts);
      return lb_error(LB_ERR_SIZE, "the task mesh is mapped onto %d ranks but the MPI backend runs on %d processes (use as many processes or -virtual)", tg->nranks, size);
    }
    ts->lo = me;
    ts->hi = me + 1;
  } else {
    ts->lo = 0;
    ts->hi = tg->nranks;
  }
  size_t nloc = (size_t)(ts->hi - ts->lo);
  ts->list = calloc(nloc, sizeof *ts->list);
  ts->dest = calloc(nloc, sizeof *ts->dest);
  ts->where = calloc(nloc, sizeof *ts->where);
  ts->nhome = calloc(nloc, sizeof *ts->nhome);
  ts->nstart = calloc(nloc, sizeof *ts->nstart);
  ts->nbr = calloc(nloc, sizeof *ts->nbr);
  ts->own = calloc(nloc, sizeof *ts->own);
  ts->sent = calloc(nloc, sizeof *ts->sent);
  ts->recv = calloc(nloc, sizeof *ts->recv);
  ts->wsent = calloc(nloc, sizeof *ts->wsent);
  ts->load0 = malloc((size_t)tg->nranks * sizeof *ts->load0);
  if (!ts->list || !ts->dest || !ts->where || !ts->nhome || !ts->nstart || !ts->nbr || !ts->own ||
      !ts->sent || !ts->recv || !ts->wsent || !ts->load0) {
    err = lb_error(LB_ERR_MEM, "out of memory for a task set of %d ranks", tg->nranks);
    goto fail;
  }
  for (size_t i = 0; i < nloc && !err; i++) {
    int r = ts->lo + (int)i;
    ts->list[i].no_x = !coords;
    if ((err = tg->initial(tg->ctx, r, &ts->list[i]))) break;
    ts->nhome[i] = ts->list[i].n;
    ts->where[i] = malloc(((size_t)ts->nhome[i] + 1) * sizeof(int));
    if (!ts->where[i]) { err = lb_error(LB_ERR_MEM, "out of memory for the task directory"); break; }
    for (int t = 0; t < ts->nhome[i]; t++) ts->where[i][t] = r;
    err = resize_task_arrays(ts, (int)i);
  }
  /* An error in one process's callback must stop every process. */
  long long flag = err;
  lb_err cerr = lb_taskset_reduce_ll(ts, &flag, 1, MPI_MAX);
  if (cerr) err = cerr;
  else if (flag && !err) err = lb_error((lb_err)flag, "creating the tasks failed on another rank");
  if (err || (err = update_owners(ts)) || (err = lb_taskset_loads(ts, ts->load0))) goto fail;
  *out = ts;
  return LB_OK;
fail:
  lb_taskset_destroy(&ts);
  return err;
}

lb_err lb_taskset_loads(lb_taskset *ts, double *all)
{
  int nloc = ts->hi - ts->lo;
  double *mine = malloc((size_t)nloc * sizeof *mine);
  if (!mine) return lb_error(LB_ERR_MEM, "out of memory for loads");
  for (int i = 0; i < nloc; i++) {
    double s = 0;
    for (int t = 0; t < ts->list[i].n; t++) s += ts->list[i].w[t];
    mine[i] = s;
  }
  lb_err err = gather(ts, mine, all);
  free(mine);
  return err;
}

lb_err lb_taskset_migrate(lb_taskset *ts)
{
  int nloc = ts->hi - ts->lo, P = ts->tg.nranks, width = ts->list[0].no_x ? 2 : TASK_RECORD;
  xlist *out = xl_new(nloc, width), *in = xl_new(nloc, width);
  xlist *note = xl_new(nloc, 2), *noted = xl_new(nloc, 2);
  lb_err err = LB_OK;
  if (!out || !in || !note || !noted) { err = lb_error(LB_ERR_MEM, "out of memory migrating tasks"); goto out; }
  for (int i = 0; i < nloc && !err; i++) {
    lb_task_list *L = &ts->list[i];
    int r = ts->lo + i, kept = 0;
    ts->sent[i] = ts->recv[i] = 0;
    ts->wsent[i] = 0;
    for (int t = 0; t < L->n && !err; t++) {
      int d = ts->dest[i][t];
      if (d >= 0 && d != r) {
        if (d >= P) { err = lb_error(LB_ERR_ARG, "task %d of rank %d has destination %d outside 0..%d", L->id[t], r, d, P - 1); break; }
        double rec[TASK_RECORD] = {L->id[t], L->w[t]};
        if (L->x) memcpy(rec + 2, L->x + 3 * (size_t)t, 3 * sizeof *rec);
        err = xl_add(&out[i], d, rec);
        ts->sent[i]++;
        ts->wsent[i] += L->w[t];
      } else {
        L->id[kept] = L->id[t];
        L->w[kept] = L->w[t];
        if (L->x) memmove(L->x + 3 * (size_t)kept, L->x + 3 * (size_t)t, 3 * sizeof *L->x);
        kept++;
      }
    }
    L->n = kept;
  }
  long long flag = err;
  lb_err cerr = lb_taskset_reduce_ll(ts, &flag, 1, MPI_MAX);
  if (cerr) { err = cerr; goto out; }
  if (flag) { if (!err) err = lb_error((lb_err)flag, "task migration failed on another rank"); goto out; }
  if ((err = exchange(ts, out, in))) goto out;
  for (int i = 0; i < nloc && !err; i++) {
    int r = ts->lo + i;
    for (int k = 0; k < in[i].n && !err; k++) {
      const double *v = in[i].v + (size_t)k * width;
      int id = (int)v[0], idx, h = ts->tg.home(ts->tg.ctx, id, &idx);
      if ((err = lb_task_list_add(&ts->list[i], id, v[1], v + 2))) break;
      ts->recv[i]++;
      if (h >= ts->lo && h < ts->hi) ts->where[h - ts->lo][idx] = r;
      else {
        double rec[2] = {id, r};
        err = xl_add(&note[i], h, rec);
      }
    }
  }
  if (err || (err = exchange(ts, note, noted))) goto out;
  for (int i = 0; i < nloc; i++)
    for (int k = 0; k < noted[i].n; k++) {
      int idx;
      ts->tg.home(ts->tg.ctx, (int)noted[i].v[2 * k], &idx);
      ts->where[i][idx] = (int)noted[i].v[2 * k + 1];
    }
  for (int i = 0; i < nloc && !err; i++) err = resize_task_arrays(ts, i);
  if (!err) err = update_owners(ts);
out:
  xl_free(out, nloc); xl_free(in, nloc); xl_free(note, nloc); xl_free(noted, nloc);
  return err;
}

lb_err lb_taskset_metrics(lb_taskset *ts, lb_task_metrics *mt)
{
  int nloc = ts->hi - ts->lo, P = ts->tg.nranks;
  memset(mt, 0, sizeof *mt);
  double *all = malloc((size_t)P * sizeof *all);
  xlist *ids = xl_new(nloc, 1), *got = xl_new(nloc, 1);
  int **hits = calloc((size_t)nloc, sizeof *hits);
  lb_err err = LB_OK;
  if (!all || !ids || !got || !hits) { err = lb_error(LB_ERR_MEM, "out of memory for task metrics"); goto out; }
  if ((err = lb_taskset_loads(ts, all))) goto out;
  double sum = 0, mx = 0, sum0 = 0;
  for (int r = 0; r < P; r++) { sum += all[r]; sum0 += ts->load0[r]; if (all[r] > mx) mx = all[r]; }
  mt->load_avg = sum / P;
  mt->load_max = mx;
  mt->imbalance = mt->load_avg > 0 ? mx / mt->load_avg - 1 : 0;
  for (int r = 0; r < P; r++) {
    if (ts->load0[r] > all[r]) mt->lower_bound += ts->load0[r] - all[r];
    if (ts->load0[r] > sum0 / P) mt->lower_bound_exact += ts->load0[r] - sum0 / P;
  }
  if ((err = gather(ts, ts->wsent, all))) goto out;
  for (int r = 0; r < P; r++) mt->migrated_weight += all[r];
  /* Per rank: sent + received, sent, cut edges, edge ends. */
  long long mxv[2] = {0, 0}, sm[3] = {0, 0, 0};
  for (int i = 0; i < nloc; i++) {
    int r = ts->lo + i;
    long long cut = 0, ends = 0;
    for (int e = 0; e < ts->nstart[i][ts->list[i].n]; e++) {
      ends++;
      cut += ts->own[i][e] != r;
    }
    if (ts->sent[i] + ts->recv[i] > mxv[0]) mxv[0] = ts->sent[i] + ts->recv[i];
    if (cut > mxv[1]) mxv[1] = cut;
    sm[0] += ts->sent[i];
    sm[1] += cut;
    sm[2] += ends;
  }
  /* Every task reports to its home, which must hear of each of its tasks once. */
  for (int i = 0; i < nloc && !err; i++) {
    hits[i] = calloc((size_t)ts->nhome[i] + 1, sizeof(int));
    if (!hits[i]) err = lb_error(LB_ERR_MEM, "out of memory for task metrics");
  }
  for (int i = 0; i < nloc && !err; i++)
    for (int t = 0; t < ts->list[i].n && !err; t++) {
      int idx, h = ts->tg.home(ts->tg.ctx, ts->list[i].id[t], &idx);
      if (h >= ts->lo && h < ts->hi) hits[h - ts->lo][idx]++;
      else {
        double rec = ts->list[i].id[t];
        err = xl_add(&ids[i], h, &rec);
      }
    }
  if (err || (err = exchange(ts, ids, got))) goto out;
  long long bad = 0;
  for (int i = 0; i < nloc; i++) {
    for (int k = 0; k < got[i].n; k++) {
      int idx;
      ts->tg.home(ts->tg.ctx, (int)got[i].v[k], &idx);
      hits[i][idx]++;
    }
    for (int t = 0; t < ts->nhome[i]; t++) bad += hits[i][t] != 1;
  }
  long long red[3] = {mxv[0], mxv[1], bad};
  if ((err = lb_taskset_reduce_ll(ts, red, 3, MPI_MAX)) || (err = lb_taskset_reduce_ll(ts, sm, 3, MPI_SUM))) goto out;
  mt->migration_max = red[0];
  mt->edgecut_max = red[1];
  mt->valid = red[2] == 0;
  mt->migrated = sm[0];
  mt->migration_tot = ts->tg.ntasks > 0 ? (double)sm[0] / ts->tg.ntasks : 0;
  mt->edges = sm[2] / 2;
  mt->edgecut_tot = mt->edges > 0 ? 0.5 * (double)sm[1] / (double)mt->edges : 0;
out:
  for (int i = 0; hits && i < nloc; i++) free(hits[i]);
  free(hits);
  free(all);
  xl_free(ids, nloc); xl_free(got, nloc);
  return err;
}
