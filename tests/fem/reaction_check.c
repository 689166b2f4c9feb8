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
 *                 every step, by integrations chained 1000 times and, in
 *                 their means, by the DG cell update (1, 3, 4
 *                 coefficients), whose slopes of A + C and B + C are
 *                 scaled by one factor in [0, 1] (the positivity limiter)
 *   positivity    random DG cells as the transport leaves them (means in
 *                 range, slopes that dip below 0 at points), B + C = b0,
 *                 random k and steps: after the cell update every species
 *                 is at least -tol at the reaction's points, so its mean
 *                 and every child's mean too, and C at most b0 + tol;
 *                 the mean of A does not grow
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
  FemReactionParams p;
  const double a0 = 0.3, b0 = 0.5, c0 = 0.1, T = 0.01;
  double first = 0, last = 0;
  PetscFunctionBeginUser;
  FemReactionDefaults(&p);
  p.k = 1e3; /* k (B - A) T = 2 and k B T = 5: a stiff transient */
  const double a = exact_a(p.k, a0, b0, T);
  const double exact[3] = {a, b0 - (a0 - a), c0 + (a0 - a)};
  for (int e = 2; e <= 8; e++) {
    FemReactionWork w = {0};
    double y[3] = {a0, b0, c0}, err = 0;
    p.rtol = pow(10, -e);
    p.atol = p.rtol / 1000;
    PetscCall(FemReactionIntegrate(&p, y, T, &w));
    for (int i = 0; i < 3; i++) err = fmax(err, fabs(y[i] - exact[i]));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "rtol %.0e steps %5d rejected %3d error %.3e error/rtol %.3f\n", p.rtol, w.steps, w.rejected, err,
                          err / p.rtol));
    CHECK(err <= max_ratio * p.rtol && w.failed == 0);
    if (e == 2) first = err;
    last = err;
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "error drop over six decades of rtol: %.3e\n", first / last));
  CHECK(first / last >= min_drop);
  PetscFunctionReturn(0);
}

