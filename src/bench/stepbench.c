/* lbbench -chain -step (stepbench.h): the app's balancing step with
 * -lb_weights phases on a recorded curve at P virtual ranks, every part
 * of it the library's call that the app makes (src/app/lbcycle_measure.c's
 * fit, lbcycle_phases.c's choice, lbcycle_propose.c's method,
 * lbcycle_decide.c's rule). */
#include "bench/stepbench.h"

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/lbchain.h"
#include "balance/lbdecide.h"
#include "balance/lbphase.h"
#include "balance/lbweights.h"
#include "bench/repeat.h"
#include "util/json.h"

/* Return from the calling function if the call failed. */
#define STEP_CALL(call)        \
  do {                         \
    lb_err step_err_ = (call); \
    if (step_err_) return step_err_; \
  } while (0)

/* A field of /proc/self/status in bytes (VmRSS: resident now, VmHWM:
 * the peak since it was last reset), NaN where there is none. */
static double proc_status(const char *field)
{
  char line[256];
  double kb = NAN;
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return NAN;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, field, strlen(field)) && line[strlen(field)] == ':') kb = atof(line + strlen(field) + 1);
  fclose(f);
  return 1024.0 * kb;
}

/* Reset the peak resident memory to what is resident now (Linux's
 * clear_refs 5), so that the step's peak is its own and not the trace's
 * refinement before it; returns the resident bytes, NaN where the peak
 * cannot be reset.  glibc's allocator is first told to map every block
 * of 64 KiB or more afresh and to give freed memory back, so that the
 * step's arrays are not laid in memory the refinement freed but kept
 * resident (its peak then grew by 1 MB, for arrays of 64 MB). */
static double peak_reset(void)
{
  mallopt(M_MMAP_THRESHOLD, 64 * 1024);
  mallopt(M_TRIM_THRESHOLD, 0);
  malloc_trim(0);
  FILE *f = fopen("/proc/self/clear_refs", "w");
  if (!f || fputs("5", f) == EOF) {
    if (f) fclose(f);
    return NAN;
  }
  return fclose(f) ? NAN : proc_status("VmRSS");
}

/* The recorded curve at P parts: its cells' weights per phase and load
 * types, tiled as lb_trace_curve tiles the weights. */
typedef struct {
  int P, K, T;
  int64_t n, *counts;
  double *w, *pw[LB_TRACE_MAX_PHASES];
  unsigned char *type;
} curve;

/* What one step chose and cost. */
typedef struct {
  lb_phase_choice ch; /* its scalars; its arrays freed before the method runs, as the app frees them */
  lb_chain_result res;
  lb_phase_model kept, next;
  lb_decision decision;
  unsigned fit_flags;
  double fit_s, step_s; /* wall times: the fits, the whole step */
  double rss0, rss1;    /* resident memory before the step, its peak during it */
  double graph_bytes;   /* the line or ring of the P ranks, whole on every MPI process */
} step_run;

static lb_err curve_of(const lb_stepbench_opts *o, const lb_load_trace *t, const lb_load_trace *prev, int P, curve *c)
{
  const int64_t N = t->ncells;
  lb_err err;

  memset(c, 0, sizeof *c);
  c->P = P;
  c->K = t->nphases;
  c->T = t->ntypes > 0 ? t->ntypes : 1;
  if (!(c->counts = malloc((size_t)P * sizeof *c->counts))) return lb_error(LB_ERR_MEM, "-step: out of memory for %d parts", P);
  if ((err = lb_trace_curve(t, prev, &o->rp, P, &c->n, &c->w, c->counts))) return err;
  c->type = malloc((size_t)c->n + 1);
  for (int k = 0; k < c->K; k++) c->pw[k] = malloc(sizeof(double) * ((size_t)c->n + 1));
  for (int k = 0; k < c->K; k++)
    if (!c->pw[k]) return lb_error(LB_ERR_MEM, "-step: out of memory for %lld cells", (long long)c->n);
  if (!c->type) return lb_error(LB_ERR_MEM, "-step: out of memory for %lld cells", (long long)c->n);
  for (int64_t i = 0; i < c->n; i++) {
    c->type[i] = t->type ? t->type[i % N] : 0;
    for (int k = 0; k < c->K; k++) c->pw[k][i] = t->pw[(size_t)k * N + i % N];
  }
  return LB_OK;
}

