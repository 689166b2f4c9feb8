/* lbbench scenarios.  Every process builds the same vector itself (the
 * file is read by all), so errors are detected identically everywhere. */
#include "bench/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static lb_err point_loads(const lb_graph *g, const char *arg, double base, double *load)
{
  char *end;
  errno = 0;
  long rank = strtol(arg, &end, 10);
  if (end == arg || *end != ':' || errno) return lb_error(LB_ERR_ARG, "-scenario point:%s: expected point:RANK:AMOUNT", arg);
  const char *a = end + 1;
  /* AMOUNT n: the number of ranks, Melhem et al. 1991 Table 1's f = n at every size of -scale. */
  double amount = strcmp(a, "n") == 0 ? g->n : strtod(a, &end);
  if (strcmp(a, "n") != 0 && (end == a || *end || !isfinite(amount) || amount < 0))
    return lb_error(LB_ERR_ARG, "-scenario point:%s: AMOUNT must be a non-negative number or n", arg);
  if (rank < 0 || rank >= g->n) return lb_error(LB_ERR_ARG, "-scenario point:%s: rank %ld is not in graph '%s' (0..%d)", arg, rank, g->spec, g->n - 1);
  for (int r = 0; r < g->n; r++) load[r] = base;
  load[rank] += amount;
  return LB_OK;
}

static lb_err box_loads(const lb_graph *g, double base, double *load)
{
  int nd;
  switch (g->kind) {
  case LB_GRAPH_LINE: nd = 1; break;
  case LB_GRAPH_MESH2D: nd = 2; break;
  case LB_GRAPH_MESH3D: case LB_GRAPH_TORUS3D: nd = 3; break;
  default: return lb_error(LB_ERR_ARG, "-scenario box needs a line, mesh2d, mesh3d or torus3d graph, not '%s'", g->spec);
  }
  if (base == 0) base = 512; /* Lieber et al. 2016: 8x8x8 tasks per node */
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0}, k[3] = {1, 1, 1};
  long long nb = 1;
  for (int i = 0; i < nd; i++) {
    k[i] = g->dims[i];
    lo[i] = k[i] / 2 - k[i] / 4;
    hi[i] = lo[i] + k[i] / 2;
    if (hi[i] > k[i] - 1) hi[i] = k[i] - 1;
    nb *= hi[i] - lo[i] + 1;
  }
  double frac = (double)nb / g->n;
  if (frac >= 0.9) return lb_error(LB_ERR_ARG, "-scenario box: graph '%s' is too small for a box with avg/max = 0.9", g->spec);
  /* base + x in the box: (base + frac x) / (base + x) = 0.9; whole units. */
  double x = round(0.1 * base / (0.9 - frac));
  for (int r = 0; r < g->n; r++) {
    int c[3] = {r % k[0], (r / k[0]) % k[1], r / (k[0] * k[1])}, in = 1;
    for (int i = 0; i < nd; i++) in &= c[i] >= lo[i] && c[i] <= hi[i];
    load[r] = base + (in ? x : 0);
  }
  return LB_OK;
}

static lb_err random_loads(const lb_graph *g, const char *arg, double base, double *load)
{
  char *end;
  errno = 0;
  unsigned long long seed = strtoull(arg, &end, 10);
  if (end == arg || *end || errno) return lb_error(LB_ERR_ARG, "-scenario random:%s: expected random:SEED", arg);
  /* splitmix64: the same numbers on every machine and process. */
  uint64_t x = seed;
  for (int r = 0; r < g->n; r++) {
    x += 0x9E3779B97F4A7C15ull;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    load[r] = base + (double)(z % 101);
  }
  return LB_OK;
}

