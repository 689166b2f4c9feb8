/* wavefront: the example of src/problems/README.md, "Adding a problem".  A Poisson problem
 * whose solution is a steep circular front (Mitchell's wave front
 * benchmark): u = atan(a (r - r0)), r the distance from (-0.05, -0.05[,
 * -0.05]), a = 20, r0 = 0.7, Dirichlet data on the unit square or cube.
 * Adaptation has to follow the front; the exact solution gives the errors.
 * The whole problem is its data and one ops table built from the Poisson
 * family's ops; registry.c lists it. */
#include <math.h>

#include "problems/poisson.h"

static const double a = 20, r0 = 0.7, centre = -0.05;

static double radius(int dim, const double x[3])
{
  double r2 = 0;
  for (int d = 0; d < dim; d++) r2 += (x[d] - centre) * (x[d] - centre);
  return sqrt(r2);
}

static double u(int dim, const double x[3]) { return atan(a * (radius(dim, x) - r0)); }

/* du/dr = a / (1 + s^2) with s = a (r - r0); grad u = du/dr (x - c) / r */
static void grad(int dim, const double x[3], double g[3])
{
  const double r = radius(dim, x), s = a * (r - r0), ur = a / (1 + s * s);
  for (int d = 0; d < 3; d++) g[d] = d < dim ? ur * (x[d] - centre) / r : 0.0;
}

/* f = -(u_rr + (dim - 1) u_r / r), u_rr = -2 a^2 s / (1 + s^2)^2 */
static double f(int dim, const double x[3])
{
  const double r = radius(dim, x), s = a * (r - r0), q = 1 + s * s;
  return -(-2 * a * a * s / (q * q) + (dim - 1) * a / (q * r));
}

static double k(int dim, const double x[3], long tree)
{
  (void)dim;
  (void)x;
  (void)tree;
  return 1.0;
}

static FemBC bc(int dim, const double x[3], const double n[3])
{
  (void)dim;
  (void)x;
  (void)n;
  return FEM_BC_DIRICHLET;
}

static const FemProblem data = {"wavefront", "u = atan(20 (r - 0.7)), a circular front", "unit square/cube", (1 << 2) | (1 << 3), u, grad, f, k, bc, 1, NULL};

const AmrProblemOps amr_problem_wavefront = AMR_POISSON_PROBLEM("wavefront", "Poisson: u = atan(20 (r - 0.7)), a steep circular front (the example of src/problems/README.md)", &data);
