/* Task selection: which tasks realise the balancing flows (or a method's
 * direct transfers), edge-cut gain first through a bucket priority queue
 * per rank, and the passes of selection and migration that realise a flow
 * whole (lb_taskset_realise). */
#include "balance/impl/taskset.h"

#include <stdlib.h>
#include <string.h>

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
  lb_err cerr = lb_taskset_reduce_ll(ts, &flag, 1, MPI_MAX);
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
