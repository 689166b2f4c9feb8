/* lbbench's chain mode (chainbench.h). */
#include "bench/chainbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/lbchain.h"
#include "bench/repeat.h"
#include "bench/scenario.h"

/* The counts and the run time of a method's run. */
void lb_bench_run_json(json_line *j, const lb_result *r)
{
  static const char *const name[] = {"iterations", "target_iteration", "rounds", "messages", "bytes", "collectives"};
  const long long v[] = {r->iterations, r->target_iteration, r->rounds, r->messages, r->bytes, r->collectives};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) json_int(j, name[i], v[i]);
  json_real(j, "runtime_s", r->runtime_s);
}

/* The method's memory per rank (an LB_ACCOUNTED method's count) and its
 * messages per rank: a line of lbbench's output. */
void lb_bench_memory_print(const lb_method *m, const lb_result *r)
{
  if (!m || !(m->flags & LB_ACCOUNTED)) return;
  printf("  method memory per rank: peak %.0f bytes on the largest rank, %.0f on average  messages per rank %.6g\n", r->method_bytes_max,
         r->method_bytes_mean, r->n > 0 ? (double)r->messages / r->n : 0.0);
}

/* The same in the JSON line: null for the methods that do not count it. */
void lb_bench_memory_json(json_line *j, const lb_method *m, const lb_result *r)
{
  if (m && (m->flags & LB_ACCOUNTED)) {
    json_real(j, "method_bytes_max", r->method_bytes_max);
    json_real(j, "method_bytes_mean", r->method_bytes_mean);
  } else {
    json_null(j, "method_bytes_max");
    json_null(j, "method_bytes_mean");
  }
  json_real(j, "messages_per_rank", r->n > 0 ? (double)r->messages / r->n : 0.0);
}

/* The balance of the loads and what moved. */
void lb_bench_loads_json(json_line *j, const lb_metrics *mt)
{
  static const char *const name[] = {"max_over_avg", "imbalance_pct", "l2_imbalance", "transfer_tot", "transfer_max", "migrated_units", "unit_hops"};
  const double v[] = {mt->max_over_avg, mt->imbalance_pct, mt->l2_imbalance, mt->transfer_tot, mt->transfer_max, mt->migrated_units, mt->unit_hops};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) json_real(j, name[i], v[i]);
}

/* -costs: Ripple's costs of the run. */
void lb_bench_costs_json(json_line *j, const lb_result *r)
{
  json_real(j, "migration_cost", r->migration_cost);
  json_real(j, "imbalance_cost", r->imbalance_cost);
}

/* The replayed trace cycle: a line of lbbench's output. */
static void print_trace(const lb_chainbench_opts *o, const lb_load_trace *tr)
{
  printf("  trace: %dD cycle %d of %d ranks, %lld cells (refined %d times), %s weights, start split %s, %d cop%s\n", tr->dim, tr->cycle, tr->nranks,
         (long long)tr->ncells, (int)o->refine, lb_trace_weight_name(tr->weights), o->trace_split, (int)o->replicate, o->replicate > 1 ? "ies" : "y");
}

/* The balance of the start split counts of the whole curve (n cells w):
 * what the replay starts from, which -trace_split decides. */
static lb_err start_balance(int64_t n, const double *w, int P, const int64_t *counts, lb_metrics *mt)
{
  double *load = malloc((size_t)P * sizeof *load);
  if (!load) return lb_error(LB_ERR_MEM, "out of memory for %d part loads", P);
  lb_err err = lb_curve_part_loads(MPI_COMM_SELF, n, w, P, counts, load);
  if (!err) lb_metrics_loads(P, load, mt);
  free(load);
  return err;
}

/* The replayed trace cycle, the cells per part and the balance of the
 * start split (the whole curve: n cells w), the cells per part after. */
