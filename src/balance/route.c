/* Rank-to-rank messages of the offload plan (impl/route.h).  Within one
 * process the delivery is a stable sort by receiver; on MPI a round whose
 * receivers cannot know their senders is a non-blocking consensus
 * (Hoefler, Siebert and Lumsdaine 2010, NBX): every message goes by
 * synchronous send, so that a rank whose sends have all been matched
 * enters a non-blocking barrier, and everyone receives until the barrier
 * completes.  No rank needs a P-long count array. */
#include "balance/impl/route.h"

#include <stdlib.h>
#include <string.h>

lb_err lb_route_post(lb_route_box *b, int from, int to, const int64_t *v, size_t len)
{
  if (b->len + len > b->cap) {
    size_t cap = 2 * b->cap + len + 16;
    int64_t *d = realloc(b->data, cap * sizeof *d);
    if (!d) return lb_error(LB_ERR_MEM, "offload: no memory for %zu message values", cap);
    b->data = d;
    b->cap = cap;
  }
  if (b->n == b->cap_m) {
    int cap = 2 * b->cap_m + 16;
    lb_route_msg *m = realloc(b->m, (size_t)cap * sizeof *m);
    if (!m) return lb_error(LB_ERR_MEM, "offload: no memory for %d messages", cap);
    b->m = m;
    b->cap_m = cap;
  }
  if (len) memcpy(b->data + b->len, v, len * sizeof *v);
  b->m[b->n++] = (lb_route_msg){from, to, b->len, len};
  b->len += len;
  return LB_OK;
}

void lb_route_box_free(lb_route_box *b)
{
  free(b->data);
  free(b->m);
  memset(b, 0, sizeof *b);
}

static int by_receiver(const void *a, const void *b)
{
  const lb_route_msg *x = a, *y = b;
  if (x->to != y->to) return x->to < y->to ? -1 : 1;
  if (x->from != y->from) return x->from < y->from ? -1 : 1;
  /* posting order: the offsets grow with it */
  return x->off < y->off ? -1 : x->off > y->off;
}

/* A box's messages by receiver, then sender, then posting order.  qsort
 * takes no null array, even of no items, and a box that received nothing
 * has none. */
static void sort_by_receiver(lb_route_box *b)
{
  if (b->n > 1) qsort(b->m, (size_t)b->n, sizeof *b->m, by_receiver);
}

/* Within one process: the posted box, sorted. */
static lb_err deliver_local(const lb_route_box *out, lb_route_box *in)
{
  lb_err e;
  for (int i = 0; i < out->n; i++)
    if ((e = lb_route_post(in, out->m[i].from, out->m[i].to, out->data + out->m[i].off, out->m[i].len))) return e;
  sort_by_receiver(in);
  return LB_OK;
}

/* Receive one message that MPI_Iprobe or MPI_Probe found. */
static lb_err receive(lb_route *r, const MPI_Status *st, int tag, lb_route_box *in)
{
  int count;
  lb_err e;
  if (MPI_Get_count(st, MPI_INT64_T, &count) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "offload: MPI_Get_count failed");
  if ((e = lb_route_post(in, st->MPI_SOURCE, r->lo, NULL, 0))) return e;
  /* room for the values: post an empty message, then grow it in place */
  if (in->len + (size_t)count > in->cap) {
    size_t cap = 2 * in->cap + (size_t)count + 16;
    int64_t *d = realloc(in->data, cap * sizeof *d);
    if (!d) return lb_error(LB_ERR_MEM, "offload: no memory for %zu message values", cap);
    in->data = d;
    in->cap = cap;
  }
  if (MPI_Recv(in->data + in->len, count, MPI_INT64_T, st->MPI_SOURCE, tag, r->comm, MPI_STATUS_IGNORE) != MPI_SUCCESS)
    return lb_error(LB_ERR_MPI, "offload: MPI_Recv failed");
  in->m[in->n - 1].len = (size_t)count;
  in->len += (size_t)count;
  return LB_OK;
}

lb_err lb_route_deliver(lb_route *r, const lb_route_box *out, long expect, int tag, lb_route_box *in)
{
  MPI_Request *req;
  lb_err e = LB_OK;

  in->len = 0;
  in->n = 0;
  if (r->nprocs == 1) {
    r->messages += out->n;
    return deliver_local(out, in);
  }
  req = malloc(((size_t)out->n + 1) * sizeof *req);
  if (!req) return lb_error(LB_ERR_MEM, "offload: no memory for %d requests", out->n);
  for (int i = 0; i < out->n; i++) {
    const int rc = expect < 0 ? MPI_Issend(out->data + out->m[i].off, (int)out->m[i].len, MPI_INT64_T, out->m[i].to, tag, r->comm, &req[i])
                              : MPI_Isend(out->data + out->m[i].off, (int)out->m[i].len, MPI_INT64_T, out->m[i].to, tag, r->comm, &req[i]);
    if (rc != MPI_SUCCESS) e = lb_error(LB_ERR_MPI, "offload: MPI_Isend failed");
  }
  if (expect >= 0) {
    for (long k = 0; k < expect && !e; k++) {
      MPI_Status st;
      if (MPI_Probe(MPI_ANY_SOURCE, tag, r->comm, &st) != MPI_SUCCESS) e = lb_error(LB_ERR_MPI, "offload: MPI_Probe failed");
      else e = receive(r, &st, tag, in);
    }
  } else {
    MPI_Request barrier = MPI_REQUEST_NULL;
    int done = 0, in_barrier = 0;
    while (!done && !e) {
      MPI_Status st;
      int flag;
      if (MPI_Iprobe(MPI_ANY_SOURCE, tag, r->comm, &flag, &st) != MPI_SUCCESS) e = lb_error(LB_ERR_MPI, "offload: MPI_Iprobe failed");
      else if (flag) e = receive(r, &st, tag, in);
      if (e) break;
      if (in_barrier) {
        if (MPI_Test(&barrier, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) e = lb_error(LB_ERR_MPI, "offload: MPI_Test failed");
      } else {
        int sent;
        if (MPI_Testall(out->n, req, &sent, MPI_STATUSES_IGNORE) != MPI_SUCCESS) e = lb_error(LB_ERR_MPI, "offload: MPI_Testall failed");
        else if (sent) {
          if (MPI_Ibarrier(r->comm, &barrier) != MPI_SUCCESS) e = lb_error(LB_ERR_MPI, "offload: MPI_Ibarrier failed");
          in_barrier = 1;
        }
      }
    }
  }
  if (!e && MPI_Waitall(out->n, req, MPI_STATUSES_IGNORE) != MPI_SUCCESS) e = lb_error(LB_ERR_MPI, "offload: MPI_Waitall failed");
  free(req);
  if (e) return e;
  r->messages += out->n;
  sort_by_receiver(in);
  return LB_OK;
}
