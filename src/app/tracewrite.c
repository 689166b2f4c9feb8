/* -trace_loads: the app's writer of the load trace (tracewrite.h).
 * Compiled for 2D and 3D. */
#define _POSIX_C_SOURCE 200809L /* ftruncate, fsync */
#include "app/tracewrite.h"
#include "balance/lbclock.h"
#include "mesh/geom.h"
#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct _p_AmrTrace {
  MPI_Comm comm;
  int fd, lock;
  char path[PETSC_MAX_PATH_LEN];
  int64_t end;     /* bytes of the file the run keeps */
  int started;     /* the file was cut to end */
  uint32_t run;    /* the run id its file header carries */
};

/* A write of some rank failed (errno err): every rank raises it. */
static PetscErrorCode trace_check(AmrTrace t, int err, const char *what)
{
  int rank;

  PetscFunctionBeginUser;
  PetscCallMPI(AmrFileAgree(t->comm, &err, &rank));
  PetscCheck(!err, t->comm, PETSC_ERR_USER_INPUT, "option -trace_loads %s: cannot %s: %s", AmrPathShort(t->path), what, AmrFileStrerror(err));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrTraceOpen(MPI_Comm comm, const char *path, AmrTrace *out)
{
  AmrTrace t;
  int rank, err = 0;

  PetscFunctionBeginUser;
  /* on every rank before any opens it: no rank hangs on a FIFO */
  PetscCall(AmrFileCheckRegular(comm, "-trace_loads", path, 1));
  PetscCall(PetscCalloc1(1, &t));
  t->comm = comm;
  PetscCall(PetscStrncpy(t->path, path, sizeof t->path));
  t->fd = t->lock = -1;
  /* rank 0 creates it before the others open it */
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) err = AmrFileOpen(path, O_RDWR | O_CREAT, 1, &t->fd);
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  if (rank && !err) err = AmrFileOpen(path, O_RDWR, 1, &t->fd);
  {
    PetscErrorCode ierr = trace_check(t, err, "open for writing");
    /* opening cuts nothing: the cut waits for the first append */
    if (!ierr) ierr = AmrFileLock(comm, "-trace_loads", path, &t->lock);
    if (ierr) {
      if (t->fd >= 0) close(t->fd);
      AmrFileUnlock(&t->lock);
      PetscCall(PetscFree(t));
    }
    PetscCall(ierr);
  }
  *out = t;
  PetscFunctionReturn(0);
}

void AmrTraceEnd(AmrTrace t, const char **path, int64_t *end)
{
  *path = t->path;
  *end = t->end;
}

void AmrTraceSetRun(AmrTrace t, uint32_t run) { t->run = run; }

/* Rank 0: the file's size (-1: unknown) and, when it holds a header, the
 * run id there (*foreign: the header is another run's, or no trace's). */
static void trace_owner(AmrTrace t, long long *size, int *foreign)
{
  unsigned char h[LB_TRACE_FILE_BYTES];
  struct stat sb;
  uint32_t run;

  *foreign = 0;
  *size = fstat(t->fd, &sb) ? -1 : S_ISREG(sb.st_mode) ? (long long)sb.st_size : 0;
  if (*size <= 0) return;
  /* a file too short for a header, or another's, is not this run's */
  *foreign = *size < LB_TRACE_FILE_BYTES || pread(t->fd, h, sizeof h, 0) != (ssize_t)sizeof h || lb_trace_file_run(h, &run) || run != t->run;
}

