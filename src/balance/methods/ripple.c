/* Melhem et al. 1991 (Melhem, Pruhs, Znati): the Ripple algorithms.  Every load
 * change f at rank i (the initial deviation from the average, and later
 * -inject load) is spread over a spanning tree S_i rooted at i so that every
 * rank ends with f/n of it.  The trees are the paper's: the line itself, row
 * tree plus column trees on a 2D mesh, binomial trees on a hypercube.  They
 * satisfy "same in-link, same subtree", so one scheduling table per link
 * serves every source and the algorithms A_i superimpose by plain addition.
 * Load posted in superstep s is read by its receiver in superstep s + 1
 * (the paper's "received at t, passed at t + 1"); like the paper's L_{j,t}
 * the engine counts it at its receiver from step s on, so the time to
 * stability (the iterations reported) is the number of steps in which some
 * rank sends load, and the step that only reads the last load is not one.
 *
 * Trees are composed of lines.  The load reaching rank r from its parent
 * either goes on straight (the child in the same direction, the line's
 * next rank) or turns into a side subtree (a column off the row; on the
 * hypercube every child, since each dimension is a line of two ranks).  A
 * line's ranks all carry the same number omega of ranks (themselves plus
 * their side subtrees: the column's d ranks for a row rank, 1 in a column,
 * 2^k across dimension k), so a line rank's share is omega f/n.  Melhem et al. 1991
 * builds the grid algorithm this way: linear Tortoise (Hare) along the
 * source's row, then linear Tortoise (Hare) along each column.
 *
 * Tortoise (Melhem et al. 1991 S1-S3) on the lines of the tree.  S1: the source sends
 * one line rank's share, omega f/n, per step on the first link of each of
 * its lines, for as many steps as the line has ranks after it: f/d per step
 * along a d x d mesh's row, f/n up and down its own column.  S3: a rank
 * that receives rho keeps rho/(u+1) (u: ranks below it) and passes
 * size(child)/(u+1) of rho on at once, the paper's rule for general trees;
 * on the hypercube a rank that receives from dimension k keeps 1/2^(k-1)
 * and passes 2^(u-1)/2^(k-1) across each lower dimension u.  Where the paper
 * is ambiguous this code reads it so: (1) passed load is never forked again,
 * so the column's share of a row packet enters the column in the step it
 * arrives (S3 applied to the column, not S1 from every row rank, which
 * would only add d steps); (2) the source's S1 schedule is per line, not
 * f/n per step per subtree rank (that took one step per subtree rank: ~d^2
 * steps on a grid, 2^(D-1) + D on hypercube:D).  With f = n at a corner the
 * last load is sent in step 2n - 3 on line:n, 3d - 4 on a d x d mesh and D
 * on hypercube:D; costs as Table 1: migration Theta(d), Theta(d^2),
 * Theta(2^D) and imbalance Theta(d^2), Theta(d^3), Theta(2^D).  On the
 * hypercube, where every line has two ranks, Tortoise and Hare coincide
 * with the paper's single "Ripple" row of Table 1.
 *
 * Hare: Melhem et al. 1991 defines it by the condition L_{j,t} <= f/t for ranks within
 * t hops of the source, and zero beyond (its Figure 1 is not in our text).
 * Passing load on at once cannot meet it on a line: the wave front would
 * carry the whole remaining share.  Hare here spreads each side equally
 * instead.  Take one side of a line: the root and the m ranks beyond it,
 * each to end with w (the share of one rank), so the side's load including
 * the root's part is F = w (m + 1), the paper's "L" of Figure 1.  After
 * step t every rank reached so far on that side, the root and the t nearest,
 * holds F/(t+1).  Keeping that level from step t-1 to t moves
 *      F (k+1) / (t (t+1))        from distance k to k+1, for k < t <= m,
 * at most F/(t+1) < f/t, always away from the root; every rank holds at
 * most F/(t+1) <= f/(t+1).  Summed over the steps the root sends the side's
 * share w m, a rank keeps w of what it receives (the paper's 1/(u+1)), and
 * the costs are those of Melhem et al. 1991 Table 1: migration F (H_{m+1} - 1) and
 * load imbalance Theta(f log n) for f = n.
 *
 * On a tree, w = omega f/n.  The rank the line front reaches at distance k
 * schedules at once everything it will pass on that line (the rates above,
 * which it knows from k, w and the line length) and starts its side lines
 * as new lines rooted at itself: a column starts when the row front
 * arrives.  Flows therefore never go back towards the root.  A spread of
 * the whole tree by reached set, every reached rank at the same load, would
 * have to move load back: on a binomial tree the leaf across dimension 0
 * holds f/(d+1) after step 1 and must return part of it when more ranks
 * are reached; the same happens to the shorter side of a line.  On the
 * hypercube the composition sends each subtree's share in one step, so a
 * rank at depth t holds at most f/2^t, the paper's bound there.
 *
 * On a d x d mesh Hare takes 2d - 2 steps from a corner and its migration
 * cost is Table 1's Theta(f log d) (d^2 log d for f = n), but its imbalance
 * cost is Theta(f log d) too, not Table 1's d^2, and no schedule on the
 * trees S_ij that passes load only away from the root, as Ripple does, can
 * do better: at step t < d/4 the load of the columns more than t from the
 * source's column (at least d - 1 - 2t columns, f/d each) has not left the
 * source's row, its path runs along the row, and at most 2t + 1 row ranks
 * are reached, so one of them holds at least f (d - 1 - 2t) / (d (2t + 1)),
 * and these sum to Theta(f log d).  Table 1's d^2 follows from spreading
 * the row Hare's n/t per column over t column ranks, which overloads each
 * column early and needs it to give load back to the row later.
 *
 * Only line fronts carry information: a message is its load followed by
 * pairs (k, f/n), one for every line whose front it is (k: the receiver's
 * distance from the line's root); fronts of equal k on one link start
 * identical schedules and are merged.
 *
 * Memory: a rank keeps only its own out-links' schedules, each one entry
 * for a whole run of steps (a Tortoise line start, a pass, a Hare line
 * through the rank), summed at each step in the order they were made, so
 * the amounts are bit for bit those of a table of every step.  Tortoise
 * holds a few entries per link (its line starts; passes leave at once);
 * Hare one per line front that passed the link and has steps left, at most
 * one per step run so far and one per rank before it on the line (O(P) on
 * a line where every rank forks, not the P steps times every edge of a
 * table of the whole line).  A rank sends one message per link and step
 * that carries load or fronts. */
