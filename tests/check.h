#ifndef AMRDLB_TESTS_CHECK_H
#define AMRDLB_TESTS_CHECK_H

/* The assertions of every C test (included as "check.h": tests/ is on the
 * include path of all tests).  A failed check prints file, line, the
 * expression and the values or a message to stderr and is counted in
 * check_failures; each check is an expression with the value of its
 * condition, so a test can also branch on it.  A serial test returns
 * check_failures != 0; a test on several ranks ends with check_finish. */

#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

static int check_failures;

static inline int check_report(int ok, const char *file, int line, const char *expr)
{
  if (!ok) {
    fprintf(stderr, "%s:%d: check failed: %s\n", file, line, expr);
    check_failures++;
  }
  return ok;
}

__attribute__((format(printf, 5, 6))) static inline int check_reportf(int ok, const char *file, int line, const char *expr, const char *fmt, ...)
{
  if (!ok) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s:%d: check failed: %s: ", file, line, expr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    check_failures++;
  }
  return ok;
}

static inline int check_eq(long long a, long long b, const char *file, int line, const char *expr)
{
  return check_reportf(a == b, file, line, expr, "%lld, expected %lld", a, b);
}

static inline int check_near(double a, double b, double tol, const char *file, int line, const char *ea)
{
  return check_reportf(fabs(a - b) <= tol, file, line, ea, "%.10g, expected %.10g +- %g", a, b, tol);
}

/** cond holds. */
#define CHECK(cond) check_report(!!(cond), __FILE__, __LINE__, #cond)
/** cond holds; otherwise the printf-style message follows the expression. */
#define CHECK_MSG(cond, ...) check_reportf(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
/** Integers a and b are equal. */
#define CHECK_EQ(a, b) check_eq((long long)(a), (long long)(b), __FILE__, __LINE__, #a " == " #b)
/** |a - b| <= tol (false for a NaN). */
#define CHECK_NEAR(a, b, tol) check_near((a), (b), (tol), __FILE__, __LINE__, #a)

/** Collective on comm, once at the end: check_failures becomes the sum
 *  over the ranks, the same on all, and the exit status is 0 only when no
 *  rank failed a check, so every rank exits alike. */
static inline int check_finish(MPI_Comm comm)
{
  MPI_Allreduce(MPI_IN_PLACE, &check_failures, 1, MPI_INT, MPI_SUM, comm);
  return check_failures != 0;
}

#endif
