/* Pointwise work balanced apart from the mesh: the plan of one step and
 * the items' way there and back (lboffload.h, which states the rule). */
#include "balance/lboffload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "balance/impl/route.h"

/* Tags of the plan's rounds and of the items' two ways: apart from each
 * other, and high enough to stay clear of a caller's own tags. */
enum { TAG_REGISTER = 0x4c4f00, TAG_REPLY, TAG_COUNT, TAG_FORWARD, TAG_BACKWARD };

/* A block of items between this process's local rank and one peer. */
typedef struct {
  int local, peer;
  int64_t off, count; /* items, into the local rank's send (or receive) list */
} block;

struct lb_offload {
  lb_route r;
  int64_t *n, *ioff;       /* items per local rank, and where they start in the caller's cost array */
  int64_t *nsend, *soff, *send;   /* per local rank: sent items, offset into send/send_to, item indices */
  int *send_to;
  int64_t *nrecv, *roff;   /* per local rank: received items, offset into recv_from */
  int *recv_from;
  int *nsend_ranks, *nrecv_ranks;
  int64_t *before, *after;
  block *out, *in;         /* item blocks, by local rank then peer */
  int nout, nin;
  MPI_Request *req;
  int nreq;
  int64_t total;           /* all ranks' quanta */
  long long plan_messages;
  int have_stats;
  lb_offload_stats stats;
};

/* Quanta of one cost, or -1 when it is negative or not finite, or above
 * 2^52 (where a double no longer holds every whole number). */
static int64_t quanta(double cost, double quantum)
{
  const double q = cost / quantum;
  if (!(q >= 0) || q > 4503599627370496.0) return -1;
  return llround(q);
}

/* The plan's collectives: the total, the prefix sums, the lines' length. */
#define PLAN_COLLECTIVES 3

/* An item as a donor offers it: its quanta and its index. */
typedef struct {
  int64_t q, i;
} offer;

/* Dearest first, ties by index (deterministic). */
static int dearest_first(const void *a, const void *b)
{
  const offer *x = a, *y = b;
  if (x->q != y->q) return x->q > y->q ? -1 : 1;
  return x->i < y->i ? -1 : x->i > y->i;
}

/* One rank's interval on its line (excess or deficit): start, length. */
typedef struct {
  int64_t start, len;
} interval;

/* Register every local rank's interval with the segments it overlaps
 * (segment width w); nreply[j] counts them. */
static lb_err post_registrations(const lb_offload *o, const interval *iv, const int *kind, int64_t w, lb_route_box *box, int64_t *nreply)
{
  lb_err e;
  for (int j = 0; j < o->r.nlocal; j++) {
    nreply[j] = 0;
    if (iv[j].len <= 0) continue;
    const int64_t first = iv[j].start / w, last = (iv[j].start + iv[j].len - 1) / w;
    const int64_t msg[4] = {kind[j], o->r.lo + j, iv[j].start, iv[j].len};
    for (int64_t s = first; s <= last; s++)
      if ((e = lb_route_post(box, o->r.lo + j, (int)s, msg, 4))) return e;
    nreply[j] = last - first + 1;
  }
  return LB_OK;
}

/* One side of a segment owner's replies: for each interval of the nx
 * registrations x (indices into reg, starts growing), one message to its
 * rank listing the intervals of y that overlap it within [slo, shi): as
 * (rank, lo, hi) when with_bounds (to a donor: what it owes whom), else
 * as (rank) (to a receiver: whom it hears from). */
static lb_err post_overlaps(int seg, int64_t slo, int64_t shi, const lb_route_box *reg, const int *x, int nx, const int *y, int ny, int with_bounds,
                            int64_t *buf, lb_route_box *box)
{
  lb_err e = LB_OK;
  for (int a = 0, b = 0; a < nx && !e; a++) {
    const int64_t *xm = reg->data + reg->m[x[a]].off;
    const int64_t lo = xm[2] > slo ? xm[2] : slo, hi = xm[2] + xm[3] < shi ? xm[2] + xm[3] : shi;
    int np = 0;
    while (b < ny) {
      const int64_t *ym = reg->data + reg->m[y[b]].off;
      const int64_t plo = ym[2] > lo ? ym[2] : lo, phi = ym[2] + ym[3] < hi ? ym[2] + ym[3] : hi;
      if (ym[2] >= hi) break;
      if (phi > plo && with_bounds) {
        buf[np++] = ym[1];
        buf[np++] = plo;
        buf[np++] = phi;
      } else if (phi > plo)
        buf[np++] = ym[1];
      /* y's interval goes on past x's: keep it for the next */
      if (ym[2] + ym[3] > hi) break;
      b++;
    }
    e = lb_route_post(box, seg, (int)xm[1], buf, (size_t)np);
  }
  return e;
}

