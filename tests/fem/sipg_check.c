/* The SIPG pressure and its flux (fem/sipg.h), the Darcy flux of
 * darcy-transport.
 *
 * -problem linear: p = 1 + 2x - 3y (+ z/2) with k = 2.5 lies in the DG Q1
 * space, so on a graded forest (hanging faces across tree and rank
 * boundaries) p_h = p and the numerical flux at every face point equals
 * -k grad p . ndS to round-off; the fluxes the transport takes from it
 * (FemAdvectProblem.face_flux) sum to zero over every cell.
 *
 * -problem layered: k = 1 below y = 1/2 and -contrast (1e6) above, p = x +
 * y below, x + 1/2 + (y - 1/2) / contrast above: flow along the layers
 * and across them, exactly in the space again (the interface is a mesh
 * line), so the same holds across a jump of k of 1e6 (the weighted
 * averages and the harmonic penalty, the direct solver).
 *
 * -problem sine: p = prod sin(pi x_a) on uniform forests of -levels: the
 * L2 error of p and the face-weighted error of the flux fall at the rates
 * SIPG Q1 promises, h^2 and h (-min_p_rate, -min_flux_rate; on uniform
 * forests the flux at the Gauss points superconverges, measured h^3).
 * With the source f, the cells' net outflow printed is theirs of f.
 *
 * -problem iterations: k from -permeability (a -darcy_permeability spec:
 * constant, lognormal, a checkerboard file), p = the linear one on the
 * boundary, on forests uniform to level L - 3 and graded to level L
 * towards -target, for each L of -levels: CG's iterations per solve (both
 * refinement sweeps together) are at most -max_its whatever the level and
 * the contrast, and the cells' fluxes still sum to zero. */
#include "mesh/p4est_dim.h"
#include <math.h>
#include <petscsys.h>
#include <string.h>

#include "app/lbcycle.h"
#include "fem/permeability.h"
#include "fem/sipg.h"
#include "mesh/geom.h"
#include "mesh/shapes.h"
#include "check.h"

#define DIM P4EST_DIM

static const double kconst = 2.5;
static enum { LINEAR, SINE, LAYERED, ITERATIONS } problem;
static double contrast = 1e6; /* layered: k above y = 1/2 */
static FemPermeability field; /* iterations: -permeability */

static double permeability(void *ctx, const double x[3])
{
  (void)ctx;
  if (problem == ITERATIONS) return FemPermeabilityValue(field, x);
  return problem == LAYERED ? (x[1] < 0.5 ? 1 : contrast) : kconst;
}

static double exact(int dim, const double x[3])
{
  double v = 1;
  switch (problem) {
  case SINE:
    for (int a = 0; a < dim; a++) v *= sin(M_PI * x[a]);
    return v;
  case LAYERED: /* flow along the layers, and across them with k dp/dy = 1 */
    return x[0] + (x[1] < 0.5 ? x[1] : 0.5 + (x[1] - 0.5) / contrast);
  default:
    return 1 + 2 * x[0] - 3 * x[1] + (dim == 3 ? 0.5 * x[2] : 0);
  }
}

/* k grad p: continuous in its normal component across the layers */
static void exact_flux(int dim, const double x[3], double g[3])
{
  g[0] = g[1] = g[2] = 0;
  switch (problem) {
  case SINE:
    for (int a = 0; a < dim; a++) {
      g[a] = kconst * M_PI * cos(M_PI * x[a]);
      for (int b = 0; b < dim; b++)
        if (b != a) g[a] *= sin(M_PI * x[b]);
    }
    return;
  case LAYERED:
    g[0] = permeability(NULL, x);
    g[1] = 1;
    return;
  default:
    g[0] = 2 * kconst;
    g[1] = -3 * kconst;
    g[2] = dim == 3 ? 0.5 * kconst : 0;
  }
}

static double source(int dim, const double x[3]) { return problem == SINE ? kconst * dim * M_PI * M_PI * exact(dim, x) : 0; }

static FemBC all_dirichlet(int dim, const double x[3], const double n[3])
{
  (void)dim;
  (void)x;
  (void)n;
  return FEM_BC_DIRICHLET;
}

