/* The superstep engine: checks the input, runs a method's per-rank step on
 * the chosen backend until the method, the target or the iteration cap
 * stops it, counts rounds, messages, bytes and collectives, and assembles
 * the result.
 *
 * A superstep of a method flagged LB_LOCAL is neighbour-only: its ranks end
 * iterations, stop and reduce at supersteps every rank knows, so nothing
 * needs agreeing, and the engine adds a collective only for the method's
 * reductions and for the stop check every check_interval iterations.  That
 * check can find the target reached up to check_interval - 1 iterations
 * late; the run then goes on to the check (both backends alike), whose
 * collective carries the loads' maxima of every iteration since the last
 * check, so the first iteration at the target is known exactly.  Every
 * other method agrees on the step's error, stop and progress flags after
 * every superstep, and the target is checked in the same collective at the
 * end of every iteration. */
#include "balance/impl/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const lb_graph *lb_run_graph(const lb_run *run) { return run->g; }

void lb_run_set_spectrum(lb_run *run, double lmin, double lmax, int lmin_exact)
{
  run->spectrum[0] = lmin;
  run->spectrum[1] = lmax;
  run->spectrum_exact = lmin_exact;
}
const lb_params *lb_run_params(const lb_run *run) { return run->p; }
int lb_run_step(const lb_run *run) { return run->step; }
int lb_run_iterations(const lb_run *run) { return run->iterations; }
double *lb_run_load(lb_run *run) { return run->load; }
double *lb_run_flow(lb_run *run) { return run->flow; }
double lb_run_injected(const lb_run *run, int r) { return run->inj[r]; }

void lb_run_account(lb_run *run, int r, long long bytes)
{
  long long *now = r < 0 ? &run->mem_proc : &run->mem[r], *peak = r < 0 ? &run->mem_proc_peak : &run->mem_peak[r];
  *now += bytes;
  if (*now > *peak) *peak = *now;
}

lb_err lb_run_channels(lb_run *run, int msg_cap, int pub_len)
{
  if (msg_cap < 0 || pub_len < 0) return lb_error(LB_ERR_ARG, "negative channel size");
  run->msg_cap = msg_cap;
  run->pub_len = pub_len;
  return LB_OK;
}

lb_err lb_run_reduction(lb_run *run, lb_op op, int ngroups, int *slot)
{
  if (run->nred == LB_MAX_REDUCTIONS) return lb_error(LB_ERR_ARG, "more than %d reductions", LB_MAX_REDUCTIONS);
  if (ngroups < 1) return lb_error(LB_ERR_ARG, "a reduction needs at least one group");
  lb_reduction *r = &run->red[run->nred];
  r->op = op;
  r->ngroups = ngroups;
  for (int i = 0; i < 2; i++) {
    r->acc[i] = calloc((size_t)ngroups, sizeof(double));
    if (!r->acc[i]) return lb_error(LB_ERR_MEM, "out of memory for a reduction of %d groups", ngroups);
  }
  r->res = r->acc[1];
  *slot = run->nred++;
  return LB_OK;
}

double *lb_msg_post(lb_run *run, int e, int len)
{
  int par = run->step & 1;
  run->mstamp[par][e] = run->step;
  run->mlen[par][e] = len;
  run->messages += 1;
  run->bytes += 8 * (long long)len;
  return run->msg[par] + (size_t)e * run->msg_cap;
}

int lb_msg_recv(const lb_run *run, int e, const double **data)
{
  int par = (run->step - 1) & 1, from = run->g->rev[e];
  if (run->step == 0 || run->mstamp[par][from] != run->step - 1) {
    *data = NULL;
    return 0;
  }
  *data = run->msg[par] + (size_t)from * run->msg_cap;
  return run->mlen[par][from];
}

double *lb_pub_out(lb_run *run)
{
  /* Counted here for all local ranks at once: each publishes to every neighbour. */
  const lb_graph *g = run->g;
  long long ne = g->xadj[run->hi] - g->xadj[run->lo];
  run->messages += ne;
  run->bytes += 8 * (long long)run->pub_len * ne;
  return run->pub[run->step & 1];
}

const double *lb_pub_in(const lb_run *run) { return run->pub[(run->step - 1) & 1]; }

