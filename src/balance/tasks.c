/* Task sets: selection of the tasks that realise balancing flows, their
 * migration, and Lieber et al. 2016's metrics.  All communication goes through one
 * record exchange (each rank sends fixed-width records to any ranks): on
 * the virtual backend a stable shuffle in memory, on MPI an all-to-all of
 * counts plus an all-to-allv.  Records arrive grouped by source rank in
 * ascending order on both, which is what keeps the backends identical. */
#include "balance/tasks.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define TASK_RECORD 5 /* id, weight, 3 coordinates (2 without coordinates) */

struct lb_taskset {
  lb_task_graph tg;
  lb_backend be;
  MPI_Comm comm;
  int lo, hi;
  lb_task_list *list;   /* per local rank */
  int **dest;           /* destination per task, -1: stays */
  int **where;          /* home directory: current owner of each home task */
  int *nhome;
  int **nstart, **nbr, **own; /* neighbours of task t, compressed: nbr[nstart[t] .. nstart[t+1]), their owners own[...] (as many as each task has, not
                                the most any task has: on a trace's cells with hanging faces that is 15 slots for 6 neighbours on average in 3D) */
  long long *sent, *recv;     /* tasks moved by the last migration, per local rank */
  double *wsent;
  double *load0;        /* loads of all ranks at creation */
};

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

#define MPI_TRY(call) do { if ((call) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "MPI call failed: %s", #call); } while (0)

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

/* Reduces n values over all processes (the caller has already combined its local ranks). */
static lb_err reduce_ll(lb_taskset *ts, long long *v, int n, MPI_Op op)
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
  lb_err cerr = reduce_ll(ts, &flag, 1, MPI_MAX);
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

/* Bucket priority queue over the tasks of one rank, keyed by gain in
 * [-K, K]; ties go to the task inserted last. */
typedef struct { int K, top; int *head, *next, *prev, *gain; char *in; } gain_queue;

static void gq_insert(gain_queue *q, int t, int gain)
{
  int b = gain + q->K;
  q->in[t] = 1;
  q->gain[t] = gain;
  q->prev[t] = -1;
  q->next[t] = q->head[b];
  if (q->head[b] >= 0) q->prev[q->head[b]] = t;
  q->head[b] = t;
  if (b > q->top) q->top = b;
}

static void gq_remove(gain_queue *q, int t)
{
  int b = q->gain[t] + q->K;
  q->in[t] = 0;
  if (q->prev[t] >= 0) q->next[q->prev[t]] = q->next[t];
  else q->head[b] = q->next[t];
  if (q->next[t] >= 0) q->prev[q->next[t]] = q->prev[t];
}

static int gq_pop(gain_queue *q)
{
  while (q->top >= 0 && q->head[q->top] < 0) q->top--;
  if (q->top < 0) return -1;
  int t = q->head[q->top];
  gq_remove(q, t);
  return t;
}

