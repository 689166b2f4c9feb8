/* Writing a checkpoint set (checkpoint.h): the new set staged beside the
 * current one (the forest saved by p4est with every cell's data, the state
 * record, their checksums, the manifest written last and read back), then
 * committed by one rename, the replaced set's files removed after it. */
#define _GNU_SOURCE /* fsync, pread, posix_fallocate; memfd_create */
#include "mesh/impl/checkpoint.h"
#include "mesh/p4est_dim.h"
#include "util/fileio.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>


/* Writing: cell i of the copy gets its quadrant data, then its entry of
 * every outside array. */
static void pack_cell(p4est_locidx_t i, p4est_quadrant_t *src, p4est_quadrant_t *dst, void *ctx)
{
  const CellLayout *L = ctx;
  unsigned char *o = dst->p.user_data;
  if (L->qsize) memcpy(o, src->p.user_data, L->qsize);
  o += L->qsize;
  for (int f = 0; f < L->nfields; f++) {
    memcpy(o, L->fdata[f] + (size_t)i * L->fsize[f], L->fsize[f]);
    o += L->fsize[f];
  }
}

/* The bytes p4est_save_ext writes for forest p with data_size bytes per
 * quadrant, saved as on one rank: the connectivity, padded to 32 bytes,
 * the header of 6 + 1 + trees integers, padded, then per quadrant its
 * coordinates, level and data.  p4est's own writer neither reports a
 * failed write by MPI-IO nor can be asked what it wrote: this is what the
 * file must hold. */
static long long forest_bytes(p4est_t *p, size_t data_size)
{
  sc_array_t *conn = p4est_connectivity_deflate(p->connectivity, P4EST_CONN_ENCODE_NONE);
  const long long head = ((long long)conn->elem_count * (long long)conn->elem_size + 31) / 32 * 32 + 8 * (7 + (long long)p->connectivity->num_trees);
  sc_array_destroy(conn);
  return (head + 31) / 32 * 32 + (long long)p->global_num_quadrants * (long long)((P4EST_DIM + 1) * sizeof(p4est_qcoord_t) + data_size);
}

/* Make a new, empty file at path with room for its bytes, so that a full
 * disk is an error here and not an abort inside p4est's writer or a write
 * OMPIO does not report; a link or device in its place (an MPI-IO writer
 * would write through it) is refused.  Rank 0; errno, or -1 for a path
 * that is not a regular file. */
static int reserve(const char *path, long long bytes)
{
  struct stat sb;
  int fd, err;
  if (!lstat(path, &sb) && !S_ISREG(sb.st_mode)) return -1;
  if (unlink(path) && errno != ENOENT) return errno;
  fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return errno;
  err = bytes > 0 ? posix_fallocate(fd, 0, (off_t)bytes) : 0;
  /* a file system without preallocation still takes the write */
  if (err == EOPNOTSUPP || err == EINVAL) err = 0;
  if (close(fd) && !err) err = errno;
  if (err) (void)unlink(path);
  return err;
}

/* The forest file of size bytes should hold want: when it does not, the
 * reason the system gives for the missing bytes (p4est does not pass it
 * on), or 0 when it takes them now.  Rank 0. */
static int forest_shortfall(const char *path, long long size, long long want)
{
  int fd = open(path, O_WRONLY), err;
  if (fd < 0) return errno;
  err = posix_fallocate(fd, 0, (off_t)PetscMax(size, want));
  close(fd);
  return err == EOPNOTSUPP || err == EINVAL ? 0 : err;
}

/* Open MPI's MPI-IO (OMPIO), under p4est_save_ext, prints a line of its
 * own for every write the disk refuses ("mca_fbtl_posix_pwritev: error in
 * (p)write(v): No space left on device", often tens), on a fixed output
 * stream no MCA verbosity silences, and does not pass the failure on
 * (ROMIO passes it on, and p4est then aborts).  The size check after the
 * save gives the one line a failure needs, so this rank's stderr is held
 * in a memory file while p4est saves (and while the ranks file is written,
 * checkpoint_ranks.c): AmrCkpHoldStderr returns the memory file and
 * *saved the real stderr (-1, -1: not held, the lines pass). */
int AmrCkpHoldStderr(int *saved)
{
  int mem = memfd_create("amrdlb-forest-save", MFD_CLOEXEC);
  *saved = -1;
  if (mem < 0) return -1;
  fflush(stderr);
  if ((*saved = dup(STDERR_FILENO)) < 0 || dup2(mem, STDERR_FILENO) < 0) {
    if (*saved >= 0) close(*saved);
    close(mem);
    return *saved = -1;
  }
  return mem;
}