/* A segment owner's replies: the overlaps of the excess and deficit
 * intervals registered with segment `seg` ([seg w, (seg+1) w)), each
 * told to its donor as (receiver, lo, hi) and to its receiver as (donor).
 * The registrations arrive in rank order, so each kind's starts grow. */
static lb_err post_replies(int seg, int64_t w, const lb_route_box *reg, int first, int last, lb_route_box *box)
{
  const int64_t slo = (int64_t)seg * w, shi = slo + w;
  int64_t *buf;
  int nd = 0, nr = 0, *d, *rc;
  lb_err e = LB_OK;

  d = malloc((size_t)(last - first + 1) * sizeof *d);
  rc = malloc((size_t)(last - first + 1) * sizeof *rc);
  buf = malloc(3 * (size_t)(last - first + 1) * sizeof *buf);
  if (!d || !rc || !buf) e = lb_error(LB_ERR_MEM, "offload: no memory for a segment's %d registrations", last - first);
  for (int i = first; i < last && !e; i++) {
    const int64_t *m = reg->data + reg->m[i].off;
    if (m[0] == 0) d[nd++] = i;
    else rc[nr++] = i;
  }
  if (!e) e = post_overlaps(seg, slo, shi, reg, d, nd, rc, nr, 1, buf, box);
  if (!e) e = post_overlaps(seg, slo, shi, reg, rc, nr, d, nd, 0, buf, box);
  free(d);
  free(rc);
  free(buf);
  return e;
}

/* The messages of delivered box `in` addressed to global rank `to`:
 * [*first, *last). */
static void messages_to(const lb_route_box *in, int to, int *cursor, int *first, int *last)
{
  while (*cursor < in->n && in->m[*cursor].to < to) (*cursor)++;
  *first = *cursor;
  while (*cursor < in->n && in->m[*cursor].to == to) (*cursor)++;
  *last = *cursor;
}

/* Local rank j, above its target by ex (its excess, starting at start on
 * the line), picks its items and their receivers from the pieces in replies
 * [first, last); the send list is ordered by receiver, then by the order
 * picked.  q: its items' quanta. */
static lb_err pick(lb_offload *o, int j, const int64_t *q, int64_t ex, int64_t start, const lb_route_box *rep, int first, int last,
                   int64_t **idx, int **to, int64_t *nsend)
{
  const int64_t n = o->n[j];
  int64_t *order = malloc(((size_t)n + 1) * sizeof *order), s = 0, k = 0;
  int *dest = malloc(((size_t)n + 1) * sizeof *dest);
  offer *of = malloc(((size_t)n + 1) * sizeof *of);
  lb_err e = LB_OK;

  *idx = order;
  *to = dest;
  if (!order || !dest || !of) {
    free(of);
    return lb_error(LB_ERR_MEM, "offload: no memory for %lld items", (long long)n);
  }
  for (int64_t i = 0; i < n; i++) of[i] = (offer){q[i], i};
  qsort(of, (size_t)n, sizeof *of, dearest_first);
  /* an item goes when it fits whole within what is left of the excess;
   * one that does not is skipped, so that cheaper ones may still fill the
   * rest.  Whole, not by its midpoint: a donor's items then never reach
   * into the next donor's part of the line, where a receiver would get
   * both (measured: 1.97 of the mean against the bound 1.95 at 131072
   * ranks by midpoints) */
  for (int64_t i = 0, m = first, piece = 0; i < n && !e; i++) {
    const int64_t c = of[i].q, mid2 = 2 * s + c;
    if (c == 0 || s + c > ex) continue;
    /* the receiver whose deficit holds the midpoint: pieces grow along
     * the line, so the search only moves on */
    for (;;) {
      if (m >= last) {
        e = lb_error(LB_ERR_ARG, "offload: internal error: no piece holds an item of rank %d", o->r.lo + j);
        break;
      }
      const int64_t *pc = rep->data + rep->m[m].off;
      const int64_t np = (int64_t)rep->m[m].len / 3;
      if (piece < np && 2 * pc[3 * piece + 2] > 2 * start + mid2) break;
      if (++piece >= np) {
        m++;
        piece = 0;
      }
    }
    if (e) break;
    dest[k] = (int)(rep->data + rep->m[m].off)[3 * piece];
    order[k++] = of[i].i;
    s += c;
  }
  free(of);
  /* the midpoints grow in the picked order and the deficits tile the
   * line in rank order: the list is ordered by receiver already */
  *nsend = k;
  return e;
}

