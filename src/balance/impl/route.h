/* Private to the offload (offload.c, route.c): rank-to-rank messages of
 * int64 values between global ranks, delivered on MPI (one rank per
 * process) or within one process that holds every rank (the virtual
 * backend), in the same order on both. */
#ifndef AMRDLB_ROUTE_H
#define AMRDLB_ROUTE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "balance/balance.h"

typedef struct {
  int from, to;
  size_t off, len; /* into the box's data */
} lb_route_msg;

/* A box of messages: posted ones, or delivered ones sorted by (to, from,
 * posting order). */
typedef struct {
  int64_t *data;
  size_t len, cap;
  lb_route_msg *m;
  int n, cap_m;
} lb_route_box;

/* Who takes part: the comm, this process's first global rank and how
 * many it holds, and the global rank count. */
typedef struct {
  MPI_Comm comm;
  int nprocs, lo, nlocal, nranks;
  long long messages; /* point-to-point messages delivered so far */
} lb_route;

/* Append a message of len values from rank `from` to rank `to`. */
lb_err lb_route_post(lb_route_box *b, int from, int to, const int64_t *v, size_t len);

/* Deliver box out into box in (emptied first).  expect: the messages this
 * process will receive, or -1 when it cannot know (then a non-blocking
 * consensus round: synchronous sends and MPI_Ibarrier).  tag: this
 * round's, apart from every other round's. */
lb_err lb_route_deliver(lb_route *r, const lb_route_box *out, long expect, int tag, lb_route_box *in);

/* Release a box's arrays and empty it. */
void lb_route_box_free(lb_route_box *b);

#endif
