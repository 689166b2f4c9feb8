/*
 * The registry of advection test problems and the -adv_* options.
 * Problems are looked up by name, like PETSc's KSPRegister table.
 */

#include "fem/advect.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIM P4EST_DIM

/* rotating-hill: solid-body rotation about (1/2, 1/2[, z]) with period 1 of
 * a Gaussian centred at (1/2, 0.65[, 1/2]).  It is wide, and its tails
 * cross the boundary (the inflow data is exact), because degree 0 smears a
 * narrow hill so much that its first-order rate only shows on meshes far
 * finer than a test can afford. */
static const double hill_omega = 6.28318530717958647693, hill_sigma = 0.2;

static void
hill_velocity (void *ctx, const advect_point_t *pt, double b[3])
{
  const double *x = pt->x;
  (void) ctx;
  b[0] = -hill_omega * (x[1] - 0.5);
  b[1] = hill_omega * (x[0] - 0.5);
  b[2] = 0;
}

static double
hill_exact (void *ctx, const double x[3], double t)
{
  (void) ctx;
  /* rotate the point back to where it started */
  const double c = cos (hill_omega * t), s = sin (hill_omega * t);
  const double dx = x[0] - 0.5, dy = x[1] - 0.5;
  double r2 = 0, x0[3];
  x0[0] = 0.5 + c * dx + s * dy;
  x0[1] = 0.5 - s * dx + c * dy;
  x0[2] = x[2];
  const double centre[3] = {0.5, 0.65, 0.5};
  for (int k = 0; k < DIM; k++)
    r2 += (x0[k] - centre[k]) * (x0[k] - centre[k]);
  return exp (-r2 / (2 * hill_sigma * hill_sigma));
}

/* moving-front: u = 1 behind a plane front through (1/4, 1/4[, 1/4]) at
 * t = 0 that moves with unit speed along the diagonal. */
static const double front_speed = 1;

static void
front_velocity (void *ctx, const advect_point_t *pt, double b[3])
{
  (void) ctx;
  (void) pt;
  const double s = front_speed / sqrt ((double) DIM);
  b[0] = b[1] = s;
  b[2] = DIM == 3 ? s : 0;
}

static double
front_exact (void *ctx, const double x[3], double t)
{
  double d = 0;
  (void) ctx;
  for (int k = 0; k < DIM; k++)
    d += (x[k] - 0.25) / sqrt ((double) DIM);
  return d < front_speed * t ? 1.0 : 0.0;
}

static const advect_problem_t hill = {
  "rotating-hill", hill_velocity, hill_exact, 1, 1.0, 0
};
static const advect_problem_t front = {
  "moving-front", front_velocity, front_exact, 1, 0.5, 0
};
extern const advect_problem_t advect_darcy_problem;
static const advect_problem_t *const problems[] = {
  &hill, &front, &advect_darcy_problem
};

const advect_problem_t *
advect_problem_find (const char *name)
{
  for (size_t i = 0; i < sizeof (problems) / sizeof (problems[0]); i++)
    if (!strcmp (problems[i]->name, name))
      return problems[i];
  return NULL;
}

void
advect_problem_names (char *buf, size_t len, const char *sep)
{
  size_t used = 0;
  buf[0] = 0;
  for (size_t i = 0; i < sizeof (problems) / sizeof (problems[0]); i++) {
    int n = snprintf (buf + used, len - used, "%s%s", i ? sep : "", problems[i]->name);
    if (n < 0 || (size_t) n >= len - used)
      return;
    used += (size_t) n;
  }
}

/* Options are read as strings and parsed here, because PETSc's own parser
 * answers a malformed number with an error that does not name the option. */

static int
parse_int (const char *s, long *v)
{
  char *end;
  errno = 0;
  *v = strtol (s, &end, 10);
  return errno == 0 && end != s && *end == 0;
}

static int
parse_real (const char *s, double *v)
{
  char *end;
  errno = 0;
  *v = strtod (s, &end);
  return errno == 0 && end != s && *end == 0 && isfinite (*v);
}

PetscErrorCode
advect_options_get (MPI_Comm comm, advect_options_t *opt, char *msg,
                    size_t msglen)
{
  char degree[64] = "1", rk[64] = "", cfl[64] = "0.5", limiter[64] = "false";
  PetscBool set;
  long iv;
  PetscFunctionBeginUser;
  PetscOptionsBegin (comm, NULL, "Advection (upwind DG) options", NULL);
  PetscCall (PetscOptionsString ("-adv_degree", "DG degree: 0 (finite volume) or 1", NULL,
                                 degree, degree, sizeof degree, NULL));
  PetscCall (PetscOptionsString ("-adv_rk", "SSP Runge-Kutta stages: 2 or 3 (default: degree + 2)",
                                 NULL, rk, rk, sizeof rk, NULL));
  PetscCall (PetscOptionsString ("-adv_cfl", "CFL number in (0, 1]: dt = cfl |K| / ((2p+1) outflow(K))",
                                 NULL, cfl, cfl, sizeof cfl, NULL));
  PetscCall (PetscOptionsString ("-adv_limiter", "Barth-Jespersen slope limiter for degree 1",
                                 NULL, limiter, limiter, sizeof limiter, &set));
  PetscOptionsEnd ();
  msg[0] = 0;
  if (set && !limiter[0])
    strcpy (limiter, "true"); /* a bare -adv_limiter switches it on */
  if (!parse_int (degree, &iv) || (iv != 0 && iv != 1)) {
    snprintf (msg, msglen, "option -adv_degree: '%s' is not 0 or 1", degree);
    PetscFunctionReturn (PETSC_ERR_USER_INPUT);
  }
  opt->degree = (int) iv;
  opt->rk_stages = opt->degree + 2;
  if (rk[0]) {
    if (!parse_int (rk, &iv) || (iv != 2 && iv != 3)) {
      snprintf (msg, msglen, "option -adv_rk: '%s' is not 2 or 3", rk);
      PetscFunctionReturn (PETSC_ERR_USER_INPUT);
    }
    opt->rk_stages = (int) iv;
  }
  if (!parse_real (cfl, &opt->cfl) || opt->cfl <= 0 || opt->cfl > 1) {
    snprintf (msg, msglen, "option -adv_cfl: '%s' is not a number in (0, 1]", cfl);
    PetscFunctionReturn (PETSC_ERR_USER_INPUT);
  }
  if (!strcmp (limiter, "1") || !strcmp (limiter, "true") || !strcmp (limiter, "yes"))
    opt->limiter = 1;
  else if (!strcmp (limiter, "0") || !strcmp (limiter, "false") || !strcmp (limiter, "no"))
    opt->limiter = 0;
  else {
    snprintf (msg, msglen, "option -adv_limiter: '%s' is not true or false", limiter);
    PetscFunctionReturn (PETSC_ERR_USER_INPUT);
  }
  PetscFunctionReturn (0);
}
