/* The load trace's format (loadtrace.h): encoding for the app's writer,
 * and the reader lbbench replays from.  Every number is put byte by byte
 * in little-endian order, so the file means the same on any machine. */
#include "balance/loadtrace.h"
#include "balance/impl/lbcall.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const weight_names[] = {"count", "timing", "model", "measured", "phases"};

const char *lb_trace_weight_name(int k) { return k >= 0 && k < 5 ? weight_names[k] : "unknown"; }

static void put_u(unsigned char *p, uint64_t v, int bytes)
{
  for (int i = 0; i < bytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_u(const unsigned char *p, int bytes)
{
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void put_f64(unsigned char *p, double x)
{
  uint64_t v;
  memcpy(&v, &x, 8);
  put_u(p, v, 8);
}

static double get_f64(const unsigned char *p)
{
  uint64_t v = get_u(p, 8);
  double x;
  memcpy(&x, &v, 8);
  return x;
}

static void put_f32(unsigned char *p, float x)
{
  uint32_t v;
  memcpy(&v, &x, 4);
  put_u(p, v, 4);
}

static float get_f32(const unsigned char *p)
{
  uint32_t v = (uint32_t)get_u(p, 4);
  float x;
  memcpy(&x, &v, 4);
  return x;
}

void lb_trace_file_header(int dim, uint32_t run, unsigned char out[LB_TRACE_FILE_BYTES])
{
  memset(out, 0, LB_TRACE_FILE_BYTES);
  memcpy(out, LB_TRACE_MAGIC, 8);
  put_u(out + 8, LB_TRACE_VERSION, 4);
  put_u(out + 12, (uint64_t)dim, 4);
  put_u(out + 16, LB_TRACE_CELL_BYTES(dim, 0), 4);
  put_u(out + 20, LB_TRACE_CYCLE_BYTES, 4);
  put_u(out + 24, LB_TRACE_MAX_TYPES, 4);
  put_u(out + 28, run, 4);
}

int lb_trace_file_run(const unsigned char h[LB_TRACE_FILE_BYTES], uint32_t *run)
{
  *run = (uint32_t)get_u(h + 28, 4);
  return memcmp(h, LB_TRACE_MAGIC, 8) ? -1 : 0;
}

int64_t lb_trace_record_bytes(int dim, int K, int P, int64_t N) { return LB_TRACE_CYCLE_BYTES + 24 * (int64_t)P + N * LB_TRACE_CELL_BYTES(dim, K); }

/* Bytes of a record of either version. */
static int64_t record_bytes(int version, int dim, int K, int P, int64_t N)
{
  return version == 1 ? LB_TRACE_CYCLE_BYTES_V1 + 24 * (int64_t)P + N * LB_TRACE_CELL_BYTES_V1(dim) : lb_trace_record_bytes(dim, K, P, N);
}

void lb_trace_cycle_header(const lb_load_trace *t, unsigned char out[LB_TRACE_CYCLE_BYTES])
{
  memcpy(out, "CYCL", 4);
  put_u(out + 4, (uint32_t)t->cycle, 4);
  put_u(out + 8, (uint32_t)t->nranks, 4);
  put_u(out + 12, (uint32_t)t->weights, 4);
  put_u(out + 16, (uint32_t)t->ntypes, 4);
  put_u(out + 20, (uint32_t)t->flags, 4);
  put_u(out + 24, (uint64_t)t->ncells, 8);
  put_u(out + 32, (uint64_t)lb_trace_record_bytes(t->dim, t->nphases, t->nranks, t->ncells), 8);
  put_u(out + 40, (uint32_t)t->nphases, 4);
  memset(out + 44, 0, 4);
  for (int k = 0; k < LB_TRACE_MAX_TYPES; k++) put_f64(out + 48 + 8 * k, k < t->ntypes ? t->cost[k] : NAN);
  /* fixed slots, so the header's size does not depend on the names */
  memset(out + LB_TRACE_CYCLE_BYTES_V1, 0, LB_TRACE_PHASE_NAME * LB_TRACE_MAX_PHASES);
  for (int k = 0; k < t->nphases; k++) strncpy((char *)out + LB_TRACE_CYCLE_BYTES_V1 + LB_TRACE_PHASE_NAME * k, t->phase_name[k], LB_TRACE_PHASE_NAME - 1);
}

void lb_trace_rank_arrays(int P, const int64_t *first, const double *time, const double *predicted, unsigned char *out)
{
  for (int q = 0; q < P; q++) {
    put_u(out + 8 * (size_t)q, (uint64_t)first[q], 8);
    put_f64(out + 8 * (size_t)(P + q), time[q]);
    put_f64(out + 8 * (size_t)(2 * P + q), predicted[q]);
  }
}

void lb_trace_cell(int dim, int K, const lb_trace_cell_data *c, unsigned char *out)
{
  unsigned char *p = out + 9 + 4 * dim;
  put_f64(out, c->w);
  out[8] = (unsigned char)c->type;
  for (int d = 0; d < dim; d++) put_f32(out + 9 + 4 * d, (float)c->x[d]);
  put_u(p, (uint32_t)c->tree, 4);
  p[4] = (unsigned char)c->level;
  for (int d = 0; d < dim; d++) put_u(p + 5 + 4 * d, (uint32_t)c->pos[d], 4);
  for (int k = 0; k < K; k++) put_f64(p + 5 + 4 * dim + 8 * k, c->pw[k]);
}

void lb_trace_free(lb_load_trace *t)
{
  free(t->first);
  free(t->time);
  free(t->predicted);
  free(t->w);
  free(t->type);
  free(t->x);
  free(t->tree);
  free(t->level);
  free(t->pos);
  free(t->pw);
  memset(t, 0, sizeof *t);
}

/* The scalars of the cycle header at the file's position; its record's
 * bytes in *bytes.  A header cut short or not starting "CYCL" is an error. */
static lb_err read_cycle_header(FILE *f, const char *path, int version, int dim, long long at, long long size, lb_load_trace *t, int64_t *bytes)
{
  unsigned char h[LB_TRACE_CYCLE_BYTES];
  const size_t hb = version == 1 ? LB_TRACE_CYCLE_BYTES_V1 : LB_TRACE_CYCLE_BYTES;
  if (size - at < (long long)hb || fread(h, 1, hb, f) != hb)
    return lb_error(LB_ERR_FILE, "trace '%s': truncated: a cycle header at byte %lld is cut short (file of %lld bytes)", path, at, size);
  if (memcmp(h, "CYCL", 4)) return lb_error(LB_ERR_FILE, "trace '%s': malformed: no cycle record at byte %lld", path, at);
  t->version = version;
  t->dim = dim;
  t->cycle = (int32_t)get_u(h + 4, 4);
  t->nranks = (int32_t)get_u(h + 8, 4);
  t->weights = (int32_t)get_u(h + 12, 4);
  t->ntypes = (int32_t)get_u(h + 16, 4);
  t->flags = (int32_t)get_u(h + 20, 4);
  t->ncells = (int64_t)get_u(h + 24, 8);
  *bytes = (int64_t)get_u(h + 32, 8);
  for (int k = 0; k < LB_TRACE_MAX_TYPES; k++) t->cost[k] = get_f64(h + 48 + 8 * k);
  t->nphases = version == 1 ? 0 : (int32_t)get_u(h + 40, 4);
  memset(t->phase_name, 0, sizeof t->phase_name);
  for (int k = 0; k < t->nphases && k < LB_TRACE_MAX_PHASES; k++)
    memcpy(t->phase_name[k], h + LB_TRACE_CYCLE_BYTES_V1 + LB_TRACE_PHASE_NAME * k, LB_TRACE_PHASE_NAME - 1);
  if (t->nranks < 1 || t->ncells < t->nranks || t->ntypes < 1 || t->ntypes > LB_TRACE_MAX_TYPES || t->nphases < 0 ||
      t->nphases > LB_TRACE_MAX_PHASES || *bytes != record_bytes(version, dim, t->nphases, t->nranks, t->ncells))
    return lb_error(LB_ERR_FILE, "trace '%s': malformed cycle record at byte %lld (%d ranks, %lld cells, %lld bytes)", path, at, t->nranks,
                    (long long)t->ncells, (long long)*bytes);
  if (size - at < *bytes)
    return lb_error(LB_ERR_FILE, "trace '%s': truncated: cycle %d needs %lld bytes at byte %lld, the file ends %lld bytes later", path, t->cycle,
                    (long long)*bytes, at, size - at);
  return LB_OK;
}

/* Cell i's version 2 fields at p: tree, level, quadrant coordinates and
 * phase weights, checked (a position off its tree's grid, or a phase
 * weight that is negative or not finite, is an error naming the cell). */
static lb_err decode_position(const char *path, lb_load_trace *t, int64_t i, const unsigned char *p)
{
  const int dim = t->dim, K = t->nphases, L = LB_TRACE_MAXLEVEL(dim);
  const int64_t N = t->ncells;
  t->tree[i] = (int32_t)get_u(p, 4);
  t->level[i] = p[4];
  int ok = t->tree[i] >= 0 && t->level[i] <= L;
  for (int d = 0; d < dim; d++) {
    const int32_t x = (int32_t)get_u(p + 5 + 4 * d, 4);
    t->pos[i * dim + d] = x;
    /* a quadrant of level l sits on the grid of its size 2^(L - l) */
    ok = ok && x >= 0 && x < (INT32_C(1) << L) && (t->level[i] > L || x % (INT32_C(1) << (L - t->level[i])) == 0);
  }
  if (!ok) return lb_error(LB_ERR_FILE, "trace '%s': cell %lld of cycle %d has no valid position (tree %d, level %d)", path, (long long)i, t->cycle, (int)t->tree[i], (int)t->level[i]);
  for (int k = 0; k < K; k++) {
    const double w = get_f64(p + 5 + 4 * dim + 8 * k);
    t->pw[k * N + i] = w;
    if (!(w >= 0) || !isfinite(w))
      return lb_error(LB_ERR_FILE, "trace '%s': cell %lld of cycle %d has weight %g in phase %s", path, (long long)i, t->cycle, w, t->phase_name[k]);
  }
  return LB_OK;
}

/* The arrays of the record whose header was just read. */
static lb_err read_cycle_body(FILE *f, const char *path, lb_load_trace *t)
{
  const int P = t->nranks, dim = t->dim, K = t->nphases, v2 = t->version >= 2;
  const int cb = v2 ? LB_TRACE_CELL_BYTES(dim, K) : LB_TRACE_CELL_BYTES_V1(dim);
  const int64_t N = t->ncells;
  unsigned char *buf = malloc((size_t)24 * P), *cells;
  t->first = malloc((size_t)P * sizeof *t->first);
  t->time = malloc((size_t)P * sizeof *t->time);
  t->predicted = malloc((size_t)P * sizeof *t->predicted);
  t->w = malloc((size_t)N * sizeof *t->w);
  t->type = malloc((size_t)N);
  t->x = malloc((size_t)N * dim * sizeof *t->x);
  if (v2) {
    t->tree = malloc((size_t)N * sizeof *t->tree);
    t->level = malloc((size_t)N);
    t->pos = malloc((size_t)N * dim * sizeof *t->pos);
    if (K) t->pw = malloc((size_t)N * K * sizeof *t->pw);
  }
  if (!buf || !t->first || !t->time || !t->predicted || !t->w || !t->type || !t->x ||
      (v2 && (!t->tree || !t->level || !t->pos || (K && !t->pw)))) {
    free(buf);
    return lb_error(LB_ERR_MEM, "trace '%s': out of memory for %lld cells", path, (long long)N);
  }
  if (fread(buf, 1, (size_t)24 * P, f) != (size_t)24 * P) {
    free(buf);
    return lb_error(LB_ERR_FILE, "trace '%s': read error in cycle %d", path, t->cycle);
  }
  for (int q = 0; q < P; q++) {
    t->first[q] = (int64_t)get_u(buf + 8 * q, 8);
    t->time[q] = get_f64(buf + 8 * (P + q));
    t->predicted[q] = get_f64(buf + 8 * (2 * P + q));
  }
  free(buf);
  for (int q = 0; q < P; q++)
    if (t->first[q] < 0 || t->first[q] > N || (q > 0 && t->first[q] < t->first[q - 1]) || (q == 0 && t->first[q] != 0))
      return lb_error(LB_ERR_FILE, "trace '%s': malformed split in cycle %d: rank %d starts at cell %lld", path, t->cycle, q, (long long)t->first[q]);
  /* the cells in chunks: a trace may hold more cells than fit twice in memory */
  enum { CHUNK = 1 << 16 };
  lb_err err;
  cells = malloc((size_t)CHUNK * cb);
  if (!cells) return lb_error(LB_ERR_MEM, "trace '%s': out of memory", path);
  for (int64_t i0 = 0; i0 < N; i0 += CHUNK) {
    const int64_t k = N - i0 < CHUNK ? N - i0 : CHUNK;
    if (fread(cells, (size_t)cb, (size_t)k, f) != (size_t)k) {
      free(cells);
      return lb_error(LB_ERR_FILE, "trace '%s': read error in cycle %d", path, t->cycle);
    }
    for (int64_t i = 0; i < k; i++) {
      const unsigned char *c = cells + i * cb;
      t->w[i0 + i] = get_f64(c);
      t->type[i0 + i] = c[8];
      for (int d = 0; d < dim; d++) {
        t->x[(i0 + i) * dim + d] = get_f32(c + 9 + 4 * d);
        /* task mode orders and places cells by their centres */
        if (!isfinite(t->x[(i0 + i) * dim + d])) {
          free(cells);
          return lb_error(LB_ERR_FILE, "trace '%s': cell %lld of cycle %d has centre coordinate %d %g", path, (long long)(i0 + i), t->cycle, d,
                          (double)t->x[(i0 + i) * dim + d]);
        }
      }
      if (!(t->w[i0 + i] >= 0) || !isfinite(t->w[i0 + i])) {
        free(cells);
        return lb_error(LB_ERR_FILE, "trace '%s': cell %lld of cycle %d has weight %g", path, (long long)(i0 + i), t->cycle, t->w[i0 + i]);
      }
      if (v2 && (err = decode_position(path, t, i0 + i, c + 9 + 4 * dim))) {
        free(cells);
        return err;
      }
    }
  }
  free(cells);
  return LB_OK;
}

/* Open trace path and check its file header: the file at its first
 * record, its size and dimension. */
static lb_err open_trace(const char *path, FILE **fp, long long *size, int *version, int *dim)
{
  unsigned char h[LB_TRACE_FILE_BYTES];
  FILE *f = fopen(path, "rb");
  *fp = NULL;
  if (!f) return lb_error(LB_ERR_FILE, "trace '%s': cannot open: %s", path, strerror(errno));
  lb_err err = LB_OK;
  if (fseek(f, 0, SEEK_END) || (*size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
    err = lb_error(LB_ERR_FILE, "trace '%s': cannot seek", path);
  else if (*size < LB_TRACE_FILE_BYTES || fread(h, 1, sizeof h, f) != sizeof h || memcmp(h, LB_TRACE_MAGIC, 8))
    err = lb_error(LB_ERR_FILE, "trace '%s': not a load trace (no %s header)", path, LB_TRACE_MAGIC);
  else if (get_u(h + 8, 4) < 1 || get_u(h + 8, 4) > LB_TRACE_VERSION)
    err = lb_error(LB_ERR_FILE, "trace '%s': version %u, this lbbench reads versions 1 to %d", path, (unsigned)get_u(h + 8, 4), LB_TRACE_VERSION);
  if (err) {
    fclose(f);
    return err;
  }
  *version = (int)get_u(h + 8, 4);
  *dim = (int)get_u(h + 12, 4);
  const int v1 = *version == 1;
  if ((*dim != 2 && *dim != 3) || get_u(h + 16, 4) != (uint64_t)(v1 ? LB_TRACE_CELL_BYTES_V1(*dim) : LB_TRACE_CELL_BYTES(*dim, 0)) ||
      get_u(h + 20, 4) != (v1 ? LB_TRACE_CYCLE_BYTES_V1 : LB_TRACE_CYCLE_BYTES) || get_u(h + 24, 4) != LB_TRACE_MAX_TYPES)
    err = lb_error(LB_ERR_FILE, "trace '%s': malformed header (dimension %d)", path, *dim);
  else if (*size == LB_TRACE_FILE_BYTES)
    err = lb_error(LB_ERR_FILE, "trace '%s': holds no cycle", path);
  if (err) {
    fclose(f);
    return err;
  }
  *fp = f;
  return LB_OK;
}

/* Walk the records of an open trace, each one checked whole: the offset of
 * cycle `cycle`'s record (-1: the last) in *found (-1: none), the last
 * cycle in *last, and, with cycles non-NULL, every cycle number in file
 * order (*cycles malloc'ed, *ncycles of them). */
static lb_err walk(FILE *f, const char *path, int version, int dim, long long size, int cycle, lb_load_trace *t, long long *found, int *last, int *ncycles,
                   int **cycles)
{
  long long at = LB_TRACE_FILE_BYTES;
  int64_t bytes;
  int cap = 0;
  *found = -1;
  *last = -1;
  if (cycles) {
    *cycles = NULL;
    *ncycles = 0;
  }
  while (at < size) {
    if (fseek(f, at, SEEK_SET)) return lb_error(LB_ERR_FILE, "trace '%s': cannot seek", path);
    LB_CALL(read_cycle_header(f, path, version, dim, at, size, t, &bytes));
    if (cycle < 0 || t->cycle == cycle) *found = at;
    *last = t->cycle;
    at += bytes;
    if (!cycles) continue;
    if (*ncycles == cap) {
      int *grown = realloc(*cycles, (size_t)(cap = 2 * cap + 16) * sizeof *grown);
      if (!grown) return lb_error(LB_ERR_MEM, "trace '%s': out of memory for its cycles", path);
      *cycles = grown;
    }
    (*cycles)[(*ncycles)++] = t->cycle;
  }
  return LB_OK;
}

lb_err lb_trace_cycles(const char *path, int *ncycles, int **cycles)
{
  FILE *f;
  long long size, found;
  int version, dim, last;
  lb_load_trace t;
  *cycles = NULL;
  *ncycles = 0;
  LB_CALL(open_trace(path, &f, &size, &version, &dim));
  lb_err err = walk(f, path, version, dim, size, -1, &t, &found, &last, ncycles, cycles);
  fclose(f);
  if (err) {
    free(*cycles);
    *cycles = NULL;
    *ncycles = 0;
  }
  return err;
}

lb_err lb_trace_read(const char *path, int cycle, lb_load_trace *t)
{
  FILE *f;
  long long size, found;
  int version, dim, last;
  int64_t bytes;
  memset(t, 0, sizeof *t);
  LB_CALL(open_trace(path, &f, &size, &version, &dim));
  lb_err err = walk(f, path, version, dim, size, cycle, t, &found, &last, NULL, NULL);
  if (!err && found < 0) err = lb_error(LB_ERR_FILE, "trace '%s': no cycle %d (the last is %d)", path, cycle, last);
  if (!err && fseek(f, found, SEEK_SET)) err = lb_error(LB_ERR_FILE, "trace '%s': cannot seek", path);
  if (!err) err = read_cycle_header(f, path, version, dim, found, size, t, &bytes);
  if (!err) err = read_cycle_body(f, path, t);
  fclose(f);
  if (err) lb_trace_free(t);
  return err;
}

int64_t lb_trace_refine_bytes(const lb_load_trace *t, int k)
{
  const int dim = t->dim;
  /* the refined arrays beside the recorded ones while they are built, of
   * those the caller kept */
  const double per = 8.0 + (t->type ? 1 : 0) + (t->x ? 4.0 * dim : 0) + 4 + 1 + 4.0 * dim + (t->pw ? 8.0 * t->nphases : 0);
  const double bytes = per * (double)t->ncells * (1.0 + ldexp(1.0, dim * k));
  return bytes >= 0x1p62 ? INT64_MAX : (int64_t)bytes;
}

lb_err lb_trace_refine(lb_load_trace *t, int k)
{
  const int dim = t->dim, L = LB_TRACE_MAXLEVEL(dim);
  const int64_t N = t->ncells, m = INT64_C(1) << (dim * k), M = N * m;
  int top = 0;
  if (k == 0) return LB_OK;
  if (!t->pos) return lb_error(LB_ERR_ARG, "-refine %d: trace cycle %d has no cell positions (format version %d)", k, t->cycle, t->version);
  for (int64_t i = 0; i < N; i++) top = t->level[i] > top ? t->level[i] : top;
  if (top + k > L) return lb_error(LB_ERR_ARG, "-refine %d: trace cycle %d has cells of level %d, refined past p4est's level %d", k, t->cycle, top, L);
  /* the load types, centres and phase weights only where the caller kept
   * them: at 131072 ranks of 1000 tasks a replay holds little else */
  const int K = t->pw ? t->nphases : 0;
  double *w = malloc((size_t)M * sizeof *w), *pw = K ? malloc((size_t)M * K * sizeof *pw) : NULL;
  unsigned char *type = t->type ? malloc((size_t)M) : NULL, *level = malloc((size_t)M);
  float *x = t->x ? malloc((size_t)M * dim * sizeof *x) : NULL;
  int32_t *tree = malloc((size_t)M * sizeof *tree), *pos = malloc((size_t)M * dim * sizeof *pos);
  if (!w || (K && !pw) || (t->type && !type) || !level || (t->x && !x) || !tree || !pos) {
    free(w), free(pw), free(type), free(level), free(x), free(tree), free(pos);
    return lb_error(LB_ERR_MEM, "-refine %d: out of memory for %lld cells", k, (long long)M);
  }
  /* a power-of-two share scales without rounding: the children's exact
   * (and pairwise) sum is the parent's */
  const double share = ldexp(1.0, -dim * k);
  for (int64_t i = 0; i < N; i++) {
    const int level_c = t->level[i] + k;
    const int32_t h = INT32_C(1) << (L - level_c);
    for (int64_t j = 0; j < m; j++) {
      const int64_t c = i * m + j;
      w[c] = t->w[i] * share;
      for (int p = 0; p < K; p++) pw[p * M + c] = t->pw[p * N + i] * share;
      if (type) type[c] = t->type[i];
      level[c] = (unsigned char)level_c;
      tree[c] = t->tree[i];
      /* child j in Morton order: bit dim b + d of j is bit b of its offset in direction d */
      for (int d = 0; d < dim; d++) {
        int32_t off = 0;
        for (int b = 0; b < k; b++) off |= (int32_t)((j >> (dim * b + d)) & 1) << b;
        pos[c * dim + d] = t->pos[i * dim + d] + off * h;
        /* no geometry here: the children keep the parent's centre */
        if (x) x[c * dim + d] = t->x[i * dim + d];
      }
    }
  }
  for (int q = 0; q < t->nranks; q++) t->first[q] *= m;
  free(t->w), free(t->pw), free(t->type), free(t->level), free(t->x), free(t->tree), free(t->pos);
  t->w = w, t->pw = pw, t->type = type, t->level = level, t->x = x, t->tree = tree, t->pos = pos;
  t->ncells = M;
  return LB_OK;
}

uint64_t lb_trace_morton(int dim, const int32_t *pos)
{
  const int L = LB_TRACE_MAXLEVEL(dim);
  uint64_t z = 0;
  for (int b = 0; b < L; b++)
    for (int d = 0; d < dim; d++) z |= (uint64_t)((pos[d] >> b) & 1) << (dim * b + d);
  return z;
}
