#ifndef AMRDLB_LBOFFLOAD_H
#define AMRDLB_LBOFFLOAD_H

/* Pointwise work balanced apart from the mesh partition.
 *
 * Work whose items need no neighbour (a cell's chemistry in operator-split
 * reacting flow, a local particle solve) can run on any rank: each time
 * step the items of the ranks above the mean cost go to ranks below it,
 * are computed there and their results come back, while the mesh stays
 * where it is (Tekgül et al. 2021, DLBFoam, do this for chemistry).
 *
 * The plan.  Every cost is counted in whole quanta (llround(cost /
 * quantum)), so that all that follows is integer arithmetic: exact,
 * deterministic, the same on any backend and rank count.  With T the
 * total, rank r's target is T / P (the first T mod P ranks one quantum
 * more), and it lies e_r above it or d_r below it; sum e = sum d = E.
 * Laid end to end in rank order, the excesses tile [0, E) and so do the
 * deficits: prefix sums place every rank's interval on its line.  A rank
 * above its target offers its items dearest first (ties: the lower
 * index) and sends each that fits whole within what is left of its
 * excess, the sent ones laid one after the other from its interval's
 * start; one that does not fit stays, so that cheaper ones may still fill
 * the rest.  A sent item's midpoint falls in one rank's deficit interval:
 * that rank computes it.  So every rank ends within one item of its
 * target: a donor keeps less than the cheapest item it kept back, a
 * receiver gets its deficit to within half an item at each end.  Items
 * are conserved (each computed exactly once) and never pass through a
 * third rank.
 *
 * The intervals meet by rendezvous, with no P-long array anywhere: the
 * line [0, E) is cut into P segments of equal length, rank j holding
 * segment j; every rank with an excess or a deficit registers its
 * interval with the segments it overlaps, each segment owner intersects
 * the intervals it holds and tells both sides of each overlap.  Cost per
 * step: three collectives of at most two integers (the total, the prefix
 * sums, E), one non-blocking consensus round for the registrations
 * (Hoefler et al. 2010's NBX: synchronous sends and a non-blocking
 * barrier), point-to-point replies and counts between ranks that know of
 * each other, and O(n log n) local work for n items (the sort).  A rank
 * exchanges messages with the segments its interval spans and the ranks
 * it trades with: O(1 + P e_r / E) of them, so a rank that holds
 * everything (e_r = E) talks to all.
 *
 * Backends: on MPI every process is one rank (nlocal = 1); on the virtual
 * backend one process holds all P ranks (comm of size 1, nlocal = P) and
 * the messages are copies: the same plan, item for item.
 *
 * Using it, each step:
 *
 *     lb_offload *o;
 *     lb_offload_plan(comm, 1, &n, cost, LB_OFFLOAD_QUANTUM, &o);
 *     lb_offload_info(o, 0, &info);        // info.nsend, info.send[], info.nrecv
 *     pack items info.send[0..nsend) into sbuf (item_bytes each)
 *     lb_offload_forward_begin(o, item_bytes, sbuf, rbuf);  // rbuf: nrecv items
 *     compute the items this rank keeps (not in info.send)
 *     lb_offload_forward_end(o);
 *     compute rbuf's items into results (result_bytes each)
 *     lb_offload_backward_begin(o, result_bytes, results, back);
 *     lb_offload_backward_end(o);          // back: nsend results, in info.send order
 *     lb_offload_destroy(&o);
 */

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "balance/balance.h"

/** The default quantum: 1 ns when costs are seconds (a cell where nothing
 *  reacts costs hundreds). */
#define LB_OFFLOAD_QUANTUM 1e-9

/** An offload plan of one step (opaque). */
typedef struct lb_offload lb_offload;

/** What a plan gives one rank. */
typedef struct {
  int rank;            /**< the global rank */
  int64_t n;           /**< its items */
  int64_t nsend;       /**< items it sends away */
  const int64_t *send; /**< their indices (0..n), in the order of the send and back buffers; NULL when no item moves */
  const int *send_to;  /**< the rank each goes to (NULL alike) */
  int64_t nrecv;       /**< items it computes for others */
  const int *recv_from; /**< the rank each came from, in the order of the receive buffer (ranks ascending); NULL when no item moves */
  int nsend_ranks, nrecv_ranks; /**< ranks it sends items to, receives them from */
  int64_t load_before; /**< its cost in quanta before the plan */
  int64_t load_after;  /**< after: the items it keeps and those it receives */
  int64_t plan_messages; /**< the plan's point-to-point messages this process sent (every rank's, on the virtual backend) */
} lb_offload_info;

/** Sums over the ranks of one plan (collective totals, identical on every
 *  process). */
typedef struct {
  int nranks;
  int64_t items;         /**< items on all ranks */
  int64_t moved;         /**< items sent to another rank */
  int64_t total;         /**< total cost in quanta */
  int64_t max_before, max_after; /**< the largest rank's cost in quanta before and after */
  int64_t max_messages;  /**< the most item messages one rank sends and receives in one direction */
  int64_t messages;      /**< item messages, one direction (the results return by as many) */
  int64_t plan_messages; /**< the plan's own point-to-point messages (registrations, replies, counts) */
  int collectives;       /**< the plan's collectives */
} lb_offload_stats;

/**
 * The plan of one step (collective over comm).  This process holds nlocal
 * consecutive ranks (1 on MPI; every rank, on a comm of size 1, for the
 * virtual backend); n[j] is local rank j's item count and cost its items'
 * costs, rank after rank (sum n values, finite and >= 0). quantum > 0: the
 * cost unit counted in whole numbers (LB_OFFLOAD_QUANTUM for seconds).
 * Fails with LB_ERR_LOAD on every process when any cost is negative or not
 * finite, or when the costs overflow 62 bits of quanta.
 */
lb_err lb_offload_plan(MPI_Comm comm, int nlocal, const int64_t *n, const double *cost, double quantum, lb_offload **plan);

/** What the plan gives local rank j (0 <= j < nlocal); the arrays belong
 *  to the plan. */
void lb_offload_info_get(const lb_offload *plan, int j, lb_offload_info *info);

/** The plan's totals over all ranks (collective on MPI; the first call
 *  computes them). */
lb_err lb_offload_stats_get(lb_offload *plan, lb_offload_stats *stats);

/**
 * Send the sent items (collective over the plan's comm): send holds each
 * local rank's sent items in its info.send order, item_bytes each, rank
 * after rank; recv receives each local rank's nrecv items in recv_from
 * order, rank after rank.  Both buffers stay the caller's and must not
 * be touched until lb_offload_forward_end.  On the virtual backend the
 * copy is done here.
 */
lb_err lb_offload_forward_begin(lb_offload *plan, size_t item_bytes, const void *send, void *recv);

/** Wait for lb_offload_forward_begin's items. */
lb_err lb_offload_forward_end(lb_offload *plan);

/**
 * Return the results (collective): results holds every local rank's
 * nrecv results in recv_from order, result_bytes each; back receives each
 * local rank's nsend results in info.send order.  Untouched until
 * lb_offload_backward_end.
 */
lb_err lb_offload_backward_begin(lb_offload *plan, size_t result_bytes, const void *results, void *back);

/** Wait for lb_offload_backward_begin's results. */
lb_err lb_offload_backward_end(lb_offload *plan);

/** Release a plan and set *plan to NULL. */
void lb_offload_destroy(lb_offload **plan);

#endif
