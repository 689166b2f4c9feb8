/*
 * permeability_check: the permeability fields of fem/permeability.h, one
 * property per run (-check):
 *   stats      lognormal:SIGMA,LENGTH,SEED (-sigma, -length, -seed) on a
 *              grid of spacing LENGTH/4 over the unit square (-dim 2, the
 *              plane z = 0) or cube (-dim 3): the sample mean of ln k is 0
 *              within 4 standard deviations of a domain average,
 *              4 SIGMA (sqrt(2 pi) LENGTH)^(d/2); its standard deviation
 *              is SIGMA within 2 (sqrt(pi) LENGTH)^(d/2) relative; the
 *              correlation at lag LENGTH along x is exp(-1/2) (Gaussian
 *              covariance) within 4 sqrt(0.2 / N) for N modes (the mean of
 *              cos(kappa x) over N wave vectors, whose variance is 0.2)
 *              plus the same domain term
 *   reference  fixed specs give the values computed when the generator
 *              was written, to 1e-13 relative: the field is the same on any
 *              machine, rank count and run; another seed another field
 *   file       -spec file:PATH of the 16 x 16 test grid (value of cell
 *              (i, j): (1 + i + 16 j) / 1000, times 1e4 where i + j is
 *              even; contrast 1.28e6): every cell's centre and corners inside it, the
 *              domain's edges, any z
 *   ranks      -spec SPEC at 1000 points: every rank computes the same
 *              values bit for bit (a file is read by rank 0 only)
 *   eval       -spec SPEC at the points "x y z" read from stdin, one
 *              value a line (%.17g), for the scripts that check the VTK
 *              output against the field
 * Exit status 0 when the property holds.
 */

#include "fem/femutil.h"
#include "fem/permeability.h"
#include "check.h"
#include "balance/lbclock.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const double pi = 3.141592653589793;

static PetscErrorCode check_stats(double sigma, double length, long seed, int dim)
{
  FemPermeability perm;
  char spec[128];
  const double h = length / 4;
  const int m = (int)floor(1 / h) + 1, lag = 4;
  const long long n = (long long)m * m * (dim == 3 ? m : 1);
  double *y, sum = 0, sum2 = 0, cov = 0, c0, c1;
  long long ncov = 0;

  PetscFunctionBeginUser;
  snprintf(spec, sizeof spec, "lognormal:%.17g,%.17g,%ld", sigma, length, seed);
  PetscCall(FemPermeabilityCreate(PETSC_COMM_SELF, spec, &perm));
  PetscCall(PetscMalloc1(n, &y));
  c0 = lb_clock_thread_cpu();
  for (long long p = 0; p < n; p++) {
    const double x[3] = {h * (double)(p % m), h * (double)(p / m % m), dim == 3 ? h * (double)(p / m / m) : 0};
    y[p] = log(FemPermeabilityValue(perm, x));
  }
  c1 = lb_clock_thread_cpu();
  for (long long p = 0; p < n; p++) {
    sum += y[p];
    sum2 += y[p] * y[p];
  }
  const double mean = sum / (double)n, sd = sqrt(sum2 / (double)n - mean * mean);
  for (long long p = 0; p < n; p++)
    if (p % m + lag < m) {
      cov += (y[p] - mean) * (y[p + lag] - mean);
      ncov++;
    }
  const double rho = cov / (double)ncov / (sd * sd);
  const double domain = pow(sqrt(pi) * length, dim / 2.0);
  const double tol_mean = 4 * sigma * pow(sqrt(2 * pi) * length, dim / 2.0), tol_sd = 2 * domain;
  const double tol_rho = 4 * sqrt(0.2 / FEM_PERMEABILITY_MODES) + tol_sd;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s, %dD grid of %lld points: mean %.4f (tolerance %.4f), sd %.4f (SIGMA %g, tolerance %.4f), correlation at LENGTH %.4f (exp(-1/2) %.4f, tolerance %.4f), %.2f us per value\n",
                        spec, dim, n, mean, tol_mean, sd, sigma, tol_sd * sigma, rho, exp(-0.5), tol_rho, 1e6 * (c1 - c0) / (double)n));
  CHECK_NEAR(mean, 0, tol_mean);
  CHECK_NEAR(sd / sigma, 1, tol_sd);
  CHECK_NEAR(rho, exp(-0.5), tol_rho);
  PetscCall(PetscFree(y));
  PetscCall(FemPermeabilityDestroy(&perm));
  PetscFunctionReturn(0);
}

