/* lbbench's replay of a load trace (tracebench.h).  Every process reads
 * the trace and builds the same curve or task placement, so errors are
 * found identically everywhere. */
#define _POSIX_C_SOURCE 200809L /* sysconf */
#include "bench/tracebench.h"
#include "balance/lbchain.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lb_trace_is_scenario(const char *spec) { return strncmp(spec, "trace:", 6) == 0; }

/* The file and the cycle (-1: the last) that spec "trace:FILE[:CYCLE]" names. */
static lb_err parse_spec(const char *spec, char *path, size_t len, int *cycle)
{
  const char *rest = spec + 6, *colon = strrchr(rest, ':');
  *cycle = -1;
  snprintf(path, len, "%s", rest);
  if (colon && colon[1]) {
    /* a last ":DIGITS" is the cycle; any other colon belongs to the path */
    const char *c = colon + 1;
    while (isdigit((unsigned char)*c)) c++;
    if (!*c) {
      errno = 0;
      const long v = strtol(colon + 1, NULL, 10);
      if (errno || v > INT_MAX) return lb_error(LB_ERR_ARG, "-scenario %s: cycle out of range", spec);
      *cycle = (int)v;
      path[colon - rest] = '\0';
    }
  }
  if (!path[0]) return lb_error(LB_ERR_ARG, "-scenario %s: expected trace:FILE[:CYCLE]", spec);
  return LB_OK;
}

lb_err lb_trace_scenario_file(const char *spec, char *path, size_t len)
{
  int cycle;
  return parse_spec(spec, path, len, &cycle);
}

static const char *const split_names[] = {"carry", "app", "even"};

const char *lb_trace_split_name(lb_trace_split split) { return split >= 0 && split < 3 ? split_names[split] : "unknown"; }

/* Refine a record read from path rp->refine times, its memory estimated
 * first: a refinement beyond this machine's memory is refused before any
 * allocation, naming the option. */
static lb_err refine_record(const char *path, const lb_trace_replay *rp, lb_load_trace *t)
{
  if (!rp->refine) return LB_OK;
  if (t->version < 2)
    return lb_error(LB_ERR_ARG, "-refine %d: trace '%s' is format version %d, which records no cell positions (record it again)", rp->refine, path,
                    t->version);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const double have = pages > 0 && page > 0 ? (double)pages * (double)page : HUGE_VAL;
  const double need = rp->refine > 20 ? HUGE_VAL : (double)lb_trace_refine_bytes(t, rp->refine);
  if (need > have)
    return lb_error(LB_ERR_ARG, "-refine %d: %.3g cells of trace '%s' cycle %d need about %.3g GB, more than this machine's %.3g GB", rp->refine,
                    (double)t->ncells * ldexp(1.0, t->dim * (rp->refine > 20 ? 20 : rp->refine)), path, t->cycle, need / 1e9, have / 1e9);
  return lb_trace_refine(t, rp->refine);
}

/* carry places cuts by the cells' positions, which version 1 lacks. */
static lb_err carry_positions(const char *path, const lb_trace_replay *rp, const lb_load_trace *t)
{
  if (rp->split != LB_TRACE_SPLIT_CARRY || t->version >= 2) return LB_OK;
  return lb_error(LB_ERR_ARG, "-trace_split carry: trace '%s' is format version %d, which records no cell positions: give -trace_split app or even", path,
                  t->version);
}

/* What a replay need not refine: a cycle's load types and phase weights,
 * and with centres its centres (refined, 9 + 8 K bytes a cell in 2D and
 * 13 + 8 K in 3D, K phases, beside 21 and 29 for what stays). */
static void drop_extras(lb_load_trace *t, int centres)
{
  free(t->type);
  free(t->pw);
  t->type = NULL;
  t->pw = NULL;
  if (centres) {
    free(t->x);
    t->x = NULL;
  }
}

