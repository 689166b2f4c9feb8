/* The recursive bisection hierarchy of Horton 1993 Algorithm 2: every set is
 * split into two connected halves whose sizes differ by at most one.  The
 * first half is the first ceil(|S|/2) ranks of the set in an order that
 * keeps halves connected: on lines, rings and hypercubes the index order
 * (low and high halves, subcubes), on meshes and tori the coordinates with
 * the set's longest extent first (slabs), elsewhere a BFS from the set's
 * lowest rank.  When a half comes out disconnected the BFS order is tried,
 * and failing that a BFS subtree of about half the size is cut off (both
 * parts connected, sizes as close as the graph allows). */
#include "balance/balance.h"

#include <stdlib.h>
#include <string.h>

/* More levels than this means the graph has no near-balanced bisections
 * (a star, say) and the set ids 2s, 2s+1 would overflow. */
#define LB_BISECTION_MAX_LEVELS 24

typedef struct {
  long long key;
  int r;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
  const keyed *x = a, *y = b;
  return (x->key > y->key) - (x->key < y->key);
}

/* Orders the c members of a set as the file comment says; returns 0 when
 * the graph has no such order (then the BFS order stays). */
static int structured_order(const lb_graph *g, int *members, int c, keyed *tmp)
{
  int nd, ext[3] = {1, 1, 1};
  switch (g->kind) {
  case LB_GRAPH_LINE: case LB_GRAPH_RING: nd = 1; break;
  case LB_GRAPH_MESH2D: nd = 2; break;
  case LB_GRAPH_MESH3D: case LB_GRAPH_TORUS3D: nd = 3; break;
  case LB_GRAPH_HYPERCUBE: {
    int lo = members[0], hi = members[0];
    for (int i = 1; i < c; i++) { if (members[i] < lo) lo = members[i]; if (members[i] > hi) hi = members[i]; }
    for (int i = 0; i < c; i++) tmp[i] = (keyed){members[i], members[i]};
    qsort(tmp, (size_t)c, sizeof *tmp, cmp_keyed);
    for (int i = 0; i < c; i++) members[i] = tmp[i].r;
    return 1;
  }
  default: return 0;
  }
  int A = g->dims[0], B = nd > 1 ? g->dims[1] : 1;
  int mn[3] = {1 << 30, 1 << 30, 1 << 30}, mx[3] = {-1, -1, -1};
  for (int i = 0; i < c; i++) {
    int r = members[i], x[3] = {r % A, (r / A) % B, r / (A * B)};
    for (int d = 0; d < nd; d++) { if (x[d] < mn[d]) mn[d] = x[d]; if (x[d] > mx[d]) mx[d] = x[d]; }
  }
  for (int d = 0; d < nd; d++) ext[d] = mx[d] - mn[d] + 1;
  int first = 0;
  for (int d = 1; d < nd; d++) if (ext[d] > ext[first]) first = d;
  for (int i = 0; i < c; i++) {
    int r = members[i], x[3] = {r % A, (r / A) % B, r / (A * B)};
    long long key = x[first];
    for (int d = nd - 1; d >= 0; d--) if (d != first) key = key * g->dims[d] + x[d];
    tmp[i] = (keyed){key, r};
  }
  qsort(tmp, (size_t)c, sizeof *tmp, cmp_keyed);
  for (int i = 0; i < c; i++) members[i] = tmp[i].r;
  return 1;
}

typedef struct {
  const lb_graph *g;
  const int *grp;   /* groups of the current level */
  int *mark, stamp; /* mark[v] == stamp: v visited in the current search */
  int *queue, *parent, *size;
} bis_work;

/* BFS over the ranks v with grp[v] == s and keep(v); returns the count. */
static int bfs_in_set(bis_work *w, int start, int s, const int *side, int side_val)
{
  const lb_graph *g = w->g;
  int head = 0, tail = 0;
  w->stamp++;
  w->queue[tail++] = start;
  w->mark[start] = w->stamp;
  w->parent[start] = -1;
  while (head < tail) {
    int r = w->queue[head++];
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
      int q = g->adj[e];
      if (w->mark[q] == w->stamp || w->grp[q] != s) continue;
      if (side && side[q] != side_val) continue;
      w->mark[q] = w->stamp;
      w->parent[q] = r;
      w->queue[tail++] = q;
    }
  }
  return tail;
}

