/*
 * A + B -> C per cell by ROS2 with step-size control; see reaction.h.
 */

#include "fem/reaction.h"

#include "fem/femutil.h"
#include "util/options.h"
#include "balance/lbclock.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ROS2's gamma: 1 + 1/sqrt(2) makes the method L-stable. */
static const double ros2_gamma = 1.70710678118654752440;

/* Step-size control: safety factor and the bounds of one change. */
static const double safety = 0.9, grow_max = 5, shrink_max = 0.2;

/* Steps one point may take in one call before it counts as a failure. */
static const int max_steps = 100000;

void FemReactionDefaults(FemReactionParams *p)
{
  p->k = 1e5;
  p->rtol = 1e-2;
  p->atol = 1e-5;
  p->b0 = 0.5;
  p->threshold = 1e-5;
}

/* The stoichiometry s = (-1, -1, 1): f(y) = r(y) s. */
static const double stoich[FEM_REACTION_NS] = {-1, -1, 1};

/** Rate r and its gradient g = dr/dy. */
static double rate(const FemReactionParams *p, const double y[FEM_REACTION_NS], double g[FEM_REACTION_NS])
{
  const double a = fmax(y[0], 0), b = fmax(y[1], 0);
  if (g) {
    g[0] = y[0] > 0 ? p->k * b : 0;
    g[1] = y[1] > 0 ? p->k * a : 0;
    g[2] = 0;
  }
  return p->k * a * b;
}

/** Solves (I - gamma h J) x = v in place for the rank-one Jacobian
 *  J = s g^T of one reaction (Sherman-Morrison).  The denominator is
 *  1 + gamma h k (A+ + B+) >= 1: the matrix is never singular.  The
 *  correction is along s, which keeps w.x = w.v for every invariant w
 *  (w.s = 0). */
static void solve_w(double gh, const double g[FEM_REACTION_NS], double v[FEM_REACTION_NS])
{
  double gv = 0, gs = 0;
  for (int i = 0; i < FEM_REACTION_NS; i++) {
    gv += g[i] * v[i];
    gs += g[i] * stoich[i];
  }
  const double f = gh * gv / (1 - gh * gs);
  for (int i = 0; i < FEM_REACTION_NS; i++) v[i] += f * stoich[i];
}

double FemReactionStep(const FemReactionParams *p, double y[FEM_REACTION_NS], double h)
{
  double g[FEM_REACTION_NS], k1[FEM_REACTION_NS], k2[FEM_REACTION_NS], y1[FEM_REACTION_NS];
  const double gh = ros2_gamma * h;
  /* W = I - gamma h J(y); W k1 = f(y); W k2 = f(y + h k1) - 2 k1;
   * y+ = y + 3/2 h k1 + 1/2 h k2 */
  const double r0 = rate(p, y, g);
  for (int i = 0; i < FEM_REACTION_NS; i++) k1[i] = r0 * stoich[i];
  solve_w(gh, g, k1);
  for (int i = 0; i < FEM_REACTION_NS; i++) y1[i] = y[i] + h * k1[i];
  const double r1 = rate(p, y1, NULL);
  for (int i = 0; i < FEM_REACTION_NS; i++) k2[i] = r1 * stoich[i] - 2 * k1[i];
  solve_w(gh, g, k2);
  /* error: y+ minus the embedded first-order solution y + h k1.  Not
   * filtered by W^{-1} (Shampine): on this nonlinear rate the filtered
   * estimate accepts a single step across the whole stiff transient with
   * an error far above the tolerance */
  double err = 0;
  for (int i = 0; i < FEM_REACTION_NS; i++) {
    const double yn = y[i] + 1.5 * h * k1[i] + 0.5 * h * k2[i];
    const double e = 0.5 * h * (k1[i] + k2[i]);
    const double sc = p->atol + p->rtol * fmax(fabs(y[i]), fabs(yn));
    err += (e / sc) * (e / sc);
    y[i] = yn;
  }
  return sqrt(err / FEM_REACTION_NS);
}

PetscErrorCode FemReactionIntegrate(const FemReactionParams *p, double y[FEM_REACTION_NS], double t, FemReactionWork *w)
{
  double done = 0, h = t;
  int n = 0;
  PetscFunctionBeginUser;
  while (done < t) {
    double trial[FEM_REACTION_NS];
    /* the last step ends exactly at t */
    const int last = done + h >= t * (1 - 1e-12);
    if (last) h = t - done;
    memcpy(trial, y, sizeof trial);
    const double err = FemReactionStep(p, trial, h);
    if (++n > max_steps) {
      w->failed++;
      break;
    }
    w->steps++;
    if (err <= 1) {
      memcpy(y, trial, sizeof trial);
      done = last ? t : done + h;
    } else
      w->rejected++;
    /* the embedded solution is first order: its error grows like h^2 */
    const double fac = err > 0 ? safety / sqrt(err) : grow_max;
    h *= fmin(err <= 1 ? grow_max : 1, fmax(shrink_max, fac));
  }
  PetscFunctionReturn(0);
}

