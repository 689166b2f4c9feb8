/* Processor graphs: parsing of graph specs and the CSR form every method
 * reads.  Neighbour lists are sorted so that every process, and both
 * backends, visit neighbours in the same order (bit-identical sums). */
#include "balance/balance.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Largest graph accepted: keeps every directed edge index in an int. */
#define LB_GRAPH_MAX_RANKS (1 << 26)

typedef struct { int *u, *v; long long m, cap; } edge_list;

static lb_err edges_add(edge_list *el, int u, int v)
{
  if (el->m == el->cap) {
    long long cap = el->cap ? 2 * el->cap : 1024;
    int *nu = realloc(el->u, (size_t)cap * sizeof *nu);
    if (!nu) return lb_error(LB_ERR_MEM, "out of memory building a graph");
    el->u = nu;
    int *nv = realloc(el->v, (size_t)cap * sizeof *nv);
    if (!nv) return lb_error(LB_ERR_MEM, "out of memory building a graph");
    el->v = nv;
    el->cap = cap;
  }
  el->u[el->m] = u;
  el->v[el->m] = v;
  el->m++;
  return LB_OK;
}

static void edges_free(edge_list *el)
{
  free(el->u);
  free(el->v);
}

/* Parses "A", "AxB" or "AxBxC" (exactly nd positive factors). */
static int parse_dims(const char *s, int nd, char sep, int *dims)
{
  for (int i = 0; i < nd; i++) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || errno || v < 1 || v > LB_GRAPH_MAX_RANKS) return 0;
    dims[i] = (int)v;
    if (i + 1 < nd) {
      if (*end != sep) return 0;
      s = end + 1;
    } else if (*end) {
      return 0;
    }
  }
  return 1;
}

static lb_err grid_edges(const int *d, int nd, int wrap, edge_list *el)
{
  int A = d[0], B = nd > 1 ? d[1] : 1, C = nd > 2 ? d[2] : 1;
  lb_err err;
  for (int z = 0; z < C; z++)
    for (int y = 0; y < B; y++)
      for (int x = 0; x < A; x++) {
        int r = x + A * (y + B * z);
        if (x + 1 < A) { if ((err = edges_add(el, r, r + 1))) return err; }
        else if (wrap && A > 1) { if ((err = edges_add(el, r, r - x))) return err; }
        if (y + 1 < B) { if ((err = edges_add(el, r, r + A))) return err; }
        else if (wrap && B > 1) { if ((err = edges_add(el, r, r - y * A))) return err; }
        if (z + 1 < C) { if ((err = edges_add(el, r, r + A * B))) return err; }
        else if (wrap && C > 1) { if ((err = edges_add(el, r, r - z * A * B))) return err; }
      }
  return LB_OK;
}

static lb_err read_edge_file(const char *path, edge_list *el, int *n)
{
  FILE *f = fopen(path, "r");
  if (!f) return lb_error(LB_ERR_FILE, "graph file '%s': cannot open: %s", path, strerror(errno));
  char line[1024];
  int lineno = 0, maxid = -1;
  lb_err err = LB_OK;
  while (!err && fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *p = line;
    while (isspace((unsigned char)*p)) p++;
    if (!*p) continue;
    long a, b;
    char *end;
    errno = 0;
    a = strtol(p, &end, 10);
    if (end == p || errno) { err = lb_error(LB_ERR_FILE, "graph file '%s' line %d: expected two rank ids", path, lineno); break; }
    p = end;
    b = strtol(p, &end, 10);
    if (end == p || errno) { err = lb_error(LB_ERR_FILE, "graph file '%s' line %d: expected two rank ids", path, lineno); break; }
    while (isspace((unsigned char)*end)) end++;
    if (*end) { err = lb_error(LB_ERR_FILE, "graph file '%s' line %d: trailing text '%s'", path, lineno, end); break; }
    if (a < 0 || b < 0 || a >= LB_GRAPH_MAX_RANKS || b >= LB_GRAPH_MAX_RANKS) {
      err = lb_error(LB_ERR_FILE, "graph file '%s' line %d: rank id out of range", path, lineno);
      break;
    }
    if (a == b) { err = lb_error(LB_ERR_FILE, "graph file '%s' line %d: self loop on rank %ld", path, lineno, a); break; }
    err = edges_add(el, (int)a, (int)b);
    if (a > maxid) maxid = (int)a;
    if (b > maxid) maxid = (int)b;
  }
  fclose(f);
  if (err) return err;
  if (maxid < 0) return lb_error(LB_ERR_FILE, "graph file '%s': no edges", path);
  *n = maxid + 1;
  return LB_OK;
}