void lb_reduce(lb_run *run, int slot, int g, double v)
{
  lb_reduction *r = &run->red[slot];
  double *a = &r->acc[run->step & 1][g];
  r->touched = 1;
  if (r->op == LB_SUM) *a += v;
  else if (r->op == LB_MAX) { if (v > *a) *a = v; }
  else if (v < *a) *a = v;
  /* Modelled as a reduction tree plus broadcast: one message up, one down per rank. */
  run->messages += 2;
  run->bytes += 16;
}

double lb_reduced(const lb_run *run, int slot, int g) { return run->red[slot].res[g]; }

void lb_run_end_iteration(lb_run *run, int moved)
{
  run->iter_ended = 1;
  if (moved) run->moved = 1;
}

void lb_run_stop(lb_run *run, lb_stop why) { run->stop = why; }

void lb_run_transit(lb_run *run, int e, double amount)
{
  run->transit[e] += amount;
  run->transit_dirty = 1;
}

/* Loads as Melhem et al. 1991 counts them, L_{i,t}: the load posted to rank r in
 * this superstep is already at r (held[r] for local ranks); in[e] receives
 * what is in transit towards the owner of e.  Collective. */
static lb_err held_loads(lb_run *run, double *held, double *in)
{
  const lb_graph *g = run->g;
  lb_err err = run->be->edge_swap(run, run->transit, in);
  if (err) return err;
  for (int r = run->lo; r < run->hi; r++) {
    held[r] = run->load[r];
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) held[r] += in[e];
  }
  return LB_OK;
}

lb_err lb_run_gather_loads(lb_run *run, double *all)
{
  lb_err err = held_loads(run, run->held, run->transit_in);
  if (!err) err = run->be->gather(run, run->held, all);
  if (!err) run->collectives++;
  return err;
}

/* The loads as whole numbers of one quantum 2^-s, s chosen from the
 * largest load (one MPI_MAX, exact in any order) so that the sum over all
 * ranks stays below 2^62: integer sums do not depend on their order, so
 * the backends' prefix sums agree bit for bit, where sums of doubles in
 * MPI_Exscan's order would not.  A load below half a quantum (2^-61 of the
 * largest over the rank count) counts as 0. */
lb_err lb_run_scan_loads(lb_run *run, const double **prefix, double *total)
{
  const int nloc = run->hi - run->lo;
  double v[2] = {0.0, 0.0}; /* the largest |load|; a process out of memory */
  int e, k = 0;
  lb_err err = held_loads(run, run->held, run->transit_in);
  if (err) return err;
  if (!run->scan_q) {
    run->scan_q = malloc(((size_t)nloc + 1) * sizeof *run->scan_q);
    run->scan_x = malloc(((size_t)nloc + 1) * sizeof *run->scan_x);
  }
  if (!run->scan_q || !run->scan_x) v[1] = 1.0;
  for (int r = run->lo; r < run->hi; r++) v[0] = fmax(v[0], fabs(run->held[r]));
  if ((err = run->be->allreduce(run, v, 2, LB_MAX))) return err;
  run->collectives++;
  if (v[1] != 0.0) return lb_error(LB_ERR_MEM, "out of memory for the prefix sums of %d ranks", nloc);
  while ((INT64_C(1) << k) < run->g->n) k++;
  frexp(v[0], &e); /* |load| < 2^e, so each quantum count is below 2^(61 - k) */
  const int s = 61 - e - k;
  for (int i = 0; i < nloc; i++) run->scan_q[i + 1] = llround(ldexp(run->held[run->lo + i], s));
  int64_t sum;
  if ((err = run->be->scan(run, run->scan_q, &sum))) return err;
  run->collectives += 2; /* MPI_Exscan and the total's MPI_Allreduce (backend_mpi.c) */
  for (int i = 0; i <= nloc; i++) run->scan_x[i] = ldexp((double)run->scan_q[i], -s);
  *total = ldexp((double)sum, -s);
  *prefix = run->scan_x;
  return LB_OK;
}

lb_err lb_run_any(lb_run *run, int *flag)
{
  double v = *flag != 0;
  lb_err err = run->be->allreduce(run, &v, 1, LB_MAX);
  if (!err) {
    *flag = v != 0.0;
    run->collectives++;
  }
  return err;
}

