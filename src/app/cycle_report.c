/* The report (impl/cycle.h, FORMATS.md): opened once every option was
 * accepted, a restart's earlier records kept, and one record per cycle
 * written whole or not at all.  Compiled for 2D and 3D (P4_TO_P8). */
#define _GNU_SOURCE /* memrchr, open_memstream */
#include "app/impl/cycle.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/options.h"
#include "util/rankfile.h"
#include "mesh/dirs.h"

/* The cycle number of a report line (NUL-terminated), -1 if it has none. */
static long line_cycle(const char *line)
{
  const char *c = strstr(line, "\"cycle\":");
  return c ? strtol(c + 8, NULL, 10) : -1;
}

/* Whether a report line was written by another run than cyc's. */
static int line_foreign(const AmrCycle cyc, const char *line)
{
  const char *c = strstr(line, "\"run_id\":\"");
  char id[16];
  if (!cyc->run_known) return 0;
  snprintf(id, sizeof id, "%08x\"", (unsigned)cyc->run_id);
  return !c || strncmp(c + 10, id, 9);
}

/* The bytes a restart reads back from the report's end at a time. */
#define TAIL_CHUNK 65536

/* The report read back from its end: buf holds its bytes [pos, pos + n). */
typedef struct {
  int fd;
  off_t pos;
  char *buf;
  size_t n;
} report_tail;

/* Read up to TAIL_CHUNK bytes more, those before the held ones; 0 or the
 * errno. */
static int tail_back(report_tail *t)
{
  const size_t more = t->pos < TAIL_CHUNK ? (size_t)t->pos : TAIL_CHUNK;
  char *b = malloc(t->n + more + 1);
  size_t got = 0;

  if (!b) return ENOMEM;
  while (got < more) {
    const ssize_t r = pread(t->fd, b + got, more - got, t->pos - (off_t)more + (off_t)got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      const int err = r < 0 ? errno : EIO; /* shorter than when it was measured */
      free(b);
      return err;
    }
    got += (size_t)r;
  }
  if (t->n) memcpy(b + more, t->buf, t->n);
  free(t->buf);
  t->buf = b;
  t->pos -= (off_t)more;
  t->n += more;
  return 0;
}

/* The newline before byte end of the held bytes (NULL: the line starts at
 * the file's start), reading back until it is held; *end moves with the
 * held bytes.  Returns 0 or the errno. */
static int tail_line_start(report_tail *t, size_t *end, char **nl)
{
  int err = 0;

  while (!(*nl = *end > 1 ? memrchr(t->buf, '\n', *end - 1) : NULL) && t->pos > 0) {
    const size_t had = t->n;
    if ((err = tail_back(t))) break;
    *end += t->n - had;
  }
  return err;
}

/* The side-file offset a report line names (its ranks_offset), -1: none. */
static long long line_ranks_offset(const char *line)
{
  const char *c = strstr(line, "\"ranks_offset\":");
  return c && c[15] != 'n' ? strtoll(c + 15, NULL, 10) : -1;
}

/* Rank 0: what a restart keeps of the existing report, read back from its
 * end (only the records after the checkpoint and the one it continues
 * are read, however long the run): *whole, the records of cycles 0, 1, ...
 * before cyc->first it starts with (-1: no report to continue; a report
 * whose record of cycle first-1 is missing counts up to the one found
 * before it); *keep, their bytes; *partial, the bytes of a record cut at
 * the file's end (no newline), 0 when none; *foreign, 1 when the kept
 * record was written by another run (run_id); *ranks_offset, the side-file
 * block it names (-1: none).  Returns 0 or the error code of a failed read
 * (AmrFileStrerror). */
static int report_kept(AmrCycle cyc, long *whole, long *keep, long *partial, int *foreign, long long *ranks_offset)
{
  report_tail t = {-1, 0, NULL, 0};
  struct stat sb;
  size_t end = 0;
  char *nl = NULL;
  int err;

  *whole = -1;
  *keep = *partial = 0;
  *foreign = 0;
  *ranks_offset = -1;
  if (cyc->first <= 0) return 0;
  /* a device (/dev/null) holds no records to continue */
  if (!stat(cyc->adapt.report, &sb) && S_ISCHR(sb.st_mode)) return 0;
  err = AmrFileOpen(cyc->adapt.report, O_RDONLY, 1, &t.fd);
  if (err == ENOENT) return 0;
  if (!err && fstat(t.fd, &sb)) err = errno;
  if (!err) {
    *whole = 0;
    t.pos = sb.st_size;
    /* what follows the last newline is a record that a kill or a full
     * disk cut: a restart must not append to it */
    end = 1;
    err = tail_line_start(&t, &end, &nl);
    end = nl ? (size_t)(nl + 1 - t.buf) : 0;
    *partial = (long)(t.n - end);
  }
  /* whole records from the last back: those of the checkpoint's cycles
   * on are dropped, the one before is kept */
  while (!err && end > 0) {
    long c;
    const char *line;

    if ((err = tail_line_start(&t, &end, &nl))) break;
    line = nl ? nl + 1 : t.buf;
    t.buf[end - 1] = '\0';
    c = line_cycle(line);
    if (c >= cyc->first) {
      end = (size_t)(line - t.buf);
      continue;
    }
    /* another run's records are never cut: the restart is refused */
    if ((*foreign = line_foreign(cyc, line))) break;
    *whole = c == cyc->first - 1 ? cyc->first : c + 1;
    if (c == cyc->first - 1) {
      *keep = (long)(t.pos + (off_t)end);
      *ranks_offset = line_ranks_offset(line);
    }
    break;
  }
  free(t.buf);
  if (t.fd >= 0) close(t.fd);
  return err;
}

