/* An LD_PRELOAD shim that makes a file's writes fail as on a full disk,
 * for the tests of what a program does then (tests/CMakeLists.txt builds
 * it as failwrite).
 *
 *   AMRDLB_FAIL_WRITE=TEXT[:SKIP]
 *
 * Files opened for writing through open() whose path ends in TEXT, after
 * the first SKIP such opens (default 0), refuse every write with ENOSPC.
 *
 *   AMRDLB_FAIL_WRITE_AFTER=BYTES
 *
 * With it such a file first takes BYTES bytes (the write that reaches the
 * limit is cut short there, as a filling disk does), then refuses: a
 * record can be cut part way, which tests what a restart finds.
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
static long long room[MAX_FD]; /* bytes a failing file still takes */
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
  if (strlen(path) >= n && !strcmp(path + strlen(path) - n, text) && opens++ >= (colon ? atoi(colon + 1) : 0)) {
    const char *after = getenv("AMRDLB_FAIL_WRITE_AFTER");
    failing[fd] = 1;
    room[fd] = after ? atoll(after) : 0;
  }
}

/* How many of n bytes a write to fd takes: n when fd is not failing, what
 * room is left when it is, -1 with ENOSPC when none is. */
static ssize_t takes(int fd, size_t n)
{
  if (fd < 0 || fd >= MAX_FD || !failing[fd]) return (ssize_t)n;
  if (room[fd] <= 0) {
    errno = ENOSPC;
    return -1;
  }
  if ((long long)n > room[fd]) n = (size_t)room[fd];
  room[fd] -= (long long)n;
  return (ssize_t)n;
}

/* The first n bytes of the vector v of c pieces, into a vector of its own:
 * *c becomes its count. */
static const struct iovec *clip(const struct iovec *v, int *c, size_t n, struct iovec *out, int cap)
{
  int k = 0;
  for (; k < *c && k < cap && n > 0; k++) {
    out[k] = v[k];
    if (out[k].iov_len > n) out[k].iov_len = n;
    n -= out[k].iov_len;
  }
  *c = k;
  return out;
}

static size_t total(const struct iovec *v, int c)
{
  size_t n = 0;
  for (int k = 0; k < c; k++) n += v[k].iov_len;
  return n;
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

/* a write cut short by the room left writes a prefix, as a filling disk does */
ssize_t write(int fd, const void *p, size_t n)
{
  const ssize_t m = takes(fd, n);
  return m < 0 ? -1 : NEXT(write)(fd, p, (size_t)m);
}
ssize_t pwrite(int fd, const void *p, size_t n, off_t o)
{
  const ssize_t m = takes(fd, n);
  return m < 0 ? -1 : NEXT(pwrite)(fd, p, (size_t)m, o);
}
ssize_t pwrite64(int fd, const void *p, size_t n, off_t o)
{
  const ssize_t m = takes(fd, n);
  return m < 0 ? -1 : NEXT(pwrite64)(fd, p, (size_t)m, o);
}
#define VEC_SHIM(name, ...) \
  { \
    struct iovec cut[64]; \
    const ssize_t m = takes(fd, total(v, c)); \
    if (m < 0) return -1; \
    v = clip(v, &c, (size_t)m, cut, 64); \
    return NEXT(name)(fd, v, c __VA_ARGS__); \
  }
ssize_t writev(int fd, const struct iovec *v, int c) VEC_SHIM(writev)
ssize_t pwritev(int fd, const struct iovec *v, int c, off_t o) VEC_SHIM(pwritev, , o)
ssize_t pwritev64(int fd, const struct iovec *v, int c, off_t o) VEC_SHIM(pwritev64, , o)