lb_err lb_params_init(lb_params *p, const lb_method *m)
{
  memset(p, 0, sizeof *p);
  p->backend = LB_BACKEND_VIRTUAL;
  p->comm = MPI_COMM_WORLD;
  p->check_interval = LB_CHECK_INTERVAL;
  if (!m) return lb_error(LB_ERR_METHOD, "no method given");
  for (int i = 0; i < m->noptions && i < LB_MAX_OPTIONS; i++) p->opt[i] = m->options[i].def;
  return LB_OK;
}

void lb_result_free(lb_result *res)
{
  free(res->load0);
  free(res->load);
  free(res->flow);
  free(res->transfer);
  res->load0 = res->load = res->flow = NULL;
  res->transfer = NULL;
  res->ntransfers = 0;
}

static lb_err check_input(const lb_graph *g, const lb_method *m, const lb_params *p, const double *load0)
{
  if (!g) return lb_error(LB_ERR_GRAPH, "no graph given");
  if (!m) return lb_error(LB_ERR_METHOD, "no method given");
  if (p->backend == LB_BACKEND_MPI) {
    int size;
    if (MPI_Comm_size(p->comm, &size) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "MPI_Comm_size failed");
    if (size != g->n)
      return lb_error(LB_ERR_SIZE, "graph '%s' has %d ranks but the MPI backend runs on %d processes (use as many processes or -virtual)", g->spec, g->n, size);
  }
  if (!(p->target >= 0 && p->target <= 1)) return lb_error(LB_ERR_ARG, "-lb_target %g is not in [0, 1]", p->target);
  if (p->max_iters < 0) return lb_error(LB_ERR_ARG, "-lb_max_iters %d is negative", p->max_iters);
  if (p->check_interval < 1) return lb_error(LB_ERR_ARG, "-lb_check_interval %d must be at least 1", p->check_interval);
  if (p->capacity && !(m->flags & LB_CAPACITY)) return lb_error(LB_ERR_ARG, "method '%s' does not take per-rank capacities (-capacity)", m->name);
  for (int r = 0; p->capacity && r < g->n; r++)
    if (!(isfinite(p->capacity[r]) && p->capacity[r] > 0)) return lb_error(LB_ERR_ARG, "capacity %g of rank %d must be positive and finite", p->capacity[r], r);
  if (!(m->flags & LB_TERMINATES) && p->target == 0 && p->max_iters == 0)
    return lb_error(LB_ERR_ARG, "method '%s' does not stop by itself: set lb_params.target or lb_params.max_iters (options -lb_target, -lb_max_iters)", m->name);
  for (int r = 0; r < g->n; r++) {
    if (!isfinite(load0[r]) || load0[r] < 0) return lb_error(LB_ERR_LOAD, "load %g of rank %d is negative or not finite", load0[r], r);
    if ((m->flags & LB_INTEGRAL) && (load0[r] != floor(load0[r]) || load0[r] > 9007199254740992.0))
      return lb_error(LB_ERR_LOAD, "method '%s' moves whole work units but rank %d has load %g", m->name, r, load0[r]);
  }
  if (p->ninject > 0 && !(m->flags & LB_INJECT)) return lb_error(LB_ERR_ARG, "method '%s' does not accept injected load (-inject)", m->name);
  for (int i = 0; i < p->ninject; i++) {
    const lb_inject *in = &p->inject[i];
    if (in->rank < 0 || in->rank >= g->n || in->step < 0 || !isfinite(in->amount))
      return lb_error(LB_ERR_ARG, "-inject %d:%d:%g is outside the graph '%s' or not finite", in->step, in->rank, in->amount, g->spec);
  }
  if ((m->flags & LB_CONNECTED) && !lb_graph_connected(g))
    return lb_error(LB_ERR_GRAPH, "method '%s' needs a connected graph but '%s' is not connected", m->name, g->spec);
  return LB_OK;
}

void lb_run_transfer(lb_run *run, int from, int to, double amount)
{
  if (run->nxfer == run->xcap) {
    int cap = run->xcap ? 2 * run->xcap : 64;
    double *x = realloc(run->xfer, 3 * (size_t)cap * sizeof *x);
    /* No room: the result would lack this transfer, so finish() reports it. */
    if (!x) { run->xcap = -1; return; }
    run->xfer = x;
    run->xcap = cap;
  }
  if (run->xcap < 0) return;
  double *t = run->xfer + 3 * (size_t)run->nxfer++;
  t[0] = from; t[1] = to; t[2] = amount;
  run->messages += 1;
  run->bytes += 16;
}