static PetscErrorCode check_order(double min_rate)
{
  FemReactionParams p;
  const double a0 = 0.3, b0 = 0.5, T = 1;
  double prev = 0, rate = 0;
  PetscFunctionBeginUser;
  FemReactionDefaults(&p);
  p.k = 10;
  const double a = exact_a(p.k, a0, b0, T);
  for (int n = 10; n <= 640; n *= 2) {
    double y[3] = {a0, b0, 0};
    for (int i = 0; i < n; i++) FemReactionStep(&p, y, T / n);
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

/** How far the slopes of B + C after (b, c) are from the slopes before
 *  (b0, c0) times one factor theta in [0, 1], theta taken from the
 *  largest slope before; relative to max(1, that slope).  B and C share
 *  the positivity limiter's factor, so B + C, which the reaction keeps at
 *  every point, keeps its shape; A is limited on its own, so A + C's
 *  slopes are not asserted (its mean is, by invariant_change). */
static double slope_scaling_error(int nb, const double *b0, const double *c0, const double *b, const double *c)
{
  double before[3], after[3], big = 0, theta = 1, err = 0;
  if (nb == 1) return 0;
  for (int k = 1; k < nb; k++) {
    before[k - 1] = b0[k] + c0[k];
    after[k - 1] = b[k] + c[k];
    if (fabs(before[k - 1]) > big) {
      big = fabs(before[k - 1]);
      theta = after[k - 1] / before[k - 1];
    }
  }
  if (big == 0) return 0;
  err = fmax(0, fmax(-theta, theta - 1));
  for (int k = 0; k < nb - 1; k++) err = fmax(err, fabs(after[k] - theta * before[k]) / fmax(1, big));
  return err;
}

static PetscErrorCode check_conservation(double tol)
{
  FemReactionParams p;
  double worst_step = 0, worst_chain = 0, worst_cell = 0, worst_shape = 0;
  long steps = 0;
  PetscFunctionBeginUser;
  FemReactionDefaults(&p);
  srand(12345);
  for (int i = 0; i < 100000; i++) {
    double y0[3], y[3];
    for (int s = 0; s < 3; s++) y[s] = y0[s] = uniform(-0.1, 1);
    p.k = pow(10, uniform(0, 7));
    FemReactionStep(&p, y, pow(10, uniform(-6, 0)));
    worst_step = fmax(worst_step, invariant_change(y0, y));
  }
  for (int i = 0; i < 100; i++) {
    double y0[3], y[3];
    FemReactionWork w = {0};
    for (int s = 0; s < 3; s++) y[s] = y0[s] = uniform(0, 1);
    p.k = pow(10, uniform(0, 6));
    for (int j = 0; j < 1000; j++) PetscCall(FemReactionIntegrate(&p, y, pow(10, uniform(-6, -2)), &w));
    steps += w.steps;
    worst_chain = fmax(worst_chain, invariant_change(y0, y));
  }
  for (int i = 0; i < 30000; i++) {
    const int nb = i % 3 == 0 ? 1 : i % 3 == 1 ? 3 : 4;
    double a[4], b[4], c[4], a0[4], b0[4], c0[4];
    FemReactionWork w;
    for (int j = 0; j < nb; j++) {
      /* means in [0, 1], slopes up to a third of them: negative point
       * values occur */
      const double lim = j ? 0.3 : 1;
      a[j] = a0[j] = uniform(j ? -lim : 0, lim);
      b[j] = b0[j] = uniform(j ? -lim : 0, lim);
      c[j] = c0[j] = uniform(j ? -lim : 0, lim);
    }
    p.k = pow(10, uniform(0, 6));
    PetscCall(FemReactionCell(&p, nb, NULL, a, b, c, pow(10, uniform(-5, -1)), NULL, &w));
    {
      const double y0[3] = {a0[0], b0[0], c0[0]}, y[3] = {a[0], b[0], c[0]};
      worst_cell = fmax(worst_cell, invariant_change(y0, y));
    }
    worst_shape = fmax(worst_shape, slope_scaling_error(nb, b0, c0, b, c));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "largest relative change of A + C, B + C: one step %.3e, 1000 integrations %.3e (%ld steps), DG cells %.3e; "
                        "B + C's slopes off one factor by %.3e\n",
                        worst_step, worst_chain, steps, worst_cell, worst_shape));
  /* The slopes are a least-squares fit of point values, each integrated
   * over up to thousands of stiff steps whose round-off adds up: 6.4e-14
   * of max(1, slope) at worst over these cells (measured), where the
   * means keep 1e-14 */
  CHECK(worst_step <= tol && worst_chain <= tol && worst_cell <= tol && worst_shape <= 10 * tol);
  PetscFunctionReturn(0);
}

/** Value at tensor Gauss point q (or at the centre of child q, xi = +-1/2
 *  when half) of the DG function v with nb coefficients. */
static double value_at(const double *v, int nb, int q, int half)
{
  const double g = half ? 0.5 : 0.57735026918962576451;
  double x = v[0];
  for (int k = 0; k < nb - 1; k++) x += v[1 + k] * ((q >> k) & 1 ? g : -g);
  return x;
}

static PetscErrorCode check_positivity(double tol)
{
  FemReactionParams p;
  double lowest = 0, c_over = 0, a_growth = 0;
  int dipped = 0;
  PetscFunctionBeginUser;
  FemReactionDefaults(&p);
  srand(2468);
  for (int i = 0; i < 30000; i++) {
    const int nb = i % 3 == 0 ? 1 : i % 3 == 1 ? 3 : 4, np = nb > 1 ? 1 << (nb - 1) : 1;
    double a[4], b[4], c[4];
    FemReactionWork w;
    /* means in range, slopes up to 1.5 times the mean: points dip below 0
     * (counted: the check must see them); B + C = b0 at every point */
    a[0] = uniform(0, 1);
    b[0] = uniform(0, p.b0);
    c[0] = p.b0 - b[0];
    for (int k = 1; k < nb; k++) {
      a[k] = uniform(-1.5, 1.5) * a[0];
      b[k] = uniform(-1.5, 1.5) * fmin(b[0], c[0]);
      c[k] = -b[k];
    }
    const double amean = a[0];
    for (int q = 0; q < np; q++) dipped += value_at(a, nb, q, 0) < 0 || value_at(b, nb, q, 0) < 0 || value_at(c, nb, q, 0) < 0;
    p.k = pow(10, uniform(0, 6));
    PetscCall(FemReactionCell(&p, nb, NULL, a, b, c, pow(10, uniform(-5, -1)), NULL, &w));
    for (int q = 0; q < np; q++)
      for (int half = 0; half < 2; half++) {
        lowest = fmin(lowest, fmin(value_at(a, nb, q, half), fmin(value_at(b, nb, q, half), value_at(c, nb, q, half))));
        c_over = fmax(c_over, value_at(c, nb, q, half) - p.b0);
      }
    a_growth = fmax(a_growth, a[0] - amean);
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "%d points below 0 before; after: lowest species value at the points and the children's centres %.3e, C above b0 by %.3e, "
                        "A's mean grown by %.3e\n",
                        dipped, lowest, c_over, a_growth));
  CHECK(dipped > 0 && lowest >= -tol && c_over <= tol && a_growth <= tol);
  PetscFunctionReturn(0);
}

