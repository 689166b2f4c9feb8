/* Checkpoint sets (checkpoint.h): the manifest written and renamed last,
 * checksums verified by all ranks in parallel before p4est's loader, which
 * aborts on a bad file, is allowed to open the forest. */
#define _GNU_SOURCE /* fsync, pread, posix_fallocate; memfd_create */
#include "mesh/checkpoint.h"
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

/* Checksums per block rather than per file, so that writers and readers
 * share the work of a large forest file among their ranks: blocks of at
 * least 64 KiB, doubled until a file has at most 1024 of them (a 10 GB
 * forest: 16 MiB blocks, a manifest line of 9 KB). */
#define CKP_MIN_BLOCK ((long long)1 << 16)
#define CKP_MAX_BLOCKS 1024
#define CKP_MAX_FIELDS 32
#define CKP_MAGIC "amrdlb-checkpoint"
#define CKP_STATE_MAGIC "AMRDLBST"

uint32_t AmrCrc32(uint32_t crc, const void *p, size_t n)
{
  static uint32_t table[256];
  static int ready;
  const unsigned char *b = p;

  if (!ready) {
    for (uint32_t i = 0; i < 256; i++) {
      uint32_t c = i;
      for (int k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    ready = 1;
  }
  crc = ~crc;
  for (size_t i = 0; i < n; i++) crc = table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
  return ~crc;
}

/* ------------------------------------------------------------ state record */

enum { CKP_INT = 1, CKP_REAL, CKP_STRING, CKP_BYTES };
static const char *const type_names[] = {"", "integer", "real", "string", "byte blob"};

typedef struct {
  char *name;
  int type;
  size_t len;
  unsigned char *val; /* integers and reals: 8 bytes little-endian */
} CkpEntry;

struct AmrCkpState_s {
  MPI_Comm comm;
  int n, cap;
  CkpEntry *e;
  char source[PETSC_MAX_PATH_LEN]; /* the manifest it was read from, for messages */
};

static void put_le(unsigned char *p, uint64_t v, int nbytes)
{
  for (int i = 0; i < nbytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int nbytes)
{
  uint64_t v = 0;
  for (int i = 0; i < nbytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

PetscErrorCode AmrCkpStateCreate(MPI_Comm comm, AmrCkpState *st)
{
  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(1, st));
  (*st)->comm = comm;
  PetscCall(PetscStrncpy((*st)->source, "(not read from a file)", sizeof (*st)->source));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateDestroy(AmrCkpState *st)
{
  PetscFunctionBeginUser;
  if (!*st) PetscFunctionReturn(0);
  for (int i = 0; i < (*st)->n; i++) PetscCall(PetscFree2((*st)->e[i].name, (*st)->e[i].val));
  PetscCall(PetscFree((*st)->e));
  PetscCall(PetscFree(*st));
  PetscFunctionReturn(0);
}

static CkpEntry *find(AmrCkpState st, const char *name)
{
  for (int i = 0; i < st->n; i++)
    if (!strcmp(st->e[i].name, name)) return &st->e[i];
  return NULL;
}

static PetscErrorCode set_entry(AmrCkpState st, const char *name, int type, const void *p, size_t n)
{
  CkpEntry *e = find(st, name);
  size_t nl = strlen(name);

  PetscFunctionBeginUser;
  PetscCheck(nl > 0 && nl < 65536, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "checkpoint state: entry name of %zu characters", nl);
  if (e) {
    PetscCall(PetscFree2(e->name, e->val));
  } else {
    if (st->n == st->cap) {
      CkpEntry *ne;
      st->cap = st->cap ? 2 * st->cap : 16;
      PetscCall(PetscMalloc1(st->cap, &ne));
      if (st->n) PetscCall(PetscArraycpy(ne, st->e, st->n));
      PetscCall(PetscFree(st->e));
      st->e = ne;
    }
    e = &st->e[st->n++];
  }
  PetscCall(PetscMalloc2(nl + 1, &e->name, n + 1, &e->val));
  memcpy(e->name, name, nl + 1);
  if (n) memcpy(e->val, p, n);
  e->val[n] = 0; /* a string's terminator */
  e->type = type;
  e->len = n;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetInt(AmrCkpState st, const char *name, int64_t v)
{
  unsigned char b[8];

  PetscFunctionBeginUser;
  put_le(b, (uint64_t)v, 8);
  PetscCall(set_entry(st, name, CKP_INT, b, 8));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetReal(AmrCkpState st, const char *name, double v)
{
  unsigned char b[8];
  uint64_t bits;

  PetscFunctionBeginUser;
  memcpy(&bits, &v, 8);
  put_le(b, bits, 8);
  PetscCall(set_entry(st, name, CKP_REAL, b, 8));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetString(AmrCkpState st, const char *name, const char *v)
{
  PetscFunctionBeginUser;
  PetscCall(set_entry(st, name, CKP_STRING, v, strlen(v)));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetBytes(AmrCkpState st, const char *name, const void *p, size_t n)
{
  PetscFunctionBeginUser;
  PetscCall(set_entry(st, name, CKP_BYTES, p, n));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateHas(AmrCkpState st, const char *name, PetscBool *has)
{
  PetscFunctionBeginUser;
  *has = find(st, name) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode get_entry(AmrCkpState st, const char *name, int type, CkpEntry **e)
{
  PetscFunctionBeginUser;
  *e = find(st, name);
  PetscCheck(*e, st->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' has no state entry '%s'", AmrPathShort(st->source), name);
  PetscCheck((*e)->type == type, st->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s': state entry '%s' is a %s, not a %s", AmrPathShort(st->source), name,
             type_names[(*e)->type], type_names[type]);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetInt(AmrCkpState st, const char *name, int64_t *v)
{
  CkpEntry *e;

  PetscFunctionBeginUser;
  PetscCall(get_entry(st, name, CKP_INT, &e));
  *v = (int64_t)get_le(e->val, 8);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetReal(AmrCkpState st, const char *name, double *v)
{
  CkpEntry *e;
  uint64_t bits;

  PetscFunctionBeginUser;
  PetscCall(get_entry(st, name, CKP_REAL, &e));
  bits = get_le(e->val, 8);
  memcpy(v, &bits, 8);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetString(AmrCkpState st, const char *name, const char **v)
{
  CkpEntry *e;

  PetscFunctionBeginUser;
  PetscCall(get_entry(st, name, CKP_STRING, &e));
  *v = (const char *)e->val;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetBytes(AmrCkpState st, const char *name, const void **p, size_t *n)
{
  CkpEntry *e;

  PetscFunctionBeginUser;
  PetscCall(get_entry(st, name, CKP_BYTES, &e));
  *p = e->val;
  *n = e->len;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateCheckString(AmrCkpState st, const char *name, const char *expected)
{
  const char *v;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetString(st, name, &v));
  PetscCheck(!strcmp(v, expected), st->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' was written with %s '%s', this run has '%s'", AmrPathShort(st->source), name, v,
             expected);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateCheckInt(AmrCkpState st, const char *name, int64_t expected)
{
  int64_t v;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetInt(st, name, &v));
  PetscCheck(v == expected, st->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' was written with %s %lld, this run has %lld", AmrPathShort(st->source), name, (long long)v,
             (long long)expected);
  PetscFunctionReturn(0);
}

/* The record as bytes: magic, version, count, then per entry the name's
 * length and bytes, the type, the value's length and bytes. */
static PetscErrorCode state_serialize(AmrCkpState st, unsigned char **buf, size_t *len)
{
  size_t n = 16, o;

  PetscFunctionBeginUser;
  for (int i = 0; i < st->n; i++) n += 4 + strlen(st->e[i].name) + 4 + 8 + st->e[i].len;
  PetscCall(PetscMalloc1(n, buf));
  memcpy(*buf, CKP_STATE_MAGIC, 8);
  put_le(*buf + 8, AMR_CHECKPOINT_VERSION, 4);
  put_le(*buf + 12, (uint64_t)st->n, 4);
  o = 16;
  for (int i = 0; i < st->n; i++) {
    const size_t nl = strlen(st->e[i].name);
    put_le(*buf + o, nl, 4);
    memcpy(*buf + o + 4, st->e[i].name, nl);
    o += 4 + nl;
    put_le(*buf + o, (uint64_t)st->e[i].type, 4);
    put_le(*buf + o + 4, st->e[i].len, 8);
    if (st->e[i].len) memcpy(*buf + o + 12, st->e[i].val, st->e[i].len);
    o += 12 + st->e[i].len;
  }
  *len = n;
  PetscFunctionReturn(0);
}

/* Parse a serialised record (already checksummed, so a failure here is a
 * writer of another format); collective because buf is the same everywhere. */
static PetscErrorCode state_parse(MPI_Comm comm, const char *path, const unsigned char *buf, size_t len, AmrCkpState st)
{
  size_t o = 16;
  uint64_t count;

  PetscFunctionBeginUser;
  PetscCheck(len >= 16 && !memcmp(buf, CKP_STATE_MAGIC, 8) && get_le(buf + 8, 4) == AMR_CHECKPOINT_VERSION, comm, PETSC_ERR_USER_INPUT,
             "checkpoint file '%s' is not a state record of format version %d", AmrPathShort(path), AMR_CHECKPOINT_VERSION);
  count = get_le(buf + 12, 4);
  for (uint64_t i = 0; i < count; i++) {
    char name[65536];
    size_t nl, vl;
    int type;
    PetscCheck(len - o >= 4, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s': state record ends inside entry %d", AmrPathShort(path), (int)i);
    nl = (size_t)get_le(buf + o, 4);
    PetscCheck(nl > 0 && nl < sizeof name && len - o - 4 >= nl + 12, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s': state record ends inside entry %d",
               AmrPathShort(path), (int)i);
    memcpy(name, buf + o + 4, nl);
    name[nl] = '\0';
    o += 4 + nl;
    type = (int)get_le(buf + o, 4);
    vl = (size_t)get_le(buf + o + 4, 8);
    o += 12;
    PetscCheck(type >= CKP_INT && type <= CKP_BYTES && vl <= len - o && (type >= CKP_STRING || vl == 8), comm, PETSC_ERR_USER_INPUT,
               "checkpoint file '%s': state entry '%s' is malformed", AmrPathShort(path), name);
    PetscCall(set_entry(st, name, type, buf + o, vl));
    o += vl;
  }
  PetscCheck(o == len, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s': %zu bytes after the last state entry", AmrPathShort(path), len - o);
  PetscFunctionReturn(0);
}

/* -------------------------------------------------------------- manifest */

typedef struct {
  long long size, block;
  int nblocks;
  uint32_t *crc;
} CkpFile;

static void set_blocks(CkpFile *f)
{
  f->block = CKP_MIN_BLOCK;
  while (f->size / f->block >= CKP_MAX_BLOCKS) f->block *= 2;
  f->nblocks = (int)((f->size + f->block - 1) / f->block);
}

typedef struct {
  int version, dim, nfields;
  long long seq, cells, qsize;
  long long fsize[CKP_MAX_FIELDS];
  CkpFile file[2]; /* forest, state */
} CkpManifest;

static const char *const file_kinds[2] = {"forest", "state"};

static PetscErrorCode manifest_free(CkpManifest *m)
{
  PetscFunctionBeginUser;
  for (int k = 0; k < 2; k++) PetscCall(PetscFree(m->file[k].crc));
  PetscFunctionReturn(0);
}

/* P.manifest, P.manifest.new, P.S.forest, P.S.state */
static PetscErrorCode ckp_path(const char *prefix, long long seq, const char *kind, char *path)
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
static PetscErrorCode manifest_parse(const char *text, CkpManifest *m, char *msg, size_t msglen)
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
        AmrCrc32(0, text, (size_t)(tail - text) + 1) != (uint32_t)want) {
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
    if (!expect_word(&s, "file") || !expect_word(&s, file_kinds[k]) || !read_ll(&s, &f->size) || !read_ll(&s, &f->block) || !read_ll(&s, &v)) goto malformed;
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
  if (s != tail) goto malformed;
  PetscFunctionReturn(0);
malformed:
  PetscCall(PetscSNPrintf(msg, msglen, "malformed manifest (near '%.40s')", s));
  PetscFunctionReturn(0);
}

/* Read a whole file into a PetscMalloc'd NUL-terminated buffer; returns
 * errno (0: read).  Not collective. */
static PetscErrorCode read_all(const char *path, char **buf, size_t *len, int *err)
{
  FILE *f = NULL;
  long n;
  int fd;

  PetscFunctionBeginUser;
  *buf = NULL;
  *len = 0;
  /* a folder or a FIFO in the file's place is refused, not read or waited on */
  *err = AmrFileOpen(path, O_RDONLY, 0, &fd);
  if (!*err && !(f = fdopen(fd, "rb"))) {
    *err = errno;
    close(fd);
  }
  if (*err) PetscFunctionReturn(0);
  if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET)) {
    *err = errno ? errno : EIO;
    fclose(f);
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc1((size_t)n + 1, buf));
  if (fread(*buf, 1, (size_t)n, f) != (size_t)n) *err = EIO;
  fclose(f);
  (*buf)[n] = '\0';
  *len = (size_t)n;
  if (*err) PetscCall(PetscFree(*buf));
  PetscFunctionReturn(0);
}

/* Rank 0's len bytes at buf to every rank, in pieces MPI counts take. */
static PetscErrorCode bcast_bytes(MPI_Comm comm, void *buf, size_t len)
{
  PetscFunctionBeginUser;
  for (size_t o = 0; o < len; o += (size_t)INT_MAX) PetscCallMPI(MPI_Bcast((char *)buf + o, (int)PetscMin(len - o, (size_t)INT_MAX), MPI_BYTE, 0, comm));
  PetscFunctionReturn(0);
}

/* Rank 0 reads a file, every rank gets its bytes (or the same errno). */
static PetscErrorCode read_bcast(MPI_Comm comm, const char *path, char **buf, size_t *len, int *err)
{
  int rank;
  long long hdr[2];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) PetscCall(read_all(path, buf, len, err));
  hdr[0] = rank ? 0 : *err;
  hdr[1] = rank ? 0 : (long long)*len;
  PetscCallMPI(MPI_Bcast(hdr, 2, MPI_LONG_LONG, 0, comm));
  *err = (int)hdr[0];
  *len = (size_t)hdr[1];
  if (*err) PetscFunctionReturn(0);
  if (rank) PetscCall(PetscMalloc1(*len + 1, buf));
  PetscCall(bcast_bytes(comm, *buf, *len));
  (*buf)[*len] = '\0';
  PetscFunctionReturn(0);
}

/* Write a file with its data on disk before returning; errno (0: done). */
static int write_synced(const char *path, const void *buf, size_t len)
{
  int fd, err = AmrFileOpen(path, O_WRONLY | O_CREAT | O_TRUNC, 0, &fd);
  if (err) return err;
  err = AmrFileWrite(fd, buf, len, 0);
  if (!err && fsync(fd)) err = errno;
  if (close(fd) && !err) err = errno;
  return err;
}

/* One rank's failure (errno) made collective: every rank raises it. */
static PetscErrorCode check_errno(MPI_Comm comm, int err, const char *what, const char *path)
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
  *crc = AmrCrc32(0, buf, (size_t)n);
  return 0;
}

/* Sync a file every rank helped write and checksum its blocks, shared
 * among the ranks; every rank gets the size and the checksums. */
static PetscErrorCode checksum_file(MPI_Comm comm, const char *path, CkpFile *f)
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
  PetscCall(check_errno(comm, err, "write", path));
  f->size = (long long)sb.st_size;
  PetscCallMPI(MPI_Bcast(&f->size, 1, MPI_LONG_LONG, 0, comm));
  set_blocks(f);
  PetscCall(PetscCalloc1(f->nblocks + 1, &f->crc));
  PetscCall(PetscMalloc1(f->block, &buf));
  for (int b = rank; b < f->nblocks && !err; b += size) err = block_crc(fd, f, b, buf, &f->crc[b]);
  close(fd);
  PetscCall(PetscFree(buf));
  PetscCall(check_errno(comm, err, "read back", path));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, f->crc, f->nblocks, MPI_UINT32_T, MPI_BOR, comm));
  PetscFunctionReturn(0);
}

/* A file of the set against its manifest entry: present, of the recorded
 * size, every block's checksum equal; collective.  With mpath NULL, f is
 * what was just written and the file is read back before it counts. */
static PetscErrorCode verify_file(MPI_Comm comm, const char *path, const char *mpath, const CkpFile *f)
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

/* ------------------------------------------------------ per-cell data */

/* Visit the local quadrants of a and b (the same forest) in curve order:
 * fn(i, quadrant of a, quadrant of b, ctx). */
typedef void (*cell_fn)(p4est_locidx_t i, p4est_quadrant_t *qa, p4est_quadrant_t *qb, void *ctx);
static void each_cell(p4est_t *a, p4est_t *b, cell_fn fn, void *ctx)
{
  p4est_locidx_t i = 0;
  for (p4est_topidx_t t = a->first_local_tree; t <= a->last_local_tree; t++) {
    p4est_tree_t *ta = p4est_tree_array_index(a->trees, t), *tb = p4est_tree_array_index(b->trees, t);
    for (size_t k = 0; k < ta->quadrants.elem_count; k++, i++) fn(i, p4est_quadrant_array_index(&ta->quadrants, k), p4est_quadrant_array_index(&tb->quadrants, k), ctx);
  }
}

typedef struct {
  size_t qsize;
  int nfields;
  size_t fsize[CKP_MAX_FIELDS];
  unsigned char *fdata[CKP_MAX_FIELDS];
  unsigned char *qbuf; /* reading: the quadrant data until the forest's data shrinks to it */
} CellLayout;

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

static size_t layout_total(const CellLayout *L)
{
  size_t n = L->qsize;
  for (int f = 0; f < L->nfields; f++) n += L->fsize[f];
  return n;
}

/* ------------------------------------------------------------ writing */

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

/* Make a new, empty forest file at path with room for its bytes, so that
 * a full disk is an error here and not an abort inside p4est's writer; a
 * link or device in its place (p4est would write through it) is refused.
 * Rank 0; errno, or -1 for a path that is not a regular file. */
static int forest_reserve(const char *path, long long bytes)
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
 * in a memory file while p4est saves: hold_stderr returns the memory file
 * and *saved the real stderr (-1, -1: not held, the lines pass). */
static int hold_stderr(int *saved)
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
static void release_stderr(int mem, int saved, int drop)
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
 * semaphore of the forest's name before p4est's writer opens the file (no
 * other run writes it: the checkpoint's lock) and after it closed it. */
static void drop_ompio_semaphore(const char *path)
{
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  char name[252]; /* OMPIO cuts its names to as many bytes */
  memcpy(name, "OMPIO_", 6);
  strncpy(name + 6, base, sizeof name - 7);
  name[sizeof name - 1] = '\0';
  (void)sem_unlink(name);
}

PetscErrorCode AmrCheckpointStage(const char *prefix, p4est_t *p4est, int nfields, const AmrField *fields, AmrCkpState st)
{
  MPI_Comm comm = p4est->mpicomm;
  char mpath[PETSC_MAX_PATH_LEN], npath[PETSC_MAX_PATH_LEN], path[2][PETSC_MAX_PATH_LEN], *text = NULL;
  CkpManifest m;
  CellLayout L;
  p4est_t *copy;
  unsigned char *sbuf;
  size_t slen = 0;
  long long want;
  int rank, err = 0;

  PetscFunctionBeginUser;
  PetscCheck(nfields >= 0 && nfields <= CKP_MAX_FIELDS, comm, PETSC_ERR_ARG_OUTOFRANGE, "checkpoint: %d cell arrays, at most %d", nfields, CKP_MAX_FIELDS);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  memset(&m, 0, sizeof m);
  memset(&L, 0, sizeof L);
  PetscCall(ckp_path(prefix, 0, "manifest", mpath));
  PetscCall(ckp_path(prefix, 0, "manifest.new", npath));
  /* the set this one replaces decides its sequence number; its files are
   * not touched until the commit */
  m.seq = 1;
  if (!rank) {
    size_t len;
    CkpManifest old;
    char msg[256];
    PetscCall(read_all(mpath, &text, &len, &err));
    if (!err) {
      PetscCall(manifest_parse(text, &old, msg, sizeof msg));
      if (!msg[0]) m.seq = old.seq + 1;
      PetscCall(manifest_free(&old));
    }
    PetscCall(PetscFree(text));
    err = unlink(npath) && errno != ENOENT ? errno : 0;
  }
  PetscCallMPI(MPI_Bcast(&m.seq, 1, MPI_LONG_LONG, 0, comm));
  PetscCall(check_errno(comm, err, "remove the stale", npath));
  PetscCall(ckp_path(prefix, m.seq, file_kinds[0], path[0]));
  PetscCall(ckp_path(prefix, m.seq, file_kinds[1], path[1]));

  /* the forest: a copy whose quadrants carry all the cell data */
  L.qsize = p4est->data_size;
  L.nfields = nfields;
  for (int f = 0; f < nfields; f++) {
    L.fsize[f] = fields[f].size;
    L.fdata[f] = *fields[f].data;
  }
  copy = p4est_copy(p4est, 0);
  if (layout_total(&L)) {
    p4est_reset_data(copy, layout_total(&L), NULL, NULL);
    each_cell(p4est, copy, pack_cell, &L);
  }
  /* p4est_save_ext aborts when it cannot open the file or write its
   * header, and a failed write of its quadrants passes silently: the room
   * is made first, and the size checked after */
  want = forest_bytes(copy, layout_total(&L));
  if (!rank) err = forest_reserve(path[0], want);
  if (!rank && !err) drop_ompio_semaphore(path[0]);
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  if (err) p4est_destroy(copy);
  PetscCheck(err >= 0, comm, PETSC_ERR_USER_INPUT, "cannot write checkpoint file '%s': it exists and is not a regular file (a link or a device)", AmrPathShort(path[0]));
  PetscCall(check_errno(comm, err, "write", path[0]));
  {
    int saved, mem = hold_stderr(&saved);
    p4est_save_ext(path[0], copy, layout_total(&L) > 0, 0);
    p4est_destroy(copy);
    PetscCallMPI(MPI_Barrier(comm));
    if (!rank) drop_ompio_semaphore(path[0]);
    err = checksum_file(comm, path[0], &m.file[0]);
    release_stderr(mem, saved, !err && m.file[0].size != want);
    PetscCall(err);
    err = 0;
  }
  if (m.file[0].size != want) {
    if (!rank) {
      err = forest_shortfall(path[0], m.file[0].size, want);
      (void)unlink(path[0]);
    }
    PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
    PetscCall(manifest_free(&m));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "cannot write checkpoint file '%s': %s (%lld of %lld bytes written)", AmrPathShort(path[0]),
            err ? AmrFileStrerror(err) : "the write stopped short", m.file[0].size, want);
  }

  /* the state record, rank 0's copy */
  PetscCall(state_serialize(st, &sbuf, &slen));
  /* rank 0's record is the file: every rank checks the file against it
   * (a rank's own copy may differ, its clocks for one) */
  {
    unsigned long long n = slen;
    PetscCallMPI(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, 0, comm));
    if (n != slen) {
      PetscCall(PetscFree(sbuf));
      PetscCall(PetscMalloc1(n + 1, &sbuf));
      slen = (size_t)n;
    }
    PetscCall(bcast_bytes(comm, sbuf, slen));
  }
  if (!rank) err = write_synced(path[1], sbuf, slen);
  PetscCall(check_errno(comm, err, "write", path[1]));
  m.file[1].size = (long long)slen;
  set_blocks(&m.file[1]);
  PetscCall(PetscMalloc1(m.file[1].nblocks + 1, &m.file[1].crc));
  for (int b = 0; b < m.file[1].nblocks; b++) {
    const long long off = (long long)b * m.file[1].block;
    m.file[1].crc[b] = AmrCrc32(0, sbuf + off, (size_t)PetscMin(m.file[1].block, m.file[1].size - off));
  }
  PetscCall(PetscFree(sbuf));
  PetscCall(verify_file(comm, path[1], NULL, &m.file[1]));

  /* the manifest, last */
  if (!rank) {
    size_t cap = 512 + 24 * (size_t)nfields, o;
    for (int k = 0; k < 2; k++) cap += 9 * (size_t)m.file[k].nblocks + 64;
    PetscCall(PetscMalloc1(cap, &text));
    o = (size_t)snprintf(text, cap, "%s %d\ndimension %d\nsequence %lld\ncells %lld\nquadrant_data %zu\nfields %d", CKP_MAGIC, AMR_CHECKPOINT_VERSION,
                         P4EST_DIM, m.seq, (long long)p4est->global_num_quadrants, L.qsize, nfields);
    for (int f = 0; f < nfields; f++) o += (size_t)snprintf(text + o, cap - o, " %zu", L.fsize[f]);
    o += (size_t)snprintf(text + o, cap - o, "\n");
    for (int k = 0; k < 2; k++) {
      o += (size_t)snprintf(text + o, cap - o, "file %s %lld %lld %d", file_kinds[k], m.file[k].size, m.file[k].block, m.file[k].nblocks);
      for (int b = 0; b < m.file[k].nblocks; b++) o += (size_t)snprintf(text + o, cap - o, " %08x", (unsigned)m.file[k].crc[b]);
      o += (size_t)snprintf(text + o, cap - o, "\n");
    }
    o += (size_t)snprintf(text + o, cap - o, "crc32 %08x\n", (unsigned)AmrCrc32(0, text, o));
    err = write_synced(npath, text, o);
    if (!err) {
      char *back;
      size_t blen;
      PetscCall(read_all(npath, &back, &blen, &err));
      if (!err && (blen != o || memcmp(back, text, o))) err = EIO;
      PetscCall(PetscFree(back));
    }
    /* the new files' names on disk before the commit may name them */
    if (!err) err = AmrFileSyncDir(npath);
    PetscCall(PetscFree(text));
  }
  PetscCall(check_errno(comm, err, "write", npath));
  PetscCall(manifest_free(&m));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCheckpointCommit(MPI_Comm comm, const char *prefix)
{
  char mpath[PETSC_MAX_PATH_LEN], npath[PETSC_MAX_PATH_LEN];
  int rank, err = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(ckp_path(prefix, 0, "manifest", mpath));
  PetscCall(ckp_path(prefix, 0, "manifest.new", npath));
  if (!rank) {
    char *text, msg[256];
    size_t len;
    int rerr;
    CkpManifest old, staged;
    long long old_seq = 0;
    memset(&staged, 0, sizeof staged);
    PetscCall(read_all(npath, &text, &len, &err));
    if (!err) {
      PetscCall(manifest_parse(text, &staged, msg, sizeof msg));
      PetscCall(PetscFree(text));
      if (msg[0]) err = EINVAL;
    }
    PetscCall(read_all(mpath, &text, &len, &rerr));
    if (!rerr) {
      PetscCall(manifest_parse(text, &old, msg, sizeof msg));
      if (!msg[0]) old_seq = old.seq;
      PetscCall(manifest_free(&old));
      PetscCall(PetscFree(text));
    }
    if (!err && rename(npath, mpath)) err = errno;
    /* the old set stays until the rename is on disk */
    if (!err) err = AmrFileSyncDir(mpath);
    if (!err) {
      /* the replaced set is garbage from here on */
      if (old_seq && old_seq != staged.seq)
        for (int k = 0; k < 2; k++) {
          char path[PETSC_MAX_PATH_LEN];
          PetscCall(ckp_path(prefix, old_seq, file_kinds[k], path));
          (void)unlink(path);
        }
    }
    PetscCall(manifest_free(&staged));
  }
  PetscCall(check_errno(comm, err, "commit the staged", npath));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCheckpointWrite(const char *prefix, p4est_t *p4est, int nfields, const AmrField *fields, AmrCkpState st)
{
  PetscFunctionBeginUser;
  PetscCall(AmrCheckpointStage(prefix, p4est, nfields, fields, st));
  PetscCall(AmrCheckpointCommit(p4est->mpicomm, prefix));
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------ reading */

/* The manifest of prefix, parsed and checked for this program's dimension
 * and version; the path in mpath. */
static PetscErrorCode manifest_read(MPI_Comm comm, const char *prefix, char *mpath, CkpManifest *m)
{
  char msg[256], *text;
  size_t len;
  int err;

  PetscFunctionBeginUser;
  PetscCall(ckp_path(prefix, 0, "manifest", mpath));
  PetscCall(read_bcast(comm, mpath, &text, &len, &err));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' cannot be read: %s", AmrPathShort(mpath), AmrFileStrerror(err));
  PetscCheck(strlen(text) == len, comm, PETSC_ERR_USER_INPUT, "checkpoint '%s': not an amrdlb checkpoint manifest", AmrPathShort(mpath));
  PetscCall(manifest_parse(text, m, msg, sizeof msg));
  PetscCall(PetscFree(text));
  if (msg[0]) {
    PetscCall(manifest_free(m));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint '%s': %s", AmrPathShort(mpath), msg);
  }
  if (m->dim != P4EST_DIM) {
    PetscCall(manifest_free(m));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' holds a %dD forest, this program runs in %dD", AmrPathShort(mpath), m->dim, P4EST_DIM);
  }
  PetscFunctionReturn(0);
}

/* The state file of the verified manifest m into a new record *st. */
static PetscErrorCode state_read(MPI_Comm comm, const char *prefix, const char *mpath, const CkpManifest *m, AmrCkpState *st)
{
  char path[PETSC_MAX_PATH_LEN], *sbuf;
  size_t len;
  int err;

  PetscFunctionBeginUser;
  PetscCall(ckp_path(prefix, m->seq, file_kinds[1], path));
  PetscCall(verify_file(comm, path, mpath, &m->file[1]));
  PetscCall(read_bcast(comm, path, &sbuf, &len, &err));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s' cannot be read: %s", AmrPathShort(path), AmrFileStrerror(err));
  PetscCall(AmrCkpStateCreate(comm, st));
  PetscCall(PetscStrncpy((*st)->source, mpath, sizeof (*st)->source));
  PetscCall(state_parse(comm, path, (const unsigned char *)sbuf, len, *st));
  PetscCall(PetscFree(sbuf));
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
  ierr = state_read(comm, prefix, mpath, &m, st);
  PetscCall(manifest_free(&m));
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
    PetscCall(manifest_free(&m));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' holds %lld bytes of quadrant data and %d cell arrays per cell, this run expects %zu bytes and %d", AmrPathShort(mpath),
            m.qsize, m.nfields, data_size, nfields);
  }
  L.qsize = data_size;
  L.nfields = nfields;
  for (int f = 0; f < nfields; f++) {
    L.fsize[f] = fields[f].size;
    if (m.fsize[f] != (long long)fields[f].size) {
      const long long have = m.fsize[f];
      PetscCall(manifest_free(&m));
      SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint '%s': cell array %d has %lld bytes per cell, this run expects %zu", AmrPathShort(mpath), f, have, fields[f].size);
    }
  }
  {
    PetscErrorCode ierr;
    PetscCall(ckp_path(prefix, m.seq, file_kinds[0], path));
    ierr = verify_file(comm, path, mpath, &m.file[0]);
    /* verified: now the state and the forest can be trusted */
    if (!ierr) ierr = state_read(comm, prefix, mpath, &m, st);
    if (ierr) PetscCall(manifest_free(&m));
    PetscCall(ierr);
  }
  p4est = p4est_load_ext(path, comm, layout_total(&L), layout_total(&L) > 0, 1, 1, NULL, &lconn);
  PetscCall(manifest_free(&m));
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
  if (layout_total(&L) > data_size) {
    PetscCall(PetscMalloc1((size_t)p4est->local_num_quadrants * data_size + 1, &L.qbuf));
    each_cell(p4est, p4est, unpack_cell, &L);
    p4est_reset_data(p4est, data_size, NULL, NULL);
    if (data_size) each_cell(p4est, p4est, restore_quadrant_data, &L);
    PetscCall(PetscFree(L.qbuf));
  }
  *out = p4est;
  PetscFunctionReturn(0);
}