#include "balance/balance.h"

#include <stdlib.h>

#define MAX_KIDS 64

/* What one out-link sends from step `first` to `last`: the amount a every
 * step (Tortoise; a pass is a schedule of one step), or Hare's
 * a / (t (t+1)) at line step t = t0 + (step - first). */
typedef struct {
  long long first, last;
  double a;
  int t0; /* 0: the amount a */
} ripple_sched;

/* An out-link's schedules in the order they were made: an amount is their
 * sum in that order, as the whole-line table of steps summed them. */
typedef struct {
  ripple_sched *q;
  int n, cap;
} ripple_link;

typedef struct {
  int hare;
  ripple_link *link;  /* per directed edge of a local rank, from xadj[lo] (made in superstep 0) */
  int e0, nlinks;     /* xadj[lo], xadj[hi] - xadj[lo] */
  int slot_avg, slot_pending;
  double avg;
  int fcap;           /* hare: most fronts one message can carry */
  int *nfront;        /* hare: fronts leaving the rank being processed, per out-link */
  double *front;      /* hare: (k, f/n) pairs, fcap per out-link */
  lb_run *run;        /* for the accounting of the links' schedules */
} ripple_state;

/* Where load that reached r from `from` (-1 at the source) goes next. */
typedef struct {
  int nk, kid[MAX_KIDS], size[MAX_KIDS];
  int cont;   /* index in kid of the line's next rank, -1 if none */
  int omega;  /* ranks each node of r's line carries: 1 + sizes of the side subtrees */
  int beyond; /* line ranks after r */
} line_view;

static int line_at(const lb_graph *g, int r, int from, line_view *v)
{
  v->nk = lb_source_tree_children(g, r, from, v->kid, v->size);
  v->cont = -1;
  v->omega = 1;
  for (int i = 0; i < v->nk; i++) {
    if (from >= 0 && v->kid[i] - r == r - from) v->cont = i;
    else v->omega += v->size[i];
  }
  v->beyond = v->cont >= 0 ? v->size[v->cont] / v->omega : 0;
  return v->cont < 0 || v->size[v->cont] % v->omega == 0;
}

