/* The subdomain graph of lbbench's task mode on a trace with -mesh
 * (tracebench.h): a 4x4 grid of cells split into rows, half rows, and
 * parts with an empty one gives the graph of the parts that share a face
 * (a line, a 2x4 mesh, an isolated part), and the mean degree and
 * diameter of graphs whose values are known: line, ring, mesh, hypercube,
 * a disconnected graph, and a line too long for every source (a lower
 * bound that here is exact, since vertex 0 is a source). */
#include "bench/tracebench.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

/* Degree and diameter of spec's graph against the known values. */
static void known(const char *spec, double degree, int diameter, int exact)
{
  lb_graph *g = NULL;
  double d;
  int diam, ex, conn;
  if (!CHECK_MSG(lb_graph_create(spec, &g) == LB_OK, "%s", lb_errmsg())) return;
  CHECK(lb_graph_degree_diameter(g, &d, &diam, &ex, &conn) == LB_OK);
  CHECK_MSG(fabs(d - degree) < 1e-12 && diam == diameter && ex == exact && conn, "%s: degree %g diameter %d exact %d connected %d", spec, d, diam, ex,
            conn);
  lb_graph_destroy(&g);
}

/* The 4x4 grid's parts by counts[0..P): the subdomain graph's edges,
 * diameter and connectedness. */
static void split(int P, const int64_t *counts, int edges, int diameter, int connected)
{
  lb_load_trace t;
  lb_tracetasks tt;
  lb_task_graph tg;
  lb_graph *g = NULL;
  double w[16], deg;
  float x[32];
  int64_t *xadj = malloc(17 * sizeof *xadj);
  int *adj = malloc(64 * sizeof *adj), n = 0, diam, exact, conn;
  memset(&t, 0, sizeof t);
  for (int i = 0; i < 16; i++) {
    const int r = i / 4, c = i % 4;
    w[i] = 1 + i % 3;
    x[2 * i] = (float)c;
    x[2 * i + 1] = (float)r;
    xadj[i] = n;
    if (r > 0) adj[n++] = i - 4;
    if (c > 0) adj[n++] = i - 1;
    if (c < 3) adj[n++] = i + 1;
    if (r < 3) adj[n++] = i + 4;
  }
  xadj[16] = n;
  t.dim = 2;
  t.ncells = 16;
  t.w = w;
  t.x = x;
  CHECK_MSG(lb_tracetasks_create_split(P, &t, counts, xadj, adj, 4, &tt, &tg) == LB_OK, "%s", lb_errmsg());
  CHECK(tg.ntasks == 16 && tg.nranks == P && tg.max_nbr == 4);
  /* every task's home is the part that holds it, empty parts skipped */
  for (int q = 0, id = 0; q < P; q++)
    for (int k = 0; k < counts[q]; k++, id++) {
      int index;
      CHECK_MSG(tg.home(tg.ctx, id, &index) == q && index == k, "task %d: home %d index %d, want %d %d", id, tg.home(tg.ctx, id, &index), index, q, k);
    }
  CHECK_MSG(lb_tracetasks_subdomains(&tt, "subdomains:test", &g) == LB_OK, "%s", lb_errmsg());
  CHECK(g->n == P && g->kind == LB_GRAPH_EDGES && !strcmp(g->spec, "subdomains:test"));
  CHECK(lb_graph_degree_diameter(g, &deg, &diam, &exact, &conn) == LB_OK);
  CHECK_MSG(g->m == edges && diam == diameter && conn == connected && exact, "%d parts: %d edges, diameter %d, connected %d; want %d %d %d", P, g->m,
            diam, conn, edges, diameter, connected);
  CHECK(fabs(deg - 2.0 * edges / P) < 1e-12);
  lb_graph_destroy(&g);
  lb_tracetasks_free(&tt);
}

int main(void)
{
  known("line:10", 1.8, 9, 1);
  known("ring:9", 2.0, 4, 1);
  known("mesh2d:4x3", 2.0 * 17 / 12, 5, 1);
  known("hypercube:4", 4.0, 4, 1);
  known("line:5000", 2.0 * 4999 / 5000, 4999, 0);
  {
    const int eu[] = {0, 2}, ev[] = {1, 3};
    lb_graph *g = NULL;
    double d;
    int diam, ex, conn;
    CHECK(lb_graph_create_edges(4, 2, eu, ev, &g) == LB_OK);
    CHECK(lb_graph_degree_diameter(g, &d, &diam, &ex, &conn) == LB_OK);
    CHECK(d == 1.0 && diam == 1 && ex && !conn);
    lb_graph_destroy(&g);
  }
  const int64_t rows[] = {4, 4, 4, 4}, halves[] = {2, 2, 2, 2, 2, 2, 2, 2}, gap[] = {8, 0, 8}, one[] = {16};
  split(4, rows, 3, 3, 1);   /* a line of rows */
  split(8, halves, 10, 4, 1); /* half rows: a 2x4 mesh */
  split(3, gap, 1, 1, 0);    /* the empty part shares no face */
  split(1, one, 0, 0, 1);
  if (!check_failures) printf("subdomain graph check passed\n");
  return check_failures != 0;
}
