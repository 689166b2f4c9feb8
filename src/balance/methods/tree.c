/* Langer 2014: perfect balance with the fewest migrations over a BFS
 * spanning tree rooted at the graph's centre (which halves the rounds of the
 * passes on a line compared with an end), every unit sent once, straight
 * from the rank that has it in excess to the rank that ends with it.
 *
 * One global sum gives q = floor(W/n) and r = W mod n.  Then:
 *
 *  1. Up: every rank sends its parent the units in its subtree and how many
 *     of its ranks are at q+1, above q+1, below q and at q (the abstract's
 *     upward pass sends the units; the classes are for step 2).
 *  2. Down: each rank hands out its subtree's share of the r places at q+1
 *     in the order of TIERS: first to ranks above q (each then keeps a
 *     unit instead of shipping it: that is what makes the number of moved
 *     units sum max(0, l-q) - min(r, #{l > q}), the minimum), those at q+1
 *     first (they drop out), then to ranks below q (so that no rank at q
 *     becomes a consumer needlessly).  A rank now knows whether it is a
 *     work supplier or a work consumer, and which of its child subtrees
 *     supply (units above their targets) or consume.
 *  3. Matchmaking, while pass 2 goes on.  One side travels: the root, which
 *     knows the class counts, lets the suppliers travel if they are no more
 *     than the consumers, else the consumers (the other side is steered by
 *     the counts alone).  Say suppliers travel: a supplier tags itself, i.e.
 *     puts (itself, excess) into its stream.  Every rank V takes the stream
 *     its supplier children send up, after its own excess: if V's subtree
 *     has N units in excess, the first N go on up to V's parent; the rest
 *     are matched, in order, with V's need line: V's own need first ("it
 *     requests work units from suppliers for itself"), then the needs of
 *     its consumer children in tree order.  Supply from above (V's subtree
 *     is a net consumer) fills the end of the same line.  A piece that
 *     lands on V's own need is a transfer from its supplier straight to V;
 *     a piece for a consumer child is passed down to it (V "calls the
 *     balancing step on the work receivers" with their suppliers), which
 *     places it on its own line the same way.  When consumers travel,
 *     everything is mirrored: consumers tag themselves and suppliers' lines
 *     are filled ("calls the balancing step on the work suppliers").
 *  4. Up: a rank that has placed all its stream and line and sent all its
 *     pieces tells its parent, once its children have; the root then stops.
 *
 * Reading of the abstract.  It names the alternation (a receiver calls the
 * balancing step on the suppliers, a supplier on the receivers) so that the
 * lists stay short and no vertex receives many messages, but gives no
 * rule; in Charm++ any vertex may message any other, our supersteps talk
 * to tree neighbours only.  The code reads it as: the names of one side
 * travel, up to where they meet the other side's units, then down into the
 * subtrees that hold them, steered by the counts of pass 2; the side is the
 * one with fewer ranks, chosen once per run.  So a list on a tree edge
 * holds at most one piece per rank of that side (one entry on every edge
 * for a single supplier feeding every rank, or a single consumer fed by
 * many), the transfers are the overlaps of two ordered lines at each rank
 * (at most suppliers + consumers - 1 of them: a forest), and a rank
 * receives one message per tree neighbour in each of passes 1, 2 and 4,
 * plus, in pass 3, one per 1 to LIST_CHUNK pieces on the edges that carry
 * any (pieces are sent as they come, not held back to fill a message).
 * The choice is per run, not per vertex: where both sides are many, a
 * subtree may carry more entries than a per-subtree choice would.  The
 * flows of the result are the net units across each tree edge (what a cut
 * on a chain moves); the transfers say how the units really travel.
 *
 * Supersteps.  With h the tree's height, passes 1, 2 and 4 take h
 * supersteps each and a piece of pass 3 climbs and descends at most h
 * each, one superstep more per LIST_CHUNK pieces queued ahead of it on an
 * edge: at most 5h + 2 plus those waits (on a line rooted at its centre
 * h = P/2: 2.5 P with one supplier at an end, 1.5 P on random loads).
 * The method is not neighbour-only (only the root knows when all is done),
 * so every superstep costs the engine's two collectives, the reduction
 * and the agreement on stop, error and progress, reported in
 * `collectives`, and the whole exchange counts as one iteration: a count
 * of supersteps would hit the iteration cap (the app's 1000) on a line of
 * a few hundred ranks.  Memory: every process holds the BFS tree of all
 * ranks (7 ints a rank, as it holds the graph); a rank its own record,
 * its out-edges' and the pieces queued on them. */