lb_err lb_trace_open_scenario(const char *spec, const lb_trace_replay *rp, lb_load_trace *t, lb_load_trace *prev)
{
  char path[4096];
  int cycle, ncycles = 0, *cycles = NULL;
  memset(t, 0, sizeof *t);
  if (prev) memset(prev, 0, sizeof *prev);
  if (rp->R < 1) return lb_error(LB_ERR_ARG, "-replicate %d: must be at least 1", rp->R);
  if (rp->refine < 0) return lb_error(LB_ERR_ARG, "-refine %d: must not be negative", rp->refine);
  lb_err err = parse_spec(spec, path, sizeof path, &cycle);
  if (!err) err = lb_trace_read(path, cycle, t);
  if (!err && rp->mesh && t->version < 2)
    err = lb_error(LB_ERR_ARG, "-mesh %s: trace '%s' is format version %d, which records no cell positions to find the cells' neighbours (record it again)",
                   rp->mesh, path, t->version);
  if (!err && prev) err = carry_positions(path, rp, t);
  if (!err && rp->lean) drop_extras(t, rp->lean == 2);
  if (!err) err = refine_record(path, rp, t);
  if (!err && prev && rp->split == LB_TRACE_SPLIT_CARRY) {
    /* the record before this cycle's, in file order */
    err = lb_trace_cycles(path, &ncycles, &cycles);
    for (int i = 1; !err && i < ncycles; i++)
      if (cycles[i] == t->cycle) {
        if (!(err = lb_trace_read(path, cycles[i - 1], prev))) {
          drop_extras(prev, 1);
          err = refine_record(path, rp, prev);
        }
        break;
      }
    free(cycles);
  }
  if (err) {
    lb_trace_free(t);
    if (prev) lb_trace_free(prev);
  }
  return err;
}

/* Whether cell i of t lies before position (tree, z) on the curve of its copy. */
static int before(const lb_load_trace *t, int64_t i, int32_t tree, uint64_t z)
{
  return t->tree[i] < tree || (t->tree[i] == tree && lb_trace_morton(t->dim, t->pos + i * t->dim) < z);
}

/* carry: prev tiled R times cut by sfc into P parts, each cut moved to the
 * first cell of t (tiled alike) at or after the cut cell's position. */
static lb_err carry_split(const lb_load_trace *t, const lb_load_trace *prev, int R, int P, int64_t *counts)
{
  const int64_t Np = prev->ncells, N = t->ncells, total = (int64_t)R * Np;
  lb_curve_result cut;
  if (P > total)
    return lb_error(LB_ERR_ARG, "-trace_split carry: %d ranks for the %lld cells (x %d copies) of cycle %d, which it carries from", P, (long long)Np, R,
                    prev->cycle);
  double *wp = malloc((size_t)total * sizeof *wp);
  if (!wp) return lb_error(LB_ERR_MEM, "-trace_split carry: out of memory for %lld cells", (long long)total);
  for (int c = 0; c < R; c++) memcpy(wp + (size_t)c * Np, prev->w, (size_t)Np * sizeof *wp);
  lb_err err = lb_curve_sfc(MPI_COMM_SELF, total, wp, P, &cut);
  free(wp);
  if (err) return err;
  int64_t at = 0;
  for (int q = 1; q <= P; q++) {
    int64_t start = (int64_t)R * N;
    if (q < P) {
      const int64_t k = cut.cuts[q], copy = k / Np, j = k % Np;
      /* binary search in the copy for the first cell not before the cut */
      int64_t lo = 0, hi = N;
      const uint64_t z = lb_trace_morton(prev->dim, prev->pos + j * prev->dim);
      if (k < total)
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo) / 2;
          if (before(t, mid, prev->tree[j], z)) lo = mid + 1;
          else hi = mid;
        }
      start = k < total ? copy * N + lo : start;
    }
    counts[q - 1] = start - at;
    at = start;
  }
  lb_curve_result_free(&cut);
  return LB_OK;
}

