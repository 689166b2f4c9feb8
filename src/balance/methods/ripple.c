/* Seed 004 (Melhem, Pruhs, Znati): the Ripple algorithms.  Every load
 * change f at rank i (the initial deviation from the average, and later
 * -inject load) is spread over a spanning tree S_i rooted at i: i keeps
 * f/n and schedules size(child)/n of f for each child link; a rank that
 * receives rho on a link keeps rho/(u+1) (u: ranks below it) and schedules
 * size(child)/(u+1) of rho on each child link.  The trees are the paper's:
 * the line itself, row tree plus column trees on a 2D mesh, binomial trees
 * on a hypercube.  They satisfy "same in-link, same subtree", so one
 * scheduling table per link serves every source and the algorithms A_i
 * superimpose by plain addition.
 *
 * The two schedules (only forked load is scheduled; passed load leaves at
 * once, seed 004 S3):
 *  - tortoise: the source sends f/n per step on each child link, for as
 *    many steps as the child's subtree has ranks (seed 004 S1);
 *  - hare: the source sends each child's whole share in the first step.
 * Load posted in a superstep has left its sender and is counted at its
 * receiver in the next one, so with the eager schedule no rank ever holds
 * more than its fair shares plus what it forks: Hare's condition
 * L(j,t) <= f/t holds.  Its per-step migration, though, is the whole
 * remaining wave (about f/2 on the middle link of a line), not the f/t of
 * the paper's Figure 1, whose schedule is not in the text available to us. */
#include "balance.h"

#include <stdlib.h>

typedef struct {
  int eager;          /* hare */
  int H;              /* table length (circular in time) */
  double *T;          /* T[e*H + t mod H]: load to send on directed edge e at step t */
  unsigned char *set; /* entry written since it was last sent */
  long long *pending; /* per rank: entries set */
  int slot_avg, slot_pending;
  double avg;
} ripple_state;

static void ripple_destroy(void *p)
{
  ripple_state *s = p;
  if (!s) return;
  free(s->T);
  free(s->set);
  free(s->pending);
  free(s);
}

static lb_err ripple_setup_common(lb_run *run, void **state, int eager)
{
  const lb_graph *g = lb_run_graph(run);
  if (lb_source_tree_children(g, 0, -1, NULL, NULL) < 0)
    return lb_error(LB_ERR_UNSUPPORTED, "Ripple needs the trees of a line, mesh2d or hypercube graph, not '%s'", g->spec);
  ripple_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  s->eager = eager;
  /* Tortoise schedules up to one subtree size ahead; passed load leaves at once. */
  s->H = eager ? 1 : g->n;
  size_t cells = (2 * (size_t)g->m + 1) * (size_t)s->H;
  if (cells > ((size_t)1 << 27))
    return lb_error(LB_ERR_UNSUPPORTED, "ripple-tortoise tables for '%s' need %zu entries (more than 2^27)", g->spec, cells);
  s->T = calloc(cells, sizeof(double));
  s->set = calloc(cells, 1);
  s->pending = calloc((size_t)g->n, sizeof(long long));
  if (!s->T || !s->set || !s->pending) return lb_error(LB_ERR_MEM, "out of memory for Ripple tables");
  lb_err err;
  if ((err = lb_run_reduction(run, LB_SUM, 1, &s->slot_avg))) return err;
  if ((err = lb_run_reduction(run, LB_SUM, 1, &s->slot_pending))) return err;
  return lb_run_channels(run, 1, 0);
}

static lb_err tortoise_setup(lb_run *run, void **state) { return ripple_setup_common(run, state, 0); }
static lb_err hare_setup(lb_run *run, void **state) { return ripple_setup_common(run, state, 1); }

static void schedule(ripple_state *s, int r, int e, long long t, double amount)
{
  size_t i = (size_t)e * s->H + (size_t)(t % s->H);
  s->T[i] += amount;
  if (!s->set[i]) { s->set[i] = 1; s->pending[r]++; }
}

static lb_err ripple_step(lb_run *run, void *state, int lo, int hi)
{
  ripple_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run), *flow = lb_run_flow(run);
  int step = lb_run_step(run), n = g->n;
  int kid[64], size[64];
  if (step == 0) {
    for (int r = lo; r < hi; r++) lb_reduce(run, s->slot_avg, 0, load[r]);
    return LB_OK;
  }
  if (step == 1) s->avg = lb_reduced(run, s->slot_avg, 0) / n;
  else if (lb_reduced(run, s->slot_pending, 0) == 0) {
    lb_run_stop(run, LB_STOP_CONVERGED);
    return LB_OK;
  }
  int moved = 0;
  for (int r = lo; r < hi; r++) {
    /* S3: keep a fair share of passed load, pass the rest on at once. */
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
      const double *msg;
      if (!lb_msg_recv(run, e, &msg)) continue;
      double rho = msg[0];
      load[r] += rho;
      flow[e] -= rho;
      moved = 1;
      int nk = lb_source_tree_children(g, r, g->adj[e], kid, size), u = 0;
      for (int i = 0; i < nk; i++) u += size[i];
      for (int i = 0; i < nk; i++) schedule(s, r, lb_graph_edge(g, r, kid[i]), step, rho * size[i] / (u + 1));
    }
    /* S1: new load (the initial deviation, or injected load) forks here. */
    double f = step == 1 ? load[r] - s->avg : lb_run_injected(run, r);
    if (f != 0) {
      int nk = lb_source_tree_children(g, r, -1, kid, size);
      for (int i = 0; i < nk; i++) {
        int e = lb_graph_edge(g, r, kid[i]);
        if (s->eager) schedule(s, r, e, step, f * size[i] / n);
        else for (int a = 0; a < size[i]; a++) schedule(s, r, e, (long long)step + a, f / n);
      }
    }
    /* S2: send what the tables hold for this step. */
    long long posted = 0;
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
      size_t i = (size_t)e * s->H + (size_t)(step % s->H);
      if (!s->set[i]) continue;
      double amount = s->T[i];
      s->T[i] = 0;
      s->set[i] = 0;
      s->pending[r]--;
      if (amount == 0) continue;
      double *msg = lb_msg_post(run, e, 1);
      msg[0] = amount;
      load[r] -= amount;
      flow[e] += amount;
      posted++;
      moved = 1;
    }
    lb_reduce(run, s->slot_pending, 0, (double)(s->pending[r] + posted));
  }
  lb_run_end_iteration(run, moved);
  return LB_OK;
}

const lb_method lb_method_ripple_tortoise = {
  "ripple-tortoise", "seed 004 Ripple, Tortoise schedule (f/n per step per link)",
  LB_CONNECTED | LB_TERMINATES | LB_INJECT, NULL, 0, tortoise_setup, ripple_step, ripple_destroy
};

const lb_method lb_method_ripple_hare = {
  "ripple-hare", "seed 004 Ripple, eager schedule (each link's share at once)",
  LB_CONNECTED | LB_TERMINATES | LB_INJECT, NULL, 0, hare_setup, ripple_step, ripple_destroy
};