#include "balance/balance.h"

#include <stdlib.h>

enum { TAG_COUNT = 1, TAG_PLACES, TAG_LIST, TAG_DONE };
/* The order in which places at q+1 are handed out: ranks at q+1 (they then
 * neither supply nor consume), above q+1 (they keep a unit), below q (already
 * consumers), at q (they become consumers of one unit).  The first two make
 * the moved units the fewest, the last two the consumers the fewest. */
#define TIERS 4
#define LIST_CHUNK 16
#define MSG_CAP (2 + 2 * LIST_CHUNK)

/* Suppliers with an amount of their units. */
typedef struct { int *rank; long long *amount; int n, cap; } unit_list;

/* What one rank keeps.  In the words of dir = +1; with dir = -1 "supply"
 * is the consumers' travelling need and "need" the suppliers' excess. */
typedef struct {
  int got;               /* children heard from in pass 1, -1 once sent up */
  int dones;             /* children that reported the end of their subtree's work */
  double own_w, own_l;   /* subtree units as sent up; own units at the start */
  double moved;          /* units received by consumers of the subtree, as reported */
  long long target;      /* q or q+1 once pass 2 reached the rank, else -1 */
  long long need;        /* own need (0 for a supplier) */
  long long sint, dint;  /* supply and need within the subtree: own plus the children's */
  long long spos, xpos;  /* supply units placed so far; units received from above */
  char finished;         /* reported (or, at the root, stopped) */
} tree_rank;

/* What a rank keeps per out-edge (towards a child: that subtree's figures). */
typedef struct {
  double wsub;           /* child subtree's units */
  double tier[TIERS];    /* its ranks in each TIERS class */
  long long cnet;        /* child subtree's units minus its target */
  unit_list queue;       /* pieces to send on the edge */
  int qsent;             /* pieces of queue already sent */
  int posted;            /* last superstep a message went on the edge */
} tree_edge;

typedef struct {
  lb_tree t;             /* the whole BFS tree, on every process */
  const int *rev;        /* the graph's reverse edges */
  int slot;
  long long q, rem;
  int dir;               /* +1: suppliers' names travel, -1: consumers' (chosen at the root) */
  int lo, e0;            /* the first local rank, its first directed edge */
  int nedge;             /* the local ranks' directed edges */
  tree_rank *rank;       /* per local rank (made in superstep 0) */
  tree_edge *edge;       /* per directed edge of a local rank */
} tree_state;

static tree_rank *rk(const tree_state *s, int r) { return &s->rank[r - s->lo]; }
static tree_edge *ed(const tree_state *s, int e) { return &s->edge[e - s->e0]; }
/* The directed edge from c's parent to c. */
static int down_edge(const tree_state *s, int c) { return s->rev[s->t.up[c]]; }

static void ul_free(unit_list *l) { free(l->rank); free(l->amount); }

/* Local rank v's list l gets a piece; its growth is v's memory. */
static lb_err ul_add(lb_run *run, int v, unit_list *l, int rank, long long amount)
{
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 4;
    lb_run_account(run, v, (long long)(cap - l->cap) * (long long)(sizeof *l->rank + sizeof *l->amount));
    int *r = realloc(l->rank, (size_t)cap * sizeof *r);
    if (!r) return lb_error(LB_ERR_MEM, "out of memory for the tree's matchmaking lists");
    l->rank = r;
    long long *a = realloc(l->amount, (size_t)cap * sizeof *a);
    if (!a) return lb_error(LB_ERR_MEM, "out of memory for the tree's matchmaking lists");
    l->amount = a;
    l->cap = cap;
  }
  l->rank[l->n] = rank;
  l->amount[l->n++] = amount;
  return LB_OK;
}

static void tree_destroy(void *p)
{
  tree_state *s = p;
  if (!s) return;
  for (int i = 0; i < s->nedge; i++) ul_free(&s->edge[i].queue);
  lb_tree_free(&s->t);
  free(s->rank);
  free(s->edge);
  free(s);
}

/* The middle of the grid for structured graphs (rank 0 is the root of a
 * K-ary tree and central enough in a hypercube); elsewhere the middle of a
 * longest BFS path found by two sweeps. */
