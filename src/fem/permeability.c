/*
 * The permeability fields of the Darcy problems (permeability.h).
 */
#include "fem/permeability.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/options.h"

#define OPTION "option -darcy_permeability"

/* Largest SIGMA: |ln k| <= SIGMA sqrt(2 N) must stay far from overflow. */
#define MAX_SIGMA 20

/* Largest grid of a file:PATH field (SPE10's has 1.1e6 cells). */
#define MAX_FILE_CELLS (1L << 27)
/* sample planes of a lognormal field's contrast: 2D sees z = 0 only */
#ifdef P4_TO_P8
#define SAMPLE_PLANES 32
#else
#define SAMPLE_PLANES 1
#endif

typedef enum { PERM_CONSTANT, PERM_LOGNORMAL, PERM_FILE } PermKind;

struct _p_FemPermeability {
  PermKind kind;
  char *spec;
  double k;                                   /* constant */
  double amp;                                 /* lognormal: SIGMA sqrt(2 / N) */
  double kappa[FEM_PERMEABILITY_MODES][3];    /* wave vectors */
  double phase[FEM_PERMEABILITY_MODES];
  int n[3];                                   /* file: grid cells per direction (NZ 1 for a 2D file) */
  double *cell;                               /* file: NX NY NZ values, x fastest */
};

/* splitmix64 (Steele, Lea and Flood 2014): 64 bits of state, the same
 * sequence on every platform, unlike rand(). */