/* The side file of the report: FILE.jsonl.ranks beside it. */
static void ranks_path(const AmrCycle cyc, char *path, size_t len) { snprintf(path, len, "%s.ranks", cyc->adapt.report); }

/* Whether this run writes the side file: -report_ranks, auto up to
 * AMR_REPORT_RANKS_AUTO_MAX ranks, never beside a device (/dev/null). */
static int ranks_wanted(const AmrCycle cyc)
{
  struct stat sb;
  int P;

  MPI_Comm_size(cyc->comm, &P);
  if (!cyc->adapt.report[0] || cyc->adapt.report_ranks == AMR_REPORT_RANKS_NO) return 0;
  if (!stat(cyc->adapt.report, &sb) && S_ISCHR(sb.st_mode)) return 0;
  return cyc->adapt.report_ranks == AMR_REPORT_RANKS_YES || P <= AMR_REPORT_RANKS_AUTO_MAX;
}

/* Rank 0: the bytes of the side file a restart keeps: up to the end of the
 * block at offset (the kept record's; < 0: none, nothing kept).  Returns 0,
 * the errno of a failed read, or ENODATA when no whole block is there. */
static int ranks_kept(const char *path, long long offset, long long *keep)
{
  unsigned char hdr[JSON_RANKS_HEADER];
  struct stat sb;
  long long bytes;
  int fd, err;

  *keep = 0;
  if (offset < 0) return 0;
  if ((err = AmrFileOpen(path, O_RDONLY, 0, &fd))) return err;
  if (fstat(fd, &sb))
    err = errno;
  else if (pread(fd, hdr, sizeof hdr, (off_t)offset) != (ssize_t)sizeof hdr || (bytes = json_ranks_block_bytes(hdr)) < 0 || offset + bytes > (long long)sb.st_size)
    err = ENODATA;
  else
    *keep = offset + bytes;
  close(fd);
  return err;
}

/* The one error line of a side file that cannot be written: err, an MPI
 * error code every rank has (collective). */
static PetscErrorCode ranks_failed(const AmrCycle cyc, int err)
{
  char path[PETSC_MAX_PATH_LEN + 8], why[MPI_MAX_ERROR_STRING];
  int len;

  PetscFunctionBeginUser;
  if (!err) PetscFunctionReturn(0);
  ranks_path(cyc, path, sizeof path);
  MPI_Error_string(err, why, &len);
  SETERRQ(cyc->comm, PETSC_ERR_USER_INPUT, "option -report_ranks: %s: cannot write: %s", AmrPathShort(path), why);
}

/* Open the side file (collective) and cut it after the blocks of the kept
 * records: keep bytes, rank 0's (ranks_kept). */
static PetscErrorCode open_ranks(AmrCycle cyc, long long keep)
{
  char path[PETSC_MAX_PATH_LEN + 8];

  PetscFunctionBeginUser;
  ranks_path(cyc, path, sizeof path);
  PetscCall(AmrFileCheckRegular(cyc->comm, "-report_ranks", path, 0));
  PetscCallMPI(MPI_Bcast(&keep, 1, MPI_LONG_LONG, 0, cyc->comm));
  PetscCall(ranks_failed(cyc, json_ranks_open(cyc->comm, path, (MPI_Offset)keep, &cyc->ranks)));
  cyc->ranks_at = (MPI_Offset)keep;
  PetscFunctionReturn(0);
}

/* Open the report, opened only once every option was accepted so that a
 * typo does not truncate the report of an earlier run.  A restart keeps
 * the lines of the cycles before its first (those of the interrupted run
 * up to its checkpoint) and appends to them. */