/** Cell coordinate k of tensor point q of the two-point Gauss rule. */
static double point_xi(int q, int k)
{
  return FemGaussX[2][(q >> k) & 1];
}

/** Value of the DG function with coefficients v (dim slopes) at point q. */
static double point_value(const double *v, int dim, int q)
{
  double x = v[0];
  for (int k = 0; k < dim; k++) x += v[1 + k] * point_xi(q, k);
  return x;
}

/** The DG function v at the cell's reference centroid xibar (0 when
 *  NULL): its physical mean. */
static double mean_value(const double *v, int dim, const double *xibar)
{
  double x = v[0];
  for (int k = 0; k < dim && xibar; k++) x += v[1 + k] * xibar[k];
  return x;
}

/** Positivity limiter (after Zhang and Shu 2010) on species first..last:
 *  u -> mean + theta (u - mean) with one theta in [0, 1], the largest that
 *  makes each of them non-negative at the cell's 2^d corners, hence on the
 *  whole cell: at the reaction's points, over any child after refinement,
 *  on curved cells too.  The physical means do not change, so neither do
 *  the integrals.  A mean below 0 (which the scheme does not make) gets
 *  theta = 0. */
static void limit_species(double *coef[FEM_REACTION_NS], int first, int last, int dim, const double *xibar)
{
  double theta = 1;
  for (int s = first; s <= last; s++) {
    const double mean = mean_value(coef[s], dim, xibar);
    for (int q = 0; q < 1 << dim; q++) {
      double v = coef[s][0];
      for (int k = 0; k < dim; k++) v += coef[s][1 + k] * ((q >> k) & 1 ? 1 : -1);
      if (v < 0) theta = fmin(theta, mean > 0 ? mean / (mean - v) : 0);
    }
  }
  if (theta == 1) return;
  for (int s = first; s <= last; s++) {
    const double mean = mean_value(coef[s], dim, xibar);
    coef[s][0] = mean + theta * (coef[s][0] - mean);
    for (int k = 0; k < dim; k++) coef[s][1 + k] *= theta;
  }
}

/** The positivity limiter on A alone, and on B and C with one theta: B + C
 *  (b0 in reactive-transport) stays constant at every point.  Not one
 *  theta for all three: where A's mean is a few ulps above 0 its theta is
 *  a ratio of round-off, and shared it scaled the slopes of B and C,
 *  which are of order 1 there, by that ratio (the 1- and 4-rank runs, whose
 *  pressures differ in the last digits, then differed by 1e-5 in the
 *  species integrals). */
static void limit_positive(double *coef[FEM_REACTION_NS], int dim, const double *xibar)
{
  limit_species(coef, 0, 0, dim, xibar);
  limit_species(coef, 1, 2, dim, xibar);
}

/** The exact reaction only runs forward and never consumes more than is
 *  there: its extent x (C's gain, A's and B's loss) lies in
 *  [0, min(A0, B0)].  ROS2 can step a little outside near a stiff
 *  front; then the extent is clamped into that interval, along the
 *  stoichiometry, so that A + C and B + C keep their values. */
static void clamp_extent(const double y0[FEM_REACTION_NS], double y[FEM_REACTION_NS])
{
  const double x = y[2] - y0[2], top = fmax(0, fmin(y0[0], y0[1]));
  if (x >= 0 && x <= top) return;
  const double xc = fmin(fmax(x, 0), top);
  for (int s = 0; s < FEM_REACTION_NS; s++) y[s] = y0[s] + xc * stoich[s];
}

