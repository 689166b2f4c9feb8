/* Seed 002 (Langer): perfect balance with the fewest migrations over a BFS
 * spanning tree rooted at the graph's centre (which halves the rounds of the
 * passes on a line compared with an end), every unit sent once, straight
 * from the rank that has it in excess to the rank that ends with it.
 *
 * One global sum gives q = floor(W/n) and r = W mod n.  Then three passes:
 *
 *  1. Up: every rank sends its parent the units in its subtree and how many
 *     of its ranks hold more than q (the abstract's upward pass).
 *  2. Down: each rank hands out its subtree's share of the r places at q+1,
 *     first to ranks that hold more than q (each then keeps a unit instead
 *     of shipping it: that is what makes the number of moved units
 *     sum max(0, l-q) - min(r, #{l > q}), the minimum).  Now every rank
 *     knows whether it is a work supplier (units above its target) or a
 *     work consumer.
 *  3. Matchmaking, up: every rank V pairs suppliers with consumers: itself
 *     first (it serves its own need from the suppliers, or tags itself as a
 *     supplier), then the unmatched suppliers and consumers its children
 *     reported, by alternating between the two lists: the current supplier
 *     and the current consumer agree on min(excess, need) units, and
 *     whichever is satisfied leaves its list.  A pair is final: its units go
 *     directly from the supplier's rank to the consumer's (lb_run_transfer).
 *     What is left is of one kind only (V's subtree's net excess or need)
 *     and goes to V's parent as a list of ranks and amounts.
 *
 * Reading of the abstract.  It does the matchmaking in the downward pass
 * and lets a vertex "call the balancing step" on the suppliers or the
 * receivers of the far side, which in Charm++ may be any object.  Our
 * supersteps talk only to tree neighbours, and a supplier can only be
 * paired with a consumer once both ranks are known at one vertex; so the
 * code reports the unmatched ranks upwards and pairs them at their lowest
 * common ancestor, which is also the first vertex at which such a pairing
 * can be made.  The alternation is read as the two-list walk above: every
 * step retires a supplier or a consumer, so the lists shrink as they rise,
 * there are at most (suppliers + consumers - 1) transfers (they form a
 * forest), and a rank receives at most one transfer per supplier paired
 * with it.  Messages: one per tree edge in passes 1 and 2, and in pass 3
 * one per tree edge plus one more per LIST_CHUNK further list entries (a
 * message has a fixed size).  The flows of the result are the net units
 * across each tree edge (what a cut on a chain moves); the transfers say
 * how the units really travel. */
#include "balance.h"

#include <stdlib.h>

enum { TAG_COUNT = 1, TAG_PLACES, TAG_LIST, TAG_LAST };
#define LIST_CHUNK 16
#define MSG_CAP (3 + 2 * LIST_CHUNK)

/* Ranks with an amount of units (excess or need, always positive). */
typedef struct { int *rank; long long *amount; int n, cap; } unit_list;

typedef struct {
  lb_tree t;
  int slot;
  long long q, rem;
  double *wsub, *over;   /* per directed edge parent -> child: child subtree's units and ranks above q */
  int *got;              /* children heard from in pass 1, -1 once sent up */
  double *own_w, *own_l; /* subtree units as sent up; own units at the start */
  long long *target;     /* q or q+1 once pass 2 reached the rank, else -1 */
  unit_list *sup, *con;  /* unmatched suppliers and consumers the children reported */
  unit_list *out;        /* what is left after matchmaking, for the parent */
  int *sent;             /* entries of out already sent */
  int *lasts;            /* children whose list is complete */
  double *moved;         /* units paired within the subtree */
  char *stage;           /* 0: waiting, 1: sending the list up, 2: done */
} tree_state;

static void ul_free(unit_list *l) { free(l->rank); free(l->amount); }