/* The item blocks and per-rank counts of a finished pick: out-blocks from
 * the send lists, in-blocks and receive lists from the counts the donors
 * sent (count, quanta) in box cnt. */
static lb_err blocks(lb_offload *o, const lb_route_box *cnt)
{
  int64_t nin = 0, nout = 0;
  int cursor = 0;

  for (int j = 0; j < o->r.nlocal; j++)
    for (int64_t i = 0; i < o->nsend[j]; i++) nout += i == 0 || o->send_to[o->soff[j] + i] != o->send_to[o->soff[j] + i - 1];
  for (int i = 0; i < cnt->n; i++) nin += cnt->data[cnt->m[i].off] > 0;
  o->out = malloc(((size_t)nout + 1) * sizeof *o->out);
  o->in = malloc(((size_t)nin + 1) * sizeof *o->in);
  if (!o->out || !o->in) return lb_error(LB_ERR_MEM, "offload: no memory for %lld item messages", (long long)(nin + nout));
  for (int j = 0; j < o->r.nlocal; j++) {
    int first, last;
    o->nsend_ranks[j] = 0;
    for (int64_t i = 0; i < o->nsend[j]; i++) {
      const int dest = o->send_to[o->soff[j] + i];
      if (i == 0 || dest != o->send_to[o->soff[j] + i - 1]) {
        o->out[o->nout++] = (block){j, dest, i, 0};
        o->nsend_ranks[j]++;
      }
      o->out[o->nout - 1].count++;
    }
    messages_to(cnt, o->r.lo + j, &cursor, &first, &last);
    o->nrecv[j] = 0;
    o->nrecv_ranks[j] = 0;
    for (int m = first; m < last; m++) {
      const int64_t *c = cnt->data + cnt->m[m].off;
      if (c[0] <= 0) continue;
      o->in[o->nin++] = (block){j, cnt->m[m].from, o->nrecv[j], c[0]};
      o->nrecv[j] += c[0];
      o->nrecv_ranks[j]++;
      o->after[j] += c[1];
    }
  }
  o->roff[0] = 0;
  for (int j = 1; j < o->r.nlocal; j++) o->roff[j] = o->roff[j - 1] + o->nrecv[j - 1];
  o->recv_from = malloc(((size_t)(o->roff[o->r.nlocal - 1] + o->nrecv[o->r.nlocal - 1]) + 1) * sizeof *o->recv_from);
  if (!o->recv_from) return lb_error(LB_ERR_MEM, "offload: no memory for the received items");
  for (int b = 0; b < o->nin; b++)
    for (int64_t i = 0; i < o->in[b].count; i++) o->recv_from[o->roff[o->in[b].local] + o->in[b].off + i] = o->in[b].peer;
  return LB_OK;
}

/* The donors' picks and the counts round: every donor tells each receiver
 * it met (in its pieces) how many items it sends and their quanta. */