static int cmp_transfer(const void *a, const void *b)
{
  const lb_transfer *x = a, *y = b;
  if (x->from != y->from) return (x->from > y->from) - (x->from < y->from);
  return (x->to > y->to) - (x->to < y->to);
}

/* Every process gets every transfer, in one order whichever process
 * recorded it.  Only the backends' reductions are used: each process writes
 * its transfers at its offset of a zeroed array and the array is summed. */
static lb_err gather_transfers(lb_run *run, lb_result *res)
{
  const lb_graph *g = run->g;
  double *count = calloc((size_t)g->n, sizeof *count), *all = malloc((size_t)g->n * sizeof *all), *v = NULL;
  lb_err err = count && all && run->xcap >= 0 ? LB_OK : lb_error(LB_ERR_MEM, "out of memory gathering the transfers");
  double flag = err != LB_OK;
  lb_err cerr = run->be->allreduce(run, &flag, 1, LB_MAX);
  if (!err && (err = cerr) == LB_OK && flag) err = lb_error(LB_ERR_MEM, "out of memory gathering the transfers on another process");
  if (err) goto out;
  count[run->lo] = run->nxfer;
  if ((err = run->be->gather(run, count, all))) goto out;
  long long before = 0, total = 0;
  for (int r = 0; r < g->n; r++) {
    if (r < run->lo) before += (long long)all[r];
    total += (long long)all[r];
  }
  res->ntransfers = (int)total;
  if (total == 0) goto out;
  v = calloc(3 * (size_t)total, sizeof *v);
  res->transfer = malloc((size_t)total * sizeof *res->transfer);
  flag = !v || !res->transfer;
  if ((err = run->be->allreduce(run, &flag, 1, LB_MAX))) goto out;
  if (flag) { err = lb_error(LB_ERR_MEM, "out of memory for %lld transfers", total); goto out; }
  for (int i = 0; i < 3 * run->nxfer; i++) v[3 * before + i] = run->xfer[i];
  if ((err = run->be->allreduce(run, v, 3 * (int)total, LB_SUM))) goto out;
  for (long long i = 0; i < total; i++) res->transfer[i] = (lb_transfer){(int)v[3 * i], (int)v[3 * i + 1], v[3 * i + 2]};
  qsort(res->transfer, (size_t)total, sizeof *res->transfer, cmp_transfer);
out:
  free(count);
  free(all);
  free(v);
  return err;
}

static void free_run(lb_run *run)
{
  free(run->xfer);
  free(run->load); free(run->flow); free(run->inj);
  free(run->transit); free(run->transit_in); free(run->held);
  for (int i = 0; i < 2; i++) { free(run->msg[i]); free(run->mlen[i]); free(run->mstamp[i]); free(run->pub[i]); }
  for (int s = 0; s < run->nred; s++) { free(run->red[s].acc[0]); free(run->red[s].acc[1]); }
  free(run->pend);
  free(run->pend_total);
  free(run->mem);
  free(run->mem_peak);
  free(run->scan_q);
  free(run->scan_x);
}

/* Keep the stop check's inputs of the iteration that ends at this
 * superstep for the next check. */
static lb_err pend_push(lb_run *run, double local_max, double total)
{
  if (run->npend == run->pend_cap) {
    int cap = 2 * run->pend_cap + 8;
    /* room for the four agreed flags in front of the maxima */
    double *a = realloc(run->pend, ((size_t)cap + 4) * sizeof(double)), *b;
    if (a) run->pend = a;
    b = a ? realloc(run->pend_total, (size_t)cap * sizeof(double)) : NULL;
    if (!b) return lb_error(LB_ERR_MEM, "out of memory for the stop check of %d iterations", cap);
    run->pend_total = b;
    run->pend_cap = cap;
  }
  run->pend[4 + run->npend] = local_max;
  run->pend_total[run->npend++] = total;
  return LB_OK;
}

/* The agreed maxima of the last npend iterations, the last one ending at
 * iteration it_last: the first at the target becomes target_iteration. */
static void pend_check(lb_run *run, const double *mx, int it_last)
{
  for (int j = 0; j < run->npend && run->target_iteration < 0; j++)
    if (mx[j] <= 0 || run->pend_total[j] / run->g->n / mx[j] >= run->p->target) run->target_iteration = it_last - run->npend + 1 + j;
  run->npend = 0;
}