static lb_err ul_add(unit_list *l, int rank, long long amount)
{
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
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
  for (int r = 0; r < s->t.n; r++) {
    if (s->sup) ul_free(&s->sup[r]);
    if (s->con) ul_free(&s->con[r]);
    if (s->out) ul_free(&s->out[r]);
  }
  lb_tree_free(&s->t);
  free(s->wsub); free(s->over); free(s->got); free(s->own_w); free(s->own_l);
  free(s->target); free(s->sup); free(s->con); free(s->out); free(s->sent);
  free(s->lasts); free(s->moved); free(s->stage);
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
  s->target = malloc(n * sizeof(long long));
  s->sup = calloc(n, sizeof(unit_list));
  s->con = calloc(n, sizeof(unit_list));
  s->out = calloc(n, sizeof(unit_list));
  s->sent = calloc(n, sizeof(int));
  s->lasts = calloc(n, sizeof(int));
  s->moved = calloc(n, sizeof(double));
  s->stage = calloc(n, 1);
  if (!s->wsub || !s->over || !s->got || !s->own_w || !s->own_l || !s->target || !s->sup || !s->con || !s->out ||
      !s->sent || !s->lasts || !s->moved || !s->stage)
    return lb_error(LB_ERR_MEM, "out of memory");
  for (size_t r = 0; r < n; r++) s->target[r] = -1;
  if ((err = lb_run_reduction(run, LB_SUM, 1, &s->slot))) return err;
  return lb_run_channels(run, MSG_CAP, 0);
}

static int nchildren(const tree_state *s, int r) { return s->t.xchild[r + 1] - s->t.xchild[r]; }

/* Pass 2 at rank r, whose subtree gets `extra` places at q+1: it keeps one
 * if it started above q, children get places for their ranks above q, and
 * what is left goes wherever there is room.  The flow on each child edge is
 * the child subtree's target minus its units. */
static void hand_out(lb_run *run, tree_state *s, int r, long long extra)
{
  const lb_graph *g = lb_run_graph(run);
  double *flow = lb_run_flow(run);
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
  s->target[r] = s->q + self;
  for (int i = 0; i < nc; i++) {
    int c = s->t.child[c0 + i], e = lb_graph_edge(g, r, c);
    flow[e] += (double)(s->t.size[c] * s->q + gv[i]) - s->wsub[e];
    double *msg = lb_msg_post(run, e, 2);
    msg[0] = TAG_PLACES;
    msg[1] = (double)gv[i];
  }
  if (gv != give) free(gv);
}

/* Entry i of [self] + list: the rank itself comes first when it has `own` units to match. */
static int who(const unit_list *l, int self, long long own, int i, long long *amount)
{
  if (own > 0) {
    if (i == 0) { *amount = own; return self; }
    i--;
  }
  *amount = l->amount[i];
  return l->rank[i];
}

/* Pass 3 at rank r: pair suppliers with consumers, alternating; keep what is left for the parent. */
static lb_err matchmake(lb_run *run, tree_state *s, int r)
{
  long long surplus = (long long)s->own_l[r] - s->target[r];
  long long own_s = surplus > 0 ? surplus : 0, own_c = surplus < 0 ? -surplus : 0;
  const unit_list *S = &s->sup[r], *C = &s->con[r];
  int ns = S->n + (own_s > 0), nc = C->n + (own_c > 0), i = 0, j = 0;
  long long a = 0, b = 0;
  int sr = ns ? who(S, r, own_s, 0, &a) : -1, cr = nc ? who(C, r, own_c, 0, &b) : -1;
  while (i < ns && j < nc) {
    long long k = a < b ? a : b;
    lb_run_transfer(run, sr, cr, (double)k);
    s->moved[r] += (double)k;
    a -= k;
    b -= k;
    if (a == 0 && ++i < ns) sr = who(S, r, own_s, i, &a);
    if (b == 0 && ++j < nc) cr = who(C, r, own_c, j, &b);
  }
  /* Left over: suppliers (positive amounts) or consumers (negative), never both. */
  lb_err err = LB_OK;
  for (; i < ns && !err; i++) {
    err = ul_add(&s->out[r], sr, a);
    if (i + 1 < ns) sr = who(S, r, own_s, i + 1, &a);
  }
  for (; j < nc && !err; j++) {
    err = ul_add(&s->out[r], cr, -b);
    if (j + 1 < nc) cr = who(C, r, own_c, j + 1, &b);
  }
  lb_run_load(run)[r] = (double)s->target[r];
  s->stage[r] = 1;
  return err;
}

