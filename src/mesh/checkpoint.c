/* Checkpoint sets (checkpoint.h): the manifest's format, the files'
 * block checksums and the per-cell layout that writing
 * (checkpoint_write.c) and reading share, and reading: the manifest and
 * every checksum verified by all ranks in parallel before p4est's loader,
 * which aborts on a bad file, is allowed to open the forest. */
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

const char *const amr_ckp_file_kinds[3] = {"forest", "state", "ranks"};

/* CRC-32 (IEEE 802.3) of n bytes, zlib's: the manifest's every checksum. */
uint32_t AmrCkpCrc(const void *p, size_t n) { return (uint32_t)crc32_z(0, p, n); }

void AmrCkpSetBlocks(CkpFile *f)
{
  f->block = CKP_MIN_BLOCK;
  while (f->size / f->block >= CKP_MAX_BLOCKS) f->block *= 2;
  f->nblocks = (int)((f->size + f->block - 1) / f->block);
}

PetscErrorCode AmrCkpManifestFree(CkpManifest *m)
{
  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) PetscCall(PetscFree(m->file[k].crc));
  PetscFunctionReturn(0);
}

/* P.manifest, P.manifest.new, P.S.forest, P.S.state */
PetscErrorCode AmrCkpPath(const char *prefix, long long seq, const char *kind, char *path)
{
  PetscFunctionBeginUser;
  if (seq > 0)
    PetscCall(PetscSNPrintf(path, PETSC_MAX_PATH_LEN, "%s.%lld.%s", prefix, seq, kind));
  else
    PetscCall(PetscSNPrintf(path, PETSC_MAX_PATH_LEN, "%s.%s", prefix, kind));
  PetscFunctionReturn(0);
}

/* Next whitespace-separated token of *s into tok; 0 at the end. */
static int token(const char **s, char *tok, size_t len)
{
  size_t n = 0;
  while (**s == ' ' || **s == '\n') (*s)++;
  while (**s && **s != ' ' && **s != '\n') {
    if (n + 1 < len) tok[n++] = **s;
    (*s)++;
  }
  tok[n] = '\0';
  return n > 0;
}

static int expect_word(const char **s, const char *word)
{
  char tok[64];
  return token(s, tok, sizeof tok) && !strcmp(tok, word);
}

static int read_ll(const char **s, long long *v)
{
  char tok[64], *end;
  if (!token(s, tok, sizeof tok)) return 0;
  errno = 0;
  *v = strtoll(tok, &end, 10);
  return !errno && !*end && *v >= 0;
}

/* Parse manifest text; on content a reader must refuse, msg gets the
 * reason (a PETSc error is returned only for failed allocations). */