static void curve_free(curve *c)
{
  free(c->counts);
  free(c->w);
  free(c->type);
  for (int k = 0; k < c->K; k++) free(c->pw[k]);
}

/* Every phase's fit as the app makes it each cycle: one row per rank of
 * the start split (its cells of each type | the phase's time there, the
 * sum of its cells' recorded weights in that phase: seconds), one window. */
static lb_err fit(const curve *c, step_run *r)
{
  const int P = c->P, T = c->T;
  int64_t *counts = calloc((size_t)P * T, sizeof *counts);
  double *time = malloc((size_t)P * sizeof *time);
  const double **times = malloc((size_t)P * sizeof *times);
  int *nsteps = malloc((size_t)P * sizeof *nsteps);
  lb_weights_options opt;
  lb_err err = counts && time && times && nsteps ? LB_OK : lb_error(LB_ERR_MEM, "-step: out of memory for %d ranks", P);

  lb_weights_options_default(&opt);
  for (int k = 0; !err && k < c->K; k++) {
    lb_weights_result res;
    for (int64_t q = 0, i = 0; q < P; q++) {
      time[q] = 0;
      for (int64_t e = i + c->counts[q]; i < e; i++) {
        time[q] += c->pw[k][i];
        if (k == 0) counts[q * T + c->type[i] % T]++;
      }
      times[q] = time + q;
      nsteps[q] = 1;
    }
    err = lb_weights_fit_table(P, nsteps, times, T, counts, &opt, NULL, &res);
    if (!err) {
      r->fit_flags |= res.flags;
      lb_weights_result_free(&res);
    }
  }
  free(counts);
  free(time);
  free(times);
  free(nsteps);
  return err;
}

/* The decision as the app takes it with -lb_weights phases and
 * -lb_threshold 0: the kept partition's modelled loss is this cycle's,
 * the new one's saving the predicted gain; no migration has been timed
 * yet, so its predicted cost is 0 (lb_migration_model_predict of none). */
static lb_err decide(const curve *c, step_run *r)
{
  const double *const *pw = (const double *const *)c->pw;
  lb_decide_state st;
  lb_decide_input in;

  STEP_CALL(lb_phase_model_of(MPI_COMM_SELF, c->n, c->K, pw, c->P, c->counts, &r->kept));
  STEP_CALL(lb_phase_model_of(MPI_COMM_SELF, c->n, c->K, pw, c->P, r->res.cut.counts, &r->next));
  lb_decide_init(&st);
  STEP_CALL(lb_decide_account(&st, r->kept.lost * c->P));
  in.lost_rank_s = st.excess;
  in.cost_rank_s = 0;
  in.kept_rank_s = r->kept.lost * c->P;
  in.gain_rank_s = fmax(0, r->kept.time - r->next.time) * c->P;
  in.imbalance_pct = r->kept.imbalance_pct;
  in.floor_pct = 0;
  return lb_decide(&st, &in, &r->decision);
}

/* The step: fit, choice, the choice's cell weights, the method, the
 * decision. */
static lb_err step(const lb_stepbench_opts *o, const lb_graph *g, const curve *c, step_run *r)
{
  double *cw = malloc(sizeof(double) * ((size_t)c->n + 1)), t0 = MPI_Wtime();
  lb_err err = cw ? LB_OK : lb_error(LB_ERR_MEM, "-step: out of memory for %lld cells", (long long)c->n);

  r->graph_bytes = lb_graph_bytes(g);
  r->rss0 = peak_reset();
  if (!err) err = fit(c, r);
  r->fit_s = MPI_Wtime() - t0;
  if (!err) err = lb_phase_choose(MPI_COMM_SELF, c->n, c->K, (const double *const *)c->pw, c->P, LB_PHASE_ROUNDS, &r->ch);
  if (!err) err = lb_phase_choice_weights(MPI_COMM_SELF, c->n, (const double *const *)c->pw, &r->ch, 1.0 / LB_CHAIN_UNITS, cw);
  lb_phase_choice_free(&r->ch);
  if (!err) err = lb_chain_partition_on(g, o->m, &o->p, c->n, cw, c->counts, &r->res);
  if (!err) err = decide(c, r);
  r->step_s = MPI_Wtime() - t0;
  r->rss1 = proc_status("VmHWM");
  free(cw);
  return err;
}

