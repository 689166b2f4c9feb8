/* An LD_PRELOAD shim that turns Nagle's algorithm off on every TCP
 * connection a process opens, for the test environment
 * (tests/CMakeLists.txt builds it as nodelay and preloads it in every
 * test).
 *
 * Why: under mpiexec each rank talks to the launcher through PMIx, whose
 * client (PMIx 4.2, Open MPI 4.1's) connects over loopback TCP without
 * TCP_NODELAY.  MPI_Finalize sends it small messages back to back: the
 * second waits for the first one's acknowledgement, which the launcher's
 * side delays by up to 40 ms.  Every job under mpiexec lost 40 ms so:
 * MPI_Finalize took 44-47 ms on two ranks, 2.3-3.0 ms with this shim (a
 * singleton's takes 2.3); the suite took 319 and 296 s without it, 258 and
 * 269 s with it (run in the order without, with, with, without).  Only
 * the moment a message leaves changes, never its bytes, so no program's
 * result depends on it.  The programs themselves do not need it: a user's
 * run loses the 40 ms once. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
  static int (*next)(int, const struct sockaddr *, socklen_t);
  int rc, saved, one = 1;

  if (!next) next = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "connect");
  rc = next(fd, addr, len);
  /* a non-blocking connect returns EINPROGRESS, and the caller must still
   * see it; on a datagram socket the option fails, which is harmless */
  saved = errno;
  if (addr && (addr->sa_family == AF_INET || addr->sa_family == AF_INET6)) (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  errno = saved;
  return rc;
}
