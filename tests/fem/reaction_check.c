/*
 * reaction_check: the reaction integrator of fem/reaction.h on its own,
 * one property per run (-check):
 *   tolerance     A + B -> C against its exact solution for rtol 1e-2 ..
 *                 1e-8 (atol = rtol / 1000): the error stays below
 *                 -max_ratio times rtol and falls by at least -min_drop
 *                 over the six decades
 *   order         fixed ROS2 steps N, 2N, ..., 64N: the rate between the
 *                 two finest is at least -min_rate
 *   conservation  random states (negative values too), random k and step
 *                 sizes: A + C and B + C unchanged to -tol (relative) by
 *                 every step, by integrations chained 1000 times and by
 *                 the DG cell update (1, 3, 4 coefficients) coefficient by
 *                 coefficient
 *   contrast      DG cells with the default parameters over one step -dt:
 *                 each front cell takes at least -min_contrast times the
 *                 steps of every inert and reacted cell
 * Exit status 0 when the property holds.
 */

#include "fem/reaction.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Exact A(t) of A' = -k A B, B - A = d constant, A(0) = a0, B(0) = b0. */
static double exact_a(double k, double a0, double b0, double t)
{
  const double d = b0 - a0;
  if (d == 0) return a0 / (1 + k * a0 * t);
  if (d > 0) {
    const double e = exp(-k * d * t);
    return d * a0 * e / (b0 - a0 * e);
  }
  return exact_a(k, b0, a0, t) - d; /* B is the limiting one: A = B - d */
}

static PetscErrorCode check_tolerance(double max_ratio, double min_drop)
{
  ReactionParams p;
  const double a0 = 0.3, b0 = 0.5, c0 = 0.1, T = 0.01;
  double first = 0, last = 0;
  PetscFunctionBeginUser;
  ReactionDefaults(&p);
  p.k = 1e3; /* k (B - A) T = 2 and k B T = 5: a stiff transient */
  const double a = exact_a(p.k, a0, b0, T);
  const double exact[3] = {a, b0 - (a0 - a), c0 + (a0 - a)};
  for (int e = 2; e <= 8; e++) {
    ReactionWork w = {0};
    double y[3] = {a0, b0, c0}, err = 0;
    p.rtol = pow(10, -e);
    p.atol = p.rtol / 1000;
    PetscCall(ReactionIntegrate(&p, y, T, &w));
    for (int i = 0; i < 3; i++) err = fmax(err, fabs(y[i] - exact[i]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "rtol %.0e steps %5d rejected %3d error %.3e error/rtol %.3f\n", p.rtol, w.steps, w.rejected, err,
                          err / p.rtol));
    CHECK(err <= max_ratio * p.rtol);
    if (e == 2) first = err;
    last = err;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "error drop over six decades of rtol: %.3e\n", first / last));
  CHECK(first / last >= min_drop);
  PetscFunctionReturn(0);
}

static PetscErrorCode check_order(double min_rate)
{
  ReactionParams p;
  const double a0 = 0.3, b0 = 0.5, T = 1;
  double prev = 0, rate = 0;
  PetscFunctionBeginUser;
  ReactionDefaults(&p);
  p.k = 10;
  const double a = exact_a(p.k, a0, b0, T);
  for (int n = 10; n <= 640; n *= 2) {
    double y[3] = {a0, b0, 0};
    for (int i = 0; i < n; i++) ReactionStep(&p, y, T / n);
    const double err = fabs(y[0] - a);
    if (prev > 0) rate = log2(prev / err);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "steps %4d error %.3e rate %.3f\n", n, err, prev > 0 ? rate : 0));
    prev = err;
  }
  CHECK(rate >= min_rate);
  PetscFunctionReturn(0);
}

/** Uniform in [lo, hi). */
static double uniform(double lo, double hi)
{
  return lo + (hi - lo) * ((double)rand() / ((double)RAND_MAX + 1));
}

/** Largest change of the invariants A + C and B + C between y0 and y,
 *  relative to the largest magnitude involved. */
static double invariant_change(const double *y0, const double *y)
{
  const double scale = fmax(1, fmax(fmax(fabs(y0[0]), fabs(y0[1])), fabs(y0[2])));
  const double d1 = fabs((y[0] + y[2]) - (y0[0] + y0[2]));
  const double d2 = fabs((y[1] + y[2]) - (y0[1] + y0[2]));
  return fmax(d1, d2) / scale;
}

