/* Checked writes, and whole-file reads (fileio.h). */
#define _DEFAULT_SOURCE /* pwrite, fsync, flock, gethostname */
#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

const char *AmrFileStrerror(int err)
{
  if (err >= 0) return strerror(err);
  switch ((mode_t)-err) {
  case S_IFDIR: return "not a regular file (a folder)";
  case S_IFIFO: return "not a regular file (a FIFO)";
  case S_IFSOCK: return "not a regular file (a socket)";
  case S_IFBLK: return "not a regular file (a block device)";
  case S_IFCHR: return "not a regular file (a character device)";
  case S_IFLNK: return "not a regular file (a link)";
  default: return "not a regular file";
  }
}

/* 0 for a mode that may be opened, else its error code. */
static int mode_check(mode_t m, int devices)
{
  return S_ISREG(m) || (devices && S_ISCHR(m)) ? 0 : AMR_FILE_NOTREG(m);
}

int AmrFileRegular(const char *path, int devices)
{
  struct stat sb;
  /* a path that cannot be looked up is the open's to report */
  return stat(path, &sb) ? 0 : mode_check(sb.st_mode, devices);
}

int AmrFileOpen(const char *path, int flags, int devices, int *fd)
{
  struct stat sb;
  int err = AmrFileRegular(path, devices);

  *fd = -1;
  if (err) return err;
  /* O_NONBLOCK: a FIFO put in the file's place since the check opens at
   * once (or fails with ENXIO) rather than waiting for its other end */
  if ((*fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644)) < 0) return errno;
  err = fstat(*fd, &sb) ? errno : mode_check(sb.st_mode, devices);
  if (!err && fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK)) err = errno;
  if (err) {
    close(*fd);
    *fd = -1;
  }
  return err;
}

int AmrFileRead(const char *path, int devices, char **text, size_t *len)
{
  struct stat sb;
  size_t cap, n = 0;
  char *buf;
  int fd, err = AmrFileOpen(path, O_RDONLY, devices, &fd);

  *text = NULL;
  *len = 0;
  if (err) return err;
  /* room for the size the file has now; one that grows is read to its end */
  cap = fstat(fd, &sb) || !S_ISREG(sb.st_mode) ? 0 : (size_t)sb.st_size;
  buf = malloc(cap + 1);
  while (buf) {
    ssize_t r;
    if (n == cap) {
      char *more = realloc(buf, 2 * cap + 65536 + 1);
      if (!more) break;
      buf = more;
      cap = 2 * cap + 65536;
    }
    r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) {
      err = r ? errno : 0;
      break;
    }
    n += (size_t)r;
  }
  if (!err && (!buf || n == cap)) err = ENOMEM;
  close(fd);
  if (err) {
    free(buf);
    return err;
  }
  buf[n] = '\0';
  *text = buf;
  *len = n;
  return 0;
}

const char *AmrPathShort(const char *path)
{
  enum { HEAD = 80, TAIL = 150, NBUF = 4 };
  static char buf[NBUF][HEAD + TAIL + 8];
  static int next;
  const size_t n = strlen(path);
  char *b;

  if (n <= HEAD + TAIL + 5) return path;
  b = buf[next];
  next = (next + 1) % NBUF;
  snprintf(b, sizeof buf[0], "%.*s[...]%s", HEAD, path, path + n - TAIL);
  return b;
}

PetscErrorCode AmrFileCheckRegular(MPI_Comm comm, const char *option, const char *path, int devices)
{
  int err, rank;

  PetscFunctionBeginUser;
  err = AmrFileRegular(path, devices);
  PetscCallMPI(AmrFileAgree(comm, &err, &rank));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "option %s %s: %s", option, AmrPathShort(path), AmrFileStrerror(err));
  PetscFunctionReturn(0);
}

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

/* Rank 0: lock path.lock into *fd; errno, EWOULDBLOCK with the holder's
 * "host pid" in owner.  An advisory flock rather than an exclusive
 * create: a killed run leaves no lock to clean up. */
static int lock_file(const char *path, int *fd, char *owner, size_t len)
{
  char lpath[PATH_MAX], me[300];
  struct stat sb;
  int err = 0, n;

  *fd = -1;
  /* a device (/dev/null, /dev/full) is no output two runs can garble */
  if (!stat(path, &sb) && !S_ISREG(sb.st_mode)) return 0;
  if (snprintf(lpath, sizeof lpath, "%s.lock", path) >= (int)sizeof lpath) return ENAMETOOLONG;
  if ((*fd = open(lpath, O_RDWR | O_CREAT, 0644)) < 0) return errno;
  if (flock(*fd, LOCK_EX | LOCK_NB)) {
    err = errno;
    n = (int)pread(*fd, owner, len - 1, 0);
    owner[n > 0 ? n : 0] = '\0';
    owner[strcspn(owner, "\n")] = '\0';
  } else {
    strcpy(me, "host ");
    if (gethostname(me + 5, 250)) strcpy(me + 5, "?");
    me[255] = '\0';
    n = (int)strlen(me);
    snprintf(me + n, sizeof me - (size_t)n, " pid %ld\n", (long)getpid());
    if (ftruncate(*fd, 0)) err = errno;
    if (!err) err = AmrFileWrite(*fd, me, strlen(me), 0);
  }
  if (err) {
    close(*fd);
    *fd = -1;
  }
  return err;
}

PetscErrorCode AmrFileLock(MPI_Comm comm, const char *option, const char *path, int *fd)
{
  char owner[320] = "";
  int rank, err = 0;

  PetscFunctionBeginUser;
  *fd = -1;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (!rank) err = lock_file(path, fd, owner, sizeof owner);
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(owner, sizeof owner, MPI_CHAR, 0, comm));
  PetscCheck(err != EWOULDBLOCK, comm, PETSC_ERR_USER_INPUT, "option %s %s: in use by another run (%s, %s.lock)", option, AmrPathShort(path),
             owner[0] ? owner : "its host and pid not yet written", AmrPathShort(path));
  /* the lock file sits beside the output: what stops one stops both */
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "option %s %s: cannot open for writing: %s", option, AmrPathShort(path), AmrFileStrerror(err));
  PetscFunctionReturn(0);
}

void AmrFileUnlock(int *fd)
{
  if (*fd >= 0) close(*fd);
  *fd = -1;
}