/* Stderr back; what was held is dropped when the save failed (the error
 * line says why), else passed on: a line no failure explains is kept. */
void AmrCkpReleaseStderr(int mem, int saved, int drop)
{
  char buf[4096];
  ssize_t n;
  if (mem < 0) return;
  fflush(stderr);
  (void)dup2(saved, STDERR_FILENO);
  close(saved);
  if (!drop && lseek(mem, 0, SEEK_SET) == 0)
    while ((n = read(mem, buf, sizeof buf)) > 0) (void)AmrFileWrite(STDERR_FILENO, buf, (size_t)n, -1);
  close(mem);
}

/* Open MPI's MPI-IO (OMPIO, under p4est's writer) opens a POSIX semaphore
 * for a file's shared file pointer named after the file's base name alone,
 * /dev/shm/sem.OMPIO_NAME, and removes it when it closes the file; a
 * process killed meanwhile leaves it behind, and one left at 0 hangs every
 * later writer of a file of that name, in any folder.  Rank 0 removes the
 * semaphore of a file's name (the forest's, the ranks file's) before the
 * writer opens the file (no other run writes it: the checkpoint's lock)
 * and after it closed it. */
void AmrCkpDropOmpioSemaphore(const char *path)
{
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  char name[252]; /* OMPIO cuts its names to as many bytes */
  memcpy(name, "OMPIO_", 6);
  strncpy(name + 6, base, sizeof name - 7);
  name[sizeof name - 1] = '\0';
  (void)sem_unlink(name);
}

PetscErrorCode AmrCkpReserve(MPI_Comm comm, const char *path, long long bytes)
{
  int rank, err = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) err = reserve(path, bytes);
  if (!rank && !err) AmrCkpDropOmpioSemaphore(path);
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(err >= 0, comm, PETSC_ERR_USER_INPUT, "cannot write checkpoint file '%s': it exists and is not a regular file (a link or a device)", AmrPathShort(path));
  PetscCall(AmrCkpCheckErrno(comm, err, "write", path));
  PetscFunctionReturn(0);
}

/* The sequence number of the set to stage, one more than the current
 * manifest's (its files are not touched until the commit), and the stale
 * P.manifest.new of a staging that was cut removed. */
static PetscErrorCode stage_sequence(MPI_Comm comm, const char *mpath, const char *npath, long long *seq)
{
  int rank, err = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  *seq = 1;
  if (!rank) {
    char *text, msg[256];
    size_t len;
    CkpManifest old;
    err = AmrFileRead(mpath, 0, &text, &len);
    if (!err) {
      PetscCall(AmrCkpManifestParse(text, &old, msg, sizeof msg));
      if (!msg[0]) *seq = old.seq + 1;
      PetscCall(AmrCkpManifestFree(&old));
    }
    free(text);
    err = unlink(npath) && errno != ENOENT ? errno : 0;
  }
  PetscCallMPI(MPI_Bcast(seq, 1, MPI_LONG_LONG, 0, comm));
  PetscCall(AmrCkpCheckErrno(comm, err, "remove the stale", npath));
  PetscFunctionReturn(0);
}

/* The forest file at path: a copy of the forest whose quadrants carry all
 * the cell data of layout L, saved by p4est, then checksummed into f.
 * p4est_save_ext aborts when it cannot open the file or write its header,
 * and a failed write of its quadrants passes silently: the room is made
 * first, and the size checked after. */