void lb_bisection_free(lb_bisection *b)
{
  free(b->group);
  b->group = NULL;
}

lb_err lb_bisection_build(const lb_graph *g, lb_bisection *b)
{
  int n = g->n;
  memset(b, 0, sizeof *b);
  b->n = n;
  bis_work w = {g, NULL, calloc((size_t)n, sizeof(int)), 0, malloc((size_t)n * sizeof(int)),
                malloc((size_t)n * sizeof(int)), malloc((size_t)n * sizeof(int))};
  int *side = malloc((size_t)n * sizeof(int)), *members = malloc((size_t)n * sizeof(int));
  keyed *tmp = malloc((size_t)n * sizeof *tmp);
  b->group = calloc((size_t)n, sizeof(int));
  lb_err err = LB_OK;
  if (!w.mark || !w.queue || !w.parent || !w.size || !side || !members || !tmp || !b->group) {
    err = lb_error(LB_ERR_MEM, "out of memory building the bisection hierarchy");
    goto done;
  }
  for (int k = 0;; k++) {
    const int *grp = b->group + (size_t)k * n;
    int split_any = 0;
    /* Does any set at level k still hold more than one rank? */
    w.grp = grp;
    for (int r = 0; r < n; r++) side[r] = -1;
    for (int r = 0; r < n && !split_any; r++)
      for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++)
        if (grp[g->adj[e]] == grp[r]) { split_any = 1; break; }
    if (!split_any) break;
    if (k == LB_BISECTION_MAX_LEVELS) {
      err = lb_error(LB_ERR_UNSUPPORTED, "graph '%s' has no near-balanced connected bisection (more than %d levels)", g->spec, LB_BISECTION_MAX_LEVELS);
      goto done;
    }
    int *ng = realloc(b->group, (size_t)(k + 2) * n * sizeof(int));
    if (!ng) { err = lb_error(LB_ERR_MEM, "out of memory building the bisection hierarchy"); goto done; }
    b->group = ng;
    grp = b->group + (size_t)k * n;
    w.grp = grp;
    int *next = b->group + (size_t)(k + 1) * n;
    for (int r = 0; r < n; r++) {
      if (side[r] >= 0) continue;
      int s = grp[r];
      int c = bfs_in_set(&w, r, s, NULL, 0);
      memcpy(members, w.queue, (size_t)c * sizeof(int));
      int half = (c + 1) / 2, ok = c == 1;
      if (!ok && structured_order(g, members, c, tmp)) {
        for (int i = 0; i < c; i++) side[members[i]] = i < half ? 0 : 1;
        ok = bfs_in_set(&w, members[0], s, side, 0) == half && bfs_in_set(&w, members[half], s, side, 1) == c - half;
      }
      if (!ok) {
        bfs_in_set(&w, r, s, NULL, 0);
        memcpy(members, w.queue, (size_t)c * sizeof(int));
        for (int i = 0; i < c; i++) side[members[i]] = i < half ? 0 : 1;
        ok = bfs_in_set(&w, members[half], s, side, 1) == c - half;
      }
      if (!ok) {
        /* The BFS rest is split: cut off the BFS subtree nearest half. */
        bfs_in_set(&w, r, s, NULL, 0);
        for (int i = 0; i < c; i++) w.size[w.queue[i]] = 1;
        for (int i = c - 1; i > 0; i--) w.size[w.parent[w.queue[i]]] += w.size[w.queue[i]];
        int best = w.queue[1];
        for (int i = 2; i < c; i++)
          if (abs(2 * w.size[w.queue[i]] - c) < abs(2 * w.size[best] - c)) best = w.queue[i];
        for (int i = 0; i < c; i++) side[members[i]] = 0;
        for (int i = 0; i < c; i++) {
          int v = w.queue[i];
          if (v == best || (i > 0 && side[w.parent[v]] == 1)) side[v] = 1;
        }
      }
      if (c == 1) side[r] = 0;
      for (int i = 0; i < c; i++) next[members[i]] = 2 * s + side[members[i]];
    }
    b->nlevels = k + 1;
  }
done:
  free(w.mark); free(w.queue); free(w.parent); free(w.size); free(side); free(members); free(tmp);
  if (err) lb_bisection_free(b);
  return err;
}