static PetscErrorCode check_conservation(double tol)
{
  ReactionParams p;
  double worst_step = 0, worst_chain = 0, worst_cell = 0;
  long steps = 0;
  PetscFunctionBeginUser;
  ReactionDefaults(&p);
  srand(12345);
  for (int i = 0; i < 100000; i++) {
    double y0[3], y[3];
    for (int s = 0; s < 3; s++) y[s] = y0[s] = uniform(-0.1, 1);
    p.k = pow(10, uniform(0, 7));
    ReactionStep(&p, y, pow(10, uniform(-6, 0)));
    worst_step = fmax(worst_step, invariant_change(y0, y));
  }
  for (int i = 0; i < 100; i++) {
    double y0[3], y[3];
    ReactionWork w = {0};
    for (int s = 0; s < 3; s++) y[s] = y0[s] = uniform(0, 1);
    p.k = pow(10, uniform(0, 6));
    for (int j = 0; j < 1000; j++) PetscCall(ReactionIntegrate(&p, y, pow(10, uniform(-6, -2)), &w));
    steps += w.steps;
    worst_chain = fmax(worst_chain, invariant_change(y0, y));
  }
  for (int i = 0; i < 30000; i++) {
    const int nb = i % 3 == 0 ? 1 : i % 3 == 1 ? 3 : 4;
    double a[4], b[4], c[4], a0[4], b0[4], c0[4];
    ReactionWork w;
    for (int j = 0; j < nb; j++) {
      /* means in [0, 1], slopes up to a third of them: negative point
       * values occur */
      const double lim = j ? 0.3 : 1;
      a[j] = a0[j] = uniform(j ? -lim : 0, lim);
      b[j] = b0[j] = uniform(j ? -lim : 0, lim);
      c[j] = c0[j] = uniform(j ? -lim : 0, lim);
    }
    p.k = pow(10, uniform(0, 6));
    PetscCall(ReactionCell(&p, nb, a, b, c, pow(10, uniform(-5, -1)), NULL, &w));
    for (int j = 0; j < nb; j++) {
      const double y0[3] = {a0[j], b0[j], c0[j]}, y[3] = {a[j], b[j], c[j]};
      worst_cell = fmax(worst_cell, invariant_change(y0, y));
    }
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "largest relative change of A + C, B + C: one step %.3e, 1000 integrations %.3e (%ld steps), DG cells %.3e\n", worst_step,
                        worst_chain, steps, worst_cell));
  CHECK(worst_step <= tol && worst_chain <= tol && worst_cell <= tol);
  PetscFunctionReturn(0);
}

static PetscErrorCode check_contrast(const ReactionParams *pp, double dt, double min_contrast)
{
  const ReactionParams p = *pp;
  int front_min = 1 << 30, other_max = 0;
  PetscFunctionBeginUser;
  const double b0 = p.b0;
  /* degree-1 cells in 2D (3 coefficients per species): mean, x and y
   * slopes of A, B, C as one transport step leaves them */
  const struct {
    const char *what;
    double a[3], b[3], c[3];
  } cells[] = {
      {"inert (no A yet)", {0, 0, 0}, {b0, 0, 0}, {0, 0, 0}},
      {"inert (A below round-off)", {1e-12, 1e-12, 0}, {b0, 0, 0}, {0, 0, 0}},
      {"reacted (B used up)", {1, 0, 0}, {0, 0, 0}, {b0, 0, 0}},
      {"reacted (B left at 1e-9)", {1, 0, 0}, {1e-9, 0, 0}, {b0, 0, 0}},
      {"front (A arriving)", {0.1, 0.1, 0}, {b0, 0, 0}, {0, 0, 0}},
      {"front (half reacted)", {0.3, 0.2, 0.1}, {0.5 * b0, -0.4 * b0, 0}, {0.5 * b0, 0.4 * b0, 0}},
      {"front (B nearly used up)", {0.4, 0.2, 0}, {0.05 * b0, -0.04 * b0, 0}, {0.95 * b0, 0.04 * b0, 0}},
  };
  for (size_t i = 0; i < sizeof cells / sizeof cells[0]; i++) {
    double a[3], b[3], c[3];
    ReactionWork w;
    memcpy(a, cells[i].a, sizeof a);
    memcpy(b, cells[i].b, sizeof b);
    memcpy(c, cells[i].c, sizeof c);
    const ReactionState st = ReactionCellState(&p, 3, a, b, c);
    PetscCall(ReactionCell(&p, 3, a, b, c, dt, NULL, &w));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-26s state %d steps %4d (rejected %3d) A %.3e B %.3e C %.3e\n", cells[i].what, (int)st, w.steps,
                          w.rejected, a[0], b[0], c[0]));
    const int front = !strncmp(cells[i].what, "front", 5);
    CHECK(front == (st == REACTION_REACTING)); /* the load type must tell the front from the rest */
    if (front)
      front_min = w.steps < front_min ? w.steps : front_min;
    else
      other_max = w.steps > other_max ? w.steps : other_max;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "fewest front steps %d, most other steps %d, contrast %.1f\n", front_min, other_max,
                        (double)front_min / other_max));
  CHECK((double)front_min >= min_contrast * other_max);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char check[64] = "";
  PetscReal max_ratio = 10, min_drop = 1e4, min_rate = 1.9, tol = 1e-14, dt = 1e-3, min_contrast = 10;
  char msg[256] = "";
  ReactionParams p;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-check", check, sizeof check, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-max_ratio", &max_ratio, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_drop", &min_drop, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_rate", &min_rate, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-dt", &dt, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_contrast", &min_contrast, NULL));
  /* the -react_* options set the contrast check's parameters */
  ReactionDefaults(&p);
  if (ReactionOptionsGet(PETSC_COMM_WORLD, &p, msg, sizeof msg))
    ;
  else if (!strcmp(check, "tolerance"))
    PetscCall(check_tolerance(max_ratio, min_drop));
  else if (!strcmp(check, "order"))
    PetscCall(check_order(min_rate));
  else if (!strcmp(check, "conservation"))
    PetscCall(check_conservation(tol));
  else if (!strcmp(check, "contrast"))
    PetscCall(check_contrast(&p, dt, min_contrast));
  else
    snprintf(msg, sizeof msg, "option -check: '%s' is not tolerance, order, conservation or contrast", check);
  if (msg[0]) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "reaction_check: error: %s\n", msg));
    PetscCall(PetscFinalize());
    return 1;
  }
  const int fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s\n", check, fail ? "FAILED" : "passed"));
  PetscCall(PetscFinalize());
  return fail;
}
