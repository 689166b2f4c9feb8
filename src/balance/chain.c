#include "balance/lbchain.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/impl/lbcall.h"

/* The partition chain mode starts from. */
typedef struct {
  const int64_t *counts; /* the virtual backend: every part's cells, the caller's (this process holds the whole curve); NULL on MPI */
  int64_t first;         /* MPI: the first cell of this process's part, its piece */
  int64_t cells;         /* on the whole curve */
  /* every part's load, nparts values: lb_balance and a partition hook's
   * run take every rank's load (the engine's arrays are indexed by rank) */
  double *loads;
} start_split;

/* The start partition: on the virtual backend the caller's cells of every
 * part; on MPI each process's part is its own piece, so its offset and its
 * weight (lb_curve_piece) are all it needs of the split, and the loads are
 * one gather of a double per process, not an array of all parts' cells. */
static lb_err start_of(const lb_params *p, MPI_Comm cc, int64_t n, const double *w, int nparts, const int64_t *cur_counts, start_split *s)
{
  double mine;
  if (p->backend == LB_BACKEND_VIRTUAL) {
    if (!cur_counts) return lb_error(LB_ERR_ARG, "chain: the virtual backend needs the current cells of every part");
    s->counts = cur_counts;
    s->cells = n;
    return lb_curve_part_loads(cc, n, w, nparts, cur_counts, s->loads);
  }
  LB_CALL(lb_curve_piece(cc, n, w, &s->first, &s->cells, &mine));
  LB_MPI(MPI_Allgather(&mine, 1, MPI_DOUBLE, s->loads, 1, MPI_DOUBLE, cc));
  return LB_OK;
}

/* Cells whose part changed: on MPI each process counts those its own part
 * gives away, from its own offset, and one sum adds them. */
static lb_err migrated_cells(MPI_Comm cc, int64_t n, int nparts, const start_split *s, const lb_curve_result *cut, int64_t *moved)
{
  long long mine, all;
  int me;
  if (s->counts) {
    *moved = lb_curve_migrated(nparts, s->counts, cut->counts);
    return LB_OK;
  }
  LB_MPI(MPI_Comm_rank(cc, &me));
  mine = n - lb_curve_kept(s->first, s->first + n, cut->cuts[me], cut->cuts[me + 1]);
  LB_MPI(MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, cc));
  *moved = all;
  return LB_OK;
}

/* One meaning of a weighted curve for every method: the loads of the
 * parts are their weights; a method that moves whole work units gets them
 * in units of 1/LB_CHAIN_UNITS of the mean cell weight, rounded.  Returns
 * the weight of one unit (1 for the other methods). */
static double part_units(const lb_method *m, int nparts, int64_t cells, double *loads)
{
  double total = 0.0;
  if (!(m->flags & LB_INTEGRAL)) return 1.0;
  for (int q = 0; q < nparts; q++) total += loads[q];
  const double unit = total > 0.0 && cells > 0 ? total / ((double)cells * LB_CHAIN_UNITS) : 1.0;
  for (int q = 0; q < nparts; q++) loads[q] = round(loads[q] / unit);
  return unit;
}

/* The method's loads, flows and costs back in curve weight. */
static void weight_units(const lb_graph *g, double unit, lb_result *run)
{
  if (unit == 1.0) return;
  for (int q = 0; q < g->n; q++) {
    run->load0[q] *= unit;
    run->load[q] *= unit;
  }
  for (int k = 0; k < g->m; k++) run->flow[k] *= unit;
  run->migration_cost *= unit;
  run->imbalance_cost *= unit;
}

/* A partition hook's cut as a run on the chain of parts: one iteration
 * that moves every part's load (before: loads) to its cut's, the flow
 * across each cut being the load that passes it. */