static PetscErrorCode check_contrast(const FemReactionParams *pp, double dt, double min_contrast)
{
  const FemReactionParams p = *pp;
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
    FemReactionWork w;
    memcpy(a, cells[i].a, sizeof a);
    memcpy(b, cells[i].b, sizeof b);
    memcpy(c, cells[i].c, sizeof c);
    const FemReactionState st = FemReactionCellState(&p, 3, a, b, c);
    PetscCall(FemReactionCell(&p, 3, NULL, a, b, c, dt, NULL, &w));
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%-26s state %d steps %4d (rejected %3d) A %.3e B %.3e C %.3e\n", cells[i].what, (int)st, w.steps,
                          w.rejected, a[0], b[0], c[0]));
    const int front = !strncmp(cells[i].what, "front", 5);
    CHECK(front == (st == FEM_REACTION_REACTING)); /* the load type must tell the front from the rest */
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

/* The clock forecast on sweeps whose clock is known: a rising line, a
 * falling one (floor 0.1 S0), a flat one, a jump at the last sweep (cap
 * 3 S0) and too few sweeps. */
static PetscErrorCode check_forecast(void)
{
  static const struct {
    double clock[10];
    int n;
    double want;
  } cases[] = {
    {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 10, 95},      /* S0 45, slope 1: 45 + 0.5 x 1 x 100 */
    {{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}, 10, 4.5},     /* 45 - 50 < 0.1 x 45 */
    {{2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, 10, 20},
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 100}, 10, 300},   /* 100 + 272.7 > 3 x 100 */
    {{0, 0, 0, 1, 2, 3}, 6, 17.314285714285714}, /* S0 6, S1 26, slope 11 / 17.5: 6 + 0.5 x 36 x 11 / 17.5 */
    {{1, 5}, 2, 6},
  };

  PetscFunctionBeginUser;
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    double S0 = 0, S1 = 0, got;
    for (int j = 0; j < cases[c].n; j++) {
      S0 += cases[c].clock[j];
      S1 += j * cases[c].clock[j];
    }
    got = FemReactionCostForecast(S0, S1, cases[c].n);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "case %zu: S0 %g S1 %g n %d forecast %.15g (want %.15g)\n", c, S0, S1, cases[c].n, got, cases[c].want));
    CHECK(fabs(got - cases[c].want) <= 1e-12 * cases[c].want);
  }
  PetscFunctionReturn(0);
}

/* A rate beyond the step-size control (k 1e40, k B T = 5e34): the
 * integrator stops after its 100000 steps, counts the point unsolved and
 * leaves it at a finite state between the start and the end (C formed,
 * A + C and B + C kept), where before it ended the program on its rank. */
static PetscErrorCode check_unsolved(void)
{
  FemReactionParams p;
  FemReactionWork w = {0};
  double y[3] = {0.3, 0.5, 0.1};

  PetscFunctionBeginUser;
  FemReactionDefaults(&p);
  p.k = 1e40;
  PetscCall(FemReactionIntegrate(&p, y, 1e-3, &w));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "k %g: %d steps, %d rejected, %d unsolved, state %.17g %.17g %.17g\n", p.k, w.steps, w.rejected, w.failed, y[0], y[1],
                        y[2]));
  CHECK(w.failed == 1 && w.steps == 100000);
  CHECK(isfinite(y[0]) && isfinite(y[1]) && isfinite(y[2]) && y[0] >= 0 && y[0] <= 0.3);
  CHECK(fabs(y[0] + y[2] - 0.4) <= 1e-15 && fabs(y[1] + y[2] - 0.6) <= 1e-15);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char check[64] = "";
  PetscReal max_ratio = 10, min_drop = 1e4, min_rate = 1.9, tol = 1e-14, dt = 1e-3, min_contrast = 10;
  char msg[256] = "";
  FemReactionParams p;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-check", check, sizeof check, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-max_ratio", &max_ratio, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_drop", &min_drop, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_rate", &min_rate, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &tol, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-dt", &dt, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_contrast", &min_contrast, NULL));
  /* the -react_* options set the contrast check's parameters */
  FemReactionDefaults(&p);
  if (FemReactionOptionsRead(PETSC_COMM_WORLD, &p, msg, sizeof msg))
    ;
  else if (!strcmp(check, "tolerance"))
    PetscCall(check_tolerance(max_ratio, min_drop));
  else if (!strcmp(check, "order"))
    PetscCall(check_order(min_rate));
  else if (!strcmp(check, "conservation"))
    PetscCall(check_conservation(tol));
  else if (!strcmp(check, "positivity"))
    PetscCall(check_positivity(tol));
  else if (!strcmp(check, "contrast"))
    PetscCall(check_contrast(&p, dt, min_contrast));
  else if (!strcmp(check, "forecast"))
    PetscCall(check_forecast());
  else if (!strcmp(check, "unsolved"))
    PetscCall(check_unsolved());
  else
    snprintf(msg, sizeof msg, "option -check: '%s' is not tolerance, order, conservation, positivity, contrast, forecast or unsolved", check);
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