PetscErrorCode FemReactionCell(const FemReactionParams *p, int nb, const double *xibar, double *a, double *b, double *c, double dt, double *clock, FemReactionWork *w)
{
  double *coef[FEM_REACTION_NS] = {a, b, c};
  /* values at the points: 2^d for degree 1 in d dimensions, else the mean */
  double y[1 << (FEM_REACTION_MAX_NB - 1)][FEM_REACTION_NS];
  const int dim = nb - 1, np = nb > 1 ? 1 << dim : 1;
  int changed = 0;
  PetscFunctionBeginUser;
  PetscCheck(nb == 1 || nb == 3 || nb == 4, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "reaction: %d coefficients per species (1, 3 or 4)", nb);
  w->steps = w->rejected = w->failed = 0;
  /* transport's slopes of A and a coarsened cell's slopes may dip below 0
   * at a point: there the clamped extent would be 0 while the rest of the
   * cell reacts, and the mean could fall below 0 */
  limit_positive(coef, dim, xibar);
  for (int q = 0; q < np; q++) {
    double y0[FEM_REACTION_NS];
    for (int s = 0; s < FEM_REACTION_NS; s++) y[q][s] = y0[s] = point_value(coef[s], dim, q);
    PetscCall(FemReactionIntegrate(p, y[q], dt, w));
    clamp_extent(y0, y[q]);
    changed |= memcmp(y0, y[q], sizeof y0) != 0;
  }
  /* least squares at the points: the mean, and 3 mean(v xi_k) for slope k
   * (sum_q xi_k xi_j = np/3 delta_kj).  The fit at xibar, the physical
   * mean, weighs the points by (1 + 3 sum_k xi_k xibar_k) / np, all
   * positive while sum_k |xibar_k| < 1/sqrt(3) (0 on affine cells; far
   * less on the curved cells of meshes/): the mean of a non-negative
   * species stays non-negative.  The slopes lose the points' bilinear
   * part and may dip below 0 at corners, so they are limited again */
  for (int s = 0; s < FEM_REACTION_NS && changed; s++)
    for (int j = 0; j < nb; j++) {
      double sum = 0;
      for (int q = 0; q < np; q++) sum += y[q][s] * (j ? point_xi(q, j - 1) : 1);
      coef[s][j] = (j ? 3.0 : 1.0) * sum / np;
    }
  if (changed) limit_positive(coef, dim, xibar);
  /* one clock read per cell: a read costs about as much as a cell where
   * nothing reacts, so the cells of a sweep share them */
  if (clock) {
    const double now = lb_clock_thread_cpu();
    w->cpu = now - *clock;
    *clock = now;
  } else
    w->cpu = 0;
  PetscFunctionReturn(0);
}

FemReactionState FemReactionCellState(const FemReactionParams *p, int nb, const double *a, const double *b, const double *c)
{
  const int dim = nb - 1, np = nb > 1 ? 1 << dim : 1;
  /* at the points the reaction integrates at: a cell whose mean holds
   * little A or B may still react where its slope piles them up */
  for (int q = 0; q < np; q++) {
    const double va = point_value(a, dim, q), vb = point_value(b, dim, q);
    if (va > p->threshold && vb > p->threshold) return FEM_REACTION_REACTING;
  }
  return c[0] > p->threshold ? FEM_REACTION_REACTED : FEM_REACTION_INERT;
}

/* The -react_* options into ctx, a FemReactionParams whose values are the
 * defaults; a bad value is an error naming the option. */
static PetscErrorCode reaction_read(MPI_Comm comm, void *ctx)
{
  FemReactionParams *p = ctx;
  const struct {
    const char *name, *help;
    double *value;
    int zero_ok;
  } opt[] = {
      {"-react_k", "rate constant k of A + B -> C, rate k A B", &p->k, 0},
      {"-react_rtol", "relative tolerance of the reaction integrator (ROS2)", &p->rtol, 0},
      {"-react_atol", "absolute tolerance of the reaction integrator", &p->atol, 0},
      {"-react_b0", "initial concentration of the resident species B", &p->b0, 1},
      {"-react_threshold", "concentration above which a species counts as present (load types)", &p->threshold, 0},
  };
  const int n = (int)(sizeof opt / sizeof opt[0]);

  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, NULL, "Reaction (reactive-transport) options", NULL);
  for (int i = 0; i < n; i++)
    PetscCall(AmrOptionsRealIn(PetscOptionsObject, opt[i].name, opt[i].help, 0, INFINITY, opt[i].zero_ok ? 0 : AMR_OPEN_LO,
                               opt[i].zero_ok ? "a non-negative number" : "a positive number", opt[i].value));
  PetscOptionsEnd();
  PetscFunctionReturn(0);
}

PetscErrorCode FemReactionOptionsRead(MPI_Comm comm, FemReactionParams *p, char *msg, size_t msglen)
{
  return AmrOptionsQuietly(comm, reaction_read, p, msg, msglen);
}

/* The front moves over cells within a cycle, so the last cycle's clock
 * lags the next cycle's work: on 8 ranks (config/reactive-transport.opts,
 * level 8) the transport phase's predicted per-rank load missed the
 * measured one by 4.7, 7.4 and 11.8% at 5, 10 and 20 steps per cycle (mean
 * absolute over ranks and cycles, each cycle's prediction scaled to its
 * measured total first).  A front passing a cell makes a bump in its
 * clock, not a line, so the trend holds for part of the next cycle only:
 * half the slope (0.25 to 1 did about as well, none worse), capped at 3 S0
 * (2 did worse).  Measured there at 10 steps per cycle: that miss 5.8-6.3%
 * against 7.3-7.7% without the trend. */
double FemReactionCostForecast(double S0, double S1, int n)
{
  double slope;

  if (n < 3) return S0;
  slope = (S1 - 0.5 * (n - 1) * S0) / (n * ((double)n * n - 1) / 12);
  return fmin(fmax(S0 + 0.5 * slope * n * n, 0.1 * S0), 3 * S0);
}
