/** \file fileio.h
 * Checked writes: every file the programs write goes through these, so
 * that a full disk, a quota or a device that refuses data is an error with
 * the system's reason, never a file silently cut short; and the one
 * whole-file read.  Each returns 0 or the errno of the first failure. */
#ifndef AMR_UTIL_FILEIO_H
#define AMR_UTIL_FILEIO_H

#include <stdio.h>
#include <sys/stat.h>
#include <petscsys.h>

/** The error code of a path that exists and is no regular file: its
 *  negated file type bits (S_IFIFO, S_IFDIR, ...), never an errno, so that
 *  a broadcast code still says what the path is (AmrFileStrerror). */
#define AMR_FILE_NOTREG(mode) (-(int)((mode) & S_IFMT))

/** The reason of an error code of these functions, for a message: the
 *  system's (strerror) for an errno, "not a regular file (a FIFO)" and the
 *  like for AMR_FILE_NOTREG. */
const char *AmrFileStrerror(int err);

/** Whether path may be opened as a file: 0 when it is a regular file or
 *  does not exist (an output is then created), AMR_FILE_NOTREG when it is
 *  anything else; with devices, a character device passes too (/dev/null
 *  takes the bytes, /dev/full refuses them: neither blocks). */
int AmrFileRegular(const char *path, int devices);

/** open(2) of a regular file (AmrFileRegular, checked again on what was
 *  opened) that never blocks: a FIFO without its other end, which would
 *  hang the rank and every rank waiting for it, is refused instead.
 *  flags as open's, the file's mode 0644 when created; *fd the descriptor
 *  (-1 on failure).  Returns 0 or the error code. */
int AmrFileOpen(const char *path, int flags, int devices, int *fd);

/** Read the file \a path whole: \a *text (malloc'd, NUL-terminated, the
 *  caller frees it with free()) of \a *len bytes, the NUL not counted.
 *  The file is opened with AmrFileOpen(), so a FIFO or folder in its place
 *  is refused, never waited on; \a devices as for AmrFileRegular (a
 *  character device is read to its end).  Returns 0 or the error code
 *  (ENOMEM when the text does not fit memory); *text is NULL on error. */
int AmrFileRead(const char *path, int devices, char **text, size_t *len);

/** path shortened in the middle to at most about 240 characters, for a
 *  message: the error line keeps its reason, which follows the path, when
 *  the path is thousands of characters long.  The result is one of a few
 *  static buffers, used in turn (several paths fit one message); path
 *  itself when it is short. */
const char *AmrPathShort(const char *path);

/** Refuse an output or input path that exists and is no regular file
 *  (collective; every rank checks it itself and the ranks agree, so no
 *  rank waits for another's refusal): "option OPTION PATH: not a regular
 *  file (a FIFO)".  devices as for AmrFileRegular. */
PetscErrorCode AmrFileCheckRegular(MPI_Comm comm, const char *option, const char *path, int devices);

/** Write all n bytes at offset off of fd (off < 0: at its file position),
 *  retrying short writes and interrupted calls. */
int AmrFileWrite(int fd, const void *p, size_t n, long long off);

/** Push what f has buffered to the system and report a write of f that
 *  failed since the last check: stdio keeps only a flag, so the buffered
 *  data is flushed again, which gives the system's reason (EIO when the
 *  flag is all there is). */
int AmrFileFlush(FILE *f);

/** Write the n bytes at p to f and flush them: the way to write a record
 *  that must reach the file whole or fail with the system's reason (the
 *  record composed first, e.g. with open_memstream). */
int AmrFilePut(FILE *f, const void *p, size_t n);

/** AmrFileFlush, then close f (closed in every case). */
int AmrFileClose(FILE *f);

/** Make the directory entries of the directory holding path durable (a
 *  created or renamed file survives a crash only once its directory is
 *  synced). */
int AmrFileSyncDir(const char *path);

/** Make one rank's failure everyone's (collective): *err becomes the
 *  errno of the lowest failing rank, *rank that rank (0 and -1 when none
 *  failed), so that every rank raises the same one-line error. */
int AmrFileAgree(MPI_Comm comm, int *err, int *rank);

/** One run per output path (collective): rank 0 takes an exclusive lock
 *  (flock) on PATH.lock and writes its host and pid into it; the lock
 *  goes with the process, however it ends, and the file stays (a device
 *  takes none: two runs cannot garble it).  A path another process holds
 *  is a user error "option OPTION PATH: in use by another run (host H pid
 *  P, PATH.lock)".  *fd: the lock (-1 on the other ranks and for a
 *  device), given back by AmrFileUnlock. */
PetscErrorCode AmrFileLock(MPI_Comm comm, const char *option, const char *path, int *fd);
void AmrFileUnlock(int *fd);

#endif