lb_err lb_graph_create(const char *spec, lb_graph **g)
{
  *g = NULL;
  if (!spec) return lb_error(LB_ERR_GRAPH, "no graph spec given");
  edge_list el = {0};
  int dims[3] = {0, 0, 0}, n = 0;
  lb_graph_kind kind;
  lb_err err = LB_OK;
  const char *colon = strchr(spec, ':');
  size_t klen = colon ? (size_t)(colon - spec) : strlen(spec);
  const char *arg = colon ? colon + 1 : "";
#define KIND_IS(s) (klen == strlen(s) && strncmp(spec, s, klen) == 0)
  if (KIND_IS("line") || KIND_IS("ring")) {
    kind = KIND_IS("line") ? LB_GRAPH_LINE : LB_GRAPH_RING;
    if (!parse_dims(arg, 1, 'x', dims)) return lb_error(LB_ERR_GRAPH, "graph '%s': expected %.*s:N with N >= 1", spec, (int)klen, spec);
    n = dims[0];
    err = grid_edges(dims, 1, kind == LB_GRAPH_RING && n > 2, &el);
  } else if (KIND_IS("mesh2d")) {
    kind = LB_GRAPH_MESH2D;
    if (!parse_dims(arg, 2, 'x', dims)) return lb_error(LB_ERR_GRAPH, "graph '%s': expected mesh2d:AxB", spec);
    if ((long long)dims[0] * dims[1] > LB_GRAPH_MAX_RANKS) return lb_error(LB_ERR_GRAPH, "graph '%s': too many ranks", spec);
    n = dims[0] * dims[1];
    err = grid_edges(dims, 2, 0, &el);
  } else if (KIND_IS("mesh3d") || KIND_IS("torus3d")) {
    kind = KIND_IS("mesh3d") ? LB_GRAPH_MESH3D : LB_GRAPH_TORUS3D;
    if (!parse_dims(arg, 3, 'x', dims)) return lb_error(LB_ERR_GRAPH, "graph '%s': expected %.*s:AxBxC", spec, (int)klen, spec);
    if ((long long)dims[0] * dims[1] * dims[2] > LB_GRAPH_MAX_RANKS) return lb_error(LB_ERR_GRAPH, "graph '%s': too many ranks", spec);
    n = dims[0] * dims[1] * dims[2];
    err = grid_edges(dims, 3, kind == LB_GRAPH_TORUS3D, &el);
  } else if (KIND_IS("hypercube")) {
    kind = LB_GRAPH_HYPERCUBE;
    if (!parse_dims(arg, 1, 'x', dims) || dims[0] > 26) {
      if (strcmp(arg, "0") != 0) return lb_error(LB_ERR_GRAPH, "graph '%s': expected hypercube:D with 0 <= D <= 26", spec);
      dims[0] = 0;
    }
    n = 1 << dims[0];
    for (int r = 0; r < n && !err; r++)
      for (int k = 0; k < dims[0] && !err; k++)
        if (!(r & (1 << k))) err = edges_add(&el, r, r | (1 << k));
  } else if (KIND_IS("tree")) {
    kind = LB_GRAPH_TREE;
    if (!parse_dims(arg, 2, ':', dims)) return lb_error(LB_ERR_GRAPH, "graph '%s': expected tree:N:K with N, K >= 1", spec);
    n = dims[0];
    for (int r = 1; r < n && !err; r++) err = edges_add(&el, (r - 1) / dims[1], r);
  } else if (KIND_IS("file")) {
    kind = LB_GRAPH_EDGES;
    if (!*arg) return lb_error(LB_ERR_GRAPH, "graph '%s': expected file:PATH", spec);
    err = read_edge_file(arg, &el, &n);
  } else {
    return lb_error(LB_ERR_GRAPH, "unknown graph '%s' (line:N ring:N mesh2d:AxB mesh3d:AxBxC torus3d:AxBxC hypercube:D tree:N:K file:PATH)", spec);
  }
#undef KIND_IS
  if (!err) {
    if (el.m > INT_MAX / 2) err = lb_error(LB_ERR_GRAPH, "graph '%s': too many edges", spec);
    else err = lb_graph_create_edges(n, (int)el.m, el.u, el.v, g);
  }
  edges_free(&el);
  if (err) return err;
  (*g)->kind = kind;
  memcpy((*g)->dims, dims, sizeof dims);
  snprintf((*g)->spec, sizeof (*g)->spec, "%s", spec);
  return LB_OK;
}