lb_err lb_trace_curve(const lb_load_trace *t, const lb_load_trace *prev, const lb_trace_replay *rp, int P, int64_t *n, double **w, int64_t *counts)
{
  const int Pt = t->nranks, R = rp->R;
  const int64_t N = t->ncells, total = (int64_t)R * N, parts = (int64_t)R * Pt;
  *w = NULL;
  *n = total;
  if (P > total)
    return lb_error(LB_ERR_ARG, "trace cycle %d: %d ranks for its %lld cells (x %d copies): give at most one rank per cell", t->cycle, P,
                    (long long)N, R);
  *w = malloc((size_t)total * sizeof **w);
  if (!*w) return lb_error(LB_ERR_MEM, "trace cycle %d: out of memory for %lld cells (x %d copies)", t->cycle, (long long)N, R);
  for (int c = 0; c < R; c++) memcpy(*w + (size_t)c * N, t->w, (size_t)N * sizeof **w);
  if (rp->split == LB_TRACE_SPLIT_EVEN) {
    for (int q = 0; q < P; q++) counts[q] = total * (q + 1) / P - total * q / P;
    return LB_OK;
  }
  if (rp->split == LB_TRACE_SPLIT_CARRY && prev && prev->ncells) {
    lb_err err = carry_split(t, prev, R, P, counts);
    if (err) {
      free(*w);
      *w = NULL;
    }
    return err;
  }
  /* the app's split, tiled: part k of R Pt starts at S(k); P parts start
   * at S at the fractions q R Pt / P, between two of them in proportion */
  int64_t prev_start = 0;
  for (int q = 1; q <= P; q++) {
    const int64_t num = (int64_t)q * parts, k = num / P, rem = num % P;
    int64_t start = total;
    if (k < parts) {
      const int64_t s0 = (k / Pt) * N + t->first[k % Pt], s1 = k + 1 < parts ? ((k + 1) / Pt) * N + t->first[(k + 1) % Pt] : total;
      start = s0 + (s1 - s0) * rem / P;
    }
    counts[q - 1] = start - prev_start;
    prev_start = start;
  }
  return LB_OK;
}

/* A task weighs its cell's weight in whole units of 1/LB_CHAIN_UNITS of
 * the mean cell weight (at least one), as chain mode gives them to the
 * methods that move whole units. */
static void task_units(const lb_load_trace *t, double *w)
{
  double sum = 0;
  for (int64_t i = 0; i < t->ncells; i++) sum += t->w[i];
  const double unit = sum > 0 ? sum / ((double)t->ncells * LB_CHAIN_UNITS) : 1.0;
  for (int64_t i = 0; i < t->ncells; i++) w[i] = fmax(1.0, round(t->w[i] / unit));
}

static int trace_neighbours(const void *ctx, int id, int *nbr)
{
  const lb_tracetasks *tt = ctx;
  int k = 0;
  if (id > 0) nbr[k++] = id - 1;
  if (id + 1 < tt->ntasks) nbr[k++] = id + 1;
  return k;
}

static int trace_home(const void *ctx, int id, int *index)
{
  const lb_tracetasks *tt = ctx;
  *index = tt->index[id];
  return tt->home[id];
}

/* Centre of task id: its cell's, shifted to its copy's tile. */
static void task_centre(const lb_tracetasks *tt, int id, double x[3])
{
  const int64_t N = tt->t->ncells, i = id % N;
  int c = (int)(id / N);
  for (int d = 0; d < 3; d++) {
    x[d] = d < tt->dim ? tt->t->x[i * tt->dim + d] : 0.0;
    if (d < tt->nd) {
      x[d] += (c % tt->copies[d]) * tt->ext[d];
      c /= tt->copies[d];
    }
  }
}