PetscErrorCode AmrCkpManifestParse(const char *text, CkpManifest *m, char *msg, size_t msglen)
{
  const char *s = text, *tail;
  long long v;
  char tok[64];

  PetscFunctionBeginUser;
  memset(m, 0, sizeof *m);
  msg[0] = '\0';
  /* the version first: another version may checksum differently */
  if (!expect_word(&s, CKP_MAGIC) || !read_ll(&s, &v)) {
    PetscCall(PetscSNPrintf(msg, msglen, "not an amrdlb checkpoint manifest"));
    PetscFunctionReturn(0);
  }
  m->version = (int)v;
  if (v != AMR_CHECKPOINT_VERSION) {
    PetscCall(PetscSNPrintf(msg, msglen, "format version %lld, this program reads version %d", v, AMR_CHECKPOINT_VERSION));
    PetscFunctionReturn(0);
  }
  tail = strstr(text, "\ncrc32 ");
  while (tail && strstr(tail + 1, "\ncrc32 ")) tail = strstr(tail + 1, "\ncrc32 ");
  {
    unsigned int want;
    char end;
    if (!tail || sscanf(tail + 7, "%8x%c", &want, &end) != 2 || end != '\n' || tail[16] != '\0' ||
        AmrCkpCrc(text, (size_t)(tail - text) + 1) != (uint32_t)want) {
      PetscCall(PetscSNPrintf(msg, msglen, "the manifest is corrupted or incomplete (its checksum does not match)"));
      PetscFunctionReturn(0);
    }
  }
  if (!expect_word(&s, "dimension") || !read_ll(&s, &v)) goto malformed;
  m->dim = (int)v;
  if (!expect_word(&s, "sequence") || !read_ll(&s, &m->seq) || m->seq < 1) goto malformed;
  if (!expect_word(&s, "cells") || !read_ll(&s, &m->cells)) goto malformed;
  if (!expect_word(&s, "quadrant_data") || !read_ll(&s, &m->qsize)) goto malformed;
  if (!expect_word(&s, "fields") || !read_ll(&s, &v) || v > CKP_MAX_FIELDS) goto malformed;
  m->nfields = (int)v;
  for (int f = 0; f < m->nfields; f++)
    if (!read_ll(&s, &m->fsize[f])) goto malformed;
  for (int k = 0; k < 2; k++) {
    CkpFile *f = &m->file[k];
    if (!expect_word(&s, "file") || !expect_word(&s, amr_ckp_file_kinds[k]) || !read_ll(&s, &f->size) || !read_ll(&s, &f->block) || !read_ll(&s, &v)) goto malformed;
    /* any block size a writer chose is read; the buffer must fit memory */
    if (f->block < 1 || f->block > ((long long)1 << 30) || v != (f->size + f->block - 1) / f->block) goto malformed;
    f->nblocks = (int)v;
    PetscCall(PetscMalloc1(f->nblocks + 1, &f->crc));
    for (int b = 0; b < f->nblocks; b++) {
      char *end;
      if (!token(&s, tok, sizeof tok)) goto malformed;
      f->crc[b] = (uint32_t)strtoul(tok, &end, 16);
      if (*end || strlen(tok) != 8) goto malformed;
    }
  }
  if (!expect_word(&s, "file") || !expect_word(&s, amr_ckp_file_kinds[2]) || !read_ll(&s, &m->ranks_size) || !read_ll(&s, &m->ranks_parts) || m->ranks_parts < 1 ||
      m->ranks_parts > INT_MAX)
    goto malformed;
  if (s != tail) goto malformed;
  PetscFunctionReturn(0);
malformed:
  PetscCall(PetscSNPrintf(msg, msglen, "malformed manifest (near '%.40s')", s));
  PetscFunctionReturn(0);
}

/* Rank 0's len bytes at buf to every rank, in pieces MPI counts take. */
PetscErrorCode AmrCkpBcastBytes(MPI_Comm comm, void *buf, size_t len)
{
  PetscFunctionBeginUser;
  for (size_t o = 0; o < len; o += (size_t)INT_MAX) PetscCallMPI(MPI_Bcast((char *)buf + o, (int)PetscMin(len - o, (size_t)INT_MAX), MPI_BYTE, 0, comm));
  PetscFunctionReturn(0);
}

/* Rank 0 reads a file, every rank gets its bytes (malloc'd, the caller
 * frees them) or the same errno. */
static PetscErrorCode read_bcast(MPI_Comm comm, const char *path, char **buf, size_t *len, int *err)
{
  int rank;
  long long hdr[2];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) *err = AmrFileRead(path, 0, buf, len);
  hdr[0] = rank ? 0 : *err;
  hdr[1] = rank ? 0 : (long long)*len;
  PetscCallMPI(MPI_Bcast(hdr, 2, MPI_LONG_LONG, 0, comm));
  *err = (int)hdr[0];
  *len = (size_t)hdr[1];
  if (*err) PetscFunctionReturn(0);
  if (rank) *buf = malloc(*len + 1);
  PetscCheck(*buf, PETSC_COMM_SELF, PETSC_ERR_MEM, "checkpoint file '%s': no memory for its %zu bytes", AmrPathShort(path), *len);
  PetscCall(AmrCkpBcastBytes(comm, *buf, *len));
  (*buf)[*len] = '\0';
  PetscFunctionReturn(0);
}

/* Write a file with its data on disk before returning; errno (0: done). */
int AmrCkpWriteSynced(const char *path, const void *buf, size_t len)
{
  int fd, err = AmrFileOpen(path, O_WRONLY | O_CREAT | O_TRUNC, 0, &fd);
  if (err) return err;
  err = AmrFileWrite(fd, buf, len, 0);
  if (!err && fsync(fd)) err = errno;
  if (close(fd) && !err) err = errno;
  return err;
}

/* One rank's failure (errno) made collective: every rank raises it. */
PetscErrorCode AmrCkpCheckErrno(MPI_Comm comm, int err, const char *what, const char *path)
{
  int rank;

  PetscFunctionBeginUser;
  PetscCallMPI(AmrFileAgree(comm, &err, &rank));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "cannot %s checkpoint file '%s': %s", what, AmrPathShort(path), AmrFileStrerror(err));
  PetscFunctionReturn(0);
}