PetscErrorCode AmrTraceContinue(AmrTrace t, PetscBool check_run, int64_t end)
{
  long long size = 0;
  int rank, foreign = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(t->comm, &rank));
  if (!rank) trace_owner(t, &size, &foreign);
  foreign = foreign && check_run;
  PetscCallMPI(MPI_Bcast(&size, 1, MPI_LONG_LONG, 0, t->comm));
  PetscCallMPI(MPI_Bcast(&foreign, 1, MPI_INT, 0, t->comm));
  PetscCheck(!foreign, t->comm, PETSC_ERR_USER_INPUT,
             "option -trace_loads %s: holds the trace of another run, not of this checkpoint's (run_id %08x): left as it is (give this run's trace, or another file)",
             AmrPathShort(t->path), (unsigned)t->run);
  /* zeros in the gap would make lbbench refuse the whole file */
  PetscCheck(size >= end, t->comm, PETSC_ERR_USER_INPUT,
             "option -trace_loads %s: holds %lld bytes, the checkpoint continues it after byte %lld: it was cut or removed since (restore it, or give another file)",
             AmrPathShort(t->path), size, (long long)end);
  t->end = end;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrTraceClose(AmrTrace *t)
{
  int err;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  if (!*t) PetscFunctionReturn(0);
  err = fsync((*t)->fd) ? errno : 0;
  if (close((*t)->fd) && !err) err = errno;
  AmrFileUnlock(&(*t)->lock);
  ierr = trace_check(*t, err, "write");
  PetscCall(PetscFree(*t));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

/* The local cells encoded in curve order: weight, load type, centre, tree,
 * level, position on the tree and the K phases' weights (pw[k][i]). */
static PetscErrorCode encode_cells(const p4est_t *p4est, const double *w, const int *types, int K, const double *const *pw, unsigned char *buf)
{
  const int cb = LB_TRACE_CELL_BYTES(P4EST_DIM, K);
  const double eta[3] = {0.5, 0.5, 0.5};
  double cw[LB_TRACE_MAX_PHASES];

  PetscFunctionBeginUser;
  for (p4est_topidx_t tr = p4est->first_local_tree; tr <= p4est->last_local_tree; tr++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, tr);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++) {
      const p4est_locidx_t i = tree->quadrants_offset + (p4est_locidx_t)k;
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tree->quadrants, k);
      lb_trace_cell_data c = {w[i], types ? types[i] : 0, {0, 0, 0}, (int32_t)tr, q->level, {q->x, q->y, 0}, cw};
#ifdef P4_TO_P8
      c.pos[2] = q->z;
#endif
      for (int j = 0; j < K; j++) cw[j] = pw[j][i];
      AmrGeomQuadMap(p4est->connectivity, tr, q, eta, c.x, NULL);
      lb_trace_cell(P4EST_DIM, K, &c, buf + (size_t)i * cb);
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrTraceAppend(AmrTrace t, p4est_t *p4est, const lb_load_trace *head, const double *w, const int *types, const double *const *pw,
                              double *cpu_s)
{
  const int P = p4est->mpisize, K = head->nphases, cb = LB_TRACE_CELL_BYTES(P4EST_DIM, K);
  const p4est_locidx_t n = p4est->local_num_quadrants;
  lb_load_trace h = *head;
  int64_t base, cells_at;
  int err = 0;
  unsigned char *buf;
  const double t0 = lb_clock_thread_cpu();

  PetscFunctionBeginUser;
  PetscCheck(K >= 0 && K <= LB_TRACE_MAX_PHASES && (!K || pw), PETSC_COMM_SELF, PETSC_ERR_PLIB, "trace: %d phase weights", K);
  if (!t->started) {
    struct stat sb;
    /* cut before any rank writes past the end (a device is no file to cut) */
    err = p4est->mpirank == 0 && (fstat(t->fd, &sb) || (S_ISREG(sb.st_mode) && ftruncate(t->fd, (off_t)t->end))) ? errno : 0;
    PetscCall(trace_check(t, err, "write"));
    t->started = 1;
  }
  h.dim = P4EST_DIM;
  h.nranks = P;
  h.ncells = (int64_t)p4est->global_num_quadrants;
  base = t->end ? t->end : LB_TRACE_FILE_BYTES;
  if (p4est->mpirank == 0) {
    /* the file header when the file is new, the cycle header, the split,
     * the measured times and predicted loads */
    const size_t hb = LB_TRACE_CYCLE_BYTES + 24 * (size_t)P;
    int64_t *first;
    PetscCall(PetscMalloc2(hb, &buf, P, &first));
    for (int q = 0; q < P; q++) first[q] = (int64_t)p4est->global_first_quadrant[q];
    lb_trace_cycle_header(&h, buf);
    lb_trace_rank_arrays(P, first, head->time, head->predicted, buf + LB_TRACE_CYCLE_BYTES);
    if (!t->end) {
      unsigned char fh[LB_TRACE_FILE_BYTES];
      lb_trace_file_header(P4EST_DIM, t->run, fh);
      err = AmrFileWrite(t->fd, fh, LB_TRACE_FILE_BYTES, 0);
    }
    if (!err) err = AmrFileWrite(t->fd, buf, hb, base);
    PetscCall(PetscFree2(buf, first));
  }
  /* every rank its cells, at the offset of its first cell */
  PetscCall(PetscMalloc1((size_t)n * cb + 1, &buf));
  PetscCall(encode_cells(p4est, w, types, K, pw, buf));
  cells_at = base + LB_TRACE_CYCLE_BYTES + 24 * (int64_t)P + (int64_t)p4est->global_first_quadrant[p4est->mpirank] * cb;
  if (!err) err = AmrFileWrite(t->fd, buf, (size_t)n * cb, cells_at);
  PetscCall(PetscFree(buf));
  PetscCall(trace_check(t, err, "write"));
  t->end = base + lb_trace_record_bytes(P4EST_DIM, K, P, h.ncells);
  *cpu_s = lb_clock_thread_cpu() - t0;
  PetscFunctionReturn(0);
}