static lb_err trace_initial(const void *ctx, int r, lb_task_list *list)
{
  const lb_tracetasks *tt = ctx;
  for (int j = tt->start[r]; j < tt->start[r + 1]; j++) {
    const int id = tt->order[j];
    double x[3];
    if (!list->no_x) task_centre(tt, id, x);
    lb_err err = lb_task_list_add(list, id, tt->w[id % tt->t->ncells], x);
    if (err) return err;
  }
  return LB_OK;
}

/* R copies as a grid of copies[0] x ... (nd factors, as equal as R allows). */
static void tile(int R, int nd, int *copies)
{
  for (int d = 0; d < 3; d++) copies[d] = 1;
  for (int d = 0; d < nd; d++) {
    int best = 1;
    const double want = pow(R, 1.0 / (nd - d));
    for (int f = 1; f <= R && f <= want + 1e-9; f++)
      if (R % f == 0) best = f;
    copies[d] = d == nd - 1 ? R : best;
    R /= copies[d];
  }
}

lb_err lb_tracetasks_create(const lb_graph *g, const lb_load_trace *t, int R, lb_tracetasks *tt, lb_task_graph *tg)
{
  const int nd = g->kind == LB_GRAPH_MESH2D ? 2 : g->kind == LB_GRAPH_MESH3D ? 3 : 0;
  const int64_t nt = (int64_t)R * t->ncells;
  memset(tt, 0, sizeof *tt);
  if (!nd) return lb_error(LB_ERR_GRAPH, "-tasks trace places the cells on a mesh of ranks: give -graph mesh2d:AxB or mesh3d:AxBxC, not '%s'", g->spec);
  if (nd > t->dim) return lb_error(LB_ERR_GRAPH, "-tasks trace: a %dD trace goes on mesh2d ranks, not '%s'", t->dim, g->spec);
  if (nt > INT_MAX) return lb_error(LB_ERR_ARG, "-tasks trace: %lld tasks (x %d copies) exceed the task ids", (long long)t->ncells, R);
  if (g->n > nt)
    return lb_error(LB_ERR_ARG, "trace cycle %d: %d ranks for its %lld cells (x %d copies): give at most one rank per cell", t->cycle, g->n,
                    (long long)t->ncells, R);
  tt->t = t;
  tt->ntasks = (int)nt;
  tt->nranks = g->n;
  tt->nd = nd;
  tt->dim = t->dim;
  tile(R, nd, tt->copies);
  for (int d = 0; d < nd; d++) {
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    for (int64_t i = 0; i < t->ncells; i++) {
      lo = fmin(lo, t->x[i * t->dim + d]);
      hi = fmax(hi, t->x[i * t->dim + d]);
    }
    tt->lo[d] = lo;
    /* a tile as wide as the cells' centres span and one cell's spacing
     * more, so neighbouring copies do not overlap */
    tt->ext[d] = hi > lo ? (hi - lo) * (1 + 1.0 / t->ncells) : 1.0;
  }
  tt->w = malloc((size_t)t->ncells * sizeof *tt->w);
  tt->home = malloc((size_t)nt * sizeof *tt->home);
  tt->index = malloc((size_t)nt * sizeof *tt->index);
  tt->order = malloc((size_t)nt * sizeof *tt->order);
  tt->start = calloc((size_t)g->n + 1, sizeof *tt->start);
  if (!tt->w || !tt->home || !tt->index || !tt->order || !tt->start) {
    lb_tracetasks_free(tt);
    return lb_error(LB_ERR_MEM, "-tasks trace: out of memory for %lld tasks", (long long)nt);
  }
  task_units(t, tt->w);
  for (int id = 0; id < tt->ntasks; id++) {
    double x[3];
    int r = 0, stride = 1;
    task_centre(tt, id, x);
    for (int d = 0; d < nd; d++) {
      const int Pd = g->dims[d];
      int k = (int)floor((x[d] - tt->lo[d]) / (tt->copies[d] * tt->ext[d]) * Pd);
      k = k < 0 ? 0 : k >= Pd ? Pd - 1 : k;
      r += k * stride;
      stride *= Pd;
    }
    tt->home[id] = r;
    tt->index[id] = tt->start[r + 1]++;
  }
  for (int r = 0; r < g->n; r++) tt->start[r + 1] += tt->start[r];
  for (int id = 0; id < tt->ntasks; id++) tt->order[tt->start[tt->home[id]] + tt->index[id]] = id;
  *tg = (lb_task_graph){tt->ntasks, g->n, 2, trace_neighbours, trace_home, trace_initial, tt};
  return LB_OK;
}

