/* Dimension exchange (Xu, Monien, Lueling, Lau; Lieber et al. 2016 DE).  The edges
 * are coloured so that no two edges of a colour meet; one superstep
 * exchanges loads over the edges of one colour, and each pair moves
 * alpha (l_i - l_j) at once, so the next colour already sees the new loads.
 * One iteration is a sweep over all colours.  Meshes, tori, lines and rings
 * are coloured by dimension and parity (the even edges (2i, 2i+1), the odd
 * edges (2i+1, 2i+2) and, on a torus of odd side, the wrap-around edge),
 * with alpha = 1/(1 + sin(pi / k_max)), k_max the longest side (Lieber et al. 2016);
 * hypercubes by dimension with alpha = 1/2; any other graph gets the
 * library's greedy proper colouring and alpha = 1/2. */
#include "balance/balance.h"

#include <math.h>
#include <stdlib.h>

static const lb_option dimension_exchange_options[] = {
  {"alpha", 0.0, "exchange parameter in (0, 1) (0: 1/(1 + sin(pi/k_max)) on meshes, 1/2 otherwise)"},
};

typedef struct {
  int *colour, ncolours;
  double alpha;
} exchange_state;

static void exchange_destroy(void *p)
{
  exchange_state *s = p;
  if (!s) return;
  free(s->colour);
  free(s);
}

/* Dimension-and-parity colouring of a grid graph (1 to 3 dimensions);
 * returns the largest side. */
static int grid_colouring(const lb_graph *g, int nd, int *colour)
{
  int k[3] = {1, 1, 1}, kmax = 1;
  for (int i = 0; i < nd; i++) {
    k[i] = g->dims[i];
    if (k[i] > kmax) kmax = k[i];
  }
  for (int e = 0; e < g->m; e++) {
    int u = g->eu[e], v = g->ev[e];
    int cu[3] = {u % k[0], (u / k[0]) % k[1], u / (k[0] * k[1])};
    int cv[3] = {v % k[0], (v / k[0]) % k[1], v / (k[0] * k[1])};
    int d = 0;
    while (cu[d] == cv[d]) d++;
    int lo = cu[d] < cv[d] ? cu[d] : cv[d], hi = cu[d] + cv[d] - lo;
    int wrap = hi - lo > 1;
    colour[e] = 3 * d + (wrap ? (k[d] % 2 ? 2 : 1) : lo % 2);
  }
  return kmax;
}

/* Renumbers the used colours 0..C-1 in increasing order. */
static int compact(int m, int *colour, int maxc)
{
  int map[3 * 26];
  for (int c = 0; c < maxc; c++) map[c] = -1;
  for (int e = 0; e < m; e++) map[colour[e]] = 0;
  int nc = 0;
  for (int c = 0; c < maxc; c++)
    if (map[c] == 0) map[c] = nc++;
  for (int e = 0; e < m; e++) colour[e] = map[colour[e]];
  return nc;
}

static lb_err exchange_setup(lb_run *run, void **state)
{
  const lb_graph *g = lb_run_graph(run);
  double alpha = lb_run_params(run)->opt[0];
  if (!(alpha >= 0 && alpha < 1)) return lb_error(LB_ERR_ARG, "-lb_alpha %g must lie in (0, 1) (0: default)", alpha);
  exchange_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  s->colour = malloc(((size_t)g->m + 1) * sizeof *s->colour);
  if (!s->colour) return lb_error(LB_ERR_MEM, "out of memory for %d edges", g->m);
  double def = 0.5;
  int nd = lb_graph_grid_dims(g);
  if (nd > 0) {
    int kmax = grid_colouring(g, nd, s->colour);
    s->ncolours = compact(g->m, s->colour, 3 * nd);
    if (kmax > 1) def = 1.0 / (1.0 + sin(3.14159265358979323846 / kmax));
  } else if (g->kind == LB_GRAPH_HYPERCUBE) {
    for (int e = 0; e < g->m; e++) {
      int bit = g->eu[e] ^ g->ev[e], d = 0;
      while (bit >>= 1) d++;
      s->colour[e] = d;
    }
    s->ncolours = g->dims[0];
  } else {
    lb_err err = lb_graph_edge_colouring(g, s->colour, &s->ncolours);
    if (err) return err;
  }
  s->alpha = alpha > 0 ? alpha : def;
  return lb_run_channels(run, 1, 0);
}

static lb_err exchange_step(lb_run *run, void *state, int lo, int hi)
{
  exchange_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run), *flow = lb_run_flow(run);
  int step = lb_run_step(run), C = s->ncolours;
  if (C == 0) {
    lb_run_end_iteration(run, 0);
    lb_run_stop(run, LB_STOP_CONVERGED);
    return LB_OK;
  }
  if (step > 0) {
    int c = (step - 1) % C;
    for (int r = lo; r < hi; r++)
      for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
        const double *lw;
        if (s->colour[g->eid[e]] != c || lb_msg_recv(run, e, &lw) != 1) continue;
        double f = s->alpha * (load[r] - lw[0]);
        load[r] -= f;
        flow[e] += f;
      }
    if (c == C - 1) lb_run_end_iteration(run, 1);
  }
  int c = step % C;
  for (int r = lo; r < hi; r++)
    for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++)
      if (s->colour[g->eid[e]] == c) lb_msg_post(run, e, 1)[0] = load[r];
  return LB_OK;
}

const lb_method lb_method_dimension_exchange = {
  .name = "dimension-exchange",
  .summary = "dimension exchange: pairwise exchange per edge colour, loads updated after each colour",
  .flags = LB_CONNECTED | LB_LOCAL,
  .options = dimension_exchange_options,
  .noptions = 1,
  .setup = exchange_setup,
  .step = exchange_step,
  .destroy = exchange_destroy,
};
