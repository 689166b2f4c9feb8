/* lbbench -offload (offloadbench.h): the offload plan of lboffload.h on a
 * recorded curve's cells, on virtual ranks (all in this process, up to
 * 131072 of them) or on MPI ranks. */
#define _POSIX_C_SOURCE 200809L /* getrusage's ru_maxrss */
#include "bench/offloadbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "balance/lboffload.h"
#include "util/json.h"

/* The process's peak resident memory so far, bytes. */
static double peak_rss(void)
{
  struct rusage ru;
  return getrusage(RUSAGE_SELF, &ru) ? NAN : 1024.0 * (double)ru.ru_maxrss;
}

/* Bytes of one item there and back in the app's reaction offload: the
 * centroid and A, B, C of a degree-1 cell, then A, B, C, its steps and its
 * clock. */
static size_t item_bytes(int dim) { return sizeof(double) * (size_t)(dim + 3 * (dim + 1)); }
static size_t result_bytes(int dim) { return sizeof(double) * (size_t)(3 * (dim + 1) + 2); }

/* What one replay measured. */
typedef struct {
  lb_offload_stats st;
  double plan_s, exchange_s, rss0, rss1;
  int64_t max_items;     /* the most items one rank computes after the plan */
  double dearest;        /* the dearest item's cost in quanta: no plan of whole items can put the largest rank below it */
} offload_run;

/* The plan and both ways on this process's ranks: nlocal of them, n[j]
 * items each, costs w (all ranks' in order, from this process's first). */
static lb_err replay(MPI_Comm comm, int nlocal, const int64_t *n, const double *w, double quantum, int dim, offload_run *r)
{
  lb_offload *o = NULL;
  char *sbuf = NULL, *rbuf = NULL;
  int64_t ns = 0, nr = 0;
  double t0;
  lb_err err;

  r->rss0 = peak_rss();
  t0 = MPI_Wtime();
  if ((err = lb_offload_plan(comm, nlocal, n, w, quantum, &o))) return err;
  r->plan_s = MPI_Wtime() - t0;
  r->rss1 = peak_rss();
  r->max_items = 0;
  r->dearest = 0;
  for (int64_t j = 0, off = 0; j < nlocal; off += n[j], j++)
    for (int64_t i = 0; i < n[j]; i++) r->dearest = fmax(r->dearest, llround(w[off + i] / quantum));
  for (int j = 0; j < nlocal; j++) {
    lb_offload_info in;
    lb_offload_info_get(o, j, &in);
    ns += in.nsend;
    nr += in.nrecv;
    r->max_items = fmax(r->max_items, in.n - in.nsend + in.nrecv);
  }
  sbuf = calloc((size_t)ns + 1, item_bytes(dim) > result_bytes(dim) ? item_bytes(dim) : result_bytes(dim));
  rbuf = calloc((size_t)nr + 1, item_bytes(dim) > result_bytes(dim) ? item_bytes(dim) : result_bytes(dim));
  if (!sbuf || !rbuf) err = lb_error(LB_ERR_MEM, "-offload: out of memory for %lld items", (long long)(ns + nr));
  t0 = MPI_Wtime();
  if (!err) err = lb_offload_forward_begin(o, item_bytes(dim), sbuf, rbuf);
  if (!err) err = lb_offload_forward_end(o);
  if (!err) err = lb_offload_backward_begin(o, result_bytes(dim), rbuf, sbuf);
  if (!err) err = lb_offload_backward_end(o);
  r->exchange_s = MPI_Wtime() - t0;
  if (!err) err = lb_offload_stats_get(o, &r->st);
  if (!err && (MPI_Allreduce(MPI_IN_PLACE, &r->max_items, 1, MPI_INT64_T, MPI_MAX, comm) != MPI_SUCCESS ||
               MPI_Allreduce(MPI_IN_PLACE, &r->dearest, 1, MPI_DOUBLE, MPI_MAX, comm) != MPI_SUCCESS))
    err = lb_error(LB_ERR_MPI, "MPI_Allreduce failed");
  free(sbuf);
  free(rbuf);
  lb_offload_destroy(&o);
  return err;
}