static lb_err run_of_cut(const lb_graph *g, const double *loads, const lb_curve_result *cut, double runtime, lb_result *run)
{
  double passed = 0.0;
  memset(run, 0, sizeof *run);
  run->n = g->n;
  run->m = g->m;
  run->load0 = malloc((size_t)g->n * sizeof *run->load0);
  run->load = malloc((size_t)g->n * sizeof *run->load);
  run->flow = calloc((size_t)g->m + 1, sizeof *run->flow);
  if (!run->load0 || !run->load || !run->flow) {
    lb_result_free(run);
    return lb_error(LB_ERR_MEM, "chain: out of memory for %d parts", g->n);
  }
  memcpy(run->load0, loads, (size_t)g->n * sizeof *loads);
  memcpy(run->load, cut->part_load, (size_t)g->n * sizeof *loads);
  for (int q = 0; q + 1 < g->n; q++) {
    passed += loads[q] - cut->part_load[q];
    run->flow[g->eid[lb_graph_edge(g, q, q + 1)]] = passed;
  }
  /* the pieces' one round of messages to the group roots and the
   * collectives of lb_curve_hier (its bytes are not counted) */
  run->iterations = 1;
  run->rounds = 1;
  run->collectives = LB_CURVE_HIER_COLLECTIVES;
  run->target_iteration = -1;
  run->runtime_s = runtime;
  run->stop = LB_STOP_CONVERGED;
  run->spectrum[0] = run->spectrum[1] = NAN;
  run->spectrum_exact = -1;
  return LB_OK;
}

/* The method's partition of the curve: its own cut (a partition hook), or
 * its loads on the chain realised as cuts.  *cut_time: the cut's wall time. */
static lb_err method_cut(const lb_graph *g, const lb_method *m, const lb_params *p, MPI_Comm cc, int64_t n, const double *w, int nparts,
                         const start_split *s, lb_chain_result *res, double *cut_time)
{
  if (m->partition) {
    double t0 = MPI_Wtime();
    LB_CALL(m->partition(p, cc, n, w, nparts, &res->cut));
    *cut_time = MPI_Wtime() - t0;
    double runtime = *cut_time;
    LB_MPI(MPI_Allreduce(MPI_IN_PLACE, &runtime, 1, MPI_DOUBLE, MPI_MAX, cc));
    return run_of_cut(g, s->loads, &res->cut, runtime, &res->run);
  }
  const double unit = part_units(m, nparts, s->cells, s->loads);
  LB_CALL(lb_balance(g, m, p, s->loads, &res->run));
  weight_units(g, unit, &res->run);
  double t0 = MPI_Wtime();
  LB_CALL(lb_curve_targets(cc, n, w, nparts, res->run.load, &res->cut));
  *cut_time = MPI_Wtime() - t0;
  return LB_OK;
}

/* The exact partition's largest part, the bound (NaN above
 * LB_CHAIN_EXACT_MAX_CELLS cells); its time in *t. */
static lb_err bound(MPI_Comm cc, int64_t n, const double *w, int nparts, lb_chain_result *res, double *t)
{
  lb_curve_result exact;
  *t = 0.0;
  res->optimal_max_part_load = NAN;
  if (res->cut.ncells > LB_CHAIN_EXACT_MAX_CELLS) return LB_OK;
  double t0 = MPI_Wtime();
  LB_CALL(lb_curve_exact(cc, n, w, nparts, &exact));
  *t = MPI_Wtime() - t0;
  res->optimal_max_part_load = lb_curve_max_load(&exact);
  lb_curve_result_free(&exact);
  return LB_OK;
}

/* sfc's cuts, the reference, and their time in *t. */
static lb_err sfc_reference(MPI_Comm cc, int64_t n, const double *w, int nparts, lb_chain_result *res, double *t)
{
  double t0 = MPI_Wtime();
  LB_CALL(lb_curve_sfc(cc, n, w, nparts, &res->sfc));
  *t = MPI_Wtime() - t0;
  res->sfc_cut_distance = lb_curve_cut_distance(nparts, res->cut.cuts, res->sfc.cuts);
  return LB_OK;
}