static double identity(lb_op op) { return op == LB_SUM ? 0.0 : op == LB_MAX ? -HUGE_VAL : HUGE_VAL; }

static lb_err alloc_run(lb_run *run, const double *load0)
{
  const lb_graph *g = run->g;
  size_t n = (size_t)g->n, nd = 2 * (size_t)g->m + 1;
  run->load = malloc(n * sizeof(double));
  run->flow = calloc(nd, sizeof(double));
  run->inj = calloc(n, sizeof(double));
  run->transit = calloc(nd, sizeof(double));
  run->transit_in = calloc(nd, sizeof(double));
  run->held = calloc(n, sizeof(double));
  if (!run->load || !run->flow || !run->inj || !run->transit || !run->transit_in || !run->held)
    return lb_error(LB_ERR_MEM, "out of memory for %zu ranks", n);
  memcpy(run->load, load0, n * sizeof(double));
  if (run->m->flags & LB_ACCOUNTED) {
    run->mem = calloc(n, sizeof(long long));
    run->mem_peak = calloc(n, sizeof(long long));
    if (!run->mem || !run->mem_peak) return lb_error(LB_ERR_MEM, "out of memory for %zu ranks", n);
  }
  for (int i = 0; i < 2; i++) {
    if (run->msg_cap > 0) {
      run->msg[i] = malloc(nd * run->msg_cap * sizeof(double));
      run->mlen[i] = calloc(nd, sizeof(int));
      run->mstamp[i] = malloc(nd * sizeof(int));
      if (!run->msg[i] || !run->mlen[i] || !run->mstamp[i]) return lb_error(LB_ERR_MEM, "out of memory for messages");
      for (size_t e = 0; e < nd; e++) run->mstamp[i][e] = -1;
    }
    if (run->pub_len > 0) {
      run->pub[i] = calloc(n * run->pub_len, sizeof(double));
      if (!run->pub[i]) return lb_error(LB_ERR_MEM, "out of memory for publications");
    }
  }
  return LB_OK;
}

/* Melhem et al. 1991 costs of the iteration that just ended, over all processes.
 * Load in transit counts at its receiver and as migrated when it was sent:
 * flow[e] - in[e] is what has left the owner of e on e, net, so far. */
static lb_err track_costs(lb_run *run, double *flow_prev, double total, lb_result *res)
{
  const lb_graph *g = run->g;
  double v[2] = {-HUGE_VAL, 0.0};
  lb_err err = held_loads(run, run->held, run->transit_in);
  if (err) return err;
  for (int r = run->lo; r < run->hi; r++) {
    if (run->held[r] > v[0]) v[0] = run->held[r];
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
      double moved = run->flow[e] - run->transit_in[e];
      if (moved - flow_prev[e] > v[1]) v[1] = moved - flow_prev[e];
      flow_prev[e] = moved;
    }
  }
  err = run->be->allreduce(run, v, 2, LB_MAX);
  if (err) return err;
  res->imbalance_cost += v[0] - total / g->n;
  res->migration_cost += v[1];
  return LB_OK;
}

/* The final loads include the load still in transit, at its receiver (the
 * flows already count it), so that they are conserved and agree with the
 * flows however the run stopped.  LB_LOCAL methods send no load in transit. */