static int centre(const lb_graph *g)
{
  int A = g->dims[0], B = g->dims[1], C = g->dims[2];
  switch (g->kind) {
  case LB_GRAPH_LINE: case LB_GRAPH_RING: return g->n / 2;
  case LB_GRAPH_MESH2D: return A / 2 + A * (B / 2);
  case LB_GRAPH_MESH3D: case LB_GRAPH_TORUS3D: return A / 2 + A * (B / 2 + B * (C / 2));
  case LB_GRAPH_HYPERCUBE: case LB_GRAPH_TREE: return 0;
  case LB_GRAPH_EDGES: break;
  }
  lb_tree t;
  if (lb_tree_bfs(g, 0, &t)) return 0;
  int a = t.order[g->n - 1];
  lb_tree_free(&t);
  if (lb_tree_bfs(g, a, &t)) return 0;
  int mid = t.order[g->n - 1];
  for (int k = t.height / 2; k > 0; k--) mid = t.parent[mid];
  lb_tree_free(&t);
  return mid;
}

static lb_err tree_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  tree_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  lb_err err = lb_tree_bfs(g, centre(g), &s->t);
  if (err) return err;
  s->rev = g->rev;
  /* Every process holds the BFS tree of all ranks: 7 ints per rank. */
  lb_run_account(run, -1, (long long)(sizeof *s + 7 * (size_t)g->n * sizeof(int)));
  if ((err = lb_run_reduction(run, LB_SUM, 1, &s->slot))) return err;
  return lb_run_channels(run, MSG_CAP, 0);
}

/* Superstep 0: the local ranks' and their out-edges' records. */
static lb_err make_local(lb_run *run, tree_state *s, int lo, int hi)
{
  const lb_graph *g = lb_run_graph(run);
  s->lo = lo;
  s->e0 = g->xadj[lo];
  s->rank = calloc((size_t)(hi - lo), sizeof *s->rank);
  s->edge = calloc((size_t)(g->xadj[hi] - s->e0) + 1, sizeof *s->edge);
  if (!s->rank || !s->edge) return lb_error(LB_ERR_MEM, "out of memory for the tree's ranks");
  s->nedge = g->xadj[hi] - s->e0;
  for (int r = lo; r < hi; r++) {
    int deg = g->xadj[r + 1] - g->xadj[r];
    rk(s, r)->target = -1;
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) ed(s, e)->posted = -1;
    lb_run_account(run, r, (long long)(sizeof(tree_rank) + (size_t)deg * sizeof(tree_edge)));
  }
  return LB_OK;
}

static int nchildren(const tree_state *s, int r) { return s->t.xchild[r + 1] - s->t.xchild[r]; }

static double *post(lb_run *run, tree_state *s, int e, int len)
{
  ed(s, e)->posted = lb_run_step(run);
  return lb_msg_post(run, e, len);
}

/* Units [p, p+a) of rank v's need line (its own need, then its consumer
 * children's in tree order) come from supplier x: a transfer to v, or
 * pieces passed down. */
static lb_err place(lb_run *run, tree_state *s, int v, int x, long long a, long long p)
{
  long long end = rk(s, v)->need;
  if (p < end) {
    long long k = a < end - p ? a : end - p;
    if (s->dir > 0) lb_run_transfer(run, x, v, (double)k);
    else lb_run_transfer(run, v, x, (double)k);
    lb_run_load(run)[v] += s->dir * (double)k;
    rk(s, v)->moved += (double)k;
    p += k;
    a -= k;
  }
  lb_err err = LB_OK;
  for (int i = s->t.xchild[v]; i < s->t.xchild[v + 1] && a > 0 && !err; i++) {
    int e = down_edge(s, s->t.child[i]);
    if (ed(s, e)->cnet >= 0) continue;
    end -= ed(s, e)->cnet;
    if (p < end) {
      long long k = a < end - p ? a : end - p;
      err = ul_add(run, v, &ed(s, e)->queue, x, k);
      p += k;
      a -= k;
    }
  }
  return err;
}

/* Supply of a units from x reaches v (from itself or a child): what v's
 * subtree has in excess goes up first, the rest meets v's need line. */
static lb_err supply(lb_run *run, tree_state *s, int v, int x, long long a)
{
  long long N = rk(s, v)->sint - rk(s, v)->dint;
  lb_err err = LB_OK;
  if (N > 0 && rk(s, v)->spos < N) {
    long long k = a < N - rk(s, v)->spos ? a : N - rk(s, v)->spos;
    err = ul_add(run, v, &ed(s, s->t.up[v])->queue, x, k);
    rk(s, v)->spos += k;
    a -= k;
  }
  if (a > 0 && !err) {
    err = place(run, s, v, x, a, rk(s, v)->spos - (N > 0 ? N : 0));
    rk(s, v)->spos += a;
  }
  return err;
}

