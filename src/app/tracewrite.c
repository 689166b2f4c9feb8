/* -trace_loads: the app's writer of the load trace (tracewrite.h).
 * Compiled for 2D and 3D. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "app/tracewrite.h"
#include "mesh/geom.h"

#include <string.h>
#include <time.h>

struct AmrTrace {
  MPI_Comm comm;
  MPI_File fh;
  char path[PETSC_MAX_PATH_LEN];
  int64_t end;     /* bytes of the file the run keeps */
  int started;     /* the file was cut to end */
};

/* An MPI-IO call on the trace; its failure names the option and the file. */
#define TRACE_IO(t, call) \
  do { \
    int e_ = (call); \
    if (e_ != MPI_SUCCESS) { \
      char s_[MPI_MAX_ERROR_STRING]; \
      int n_; \
      MPI_Error_string(e_, s_, &n_); \
      SETERRQ((t)->comm, PETSC_ERR_FILE_WRITE, "option -trace_loads %s: write failed: %s", (t)->path, s_); \
    } \
  } while (0)

PetscErrorCode AmrTraceOpen(MPI_Comm comm, const char *path, AmrTrace *out)
{
  AmrTrace t;
  int e, fail;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(1, &t));
  t->comm = comm;
  PetscCall(PetscStrncpy(t->path, path, sizeof t->path));
  e = MPI_File_open(comm, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &t->fh);
  fail = e != MPI_SUCCESS;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &fail, 1, MPI_INT, MPI_MAX, comm));
  if (fail) {
    if (e == MPI_SUCCESS) MPI_File_close(&t->fh);
    PetscCall(PetscFree(t));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "option -trace_loads %s: cannot open for writing", path);
  }
  *out = t;
  PetscFunctionReturn(0);
}

void AmrTraceEnd(AmrTrace t, const char **path, int64_t *end)
{
  *path = t->path;
  *end = t->end;
}

void AmrTraceSetEnd(AmrTrace t, int64_t end) { t->end = end; }

PetscErrorCode AmrTraceClose(AmrTrace *t)
{
  PetscFunctionBeginUser;
  if (!*t) PetscFunctionReturn(0);
  PetscCallMPI(MPI_File_close(&(*t)->fh));
  PetscCall(PetscFree(*t));
  PetscFunctionReturn(0);
}

/* The local cells encoded in curve order: weight, load type, centre. */
static PetscErrorCode encode_cells(const p4est_t *p4est, const double *w, const int *types, unsigned char *buf)
{
  const int cb = LB_TRACE_CELL_BYTES(P4EST_DIM);
  const double eta[3] = {0.5, 0.5, 0.5};

  PetscFunctionBeginUser;
  for (p4est_topidx_t tr = p4est->first_local_tree; tr <= p4est->last_local_tree; tr++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, tr);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++) {
      const p4est_locidx_t i = tree->quadrants_offset + (p4est_locidx_t)k;
      double x[3];
      AmrGeomQuadMap(p4est->connectivity, tr, p4est_quadrant_array_index(&tree->quadrants, k), eta, x, NULL);
      lb_trace_cell(P4EST_DIM, w[i], types ? types[i] : 0, x, buf + (size_t)i * cb);
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrTraceAppend(AmrTrace t, p4est_t *p4est, const lb_load_trace *head, const double *w, const int *types, double *cpu_s)
{
  const int P = p4est->mpisize, cb = LB_TRACE_CELL_BYTES(P4EST_DIM);
  const p4est_locidx_t n = p4est->local_num_quadrants;
  lb_load_trace h = *head;
  int64_t base, cells_at;
  unsigned char *buf;
  struct timespec t0, t1;

  PetscFunctionBeginUser;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  PetscCheck((size_t)n * cb < (size_t)1 << 31, t->comm, PETSC_ERR_SUP, "option -trace_loads: %d cells on one rank exceed one MPI write", (int)n);
  if (!t->started) {
    TRACE_IO(t, MPI_File_set_size(t->fh, (MPI_Offset)t->end));
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
      lb_trace_file_header(P4EST_DIM, fh);
      TRACE_IO(t, MPI_File_write_at(t->fh, 0, fh, LB_TRACE_FILE_BYTES, MPI_BYTE, MPI_STATUS_IGNORE));
    }
    TRACE_IO(t, MPI_File_write_at(t->fh, (MPI_Offset)base, buf, (int)hb, MPI_BYTE, MPI_STATUS_IGNORE));
    PetscCall(PetscFree2(buf, first));
  }
  /* every rank its cells, at the offset of its first cell */
  PetscCall(PetscMalloc1((size_t)n * cb + 1, &buf));
  PetscCall(encode_cells(p4est, w, types, buf));
  cells_at = base + LB_TRACE_CYCLE_BYTES + 24 * (int64_t)P + (int64_t)p4est->global_first_quadrant[p4est->mpirank] * cb;
  TRACE_IO(t, MPI_File_write_at_all(t->fh, (MPI_Offset)cells_at, buf, (int)((size_t)n * cb), MPI_BYTE, MPI_STATUS_IGNORE));
  PetscCall(PetscFree(buf));
  t->end = base + lb_trace_record_bytes(P4EST_DIM, P, h.ncells);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  *cpu_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  PetscFunctionReturn(0);
}