/* CRC-32 of block b of file f open as fd, through buf (f->block bytes);
 * returns errno (EIO for a short read). */
static int block_crc(int fd, const CkpFile *f, int b, unsigned char *buf, uint32_t *crc)
{
  const long long off = (long long)b * f->block, n = PetscMin(f->block, f->size - off);
  if (pread(fd, buf, (size_t)n, (off_t)off) != (ssize_t)n) return errno ? errno : EIO;
  *crc = AmrCkpCrc(buf, (size_t)n);
  return 0;
}

/* Sync a file every rank helped write and checksum its blocks, shared
 * among the ranks; every rank gets the size and the checksums. */
PetscErrorCode AmrCkpChecksumFile(MPI_Comm comm, const char *path, CkpFile *f)
{
  int rank, size, fd, err = 0;
  struct stat sb;
  unsigned char *buf;

  PetscFunctionBeginUser;
  memset(&sb, 0, sizeof sb);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  err = AmrFileOpen(path, O_RDONLY, 0, &fd);
  if (!err && (fsync(fd) || fstat(fd, &sb))) err = errno;
  if (err && fd >= 0) close(fd);
  PetscCall(AmrCkpCheckErrno(comm, err, "write", path));
  f->size = (long long)sb.st_size;
  PetscCallMPI(MPI_Bcast(&f->size, 1, MPI_LONG_LONG, 0, comm));
  AmrCkpSetBlocks(f);
  PetscCall(PetscCalloc1(f->nblocks + 1, &f->crc));
  PetscCall(PetscMalloc1(f->block, &buf));
  for (int b = rank; b < f->nblocks && !err; b += size) err = block_crc(fd, f, b, buf, &f->crc[b]);
  close(fd);
  PetscCall(PetscFree(buf));
  PetscCall(AmrCkpCheckErrno(comm, err, "read back", path));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, f->crc, f->nblocks, MPI_UINT32_T, MPI_BOR, comm));
  PetscFunctionReturn(0);
}

/* A file of the set against its manifest entry: present, of the recorded
 * size, every block's checksum equal; collective.  With mpath NULL, f is
 * what was just written and the file is read back before it counts. */
PetscErrorCode AmrCkpVerifyFile(MPI_Comm comm, const char *path, const char *mpath, const CkpFile *f)
{
  int rank, size, fd, bad = INT_MAX, err, erank;
  long long mm[2];
  struct stat sb;
  unsigned char *buf;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  err = AmrFileOpen(path, O_RDONLY, 0, &fd);
  if (!err && fstat(fd, &sb)) err = errno;
  PetscCallMPI(AmrFileAgree(comm, &err, &erank));
  if (err && fd >= 0) close(fd);
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s' cannot be read: %s", AmrPathShort(path), AmrFileStrerror(err));
  mm[0] = -(long long)sb.st_size;
  mm[1] = (long long)sb.st_size;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, mm, 2, MPI_LONG_LONG, MPI_MAX, comm));
  if (-mm[0] != mm[1] || mm[1] != f->size) close(fd);
  PetscCheck((-mm[0] == mm[1] && mm[1] == f->size) || mpath, comm, PETSC_ERR_USER_INPUT, "cannot write checkpoint file '%s': %lld bytes read back of %lld written",
             AmrPathShort(path), mm[1] != f->size ? mm[1] : -mm[0], f->size);
  PetscCheck(-mm[0] == mm[1] && mm[1] == f->size, comm, PETSC_ERR_USER_INPUT,
             "checkpoint file '%s' has %lld bytes, its manifest '%s' says %lld: it is truncated or was overwritten", AmrPathShort(path), mm[1] != f->size ? mm[1] : -mm[0],
             AmrPathShort(mpath), f->size);
  PetscCall(PetscMalloc1(f->block, &buf));
  for (int b = rank; b < f->nblocks; b += size) {
    uint32_t crc;
    if (block_crc(fd, f, b, buf, &crc) || crc != f->crc[b]) {
      bad = b;
      break;
    }
  }
  close(fd);
  PetscCall(PetscFree(buf));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, comm));
  PetscCheck(bad == INT_MAX || mpath, comm, PETSC_ERR_USER_INPUT, "cannot write checkpoint file '%s': bytes %lld to %lld read back differ from those written", AmrPathShort(path),
             (long long)bad * f->block, PetscMin(f->size, (long long)(bad + 1) * f->block) - 1);
  PetscCheck(bad == INT_MAX, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s' is corrupted: bytes %lld to %lld differ from their checksum in '%s'", AmrPathShort(path),
             (long long)bad * f->block, PetscMin(f->size, (long long)(bad + 1) * f->block) - 1, AmrPathShort(mpath));
  PetscFunctionReturn(0);
}