static uint64_t splitmix64(uint64_t *state)
{
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

/* Uniform in (0, 1): 53 random bits, never 0 (Box-Muller takes its log). */
static double uniform(uint64_t *state) { return ((double)(splitmix64(state) >> 11) + 0.5) * 0x1.0p-53; }

/* Standard normal by Box-Muller (one of the pair). */
static double normal(uint64_t *state)
{
  const double r = sqrt(-2 * log(uniform(state)));
  return r * cos(6.283185307179586 * uniform(state));
}

/* ln k = SIGMA sqrt(2/N) sum_j cos(kappa_j . x + phi_j) with kappa_j from
 * the covariance's spectral density N(0, I / LENGTH^2) and phi_j uniform:
 * mean 0, variance SIGMA^2, covariance SIGMA^2 exp(-r^2 / (2 LENGTH^2))
 * over the ensemble; Gaussian as N grows.  3D wave vectors: a 2D run sees
 * the plane z = 0, itself a field of the same covariance. */
static void lognormal_modes(FemPermeability perm, double sigma, double length, uint64_t seed)
{
  uint64_t state = seed;
  perm->amp = sigma * sqrt(2.0 / FEM_PERMEABILITY_MODES);
  for (int j = 0; j < FEM_PERMEABILITY_MODES; j++) {
    for (int a = 0; a < 3; a++) perm->kappa[j][a] = normal(&state) / length;
    perm->phase[j] = 6.283185307179586 * uniform(&state);
  }
}

/* Split "A,B,C" (a copy in buf) into exactly n parts. */
static int split_commas(char *buf, char *part[], int n)
{
  int m = 0;
  for (char *s = buf;; s++) {
    if (m == n) return 0;
    part[m++] = s;
    s = strchr(s, ',');
    if (!s) return m == n;
    *s = 0;
  }
}

static PetscErrorCode parse_constant(MPI_Comm comm, FemPermeability perm, const char *args)
{
  PetscFunctionBeginUser;
  PetscCheck(AmrParseReal(args, &perm->k) && perm->k > 0, comm, PETSC_ERR_USER_INPUT, OPTION " %s: K '%s' is not a positive number", perm->spec, args);
  perm->kind = PERM_CONSTANT;
  PetscFunctionReturn(0);
}

static PetscErrorCode parse_lognormal(MPI_Comm comm, FemPermeability perm, const char *args)
{
  char buf[256], *part[3];
  double sigma, length;
  long seed;

  PetscFunctionBeginUser;
  PetscCheck(strlen(args) < sizeof buf && split_commas(strcpy(buf, args), part, 3), comm, PETSC_ERR_USER_INPUT,
             OPTION " %s: lognormal takes three values, SIGMA,LENGTH,SEED", perm->spec);
  PetscCheck(AmrParseReal(part[0], &sigma) && sigma > 0 && sigma <= MAX_SIGMA, comm, PETSC_ERR_USER_INPUT,
             OPTION " %s: SIGMA '%s' is not a number in (0, %d]", perm->spec, part[0], MAX_SIGMA);
  PetscCheck(AmrParseReal(part[1], &length) && length > 0, comm, PETSC_ERR_USER_INPUT, OPTION " %s: LENGTH '%s' is not a positive number", perm->spec,
             part[1]);
  PetscCheck(AmrParseInt(part[2], &seed) && seed >= 0, comm, PETSC_ERR_USER_INPUT, OPTION " %s: SEED '%s' is not a non-negative integer",
             perm->spec, part[2]);
  perm->kind = PERM_LOGNORMAL;
  lognormal_modes(perm, sigma, length, (uint64_t)seed);
  PetscFunctionReturn(0);
}

/* The header line: 2 or 3 positive integers; their count, -1 if malformed. */
static int parse_header(const char *line, long dims[3])
{
  int n = 0;
  for (const char *s = line;;) {
    char *end;
    long v;
    while (isspace((unsigned char)*s)) s++;
    if (!*s) return n;
    if (n == 3) return -1;
    errno = 0;
    v = strtol(s, &end, 10);
    if (end == s || errno || v < 1 || (*end && !isspace((unsigned char)*end))) return -1;
    dims[n++] = v;
    s = end;
  }
}

/* Rank 0's read of a file:PATH grid into perm->n and perm->cell; a bad
 * file puts one sentence into msg instead (msg[0] != 0). */
static PetscErrorCode read_grid(FemPermeability perm, const char *path, char *msg, size_t len)
{
  char line[256];
  long dims[3] = {1, 1, 1}, count = 0, ncells;
  double v;
  FILE *f;
  int nd;

  PetscFunctionBeginUser;
  msg[0] = 0;
  f = fopen(path, "r");
  if (!f) {
    snprintf(msg, len, OPTION ": file %s: cannot open it (%s)", path, strerror(errno));
    PetscFunctionReturn(0);
  }
  nd = fgets(line, sizeof line, f) ? parse_header(line, dims) : -1;
  if (nd != 2 && nd != 3)
    snprintf(msg, len, OPTION ": file %s: the first line is not a header NX NY [NZ] of positive integers", path);
  else if ((double)dims[0] * (double)dims[1] * (double)dims[2] > (double)MAX_FILE_CELLS)
    snprintf(msg, len, OPTION ": file %s: a grid of %ld x %ld x %ld cells is more than %ld", path, dims[0], dims[1], dims[2], MAX_FILE_CELLS);
  if (msg[0]) {
    fclose(f);
    PetscFunctionReturn(0);
  }
  ncells = dims[0] * dims[1] * dims[2];
  PetscCall(PetscMalloc1(ncells, &perm->cell));
  while (!msg[0] && fscanf(f, "%lf", &v) == 1) {
    if (!(isfinite(v) && v > 0))
      snprintf(msg, len, OPTION ": file %s: value %ld (x, y, z index %ld, %ld, %ld from 0) is %g, not a positive number", path, count + 1, count % dims[0],
               count / dims[0] % dims[1], count / (dims[0] * dims[1]), v);
    else if (count < ncells)
      perm->cell[count] = v;
    count++;
  }
  if (!msg[0] && !feof(f)) snprintf(msg, len, OPTION ": file %s: value %ld is not a number", path, count + 1);
  if (!msg[0] && count != ncells)
    snprintf(msg, len, OPTION ": file %s: %ld values, but its header asks for %ld (%ld x %ld x %ld)", path, count, ncells, dims[0], dims[1], dims[2]);
  fclose(f);
  for (int a = 0; a < 3; a++) perm->n[a] = (int)dims[a];
  PetscFunctionReturn(0);
}

/* Rank 0 reads, every rank gets the grid or the same error. */
static PetscErrorCode parse_file(MPI_Comm comm, FemPermeability perm, const char *path)
{
  char msg[PETSC_MAX_PATH_LEN + 256] = "";
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCheck(path[0], comm, PETSC_ERR_USER_INPUT, OPTION " %s: no PATH after file:", perm->spec);
  if (rank == 0) PetscCall(read_grid(perm, path, msg, sizeof msg));
  PetscCallMPI(MPI_Bcast(msg, sizeof msg, MPI_CHAR, 0, comm));
  PetscCheck(!msg[0], comm, PETSC_ERR_USER_INPUT, "%s", msg);
  PetscCallMPI(MPI_Bcast(perm->n, 3, MPI_INT, 0, comm));
  if (rank != 0) PetscCall(PetscMalloc1((size_t)perm->n[0] * perm->n[1] * perm->n[2], &perm->cell));
  PetscCallMPI(MPI_Bcast(perm->cell, perm->n[0] * perm->n[1] * perm->n[2], MPI_DOUBLE, 0, comm));
  perm->kind = PERM_FILE;
  PetscFunctionReturn(0);
}

/* The spec forms by name: each parses what follows its "NAME:". */
static const struct {
  const char *name;
  PetscErrorCode (*parse)(MPI_Comm comm, FemPermeability perm, const char *args);
} forms[] = {{"constant", parse_constant}, {"lognormal", parse_lognormal}, {"file", parse_file}};

PetscErrorCode FemPermeabilityCreate(MPI_Comm comm, const char *spec, FemPermeability *perm)
{
  FemPermeability p;
  const char *colon = strchr(spec, ':');
  const size_t len = colon ? (size_t)(colon - spec) : 0;
  PetscErrorCode err = 0;
  int found = 0;

  PetscFunctionBeginUser;
  *perm = NULL;
  PetscCall(PetscCalloc1(1, &p));
  PetscCall(PetscStrallocpy(spec, &p->spec));
  for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++)
    if (colon && len == strlen(forms[f].name) && !strncmp(spec, forms[f].name, len)) {
      found = 1;
      err = forms[f].parse(comm, p, colon + 1);
    }
  if (!found || err) PetscCall(FemPermeabilityDestroy(&p));
  PetscCheck(found, comm, PETSC_ERR_USER_INPUT, OPTION " %s: not one of " FEM_PERMEABILITY_FORMS, spec);
  PetscCall(err);
  if (FemPermeabilityContrast(p) > FEM_PERMEABILITY_MAX_CONTRAST) {
    const double c = FemPermeabilityContrast(p);
    PetscCall(FemPermeabilityDestroy(&p));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, OPTION " %s: contrast %.3g (max/min) is beyond %g: the flux divergence would be about %.1g, no longer round-off", spec,
            c, FEM_PERMEABILITY_MAX_CONTRAST, 2.2e-16 * c);
  }
  *perm = p;
  PetscFunctionReturn(0);
}