static PetscErrorCode stage_forest(p4est_t *p4est, const CellLayout *L, const char *path, CkpFile *f)
{
  MPI_Comm comm = p4est->mpicomm;
  p4est_t *copy;
  long long want;
  int rank, err = 0, saved, mem;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  copy = p4est_copy(p4est, 0);
  if (AmrCkpLayoutTotal(L)) {
    p4est_reset_data(copy, AmrCkpLayoutTotal(L), NULL, NULL);
    AmrCkpEachCell(p4est, copy, pack_cell, (void *)L);
  }
  want = forest_bytes(copy, AmrCkpLayoutTotal(L));
  err = AmrCkpReserve(comm, path, want);
  if (err) p4est_destroy(copy);
  PetscCall(err);
  mem = AmrCkpHoldStderr(&saved);
  p4est_save_ext(path, copy, AmrCkpLayoutTotal(L) > 0, 0);
  p4est_destroy(copy);
  PetscCallMPI(MPI_Barrier(comm));
  if (!rank) AmrCkpDropOmpioSemaphore(path);
  err = AmrCkpChecksumFile(comm, path, f);
  AmrCkpReleaseStderr(mem, saved, !err && f->size != want);
  PetscCall(err);
  if (f->size == want) PetscFunctionReturn(0);
  err = 0;
  if (!rank) {
    err = forest_shortfall(path, f->size, want);
    (void)unlink(path);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  SETERRQ(comm, PETSC_ERR_USER_INPUT, "cannot write checkpoint file '%s': %s (%lld of %lld bytes written)", AmrPathShort(path),
          err ? AmrFileStrerror(err) : "the write stopped short", f->size, want);
}

/* The state file at path: rank 0's record, checksummed into f.  Rank 0's
 * record is the file: every rank checks the file against it (a rank's own
 * copy may differ, its clocks for one). */
static PetscErrorCode stage_state(MPI_Comm comm, AmrCkpState st, const char *path, CkpFile *f)
{
  unsigned char *sbuf;
  size_t slen = 0;
  unsigned long long n;
  int rank, err = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(AmrCkpStateSerialize(st, &sbuf, &slen));
  n = slen;
  PetscCallMPI(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm));
  if (n != slen) {
    PetscCall(PetscFree(sbuf));
    PetscCall(PetscMalloc1(n + 1, &sbuf));
    slen = (size_t)n;
  }
  PetscCall(AmrCkpBcastBytes(comm, sbuf, slen));
  if (!rank) err = AmrCkpWriteSynced(path, sbuf, slen);
  PetscCall(AmrCkpCheckErrno(comm, err, "write", path));
  f->size = (long long)slen;
  AmrCkpSetBlocks(f);
  PetscCall(PetscMalloc1(f->nblocks + 1, &f->crc));
  for (int b = 0; b < f->nblocks; b++) {
    const long long off = (long long)b * f->block;
    f->crc[b] = AmrCkpCrc(sbuf + off, (size_t)PetscMin(f->block, f->size - off));
  }
  PetscCall(PetscFree(sbuf));
  PetscCall(AmrCkpVerifyFile(comm, path, NULL, f));
  PetscFunctionReturn(0);
}

/* The manifest m of the forest p4est (cells of layout L) written to npath
 * by rank 0, read back and its directory synced; collective. */