static const FemProblem pressure = {
  .name = "sipg-check", .help = "", .domain = "", .dims = (1 << 2) | (1 << 3), .u = exact, .grad = NULL, .f = source, .k = NULL, .bc = all_dirichlet};

static void no_velocity(void *ctx, const FemAdvectPoint *pt, double b[3])
{
  (void)ctx;
  (void)pt;
  b[0] = b[1] = b[2] = 0;
}

static double no_tracer(void *ctx, const double x[3], double t)
{
  (void)ctx;
  (void)x;
  (void)t;
  return 0;
}

static double sipg_flux(void *ctx, const FemAdvectFacePoint *fp) { return FemSipgFlux(ctx, fp); }

static const FemAdvectProblem transport = {.name = "sipg-check", .velocity = no_velocity, .exact = no_tracer, .t_final = 1, .face_flux = sipg_flux};

static PetscReal target[3] = {0.31, 0.27, 0.23};

/* Every cell whose centre lies within 0.5 of the target, down to the
 * finest level: a refined ball whose rim, once balanced, has hanging
 * faces (across trees and ranks). */
static int refine_ball(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  const double centre[3] = {0.5, 0.5, 0.5};
  double x[3], d2 = 0;
  AmrGeomQuadMap(p4est->connectivity, t, q, centre, x, NULL);
  for (int a = 0; a < DIM; a++) d2 += (x[a] - target[a]) * (x[a] - target[a]);
  return q->level < *(const int *)p4est->user_pointer && d2 < 0.25;
}

/* Uniform to level L - 3, then towards the target to level L (L the
 * user_pointer's): a few cells of every level around it. */
static int refine_graded(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  const double centre[3] = {0.5, 0.5, 0.5}, h = 1.0 / (1 << q->level);
  const int L = *(const int *)p4est->user_pointer;
  double x[3], d2 = 0;
  AmrGeomQuadMap(p4est->connectivity, t, q, centre, x, NULL);
  for (int a = 0; a < DIM; a++) d2 += (x[a] - target[a]) * (x[a] - target[a]);
  return q->level < L - 3 || (q->level < L && d2 < 16 * h * h);
}

/* Errors of the solution on the current forest: L2 of p (3-point Gauss per
 * direction), and of the flux at the face points, largest (relative to the
 * exact flux density there times the point's weight and area) and weighted by the faces' size h: sqrt(sum h (F -
 * F_exact)^2 / |ndS|), the discrete L2 norm of h^{1/2} times the flux
 * density error on the faces, which falls like h for Q1. */
static PetscErrorCode errors(FemSipg s, FemAdvect adv, double *l2p, double *fmax_rel, double *fl2, long *hanging)
{
  static const double gx[3] = {0.11270166537925831148, 0.5, 0.88729833462074168852}, gw[3] = {5.0 / 18, 8.0 / 18, 5.0 / 18};
  p4est_t *p4est = FemAdvectForest(adv);
  const FemAdvectFacePoint *pts;
  size_t n;
  double loc[4] = {0, 0, 0, 0}; /* p error^2, max |F - Fex| / (|k grad p| |ndS|), unused, flux error^2 */

  PetscFunctionBeginUser;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      FemAdvectPoint pt = {.tree = t, .quad = p4est_quadrant_array_index(&tr->quadrants, i), .cell = (p4est_locidx_t)(tr->quadrants_offset + i)};
      for (int q = 0; q < (DIM == 2 ? 9 : 27); q++) {
        double J[3][3], Ji[3][3], w = 1;
        for (int a = 0, r = q; a < DIM; a++, r /= 3) {
          pt.eta[a] = gx[r % 3];
          w *= gw[r % 3];
        }
        AmrGeomQuadMap(p4est->connectivity, t, pt.quad, pt.eta, pt.x, J);
        w *= fabs(AmrGeomInvert(J, Ji));
        const double e = FemSipgValue(s, &pt) - exact(DIM, pt.x);
        loc[0] += w * e * e;
      }
    }
  }
  PetscCall(FemAdvectFacePoints(adv, &pts, &n));
  *hanging = 0;
  for (size_t p = 0; p < n; p++) {
    *hanging += pts[p].b.quad && pts[p].b.quad->level != pts[p].a.quad->level;
    double g[3], fex = 0, area = 0, h;
    exact_flux(DIM, pts[p].a.x, g);
    for (int a = 0; a < DIM; a++) {
      fex -= g[a] * pts[p].ndS[a];
      area += pts[p].ndS[a] * pts[p].ndS[a];
    }
    area = sqrt(area);
    h = (double)P4EST_QUADRANT_LEN(pts[p].a.quad->level) / P4EST_ROOT_LEN;
    const double d = FemSipgFlux(s, &pts[p]) - fex;
    double gn = 0;
    for (int a = 0; a < DIM; a++) gn += g[a] * g[a];
    loc[1] = fmax(loc[1], fabs(d) / (sqrt(gn) * area + 1e-300));
    loc[3] += h * d * d / area;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, hanging, 1, MPI_LONG, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &loc[0], 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &loc[1], 2, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &loc[3], 1, MPI_DOUBLE, MPI_SUM, PETSC_COMM_WORLD));
  *l2p = sqrt(loc[0]);
  *fmax_rel = loc[1];
  *fl2 = sqrt(loc[3]);
  PetscFunctionReturn(0);
}