lb_err lb_read_values(const char *path, int n, const char *what, double *v)
{
  FILE *f = fopen(path, "r");
  if (!f) return lb_error(LB_ERR_FILE, "load file '%s': cannot open: %s", path, strerror(errno));
  char line[256];
  int count = 0, lineno = 0;
  lb_err err = LB_OK;
  while (!err && fgets(line, sizeof line, f)) {
    lineno++;
    char *hash = strchr(line, '#');
    if (hash) *hash = '\0';
    char *p = line, *end;
    while (isspace((unsigned char)*p)) p++;
    if (!*p) continue;
    double x = strtod(p, &end);
    while (isspace((unsigned char)*end)) end++;
    if (end == p || *end) err = lb_error(LB_ERR_FILE, "load file '%s' line %d: not a number", path, lineno);
    else if (!isfinite(x) || x < 0) err = lb_error(LB_ERR_LOAD, "load file '%s' line %d: load %g is negative or not finite", path, lineno, x);
    else if (count >= n) err = lb_error(LB_ERR_FILE, "load file '%s': more loads than %s", path, what);
    else v[count++] = x;
  }
  fclose(f);
  if (!err && count != n) err = lb_error(LB_ERR_FILE, "load file '%s': %d loads for %s", path, count, what);
  return err;
}

static lb_err file_loads(const lb_graph *g, const char *path, double *load)
{
  char what[320];
  snprintf(what, sizeof what, "the %d ranks of graph '%s'", g->n, g->spec);
  return lb_read_values(path, g->n, what, load);
}

/* Lieber et al. 2016 POINT: one rank, the centre of a grid (k_i/2 in every
 * dimension) or rank n/2 of any other graph, overloaded so that avg/max = 0.9. */
static lb_err centre_point_loads(const lb_graph *g, double base, double *load)
{
  if (g->n < 2) return lb_error(LB_ERR_ARG, "-scenario point: graph '%s' has a single rank", g->spec);
  if (base == 0) base = 512;
  int nd = lb_graph_grid_dims(g), c = g->n / 2;
  if (nd > 0) {
    c = 0;
    for (int i = nd - 1; i >= 0; i--) c = c * g->dims[i] + g->dims[i] / 2;
  }
  /* (base + x/n) / (base + x) = 0.9 in whole units. */
  double x = round(0.1 * base / (0.9 - 1.0 / g->n));
  for (int r = 0; r < g->n; r++) load[r] = base + (r == c ? x : 0);
  return LB_OK;
}

/* The loads of spec, unchecked. */
static lb_err scenario_loads(const lb_graph *g, const char *spec, double base, double *load)
{
  if (strcmp(spec, "point") == 0) return centre_point_loads(g, base, load);
  if (strncmp(spec, "point:", 6) == 0) return point_loads(g, spec + 6, base, load);
  if (strcmp(spec, "box") == 0) return box_loads(g, base, load);
  if (strncmp(spec, "random:", 7) == 0) return random_loads(g, spec + 7, base, load);
  if (strncmp(spec, "file:", 5) == 0) return file_loads(g, spec + 5, load);
  return lb_error(LB_ERR_ARG, "unknown -scenario '%s' (point, point:RANK:AMOUNT|n, box, random:SEED, file:PATH)", spec);
}

lb_err lb_scenario_loads(const lb_graph *g, const char *spec, double base, double *load)
{
  double sum = 0, squares = 0;
  if (!isfinite(base) || base < 0) return lb_error(LB_ERR_ARG, "option -base %g: must be a non-negative number", base);
  lb_err err = scenario_loads(g, spec, base, load);
  if (err) return err;
  /* every metric sums the loads (the L2 imbalance their squares): loads
   * whose sums overflow would end in inf and NaN, reported as a result */
  for (int r = 0; r < g->n; r++) {
    sum += load[r];
    squares += load[r] * load[r];
  }
  if (isfinite(sum) && isfinite(squares)) return LB_OK;
  if (strncmp(spec, "file:", 5) == 0)
    return lb_error(LB_ERR_LOAD, "option -scenario %s: the loads of the %d ranks overflow their sum or the sum of their squares", spec, g->n);
  return lb_error(LB_ERR_LOAD, "option -base %g (-scenario %s): the loads of the %d ranks overflow their sum or the sum of their squares", base, spec, g->n);
}