/* -mesh: the cells' face neighbours. */
static int split_neighbours(const void *ctx, int id, int *nbr)
{
  const lb_tracetasks *tt = ctx;
  const int64_t a = tt->xadj[id], b = tt->xadj[id + 1];
  for (int64_t e = a; e < b; e++) nbr[e - a] = tt->adj[e];
  return (int)(b - a);
}

/* -mesh: the part of the start split that holds cell id (the last part
 * starting at or before it, so empty parts are skipped). */
static int split_home(const void *ctx, int id, int *index)
{
  const lb_tracetasks *tt = ctx;
  const int r = lb_curve_part_of(tt->nranks, tt->first, id);
  *index = (int)(id - tt->first[r]);
  return r;
}

static lb_err split_initial(const void *ctx, int r, lb_task_list *list)
{
  const lb_tracetasks *tt = ctx;
  for (int64_t i = tt->first[r]; i < tt->first[r + 1]; i++) {
    double x[3] = {0, 0, 0};
    for (int d = 0; d < tt->dim && !list->no_x; d++) x[d] = tt->t->x[i * tt->dim + d];
    lb_err err = lb_task_list_add(list, (int)i, tt->w[i], x);
    if (err) return err;
  }
  return LB_OK;
}

lb_err lb_tracetasks_create_split(int P, const lb_load_trace *t, const int64_t *counts, int64_t *xadj, int *adj, int maxdeg, lb_tracetasks *tt,
                                  lb_task_graph *tg)
{
  memset(tt, 0, sizeof *tt);
  tt->xadj = xadj;
  tt->adj = adj;
  if (t->ncells > INT_MAX) return lb_error(LB_ERR_ARG, "-tasks trace: %lld tasks exceed the task ids", (long long)t->ncells);
  tt->ntasks = (int)t->ncells;
  tt->nranks = P;
  tt->dim = t->dim;
  tt->t = t;
  /* no per-task home, index or order: the split's P + 1 starts say them */
  tt->w = malloc(((size_t)t->ncells + 1) * sizeof *tt->w);
  tt->first = malloc(((size_t)P + 1) * sizeof *tt->first);
  if (!tt->w || !tt->first) return lb_error(LB_ERR_MEM, "-tasks trace: out of memory for %lld tasks", (long long)t->ncells);
  task_units(t, tt->w);
  tt->first[0] = 0;
  for (int q = 0; q < P; q++) tt->first[q + 1] = tt->first[q] + counts[q];
  if (tt->first[P] != t->ncells)
    return lb_error(LB_ERR_ARG, "-tasks trace: the start split holds %lld of the %lld cells", (long long)tt->first[P], (long long)t->ncells);
  *tg = (lb_task_graph){tt->ntasks, P, maxdeg, split_neighbours, split_home, split_initial, tt};
  return LB_OK;
}

