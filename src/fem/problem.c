#include <math.h>
#include <string.h>
#include "fem/problem.h"

#define PI 3.14159265358979323846

static double k_one(int dim, const double x[3], long tree)
{
  (void)dim; (void)x; (void)tree;
  return 1.0;
}

static fem_bc_t bc_dirichlet(int dim, const double x[3], const double n[3])
{
  (void)dim; (void)x; (void)n;
  return FEM_BC_DIRICHLET;
}

/* sine: u = prod sin(pi x_d) on the unit square/cube.  The face x = 1 is a
 * Neumann boundary so the convergence tests also exercise flux data. */
static double sine_u(int dim, const double x[3])
{
  double u = 1.0;
  for (int d = 0; d < dim; d++) u *= sin(PI * x[d]);
  return u;
}
static void sine_grad(int dim, const double x[3], double g[3])
{
  for (int a = 0; a < 3; a++) {
    g[a] = 0.0;
    if (a >= dim) continue;
    g[a] = PI * cos(PI * x[a]);
    for (int d = 0; d < dim; d++)
      if (d != a) g[a] *= sin(PI * x[d]);
  }
}
static double sine_f(int dim, const double x[3]) { return dim * PI * PI * sine_u(dim, x); }
static fem_bc_t sine_bc(int dim, const double x[3], const double n[3])
{
  (void)dim; (void)x;
  return n[0] > 0.5 ? FEM_BC_NEUMANN : FEM_BC_DIRICHLET;
}

/* lshape: in 2D u = r^(2/3) sin(2 theta/3) on (-1,1)^2 minus the quadrant
 * x > 0, y < 0, with theta in [0, 3 pi/2] measured from the positive x
 * axis; harmonic, so f = 0.  In 3D, on the Fichera corner (-1,1)^3 minus
 * (0,1)^3: u = |x|^(1/2), singular at the re-entrant vertex, with
 * f = -Laplace(u) = -(3/4)|x|^(-3/2). */
static double lshape_theta(const double x[3])
{
  double t = atan2(x[1], x[0]);
  if (t < 0) t += 2 * PI;
  /* The removed quadrant is theta in (3 pi/2, 2 pi); its edge theta = 0
   * belongs to the domain boundary and must read as 0, not 2 pi. */
  if (t > 1.5 * PI + 1e-12) t -= 2 * PI;
  return t;
}
static double lshape_u(int dim, const double x[3])
{
  const double r2 = x[0] * x[0] + x[1] * x[1] + (dim == 3 ? x[2] * x[2] : 0.0);
  if (dim == 3) return pow(r2, 0.25);
  return pow(r2, 1.0 / 3.0) * sin(2.0 / 3.0 * lshape_theta(x));
}
static void lshape_grad(int dim, const double x[3], double g[3])
{
  const double r2 = x[0] * x[0] + x[1] * x[1] + (dim == 3 ? x[2] * x[2] : 0.0);
  g[0] = g[1] = g[2] = 0.0;
  if (r2 == 0.0) return;
  if (dim == 3) {
    const double s = 0.5 * pow(r2, -0.75);
    for (int a = 0; a < 3; a++) g[a] = s * x[a];
    return;
  }
  /* grad(r^a sin(a t)) = a r^(a-1) (sin((1-a) t)... written via ur, ut. */
  const double a = 2.0 / 3.0, r = sqrt(r2), t = lshape_theta(x);
  const double ur = a * pow(r, a - 1) * sin(a * t), ut = a * pow(r, a - 1) * cos(a * t);
  g[0] = ur * cos(t) - ut * sin(t);
  g[1] = ur * sin(t) + ut * cos(t);
}
static double lshape_f(int dim, const double x[3])
{
  if (dim == 2) return 0.0;
  const double r2 = x[0] * x[0] + x[1] * x[1] + x[2] * x[2];
  return -0.75 * pow(r2, -0.75);
}

/* peak: u = exp(-a |x - x0|^2), a = 1000, x0 = (0.5, 0.5, 0.5). */
#define PEAK_A 1000.0
static double peak_r2(int dim, const double x[3])
{
  double r2 = 0.0;
  for (int d = 0; d < dim; d++) r2 += (x[d] - 0.5) * (x[d] - 0.5);
  return r2;
}
static double peak_u(int dim, const double x[3]) { return exp(-PEAK_A * peak_r2(dim, x)); }
static void peak_grad(int dim, const double x[3], double g[3])
{
  const double u = peak_u(dim, x);
  for (int a = 0; a < 3; a++) g[a] = a < dim ? -2.0 * PEAK_A * (x[a] - 0.5) * u : 0.0;
}
static double peak_f(int dim, const double x[3])
{
  return peak_u(dim, x) * (2.0 * PEAK_A * dim - 4.0 * PEAK_A * PEAK_A * peak_r2(dim, x));
}

/* interface: f = +1 above y = 1/2 + 1/4 sin(4 pi x), -1 below, u = 0 on the
 * boundary; no exact solution (deal.II step-40). */
static double interface_f(int dim, const double x[3])
{
  (void)dim;
  return x[1] > 0.5 + 0.25 * sin(4.0 * PI * x[0]) ? 1.0 : -1.0;
}