static lb_err finish(lb_run *run, lb_result *res)
{
  const lb_graph *g = run->g;
  lb_err err = LB_OK;
  if (run->m->flags & LB_LOCAL) err = run->be->gather(run, run->load, res->load);
  else err = lb_run_gather_loads(run, res->load);
  if (err) return err;
  for (int k = 0; k < g->m; k++) res->flow[k] = 0.0;
  for (int r = run->lo; r < run->hi; r++)
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++)
      if (g->adj[e] > r) res->flow[g->eid[e]] = run->flow[e];
  if ((err = run->be->allreduce(run, res->flow, g->m, LB_SUM))) return err;
  /* x + 0.0 turns -0.0 into +0.0, so both backends agree bit for bit. */
  for (int k = 0; k < g->m; k++) res->flow[k] += 0.0;
  if ((run->m->flags & LB_DIRECT) && (err = gather_transfers(run, res))) return err;
  /* the counted bytes' sum rides with the counts, their largest apart */
  double c[3] = {(double)run->messages, (double)run->bytes, 0}, most = 0;
  if (run->mem)
    for (int r = run->lo; r < run->hi; r++) {
      double b = (double)(run->mem_proc_peak + run->mem_peak[r]);
      c[2] += b;
      if (b > most) most = b;
    }
  if ((err = run->be->allreduce(run, c, 3, LB_SUM))) return err;
  res->messages = (long long)c[0];
  res->bytes = (long long)c[1];
  res->method_bytes_max = res->method_bytes_mean = -1;
  if (run->mem) {
    if ((err = run->be->allreduce(run, &most, 1, LB_MAX))) return err;
    res->method_bytes_max = most;
    res->method_bytes_mean = c[2] / g->n;
  }
  /* iterations after the last check (a stop by the cap or by convergence)
   * are checked in the collective that agrees on the times: the times go
   * into the two slots before their maxima */
  double *t = run->npend ? run->pend + 2 : (double[2]){0, 0};
  t[0] = res->runtime_s;
  t[1] = res->setup_s;
  if ((err = run->be->allreduce(run, t, 2 + run->npend, LB_MAX))) return err;
  res->runtime_s = t[0];
  res->setup_s = t[1];
  if (run->npend) pend_check(run, t + 2, run->iterations);
  res->target_iteration = run->target_iteration;
  return LB_OK;
}

/* The largest of the local ranks' loads, each divided by its share of the
 * capacity (the load itself when all capacities are equal). */
static double local_max(const lb_run *run, const double *load, double capsum)
{
  const double *cap = run->p->capacity;
  double mx = -HUGE_VAL;
  for (int r = run->lo; r < run->hi; r++) {
    double l = cap ? load[r] * (capsum / run->g->n) / cap[r] : load[r];
    if (l > mx) mx = l;
  }
  return mx;
}