lb_err lb_tracetasks_subdomains(const lb_tracetasks *tt, const char *spec, lb_graph **g)
{
  int64_t m = 0, cap = 1024;
  int *eu = malloc((size_t)cap * sizeof *eu), *ev = malloc((size_t)cap * sizeof *ev), *seen = malloc((size_t)tt->nranks * sizeof *seen);
  lb_err err = eu && ev && seen ? LB_OK : lb_error(LB_ERR_MEM, "-graph %s: out of memory", spec);
  *g = NULL;
  for (int r = 0; !err && r < tt->nranks; r++) seen[r] = -1;
  /* every pair of parts once, from its later part q: the earlier parts
   * its cells' neighbours lie in (seen[r] == q: already listed) */
  for (int q = 0; !err && q < tt->nranks; q++)
    for (int64_t i = tt->first[q]; !err && i < tt->first[q + 1]; i++)
      for (int64_t e = tt->xadj[i]; !err && e < tt->xadj[i + 1]; e++) {
        int idx, r;
        if (tt->adj[e] >= tt->first[q] || seen[r = split_home(tt, tt->adj[e], &idx)] == q) continue;
        seen[r] = q;
        if (m == cap) {
          cap *= 2;
          int *a = realloc(eu, (size_t)cap * sizeof *a), *b = a ? realloc(ev, (size_t)cap * sizeof *b) : NULL;
          if (a) eu = a;
          if (b) ev = b;
          if (!a || !b) err = lb_error(LB_ERR_MEM, "-graph %s: out of memory", spec);
        }
        if (!err && m >= INT_MAX / 2) err = lb_error(LB_ERR_GRAPH, "-graph %s: too many edges", spec);
        if (!err) {
          eu[m] = r;
          ev[m++] = q;
        }
      }
  free(seen);
  if (!err) err = lb_graph_create_edges(tt->nranks, (int)m, eu, ev, g);
  free(eu);
  free(ev);
  if (err) return err;
  (*g)->kind = LB_GRAPH_EDGES;
  snprintf((*g)->spec, sizeof (*g)->spec, "%s", spec);
  return LB_OK;
}

lb_err lb_graph_degree_diameter(const lb_graph *g, double *mean_degree, int *diameter, int *exact, int *connected)
{
  const int n = g->n, sources = n <= 4096 ? n : 1024;
  int *dist = malloc((size_t)n * sizeof *dist), *queue = malloc((size_t)n * sizeof *queue);
  if (!dist || !queue) {
    free(dist);
    free(queue);
    return lb_error(LB_ERR_MEM, "out of memory for the diameter of graph '%s'", g->spec);
  }
  *mean_degree = n ? 2.0 * g->m / n : 0.0;
  *diameter = 0;
  *exact = sources == n;
  *connected = 1;
  for (int k = 0; k < sources; k++) {
    const int s = (int)((int64_t)k * n / sources);
    int head = 0, tail = 0, seen = 1;
    for (int r = 0; r < n; r++) dist[r] = -1;
    dist[s] = 0;
    queue[tail++] = s;
    while (head < tail) {
      const int u = queue[head++];
      if (dist[u] > *diameter) *diameter = dist[u];
      for (int e = g->xadj[u]; e < g->xadj[u + 1]; e++)
        if (dist[g->adj[e]] < 0) {
          dist[g->adj[e]] = dist[u] + 1;
          queue[tail++] = g->adj[e];
          seen++;
        }
    }
    if (seen < n) *connected = 0;
  }
  free(dist);
  free(queue);
  return LB_OK;
}

void lb_trace_release_cells(lb_load_trace *t, int keep_x)
{
  lb_load_trace cells = *t;
  if (keep_x) cells.x = NULL;
  else t->x = NULL;
  lb_trace_free(&cells);
  t->first = NULL;
  t->time = t->predicted = t->w = t->pw = NULL;
  t->type = t->level = NULL;
  t->tree = t->pos = NULL;
}

void lb_tracetasks_release(lb_tracetasks *tt)
{
  free(tt->w);
  free(tt->order);
  free(tt->start);
  tt->w = NULL;
  tt->order = tt->start = NULL;
}

void lb_tracetasks_free(lb_tracetasks *tt)
{
  free(tt->first);
  free(tt->xadj);
  free(tt->adj);
  free(tt->w);
  free(tt->home);
  free(tt->index);
  free(tt->order);
  free(tt->start);
  memset(tt, 0, sizeof *tt);
}