/* Sends the next piece of rank r's list to its parent; the last one says so. */
static void send_list(lb_run *run, tree_state *s, int r)
{
  const unit_list *l = &s->out[r];
  int k = l->n - s->sent[r] < LIST_CHUNK ? l->n - s->sent[r] : LIST_CHUNK, last = s->sent[r] + k == l->n;
  double *msg = lb_msg_post(run, s->t.up[r], 3 + 2 * k);
  msg[0] = last ? TAG_LAST : TAG_LIST;
  msg[1] = last ? s->moved[r] : 0;
  msg[2] = k;
  for (int i = 0; i < k; i++) {
    msg[3 + 2 * i] = l->rank[s->sent[r] + i];
    msg[4 + 2 * i] = (double)l->amount[s->sent[r] + i];
  }
  s->sent[r] += k;
  if (last) s->stage[r] = 2;
}

static lb_err receive(lb_run *run, tree_state *s, int r, int e, const double *msg)
{
  lb_err err = LB_OK;
  switch ((int)msg[0]) {
  case TAG_COUNT:
    s->wsub[e] = msg[1];
    s->over[e] = msg[2];
    s->got[r]++;
    break;
  case TAG_PLACES: {
    long long extra = (long long)msg[1];
    lb_run_flow(run)[e] -= (double)(s->t.size[r] * s->q + extra) - s->own_w[r];
    hand_out(run, s, r, extra);
    break;
  }
  default: {
    int k = (int)msg[2];
    for (int i = 0; i < k && !err; i++) {
      long long a = (long long)msg[4 + 2 * i];
      err = ul_add(a > 0 ? &s->sup[r] : &s->con[r], (int)msg[3 + 2 * i], a > 0 ? a : -a);
    }
    if ((int)msg[0] == TAG_LAST) {
      s->lasts[r]++;
      s->moved[r] += msg[1];
    }
  }
  }
  return err;
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
    return LB_OK;
  }
  if (step == 1) {
    long long W = (long long)lb_reduced(run, s->slot, 0);
    s->q = W / g->n;
    s->rem = W % g->n;
    for (int r = lo; r < hi; r++) s->own_l[r] = load[r];
  }
  for (int r = lo; r < hi && !err; r++) {
    for (int e = g->xadj[r]; e < g->xadj[r + 1] && !err; e++) {
      const double *msg;
      if (lb_msg_recv(run, e, &msg) > 0) err = receive(run, s, r, e, msg);
    }
    if (err) break;
    int nc = nchildren(s, r);
    if (s->got[r] == nc) {
      double w = s->own_l[r], ov = s->own_l[r] > s->q;
      for (int i = s->t.xchild[r]; i < s->t.xchild[r + 1]; i++) {
        int e = lb_graph_edge(g, r, s->t.child[i]);
        w += s->wsub[e];
        ov += s->over[e];
      }
      s->got[r] = -1;
      s->own_w[r] = w;
      if (r == s->t.root) hand_out(run, s, r, s->rem);
      else {
        double *msg = lb_msg_post(run, s->t.up[r], 3);
        msg[0] = TAG_COUNT;
        msg[1] = w;
        msg[2] = ov;
      }
    }
    if (s->stage[r] == 0 && s->target[r] >= 0 && s->lasts[r] == nc) err = matchmake(run, s, r);
    if (err || s->stage[r] != 1) continue;
    if (r != s->t.root) send_list(run, s, r);
    else {
      s->stage[r] = 2;
      lb_run_end_iteration(run, s->moved[r] > 0);
      lb_run_stop(run, LB_STOP_CONVERGED);
    }
  }
  return err;
}

const lb_method lb_method_tree = {
  "tree", "seed 002 (Langer): spanning-tree passes, suppliers matched with consumers, each unit sent once, fewest migrations",
  LB_INTEGRAL | LB_CONNECTED | LB_TERMINATES, NULL, 0, tree_setup, tree_step, tree_destroy
};