/* Solve on p4est, then the errors and the transport's flux divergence. */
static PetscErrorCode run(p4est_t *p4est, FemSipg *s, double *l2p, double *fmax_rel, double *fl2, double *div, long *hanging, PetscInt *its)
{
  const FemAdvectOptions opt = {.degree = 1, .rk_stages = 2, .cfl = 0.5, .limiter = 0};
  FemAdvect adv;
  PetscReal rnorm;

  PetscFunctionBeginUser;
  PetscCall(FemSipgCreate(PETSC_COMM_WORLD, &pressure, permeability, NULL, NULL, s));
  PetscCall(FemAdvectCreate(p4est, &transport, *s, &opt, &adv));
  PetscCall(FemSipgSolve(*s, adv, its, &rnorm));
  PetscCall(FemAdvectMeshChanged(adv));
  PetscCall(errors(*s, adv, l2p, fmax_rel, fl2, hanging));
  PetscCall(FemAdvectFluxDivergence(adv, div));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "cells %lld (hanging face points %ld) its %d: L2(p) %.3e flux max %.3e (relative) flux L2 %.3e cells' net outflow %.3e\n",
                        (long long)p4est->global_num_quadrants, *hanging, (int)*its, *l2p, *fmax_rel, *fl2, *div));
  PetscCall(FemAdvectDestroy(&adv));
  PetscCall(FemSipgDestroy(s));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  char shape[64] = "brick", pname[64] = "linear", spec[PETSC_MAX_PATH_LEN + 16] = "constant:1";
  PetscInt maxlevel = 5, levels[8], nlev = 8, max_its = 20, its;
  PetscReal tol = 1e-10, min_p_rate = 1.9, min_flux_rate = 0.9;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  sc_init(PETSC_COMM_WORLD, 1, 1, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscOptionsBegin(PETSC_COMM_WORLD, NULL, "SIPG pressure and Darcy flux", NULL);
  PetscCall(PetscOptionsString("-shape", "coarse mesh", NULL, shape, shape, sizeof(shape), NULL));
  PetscCall(PetscOptionsString("-problem", "linear or layered (exactness), sine (rates), iterations (CG's bound)", NULL, pname, pname, sizeof(pname), NULL));
  PetscCall(PetscOptionsString("-permeability", "iterations: k, a -darcy_permeability spec", NULL, spec, spec, sizeof spec, NULL));
  PetscCall(PetscOptionsInt("-max_its", "iterations: most CG iterations accepted per solve", NULL, max_its, &max_its, NULL));
  PetscCall(PetscOptionsReal("-contrast", "layered: k above y = 1/2 (1 below)", NULL, contrast, &contrast, NULL));
  PetscCall(PetscOptionsInt("-maxlevel", "finest level of the graded forest (linear)", NULL, maxlevel, &maxlevel, NULL));
  PetscInt nt = 3;
  PetscCall(PetscOptionsRealArray("-target", "point the forest is graded towards (linear)", NULL, target, &nt, NULL));
  PetscCall(PetscOptionsIntArray("-levels", "uniform levels (sine), finest levels (iterations)", NULL, levels, &nlev, NULL));
  PetscCall(PetscOptionsReal("-tol", "largest accepted error (linear)", NULL, tol, &tol, NULL));
  PetscCall(PetscOptionsReal("-min_p_rate", "smallest accepted L2 rate of p (sine)", NULL, min_p_rate, &min_p_rate, NULL));
  PetscCall(PetscOptionsReal("-min_flux_rate", "smallest accepted rate of the flux (sine)", NULL, min_flux_rate, &min_flux_rate, NULL));
  PetscOptionsEnd();
  problem = !strcmp(pname, "sine") ? SINE : !strcmp(pname, "layered") ? LAYERED : !strcmp(pname, "iterations") ? ITERATIONS : LINEAR;
  PetscCheck(problem != LINEAR || !strcmp(pname, "linear"), PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown problem %s", pname);
  p4est_connectivity_t *conn = AmrShapeNew(shape);
  PetscCheck(conn, PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown shape %s", shape);
  FemSipg s;
  double l2p, fmax, fl2, div;
  long hanging;

  if (problem == ITERATIONS) {
    PetscCall(FemPermeabilityCreate(PETSC_COMM_WORLD, spec, &field));
    for (PetscInt l = 0; l < nlev; l++) {
      int L = (int)levels[l];
      p4est_t *p4est = p4est_new_ext(PETSC_COMM_WORLD, conn, 0, 0, 1, 0, NULL, &L);
      p4est_refine(p4est, 1, refine_graded, NULL);
      p4est_balance(p4est, P4EST_CONNECT_FULL, NULL);
      PetscCall(AmrLbPartitionEven(p4est, 0, NULL));
      PetscCall(run(p4est, &s, &l2p, &fmax, &fl2, &div, &hanging, &its));
      CHECK_MSG(its <= max_its, "level %d, k %s: %d CG iterations, at most %d accepted", L, spec, (int)its, (int)max_its);
      CHECK_MSG(div <= 1e-12, "level %d: flux divergence %.3e", L, div);
      p4est_destroy(p4est);
    }
    PetscCall(FemPermeabilityDestroy(&field));
  } else if (problem != SINE) {
    int ml = (int)maxlevel;
    p4est_t *p4est = p4est_new_ext(PETSC_COMM_WORLD, conn, 0, 1, 1, 0, NULL, &ml);
    p4est_refine(p4est, 1, refine_ball, NULL);
    p4est_balance(p4est, P4EST_CONNECT_FULL, NULL);
    PetscCall(AmrLbPartitionEven(p4est, 0, NULL));
    PetscCall(run(p4est, &s, &l2p, &fmax, &fl2, &div, &hanging, &its));
    CHECK(hanging > 0);
    CHECK_MSG(l2p <= tol && fmax <= tol, "p error %.3e, flux error %.3e (relative), tolerance %.1e", l2p, fmax, tol);
    CHECK_MSG(div <= 1e-12, "flux divergence %.3e", div);
    p4est_destroy(p4est);
  } else {
    PetscCheck(nlev >= 2, PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "-levels: at least two");
    double prev[2] = {0, 0};
    for (PetscInt l = 0; l < nlev; l++) {
      p4est_t *p4est = p4est_new_ext(PETSC_COMM_WORLD, conn, 0, (int)levels[l], 1, 0, NULL, NULL);
      PetscCall(run(p4est, &s, &l2p, &fmax, &fl2, &div, &hanging, &its));
      if (l > 0) {
        const double rp = log2(prev[0] / l2p), rf = log2(prev[1] / fl2);
        PetscCall(PetscPrintf(PETSC_COMM_WORLD, "level %d: rate of p %.3f, of the flux %.3f\n", (int)levels[l], rp, rf));
        CHECK_MSG(rp >= min_p_rate && rf >= min_flux_rate, "rates %.3f (p, at least %.2f) and %.3f (flux, at least %.2f)", rp, min_p_rate, rf,
               min_flux_rate);
      }
      prev[0] = l2p;
      prev[1] = fl2;
      p4est_destroy(p4est);
    }
  }
  p4est_connectivity_destroy(conn);
  const int fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s\n", fail ? "FAILED" : "passed"));
  sc_finalize();
  PetscCall(PetscFinalize());
  return fail;
}