static lb_err donors_and_counts(lb_offload *o, const int64_t *q, const interval *ex, const interval *def, const lb_route_box *rep)
{
  lb_route_box out = {0}, cnt = {0};
  int64_t **idx, nexpect = 0;
  int **to, cursor = 0;
  lb_err e = LB_OK;

  idx = calloc((size_t)o->r.nlocal, sizeof *idx);
  to = calloc((size_t)o->r.nlocal, sizeof *to);
  if (!idx || !to) e = lb_error(LB_ERR_MEM, "offload: no memory for %d ranks' picks", o->r.nlocal);
  for (int j = 0; j < o->r.nlocal && !e; j++) {
    int first, last, prev = -1;
    int64_t ip = 0;
    messages_to(rep, o->r.lo + j, &cursor, &first, &last);
    o->nsend[j] = 0;
    if (ex[j].len > 0) {
      e = pick(o, j, q + o->ioff[j], ex[j].len, ex[j].start, rep, first, last, &idx[j], &to[j], &o->nsend[j]);
      /* one count to every receiver met, in line order */
      for (int m = first; m < last && !e; m++)
        for (size_t p = 0; p < rep->m[m].len / 3 && !e; p++) {
          const int r = (int)rep->data[rep->m[m].off + 3 * p];
          int64_t c[2] = {0, 0};
          if (r == prev) continue;
          prev = r;
          /* the send list is in receiver order, as the pieces are */
          for (; ip < o->nsend[j] && to[j][ip] == r; ip++) {
            c[0]++;
            c[1] += q[o->ioff[j] + idx[j][ip]];
          }
          e = lb_route_post(&out, o->r.lo + j, r, c, 2);
        }
    } else if (def[j].len > 0)
      /* the donors met, in line order: one count from each */
      for (int m = first; m < last; m++)
        for (size_t p = 0; p < rep->m[m].len; p++) {
          const int d = (int)rep->data[rep->m[m].off + p];
          if (d != prev) nexpect++;
          prev = d;
        }
  }
  if (!e) e = lb_route_deliver(&o->r, &out, nexpect, TAG_COUNT, &cnt);
  if (!e) {
    int64_t total = 0;
    for (int j = 0; j < o->r.nlocal; j++) {
      o->soff[j] = total;
      total += o->nsend[j];
    }
    o->send = malloc(((size_t)total + 1) * sizeof *o->send);
    o->send_to = malloc(((size_t)total + 1) * sizeof *o->send_to);
    if (!o->send || !o->send_to) e = lb_error(LB_ERR_MEM, "offload: no memory for %lld sent items", (long long)total);
    for (int j = 0; j < o->r.nlocal && !e; j++)
      for (int64_t i = 0; i < o->nsend[j]; i++) {
        o->send[o->soff[j] + i] = idx[j][i];
        o->send_to[o->soff[j] + i] = to[j][i];
        o->after[j] -= q[o->ioff[j] + idx[j][i]];
      }
  }
  if (!e) e = blocks(o, &cnt);
  for (int j = 0; idx && to && j < o->r.nlocal; j++) {
    free(idx[j]);
    free(to[j]);
  }
  free(idx);
  free(to);
  lb_route_box_free(&out);
  lb_route_box_free(&cnt);
  return e;
}

/* Free the arrays of a plan that failed halfway or is done. */
static void plan_free(lb_offload *o)
{
  free(o->n);
  free(o->send);
  free(o->send_to);
  free(o->recv_from);
  free(o->out);
  free(o->in);
  free(o->req);
  free(o);
}

/* Allocate the per-rank arrays of a plan for nlocal ranks. */
static lb_err plan_alloc(lb_offload *o, int nlocal)
{
  /* eight int64 arrays and two int arrays of nlocal in one block */
  int64_t *a = calloc(9 * (size_t)nlocal + 1, sizeof *a);
  if (!a) return lb_error(LB_ERR_MEM, "offload: no memory for %d ranks", nlocal);
  o->n = a;
  o->ioff = a + nlocal;
  o->nsend = a + 2 * (size_t)nlocal;
  o->soff = a + 3 * (size_t)nlocal;
  o->nrecv = a + 4 * (size_t)nlocal;
  o->roff = a + 5 * (size_t)nlocal;
  o->before = a + 6 * (size_t)nlocal;
  o->after = a + 7 * (size_t)nlocal;
  o->nsend_ranks = (int *)(a + 8 * (size_t)nlocal);
  o->nrecv_ranks = o->nsend_ranks + nlocal;
  return LB_OK;
}

/* Each local rank's quanta (into q) and load; every process learns the
 * total T and whether any process found a bad cost (one collective). */