typedef struct { int nb, k; } nbr;

static int cmp_pair(const void *a, const void *b)
{
  const int *x = a, *y = b;
  if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

static int cmp_nbr(const void *a, const void *b)
{
  const nbr *x = a, *y = b;
  return (x->nb > y->nb) - (x->nb < y->nb);
}

lb_err lb_graph_create_edges(int n, int m, const int *eu, const int *ev, lb_graph **out)
{
  *out = NULL;
  if (n < 1 || n > LB_GRAPH_MAX_RANKS || m < 0) return lb_error(LB_ERR_GRAPH, "graph with %d ranks and %d edges is out of range", n, m);
  int *pairs = malloc(2 * (size_t)(m ? m : 1) * sizeof *pairs);
  lb_graph *g = calloc(1, sizeof *g);
  if (!pairs || !g) { free(pairs); free(g); return lb_error(LB_ERR_MEM, "out of memory building a graph"); }
  for (int k = 0; k < m; k++) {
    int a = eu[k], b = ev[k];
    if (a < 0 || b < 0 || a >= n || b >= n || a == b) {
      free(pairs); free(g);
      return lb_error(LB_ERR_GRAPH, "edge %d (%d, %d) is not between two distinct ranks of 0..%d", k, a, b, n - 1);
    }
    pairs[2 * k] = a < b ? a : b;
    pairs[2 * k + 1] = a < b ? b : a;
  }
  qsort(pairs, (size_t)m, 2 * sizeof *pairs, cmp_pair);
  int mu = 0;
  for (int k = 0; k < m; k++)
    if (mu == 0 || pairs[2 * k] != pairs[2 * (mu - 1)] || pairs[2 * k + 1] != pairs[2 * (mu - 1) + 1]) {
      pairs[2 * mu] = pairs[2 * k];
      pairs[2 * mu + 1] = pairs[2 * k + 1];
      mu++;
    }
  g->n = n;
  g->m = mu;
  size_t nd = 2 * (size_t)mu + 1;
  g->xadj = calloc((size_t)n + 1, sizeof(int));
  g->adj = malloc(nd * sizeof(int));
  g->rev = malloc(nd * sizeof(int));
  g->eid = malloc(nd * sizeof(int));
  g->owner = malloc(nd * sizeof(int));
  g->eu = malloc(((size_t)mu + 1) * sizeof(int));
  g->ev = malloc(((size_t)mu + 1) * sizeof(int));
  nbr *tmp = malloc(nd * sizeof *tmp);
  int *fill = calloc((size_t)n, sizeof(int));
  if (!g->xadj || !g->adj || !g->rev || !g->eid || !g->owner || !g->eu || !g->ev || !tmp || !fill) {
    free(tmp); free(fill); free(pairs);
    lb_graph_destroy(&g);
    return lb_error(LB_ERR_MEM, "out of memory building a graph");
  }
  for (int k = 0; k < mu; k++) {
    g->eu[k] = pairs[2 * k];
    g->ev[k] = pairs[2 * k + 1];
    g->xadj[g->eu[k] + 1]++;
    g->xadj[g->ev[k] + 1]++;
  }
  for (int r = 0; r < n; r++) g->xadj[r + 1] += g->xadj[r];
  for (int k = 0; k < mu; k++) {
    int a = g->eu[k], b = g->ev[k];
    tmp[g->xadj[a] + fill[a]++] = (nbr){b, k};
    tmp[g->xadj[b] + fill[b]++] = (nbr){a, k};
  }
  g->max_degree = 0;
  for (int r = 0; r < n; r++) {
    int lo = g->xadj[r], deg = g->xadj[r + 1] - lo;
    qsort(tmp + lo, (size_t)deg, sizeof *tmp, cmp_nbr);
    if (deg > g->max_degree) g->max_degree = deg;
    for (int e = lo; e < lo + deg; e++) {
      g->adj[e] = tmp[e].nb;
      g->eid[e] = tmp[e].k;
      g->owner[e] = r;
    }
  }
  /* The two directions of edge k, found through its id. */
  int *dir = malloc(2 * ((size_t)mu + 1) * sizeof(int));
  if (!dir) {
    free(tmp); free(fill); free(pairs);
    lb_graph_destroy(&g);
    return lb_error(LB_ERR_MEM, "out of memory building a graph");
  }
  for (int k = 0; k < mu; k++) dir[2 * k] = -1;
  for (int e = 0; e < 2 * mu; e++) {
    int k = g->eid[e];
    if (dir[2 * k] < 0) dir[2 * k] = e;
    else dir[2 * k + 1] = e;
  }
  for (int k = 0; k < mu; k++) {
    g->rev[dir[2 * k]] = dir[2 * k + 1];
    g->rev[dir[2 * k + 1]] = dir[2 * k];
  }
  free(dir);
  free(tmp);
  free(fill);
  free(pairs);
  g->kind = LB_GRAPH_EDGES;
  snprintf(g->spec, sizeof g->spec, "edges:%d", n);
  *out = g;
  return LB_OK;
}

void lb_graph_destroy(lb_graph **g)
{
  if (!g || !*g) return;
  free((*g)->xadj); free((*g)->adj); free((*g)->rev); free((*g)->eid);
  free((*g)->owner); free((*g)->eu); free((*g)->ev);
  free(*g);
  *g = NULL;
}

double lb_graph_bytes(const lb_graph *g)
{
  const double nd = 2.0 * g->m + 1.0;
  return sizeof *g + sizeof(int) * ((g->n + 1.0) + 4.0 * nd + 2.0 * (g->m + 1.0));
}

int lb_graph_grid_dims(const lb_graph *g)
{
  switch (g->kind) {
  case LB_GRAPH_LINE: case LB_GRAPH_RING: return 1;
  case LB_GRAPH_MESH2D: return 2;
  case LB_GRAPH_MESH3D: case LB_GRAPH_TORUS3D: return 3;
  default: return 0;
  }
}

int lb_graph_connected(const lb_graph *g)
{
  lb_tree t;
  if (lb_tree_bfs(g, 0, &t)) return 0;
  int ok = 1;
  for (int r = 0; r < g->n; r++)
    if (t.depth[r] < 0) ok = 0;
  lb_tree_free(&t);
  return ok;
}

int lb_graph_edge(const lb_graph *g, int u, int v)
{
  if (u < 0 || u >= g->n) return -1;
  int lo = g->xadj[u], hi = g->xadj[u + 1];
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (g->adj[mid] == v) return mid;
    if (g->adj[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

lb_err lb_graph_edge_colouring(const lb_graph *g, int *colour, int *ncolours)
{
  /* Greedy in edge order: on a line this is exactly the odd-even pairing
   * of Horton 1993 Table 3, and it needs at most 2 max_degree - 1 colours. */
  int ncap = 2 * g->max_degree + 1;
  unsigned char *used = calloc((size_t)ncap, 1);
  if (!used) return lb_error(LB_ERR_MEM, "out of memory colouring edges");
  for (int k = 0; k < g->m; k++) colour[k] = -1;
  int nc = 0;
  for (int k = 0; k < g->m; k++) {
    const int ends[2] = {g->eu[k], g->ev[k]};
    for (int i = 0; i < 2; i++)
      for (int e = g->xadj[ends[i]]; e < g->xadj[ends[i] + 1]; e++)
        if (colour[g->eid[e]] >= 0) used[colour[g->eid[e]]] = 1;
    int c = 0;
    while (used[c]) c++;
    colour[k] = c;
    if (c + 1 > nc) nc = c + 1;
    for (int i = 0; i < 2; i++)
      for (int e = g->xadj[ends[i]]; e < g->xadj[ends[i] + 1]; e++)
        if (colour[g->eid[e]] >= 0) used[colour[g->eid[e]]] = 0;
  }
  free(used);
  *ncolours = nc;
  return LB_OK;
}