/* Largest |argument| of mode_sum's own cosine: below it the reduction's
 * n (pi/2) is exact (n < 2^20, pi/2's first 33 bits). */
static const double reduce_max = 1e6;

/* sum_j cos(kappa_j . x + phi_j).  The cosines are computed in a loop
 * that the compiler vectorises (two lanes with SSE2, the build's
 * baseline), where libm's cos is a call per mode: the lognormal field's
 * cosines were a quarter of the 3D heterogeneous run (config/
 * darcy-heterogeneous-3d.opts) after every cell evaluated k only where its
 * terms need it.  t is reduced by multiples n of pi/2 (Cody and Waite,
 * with fdlibm's two-part pi/2), both fdlibm's minimax sine and cosine
 * (|error| < 1 ulp on [-pi/4, pi/4]) are evaluated, and n mod 4 picks
 * the quadrant's +-sin or +-cos by arithmetic, without branches.  Measured
 * against libm: at most 2.2e-16 apart for |t| < 60, the sum of 128 modes
 * at most 8.9e-15, in 0.63 of the time; arguments beyond reduce_max (a
 * LENGTH far below the domain's size) take libm's cos. */
static double mode_sum(const FemPermeability perm, const double x[3])
{
  double t[FEM_PERMEABILITY_MODES], c[FEM_PERMEABILITY_MODES], s = 0;
  const double round = 0x1.8p52; /* (v + round) - round: v rounded to an integer */
  for (int j = 0; j < FEM_PERMEABILITY_MODES; j++) {
    t[j] = perm->kappa[j][0] * x[0] + perm->kappa[j][1] * x[1] + perm->kappa[j][2] * x[2] + perm->phase[j];
    const double n = (t[j] * 6.36619772367581382433e-01 + round) - round;
    const double r = (t[j] - n * 1.57079632673412561417e+00) - n * 6.07710050650619224932e-11, z = r * r;
    const double q = n - 4 * ((n * 0.25 + round) - round); /* n mod 4, in -2..2 */
    const double u = q * q, a = (6 - 7 * u + u * u) / 6, b = -q * (4 - u) / 3; /* cos(q pi/2), -sin(q pi/2) */
    const double sn = r + r * z * (-1.66666666666666324348e-01 + z * (8.33333333332248946124e-03 + z * (-1.98412698298579493134e-04 + z * (2.75573137070700676789e-06 + z * (-2.50507602534068634195e-08 + z * 1.58969099521155010221e-10)))));
    const double cs = 1 - 0.5 * z + z * z * (4.16666666666666019037e-02 + z * (-1.38888888888741095749e-03 + z * (2.48015872894767294178e-05 + z * (-2.75573143513906633035e-07 + z * (2.08757232129817482790e-09 + z * -1.13596475577881948265e-11)))));
    c[j] = a * cs + b * sn;
  }
  for (int j = 0; j < FEM_PERMEABILITY_MODES; j++) s += fabs(t[j]) < reduce_max ? c[j] : cos(t[j]);
  return s;
}

