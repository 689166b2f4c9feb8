/* The Poisson family (poisson.h): the shared ops, and the data of sine,
 * lshape, peak, interface, linear, quadratic and jump. */
#define _POSIX_C_SOURCE 200809L /* getrusage */
#include "problems/poisson.h"

#include "mesh/p4est_dim.h"
#include <math.h>
#include <string.h>
#include <sys/resource.h>

#include "util/options.h"
#include "util/rankfile.h"
#include "fem/poisson.h"
#include "mesh/adapt.h"

#define PI 3.14159265358979323846

static double k_one(int dim, const double x[3], long tree)
{
  (void)dim; (void)x; (void)tree;
  return 1.0;
}

static FemBC bc_dirichlet(int dim, const double x[3], const double n[3])
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
static FemBC sine_bc(int dim, const double x[3], const double n[3])
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
  if (dim == 3) return sqrt(sqrt(r2));
  return pow(r2, 1.0 / 3.0) * sin(2.0 / 3.0 * lshape_theta(x));
}
static void lshape_grad(int dim, const double x[3], double g[3])
{
  const double r2 = x[0] * x[0] + x[1] * x[1] + (dim == 3 ? x[2] * x[2] : 0.0);
  g[0] = g[1] = g[2] = 0.0;
  if (r2 == 0.0) return;
  if (dim == 3) {
    const double r = sqrt(r2), s = 0.5 / (r * sqrt(r));
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

/* jump: k = 1 for x < 1/2 and the contrast K (-jump_contrast) beyond, by
 * coordinates, so that any mesh with cell faces on x = 1/2 resolves it; u
 * is piecewise linear in x with the continuous flux k du/dx = 1, so Q1 and
 * Q2 reproduce it on such meshes.  K is one number per run, read by the
 * problem's create: the data functions have no context to carry it. */
#define JUMP_K 10.0
static double jump_contrast = JUMP_K;
static double jump_u(int dim, const double x[3])
{
  (void)dim;
  return x[0] < 0.5 ? x[0] : 0.5 + (x[0] - 0.5) / jump_contrast;
}
static void jump_grad(int dim, const double x[3], double g[3])
{
  (void)dim;
  g[0] = x[0] < 0.5 ? 1.0 : 1.0 / jump_contrast;
  g[1] = g[2] = 0.0;
}
static double jump_f(int dim, const double x[3]) { (void)dim; (void)x; return 0.0; }
static double jump_k(int dim, const double x[3], long tree) { (void)dim; (void)tree; return x[0] < 0.5 ? 1.0 : jump_contrast; }

static const FemProblem sine_data = {"sine", "u = prod sin(pi x_d) on the unit square/cube, Neumann on x = 1", "unit square/cube",
   (1 << 2) | (1 << 3), sine_u, sine_grad, sine_f, k_one, sine_bc, 1, NULL};
static const FemProblem lshape_data = {"lshape", "2D: u = r^(2/3) sin(2 theta/3) on the L-shape; 3D: u = |x|^(1/2) on the Fichera corner",
   "(-1,1)^d minus the quadrant x>0,y<0 (2D) / one octant (3D)",
   (1 << 2) | (1 << 3), lshape_u, lshape_grad, lshape_f, k_one, bc_dirichlet, 1, NULL};
static const FemProblem peak_data = {"peak", "u = exp(-1000 |x - (1/2,..)|^2)", "unit square/cube",
   (1 << 2) | (1 << 3), peak_u, peak_grad, peak_f, k_one, bc_dirichlet, 1, NULL};
static const FemProblem interface_data = {"interface", "f = +-1 across y = 1/2 + 1/4 sin(4 pi x), u = 0 (deal.II step-40)", "unit square/cube",
   (1 << 2) | (1 << 3), NULL, NULL, interface_f, k_one, bc_dirichlet, 1, NULL};
static const FemProblem linear_data = {"linear", "u = 1 + 2x - 3y (+ z), k = 1 + x, Neumann on x = 1: exact for Q1", "any affine mesh",
   (1 << 2) | (1 << 3), linear_u, linear_grad, linear_f, linear_k, sine_bc, 0, NULL};
static const FemProblem quadratic_data = {"quadratic", "a quadratic u, Neumann on x = 1: exact for Q2", "any affine mesh",
   (1 << 2) | (1 << 3), quadratic_u, quadratic_grad, quadratic_f, k_one, sine_bc, 1, NULL};
static const FemProblem jump_data = {"jump", "k = 1 for x < 1/2, -jump_contrast beyond, u piecewise linear in x",
   "unit square/cube, meshed with cell faces on x = 1/2", (1 << 2) | (1 << 3), jump_u, jump_grad, jump_f, jump_k, bc_dirichlet, 0, NULL};

const AmrProblemOps amr_problem_sine = AMR_POISSON_PROBLEM("sine", "Poisson: u = prod sin(pi x_d), Neumann on x = 1 (convergence rates)", &sine_data);
const AmrProblemOps amr_problem_lshape = AMR_POISSON_PROBLEM("lshape", "Poisson: corner singularity (2D L-shape, 3D Fichera corner)", &lshape_data);
const AmrProblemOps amr_problem_peak = AMR_POISSON_PROBLEM("peak", "Poisson: u = exp(-1000 |x - (1/2, ...)|^2)", &peak_data);
const AmrProblemOps amr_problem_interface = AMR_POISSON_PROBLEM("interface", "Poisson: deal.II step-40's f = +-1 across a sine curve, no exact solution", &interface_data);
const AmrProblemOps amr_problem_linear = AMR_POISSON_PROBLEM("linear", "Poisson: a linear u that Q1 reproduces, k = 1 + x", &linear_data);
const AmrProblemOps amr_problem_quadratic = AMR_POISSON_PROBLEM("quadratic", "Poisson: a quadratic u that Q2 reproduces", &quadratic_data);
const AmrProblemOps amr_problem_jump = AMR_POISSON_PROBLEM("jump", "Poisson: k = 1 | K (-jump_contrast) for x < | > 1/2, u piecewise linear", &jump_data);

const FemProblem *AmrPoissonData(const char *name)
{
  const AmrProblemOps *ops = AmrProblemFind(name);
  return ops && ops->create == AmrPoissonCreate ? ops->data : NULL;
}

/* ---- the ops ------------------------------------------------------------- */

typedef struct {
  const FemProblem *pde;
  FemPoisson fp;
  p4est_t *p4est;
  int vn;
  double *coef;    /* the solution's element coefficients: the problem's one field */
  PetscBool guess; /* coef holds a solution (interpolated): the next initial guess */
  double *err2;    /* per cell squared H1 error, when the exact solution is known */
  PetscInt its;
  PetscReal rnorm;
  double estimate, l2, h1;
  double t[3];     /* setup, assembly, KSP solve of the cycle (wall, max over ranks) */
  double logged_cpu, logged_wall; /* FemPoissonWorkTime already handed to the cycle */
  char bc_dirichlet[PETSC_MAX_PATH_LEN], bc_neumann[PETSC_MAX_PATH_LEN]; /* -bc_*: boundary parts of the mesh file */
  signed char *tree_bc; /* per tree face from -bc_* (AmrMeshBoundaryTypes), NULL: the problem's own */
} PoissonState;

PetscErrorCode AmrPoissonJumpOptions(MPI_Comm comm)
{
  PetscReal contrast = JUMP_K;

  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, NULL, "Problem jump", NULL);
  AMR_OPTION("-jump_contrast", PetscOptionsReal("-jump_contrast", "k for x > 1/2 (k = 1 below): the contrast of the jump", NULL, contrast, &contrast, NULL));
  PetscOptionsEnd();
  PetscCheck(contrast > 0 && isfinite(contrast), comm, PETSC_ERR_USER_INPUT, "option -jump_contrast %g: must be a positive number", (double)contrast);
  jump_contrast = contrast;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonCreate(AmrProblem p)
{
  const FemProblem *pde = AmrProblemGetOpsData(p);
  PoissonState *s;
  PetscInt degree = 1;
  char dirichlet[PETSC_MAX_PATH_LEN] = "", neumann[PETSC_MAX_PATH_LEN] = "";
  FemPoissonSolverOptions sopt = FEM_POISSON_SOLVER_DEFAULTS;

  PetscFunctionBeginUser;
  /* The app's default: matrix-free + mg took 0.6 (2D Q2) and 0.45 (3D Q2)
   * of assembled + amg's time per cell, and a quarter of its memory in 3D
   * (src/bench/README.md, the Poisson benchmark); the cell loops are then most of the
   * solve, so timing weights see its work. */
  sopt.op = FEM_POISSON_MATRIX_FREE;
  sopt.pc = FEM_POISSON_PC_MG;
  PetscOptionsBegin(p->comm, NULL, "Poisson problems", NULL);
  AMR_OPTION("-degree", PetscOptionsInt("-degree", "Polynomial degree of the elements: 1 or 2", NULL, degree, &degree, NULL));
  AMR_OPTION("-bc_dirichlet", PetscOptionsString("-bc_dirichlet", "Boundary parts (sets of the -mesh file, comma-separated) with Dirichlet data; default: the problem's own",
                                                 NULL, dirichlet, dirichlet, sizeof dirichlet, NULL));
  AMR_OPTION("-bc_neumann", PetscOptionsString("-bc_neumann", "Boundary parts (sets of the -mesh file, comma-separated) with Neumann data; default: the problem's own",
                                               NULL, neumann, neumann, sizeof neumann, NULL));
  AMR_OPTION("-poisson_operator", PetscOptionsEnum("-poisson_operator", "How the operator is applied: assembled (MPIAIJ) or matrix-free (cell by cell, sum factorisation)",
                                                   NULL, FemPoissonOperators, (PetscEnum)sopt.op, (PetscEnum *)&sopt.op, NULL));
  AMR_OPTION("-poisson_pc", PetscOptionsEnum("-poisson_pc", "Preconditioner of CG: amg (BoomerAMG on the assembled matrix) or mg (geometric multigrid over the coarsened forests)",
                                             NULL, FemPoissonPCTypes, (PetscEnum)sopt.pc, (PetscEnum *)&sopt.pc, NULL));
  AMR_OPTION("-poisson_mg_level_operator", PetscOptionsEnum("-poisson_mg_level_operator", "-poisson_pc mg: how the Q1 levels below the finest are applied (the coarsest is always assembled)",
                                                            NULL, FemPoissonOperators, (PetscEnum)sopt.level_op, (PetscEnum *)&sopt.level_op, NULL));
  {
    PetscInt deg = sopt.cheby_degree, its = sopt.eig_its;
    PetscReal range = sopt.smoothing_range;
    AMR_OPTION("-poisson_mg_smooth_degree", PetscOptionsInt("-poisson_mg_smooth_degree", "-poisson_pc mg: Chebyshev degree (smoothing steps) per level and sweep", NULL, deg, &deg, NULL));
    AMR_OPTION("-poisson_mg_smoothing_range", PetscOptionsReal("-poisson_mg_smoothing_range", "-poisson_pc mg: Chebyshev smooths [1.1 lmax / range, 1.1 lmax] of the Jacobi-preconditioned level operator",
                                                               NULL, range, &range, NULL));
    AMR_OPTION("-poisson_mg_eig_its", PetscOptionsInt("-poisson_mg_eig_its", "-poisson_pc mg: CG iterations estimating lmax on each level", NULL, its, &its, NULL));
    PetscCheck(deg >= 1 && deg <= 100, p->comm, PETSC_ERR_USER_INPUT, "option -poisson_mg_smooth_degree %" PetscInt_FMT ": must be from 1 to 100", deg);
    PetscCheck(range > 1.0, p->comm, PETSC_ERR_USER_INPUT, "option -poisson_mg_smoothing_range %g: must exceed 1", (double)range);
    PetscCheck(its >= 1 && its <= 1000, p->comm, PETSC_ERR_USER_INPUT, "option -poisson_mg_eig_its %" PetscInt_FMT ": must be from 1 to 1000", its);
    sopt.cheby_degree = (int)deg;
    sopt.smoothing_range = range;
    sopt.eig_its = (int)its;
  }
  PetscOptionsEnd();
  if (pde == &jump_data) PetscCall(AmrPoissonJumpOptions(p->comm));
  PetscCheck(pde->dims & (1 << P4EST_DIM), p->comm, PETSC_ERR_USER_INPUT, "option -problem %s: not available in %dD", AmrProblemGetName(p), P4EST_DIM);
  PetscCheck(degree == 1 || degree == 2, p->comm, PETSC_ERR_USER_INPUT, "option -degree %" PetscInt_FMT ": must be 1 or 2", degree);
  PetscCall(PetscCalloc1(1, &s));
  s->pde = pde;
  PetscCall(PetscStrncpy(s->bc_dirichlet, dirichlet, sizeof s->bc_dirichlet));
  PetscCall(PetscStrncpy(s->bc_neumann, neumann, sizeof s->bc_neumann));
  p->impl = s;
  p->degree = degree;
  /* the solver reads its -ksp_ and -pc_ options now, with the others */
  PetscCall(FemPoissonCreate(p->comm, pde, (int)degree, &sopt, NULL, &s->fp));
  s->vn = FemPoissonVNodes(s->fp);
  p->nsolvers = 1;
  /* multigrid setup, assembly and solve each end in reductions */
  p->nphases = 3;
  p->phase_name[0] = "setup";
  p->phase_name[1] = "assembly";
  p->phase_name[2] = "solve";
  p->solver_prefix[0] = "";
  PetscFunctionReturn(0);
}

/* The solver needs straight-sided cells, a planar mesh in 2D and a
 * boundary that pins the solution. */
static PetscErrorCode check_mesh(MPI_Comm comm, const AmrMesh *mesh)
{
  const p4est_connectivity_t *conn = mesh->conn;
  PetscBool boundary = PETSC_FALSE;

  PetscFunctionBeginUser;
  PetscCheck(!mesh->geom, comm, PETSC_ERR_USER_INPUT,
             "option -mesh %s: curved geometries are not supported by the Poisson solver (use a mesh of straight-sided cells)", mesh->name);
#ifndef P4_TO_P8
  for (p4est_topidx_t v = 0; v < conn->num_vertices; v++)
    PetscCheck(conn->vertices[3 * v + 2] == 0.0, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: the 2D Poisson solver needs a planar mesh (vertex %ld has z = %g)",
               mesh->name, (long)v, conn->vertices[3 * v + 2]);
#endif
  for (p4est_topidx_t t = 0; t < conn->num_trees; t++)
    for (int f = 0; f < P4EST_FACES; f++)
      if (conn->tree_to_tree[(size_t)t * P4EST_FACES + f] == t && conn->tree_to_face[(size_t)t * P4EST_FACES + f] == f) boundary = PETSC_TRUE;
  PetscCheck(boundary, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: the domain has no boundary (periodic), so the Poisson problem would be singular",
             mesh->name);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonSetup(AmrProblem p, p4est_t *p4est)
{
  PoissonState *s = p->impl;

  PetscFunctionBeginUser;
  PetscCall(check_mesh(p->comm, p->mesh));
  PetscCall(AmrMeshBoundaryTypes(p->comm, p->mesh, s->bc_dirichlet, s->bc_neumann, &s->tree_bc));
  PetscCall(FemPoissonSetBoundaryTypes(s->fp, s->tree_bc));
  s->p4est = p4est;
  PetscCall(PetscCalloc1((size_t)p4est->local_num_quadrants * s->vn + 1, &s->coef));
  PetscCall(AmrProblemAddField(p, "solution", (void **)&s->coef, sizeof(double) * s->vn));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrProblemSolveTimed(AmrProblem p, FemPoisson fp, PetscInt *its, PetscReal *rnorm)
{
  double cpu0, wall0, cpu1, wall1;

  PetscFunctionBeginUser;
  FemPoissonSolveTime(fp, &cpu0, &wall0);
  PetscCall(FemPoissonSolve(fp, its, rnorm));
  FemPoissonSolveTime(fp, &cpu1, &wall1);
  p->ksp_cpu = cpu1 - cpu0;
  p->ksp_wall = wall1 - wall0;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonSolve(AmrProblem p)
{
  PoissonState *s = p->impl;
  double t0;

  PetscFunctionBeginUser;
  t0 = MPI_Wtime();
  PetscCall(FemPoissonSetup(s->fp, s->p4est));
  if (s->guess) PetscCall(FemPoissonSetInitialGuess(s->fp, s->coef));
  s->t[0] = MPI_Wtime() - t0;
  t0 = MPI_Wtime();
  PetscCall(AmrProblemPhase(p, 1));
  PetscCall(FemPoissonAssemble(s->fp));
  s->t[1] = MPI_Wtime() - t0;
  t0 = MPI_Wtime();
  PetscCall(AmrProblemPhase(p, 2));
  PetscCall(AmrProblemSolveTimed(p, s->fp, &s->its, &s->rnorm));
  s->t[2] = MPI_Wtime() - t0;
  PetscCall(FemPoissonElementCoefficients(s->fp, s->coef));
  s->guess = PETSC_TRUE;
  p->dofs = (long long)FemPoissonGlobalSize(s->fp);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, s->t, 3, MPI_DOUBLE, MPI_MAX, p->comm));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonEstimate(AmrProblem p, double *eta2)
{
  PoissonState *s = p->impl;
  double cpu, wall;

  PetscFunctionBeginUser;
  PetscCall(FemPoissonKelly(s->fp, eta2, &s->estimate));
  s->l2 = s->h1 = NAN;
  if (s->pde->u) {
    PetscCall(PetscFree(s->err2));
    PetscCall(PetscMalloc1(s->p4est->local_num_quadrants + 1, &s->err2));
    PetscCall(FemPoissonExactError(s->fp, NULL, s->err2, &s->l2, &s->h1));
  }
  /* the cycle's local work: the element loops of assembly and estimate and
   * the matrix-free operator's cell loops (FemPoissonWorkTime) */
  FemPoissonWorkTime(s->fp, &cpu, &wall);
  PetscCall(AmrProblemLogWork(p, cpu - s->logged_cpu, wall - s->logged_wall));
  s->logged_cpu = cpu;
  s->logged_wall = wall;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonAdapt(AmrProblem p, const signed char *marks, int min_level, int max_level)
{
  PoissonState *s = p->impl;

  PetscFunctionBeginUser;
  PetscCall(AmrAdapt(s->p4est, marks, min_level, max_level, s->vn, &s->coef, FemPoissonTransfer, s->fp));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonMonitor(AmrProblem p, int cycle)
{
  PoissonState *s = p->impl;
  char exact[128] = "";

  PetscFunctionBeginUser;
  if (s->pde->u) PetscCall(PetscSNPrintf(exact, sizeof exact, " L2 %.3e H1 %.3e", s->l2, s->h1));
  PetscCall(PetscPrintf(p->comm, "cycle %2d: cells %9lld dofs %9lld its %3d res %.1e%s estimate %.3e", cycle, (long long)s->p4est->global_num_quadrants,
                        p->dofs, (int)s->its, (double)s->rnorm, exact, s->estimate));
  if (s->pde->u) PetscCall(PetscPrintf(p->comm, " eff %.3f", s->estimate / s->h1));
  PetscCall(PetscPrintf(p->comm, " | setup %.3f assembly %.3f ksp %.3f s\n", s->t[0], s->t[1], s->t[2]));
  PetscFunctionReturn(0);
}

/* Each rank's peak resident memory so far in bytes (the kernel's high-water
 * mark, ru_maxrss in KiB on Linux), reduced over the ranks: what bounds the
 * largest problem that fits, whatever allocated it. */
static PetscErrorCode report_peak_rss(AmrProblem p, json_line *j)
{
  static const char *const key[] = {"rank_peak_rss"};
  struct rusage ru;
  long long mine;

  PetscFunctionBeginUser;
  PetscCheck(getrusage(RUSAGE_SELF, &ru) == 0, p->comm, PETSC_ERR_SYS, "getrusage failed");
  mine = (long long)ru.ru_maxrss * 1024;
  PetscCallMPI(json_rank_ints(j, p->comm, 1, key, &mine));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonReport(AmrProblem p, json_line *j)
{
  PoissonState *s = p->impl;

  PetscFunctionBeginUser;
  json_int(j, "ksp_its", s->its);
  json_real(j, "ksp_rnorm", s->rnorm);
  json_real(j, "l2_error", s->l2);
  json_real(j, "h1_error", s->h1);
  json_real(j, "estimate", s->estimate);
  json_real(j, "effectivity", s->estimate / s->h1);
  json_real(j, "error", s->h1);
  json_real(j, "t_setup", s->t[0]);
  json_real(j, "t_assembly", s->t[1]);
  json_real(j, "t_ksp", s->t[2]);
  PetscCall(report_peak_rss(p, j));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonVTK(AmrProblem p, AmrVtkData *d)
{
  PoissonState *s = p->impl;
  const p4est_locidx_t nl = s->p4est->local_num_quadrants;
  const double centre[3] = {0.5, 0.5, 0.5};
  double *u, *uc, *err, *part;

  PetscFunctionBeginUser;
  /* the nodes of Q2 make VTK's quadratic Lagrange cells */
  d->degree = s->vn == P4EST_CHILDREN ? 1 : 2;
  PetscCall(FemPoissonPointValues(s->fp, &u));
  PetscCall(AmrVtkAddPointField(d, "solution", u));
  PetscCall(PetscMalloc1((size_t)nl + 1, &uc));
  for (p4est_locidx_t e = 0; e < nl; e++) uc[e] = FemPoissonEvalRef(s->fp, u + (size_t)e * s->vn, centre);
  PetscCall(AmrVtkAddCellField(d, "solution", uc));
  if (s->pde->u) {
    PetscCall(PetscMalloc1((size_t)nl + 1, &err));
    for (p4est_locidx_t e = 0; e < nl; e++) err[e] = sqrt(s->err2[e]);
    PetscCall(AmrVtkAddCellField(d, "error", err));
  }
  if (p->mesh->nparts) {
    /* which named boundary part each boundary cell touches, so the parts
     * the -bc_* options name can be checked in ParaView */
    sc_array_t *field = sc_array_new(sizeof(double));
    AmrMeshBoundaryField(p->mesh, s->p4est, field);
    PetscCall(PetscMalloc1((size_t)nl + 1, &part));
    PetscCall(PetscArraycpy(part, (const double *)field->array, (size_t)nl));
    sc_array_destroy(field);
    PetscCall(AmrVtkAddCellField(d, "boundary_part", part));
  }
  PetscFunctionReturn(0);
}

/* The solution field is the next solve's initial guess once a cycle has
 * solved: a restart must know whether it does. */
PetscErrorCode AmrPoissonSave(AmrProblem p, AmrCkpState st)
{
  PoissonState *s = p->impl;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateSetInt(st, "problem.guess", s->guess));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonLoad(AmrProblem p, AmrCkpState st)
{
  PoissonState *s = p->impl;
  int64_t guess;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetInt(st, "problem.guess", &guess));
  s->guess = guess ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonDestroy(AmrProblem p)
{
  PoissonState *s = p->impl;

  PetscFunctionBeginUser;
  if (!s) PetscFunctionReturn(0);
  PetscCall(FemPoissonDestroy(&s->fp));
  PetscCall(PetscFree(s->coef));
  PetscCall(PetscFree(s->err2));
  PetscCall(PetscFree(s->tree_bc));
  PetscCall(PetscFree(p->impl));
  PetscFunctionReturn(0);
}