lb_err lb_balance(const lb_graph *g, const lb_method *m, const lb_params *p, const double *load0, lb_result *res)
{
  memset(res, 0, sizeof *res);
  res->spectrum[0] = res->spectrum[1] = NAN;
  res->spectrum_exact = -1;
  lb_err err = check_input(g, m, p, load0);
  if (err) return err;
  lb_run run;
  memset(&run, 0, sizeof run);
  run.g = g;
  run.m = m;
  run.p = p;
  run.be = p->backend == LB_BACKEND_MPI ? &lb_backend_mpi : &lb_backend_virtual;
  run.gcomm = MPI_COMM_NULL;
  run.target_iteration = -1;
  run.spectrum[0] = run.spectrum[1] = NAN;
  run.spectrum_exact = -1;
  void *state = NULL;
  const int local = (m->flags & LB_LOCAL) != 0;
  double *flow_prev = NULL, total = 0, capsum = g->n;
  for (int r = 0; r < g->n; r++) total += load0[r];
  if (p->capacity) {
    capsum = 0;
    for (int r = 0; r < g->n; r++) capsum += p->capacity[r];
  }
  res->n = g->n;
  res->m = g->m;
  res->load0 = malloc((size_t)g->n * sizeof(double));
  res->load = malloc((size_t)g->n * sizeof(double));
  res->flow = malloc(((size_t)g->m + 1) * sizeof(double));
  if (!res->load0 || !res->load || !res->flow) { err = lb_error(LB_ERR_MEM, "out of memory for the result"); goto out; }
  memcpy(res->load0, load0, (size_t)g->n * sizeof(double));
  double ts = MPI_Wtime();
  if ((err = m->setup(&run, &state))) goto out;
  res->setup_s = MPI_Wtime() - ts;
  res->spectrum[0] = run.spectrum[0];
  res->spectrum[1] = run.spectrum[1];
  res->spectrum_exact = run.spectrum_exact;
  if ((err = alloc_run(&run, load0))) goto out;
  if ((err = run.be->setup(&run))) goto out;
  if (p->track_costs) {
    flow_prev = calloc(2 * (size_t)g->m + 1, sizeof(double));
    if (!flow_prev) { err = lb_error(LB_ERR_MEM, "out of memory for cost tracking"); goto out; }
  }
  int last_inject = -1;
  for (int i = 0; i < p->ninject; i++) if (p->inject[i].step > last_inject) last_inject = p->inject[i].step;
  double t0 = MPI_Wtime();
  for (run.step = 0;; run.step++) {
    int par = run.step & 1;
    for (int s = 0; s < run.nred; s++) {
      double id = identity(run.red[s].op);
      for (int k = 0; k < run.red[s].ngroups; k++) run.red[s].acc[par][k] = id;
      run.red[s].touched = 0;
    }
    for (int i = 0; i < p->ninject; i++) {
      const lb_inject *in = &p->inject[i];
      if (in->step == run.step) {
        res->injected += in->amount;
        total += in->amount;
        if (in->rank >= run.lo && in->rank < run.hi) { run.inj[in->rank] += in->amount; run.load[in->rank] += in->amount; }
      }
    }
    if (run.transit_dirty) {
      for (int e = g->xadj[run.lo]; e < g->xadj[run.hi]; e++) run.transit[e] = 0;
      run.transit_dirty = 0;
    }
    run.iter_ended = run.moved = 0;
    run.stop = LB_STOP_NONE;
    lb_err serr = m->step(&run, state, run.lo, run.hi);
    for (int i = 0; i < p->ninject; i++)
      if (p->inject[i].step == run.step) run.inj[p->inject[i].rank] = 0;
    if ((err = run.be->exchange(&run))) goto out;
    for (int s = 0; s < run.nred; s++)
      if (!local || run.red[s].touched) {
        if ((err = run.be->reduce(&run, s))) goto out;
        run.collectives++;
      }
    /* Whether this superstep checks the target: LB_LOCAL ranks know by
     * themselves when an iteration ends; the others learn it below. */
    int check = p->target > 0 && (!local || (run.iter_ended && (run.iterations + 1) % p->check_interval == 0));
    /* Load in transit counts at its receiver, as in the final loads. */
    if (check && !local && (err = held_loads(&run, run.held, run.transit_in))) goto out;
    /* The iteration's largest load joins those since the last check: every
     * iteration of an LB_LOCAL method (its ranks know when one ends), and
     * every superstep of the others, which check at each one. */
    if (p->target > 0 && (local ? run.iter_ended : check) && (err = pend_push(&run, local_max(&run, local ? run.load : run.held, capsum), total)))
      goto out;
    double *agreed = run.pend ? run.pend : (double[4]){0};
    agreed[0] = (double)serr;
    agreed[1] = (double)run.stop;
    agreed[2] = run.iter_ended;
    agreed[3] = run.moved;
    if (!local || check) {
      if ((err = run.be->allreduce(&run, agreed, 4 + (check ? run.npend : 0), LB_MAX))) goto out;
      run.collectives++;
    }
    if (agreed[0] != 0) {
      err = serr ? serr : lb_error((lb_err)agreed[0], "method '%s' failed on another rank", m->name);
      goto out;
    }
    run.stop = (lb_stop)agreed[1];
    if (agreed[2] != 0) {
      run.iterations++;
      if (agreed[3] != 0) run.last_moved = run.iterations;
      if (p->track_costs && (err = track_costs(&run, flow_prev, total, res))) goto out;
      if (p->observer && (err = p->observer(&run, p->observer_ctx))) goto out;
      if (check) {
        /* Modelled as a reduction tree plus broadcast: one message up, one down per rank. */
        run.messages += 2 * (long long)(run.hi - run.lo);
        run.bytes += 16 * (long long)(run.hi - run.lo);
        double mx = agreed[4 + run.npend - 1], avg = total / g->n;
        if (mx <= 0 || avg / mx >= p->target) run.stop = LB_STOP_TARGET;
        pend_check(&run, agreed + 4, run.iterations);
      }
      if (p->max_iters > 0 && run.iterations >= p->max_iters && run.stop == LB_STOP_NONE) run.stop = LB_STOP_MAX_ITERS;
    }
    /* the others' value of a superstep that ended no iteration is no iteration's */
    if (!local) run.npend = 0;
    /* Load still to be injected means the method is not done yet. */
    if (run.stop == LB_STOP_CONVERGED && run.step < last_inject) run.stop = LB_STOP_NONE;
    if (run.stop != LB_STOP_NONE) break;
  }
  res->rounds = run.step + 1;
  res->runtime_s = MPI_Wtime() - t0;
  res->iterations = (m->flags & LB_TERMINATES) ? run.last_moved : run.iterations;
  res->stop = run.stop;
  res->collectives = run.collectives;
  err = finish(&run, res);
out:
  if (state && m->destroy) m->destroy(state);
  if (run.be) run.be->teardown(&run);
  free_run(&run);
  free(flow_prev);
  if (err) lb_result_free(res);
  return err;
}
