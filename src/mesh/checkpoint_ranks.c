/* The ranks file of a checkpoint set (checkpoint.h), P.S.ranks: every
 * rank's own part of the state record, written and read with MPI-IO on the
 * file all ranks open (each rank writes its own part and its own entry of
 * the index, and reads them back collectively), so that no rank holds or
 * reads what P ranks wrote.  Layout (little-endian):
 *
 *   header  24 bytes: "AMRDLBRK", format version (4), 0 (4), parts P (8)
 *   index   P entries of 24 bytes, entry r at 24 + 24 r: the offset (8)
 *           and length (8) of rank r's part, the CRC-32 of the part (4),
 *           the CRC-32 of the entry's 20 bytes before it (4)
 *   parts   the parts in rank order from 24 + 24 P, each a state record
 *           (util/record.h) of the rank's own entries
 *
 * The manifest records the file's size and P; each part's checksum is in
 * its index entry, checked by the rank that reads the part.  Compiled for
 * 2D and 3D (P4_TO_P8). */
#include "mesh/impl/checkpoint.h"
#include "util/fileio.h"
#include <limits.h>
#include <string.h>
#include <sys/stat.h>

#define RANKS_MAGIC "AMRDLBRK"
#define RANKS_VERSION 1
#define RANKS_HEAD 24
#define RANKS_ENTRY 24

/* One rank's failed MPI-IO call made collective: every rank raises the
 * error of the highest error class met, naming the file (reading: as the
 * set's other files name a file that cannot be read). */
static PetscErrorCode io_check(MPI_Comm comm, int mpierr, PetscBool reading, const char *path)
{
  char msg[MPI_MAX_ERROR_STRING];
  int cls = 0, len;

  PetscFunctionBeginUser;
  if (mpierr != MPI_SUCCESS) PetscCallMPI(MPI_Error_class(mpierr, &cls));
  if (mpierr != MPI_SUCCESS && cls == MPI_SUCCESS) cls = MPI_ERR_OTHER;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &cls, 1, MPI_INT, MPI_MAX, comm));
  if (cls == MPI_SUCCESS) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Error_string(cls, msg, &len));
  if (reading) SETERRQ(comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s' cannot be read: %s", AmrPathShort(path), msg);
  SETERRQ(comm, PETSC_ERR_USER_INPUT, "cannot write checkpoint file '%s': %s", AmrPathShort(path), msg);
}

/* Reads rank's index entry and its part (malloc'd into *part, the caller
 * frees it) from fh, collectively; *bad is set where either does not
 * match its checksum or lies outside the file of size bytes.  Returns the
 * first failed MPI call's code. */
static int read_part(MPI_File fh, int rank, long long parts, long long size, unsigned char **part, size_t *len, int *bad)
{
  unsigned char e[RANKS_ENTRY];
  uint64_t off, n;
  int err, rerr;

  *part = NULL;
  *len = 0;
  err = MPI_File_read_at_all(fh, (MPI_Offset)(RANKS_HEAD + RANKS_ENTRY * (long long)rank), e, RANKS_ENTRY, MPI_BYTE, MPI_STATUS_IGNORE);
  off = AmrCkpGetLE(e, 8);
  n = AmrCkpGetLE(e + 8, 8);
  *bad = err || AmrCkpCrc(e, 20) != (uint32_t)AmrCkpGetLE(e + 20, 4) || off < (uint64_t)(RANKS_HEAD + RANKS_ENTRY * parts) || n > (uint64_t)size ||
         off > (uint64_t)size - n || n > INT_MAX || !(*part = malloc(n + 1));
  /* the part's read is collective too: a rank whose entry is bad reads
   * no bytes */
  rerr = MPI_File_read_at_all(fh, (MPI_Offset)(*bad ? 0 : off), *part, *bad ? 0 : (int)n, MPI_BYTE, MPI_STATUS_IGNORE);
  if (!err) err = rerr;
  if (!*bad && !err && AmrCkpCrc(*part, n) != (uint32_t)AmrCkpGetLE(e + 16, 4)) *bad = 1;
  *len = *bad ? 0 : (size_t)n;
  return err;
}

/* The lowest rank whose *bad is set, INT_MAX when none. */
static PetscErrorCode first_bad(MPI_Comm comm, int bad, int *who)
{
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, who));
  if (!bad) *who = INT_MAX;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, who, 1, MPI_INT, MPI_MIN, comm));
  PetscFunctionReturn(0);
}

/* Rank's index entry for its part of n bytes at off with checksum crc;
 * rank 0's comes after the header, in one piece with it. */
static void index_entry(unsigned char *e, long long parts, uint64_t off, uint64_t n, uint32_t crc, int rank)
{
  unsigned char *x = e + (rank ? 0 : RANKS_HEAD);
  if (!rank) {
    memcpy(e, RANKS_MAGIC, 8);
    AmrCkpPutLE(e + 8, RANKS_VERSION, 4);
    AmrCkpPutLE(e + 12, 0, 4);
    AmrCkpPutLE(e + 16, (uint64_t)parts, 8);
  }
  AmrCkpPutLE(x, off, 8);
  AmrCkpPutLE(x + 8, n, 8);
  AmrCkpPutLE(x + 16, crc, 4);
  AmrCkpPutLE(x + 20, AmrCkpCrc(x, 20), 4);
}

