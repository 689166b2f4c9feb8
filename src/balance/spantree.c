/* Breadth-first spanning trees: the tree method runs its two passes over
 * one, and the bisection hierarchy uses BFS order to find connected halves. */
#include "balance/balance.h"

#include <stdlib.h>

void lb_tree_free(lb_tree *t)
{
  free(t->parent); free(t->up); free(t->depth); free(t->order);
  free(t->size); free(t->xchild); free(t->child);
  t->parent = t->up = t->depth = t->order = t->size = t->xchild = t->child = NULL;
}

lb_err lb_tree_bfs(const lb_graph *g, int root, lb_tree *t)
{
  int n = g->n;
  if (root < 0 || root >= n) return lb_error(LB_ERR_ARG, "tree root %d is not a rank of the graph", root);
  t->n = n;
  t->root = root;
  t->parent = malloc((size_t)n * sizeof(int));
  t->up = malloc((size_t)n * sizeof(int));
  t->depth = malloc((size_t)n * sizeof(int));
  t->order = malloc((size_t)n * sizeof(int));
  t->size = malloc((size_t)n * sizeof(int));
  t->xchild = calloc((size_t)n + 1, sizeof(int));
  t->child = malloc((size_t)n * sizeof(int));
  if (!t->parent || !t->up || !t->depth || !t->order || !t->size || !t->xchild || !t->child) {
    lb_tree_free(t);
    return lb_error(LB_ERR_MEM, "out of memory building a spanning tree");
  }
  for (int r = 0; r < n; r++) { t->parent[r] = -1; t->up[r] = -1; t->depth[r] = -1; t->size[r] = 0; }
  int head = 0, tail = 0;
  t->order[tail++] = root;
  t->depth[root] = 0;
  t->height = 0;
  while (head < tail) {
    int r = t->order[head++];
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
      int q = g->adj[e];
      if (t->depth[q] >= 0) continue;
      t->depth[q] = t->depth[r] + 1;
      if (t->depth[q] > t->height) t->height = t->depth[q];
      t->parent[q] = r;
      t->up[q] = g->rev[e];
      t->order[tail++] = q;
    }
  }
  /* Unreached ranks are left out of order[]; callers test depth[] < 0. */
  for (int i = tail; i < n; i++) t->order[i] = -1;
  for (int i = tail - 1; i >= 0; i--) {
    int r = t->order[i];
    t->size[r] += 1;
    if (t->parent[r] >= 0) t->size[t->parent[r]] += t->size[r];
  }
  for (int i = 1; i < tail; i++) t->xchild[t->parent[t->order[i]] + 1]++;
  for (int r = 0; r < n; r++) t->xchild[r + 1] += t->xchild[r];
  int *fill = calloc((size_t)n, sizeof(int));
  if (!fill) { lb_tree_free(t); return lb_error(LB_ERR_MEM, "out of memory building a spanning tree"); }
  for (int i = 1; i < tail; i++) {
    int q = t->order[i], p = t->parent[q];
    t->child[t->xchild[p] + fill[p]++] = q;
  }
  free(fill);
  return LB_OK;
}

/* The per-source trees of Melhem et al. 1991.  On these graphs the subtree below a
 * rank depends only on the link the load came in by, so children and sizes
 * follow from (r, from) alone; kid and size may be NULL to ask whether the
 * graph has such trees. */
int lb_source_tree_children(const lb_graph *g, int r, int from, int *kid, int *size)
{
  int nk = 0;
#define ADD(k, s) do { if (kid) { kid[nk] = (k); size[nk] = (s); } nk++; } while (0)
  switch (g->kind) {
  case LB_GRAPH_LINE: {
    int n = g->n;
    if (r > 0 && from != r - 1 && (from < 0 || from == r + 1)) { ADD(r - 1, r); }
    if (r + 1 < n && from != r + 1 && (from < 0 || from == r - 1)) { ADD(r + 1, n - 1 - r); }
    break;
  }
  case LB_GRAPH_MESH2D: {
    int A = g->dims[0], B = g->dims[1], x = r % A, y = r / A;
    int in_row = from < 0 || from / A == y;
    if (in_row) {
      if (x > 0 && from != r - 1) { ADD(r - 1, x * B); }
      if (x + 1 < A && from != r + 1) { ADD(r + 1, (A - 1 - x) * B); }
    }
    if (y > 0 && (in_row || from == r + A)) { ADD(r - A, y); }
    if (y + 1 < B && (in_row || from == r - A)) { ADD(r + A, B - 1 - y); }
    break;
  }
  case LB_GRAPH_HYPERCUBE: {
    int D = g->dims[0], k = D;
    if (from >= 0)
      for (k = 0; k < D && (r ^ from) != (1 << k); k++) {}
    for (int u = 0; u < k; u++) { ADD(r ^ (1 << u), 1 << u); }
    break;
  }
  default:
    return -1;
  }
#undef ADD
  return nk;
}