static lb_err weigh(lb_offload *o, const double *cost, double quantum, int bad, int64_t *q, int64_t *T)
{
  const int64_t cap = ((int64_t)1 << 61) / o->r.nranks;
  int64_t g[2] = {0, bad};

  for (int j = 0; j < o->r.nlocal && !bad; j++) {
    for (int64_t i = o->ioff[j]; i < o->ioff[j] + o->n[j]; i++) {
      q[i] = quanta(cost[i], quantum);
      if (q[i] < 0 || o->before[j] > cap) g[1] = 1;
      else o->before[j] += q[i];
    }
    o->after[j] = o->before[j];
    g[0] += g[1] ? 0 : o->before[j];
  }
  if (MPI_Allreduce(MPI_IN_PLACE, g, 2, MPI_INT64_T, MPI_SUM, o->r.comm) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "offload: MPI_Allreduce failed");
  if (g[1])
    return lb_error(LB_ERR_LOAD, "offload: a rank's item count or cost is negative or not finite, or the costs exceed 2^61 quanta of %g (%d ranks)",
                    quantum, o->r.nranks);
  *T = o->total = g[0];
  return LB_OK;
}

/* Every local rank's excess and deficit against its target (T / P, the
 * first T mod P ranks one quantum more) and their places on the two
 * lines (prefix sums: one MPI_Exscan), and the lines' length E (one
 * MPI_Allreduce). */
static lb_err place(lb_offload *o, int64_t T, interval *ex, interval *def, int64_t *E)
{
  const int64_t P = o->r.nranks;
  int64_t sum[2] = {0, 0}, base[2] = {0, 0};

  for (int j = 0; j < o->r.nlocal; j++) {
    const int64_t r = o->r.lo + j, target = T / P + (r < T % P), x = o->before[j] - target;
    ex[j] = (interval){sum[0], x > 0 ? x : 0};
    def[j] = (interval){sum[1], x < 0 ? -x : 0};
    sum[0] += ex[j].len;
    sum[1] += def[j].len;
  }
  if (o->r.nprocs > 1) {
    if (MPI_Exscan(sum, base, 2, MPI_INT64_T, MPI_SUM, o->r.comm) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "offload: MPI_Exscan failed");
    if (o->r.lo == 0) base[0] = base[1] = 0; /* MPI_Exscan leaves rank 0's undefined */
    if (MPI_Allreduce(MPI_IN_PLACE, sum, 1, MPI_INT64_T, MPI_SUM, o->r.comm) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "offload: MPI_Allreduce failed");
  }
  for (int j = 0; j < o->r.nlocal; j++) {
    ex[j].start += base[0];
    def[j].start += base[1];
  }
  *E = sum[0];
  return LB_OK;
}

/* The rendezvous: registrations with the segments, the segments' replies
 * (box rep, delivered). */
static lb_err meet(lb_offload *o, const interval *ex, const interval *def, int64_t E, lb_route_box *rep)
{
  const int64_t w = (E + o->r.nranks - 1) / o->r.nranks;
  lb_route_box out = {0}, reg = {0};
  interval *iv = malloc((size_t)o->r.nlocal * sizeof *iv);
  int *kind = malloc((size_t)o->r.nlocal * sizeof *kind), cursor = 0;
  int64_t *nreply = malloc((size_t)o->r.nlocal * sizeof *nreply), expect = 0;
  lb_err e = LB_OK;

  if (!iv || !kind || !nreply) e = lb_error(LB_ERR_MEM, "offload: no memory for %d ranks", o->r.nlocal);
  for (int j = 0; j < o->r.nlocal && !e; j++) {
    kind[j] = ex[j].len > 0 ? 0 : 1;
    iv[j] = ex[j].len > 0 ? ex[j] : def[j];
  }
  if (!e) e = post_registrations(o, iv, kind, w, &out, nreply);
  if (!e) e = lb_route_deliver(&o->r, &out, -1, TAG_REGISTER, &reg);
  out.len = 0;
  out.n = 0;
  for (int j = 0; j < o->r.nlocal && !e; j++) {
    int first, last;
    messages_to(&reg, o->r.lo + j, &cursor, &first, &last);
    if (last > first) e = post_replies(o->r.lo + j, w, &reg, first, last, &out);
    expect += nreply[j];
  }
  if (!e) e = lb_route_deliver(&o->r, &out, (long)expect, TAG_REPLY, rep);
  lb_route_box_free(&out);
  lb_route_box_free(&reg);
  free(iv);
  free(kind);
  free(nreply);
  return e;
}