void AmrCkpEachCell(p4est_t *a, p4est_t *b, cell_fn fn, void *ctx)
{
  p4est_locidx_t i = 0;
  for (p4est_topidx_t t = a->first_local_tree; t <= a->last_local_tree; t++) {
    p4est_tree_t *ta = p4est_tree_array_index(a->trees, t), *tb = p4est_tree_array_index(b->trees, t);
    for (size_t k = 0; k < ta->quadrants.elem_count; k++, i++) fn(i, p4est_quadrant_array_index(&ta->quadrants, k), p4est_quadrant_array_index(&tb->quadrants, k), ctx);
  }
}

/* Reading: the reverse, the quadrant data into L->qbuf first. */
static void unpack_cell(p4est_locidx_t i, p4est_quadrant_t *q, p4est_quadrant_t *unused, void *ctx)
{
  const CellLayout *L = ctx;
  const unsigned char *o = q->p.user_data;
  (void)unused;
  if (L->qsize) memcpy(L->qbuf + (size_t)i * L->qsize, o, L->qsize);
  o += L->qsize;
  for (int f = 0; f < L->nfields; f++) {
    memcpy(L->fdata[f] + (size_t)i * L->fsize[f], o, L->fsize[f]);
    o += L->fsize[f];
  }
}

static void restore_quadrant_data(p4est_locidx_t i, p4est_quadrant_t *q, p4est_quadrant_t *unused, void *ctx)
{
  const CellLayout *L = ctx;
  (void)unused;
  memcpy(q->p.user_data, L->qbuf + (size_t)i * L->qsize, L->qsize);
}

size_t AmrCkpLayoutTotal(const CellLayout *L)
{
  size_t n = L->qsize;
  for (int f = 0; f < L->nfields; f++) n += L->fsize[f];
  return n;
}

/* The manifest of prefix, parsed and checked for this program's dimension
 * and version; the path in mpath. */
static PetscErrorCode manifest_read(MPI_Comm comm, const char *prefix, char *mpath, CkpManifest *m)
{
  char msg[256], *text;
  size_t len;
  int err;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpPath(prefix, 0, "manifest", mpath));
  PetscCall(read_bcast(comm, mpath, &text, &len, &err));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' cannot be read: %s", AmrPathShort(mpath), AmrFileStrerror(err));
  PetscCheck(strlen(text) == len, comm, PETSC_ERR_USER_INPUT, "checkpoint '%s': not an amrdlb checkpoint manifest", AmrPathShort(mpath));
  PetscCall(AmrCkpManifestParse(text, m, msg, sizeof msg));
  free(text);
  if (msg[0]) {
    PetscCall(AmrCkpManifestFree(m));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint '%s': %s", AmrPathShort(mpath), msg);
  }
  if (m->dim != P4EST_DIM) {
    PetscCall(AmrCkpManifestFree(m));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' holds a %dD forest, this program runs in %dD", AmrPathShort(mpath), m->dim, P4EST_DIM);
  }
  PetscFunctionReturn(0);
}

/* The state file of the verified manifest m into a new record *st, and
 * with ranks the ranks file's part of each rank (on as many ranks). */