/* Each part's measured time in cycle t.  When the P parts are the app's
 * ranks tiled R times (the app's split, P = R Pt) part q measured what rank
 * q mod Pt measured; otherwise every cell carries its rank's time in
 * proportion to its weight (to its count on a rank of weight 0) and a part
 * measured the sum of its cells'. */
static void part_times(const lb_load_trace *t, int R, int P, lb_trace_split split, const int64_t *counts, double *measured)
{
  const int Pt = t->nranks;
  const int64_t N = t->ncells;
  if (split == LB_TRACE_SPLIT_APP && P == (int64_t)R * Pt) {
    for (int q = 0; q < P; q++) measured[q] = t->time[q % Pt];
    return;
  }
  for (int q = 0; q < P; q++) measured[q] = 0.0;
  int q = 0;
  int64_t end = counts[0];
  for (int c = 0; c < R; c++)
    for (int r = 0; r < Pt; r++) {
      const int64_t a = t->first[r], b = r + 1 < Pt ? t->first[r + 1] : N;
      double W = 0.0;
      for (int64_t k = a; k < b; k++) W += t->w[k];
      for (int64_t k = a; k < b; k++) {
        while (c * N + k >= end && q + 1 < P) end += counts[++q];
        measured[q] += W > 0.0 ? t->time[r] * t->w[k] / W : t->time[r] / (double)(b - a);
      }
    }
}

lb_err lb_trace_shift(const lb_method *m, const char *spec, const lb_trace_replay *rp, int P, double penalty, int64_t *n, double **w, int64_t *counts, lb_curve_result *res,
                      lb_curve_shift_action *action)
{
  char path[4096];
  int cycle, ncycles = 0, *cycles = NULL, last = -1, prev_ranks = 0;
  lb_curve_shifter s;
  lb_load_trace t, prev;
  double *measured = malloc((size_t)P * sizeof *measured);
  memset(res, 0, sizeof *res);
  memset(&s, 0, sizeof s);
  memset(&prev, 0, sizeof prev);
  *w = NULL;
  lb_err err = measured ? parse_spec(spec, path, sizeof path, &cycle) : lb_error(LB_ERR_MEM, "%s: out of memory for %d parts", m->name, P);
  if (!err) err = lb_trace_cycles(path, &ncycles, &cycles);
  for (int i = 0; !err && i < ncycles; i++)
    if (cycle < 0 || cycles[i] == cycle) last = i;
  if (!err && last < 0) err = lb_error(LB_ERR_FILE, "trace '%s': no cycle %d", path, cycle);
  if (!err) err = lb_curve_shifter_init(&s, P, penalty);
  /* the app's sequence: one step on every cycle it balanced, up to this
   * one; carry's start is the record before each */
  for (int i = 0; !err && i <= last; i++) {
    if ((err = lb_trace_read(path, cycles[i], &t))) break;
    err = carry_positions(path, rp, &t);
    if (!err) err = refine_record(path, rp, &t);
    if (!err && (i == last || (t.flags & LB_TRACE_BALANCED))) {
      /* a restart on another rank count keeps the steps, not the best partition */
      if (prev_ranks && t.nranks != prev_ranks) s.have_best = s.settled = 0;
      prev_ranks = t.nranks;
      free(*w);
      err = lb_trace_curve(&t, &prev, rp, P, n, w, counts);
      if (!err) {
        part_times(&t, rp->R, P, rp->split, counts, measured);
        lb_curve_result_free(res);
        err = m->shift(&s, MPI_COMM_SELF, *n, *w, counts, measured, res, action);
      }
    }
    lb_trace_free(&prev);
    prev = t;
  }
  lb_trace_free(&prev);
  if (err) {
    lb_curve_result_free(res);
    free(*w);
    *w = NULL;
  }
  lb_curve_shifter_free(&s);
  free(cycles);
  free(measured);
  return err;
}
