/* An LD_PRELOAD shim that makes a file's writes fail as on a full disk,
 * for the tests of what a program does then (tests/CMakeLists.txt builds
 * it as failwrite).
 *
 *   AMRDLB_FAIL_WRITE=TEXT[:SKIP]
 *
 * Files opened for writing through open() whose path ends in TEXT, after
 * the first SKIP such opens (default 0), refuse every write with ENOSPC.
 * Only the system calls are caught (write, pwrite, writev, pwritev: MPI-IO
 * and the programs' own checked writes); stdio writes from inside the C
 * library pass, as they did when p4est's writer left a checkpoint's forest
 * at its header on a full disk.  A disk that is really full for stdio is
 * /dev/full. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FD 4096
static unsigned char failing[MAX_FD];
static int opens;

static void track(int fd, const char *path, int flags)
{
  const char *spec = getenv("AMRDLB_FAIL_WRITE");
  char text[1024];
  const char *colon;
  size_t n;
  if (fd < 0 || fd >= MAX_FD) return;
  failing[fd] = 0;
  if (!spec || !path || (flags & O_ACCMODE) == O_RDONLY) return;
  colon = strrchr(spec, ':');
  n = colon ? (size_t)(colon - spec) : strlen(spec);
  if (n >= sizeof text) return;
  memcpy(text, spec, n);
  text[n] = '\0';
  /* the end of the path only: Open MPI's shared file pointer of an
   * MPI-IO file is a file named after it */
  if (strlen(path) >= n && !strcmp(path + strlen(path) - n, text) && opens++ >= (colon ? atoi(colon + 1) : 0)) failing[fd] = 1;
}

static int fails(int fd)
{
  if (fd >= 0 && fd < MAX_FD && failing[fd]) {
    errno = ENOSPC;
    return 1;
  }
  return 0;
}

#define NEXT(name) ((__typeof__(&name))dlsym(RTLD_NEXT, #name))

#define OPEN_SHIM(name, ...) \
  int name(__VA_ARGS__, int flags, ...) \
  { \
    mode_t mode = 0; \
    int fd; \
    if (flags & (O_CREAT | O_TMPFILE)) { \
      va_list ap; \
      va_start(ap, flags); \
      mode = va_arg(ap, mode_t); \
      va_end(ap); \
    }
OPEN_SHIM(open, const char *path)
  fd = NEXT(open)(path, flags, mode);
  track(fd, path, flags);
  return fd;
}
OPEN_SHIM(open64, const char *path)
  fd = NEXT(open64)(path, flags, mode);
  track(fd, path, flags);
  return fd;
}
OPEN_SHIM(openat, int dir, const char *path)
  fd = NEXT(openat)(dir, path, flags, mode);
  track(fd, path, flags);
  return fd;
}
OPEN_SHIM(openat64, int dir, const char *path)
  fd = NEXT(openat64)(dir, path, flags, mode);
  track(fd, path, flags);
  return fd;
}

ssize_t write(int fd, const void *p, size_t n) { return fails(fd) ? -1 : NEXT(write)(fd, p, n); }
ssize_t pwrite(int fd, const void *p, size_t n, off_t o) { return fails(fd) ? -1 : NEXT(pwrite)(fd, p, n, o); }
ssize_t pwrite64(int fd, const void *p, size_t n, off_t o) { return fails(fd) ? -1 : NEXT(pwrite64)(fd, p, n, o); }
ssize_t writev(int fd, const struct iovec *v, int n) { return fails(fd) ? -1 : NEXT(writev)(fd, v, n); }
ssize_t pwritev(int fd, const struct iovec *v, int n, off_t o) { return fails(fd) ? -1 : NEXT(pwritev)(fd, v, n, o); }
ssize_t pwritev64(int fd, const struct iovec *v, int n, off_t o) { return fails(fd) ? -1 : NEXT(pwritev64)(fd, v, n, o); }
