#ifndef AMRDLB_TESTS_WEIGHTS_CHECK_H
#define AMRDLB_TESTS_WEIGHTS_CHECK_H

/* Minimal assertions for the weights and curve tests: every failed check
 * prints the expression and the values, and main returns the count. */

#include <math.h>
#include <stdio.h>

static int check_failures;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      check_failures++;                                                        \
    }                                                                          \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                     \
  do {                                                                                            \
    double check_a_ = (a), check_b_ = (b);                                                        \
    if (!(fabs(check_a_ - check_b_) <= (tol))) {                                                  \
      fprintf(stderr, "%s:%d: check failed: %s = %.10g, expected %.10g +- %g\n", __FILE__, __LINE__, \
              #a, check_a_, check_b_, (double)(tol));                                              \
      check_failures++;                                                                           \
    }                                                                                             \
  } while (0)

#endif