/* Bytes of the arrays of P values every rank holds at once at the step's
 * peak, in the method's chain mode on MPI: the current loads (1; the
 * current counts are the virtual backend's alone), the engine's copy of
 * them (1), the method's loads and flows (3), the realised cut (3) and the
 * cut's reduction buffer (2 P); the step makes no sfc reference cut
 * (lb_chain_partition_on). The engine's other arrays (flows, injections,
 * transit) are calloc'd and backed only at a process's own entries. The
 * virtual backend holds all these once for all P ranks, so its memory
 * divided by P leaves them out: they are added whole, and so is the graph
 * (lb_graph_bytes). */
static double plong_bytes(int P) { return 8.0 * P * (1 + 1 + 3 + 3 + 2); }

/* The exact bound's cut (3 arrays of P values), a reference for the
 * report, timed apart and counted apart. */
static double bound_bytes(int P, int exact) { return exact ? 8.0 * 3 * P : 0.0; }

/* Collectives every rank makes in the step besides the choice's and the
 * method's: per phase the fit's failure flag, its two sums and its
 * residual, the rows' loads and predictions (6), the choice's weights
 * (means, sum: 2), the chain wrapper (on MPI: its piece's offset and
 * weight 2, the loads' gather 1, the migrated cells' sum 1, the times' max
 * 1; the targets' cut 3, with the bound the exact partition's 7), the
 * decision's two models (6 each). */
static int other_collectives(int K, int exact) { return 6 * K + 2 + 2 + 1 + 1 + 1 + 3 + (exact ? LB_CURVE_HIER_COLLECTIVES : 0) + 12; }

/* Per rank: this process's time and memory divided by P (the virtual
 * backend runs every rank's share here; the split's too, O(n) work per
 * rank and reductions), but whole what every rank holds alone in an MPI
 * run: the P-long arrays.  The exact
 * bound that chain mode computes at rank 0 for the report (a reference,
 * not part of the balancing) is timed apart. */