static void ripple_destroy(void *p)
{
  ripple_state *s = p;
  if (!s) return;
  for (int i = 0; i < s->nlinks; i++) free(s->link[i].q);
  free(s->link);
  free(s->nfront);
  free(s->front);
  free(s);
}

/* Hare's message size: one front per line fork step when only sources
 * start lines, else one per distance, at most one line length (and every
 * line must carry equal subtrees). */
static lb_err ripple_sizes(lb_run *run, ripple_state *s, const char *name)
{
  const lb_graph *g = lb_run_graph(run);
  const lb_params *p = lb_run_params(run);
  int longest = 1, sides = 0;
  line_view v;
  for (int r = 0; r < g->n; r++)
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
      if (!line_at(g, r, g->adj[e], &v))
        return lb_error(LB_ERR_UNSUPPORTED, "%s: the lines of the Ripple trees of '%s' carry unequal subtrees", name, g->spec);
      if (1 + v.beyond > longest) longest = 1 + v.beyond;
      if (v.omega > 1) sides = 1;
    }
  if (!s->hare) return LB_OK;
  int nfork = 1;
  for (int i = 0; i < p->ninject; i++) {
    int st = p->inject[i].step > 1 ? p->inject[i].step : 1, seen = st == 1;
    for (int j = 0; j < i && !seen; j++) seen = (p->inject[j].step > 1 ? p->inject[j].step : 1) == st;
    nfork += !seen;
  }
  s->fcap = sides || nfork > longest ? longest : nfork;
  return LB_OK;
}

static lb_err ripple_setup_common(lb_run *run, void **state, int hare)
{
  const lb_graph *g = lb_run_graph(run);
  const char *name = hare ? "ripple-hare" : "ripple-tortoise";
  if (lb_source_tree_children(g, 0, -1, NULL, NULL) < 0)
    return lb_error(LB_ERR_UNSUPPORTED, "Ripple needs the trees of a line, mesh2d or hypercube graph, not '%s'", g->spec);
  if (g->max_degree > MAX_KIDS) return lb_error(LB_ERR_UNSUPPORTED, "%s: '%s' has ranks of more than %d links", name, g->spec, MAX_KIDS);
  ripple_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  s->hare = hare;
  s->run = run;
  lb_err err = ripple_sizes(run, s, name);
  if (err) return err;
  size_t nfront = (size_t)g->max_degree + 1, fronts = nfront * (2 * (size_t)s->fcap + 1);
  s->nfront = calloc(nfront, sizeof(int));
  s->front = calloc(fronts, sizeof(double));
  if (!s->nfront || !s->front) return lb_error(LB_ERR_MEM, "out of memory for Ripple's fronts");
  lb_run_account(run, -1, (long long)(sizeof *s + nfront * sizeof(int) + fronts * sizeof(double)));
  if ((err = lb_run_reduction(run, LB_SUM, 1, &s->slot_avg))) return err;
  if ((err = lb_run_reduction(run, LB_SUM, 1, &s->slot_pending))) return err;
  return lb_run_channels(run, 1 + 2 * s->fcap, 0);
}

static lb_err tortoise_setup(lb_run *run, void **state) { return ripple_setup_common(run, state, 0); }
static lb_err hare_setup(lb_run *run, void **state) { return ripple_setup_common(run, state, 1); }

/* Local rank r's out-link e sends from step `first` to `last` (see
 * ripple_sched); the link's table grows by half when full. */
static lb_err schedule(ripple_state *s, int r, int e, long long first, long long last, double a, int t0)
{
  ripple_link *l = &s->link[e - s->e0];
  if (l->n == l->cap) {
    int cap = l->cap + l->cap / 2 + 2;
    ripple_sched *q = realloc(l->q, (size_t)cap * sizeof *q);
    if (!q) return lb_error(LB_ERR_MEM, "out of memory for a Ripple schedule table");
    lb_run_account(s->run, r, (long long)(cap - l->cap) * (long long)sizeof *q);
    l->q = q;
    l->cap = cap;
  }
  l->q[l->n++] = (ripple_sched){first, last, a, t0};
  return LB_OK;
}

/* What out-link l sends at `step`: its schedules' amounts summed in the
 * order they were made (every schedule in the table covers the step), those
 * that end now dropped. */