static PetscErrorCode state_read(MPI_Comm comm, const char *prefix, const char *mpath, const CkpManifest *m, PetscBool ranks, AmrCkpState *st)
{
  char path[PETSC_MAX_PATH_LEN], *sbuf;
  size_t len;
  int err;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  *st = NULL;
  PetscCall(AmrCkpPath(prefix, m->seq, amr_ckp_file_kinds[1], path));
  PetscCall(AmrCkpVerifyFile(comm, path, mpath, &m->file[1]));
  PetscCall(read_bcast(comm, path, &sbuf, &len, &err));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s' cannot be read: %s", AmrPathShort(path), AmrFileStrerror(err));
  PetscCall(AmrCkpStateCreate(comm, st));
  ierr = AmrCkpStateParse(*st, mpath, path, (const unsigned char *)sbuf, len);
  free(sbuf);
  if (!ierr && ranks) ierr = AmrCkpPath(prefix, m->seq, amr_ckp_file_kinds[2], path);
  if (!ierr && ranks) ierr = AmrCkpReadRanks(comm, path, mpath, m->ranks_size, m->ranks_parts, *st);
  if (ierr) PetscCall(AmrCkpStateDestroy(st));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCheckpointReadState(MPI_Comm comm, const char *prefix, AmrCkpState *st)
{
  char mpath[PETSC_MAX_PATH_LEN];
  CkpManifest m;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  *st = NULL;
  PetscCall(manifest_read(comm, prefix, mpath, &m));
  ierr = state_read(comm, prefix, mpath, &m, PETSC_FALSE, st);
  PetscCall(AmrCkpManifestFree(&m));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCheckpointRead(MPI_Comm comm, const char *prefix, p4est_connectivity_t *conn, size_t data_size, int nfields, const AmrField *fields,
                                 p4est_t **out, p4est_connectivity_t **conn_out, AmrCkpState *st)
{
  char mpath[PETSC_MAX_PATH_LEN], path[PETSC_MAX_PATH_LEN];
  CkpManifest m;
  CellLayout L;
  p4est_t *p4est;
  p4est_connectivity_t *lconn;

  PetscFunctionBeginUser;
  *out = NULL;
  if (conn_out) *conn_out = NULL;
  *st = NULL;
  PetscCall(manifest_read(comm, prefix, mpath, &m));
  if (m.qsize != (long long)data_size || m.nfields != nfields) {
    PetscCall(AmrCkpManifestFree(&m));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' holds %lld bytes of quadrant data and %d cell arrays per cell, this run expects %zu bytes and %d", AmrPathShort(mpath),
            m.qsize, m.nfields, data_size, nfields);
  }
  L.qsize = data_size;
  L.nfields = nfields;
  for (int f = 0; f < nfields; f++) {
    L.fsize[f] = fields[f].size;
    if (m.fsize[f] != (long long)fields[f].size) {
      const long long have = m.fsize[f];
      PetscCall(AmrCkpManifestFree(&m));
      SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint '%s': cell array %d has %lld bytes per cell, this run expects %zu", AmrPathShort(mpath), f, have, fields[f].size);
    }
  }
  {
    PetscErrorCode ierr;
    PetscCall(AmrCkpPath(prefix, m.seq, amr_ckp_file_kinds[0], path));
    ierr = AmrCkpVerifyFile(comm, path, mpath, &m.file[0]);
    /* verified: now the state and the forest can be trusted */
    if (!ierr) ierr = state_read(comm, prefix, mpath, &m, PETSC_TRUE, st);
    if (ierr) PetscCall(AmrCkpManifestFree(&m));
    PetscCall(ierr);
  }
  p4est = p4est_load_ext(path, comm, AmrCkpLayoutTotal(&L), AmrCkpLayoutTotal(&L) > 0, 1, 1, NULL, &lconn);
  PetscCall(AmrCkpManifestFree(&m));
  if (conn) {
    if (!p4est_connectivity_is_equal(conn, lconn)) {
      p4est_destroy(p4est);
      p4est_connectivity_destroy(lconn);
      SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' was written on another coarse mesh than this run's (another -mesh, or another -boundary_shape)", AmrPathShort(mpath));
    }
    p4est->connectivity = conn;
    p4est_connectivity_destroy(lconn);
  } else {
    *conn_out = lconn;
  }

  /* every cell's data back into its quadrant and the outside arrays */
  for (int f = 0; f < nfields; f++) {
    PetscCall(PetscFree(*fields[f].data));
    PetscCall(PetscMalloc((size_t)p4est->local_num_quadrants * fields[f].size + 1, fields[f].data));
    L.fdata[f] = *fields[f].data;
  }
  if (AmrCkpLayoutTotal(&L) > data_size) {
    PetscCall(PetscMalloc1((size_t)p4est->local_num_quadrants * data_size + 1, &L.qbuf));
    AmrCkpEachCell(p4est, p4est, unpack_cell, &L);
    p4est_reset_data(p4est, data_size, NULL, NULL);
    if (data_size) AmrCkpEachCell(p4est, p4est, restore_quadrant_data, &L);
    PetscCall(PetscFree(L.qbuf));
  }
  *out = p4est;
  PetscFunctionReturn(0);
}