/* Pass 2 at rank r, whose subtree gets `extra` places at q+1: it keeps one
 * if it started above q, children get places for their ranks above q, and
 * what is left goes wherever there is room.  The flow on each child edge is
 * the child subtree's target minus its units.  Then r knows its need line
 * and tags itself as a supplier if it has units above its target. */
static int tier_of(const tree_state *s, double l)
{
  return l == (double)(s->q + 1) ? 0 : l > (double)s->q ? 1 : l < (double)s->q ? 2 : 3;
}

static lb_err hand_out(lb_run *run, tree_state *s, int r, long long extra)
{
  double *flow = lb_run_flow(run);
  int c0 = s->t.xchild[r], nc = nchildren(s, r), self = 0, mine = tier_of(s, rk(s, r)->own_l);
  long long left = extra;
  /* cnet holds each child's places at q+1 until its net is known. */
  for (int i = 0; i < nc; i++) ed(s, down_edge(s, s->t.child[c0 + i]))->cnet = 0;
  for (int k = 0; k < TIERS && left > 0; k++) {
    if (mine == k) { self = 1; left--; }
    for (int i = 0; i < nc && left > 0; i++) {
      int e = down_edge(s, s->t.child[c0 + i]);
      long long count = (long long)ed(s, e)->tier[k], take = count < left ? count : left;
      ed(s, e)->cnet += take;
      left -= take;
    }
  }
  rk(s, r)->target = s->q + self;
  long long own = s->dir * ((long long)rk(s, r)->own_l - rk(s, r)->target);
  rk(s, r)->need = own < 0 ? -own : 0;
  rk(s, r)->sint = own > 0 ? own : 0;
  rk(s, r)->dint = rk(s, r)->need;
  for (int i = 0; i < nc; i++) {
    int c = s->t.child[c0 + i], e = down_edge(s, c);
    double *msg = post(run, s, e, 3);
    msg[0] = TAG_PLACES;
    msg[1] = (double)ed(s, e)->cnet;
    msg[2] = s->dir;
    long long target = s->t.size[c] * s->q + ed(s, e)->cnet;
    flow[e] += (double)target - ed(s, e)->wsub;
    ed(s, e)->cnet = s->dir * ((long long)ed(s, e)->wsub - target);
    if (ed(s, e)->cnet > 0) rk(s, r)->sint += ed(s, e)->cnet;
    else rk(s, r)->dint -= ed(s, e)->cnet;
  }
  if (own <= 0) return LB_OK;
  lb_run_load(run)[r] = (double)rk(s, r)->target;
  return supply(run, s, r, r, own);
}

static lb_err receive(lb_run *run, tree_state *s, int r, int e, const double *msg)
{
  lb_err err = LB_OK;
  switch ((int)msg[0]) {
  case TAG_COUNT:
    ed(s, e)->wsub = msg[1];
    for (int k = 0; k < TIERS; k++) ed(s, e)->tier[k] = msg[2 + k];
    rk(s, r)->got++;
    break;
  case TAG_PLACES: {
    long long extra = (long long)msg[1];
    s->dir = (int)msg[2];
    lb_run_flow(run)[e] -= (double)(s->t.size[r] * s->q + extra) - rk(s, r)->own_w;
    err = hand_out(run, s, r, extra);
    break;
  }
  case TAG_LIST:
    for (int i = 0; i < (int)msg[1] && !err; i++) {
      int x = (int)msg[2 + 2 * i];
      long long a = (long long)msg[3 + 2 * i];
      if (e == s->t.up[r]) { /* from above: the end of the need line */
        err = place(run, s, r, x, a, rk(s, r)->sint + rk(s, r)->xpos);
        rk(s, r)->xpos += a;
      } else {
        err = supply(run, s, r, x, a);
      }
    }
    break;
  default: /* TAG_DONE */
    rk(s, r)->dones++;
    rk(s, r)->moved += msg[1];
  }
  return err;
}