/* k of spec at x, against a value computed when the generator was written. */
static PetscErrorCode check_value(const char *spec, const double x[3], double want)
{
  FemPermeability perm;

  PetscFunctionBeginUser;
  PetscCall(FemPermeabilityCreate(PETSC_COMM_SELF, spec, &perm));
  const double k = FemPermeabilityValue(perm, x);
  CHECK_MSG(fabs(k - want) <= 1e-13 * want, "%s at (%g, %g, %g): %.17g, expected %.17g", spec, x[0], x[1], x[2], k, want);
  PetscCall(FemPermeabilityDestroy(&perm));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_reference(void)
{
  static const struct {
    const char *spec;
    double x[3], k;
  } ref[] = {
    {"constant:2.5", {0.3, 0.7, 0}, 2.5},
    {"constant:1e-6", {0.3, 0.7, 0.1}, 1e-6},
    {"lognormal:1.5,0.2,42", {0.3, 0.7, 0}, 2.934893161538179},
    {"lognormal:1.5,0.2,42", {0.81, 0.12, 0}, 0.57168151058840366},
    {"lognormal:1.5,0.2,42", {0.5, 0.5, 0.5}, 35.418894156903441},
    {"lognormal:1.5,0.2,42", {0.05, 0.93, 0.77}, 3.2483061786700702},
    {"lognormal:3,0.05,0", {0.3, 0.7, 0}, 3.6764689793445244},
    {"lognormal:3,0.05,0", {0.5, 0.5, 0.5}, 1.2965979932418306},
    /* arguments of the cosines near 1e5 (reduced by up to 6e4 multiples
     * of pi/2) and near 1e7 (libm's cos): values of libm's cos at e27a8c1 */
    {"lognormal:1,1e-5,7", {0.3, 0.7, 0.2}, 0.49462438268927134},
    {"lognormal:1,1e-5,7", {0.91, 0.13, 0.58}, 1.1613479369938706},
    {"lognormal:1,1e-7,7", {0.3, 0.7, 0.2}, 3.0494466656037176},
    {"lognormal:1,1e-7,7", {0.91, 0.13, 0.58}, 3.1753778144678249},
  };

  PetscFunctionBeginUser;
  for (size_t i = 0; i < sizeof ref / sizeof ref[0]; i++) PetscCall(check_value(ref[i].spec, ref[i].x, ref[i].k));
  {
    /* another seed, another field */
    FemPermeability a, b;
    const double x[3] = {0.25, 0.5, 0};
    PetscCall(FemPermeabilityCreate(PETSC_COMM_SELF, "lognormal:1,0.1,1", &a));
    PetscCall(FemPermeabilityCreate(PETSC_COMM_SELF, "lognormal:1,0.1,2", &b));
    CHECK(FemPermeabilityValue(a, x) != FemPermeabilityValue(b, x));
    CHECK(!strcmp(FemPermeabilitySpec(a), "lognormal:1,0.1,1"));
    PetscCall(FemPermeabilityDestroy(&a));
    PetscCall(FemPermeabilityDestroy(&b));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%zu reference values\n", sizeof ref / sizeof ref[0]));
  PetscFunctionReturn(0);
}

/* The test grid's value of cell (i, j). */
static double grid_value(int i, int j) { return (1 + i + 16 * j) / 1000.0 * ((i + j) % 2 ? 1 : 1e4); }

static PetscErrorCode check_file(const char *spec)
{
  FemPermeability perm;
  double lo = INFINITY, hi = 0;

  PetscFunctionBeginUser;
  PetscCall(FemPermeabilityCreate(PETSC_COMM_WORLD, spec, &perm));
  for (int j = 0; j < 16; j++)
    for (int i = 0; i < 16; i++)
      for (int c = 0; c < 5; c++) {
        /* the centre, and points near the corners inside the cell */
        const double ox = c == 4 ? 0.5 : c % 2 ? 0.999 : 0.001, oy = c == 4 ? 0.5 : c / 2 ? 0.999 : 0.001;
        const double x[3] = {(i + ox) / 16, (j + oy) / 16, 0.37 * c};
        const double k = FemPermeabilityValue(perm, x);
        CHECK_MSG(k == grid_value(i, j), "cell (%d, %d) at (%g, %g, %g): %g, expected %g", i, j, x[0], x[1], x[2], k, grid_value(i, j));
        lo = fmin(lo, k);
        hi = fmax(hi, k);
      }
  {
    /* the domain's edges belong to the boundary cells */
    const double origin[3] = {0, 0, 0}, corner[3] = {1, 1, 1}, edge[3] = {1, 0.5, 0};
    CHECK(FemPermeabilityValue(perm, origin) == grid_value(0, 0));
    CHECK(FemPermeabilityValue(perm, corner) == grid_value(15, 15));
    CHECK(FemPermeabilityValue(perm, edge) == grid_value(15, 8));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: 256 cells, k in [%g, %g], contrast %.3g\n", spec, lo, hi, hi / lo));
  PetscCall(FemPermeabilityDestroy(&perm));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_ranks(const char *spec)
{
  FemPermeability perm;
  enum { NPOINTS = 1000 };
  double k[NPOINTS], lo[NPOINTS], hi[NPOINTS];
  int differ = 0;

  PetscFunctionBeginUser;
  PetscCall(FemPermeabilityCreate(PETSC_COMM_WORLD, spec, &perm));
  for (int p = 0; p < NPOINTS; p++) {
    /* a low-discrepancy sequence over the unit cube */
    const double x[3] = {fmod(0.5 + p * 0.6180339887498949, 1), fmod(0.5 + p * 0.7548776662466927, 1), fmod(0.5 + p * 0.5698402909980532, 1)};
    k[p] = FemPermeabilityValue(perm, x);
  }
  PetscCallMPI(MPI_Allreduce(k, lo, NPOINTS, MPI_DOUBLE, MPI_MIN, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(k, hi, NPOINTS, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  for (int p = 0; p < NPOINTS; p++) differ += lo[p] != hi[p];
  CHECK_EQ(differ, 0);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: %d points, %d differ between ranks\n", spec, NPOINTS, differ));
  PetscCall(FemPermeabilityDestroy(&perm));
  PetscFunctionReturn(0);
}

static PetscErrorCode eval(const char *spec)
{
  FemPermeability perm;
  double x[3];

  PetscFunctionBeginUser;
  PetscCall(FemPermeabilityCreate(PETSC_COMM_SELF, spec, &perm));
  while (scanf("%lf %lf %lf", &x[0], &x[1], &x[2]) == 3) printf("%.17g\n", FemPermeabilityValue(perm, x));
  PetscCall(FemPermeabilityDestroy(&perm));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char check[64] = "", spec[PETSC_MAX_PATH_LEN + 16] = "";
  PetscReal sigma = 1, length = 0.01;
  PetscInt seed = 1, dim = 2;
  int status = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-check", check, sizeof check, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-spec", spec, sizeof spec, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-sigma", &sigma, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-length", &length, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-seed", &seed, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-dim", &dim, NULL));
  if (!strcmp(check, "eval"))
    PetscCall(eval(spec));
  else {
    if (!strcmp(check, "stats"))
      PetscCall(check_stats(sigma, length, (long)seed, (int)dim));
    else if (!strcmp(check, "reference"))
      PetscCall(check_reference());
    else if (!strcmp(check, "file"))
      PetscCall(check_file(spec));
    else if (!strcmp(check, "ranks"))
      PetscCall(check_ranks(spec));
    else
      CHECK_MSG(0, "option -check: '%s' is not stats, reference, file, ranks or eval", check);
    status = check_finish(PETSC_COMM_WORLD);
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s\n", check, status ? "FAILED" : "passed"));
  }
  PetscCall(PetscFinalize());
  return status;
}
