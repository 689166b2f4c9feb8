/* Seed 002 (Langer): perfect balance with the fewest migrations over a BFS
 * spanning tree rooted at the graph's centre (which halves the rounds of the
 * two passes on a line compared with an end).  One global sum gives q = floor(W/n) and
 * r = W mod n.  Upward pass: every rank sends its parent the units in its
 * subtree and how many of its ranks hold more than q.  Downward pass: each
 * rank hands out its subtree's r-share of "q+1" places, first to ranks that
 * hold more than q (they then keep one unit more instead of shipping it),
 * and the flow on a tree edge is the child subtree's target minus its units
 * (a consumer subtree receives, a supplier subtree sends).  Every rank ends
 * at q or q+1 and exactly sum max(0, l-q) - min(r, #{l > q}) units change
 * owner, which is the minimum. */
#include "balance.h"

#include <stdlib.h>

typedef struct {
  lb_tree t;
  int slot;
  long long q, rem;
  double *wsub, *over; /* per directed edge parent -> child: child subtree's units and ranks above q */
  int *got;            /* children heard from */
  double *own_w, *own_l; /* subtree units as sent up; own units at the start */
} tree_state;

static void tree_destroy(void *p)
{
  tree_state *s = p;
  if (!s) return;
  lb_tree_free(&s->t);
  free(s->wsub); free(s->over); free(s->got); free(s->own_w); free(s->own_l);
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
  size_t nd = 2 * (size_t)g->m + 1, n = (size_t)g->n;
  s->wsub = calloc(nd, sizeof(double));
  s->over = calloc(nd, sizeof(double));
  s->got = calloc(n, sizeof(int));
  s->own_w = calloc(n, sizeof(double));
  s->own_l = calloc(n, sizeof(double));
  if (!s->wsub || !s->over || !s->got || !s->own_w || !s->own_l) return lb_error(LB_ERR_MEM, "out of memory");
  if ((err = lb_run_reduction(run, LB_SUM, 1, &s->slot))) return err;
  return lb_run_channels(run, 2, 0);
}

static int nchildren(const tree_state *s, int r) { return s->t.xchild[r + 1] - s->t.xchild[r]; }

/* Rank r learnt that its subtree gets `extra` places at q+1: it keeps one
 * if it started above q, children get places for their ranks above q, and
 * what is left goes wherever there is room; then r moves to (or from) each
 * child subtree the units it lacks (or has in excess). */
static void hand_out(lb_run *run, tree_state *s, int r, long long extra)
{
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run), *flow = lb_run_flow(run);
  int c0 = s->t.xchild[r], nc = nchildren(s, r);
  long long give[64], *gv = nc <= 64 ? give : malloc((size_t)nc * sizeof *gv);
  long long left = extra;
  int self = 0;
  if (left > 0 && s->own_l[r] > s->q) { self = 1; left--; }
  for (int i = 0; i < nc; i++) {
    int e = lb_graph_edge(g, r, s->t.child[c0 + i]);
    long long take = (long long)s->over[e] < left ? (long long)s->over[e] : left;
    gv[i] = take;
    left -= take;
  }
  if (left > 0 && !self) { self = 1; left--; }
  for (int i = 0; i < nc && left > 0; i++) {
    long long room = s->t.size[s->t.child[c0 + i]] - gv[i];
    long long take = room < left ? room : left;
    gv[i] += take;
    left -= take;
  }
  for (int i = 0; i < nc; i++) {
    int c = s->t.child[c0 + i], e = lb_graph_edge(g, r, c);
    double target = (double)(s->t.size[c] * s->q + gv[i]);
    double send = target - s->wsub[e];
    load[r] -= send;
    flow[e] += send;
    lb_run_transit(run, e, send);
    double *msg = lb_msg_post(run, e, 1);
    msg[0] = (double)gv[i];
  }
  if (gv != give) free(gv);
}

static lb_err tree_step(lb_run *run, void *state, int lo, int hi)
{
  tree_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run), *flow = lb_run_flow(run);
  int step = lb_run_step(run), H = s->t.height;
  if (step == 0) {
    for (int r = lo; r < hi; r++) lb_reduce(run, s->slot, 0, load[r]);
    return LB_OK;
  }
  if (step == 1) {
    long long W = (long long)lb_reduced(run, s->slot, 0);
    s->q = W / g->n;
    s->rem = W % g->n;
    for (int r = lo; r < hi; r++) s->own_l[r] = load[r];
  }
  for (int r = lo; r < hi; r++) {
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
      const double *msg;
      int len = lb_msg_recv(run, e, &msg);
      if (len == 2) {            /* upward: a child's subtree */
        s->wsub[e] = msg[0];
        s->over[e] = msg[1];
        s->got[r]++;
      } else if (len == 1) {     /* downward: our subtree's places at q+1 */
        long long extra = (long long)msg[0];
        double recv = (double)(s->t.size[r] * s->q + extra) - s->own_w[r];
        load[r] += recv;
        flow[e] -= recv;
        hand_out(run, s, r, extra);
      }
    }
    if (s->got[r] == nchildren(s, r)) {
      double w = load[r], ov = s->own_l[r] > s->q;
      for (int i = s->t.xchild[r]; i < s->t.xchild[r + 1]; i++) {
        int e = lb_graph_edge(g, r, s->t.child[i]);
        w += s->wsub[e];
        ov += s->over[e];
      }
      s->got[r] = -1;
      s->own_w[r] = w;
      if (r == s->t.root) hand_out(run, s, r, s->rem);
      else {
        double *msg = lb_msg_post(run, s->t.up[r], 2);
        msg[0] = w;
        msg[1] = ov;
      }
    }
  }
  if (step == 1 + 2 * H) {
    int any = 0;
    for (int r = lo; r < hi; r++)
      for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) if (flow[e] != 0) any = 1;
    lb_run_end_iteration(run, any);
    lb_run_stop(run, LB_STOP_CONVERGED);
  }
  return LB_OK;
}

const lb_method lb_method_tree = {
  "tree", "seed 002 (Langer): up/down passes over a spanning tree, perfect balance, fewest migrations",
  LB_INTEGRAL | LB_CONNECTED | LB_TERMINATES, NULL, 0, tree_setup, tree_step, tree_destroy
};