/* Sends the next pieces queued on r's tree edge e; 1 if some are left. */
static int flush(lb_run *run, tree_state *s, int e)
{
  unit_list *l = &ed(s, e)->queue;
  if (ed(s, e)->qsent == l->n) return 0;
  if (ed(s, e)->posted == lb_run_step(run)) return 1;
  int k = l->n - ed(s, e)->qsent < LIST_CHUNK ? l->n - ed(s, e)->qsent : LIST_CHUNK;
  double *msg = post(run, s, e, 2 + 2 * k);
  msg[0] = TAG_LIST;
  msg[1] = k;
  for (int i = 0; i < k; i++) {
    msg[2 + 2 * i] = l->rank[ed(s, e)->qsent + i];
    msg[3 + 2 * i] = (double)l->amount[ed(s, e)->qsent + i];
  }
  ed(s, e)->qsent += k;
  return ed(s, e)->qsent < l->n;
}

static lb_err tree_step(lb_run *run, void *state, int lo, int hi)
{
  tree_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run);
  int step = lb_run_step(run);
  lb_err err = LB_OK;
  if (step == 0) {
    for (int r = lo; r < hi; r++) lb_reduce(run, s->slot, 0, load[r]);
    return make_local(run, s, lo, hi);
  }
  if (step == 1) {
    long long W = (long long)lb_reduced(run, s->slot, 0);
    s->q = W / g->n;
    s->rem = W % g->n;
    for (int r = lo; r < hi; r++) rk(s, r)->own_l = load[r];
  }
  for (int r = lo; r < hi && !err; r++) {
    for (int e = g->xadj[r]; e < g->xadj[r + 1] && !err; e++) {
      const double *msg;
      if (lb_msg_recv(run, e, &msg) > 0) err = receive(run, s, r, e, msg);
    }
    if (err) break;
    int nc = nchildren(s, r), up = s->t.up[r];
    if (rk(s, r)->got == nc) {
      double w = rk(s, r)->own_l, tc[TIERS] = {0};
      tc[tier_of(s, rk(s, r)->own_l)] = 1;
      for (int i = s->t.xchild[r]; i < s->t.xchild[r + 1]; i++) {
        int e = down_edge(s, s->t.child[i]);
        w += ed(s, e)->wsub;
        for (int k = 0; k < TIERS; k++) tc[k] += ed(s, e)->tier[k];
      }
      rk(s, r)->got = -1;
      rk(s, r)->own_w = w;
      if (r == s->t.root) {
        /* Suppliers: ranks above q that keep no unit; consumers: ranks below
         * q and those at q that get a place.  The fewer travel. */
        long long exact = (long long)tc[0], over = exact + (long long)tc[1], under = (long long)tc[2];
        long long sup = over - (s->rem < exact ? s->rem : exact), con = under + (s->rem - over - under > 0 ? s->rem - over - under : 0);
        s->dir = sup <= con ? 1 : -1;
        err = hand_out(run, s, r, s->rem);
      } else {
        double *msg = post(run, s, up, 2 + TIERS);
        msg[0] = TAG_COUNT;
        msg[1] = w;
        for (int k = 0; k < TIERS; k++) msg[2 + k] = tc[k];
      }
      if (err) break;
    }
    int pending = up >= 0 && flush(run, s, up);
    for (int i = s->t.xchild[r]; i < s->t.xchild[r + 1]; i++) pending |= flush(run, s, down_edge(s, s->t.child[i]));
    long long N = rk(s, r)->sint - rk(s, r)->dint;
    if (rk(s, r)->finished || pending || rk(s, r)->target < 0 || rk(s, r)->spos < rk(s, r)->sint || (N < 0 && rk(s, r)->xpos < -N) || rk(s, r)->dones < nc)
      continue;
    if (r == s->t.root) {
      rk(s, r)->finished = 1;
      lb_run_end_iteration(run, rk(s, r)->moved > 0);
      lb_run_stop(run, LB_STOP_CONVERGED);
    } else if (ed(s, up)->posted != step) {
      double *msg = post(run, s, up, 2);
      msg[0] = TAG_DONE;
      msg[1] = rk(s, r)->moved;
      rk(s, r)->finished = 1;
    }
  }
  return err;
}

const lb_method lb_method_tree = {
  .name = "tree",
  .summary = "Langer 2014: spanning-tree passes, suppliers matched with consumers, each unit sent once, fewest migrations",
  .flags = LB_INTEGRAL | LB_CONNECTED | LB_TERMINATES | LB_DIRECT | LB_ACCOUNTED,
  .setup = tree_setup,
  .step = tree_step,
  .destroy = tree_destroy,
};
