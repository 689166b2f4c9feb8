/* Checked writes (fileio.h). */
#define _POSIX_C_SOURCE 200809L /* pwrite, fsync */
#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

int AmrFileWrite(int fd, const void *p, size_t n, long long off)
{
  const char *b = p;
  while (n > 0) {
    const ssize_t w = off < 0 ? write(fd, b, n) : pwrite(fd, b, n, (off_t)off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return errno;
    /* a write that takes nothing and says nothing: the device is full */
    if (w == 0) return ENOSPC;
    b += w;
    n -= (size_t)w;
    if (off >= 0) off += w;
  }
  return 0;
}

int AmrFileFlush(FILE *f)
{
  errno = 0;
  if (fflush(f)) return errno ? errno : EIO;
  return ferror(f) ? EIO : 0;
}

int AmrFilePut(FILE *f, const void *p, size_t n)
{
  errno = 0;
  if (n && fwrite(p, 1, n, f) != n) return errno ? errno : EIO;
  return AmrFileFlush(f);
}

int AmrFileClose(FILE *f)
{
  int err = AmrFileFlush(f);
  if (fclose(f) && !err) err = errno ? errno : EIO;
  return err;
}

int AmrFileSyncDir(const char *path)
{
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  int fd, err = 0;

  if (!slash) {
    strcpy(dir, ".");
  } else {
    const size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= sizeof dir) return ENAMETOOLONG;
    memcpy(dir, path, n);
    dir[n] = '\0';
  }
  fd = open(dir, O_RDONLY | O_DIRECTORY);
  if (fd < 0) return errno;
  /* some file systems cannot sync a directory: nothing is lost there */
  if (fsync(fd) && errno != EINVAL && errno != EROFS) err = errno;
  close(fd);
  return err;
}

int AmrFileAgree(MPI_Comm comm, int *err, int *rank)
{
  int flag[2], e; /* (failed, rank): MINLOC of the negated flag picks the lowest failing rank */

  if ((e = MPI_Comm_rank(comm, &flag[1]))) return e;
  flag[0] = *err ? -1 : 0;
  if ((e = MPI_Allreduce(MPI_IN_PLACE, flag, 1, MPI_2INT, MPI_MINLOC, comm))) return e;
  *rank = flag[0] ? flag[1] : -1;
  if (!flag[0]) return MPI_SUCCESS;
  return MPI_Bcast(err, 1, MPI_INT, *rank, comm);
}