/* linear and quadratic: polynomials that Q1 resp. Q2 must reproduce exactly,
 * with a variable k and a Neumann face, on any mesh of affine cells.
 * linear: u = 1 + 2x - 3y + z, k = 1 + x, f = -div(k grad u) = -2. */
static double linear_u(int dim, const double x[3]) { return 1 + 2 * x[0] - 3 * x[1] + (dim == 3 ? x[2] : 0.0); }
static void linear_grad(int dim, const double x[3], double g[3])
{
  (void)x;
  g[0] = 2; g[1] = -3; g[2] = dim == 3 ? 1 : 0;
}
static double linear_f(int dim, const double x[3]) { (void)dim; (void)x; return -2.0; }
static double linear_k(int dim, const double x[3], long tree) { (void)dim; (void)tree; return 1.0 + x[0]; }

/* quadratic: u = x^2 - xy + 2y^2 + yz - z^2/2 (z terms in 3D), k = 1,
 * f = -(2 + 4 - 1) in 3D, -(2 + 4) in 2D. */
static double quadratic_u(int dim, const double x[3])
{
  double u = x[0] * x[0] - x[0] * x[1] + 2 * x[1] * x[1];
  if (dim == 3) u += x[1] * x[2] - 0.5 * x[2] * x[2];
  return u;
}
static void quadratic_grad(int dim, const double x[3], double g[3])
{
  g[0] = 2 * x[0] - x[1];
  g[1] = -x[0] + 4 * x[1] + (dim == 3 ? x[2] : 0.0);
  g[2] = dim == 3 ? x[1] - x[2] : 0.0;
}
static double quadratic_f(int dim, const double x[3]) { (void)x; return dim == 3 ? -5.0 : -6.0; }

/* jump: k piecewise constant per coarse tree, 1 in even and 10 in odd
 * trees, which on the unit square/cube cut into 2^dim trees (x fastest)
 * means k = 1 for x < 1/2 and 10 beyond; u is piecewise linear in x with
 * the continuous flux k du/dx = 1, so Q1 and Q2 reproduce it. */
#define JUMP_K 10.0
static double jump_u(int dim, const double x[3])
{
  (void)dim;
  return x[0] < 0.5 ? x[0] : 0.5 + (x[0] - 0.5) / JUMP_K;
}
static void jump_grad(int dim, const double x[3], double g[3])
{
  (void)dim;
  g[0] = x[0] < 0.5 ? 1.0 : 1.0 / JUMP_K;
  g[1] = g[2] = 0.0;
}
static double jump_f(int dim, const double x[3]) { (void)dim; (void)x; return 0.0; }
static double jump_k(int dim, const double x[3], long tree) { (void)dim; (void)x; return tree % 2 ? JUMP_K : 1.0; }

static const fem_problem_t problems[] = {
  {"sine", "u = prod sin(pi x_d) on the unit square/cube, Neumann on x = 1", "unit square/cube",
   (1 << 2) | (1 << 3), sine_u, sine_grad, sine_f, k_one, sine_bc},
  {"lshape", "2D: u = r^(2/3) sin(2 theta/3) on the L-shape; 3D: u = |x|^(1/2) on the Fichera corner",
   "(-1,1)^d minus the quadrant x>0,y<0 (2D) / one octant (3D)",
   (1 << 2) | (1 << 3), lshape_u, lshape_grad, lshape_f, k_one, bc_dirichlet},
  {"peak", "u = exp(-1000 |x - (1/2,..)|^2)", "unit square/cube",
   (1 << 2) | (1 << 3), peak_u, peak_grad, peak_f, k_one, bc_dirichlet},
  {"interface", "f = +-1 across y = 1/2 + 1/4 sin(4 pi x), u = 0 (deal.II step-40)", "unit square/cube",
   (1 << 2) | (1 << 3), NULL, NULL, interface_f, k_one, bc_dirichlet},
  {"linear", "u = 1 + 2x - 3y (+ z), k = 1 + x, Neumann on x = 1: exact for Q1", "any affine mesh",
   (1 << 2) | (1 << 3), linear_u, linear_grad, linear_f, linear_k, sine_bc},
  {"quadratic", "a quadratic u, Neumann on x = 1: exact for Q2", "any affine mesh",
   (1 << 2) | (1 << 3), quadratic_u, quadratic_grad, quadratic_f, k_one, sine_bc},
  {"jump", "k = 1 / 10 in even / odd trees, u piecewise linear in x", "unit square/cube as 2^dim trees",
   (1 << 2) | (1 << 3), jump_u, jump_grad, jump_f, jump_k, bc_dirichlet},
};

const fem_problem_t *fem_problem_get(int i)
{
  if (i < 0 || i >= (int)(sizeof(problems) / sizeof(problems[0]))) return NULL;
  return &problems[i];
}

const fem_problem_t *fem_problem_find(const char *name)
{
  for (int i = 0; fem_problem_get(i); i++)
    if (!strcmp(problems[i].name, name)) return &problems[i];
  return NULL;
}