static PetscErrorCode stage_manifest(p4est_t *p4est, const CellLayout *L, const CkpManifest *m, const char *npath)
{
  MPI_Comm comm = p4est->mpicomm;
  int rank, err = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) {
    size_t cap = 512 + 24 * (size_t)L->nfields, o;
    char *text;
    for (int k = 0; k < 2; k++) cap += 9 * (size_t)m->file[k].nblocks + 64;
    PetscCall(PetscMalloc1(cap, &text));
    o = (size_t)snprintf(text, cap, "%s %d\ndimension %d\nsequence %lld\ncells %lld\nquadrant_data %zu\nfields %d", CKP_MAGIC, AMR_CHECKPOINT_VERSION,
                         P4EST_DIM, m->seq, (long long)p4est->global_num_quadrants, L->qsize, L->nfields);
    for (int f = 0; f < L->nfields; f++) o += (size_t)snprintf(text + o, cap - o, " %zu", L->fsize[f]);
    o += (size_t)snprintf(text + o, cap - o, "\n");
    for (int k = 0; k < 2; k++) {
      o += (size_t)snprintf(text + o, cap - o, "file %s %lld %lld %d", amr_ckp_file_kinds[k], m->file[k].size, m->file[k].block, m->file[k].nblocks);
      for (int b = 0; b < m->file[k].nblocks; b++) o += (size_t)snprintf(text + o, cap - o, " %08x", (unsigned)m->file[k].crc[b]);
      o += (size_t)snprintf(text + o, cap - o, "\n");
    }
    o += (size_t)snprintf(text + o, cap - o, "file %s %lld %lld\n", amr_ckp_file_kinds[2], m->ranks_size, m->ranks_parts);
    o += (size_t)snprintf(text + o, cap - o, "crc32 %08x\n", (unsigned)AmrCkpCrc(text, o));
    err = AmrCkpWriteSynced(npath, text, o);
    if (!err) {
      char *back;
      size_t blen;
      err = AmrFileRead(npath, 0, &back, &blen);
      if (!err && (blen != o || memcmp(back, text, o))) err = EIO;
      free(back);
    }
    /* the new files' names on disk before the commit may name them */
    if (!err) err = AmrFileSyncDir(npath);
    PetscCall(PetscFree(text));
  }
  PetscCall(AmrCkpCheckErrno(comm, err, "write", npath));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCheckpointStage(const char *prefix, p4est_t *p4est, int nfields, const AmrField *fields, AmrCkpState st)
{
  MPI_Comm comm = p4est->mpicomm;
  char mpath[PETSC_MAX_PATH_LEN], npath[PETSC_MAX_PATH_LEN], path[3][PETSC_MAX_PATH_LEN];
  CkpManifest m;
  CellLayout L;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCheck(nfields >= 0 && nfields <= CKP_MAX_FIELDS, comm, PETSC_ERR_ARG_OUTOFRANGE, "checkpoint: %d cell arrays, at most %d", nfields, CKP_MAX_FIELDS);
  memset(&m, 0, sizeof m);
  memset(&L, 0, sizeof L);
  PetscCall(AmrCkpPath(prefix, 0, "manifest", mpath));
  PetscCall(AmrCkpPath(prefix, 0, "manifest.new", npath));
  PetscCall(stage_sequence(comm, mpath, npath, &m.seq));
  for (int k = 0; k < 3; k++) PetscCall(AmrCkpPath(prefix, m.seq, amr_ckp_file_kinds[k], path[k]));
  {
    int parts;
    PetscCallMPI(MPI_Comm_size(comm, &parts));
    m.ranks_parts = parts;
  }
  L.qsize = p4est->data_size;
  L.nfields = nfields;
  for (int f = 0; f < nfields; f++) {
    L.fsize[f] = fields[f].size;
    L.fdata[f] = *fields[f].data;
  }
  ierr = stage_forest(p4est, &L, path[0], &m.file[0]);
  if (!ierr) ierr = stage_state(comm, st, path[1], &m.file[1]);
  if (!ierr) ierr = AmrCkpStageRanks(comm, st, path[2], &m.ranks_size);
  if (!ierr) ierr = stage_manifest(p4est, &L, &m, npath);
  PetscCall(AmrCkpManifestFree(&m));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCheckpointCommit(MPI_Comm comm, const char *prefix)
{
  char mpath[PETSC_MAX_PATH_LEN], npath[PETSC_MAX_PATH_LEN];
  int rank, err = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(AmrCkpPath(prefix, 0, "manifest", mpath));
  PetscCall(AmrCkpPath(prefix, 0, "manifest.new", npath));
  if (!rank) {
    char *text, msg[256];
    size_t len;
    int rerr;
    CkpManifest old, staged;
    long long old_seq = 0;
    memset(&staged, 0, sizeof staged);
    err = AmrFileRead(npath, 0, &text, &len);
    if (!err) {
      PetscCall(AmrCkpManifestParse(text, &staged, msg, sizeof msg));
      free(text);
      if (msg[0]) err = EINVAL;
    }
    rerr = AmrFileRead(mpath, 0, &text, &len);
    if (!rerr) {
      PetscCall(AmrCkpManifestParse(text, &old, msg, sizeof msg));
      if (!msg[0]) old_seq = old.seq;
      PetscCall(AmrCkpManifestFree(&old));
      free(text);
    }
    if (!err && rename(npath, mpath)) err = errno;
    /* the old set stays until the rename is on disk */
    if (!err) err = AmrFileSyncDir(mpath);
    if (!err) {
      /* the replaced set is garbage from here on */
      if (old_seq && old_seq != staged.seq)
        for (int k = 0; k < 3; k++) {
          char path[PETSC_MAX_PATH_LEN];
          PetscCall(AmrCkpPath(prefix, old_seq, amr_ckp_file_kinds[k], path));
          (void)unlink(path);
        }
    }
    PetscCall(AmrCkpManifestFree(&staged));
  }
  PetscCall(AmrCkpCheckErrno(comm, err, "commit the staged", npath));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCheckpointWrite(const char *prefix, p4est_t *p4est, int nfields, const AmrField *fields, AmrCkpState st)
{
  PetscFunctionBeginUser;
  PetscCall(AmrCheckpointStage(prefix, p4est, nfields, fields, st));
  PetscCall(AmrCheckpointCommit(p4est->mpicomm, prefix));
  PetscFunctionReturn(0);
}