lb_err lb_offload_plan(MPI_Comm comm, int nlocal, const int64_t *n, const double *cost, double quantum, lb_offload **plan)
{
  lb_offload *o;
  interval *ex = NULL, *def = NULL;
  lb_route_box rep = {0};
  int64_t *q = NULL, T = 0, E = 0, items = 0;
  int me, bad = 0;
  lb_err e;

  *plan = NULL;
  if (!(quantum > 0) || !isfinite(quantum)) return lb_error(LB_ERR_ARG, "offload: quantum %g: must be a positive number", quantum);
  if (!(o = calloc(1, sizeof *o))) return lb_error(LB_ERR_MEM, "offload: no memory for a plan");
  o->r.comm = comm;
  if (MPI_Comm_size(comm, &o->r.nprocs) != MPI_SUCCESS || MPI_Comm_rank(comm, &me) != MPI_SUCCESS) {
    free(o);
    return lb_error(LB_ERR_MPI, "offload: MPI_Comm_size failed");
  }
  if (nlocal < 1 || (o->r.nprocs > 1 && nlocal != 1)) {
    const int nprocs = o->r.nprocs;
    free(o);
    return lb_error(LB_ERR_ARG, "offload: %d ranks in one of %d processes: one each on MPI, or all in one process", nlocal, nprocs);
  }
  o->r.nlocal = nlocal;
  o->r.lo = o->r.nprocs > 1 ? me : 0;
  o->r.nranks = o->r.nprocs > 1 ? o->r.nprocs : nlocal;
  if ((e = plan_alloc(o, nlocal))) {
    free(o);
    return e;
  }
  for (int j = 0; j < nlocal; j++) {
    bad |= n[j] < 0;
    o->n[j] = n[j] > 0 ? n[j] : 0;
    o->ioff[j] = items;
    items += o->n[j];
  }
  q = malloc(((size_t)items + 1) * sizeof *q);
  ex = malloc((size_t)nlocal * sizeof *ex);
  def = malloc((size_t)nlocal * sizeof *def);
  /* a failure here still takes part in the first collective, which
   * carries it to every process: none is left waiting */
  bad |= !q || !ex || !def;
  e = weigh(o, cost, quantum, bad, q, &T);
  if (!e) e = place(o, T, ex, def, &E);
  if (!e && E > 0) e = meet(o, ex, def, E, &rep);
  if (!e && E > 0) e = donors_and_counts(o, q, ex, def, &rep);
  o->plan_messages = o->r.messages;
  lb_route_box_free(&rep);
  free(q);
  free(ex);
  free(def);
  if (e) {
    plan_free(o);
    return e;
  }
  *plan = o;
  return LB_OK;
}

void lb_offload_info_get(const lb_offload *o, int j, lb_offload_info *info)
{
  info->rank = o->r.lo + j;
  info->n = o->n[j];
  info->nsend = o->nsend[j];
  info->send = o->send ? o->send + o->soff[j] : NULL;
  info->send_to = o->send_to ? o->send_to + o->soff[j] : NULL;
  info->nrecv = o->nrecv[j];
  info->recv_from = o->recv_from ? o->recv_from + o->roff[j] : NULL; /* NULL: nothing moves */
  info->nsend_ranks = o->nsend_ranks[j];
  info->nrecv_ranks = o->nrecv_ranks[j];
  info->load_before = o->before[j];
  info->load_after = o->after[j];
  info->plan_messages = o->plan_messages;
}

lb_err lb_offload_stats_get(lb_offload *o, lb_offload_stats *st)
{
  int64_t sum[4] = {0, 0, 0, 0}, max[3] = {0, 0, 0};

  if (!o->have_stats) {
    for (int j = 0; j < o->r.nlocal; j++) {
      sum[0] += o->n[j];
      sum[1] += o->nsend[j];
      sum[2] += o->nsend_ranks[j];
      max[0] = o->before[j] > max[0] ? o->before[j] : max[0];
      max[1] = o->after[j] > max[1] ? o->after[j] : max[1];
      max[2] = o->nsend_ranks[j] > max[2] ? o->nsend_ranks[j] : max[2];
      max[2] = o->nrecv_ranks[j] > max[2] ? o->nrecv_ranks[j] : max[2];
    }
    sum[3] = o->plan_messages;
    if (o->r.nprocs > 1 && (MPI_Allreduce(MPI_IN_PLACE, sum, 4, MPI_INT64_T, MPI_SUM, o->r.comm) != MPI_SUCCESS ||
                            MPI_Allreduce(MPI_IN_PLACE, max, 3, MPI_INT64_T, MPI_MAX, o->r.comm) != MPI_SUCCESS))
      return lb_error(LB_ERR_MPI, "offload: MPI_Allreduce failed");
    o->stats = (lb_offload_stats){o->r.nranks, sum[0], sum[1], o->total, max[0], max[1], max[2], sum[2], sum[3], PLAN_COLLECTIVES};
    o->have_stats = 1;
  }
  *st = o->stats;
  return LB_OK;
}

