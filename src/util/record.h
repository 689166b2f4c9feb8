/** \file record.h
 * The checkpoint's state record: named integers, reals (bit for bit),
 * strings and byte blobs in two tables, the shared one (replicated on the
 * ranks of a communicator, rank 0's copy written) and each rank's own
 * part (a rank's values: its cell count, its rows of the weights history),
 * and their self-describing little-endian bytes (magic, format version,
 * count, then per entry the name's length and bytes, the type, the value's
 * length and bytes), one such record per table.  No forest and no file:
 * mesh/checkpoint.h stores the shared record in P.S.state and the parts
 * in P.S.ranks; the app and the problems put their state into it.
 */
#ifndef AMR_UTIL_RECORD_H
#define AMR_UTIL_RECORD_H

#include <stdint.h>
#include <petscsys.h>

/** Format version of the record's bytes (the checkpoint format's, 1). */
#define AMR_CKP_STATE_VERSION 1

/** A state record: named values replicated on every rank of its
 *  communicator (the writer stores rank 0's copy), and this rank's own. */
typedef struct _p_AmrCkpState *AmrCkpState;

/** Store v in nbytes little-endian bytes at p (the byte order of every
 *  number of a checkpoint's binary files). */
void AmrCkpPutLE(unsigned char *p, uint64_t v, int nbytes);

/** The nbytes little-endian bytes at p as a number. */
uint64_t AmrCkpGetLE(const unsigned char *p, int nbytes);

/** Create an empty state record on comm (the communicator its errors are
 *  raised on), its parts those of comm's ranks. */
PetscErrorCode AmrCkpStateCreate(MPI_Comm comm, AmrCkpState *st);

/** Free a state record; *st becomes NULL (NULL is allowed). */
PetscErrorCode AmrCkpStateDestroy(AmrCkpState *st);

/** Set the integer entry name (replacing any entry of that name). */
PetscErrorCode AmrCkpStateSetInt(AmrCkpState st, const char *name, int64_t v);

/** Set the real entry name; stored bit for bit. */
PetscErrorCode AmrCkpStateSetReal(AmrCkpState st, const char *name, double v);

/** Set the string entry name. */
PetscErrorCode AmrCkpStateSetString(AmrCkpState st, const char *name, const char *v);

/** Set the byte-blob entry name to the n bytes at p (copied). */
PetscErrorCode AmrCkpStateSetBytes(AmrCkpState st, const char *name, const void *p, size_t n);

/** Whether the record has an entry called name (of any type). */
PetscErrorCode AmrCkpStateHas(AmrCkpState st, const char *name, PetscBool *has);

/** The integer entry name; a missing entry or one of another type is a
 *  collective user error naming the checkpoint. */
PetscErrorCode AmrCkpStateGetInt(AmrCkpState st, const char *name, int64_t *v);

/** The real entry name (errors as AmrCkpStateGetInt). */
PetscErrorCode AmrCkpStateGetReal(AmrCkpState st, const char *name, double *v);

/** The string entry name, valid while st lives (errors as AmrCkpStateGetInt). */
PetscErrorCode AmrCkpStateGetString(AmrCkpState st, const char *name, const char **v);

/** The byte-blob entry name: *p (valid while st lives) and its length *n
 *  (errors as AmrCkpStateGetInt). */
PetscErrorCode AmrCkpStateGetBytes(AmrCkpState st, const char *name, const void **p, size_t *n);

/** Require the string entry name to equal expected: otherwise a collective
 *  user error "checkpoint 'FILE' was written with NAME 'X', this run has
 *  'Y'" (for what a restart may not change: problem, mesh). */
PetscErrorCode AmrCkpStateCheckString(AmrCkpState st, const char *name, const char *expected);

/** Require the integer entry name to equal expected (e.g. the degree),
 *  with the error of AmrCkpStateCheckString. */
PetscErrorCode AmrCkpStateCheckInt(AmrCkpState st, const char *name, int64_t expected);

/** The shared table as bytes: *buf (PetscMalloc'd, the caller frees it) of
 *  *len bytes. */
PetscErrorCode AmrCkpStateSerialize(AmrCkpState st, unsigned char **buf, size_t *len);

/** Adds to the shared table of st the entries of the len bytes at buf,
 *  read from the file path (its parts unread until AmrCkpStateParseRank);
 *  source (the checkpoint's manifest) names the record in the errors of
 *  its getters.  Collective on st's communicator, buf being the same on
 *  every rank: bytes that are no record of this version are a user error
 *  naming path. */
PetscErrorCode AmrCkpStateParse(AmrCkpState st, const char *source, const char *path, const unsigned char *buf, size_t len);

/** Set this rank's own integer entry name (its part of the checkpoint). */
PetscErrorCode AmrCkpStateSetRankInt(AmrCkpState st, const char *name, int64_t v);

/** Set this rank's own byte-blob entry name to the n bytes at p (copied). */
PetscErrorCode AmrCkpStateSetRankBytes(AmrCkpState st, const char *name, const void *p, size_t n);

/** This rank's own integer entry name: *has false (and *v 0) where its
 *  part has none, as on a restart onto another rank count.  Never an
 *  error: a caller checks what it takes and agrees on a refusal with the
 *  other ranks (one rank's part may be bad alone). */
PetscErrorCode AmrCkpStateGetRankInt(AmrCkpState st, const char *name, PetscBool *has, int64_t *v);

/** This rank's own byte-blob entry name: *p NULL (and *n 0) where its
 *  part has none; as AmrCkpStateGetRankInt. */
PetscErrorCode AmrCkpStateGetRankBytes(AmrCkpState st, const char *name, const void **p, size_t *n);

/** The number of ranks that wrote the parts: the communicator's size for
 *  a record being written, the writer's for one read with its parts, 0
 *  for one read without them; the own table is filled only where that is
 *  the reader's size. */
PetscErrorCode AmrCkpStateRankParts(AmrCkpState st, int *parts);

/** This rank's own table as bytes (the format of AmrCkpStateSerialize). */
PetscErrorCode AmrCkpStateSerializeRank(AmrCkpState st, unsigned char **buf, size_t *len);

/** This rank's own table from the len bytes at buf (NULL: no part read
 *  here, the table stays empty), read from the file path of a checkpoint
 *  written on parts ranks.  Collective on st's communicator: a part that
 *  is no record of this version on any rank is a user error on every rank
 *  naming path and the first such rank. */
PetscErrorCode AmrCkpStateParseRank(AmrCkpState st, int parts, const char *path, const unsigned char *buf, size_t len);

#endif