static lb_err json_trace(json_line *j, const lb_chainbench_opts *o, const lb_load_trace *tr, int P, int64_t n, const double *w, const int64_t *start_cells,
                         const int64_t *part_cells)
{
  lb_metrics st;
  lb_err err = start_balance(n, w, P, start_cells, &st);
  if (err) return err;
  json_real(j, "start_max_over_avg", st.max_over_avg);
  json_real(j, "start_imbalance_pct", st.imbalance_pct);
  long long *cells = calloc((size_t)P + 1, sizeof *cells);
  if (!cells) return lb_error(LB_ERR_MEM, "out of memory for the JSON line");
  for (int q = 0; q < P; q++) cells[q] = (long long)start_cells[q];
  json_ints(j, "start_cells", P, cells);
  for (int q = 0; q < P; q++) cells[q] = (long long)part_cells[q];
  json_int(j, "trace_cycle", tr->cycle);
  json_int(j, "trace_ranks", tr->nranks);
  json_int(j, "trace_cells", (long long)tr->ncells);
  json_int(j, "replicate", (long long)o->replicate);
  json_int(j, "refine", (long long)o->refine);
  json_str(j, "trace_split", o->trace_split);
  json_ints(j, "part_cells", P, cells);
  free(cells);
  return LB_OK;
}

/* A method with a shift hook (sfc-shift) on a trace, as the app ran it:
 * the hook's sequence on the ranks' measured times (lb_trace_shift), not
 * the method's supersteps on the weights.  One step is one iteration (none
 * when the sequence keeps its best partition); no target is checked. */
static lb_err run_chain_shift(const lb_chainbench_opts *o, const lb_trace_replay rp, const lb_method *m, const lb_graph *g, const lb_load_trace *tr, int me)
{
  const int P = g->n;
  static const char *const action_name[] = {"sfc", "shifted", "best"};
  int64_t n, *counts = malloc((size_t)P * sizeof *counts);
  double *w = NULL, t0 = MPI_Wtime();
  lb_curve_result res, sfc;
  lb_curve_shift_action act;
  lb_metrics cm;
  memset(&res, 0, sizeof res);
  memset(&sfc, 0, sizeof sfc);
  lb_err err = counts ? LB_OK : lb_error(LB_ERR_MEM, "-graph %s: out of memory", g->spec);
  if (!err) err = lb_trace_shift(m, o->scenario, &rp, P, o->p.opt[0], &n, &w, counts, &res, &act);
  const double runtime = MPI_Wtime() - t0;
  if (!err) err = lb_curve_sfc(MPI_COMM_SELF, n, w, P, &sfc);
  if (!err && me == 0) {
    const int iterations = act == LB_SHIFT_BEST ? 0 : 1;
    const long long migrated = (long long)lb_curve_migrated(P, counts, res.counts), dist = (long long)lb_curve_cut_distance(P, res.cuts, sfc.cuts);
    lb_metrics_loads(P, res.part_load, &cm);
    printf("lbbench: %s in chain mode on %s as the app runs it (measured times), %lld cells, scenario %s\n", m->name, g->spec, (long long)n,
           o->scenario);
    print_trace(o, tr);
    printf("  iterations %d  sequence step: %s  runtime %.6f s (the replay of every balanced cycle up to this one)\n", iterations,
           action_name[act], runtime);
    printf("  cells: max/avg %.6f  I%% %.4f  partition quality %.6f  migrated %lld cells  %lld cells from sfc's cuts\n", cm.max_over_avg,
           cm.imbalance_pct, res.quality, migrated, dist);
    if (o->json[0]) {
      FILE *f = fopen(o->json, "a");
      if (!f) err = lb_error(LB_ERR_FILE, "-json '%s': cannot open for appending", o->json);
      else {
        json_line j;
        json_run_header(&j, f, m->name, g->spec, P, o->p.backend == LB_BACKEND_MPI ? "mpi" : "virtual", o->scenario);
        json_int(&j, "iterations", iterations);
        json_null(&j, "target_iteration");
        json_real(&j, "runtime_s", runtime);
        json_str(&j, "shift_step", action_name[act]);
        json_real(&j, "max_over_avg", cm.max_over_avg);
        json_real(&j, "imbalance_pct", cm.imbalance_pct);
        json_real(&j, "l2_imbalance", cm.l2_imbalance);
        json_int(&j, "cells", (long long)n);
        json_int(&j, "migrated_cells", migrated);
        json_real(&j, "partition_quality", res.quality);
        json_int(&j, "sfc_cut_distance", dist);
        err = json_trace(&j, o, tr, P, n, w, counts, res.counts);
        json_end(&j);
        if (fclose(f) && !err) err = lb_error(LB_ERR_FILE, "-json '%s': write failed", o->json);
      }
    }
  }
  lb_curve_result_free(&res);
  lb_curve_result_free(&sfc);
  free(w);
  free(counts);
  return err;
}

