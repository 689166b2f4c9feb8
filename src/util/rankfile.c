/* The per-rank values of a report record: their reductions into the
 * record, their rows into the side file (util/rankfile.h, FORMATS.md). */
#define _POSIX_C_SOURCE 200809L /* strnlen */
#include "util/rankfile.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char magic[8] = {'A', 'M', 'R', 'R', 'A', 'N', 'K', 'S'};

/* Every rank's outcome made everyone's, so that all raise the same error. */
static int agree(MPI_Comm comm, int err)
{
  int any = err;
  MPI_Allreduce(&err, &any, 1, MPI_INT, MPI_MAX, comm);
  return any;
}

/* Append one field of this rank's row: value's 8 bytes, type "<f8"/"<i8". */
static int row_add(struct json_ranks *b, const char *path, const char *key, const char *type, const void *value)
{
  if (b->n == b->cap) {
    const int cap = b->cap ? 2 * b->cap : 32;
    void *name = realloc(b->name, sizeof *b->name * cap), *t = realloc(b->type, sizeof *b->type * cap), *v = realloc(b->value, sizeof *b->value * cap);
    if (name) b->name = name;
    if (t) b->type = t;
    if (v) b->value = v;
    if (!name || !t || !v) return MPI_ERR_NO_MEM;
    b->cap = cap;
  }
  if (snprintf(b->name[b->n], JSON_RANKS_NAME, "%s%s", path, key) >= JSON_RANKS_NAME) return MPI_ERR_ARG;
  b->type[b->n] = type;
  memcpy(b->value[b->n], value, 8);
  b->n++;
  return 0;
}

/* The n fields' reductions over comm and, with j->ranks, this rank's
 * values in its row; ints (NULL for reals) are the values as written. */
static int rank_fields(json_line *j, MPI_Comm comm, int n, const char *const keys[], const double v[], const long long ints[])
{
  struct {
    double v;
    int r;
  } *loc = malloc(sizeof *loc * 2 * (size_t)n + 1);
  double *sum = malloc(sizeof *sum * 2 * (size_t)n + 1);
  int rank, err = loc && sum ? 0 : MPI_ERR_NO_MEM;

  MPI_Comm_rank(comm, &rank);
  for (int i = 0; !err && i < n; i++) {
    const int has = !isnan(v[i]);
    loc[i].v = has ? v[i] : -INFINITY;
    loc[n + i].v = has ? -v[i] : -INFINITY;
    loc[i].r = loc[n + i].r = rank;
    sum[i] = has ? v[i] : 0;
    sum[n + i] = has;
  }
  /* max and -min with the lowest rank holding each, then sums and counts */
  if (!err) err = MPI_Allreduce(MPI_IN_PLACE, loc, 2 * n, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
  if (!err) err = MPI_Allreduce(MPI_IN_PLACE, sum, 2 * n, MPI_DOUBLE, MPI_SUM, comm);
  for (int i = 0; !err && i < n; i++) {
    json_line o;
    json_object_begin(j, keys[i], &o);
    if (sum[n + i] == 0) {
      json_null(&o, "min");
      json_null(&o, "mean");
      json_null(&o, "max");
      json_null(&o, "argmax");
    } else if (ints) {
      json_int(&o, "min", (long long)-loc[n + i].v);
      json_real(&o, "mean", sum[i] / sum[n + i]);
      json_int(&o, "max", (long long)loc[i].v);
      json_int(&o, "argmax", loc[i].r);
    } else {
      json_real(&o, "min", -loc[n + i].v);
      json_real(&o, "mean", sum[i] / sum[n + i]);
      json_real(&o, "max", loc[i].v);
      json_int(&o, "argmax", loc[i].r);
    }
    json_object_end(&o);
    if (j->ranks) err = ints ? row_add(j->ranks, j->path, keys[i], "<i8", &ints[i]) : row_add(j->ranks, j->path, keys[i], "<f8", &v[i]);
  }
  free(loc);
  free(sum);
  return agree(comm, err);
}

int json_rank_reals(json_line *j, MPI_Comm comm, int n, const char *const keys[], const double mine[])
{
  return rank_fields(j, comm, n, keys, mine, NULL);
}

int json_rank_ints(json_line *j, MPI_Comm comm, int n, const char *const keys[], const long long mine[])
{
  double *v = malloc(sizeof *v * (size_t)n + 1);
  int err;

  if (!v) return agree(comm, MPI_ERR_NO_MEM);
  /* exact up to 2^53: counts of cells and bytes */
  for (int i = 0; i < n; i++) v[i] = (double)mine[i];
  err = rank_fields(j, comm, n, keys, v, mine);
  free(v);
  return err;
}

int json_ranks_open(MPI_Comm comm, const char *path, MPI_Offset keep, MPI_File *fh)
{
  int err = MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, fh);

  if (!err) err = MPI_File_set_size(*fh, keep);
  err = agree(comm, err);
  if (err && *fh != MPI_FILE_NULL) MPI_File_close(fh);
  return err;
}