static int cmp_id(const void *a, const void *b)
{
  const int *x = a, *y = b;
  return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Selection on local rank i, which sends amount[k] to rank peer[k] for
 * k < npeer: loc[e] is the local index of neighbour entry e (of task t:
 * s[t] <= e < s[t+1]) if that neighbour is on this rank, else -1.  With
 * carry, what one send fell short of (or overshot) its amount is added to
 * the next one's: a method of direct transfers may split a rank's excess
 * into pieces below half a task (tree on 512 ranks of a 2D trace: 124-438
 * against tasks of 1000), none of which one send alone realises. */
static lb_err select_rank(lb_taskset *ts, int i, int npeer, const int *peers, const double *amount, lb_select how, int carry)
{
  int r = ts->lo + i, K = ts->tg.max_nbr, n = ts->list[i].n;
  const lb_task_list *L = &ts->list[i];
  int *dest = ts->dest[i], *s = ts->nstart[i], *nb = ts->nbr[i], *own = ts->own[i];
  int *pairs = malloc(2 * ((size_t)n + 1) * sizeof *pairs), *loc = malloc(((size_t)s[n] + 1) * sizeof *loc);
  gain_queue q = {K, -1, malloc((2 * (size_t)K + 1) * sizeof(int)), malloc(((size_t)n + 1) * sizeof(int)),
                  malloc(((size_t)n + 1) * sizeof(int)), malloc(((size_t)n + 1) * sizeof(int)), calloc((size_t)n + 1, 1)};
  lb_err err = LB_OK;
  if (!pairs || !loc || !q.head || !q.next || !q.prev || !q.gain || !q.in) { err = lb_error(LB_ERR_MEM, "out of memory selecting tasks"); goto out; }
  for (int t = 0; t < n; t++) { pairs[2 * t] = L->id[t]; pairs[2 * t + 1] = t; dest[t] = -1; }
  qsort(pairs, (size_t)n, 2 * sizeof *pairs, cmp_id);
  for (int e = 0; e < s[n]; e++) {
    const int *hit = own[e] == r ? bsearch(&nb[e], pairs, (size_t)n, 2 * sizeof *pairs, cmp_id) : NULL;
    loc[e] = hit ? hit[1] : -1;
  }
  double owed = 0;
  for (int p = 0; p < npeer; p++) {
    int peer = peers[p];
    double f = amount[p] + owed, sent = 0;
    if (amount[p] <= 0 || f <= 0) {
      if (carry && amount[p] > 0) owed = f;
      continue;
    }
    for (int b = 0; b <= 2 * K; b++) q.head[b] = -1;
    for (int t = 0; t < n; t++) q.in[t] = 0;
    q.top = -1;
    /* Insert in reverse so that ties leave in list order. */
    for (int t = n - 1; t >= 0; t--) {
      if (dest[t] >= 0) continue;
      int gain = 0;
      for (int e = s[t]; e < s[t + 1]; e++) {
        int u = loc[e];
        int o = u >= 0 ? (dest[u] >= 0 ? dest[u] : r) : own[e];
        gain += (o == peer) - (o == r);
      }
      gq_insert(&q, t, how == LB_SELECT_GAIN ? gain : 0);
    }
    int t;
    while (sent < f && (t = gq_pop(&q)) >= 0) {
      if (sent + 0.5 * L->w[t] > f) continue;
      dest[t] = peer;
      sent += L->w[t];
      if (how != LB_SELECT_GAIN) continue;
      /* A local neighbour still here now has one edge more to peer and one less at home. */
      for (int e = s[t]; e < s[t + 1]; e++) {
        int u = loc[e];
        if (u < 0 || !q.in[u]) continue;
        int gu = q.gain[u];
        gq_remove(&q, u);
        gq_insert(&q, u, gu + 2);
      }
    }
    if (carry) owed = f - sent;
  }
out:
  free(pairs); free(loc); free(q.head); free(q.next); free(q.prev); free(q.gain); free(q.in);
  return err;
}

/* Selection on every local rank from its sends: the flows on its edges, or
 * (transfer != NULL) the direct transfers it makes. */
static lb_err select_all(lb_taskset *ts, const lb_graph *g, const double *flow, const lb_transfer *transfer, int ntransfers,
                         lb_select how)
{
  lb_err err = LB_OK;
  int cap = g->max_degree, *peer = NULL;
  double *amount = NULL;
  for (int k = 0, run = 0; transfer && k < ntransfers; k++) {
    run = k > 0 && transfer[k].from == transfer[k - 1].from ? run + 1 : 1;
    if (run > cap) cap = run;
  }
  peer = malloc(((size_t)cap + 1) * sizeof *peer);
  amount = malloc(((size_t)cap + 1) * sizeof *amount);
  if (!peer || !amount) err = lb_error(LB_ERR_MEM, "out of memory selecting tasks");
  int k = 0;
  for (int i = 0; i < ts->hi - ts->lo && !err; i++) {
    int r = ts->lo + i, np = 0;
    if (transfer) {
      while (k < ntransfers && transfer[k].from < r) k++;
      for (; k < ntransfers && transfer[k].from == r; k++) { peer[np] = transfer[k].to; amount[np++] = transfer[k].amount; }
    } else {
      for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
        int q = g->eid[e];
        peer[np] = g->adj[e];
        amount[np++] = r == g->eu[q] ? flow[q] : -flow[q];
      }
    }
    err = select_rank(ts, i, np, peer, amount, how, transfer != NULL);
  }
  free(peer);
  free(amount);
  long long flag = err;
  lb_err cerr = reduce_ll(ts, &flag, 1, MPI_MAX);
  if (cerr) return cerr;
  if (flag && !err) return lb_error((lb_err)flag, "task selection failed on another rank");
  return err;
}