PetscErrorCode AmrCkpStageRanks(MPI_Comm comm, AmrCkpState st, const char *path, long long *size)
{
  unsigned char *part, e[RANKS_HEAD + RANKS_ENTRY], *back;
  size_t len, blen;
  unsigned long long n, before = 0, total;
  int rank, parts, err, bad, who, saved, mem;
  PetscErrorCode ierr;
  MPI_File fh;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &parts));
  PetscCall(AmrCkpStateSerializeRank(st, &part, &len));
  PetscCheck(len <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "checkpoint: rank %d's part of %zu bytes is over 2 GiB", rank, len);
  n = len;
  PetscCallMPI(MPI_Exscan(&n, &before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
  if (!rank) before = 0;
  PetscCallMPI(MPI_Allreduce(&n, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm));
  before += RANKS_HEAD + RANKS_ENTRY * (unsigned long long)parts;
  *size = (long long)(RANKS_HEAD + RANKS_ENTRY * (unsigned long long)parts + total);
  index_entry(e, parts, before, n, AmrCkpCrc(part, len), rank);
  ierr = AmrCkpReserve(comm, path, *size);
  if (ierr) PetscCall(PetscFree(part));
  PetscCall(ierr);
  mem = AmrCkpHoldStderr(&saved);
  err = MPI_File_open(comm, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
  if (err) PetscCall(PetscFree(part));
  if (err) AmrCkpReleaseStderr(mem, saved, 0);
  PetscCall(io_check(comm, err, PETSC_FALSE, path));
  {
    /* each rank writes its own entry and its own part, collectively
     * (AmrMpiIoDefaults keeps Open MPI's aggregators from sieving them);
     * every rank makes every collective call (sync, read, close), whatever
     * failed. */
    int e4[7];
    e4[0] = MPI_File_write_at_all(fh, rank ? RANKS_HEAD + RANKS_ENTRY * (MPI_Offset)rank : 0, e, rank ? RANKS_ENTRY : RANKS_HEAD + RANKS_ENTRY, MPI_BYTE,
                                  MPI_STATUS_IGNORE);
    e4[1] = MPI_File_write_at_all(fh, (MPI_Offset)before, part, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
    /* sync, barrier, sync: what one rank wrote, another may read */
    e4[2] = MPI_File_sync(fh);
    e4[3] = MPI_Barrier(comm);
    e4[4] = MPI_File_sync(fh);
    /* read back as a restart reads it: each rank its own part */
    e4[5] = read_part(fh, rank, parts, *size, &back, &blen, &bad);
    e4[6] = MPI_File_close(&fh);
    err = MPI_SUCCESS;
    for (int k = 0; k < 7 && !err; k++) err = e4[k];
  }
  if (!err && !bad && (blen != len || memcmp(back, part, len))) bad = 1;
  free(back);
  PetscCall(PetscFree(part));
  if (!rank) AmrCkpDropOmpioSemaphore(path);
  PetscCall(first_bad(comm, bad || err, &who));
  AmrCkpReleaseStderr(mem, saved, who != INT_MAX);
  PetscCall(io_check(comm, err, PETSC_FALSE, path));
  PetscCheck(who == INT_MAX, comm, PETSC_ERR_USER_INPUT, "cannot write checkpoint file '%s': the part of rank %d read back differs from the one written", AmrPathShort(path), who);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpReadRanks(MPI_Comm comm, const char *path, const char *mpath, long long size, long long parts, AmrCkpState st)
{
  unsigned char head[RANKS_HEAD], *part = NULL;
  size_t len = 0;
  int rank, nranks, err, bad = 0, who;
  PetscErrorCode ierr;
  long long have = 0;
  struct stat sb;
  MPI_File fh;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &nranks));
  err = MPI_File_open(comm, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
  PetscCall(io_check(comm, err, PETSC_TRUE, path));
  err = MPI_File_read_at_all(fh, 0, head, rank ? 0 : RANKS_HEAD, MPI_BYTE, MPI_STATUS_IGNORE);
  if (!rank) have = stat(path, &sb) ? -1 : (long long)sb.st_size;
  if (!err && !rank) bad = have != size ? 1 : memcmp(head, RANKS_MAGIC, 8) || AmrCkpGetLE(head + 8, 4) != RANKS_VERSION || AmrCkpGetLE(head + 16, 8) != (uint64_t)parts ? 2 : 0;
  PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
  if (err || bad) MPI_File_close(&fh);
  PetscCall(io_check(comm, err, PETSC_TRUE, path));
  PetscCheck(bad != 1, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s' has %lld bytes, its manifest '%s' says %lld: it is truncated or was overwritten", AmrPathShort(path),
             have, AmrPathShort(mpath), size);
  PetscCheck(!bad, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s' is corrupted: its header is not that of %lld ranks' parts of format version %d", AmrPathShort(path), parts,
             RANKS_VERSION);
  /* on another rank count nothing per rank carries over: no part is read */
  if (parts == nranks) err = read_part(fh, rank, parts, size, &part, &len, &bad);
  MPI_File_close(&fh);
  if (err || bad) free(part);
  PetscCall(io_check(comm, err, PETSC_TRUE, path));
  PetscCall(first_bad(comm, bad, &who));
  PetscCheck(who == INT_MAX, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s' is corrupted: the part of rank %d differs from its checksum", AmrPathShort(path), who);
  ierr = AmrCkpStateParseRank(st, (int)parts, path, part, len);
  free(part);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