/* The block's header and field table, JSON_RANKS_HEADER + n entries. */
static void header(const struct json_ranks *b, long long cycle, const char *run_id, int P, MPI_Offset bytes, unsigned char *h)
{
  const int32_t version = 1, n = b->n;
  const int64_t c = cycle, ranks = P, len = bytes;

  memset(h, 0, JSON_RANKS_HEADER + (size_t)JSON_RANKS_ENTRY * b->n);
  memcpy(h, magic, 8);
  memcpy(h + 8, &version, 4);
  memcpy(h + 12, &n, 4);
  memcpy(h + 16, &c, 8);
  memcpy(h + 24, &ranks, 8);
  memcpy(h + 32, &len, 8);
  memcpy(h + 40, run_id, strnlen(run_id, 8));
  for (int i = 0; i < b->n; i++) {
    unsigned char *e = h + JSON_RANKS_HEADER + (size_t)JSON_RANKS_ENTRY * i;
    memcpy(e, b->name[i], strnlen(b->name[i], JSON_RANKS_NAME));
    memcpy(e + JSON_RANKS_NAME, b->type[i], strlen(b->type[i]));
  }
}

int json_ranks_write(struct json_ranks *b, MPI_Comm comm, MPI_File fh, MPI_Offset at, long long cycle, const char *run_id, MPI_Offset *bytes)
{
  const size_t row = (size_t)8 * b->n, head = JSON_RANKS_HEADER + (size_t)JSON_RANKS_ENTRY * b->n;
  int rank, P, err;
  unsigned char *buf;
  size_t len;
  MPI_Status st;

  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  *bytes = (MPI_Offset)head + (MPI_Offset)P * (MPI_Offset)row;
  /* rank 0's row follows the field table: one contiguous write each */
  len = rank ? row : head + row;
  buf = malloc(len + 1);
  err = buf ? 0 : MPI_ERR_NO_MEM;
  if (!err && !rank) header(b, cycle, run_id, P, *bytes, buf);
  for (int i = 0; !err && i < b->n; i++) memcpy(buf + (len - row) + (size_t)8 * i, b->value[i], 8);
  {
    /* every rank takes part in the collective write, a failed one with
     * nothing; a short write is an error too */
    const MPI_Offset off = rank ? at + (MPI_Offset)head + (MPI_Offset)rank * (MPI_Offset)row : at;
    const int want = err ? 0 : (int)len;
    int got = 0, werr = MPI_File_write_at_all(fh, off, buf, want, MPI_BYTE, &st);
    if (!werr) werr = MPI_Get_count(&st, MPI_BYTE, &got);
    if (!werr && got != want) werr = MPI_ERR_IO;
    if (!err) err = werr;
  }
  free(buf);
  b->n = 0;
  return agree(comm, err);
}

long long json_ranks_block_bytes(const unsigned char *hdr)
{
  int32_t version;
  int64_t bytes;

  memcpy(&version, hdr + 8, 4);
  memcpy(&bytes, hdr + 32, 8);
  return memcmp(hdr, magic, 8) || version != 1 || bytes < JSON_RANKS_HEADER ? -1 : (long long)bytes;
}

void json_ranks_free(struct json_ranks *b)
{
  free(b->name);
  free(b->type);
  free(b->value);
  memset(b, 0, sizeof *b);
}