static double take(ripple_link *l, long long step)
{
  double amount = 0;
  int kept = 0;
  for (int j = 0; j < l->n; j++) {
    const ripple_sched *q = &l->q[j];
    int t = q->t0 + (int)(step - q->first);
    amount += q->t0 ? q->a / ((double)t * (t + 1)) : q->a;
    if (q->last > step) l->q[kept++] = *q;
  }
  l->n = kept;
  return amount;
}

/* Out-link i of the rank being processed gets front (k, unit). */
static lb_err add_front(ripple_state *s, int i, double k, double unit)
{
  double *f = s->front + (size_t)i * 2 * s->fcap;
  for (int j = 0; j < s->nfront[i]; j++)
    if (f[2 * j] == k) { f[2 * j + 1] += unit; return LB_OK; }
  if (s->nfront[i] == s->fcap)
    return lb_error(LB_ERR_UNSUPPORTED, "ripple-hare: more than %d line fronts on one link in one step", s->fcap);
  f[2 * s->nfront[i]] = k;
  f[2 * s->nfront[i] + 1] = unit;
  s->nfront[i]++;
  return LB_OK;
}

/* Rank r at distance k from the root of a line of m ranks past the root,
 * each carrying w: from this step on, pass F (k+1) / (t (t+1)) to the line's
 * next rank at line step t = k+1 .. m, and tell it it is at distance k+1. */
static lb_err hare_line(ripple_state *s, const lb_graph *g, int r, int next, long long step,
                        int k, int m, double w, double unit)
{
  int e = lb_graph_edge(g, r, next);
  lb_err err = m > k ? schedule(s, r, e, step, step + m - k - 1, w * (m + 1) * (k + 1), k + 1) : LB_OK;
  return err ? err : add_front(s, e - g->xadj[r], k + 1, unit);
}

/* Start a line from r towards every child of v except `skip`. */
static lb_err hare_start_lines(ripple_state *s, const lb_graph *g, int r, const line_view *v, int skip,
                               long long step, double unit)
{
  line_view c;
  lb_err err;
  for (int i = 0; i < v->nk; i++) {
    if (i == skip) continue;
    line_at(g, v->kid[i], r, &c);
    if ((err = hare_line(s, g, r, v->kid[i], step, 0, 1 + c.beyond, unit * c.omega, unit))) return err;
  }
  return LB_OK;
}

/* The front of a line reached r from `from`: r is at distance k. */
static lb_err hare_front(ripple_state *s, const lb_graph *g, int r, int from, long long step, int k, double unit)
{
  line_view v;
  line_at(g, r, from, &v);
  lb_err err;
  if (v.cont >= 0 && (err = hare_line(s, g, r, v.kid[v.cont], step, k, k + v.beyond, unit * v.omega, unit))) return err;
  return hare_start_lines(s, g, r, &v, v.cont, step, unit);
}

/* Tortoise's S1 on every line leaving the source: one line rank's share
 * per step, for as many steps as the line has ranks. */
static lb_err tortoise_start_lines(ripple_state *s, const lb_graph *g, int r, const line_view *v, long long step, double unit)
{
  line_view c;
  lb_err err = LB_OK;
  for (int i = 0; i < v->nk && !err; i++) {
    line_at(g, v->kid[i], r, &c);
    err = schedule(s, r, lb_graph_edge(g, r, v->kid[i]), step, step + c.beyond, unit * c.omega, 0);
  }
  return err;
}

/* Load injected before this step at any rank: it forks now, so a run that
 * was idle must not stop (every process sees the whole injection list). */
static int injected_now(const lb_run *run)
{
  const lb_params *p = lb_run_params(run);
  for (int i = 0; i < p->ninject; i++)
    if (p->inject[i].step == lb_run_step(run) && p->inject[i].amount != 0) return 1;
  return 0;
}

/* Superstep 0 makes the tables of the local ranks' own out-links. */
static lb_err make_links(lb_run *run, ripple_state *s, int lo, int hi)
{
  const lb_graph *g = lb_run_graph(run);
  s->e0 = g->xadj[lo];
  s->link = calloc((size_t)(g->xadj[hi] - s->e0) + 1, sizeof *s->link);
  if (!s->link) return lb_error(LB_ERR_MEM, "out of memory for Ripple's links");
  s->nlinks = g->xadj[hi] - s->e0;
  for (int r = lo; r < hi; r++) lb_run_account(run, r, (long long)(g->xadj[r + 1] - g->xadj[r]) * (long long)sizeof *s->link);
  return LB_OK;
}