/* The grid cell of coordinate x in [0, 1] with n cells; clamped, so that
 * x = 1 is in the last cell. */
static int grid_index(double x, int n)
{
  const double s = floor(x * n);
  return s < 0 ? 0 : s >= n ? n - 1 : (int)s;
}

double FemPermeabilityValue(FemPermeability perm, const double x[3])
{
  switch (perm->kind) {
  case PERM_CONSTANT:
    return perm->k;
  case PERM_LOGNORMAL:
    return exp(perm->amp * mode_sum(perm, x));
  case PERM_FILE: {
    const int *n = perm->n;
    return perm->cell[grid_index(x[0], n[0]) + (size_t)n[0] * (grid_index(x[1], n[1]) + (size_t)n[1] * grid_index(x[2], n[2]))];
  }
  }
  return NAN;
}

double FemPermeabilityContrast(FemPermeability perm)
{
  const int n = 32, nz = SAMPLE_PLANES;
  double lo = INFINITY, hi = 0;

  switch (perm->kind) {
  case PERM_CONSTANT:
    return 1;
  case PERM_FILE:
    for (size_t i = 0; i < (size_t)perm->n[0] * perm->n[1] * perm->n[2]; i++) {
      lo = fmin(lo, perm->cell[i]);
      hi = fmax(hi, perm->cell[i]);
    }
    return hi / lo;
  case PERM_LOGNORMAL:
    for (int k = 0; k < nz; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
          const double x[3] = {(i + 0.5) / n, (j + 0.5) / n, nz > 1 ? (k + 0.5) / nz : 0}, v = FemPermeabilityValue(perm, x);
          lo = fmin(lo, v);
          hi = fmax(hi, v);
        }
    return hi / lo;
  }
  return NAN;
}

const char *FemPermeabilitySpec(FemPermeability perm) { return perm->spec; }

PetscErrorCode FemPermeabilityDestroy(FemPermeability *perm)
{
  PetscFunctionBeginUser;
  if (!*perm) PetscFunctionReturn(0);
  PetscCall(PetscFree((*perm)->spec));
  PetscCall(PetscFree((*perm)->cell));
  PetscCall(PetscFree(*perm));
  PetscFunctionReturn(0);
}