static lb_err realise(const lb_graph *g, const lb_method *m, const lb_params *p, MPI_Comm cc, int64_t n, const double *w, int nparts,
                      const start_split *s, int with_sfc, lb_chain_result *res)
{
  double avg, t[3] = {0.0, 0.0, 0.0};
  LB_CALL(method_cut(g, m, p, cc, n, w, nparts, s, res, &t[0]));
  res->sfc_cut_distance = -1;
  if (with_sfc) LB_CALL(sfc_reference(cc, n, w, nparts, res, &t[1]));
  LB_CALL(bound(cc, n, w, nparts, res, &t[2]));
  LB_MPI(MPI_Allreduce(MPI_IN_PLACE, t, 3, MPI_DOUBLE, MPI_MAX, cc));
  res->cut_time_s = t[0];
  res->sfc_time_s = t[1];
  res->exact_time_s = t[2];
  LB_CALL(migrated_cells(cc, n, nparts, s, &res->cut, &res->migrated_cells));
  avg = res->cut.total / nparts;
  res->max_part_load = lb_curve_max_load(&res->cut);
  res->max_over_avg = avg > 0.0 ? res->max_part_load / avg : 1.0;
  return LB_OK;
}

static lb_err chain_on(const lb_graph *g, const lb_method *m, const lb_params *p, int64_t n, const double *w, const int64_t *cur_counts,
                       int with_sfc, lb_chain_result *res)
{
  MPI_Comm cc = p->backend == LB_BACKEND_MPI ? p->comm : MPI_COMM_SELF;
  const int nparts = g->n;
  memset(res, 0, sizeof *res);
  if (g->kind != LB_GRAPH_LINE && g->kind != LB_GRAPH_RING)
    return lb_error(LB_ERR_GRAPH, "chain: graph '%s' is not the line or the ring of the parts", g->spec);
  start_split s = {NULL, 0, 0, malloc((size_t)nparts * sizeof *s.loads)};
  lb_err err = s.loads ? LB_OK : lb_error(LB_ERR_MEM, "chain: out of memory for %d parts", nparts);
  if (!err) err = start_of(p, cc, n, w, nparts, cur_counts, &s);
  if (!err) err = realise(g, m, p, cc, n, w, nparts, &s, with_sfc, res);
  free(s.loads);
  if (err) lb_chain_result_free(res);
  return err;
}

lb_err lb_chain_balance_on(const lb_graph *g, const lb_method *m, const lb_params *p, int64_t n, const double *w,
                           const int64_t *cur_counts, lb_chain_result *res)
{
  return chain_on(g, m, p, n, w, cur_counts, 1, res);
}

lb_err lb_chain_partition_on(const lb_graph *g, const lb_method *m, const lb_params *p, int64_t n, const double *w,
                             const int64_t *cur_counts, lb_chain_result *res)
{
  return chain_on(g, m, p, n, w, cur_counts, 0, res);
}

lb_err lb_chain_balance(const lb_method *m, const lb_params *p, int64_t n, const double *w, int nparts,
                        const int64_t *cur_counts, lb_chain_result *res)
{
  char spec[32];
  lb_graph *g = NULL;
  memset(res, 0, sizeof *res);
  if (p->backend == LB_BACKEND_MPI && MPI_Comm_size(p->comm, &nparts) != MPI_SUCCESS)
    return lb_error(LB_ERR_MPI, "chain: MPI_Comm_size failed");
  if (nparts < 1) return lb_error(LB_ERR_ARG, "chain: number of parts %d must be at least 1", nparts);
  snprintf(spec, sizeof spec, "line:%d", nparts);
  LB_CALL(lb_graph_create(spec, &g));
  lb_err err = lb_chain_balance_on(g, m, p, n, w, cur_counts, res);
  lb_graph_destroy(&g);
  return err;
}

void lb_chain_result_free(lb_chain_result *res)
{
  lb_result_free(&res->run);
  lb_curve_result_free(&res->cut);
  lb_curve_result_free(&res->sfc);
}