static lb_err ripple_step(lb_run *run, void *state, int lo, int hi)
{
  ripple_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run), *flow = lb_run_flow(run);
  int step = lb_run_step(run), n = g->n;
  lb_err err;
  if (step == 0) {
    for (int r = lo; r < hi; r++) lb_reduce(run, s->slot_avg, 0, load[r]);
    return make_links(run, s, lo, hi);
  }
  if (step == 1) s->avg = lb_reduced(run, s->slot_avg, 0) / n;
  else if (lb_reduced(run, s->slot_pending, 0) == 0 && !injected_now(run)) {
    lb_run_stop(run, LB_STOP_CONVERGED);
    return LB_OK;
  }
  int moved = 0;
  for (int r = lo; r < hi; r++) {
    int deg = g->xadj[r + 1] - g->xadj[r];
    for (int i = 0; i < deg; i++) s->nfront[i] = 0;
    /* Passed load: Tortoise passes all but a fair share on at once; Hare's
     * schedules were set when the front came by, except for new fronts. */
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
      const double *msg;
      int len = lb_msg_recv(run, e, &msg);
      if (!len) continue;
      double rho = msg[0];
      load[r] += rho;
      flow[e] -= rho;
      if (s->hare) {
        for (int j = 1; j + 1 < len; j += 2)
          if ((err = hare_front(s, g, r, g->adj[e], step, (int)msg[j], msg[j + 1]))) return err;
        continue;
      }
      line_view v;
      line_at(g, r, g->adj[e], &v);
      int u = 0;
      for (int i = 0; i < v.nk; i++) u += v.size[i];
      for (int i = 0; i < v.nk; i++)
        if ((err = schedule(s, r, lb_graph_edge(g, r, v.kid[i]), step, step, rho * v.size[i] / (u + 1), 0))) return err;
    }
    /* S1: new load (the initial deviation, or injected load) forks here. */
    double f = step == 1 ? load[r] - s->avg : lb_run_injected(run, r);
    if (f != 0) {
      line_view v;
      line_at(g, r, -1, &v);
      if ((err = s->hare ? hare_start_lines(s, g, r, &v, -1, step, f / n) : tortoise_start_lines(s, g, r, &v, step, f / n))) return err;
    }
    /* S2: send what the tables hold for this step, with the new fronts;
     * the run goes on while a table holds a later step. */
    long long posted = 0, later = 0;
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
      int nf = s->nfront[e - g->xadj[r]];
      ripple_link *l = &s->link[e - s->e0];
      double amount = take(l, step);
      later += l->n;
      if (amount == 0 && nf == 0) continue;
      double *msg = lb_msg_post(run, e, 1 + 2 * nf);
      msg[0] = amount;
      for (int j = 0; j < 2 * nf; j++) msg[1 + j] = s->front[(size_t)(e - g->xadj[r]) * 2 * s->fcap + j];
      load[r] -= amount;
      flow[e] += amount;
      lb_run_transit(run, e, amount);
      posted++;
      moved = 1;
    }
    lb_reduce(run, s->slot_pending, 0, (double)(later + posted));
  }
  lb_run_end_iteration(run, moved);
  return LB_OK;
}

const lb_method lb_method_ripple_tortoise = {
  .name = "ripple-tortoise",
  .summary = "Melhem et al. 1991 Ripple, Tortoise schedule (the source sends one line rank's share per step along each line of its tree)",
  .flags = LB_CONNECTED | LB_TERMINATES | LB_INJECT | LB_ACCOUNTED,
  .setup = tortoise_setup,
  .step = ripple_step,
  .destroy = ripple_destroy,
};

const lb_method lb_method_ripple_hare = {
  .name = "ripple-hare",
  .summary = "Melhem et al. 1991 Ripple, Hare schedule (each line spread evenly over the ranks reached, L <= f/t)",
  .flags = LB_CONNECTED | LB_TERMINATES | LB_INJECT | LB_ACCOUNTED,
  .setup = hare_setup,
  .step = ripple_step,
  .destroy = ripple_destroy,
};