PetscErrorCode AmrCycleOpenReport(AmrCycle cyc)
{
  PetscMPIInt rank;
  long whole = -1, keep = 0, partial = 0;
  long long ranks_offset = -1, ranks_keep = 0;
  int fail[4] = {0, 0, 0, 0}; /* read, write, another run's records, the side file's kept block */
  char side[PETSC_MAX_PATH_LEN + 8];
  const char *shown = AmrPathShort(cyc->adapt.report);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(cyc->comm, &rank));
  if (cyc->adapt.report[0]) PetscCall(AmrMakeParentDirs(cyc->comm, "-report", cyc->adapt.report, cyc->adapt.report));
  if (cyc->adapt.report[0]) PetscCall(AmrFileCheckRegular(cyc->comm, "-report", cyc->adapt.report, 1));
  /* before the file is read or cut: another run may be writing it */
  if (cyc->adapt.report[0]) PetscCall(AmrFileLock(cyc->comm, "-report", cyc->adapt.report, &cyc->report_lock));
  if (cyc->adapt.report[0] && rank == 0) {
    fail[0] = report_kept(cyc, &whole, &keep, &partial, &fail[2], &ranks_offset);
    /* a report that lost records before the checkpoint, or holds another
     * run's, stays as it is; one continued is cut after its kept records,
     * not rewritten, so that a full disk now cannot take them */
    if (!fail[0] && !fail[2] && (whole < 0 || whole >= cyc->first)) {
      fail[1] = AmrFileOpen(cyc->adapt.report, O_WRONLY | O_CREAT | (whole < 0 ? O_TRUNC : 0), 1, &cyc->report);
      if (!fail[1] && whole >= 0 && ftruncate(cyc->report, (off_t)keep)) fail[1] = errno;
      if (!fail[1] && lseek(cyc->report, 0, SEEK_END) < 0) fail[1] = errno;
    }
  }
  ranks_path(cyc, side, sizeof side);
  /* the blocks of the kept records stay; a restart without the side file
   * (-report_ranks no) leaves it as it is */
  if (rank == 0 && !fail[0] && !fail[1] && !fail[2] && whole >= cyc->first && ranks_wanted(cyc)) fail[3] = ranks_kept(side, ranks_offset, &ranks_keep);
  PetscCallMPI(MPI_Bcast(fail, 4, MPI_INT, 0, cyc->comm));
  PetscCheck(!fail[0], cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot read: %s", shown, AmrFileStrerror(fail[0]));
  PetscCheck(!fail[2], cyc->comm, PETSC_ERR_USER_INPUT,
             "option -report %s: holds the records of another run, not of checkpoint '%s.manifest' (run_id %08x): left as it is (give this run's report, or another file)",
             shown, AmrPathShort(cyc->restart), (unsigned)cyc->run_id);
  PetscCallMPI(MPI_Bcast(&whole, 1, MPI_LONG, 0, cyc->comm));
  PetscCheck(whole < 0 || whole >= cyc->first, cyc->comm, PETSC_ERR_USER_INPUT,
             "option -report %s: holds %ld whole records, the checkpoint continues after cycle %d: a record was cut or lost (restore the report, or give another file)",
             shown, whole, cyc->first - 1);
  PetscCheck(!fail[1], cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot write: %s", shown, AmrFileStrerror(fail[1]));
  PetscCheck(!fail[3], cyc->comm, PETSC_ERR_USER_INPUT,
             "option -report_ranks: %s: holds no block where the report's record of cycle %d says (%s): restore it, or give -report_ranks no", AmrPathShort(side),
             cyc->first - 1, AmrFileStrerror(fail[3]));
  if (ranks_wanted(cyc)) PetscCall(open_ranks(cyc, ranks_keep));
  /* the one line that says a record was dropped, as the issue asks */
  if (partial > 0 && whole >= 0)
    PetscCall(PetscPrintf(cyc->comm, "%s: option -report %s: its last record was cut (%ld bytes without an end of line): cut back to the record of cycle %d\n", AMR_PROGRAM,
                          cyc->adapt.report, partial, cyc->first - 1));
  PetscFunctionReturn(0);
}

/* Each rank's KSPSolve time of the cycle, wall and thread CPU, beside the
 * weighed local work (rank_time): the solve's own imbalance, which the
 * weights do not see.  Absent for a problem without a linear solve. */
static PetscErrorCode report_ksp(AmrCycle cyc, json_line *j)
{
  static const char *const key[] = {"rank_ksp_time", "rank_ksp_cpu"};
  const AmrProblem p = cyc->problem;
  const double mine[2] = {p->ksp_wall, p->ksp_cpu};

  PetscFunctionBeginUser;
  if (isnan(mine[0])) PetscFunctionReturn(0);
  PetscCallMPI(json_rank_reals(j, cyc->comm, 2, key, mine));
  PetscFunctionReturn(0);
}

/* Where the record's per-rank values are: the side file beside the report
 * (its name, so that the two move together) and the block's offset. */
static void report_ranks_file(AmrCycle cyc, json_line *j)
{
  char path[PETSC_MAX_PATH_LEN + 8];
  const char *slash;

  if (cyc->ranks == MPI_FILE_NULL) {
    json_null(j, "ranks_file");
    json_null(j, "ranks_offset");
    return;
  }
  ranks_path(cyc, path, sizeof path);
  slash = strrchr(path, '/');
  json_str(j, "ranks_file", slash ? slash + 1 : path);
  json_int(j, "ranks_offset", (long long)cyc->ranks_at);
}

/* The record's block of the side file (collective), before the record that
 * names it. */
static PetscErrorCode write_ranks(AmrCycle cyc, struct json_ranks *row, int cycle, const char *run_id)
{
  MPI_Offset bytes;

  PetscFunctionBeginUser;
  if (cyc->ranks == MPI_FILE_NULL) PetscFunctionReturn(0);
  PetscCall(ranks_failed(cyc, json_ranks_write(row, cyc->comm, cyc->ranks, cyc->ranks_at, cycle, run_id, &bytes)));
  cyc->ranks_at += bytes;
  PetscFunctionReturn(0);
}

/* The report line of a cycle: the common fields, the balancer's, the
 * problem's. */
PetscErrorCode AmrCycleWriteRecord(AmrCycle cyc, int cycle, long long cells, const double *t, const AmrLbRecord *lr)
{
  const AmrProblem p = cyc->problem;
  json_line j;
  struct json_ranks row = {0};
  char id[16], *line = NULL;
  size_t len = 0;
  FILE *mem = NULL;
  int err = 0, cut = 0;

  PetscFunctionBeginUser;
  /* composed whole first: a record that cannot be written fails with the
   * system's reason, at once */
  if (cyc->report >= 0 && !(mem = open_memstream(&line, &len))) err = errno;
  json_begin(&j, mem);
  if (cyc->ranks != MPI_FILE_NULL) j.ranks = &row;
  json_str(&j, "program", AMR_PROGRAM);
  json_int(&j, "dim", P4EST_DIM);
  json_str(&j, "problem", AmrProblemGetName(p));
  json_str(&j, "mesh", p->mesh->name);
  json_int(&j, "degree", p->degree);
  json_int(&j, "ranks", cyc->p4est->mpisize);
  json_int(&j, "cycle", cycle);
  PetscCall(PetscSNPrintf(id, sizeof id, "%08x", (unsigned)cyc->run_id));
  json_str(&j, "run_id", id);
  report_ranks_file(cyc, &j);
  json_bool(&j, "restarted", cyc->restarts > 0);
  if (p->state.sim_time >= 0)
    json_real(&j, "sim_time", p->state.sim_time);
  else
    json_null(&j, "sim_time");
  if (p->state.step >= 0)
    json_int(&j, "step", p->state.step);
  else
    json_null(&j, "step");
  json_int(&j, "cells", cells);
  json_int(&j, "dofs", p->dofs);
  for (int ph = 0; ph < AMR_CYCLE_NPHASES; ph++) {
    char key[32];
    PetscCall(PetscSNPrintf(key, sizeof key, "t_%s", AmrCyclePhaseName(ph)));
    json_real(&j, key, t[ph]);
  }
  PetscCall(AmrLbRecordJSON(&j, cyc->lb, lr));
  PetscCall(report_ksp(cyc, &j));
  PetscCall(AmrProblemReport(p, &j));
  json_end(&j);
  PetscCall(write_ranks(cyc, &row, cycle, id));
  json_ranks_free(&row);
  /* with the system before the cycle's checkpoint: a killed run loses no
   * record, and a full disk ends the run before the checkpoint that would
   * continue after the lost record */
  if (mem && fclose(mem)) err = errno;
  if (mem && !err) {
    /* every record before this one was written whole: this is where it
     * starts (write(2), not stdio: a test's shim can fail it part way) */
    const off_t at = lseek(cyc->report, 0, SEEK_CUR);
    err = AmrFileWrite(cyc->report, line, len, -1);
    /* the part of the record a full disk took is cut, so that the report
     * ends with a whole record, as a restart needs */
    cut = err && at >= 0 && !ftruncate(cyc->report, at);
  }
  free(line);
  {
    int ec[2] = {err, cut};
    PetscCallMPI(MPI_Bcast(ec, 2, MPI_INT, 0, cyc->comm));
    PetscCheck(!ec[0], cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot write: %s%s", AmrPathShort(cyc->adapt.report), strerror(ec[0]),
               ec[1] ? " (cut back to its last whole record)" : "");
  }
  PetscCall(AmrCycleCatchInterrupts(cyc, cycle));
  PetscFunctionReturn(0);
}