static lb_err report(const lb_stepbench_opts *o, const lb_load_trace *tr, const curve *c, const step_run *r)
{
  const int P = c->P;
  const double dist_s = r->step_s - r->res.exact_time_s;
  const double time_rank = dist_s / P;
  const double dist_mem = r->rss1 - r->rss0;
  const double mem_rank = dist_mem / P + plong_bytes(P) + r->graph_bytes;
  const int coll = r->ch.collectives + other_collectives(c->K, r->res.exact_time_s > 0) + (int)r->res.run.collectives;
  const double msgs = coll * ceil(log2(fmax(2, P))) + (double)r->res.run.messages / P;

  printf("lbbench: the app's balancing step on %s (virtual backend), %lld cells, scenario %s, method %s\n", o->graph, (long long)c->n, o->scenario, o->m->name);
  printf("  trace: %dD cycle %d of %d ranks, %lld cells (refined %d times), %d phases, start split %s, %d cop%s\n", tr->dim, tr->cycle, tr->nranks,
         (long long)tr->ncells, o->rp.refine, c->K, o->split_name, o->rp.R, o->rp.R > 1 ? "ies" : "y");
  char flags[160];
  lb_weights_flags_string(r->fit_flags, flags, sizeof flags);
  printf("  fits: %d phases, flags %s\n", c->K, flags[0] ? flags : "none");
  printf("  model: start %.6g (I%% %.2f), summed weight's cut %.6g, chosen %s %.6g, realised by the method %.6g (I%% %.2f); decision %s\n", r->kept.time,
         r->kept.imbalance_pct, r->ch.sum_time, r->ch.split ? "split" : "combination", r->ch.model.time, r->next.time, r->next.imbalance_pct, lb_decision_name(r->decision));
  printf("  step: %.4f s in this process over %d ranks (the fits %.4f s, the split %.4f s); besides, the report's exact bound %.4f s at rank 0%s\n",
         dist_s, P, r->fit_s, r->ch.split_s, r->res.exact_time_s, r->res.exact_time_s > 0 ? "" : " (not computed: more than LB_CHAIN_EXACT_MAX_CELLS cells)");
  printf("  per rank: time %.3f ms, memory %.0f bytes (%.1f per rank of P: the P-long arrays' %.0f, the graph's %.0f, the rest %.0f; besides, the bound's %.0f), collectives %d (choice %d, of them %d P-long; method %lld), messages about %.0f\n",
         1e3 * time_rank, mem_rank, mem_rank / P, plong_bytes(P), r->graph_bytes, dist_mem / P, bound_bytes(P, r->res.exact_time_s > 0), coll,
         r->ch.collectives, r->ch.long_collectives, (long long)r->res.run.collectives, msgs);
  if (o->json && o->json[0]) {
    FILE *f = fopen(o->json, "a");
    json_line j;
    if (!f) return lb_error(LB_ERR_FILE, "-json '%s': cannot open for appending", o->json);
    json_run_header(&j, f, o->m->name, o->graph, P, "virtual", o->scenario);
    json_str(&j, "mode", "step");
    json_int(&j, "cells", (long long)c->n);
    json_int(&j, "trace_cycle", tr->cycle);
    json_int(&j, "refine", o->rp.refine);
    json_int(&j, "replicate", o->rp.R);
    json_str(&j, "trace_split", o->split_name);
    json_int(&j, "phases", c->K);
    json_str(&j, "fit_flags", flags);
    json_real(&j, "model_start_s", r->kept.time);
    json_real(&j, "model_sum_s", r->ch.sum_time);
    json_real(&j, "model_chosen_s", r->ch.model.time);
    json_int(&j, "phase_split", r->ch.split);
    json_real(&j, "model_realised_s", r->next.time);
    json_str(&j, "decision", lb_decision_name(r->decision));
    json_real(&j, "step_s", r->step_s);
    json_real(&j, "fit_s", r->fit_s);
    json_real(&j, "split_s", r->ch.split_s);
    json_real(&j, "exact_s", r->res.exact_time_s);
    json_real(&j, "time_per_rank_s", time_rank);
    json_real(&j, "bytes_per_rank", mem_rank);
    json_real(&j, "plong_bytes", plong_bytes(P));
    json_real(&j, "graph_bytes", r->graph_bytes);
    json_real(&j, "bound_bytes", bound_bytes(P, r->res.exact_time_s > 0));
    json_int(&j, "collectives_per_rank", coll);
    json_int(&j, "choice_collectives", r->ch.collectives);
    json_int(&j, "choice_long_collectives", r->ch.long_collectives);
    json_real(&j, "messages_per_rank", msgs);
    json_end(&j);
    if (fclose(f)) return lb_error(LB_ERR_FILE, "-json '%s': write failed", o->json);
  }
  return LB_OK;
}

lb_err lb_stepbench_run(const lb_stepbench_opts *o)
{
  lb_graph *g = NULL;
  lb_load_trace tr, prev;
  curve c;
  step_run r;
  lb_err err;

  memset(&tr, 0, sizeof tr);
  memset(&prev, 0, sizeof prev);
  memset(&c, 0, sizeof c);
  memset(&r, 0, sizeof r);
  if ((err = lb_graph_create(o->graph, &g))) return err;
  if (g->kind != LB_GRAPH_LINE && g->kind != LB_GRAPH_RING)
    err = lb_error(LB_ERR_ARG, "-step runs on the ranks along the curve: give -graph line:P or ring:P, not '%s'", g->spec);
  else if (!lb_trace_is_scenario(o->scenario))
    err = lb_error(LB_ERR_ARG, "-step replays a load trace: give -scenario trace:FILE[:CYCLE], not '%s'", o->scenario);
  if (!err) err = lb_trace_open_scenario(o->scenario, &o->rp, &tr, &prev);
  if (!err && (tr.nphases < 1 || !tr.pw))
    err = lb_error(LB_ERR_ARG, "-step: -scenario %s: cycle %d holds no phase weights (record it with amr2d -lb_weights phases -trace_loads)", o->scenario, tr.cycle);
  if (!err) err = curve_of(o, &tr, &prev, g->n, &c);
  lb_trace_free(&prev);
  if (!err) err = step(o, g, &c, &r);
  if (!err) err = report(o, &tr, &c, &r);
  lb_phase_choice_free(&r.ch);
  lb_chain_result_free(&r.res);
  curve_free(&c);
  lb_trace_free(&tr);
  lb_graph_destroy(&g);
  return err;
}
