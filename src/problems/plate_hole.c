/* plate-hole: potential flow around the hole of meshes/plate.inp, the unit
 * square minus the disc of radius R = 0.3 at (1/2, 1/2):
 * u = (x' + y'/2) (1 + R^2 / r^2) with x' = x - 1/2, y' = y - 1/2,
 * r = |(x', y')| (the real part of a z + R^2 a / z, harmonic, so f = 0),
 * Dirichlet data on the square's sides, no flux through the circle
 * (du/dr = 0 at r = R).  The hole's data g = 0 belong to the circle: on a
 * mesh whose hole is an octagon the same data pose another problem, whose
 * solution is not u, so only a mesh that follows the circle
 * (-boundary_shape hole:circle:0.5,0.5,0.3) converges to u.  In 3D the
 * same u (independent of z) with the cylinder. */
#include <math.h>

#include "problems/poisson.h"

static const double R = 0.3, centre = 0.5, hole = 0.4; /* hole: beyond the octagon, inside the square */

static double radius2(const double x[3]) { return (x[0] - centre) * (x[0] - centre) + (x[1] - centre) * (x[1] - centre); }

static double u(int dim, const double x[3])
{
  (void)dim;
  return (x[0] - centre + 0.5 * (x[1] - centre)) * (1 + R * R / radius2(x));
}

/* grad u = a (1 + R^2/r^2) - s 2 R^2 x' / r^4, a = (1, 1/2), s = a . x' */
static void grad(int dim, const double x[3], double g[3])
{
  const double r2 = radius2(x), s = x[0] - centre + 0.5 * (x[1] - centre), m = 1 + R * R / r2, q = 2 * R * R * s / (r2 * r2);
  (void)dim;
  g[0] = m - q * (x[0] - centre);
  g[1] = 0.5 * m - q * (x[1] - centre);
  g[2] = 0.0;
}

static double f(int dim, const double x[3]) { (void)dim; (void)x; return 0.0; }
static double k(int dim, const double x[3], long tree) { (void)dim; (void)x; (void)tree; return 1.0; }

static FemBC bc(int dim, const double x[3], const double n[3])
{
  (void)dim;
  (void)n;
  return radius2(x) < hole * hole ? FEM_BC_NEUMANN : FEM_BC_DIRICHLET;
}

/* no flux through the hole, the exact flux elsewhere (-bc_neumann may name
 * the square's sides) */
static double flux(int dim, const double x[3], const double n[3])
{
  double g[3], gn = 0.0;
  if (radius2(x) < hole * hole) return 0.0;
  grad(dim, x, g);
  for (int a = 0; a < dim; a++) gn += g[a] * n[a];
  return gn;
}

static const FemProblem data = {
  .name = "plate-hole",
  .help = "u = (x' + y'/2)(1 + R^2/r^2), harmonic, no flux through the hole r = 0.3",
  .domain = "meshes/plate.inp with -boundary_shape hole:circle:0.5,0.5,0.3",
  .dims = (1 << 2) | (1 << 3),
  .u = u,
  .grad = grad,
  .f = f,
  .k = k,
  .bc = bc,
  .k_per_tree = 1,
  .flux = flux,
};

const AmrProblemOps amr_problem_plate_hole =
  AMR_POISSON_PROBLEM("plate-hole", "Poisson: potential flow around the hole of meshes/plate.inp (circle r = 0.3 at (1/2, 1/2)), no flux through it", &data);