/* Chain mode: the scenario gives one weight per cell of a curve of
 * o->cells cells, first split into P pieces of equal cell count; the method
 * runs on the line or the ring of the P parts (-graph line:P or ring:P, as
 * the app's -lb_graph) and its loads are realised as cuts on the curve.  A
 * trace scenario gives the curve the app balanced, its cells refined
 * -refine times, -replicate times, split by -trace_split: the previous
 * cycle's balanced split carried to its cells (carry), as the app split it
 * (app, scaled to P parts) or evenly (even). */
lb_err lb_chainbench_run(const lb_chainbench_opts *o, const lb_method *m, int me)
{
  lb_graph *g = NULL, curve;
  double *w = NULL;
  int64_t *counts = NULL, first = 0, n = o->cells;
  lb_chain_result res;
  lb_load_trace tr, prev;
  int have_res = 0, size, traced = lb_trace_is_scenario(o->scenario);
  const lb_trace_replay rp = {(int)o->replicate, (int)o->refine, o->split, NULL, 0};
  memset(&tr, 0, sizeof tr);
  memset(&prev, 0, sizeof prev);
  lb_err err = lb_graph_create(o->graph, &g);
  if (err) return err;
  int P = g->n;
  if (g->kind != LB_GRAPH_LINE && g->kind != LB_GRAPH_RING)
    err = lb_error(LB_ERR_ARG, "-chain runs on the chain of ranks: give -graph line:P or ring:P, not '%s'", g->spec);
  else if (MPI_Comm_size(o->p.comm, &size) != MPI_SUCCESS)
    err = lb_error(LB_ERR_MPI, "MPI_Comm_size failed");
  else if (o->p.backend == LB_BACKEND_MPI && size != P)
    err = lb_error(LB_ERR_SIZE, "graph '%s' has %d ranks but the MPI backend runs on %d processes (use as many processes or -virtual)", g->spec, P, size);
  if (err) goto out;
  /* A scenario reads only the size and shape of its graph: the curve is a
   * line of cells, described without building its edges. */
  memset(&curve, 0, sizeof curve);
  curve.kind = LB_GRAPH_LINE;
  curve.n = curve.dims[0] = (int)n;
  snprintf(curve.spec, sizeof curve.spec, "curve of %lld cells", (long long)n);
  counts = malloc((size_t)P * sizeof *counts);
  if (!counts) { err = lb_error(LB_ERR_MEM, "-graph %s: out of memory", g->spec); goto out; }
  if (traced) {
    /* a shift hook (sfc-shift) reads its sequence's records itself */
    if ((err = lb_trace_open_scenario(o->scenario, &rp, &tr, m->shift ? NULL : &prev))) goto out;
    if (m->shift) {
      err = run_chain_shift(o, rp, m, g, &tr, me);
      goto out;
    }
    if ((err = lb_trace_curve(&tr, &prev, &rp, P, &n, &w, counts))) goto out;
  } else {
    w = malloc((size_t)n * sizeof *w);
    if (!w) { err = lb_error(LB_ERR_MEM, "-chain %lld: out of memory for the cell weights", (long long)n); goto out; }
    if ((err = lb_scenario_loads(&curve, o->scenario, o->base, w))) goto out;
    for (int q = 0; q < P; q++) counts[q] = n * (q + 1) / P - n * q / P;
  }
  if (o->p.backend == LB_BACKEND_MPI) {
    for (int q = 0; q < me; q++) first += counts[q];
    err = lb_chain_balance_on(g, m, &o->p, counts[me], w + first, NULL, &res);
  } else {
    err = lb_chain_balance_on(g, m, &o->p, n, w, counts, &res);
  }
  if (err) goto out;
  have_res = 1;
  lb_metrics mt, cm;
  if ((err = lb_metrics_compute(&res.run, &mt))) goto out;
  lb_metrics_loads(P, res.cut.part_load, &cm);
  if (me == 0) {
    const char *backend = o->p.backend == LB_BACKEND_MPI ? "mpi" : "virtual";
    printf("lbbench: %s in chain mode on %s (%s backend), %lld cells, scenario %s\n", m->name, g->spec, backend, (long long)n, o->scenario);
    if (traced) print_trace(o, &tr);
    printf("  iterations %d  target_iteration %d  rounds %lld  messages %lld  bytes %lld  collectives %lld  runtime %.6f s  stop %s\n",
           res.run.iterations, res.run.target_iteration, res.run.rounds, res.run.messages, res.run.bytes, res.run.collectives, res.run.runtime_s, lb_stop_name(res.run.stop));
    lb_bench_memory_print(m, &res.run);
    printf("  cells: max/avg %.6f  I%% %.4f  partition quality %.6f  migrated %lld cells  %lld cells from sfc's cuts\n",
           cm.max_over_avg, cm.imbalance_pct, res.cut.quality, (long long)res.migrated_cells, (long long)res.sfc_cut_distance);
    printf("  method's loads: max/avg %.6f  transfer_tot %.6g (of the total load)  transfer_max %.6g (of the average load)  migrated %.6g (load units)  "
           "unit_hops %.6g (load units x edges)\n", mt.max_over_avg, mt.transfer_tot, mt.transfer_max, mt.migrated_units, mt.unit_hops);
    printf("  cut %.6f s (%.3f ns per cell), sfc cut %.6f s (%.3f ns per cell)\n", res.cut_time_s, 1e9 * res.cut_time_s / (n ? n : 1),
           res.sfc_time_s, 1e9 * res.sfc_time_s / (n ? n : 1));
    printf("  bound: largest part %.9g, the exact 1D partition's %.9g (%.6f of it; exact partition %.6f s)\n", res.max_part_load,
           res.optimal_max_part_load, lb_chain_over_optimum(&res), res.exact_time_s);
    if (o->json[0]) {
      FILE *f = fopen(o->json, "a");
      if (!f) { err = lb_error(LB_ERR_FILE, "-json '%s': cannot open for appending", o->json); goto out; }
      json_line j;
      lb_metrics loads = mt;
      /* the cells' balance beside what the method's loads moved */
      loads.max_over_avg = cm.max_over_avg;
      loads.imbalance_pct = cm.imbalance_pct;
      loads.l2_imbalance = cm.l2_imbalance;
      json_run_header(&j, f, m->name, g->spec, P, backend, o->scenario);
      lb_bench_run_json(&j, &res.run);
      lb_bench_memory_json(&j, m, &res.run);
      json_str(&j, "stop_reason", lb_stop_name(res.run.stop));
      lb_bench_loads_json(&j, &loads);
      json_int(&j, "cells", (long long)n);
      json_int(&j, "migrated_cells", (long long)res.migrated_cells);
      json_real(&j, "partition_quality", res.cut.quality);
      json_int(&j, "sfc_cut_distance", (long long)res.sfc_cut_distance);
      json_real(&j, "method_max_over_avg", mt.max_over_avg);
      json_real(&j, "cut_time_s", res.cut_time_s);
      json_real(&j, "sfc_time_s", res.sfc_time_s);
      json_real(&j, "max_part_load", res.max_part_load);
      json_real(&j, "optimal_max_part_load", res.optimal_max_part_load);
      json_real(&j, "over_optimum", lb_chain_over_optimum(&res));
      json_real(&j, "exact_time_s", res.exact_time_s);
      if (o->p.track_costs) lb_bench_costs_json(&j, &res.run);
      if (traced) err = json_trace(&j, o, &tr, P, n, w, counts, res.cut.counts);
      json_end(&j);
      if (fclose(f) && !err) err = lb_error(LB_ERR_FILE, "-json '%s': write failed", o->json);
    }
  }
out:
  if (have_res) lb_chain_result_free(&res);
  lb_trace_free(&tr);
  lb_trace_free(&prev);
  lb_graph_destroy(&g);
  free(w);
  free(counts);
  return err;
}