lb_err lb_taskset_select(lb_taskset *ts, const lb_graph *g, const double *flow, lb_select how)
{
  if (g->n != ts->tg.nranks) return lb_error(LB_ERR_SIZE, "flows on %d ranks for tasks on %d ranks", g->n, ts->tg.nranks);
  return select_all(ts, g, flow, NULL, 0, how);
}

lb_err lb_taskset_select_result(lb_taskset *ts, const lb_graph *g, const lb_result *res, lb_select how)
{
  if (g->n != ts->tg.nranks || res->n != g->n) return lb_error(LB_ERR_SIZE, "a result on %d ranks for tasks on %d ranks", res->n, ts->tg.nranks);
  return select_all(ts, g, res->flow, res->ntransfers > 0 ? res->transfer : NULL, res->ntransfers, how);
}

/* The weight each edge of g carries in the destinations just selected
 * (positive from eu to ev), summed over all processes into moved (g->m). */
static lb_err selected_flow(lb_taskset *ts, const lb_graph *g, double *moved)
{
  memset(moved, 0, (size_t)g->m * sizeof *moved);
  for (int i = 0; i < ts->hi - ts->lo; i++) {
    const int r = ts->lo + i;
    for (int t = 0; t < ts->list[i].n; t++) {
      const int d = ts->dest[i][t];
      for (int e = g->xadj[r]; d >= 0 && d != r && e < g->xadj[r + 1]; e++)
        if (g->adj[e] == d) {
          const int q = g->eid[e];
          moved[q] += r == g->eu[q] ? ts->list[i].w[t] : -ts->list[i].w[t];
          break;
        }
    }
  }
  if (ts->be == LB_BACKEND_MPI) MPI_TRY(MPI_Allreduce(MPI_IN_PLACE, moved, g->m, MPI_DOUBLE, MPI_SUM, ts->comm));
  return LB_OK;
}

lb_err lb_taskset_realise(lb_taskset *ts, const lb_graph *g, const lb_result *res, lb_select how, int max_passes, int *passes)
{
  const int nloc = ts->hi - ts->lo;
  double *rest, *moved, *wsent;
  long long *sent, any;
  lb_err err;

  *passes = 1;
  if (max_passes < 1) return lb_error(LB_ERR_ARG, "%d passes of task selection: need at least 1", max_passes);
  if (max_passes == 1 || res->ntransfers > 0) {
    err = lb_taskset_select_result(ts, g, res, how);
    return err ? err : lb_taskset_migrate(ts);
  }
  if (g->n != ts->tg.nranks || res->n != g->n) return lb_error(LB_ERR_SIZE, "a result on %d ranks for tasks on %d ranks", res->n, ts->tg.nranks);
  rest = malloc(2 * ((size_t)g->m + 1) * sizeof *rest);
  sent = calloc(2 * (size_t)nloc + 1, sizeof *sent);
  wsent = calloc((size_t)nloc + 1, sizeof *wsent);
  if (!rest || !sent || !wsent) {
    free(rest);
    free(sent);
    free(wsent);
    return lb_error(LB_ERR_MEM, "out of memory for %d edges' flows", g->m);
  }
  moved = rest + g->m + 1;
  memcpy(rest, res->flow, (size_t)g->m * sizeof *rest);
  *passes = 0;
  for (int pass = 0; pass < max_passes; pass++) {
    if ((err = select_all(ts, g, rest, NULL, 0, how)) || (err = selected_flow(ts, g, moved))) break;
    any = 0;
    for (int q = 0; q < g->m; q++) {
      rest[q] -= moved[q];
      any |= moved[q] != 0;
    }
    /* every rank saw the same sums: all stop together */
    if (!any && pass > 0) break;
    if ((err = lb_taskset_migrate(ts))) break;
    ++*passes;
    for (int i = 0; i < nloc; i++) {
      sent[2 * i] += ts->sent[i];
      sent[2 * i + 1] += ts->recv[i];
      wsent[i] += ts->wsent[i];
    }
  }
  /* the metrics count the tasks moved in all passes */
  for (int i = 0; i < nloc; i++) {
    ts->sent[i] = sent[2 * i];
    ts->recv[i] = sent[2 * i + 1];
    ts->wsent[i] = wsent[i];
  }
  free(rest);
  free(sent);
  free(wsent);
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
  lb_err cerr = reduce_ll(ts, &flag, 1, MPI_MAX);
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
  if ((err = reduce_ll(ts, red, 3, MPI_MAX)) || (err = reduce_ll(ts, sm, 3, MPI_SUM))) goto out;
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