/* The report: a few lines on rank 0 and the JSON line. */
static lb_err report(const lb_offloadbench_opts *o, const lb_load_trace *tr, int P, int64_t n, const offload_run *r, int mpi)
{
  const lb_offload_stats *st = &r->st;
  const double mean = (double)st->total / P, bytes = (double)st->moved * (double)(item_bytes(tr->dim) + result_bytes(tr->dim));
  /* on the virtual backend the process holds every rank: its time and
   * memory are P ranks' */
  const double per = mpi ? 1 : P, mem = fmax(r->rss1 - r->rss0, 0) / per;
  const double before = mean > 0 ? st->max_before / mean : 1, after = mean > 0 ? st->max_after / mean : 1;

  printf("lbbench: offload on %s (%s backend), %lld cells, scenario %s\n", o->graph, mpi ? "mpi" : "virtual", (long long)n, o->scenario);
  printf("  trace: %dD cycle %d of %d ranks, %lld cells (refined %d times), start split %s, %d cop%s\n", tr->dim, tr->cycle, tr->nranks, (long long)tr->ncells,
         o->rp.refine, o->split_name, o->rp.R, o->rp.R > 1 ? "ies" : "y");
  printf("  pointwise work: max/mean %.4f -> %.4f (the dearest rank's cells' cost over the mean before and after the plan; the dearest cell alone %.4f)\n",
         before, after, mean > 0 ? r->dearest / mean : 0);
  printf("  moved %lld of %lld items (%.2f%%), %.4g bytes there and back (%zu + %zu per item), item messages %lld (%.2f per rank, at most %lld on one)\n",
         (long long)st->moved, (long long)st->items, st->items ? 100.0 * st->moved / st->items : 0.0, bytes, item_bytes(tr->dim), result_bytes(tr->dim),
         (long long)st->messages, (double)st->messages / P, (long long)st->max_messages);
  printf("  plan: %.6f s (%.3f us per rank), %lld plan messages (%.2f per rank), %d collectives, peak memory %.0f bytes per rank; items there and back %.6f s\n",
         r->plan_s, 1e6 * r->plan_s / per, (long long)st->plan_messages, (double)st->plan_messages / P, st->collectives, mem, r->exchange_s);
  if (o->json && o->json[0]) {
    FILE *f = fopen(o->json, "a");
    json_line j;
    if (!f) return lb_error(LB_ERR_FILE, "-json '%s': cannot open for appending", o->json);
    json_run_header(&j, f, "offload", o->graph, P, mpi ? "mpi" : "virtual", o->scenario);
    json_int(&j, "cells", (long long)n);
    json_int(&j, "trace_cycle", tr->cycle);
    json_int(&j, "refine", o->rp.refine);
    json_int(&j, "replicate", o->rp.R);
    json_str(&j, "trace_split", o->split_name);
    json_real(&j, "max_over_mean_before", before);
    json_real(&j, "max_over_mean_after", after);
    json_real(&j, "dearest_item_over_mean", mean > 0 ? r->dearest / mean : 0);
    json_int(&j, "items_max_per_rank", (long long)r->max_items);
    json_int(&j, "items_moved", (long long)st->moved);
    json_real(&j, "bytes_moved", bytes);
    json_int(&j, "item_messages", (long long)st->messages);
    json_int(&j, "item_messages_max", (long long)st->max_messages);
    json_int(&j, "plan_messages", (long long)st->plan_messages);
    json_int(&j, "collectives", st->collectives);
    json_real(&j, "plan_s", r->plan_s);
    json_real(&j, "plan_s_per_rank", r->plan_s / per);
    json_real(&j, "plan_bytes_per_rank", mem);
    json_real(&j, "exchange_s", r->exchange_s);
    json_end(&j);
    if (fclose(f)) return lb_error(LB_ERR_FILE, "-json '%s': write failed", o->json);
  }
  return LB_OK;
}

lb_err lb_offloadbench_run(const lb_offloadbench_opts *o, int me)
{
  lb_graph *g = NULL;
  lb_load_trace tr, prev;
  int64_t *counts = NULL, n = 0, first = 0;
  double *w = NULL, sum = 0;
  offload_run r;
  int size;
  lb_err err;

  memset(&tr, 0, sizeof tr);
  memset(&prev, 0, sizeof prev);
  if ((err = lb_graph_create(o->graph, &g))) return err;
  const int P = g->n;
  if (g->kind != LB_GRAPH_LINE) err = lb_error(LB_ERR_ARG, "-offload runs on the ranks along the curve: give -graph line:P, not '%s'", g->spec);
  else if (!lb_trace_is_scenario(o->scenario)) err = lb_error(LB_ERR_ARG, "-offload replays a load trace: give -scenario trace:FILE[:CYCLE], not '%s'", o->scenario);
  else if (MPI_Comm_size(o->comm, &size) != MPI_SUCCESS) err = lb_error(LB_ERR_MPI, "MPI_Comm_size failed");
  else if (!o->virt && size != P)
    err = lb_error(LB_ERR_SIZE, "graph '%s' has %d ranks but the MPI backend runs on %d processes (use as many processes or -virtual)", g->spec, P, size);
  if (!err && !(counts = malloc((size_t)P * sizeof *counts))) err = lb_error(LB_ERR_MEM, "-graph %s: out of memory", g->spec);
  if (!err) err = lb_trace_open_scenario(o->scenario, &o->rp, &tr, &prev);
  if (!err) err = lb_trace_curve(&tr, &prev, &o->rp, P, &n, &w, counts);
  lb_trace_free(&prev);
  if (!err) {
    /* costs counted in millionths of the mean cell's: whole quanta */
    for (int64_t i = 0; i < n; i++) sum += w[i];
    const double quantum = sum > 0 ? 1e-6 * sum / (double)n : 1;
    if (o->virt) err = replay(MPI_COMM_SELF, P, counts, w, quantum, tr.dim, &r);
    else {
      for (int q = 0; q < me; q++) first += counts[q];
      err = replay(o->comm, 1, counts + me, w + first, quantum, tr.dim, &r);
      /* the slowest rank's plan, and the largest rank's memory */
      if (!err && (MPI_Allreduce(MPI_IN_PLACE, &r.plan_s, 1, MPI_DOUBLE, MPI_MAX, o->comm) != MPI_SUCCESS ||
                   MPI_Allreduce(MPI_IN_PLACE, &r.exchange_s, 1, MPI_DOUBLE, MPI_MAX, o->comm) != MPI_SUCCESS))
        err = lb_error(LB_ERR_MPI, "MPI_Allreduce failed");
      if (!err) {
        double d = r.rss1 - r.rss0;
        if (MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, o->comm) != MPI_SUCCESS) err = lb_error(LB_ERR_MPI, "MPI_Allreduce failed");
        r.rss0 = 0;
        r.rss1 = d;
      }
    }
  }
  if (!err && me == 0) err = report(o, &tr, P, n, &r, !o->virt);
  lb_trace_free(&tr);
  lb_graph_destroy(&g);
  free(w);
  free(counts);
  return err;
}