/* Post the item messages of one way: blocks `from` are read from src
 * (offsets by their local rank's list in soff), blocks `to` written into
 * dst (offsets in doff); on one process, copies. */
static lb_err post_way(lb_offload *o, size_t bytes, const block *from, int nfrom, const int64_t *soff, const void *src, const block *to, int nto,
                       const int64_t *doff, void *dst, int tag)
{
  const char *s = src;
  char *d = dst;

  o->nreq = 0;
  if (o->r.nprocs == 1) {
    /* block (j -> peer) meets block (peer <- j): both lists are by local
     * rank then peer, so one cursor per receiving rank finds it */
    int64_t *cur = calloc((size_t)o->r.nlocal + 1, sizeof *cur);
    int64_t *first = calloc((size_t)o->r.nlocal + 1, sizeof *first);
    if (!cur || !first) {
      free(cur);
      free(first);
      return lb_error(LB_ERR_MEM, "offload: no memory for %d ranks", o->r.nlocal);
    }
    for (int b = nto - 1; b >= 0; b--) first[to[b].local] = b;
    for (int j = 0; j < o->r.nlocal; j++) cur[j] = first[j];
    for (int b = 0; b < nfrom; b++) {
      const block *x = &from[b], *y = &to[cur[x->peer]++];
      memcpy(d + (size_t)(doff[y->local] + y->off) * bytes, s + (size_t)(soff[x->local] + x->off) * bytes, (size_t)x->count * bytes);
    }
    free(cur);
    free(first);
    return LB_OK;
  }
  if (!o->req && !(o->req = malloc(((size_t)o->nin + (size_t)o->nout + 1) * sizeof *o->req))) return lb_error(LB_ERR_MEM, "offload: no memory for requests");
  for (int b = 0; b < nto; b++) {
    if ((double)to[b].count * bytes > 2147483647.0) return lb_error(LB_ERR_ARG, "offload: %lld items of %zu bytes in one message", (long long)to[b].count, bytes);
    if (MPI_Irecv(d + (size_t)(doff[0] + to[b].off) * bytes, (int)((size_t)to[b].count * bytes), MPI_BYTE, to[b].peer, tag, o->r.comm, &o->req[o->nreq++]) !=
        MPI_SUCCESS)
      return lb_error(LB_ERR_MPI, "offload: MPI_Irecv failed");
  }
  for (int b = 0; b < nfrom; b++) {
    if ((double)from[b].count * bytes > 2147483647.0) return lb_error(LB_ERR_ARG, "offload: %lld items of %zu bytes in one message", (long long)from[b].count, bytes);
    if (MPI_Isend(s + (size_t)(soff[0] + from[b].off) * bytes, (int)((size_t)from[b].count * bytes), MPI_BYTE, from[b].peer, tag, o->r.comm,
                  &o->req[o->nreq++]) != MPI_SUCCESS)
      return lb_error(LB_ERR_MPI, "offload: MPI_Isend failed");
  }
  return LB_OK;
}

static lb_err wait_way(lb_offload *o)
{
  if (o->nreq && MPI_Waitall(o->nreq, o->req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "offload: MPI_Waitall failed");
  o->nreq = 0;
  return LB_OK;
}

lb_err lb_offload_forward_begin(lb_offload *o, size_t item_bytes, const void *send, void *recv)
{
  return post_way(o, item_bytes, o->out, o->nout, o->soff, send, o->in, o->nin, o->roff, recv, TAG_FORWARD);
}

lb_err lb_offload_forward_end(lb_offload *o) { return wait_way(o); }

lb_err lb_offload_backward_begin(lb_offload *o, size_t result_bytes, const void *results, void *back)
{
  return post_way(o, result_bytes, o->in, o->nin, o->roff, results, o->out, o->nout, o->soff, back, TAG_BACKWARD);
}

lb_err lb_offload_backward_end(lb_offload *o) { return wait_way(o); }

void lb_offload_destroy(lb_offload **o)
{
  if (!*o) return;
  plan_free(*o);
  *o = NULL;
}
