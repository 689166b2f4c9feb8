/*
 * advect_check: runs the DG advection library on a coarse mesh (-mesh, as
 * in amr2d: FILE.inp or builtin:NAME) and
 * asserts one property (-check):
 *   conservation  mass(t) = mass(0) + boundary inflow to -tol (relative)
 *                 over adapt, 2:1 balance, weighted repartition (the
 *                 cycle's, model costs 1 and 4 per load type) and steps,
 *                 and repartitioning keeps every cell's load type;
 *                 with -monotone also no new extrema of the cell means
 *   rate          L2 error after -t_final on uniform levels -level .. +2;
 *                 the rate between the two finest is at least -min_rate
 *   ranks         the solution on all ranks equals the one rank 0 computes
 *                 alone, cell by cell, to -tol
 * The problem runs through the app's cycle (app/cycle.h), piece by piece.
 * Exit status 0 when the property holds.
 */

#include "app/cycle.h"
#include "problems/advection.h"
#include "mesh/mesh.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh/p4est_dim.h"

typedef struct {
  char check[64], mesh[PETSC_MAX_PATH_LEN];
  const FemAdvectProblem *prob;
  PetscInt level, max_level, interval;
  PetscBool monotone, adaptive;
  PetscReal t_final, refine_tol, coarsen_tol, tol, min_rate, load_threshold;
} config_t;

/** Reads the options; on bad input writes one sentence into msg. */
static PetscErrorCode read_config(config_t *c, char *msg, size_t len)
{
  char prob[64] = "moving-front";
  PetscFunctionBeginUser;
  memset(c, 0, sizeof(*c));
  strcpy(c->check, "conservation");
  strcpy(c->mesh, "builtin:unit");
  c->level = 3;
  c->max_level = 5;
  c->interval = 5;
  c->adaptive = PETSC_TRUE;
  c->refine_tol = 0.1;
  c->coarsen_tol = 0.02;
  c->tol = 1e-12;
  c->load_threshold = 0.5;
  msg[0] = 0;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-check", c->check, sizeof c->check, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mesh", c->mesh, sizeof c->mesh, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", prob, sizeof prob, NULL));
  const AmrProblemOps *ops = AmrProblemFind(prob);
  if (!ops || ops->create == NULL || ops->load_types != AmrAdvectionLoadTypes) {
    snprintf(msg, len, "option -problem: '%s' is not an advection problem", prob);
    PetscFunctionReturn(0);
  }
  c->prob = ops->data;
  c->t_final = c->prob->t_final;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-level", &c->level, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_level", &c->max_level, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-amr_interval", &c->interval, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-adaptive", &c->adaptive, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-monotone", &c->monotone, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-t_final", &c->t_final, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-refine_tol", &c->refine_tol, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-coarsen_tol", &c->coarsen_tol, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &c->tol, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_rate", &c->min_rate, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-load_threshold", &c->load_threshold, NULL));
  PetscFunctionReturn(0);
}

typedef struct {
  double mass0, mass, inflow, umin, umax, l2;
  long long cells, shipped, load_types_lost;
  int steps;
} result_t;

/** Global number of cells of load type 1. */
static PetscErrorCode count_type1(p4est_t *p4est, long long *n)
{
  long long local = 0;
  PetscFunctionBeginUser;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++)
      local += ((const FemAdvectCell *)p4est_quadrant_array_index(&tr->quadrants, i)->p.user_data)->load_type;
  }
  PetscCallMPI(MPI_Allreduce(&local, n, 1, MPI_LONG_LONG, MPI_SUM, p4est->mpicomm));
  PetscFunctionReturn(0);
}

/** What a run leaves behind for inspection. */
typedef struct {
  p4est_t *p4est;
  AmrCycle cyc;
  FemAdvect adv;
} solver_t;

/** The app's options for this run: the problem, its thresholds, the
 *  mesh's levels, and model weights that make tracer cells cost more, so
 *  that the cuts move with the tracer and cells really travel. */
static PetscErrorCode set_options(const config_t *c)
{
  char v[64];
  PetscFunctionBeginUser;
  PetscCall(PetscOptionsSetValue(NULL, "-amr_strategy", c->adaptive ? "threshold" : "uniform"));
  PetscCall(PetscSNPrintf(v, sizeof v, "%" PetscInt_FMT, c->adaptive ? c->max_level : c->level));
  PetscCall(PetscOptionsSetValue(NULL, "-amr_max_level", v));
  PetscCall(PetscSNPrintf(v, sizeof v, "%.17g", (double)c->refine_tol));
  PetscCall(PetscOptionsSetValue(NULL, "-amr_refine_tol", v));
  PetscCall(PetscSNPrintf(v, sizeof v, "%.17g", (double)c->coarsen_tol));
  PetscCall(PetscOptionsSetValue(NULL, "-amr_coarsen_tol", v));
  PetscCall(PetscSNPrintf(v, sizeof v, "%.17g", (double)c->load_threshold));
  PetscCall(PetscOptionsSetValue(NULL, "-adv_load_threshold", v));
  PetscCall(PetscSNPrintf(v, sizeof v, "%.17g", (double)c->t_final));
  PetscCall(PetscOptionsSetValue(NULL, "-t_final", v));
  PetscCall(PetscSNPrintf(v, sizeof v, "%" PetscInt_FMT, c->interval));
  PetscCall(PetscOptionsSetValue(NULL, "-amr_interval", v));
  PetscCall(PetscOptionsSetValue(NULL, "-lb_weights", "model"));
  PetscCall(PetscOptionsSetValue(NULL, "-lb_cost", "1,4"));
  PetscFunctionReturn(0);
}

/** Runs the problem to t_final on a forest of comm through the cycle's
 *  pieces: solve, estimate, adapt, balance. */
static PetscErrorCode run(const config_t *c, MPI_Comm comm, const AmrMesh *mesh, solver_t *sv, result_t *res)
{
  AmrProblem p;
  double lo, hi, *eta2;
  long long before, after;
  PetscFunctionBeginUser;
  memset(res, 0, sizeof(*res));
  memset(sv, 0, sizeof(*sv));
  PetscCall(set_options(c));
  PetscCall(AmrCycleCreate(comm, mesh, c->level, "", PETSC_TRUE, &sv->cyc));
  p = AmrCycleGetProblem(sv->cyc);
  sv->p4est = p4est_new_ext(comm, mesh->conn, 0, (int)c->level, 1, 0, NULL, NULL);
  PetscCall(AmrCycleSetup(sv->cyc, sv->p4est));
  sv->adv = ((AmrAdvection *)p->impl)->adv;
  PetscCall(FemAdvectMass(sv->adv, &res->mass0, NULL));
  PetscCall(FemAdvectMeanRange(sv->adv, &res->umin, &res->umax));
  for (int cycle = 0; !p->state.done; cycle++) {
    AmrLbRecord lr;
    PetscCall(AmrProblemSolve(p));
    if (c->monotone) {
      PetscCall(FemAdvectMeanRange(sv->adv, &lo, &hi));
      res->umin = fmin(res->umin, lo);
      res->umax = fmax(res->umax, hi);
    }
    if (!c->adaptive || p->state.done) continue;
    PetscCall(PetscMalloc1(sv->p4est->local_num_quadrants + 1, &eta2));
    PetscCall(AmrProblemEstimate(p, eta2));
    PetscCall(AmrCycleAdapt(sv->cyc, eta2));
    PetscCall(PetscFree(eta2));
    PetscCall(count_type1(sv->p4est, &before));
    PetscCall(AmrCycleBalance(sv->cyc, cycle, PETSC_TRUE, &lr));
    res->shipped += lr.migrated_cells_tot;
    PetscCall(count_type1(sv->p4est, &after));
    res->load_types_lost += after != before;
  }
  res->steps = (int)p->state.step;
  PetscCall(FemAdvectMass(sv->adv, &res->mass, &res->inflow));
  if (c->prob->has_exact) PetscCall(FemAdvectL2Error(sv->adv, &res->l2));
  res->cells = (long long)sv->p4est->global_num_quadrants;
  PetscFunctionReturn(0);
}

static PetscErrorCode finish(solver_t *sv)
{
  PetscFunctionBeginUser;
  PetscCall(AmrCycleDestroy(&sv->cyc));
  p4est_destroy(sv->p4est);
  PetscFunctionReturn(0);
}

static PetscErrorCode check_conservation(const config_t *c, const AmrMesh *mesh)
{
  solver_t sv;
  result_t r;
  PetscFunctionBeginUser;
  PetscCall(run(c, PETSC_COMM_WORLD, mesh, &sv, &r));
  const double rel = fabs(r.mass - r.mass0 - r.inflow) / fabs(r.mass0);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "steps %d cells %lld shipped %lld mass0 %.15e mass %.15e inflow %.15e "
                        "mass_balance_error %.3e min %.3e max %.15e l2 %.6e%s\n",
                        r.steps, r.cells, r.shipped, r.mass0, r.mass, r.inflow, rel, r.umin, r.umax, r.l2,
                        r.load_types_lost ? " load types changed by partitioning" : ""));
  CHECK(rel <= c->tol);
  CHECK(!r.load_types_lost);
  if (c->monotone) CHECK(!(r.umin < -c->tol || r.umax > 1 + c->tol));
  PetscCall(finish(&sv));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_rate(config_t *c, const AmrMesh *mesh)
{
  double err[3];
  PetscFunctionBeginUser;
  c->adaptive = PETSC_FALSE;
  for (int i = 0; i < 3; i++) {
    solver_t sv;
    result_t r;
    config_t cl = *c;
    cl.level = c->level + i;
    cl.interval = 1 << 30;
    PetscCall(run(&cl, PETSC_COMM_WORLD, mesh, &sv, &r));
    err[i] = r.l2;
    if (i == 0)
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "level %d cells %lld steps %d l2 %.6e\n", (int)cl.level, r.cells, r.steps, r.l2));
    else {
      double rate = log2(err[i - 1] / err[i]);
      PetscCall(PetscPrintf(PETSC_COMM_WORLD, "level %d cells %lld steps %d l2 %.6e rate %.3f\n", (int)cl.level, r.cells, r.steps, r.l2, rate));
      /* the asymptotic rate: the one between the two finest levels */
      if (i == 2) CHECK(rate >= c->min_rate);
    }
    PetscCall(finish(&sv));
  }
  PetscFunctionReturn(0);
}

/** Packs each local cell as tree, coordinates, level and coefficients. */
#define PACK (5 + FEM_ADVECT_NB)

static void pack(p4est_t *p4est, double *buf)
{
  size_t n = 0;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++, n++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      const FemAdvectCell *d = q->p.user_data;
      double *b = buf + n * PACK;
      b[0] = t;
      b[1] = q->x;
      b[2] = q->y;
#ifdef P4_TO_P8
      b[3] = q->z;
#else
      b[3] = 0;
#endif
      b[4] = q->level;
      for (int k = 0; k < FEM_ADVECT_NB; k++) b[5 + k] = d->c[k];
    }
  }
}

static PetscErrorCode check_ranks(const config_t *c, const AmrMesh *mesh)
{
  solver_t sv;
  result_t r;
  PetscMPIInt rank, size;
  int *counts = NULL, *displs = NULL;
  double *all = NULL, *mine;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(run(c, PETSC_COMM_WORLD, mesh, &sv, &r));
  int nmine = (int)sv.p4est->local_num_quadrants * PACK;
  PetscCall(PetscMalloc1(nmine + 1, &mine));
  pack(sv.p4est, mine);
  if (rank == 0) {
    PetscCall(PetscMalloc2(size, &counts, size, &displs));
    PetscCall(PetscMalloc1(r.cells * PACK + 1, &all));
  }
  PetscCallMPI(MPI_Gather(&nmine, 1, MPI_INT, counts, 1, MPI_INT, 0, PETSC_COMM_WORLD));
  if (rank == 0)
    for (int i = 0; i < size; i++) displs[i] = i ? displs[i - 1] + counts[i - 1] : 0;
  PetscCallMPI(MPI_Gatherv(mine, nmine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, PETSC_COMM_WORLD));
  PetscCall(finish(&sv));
  PetscCall(PetscFree(mine));
  if (rank == 0) {
    int bad = 0;
    solver_t s1;
    result_t r1;
    double *one, diff = 0;
    PetscCall(run(c, PETSC_COMM_SELF, mesh, &s1, &r1));
    if (r1.cells != r.cells)
      bad = 1;
    else {
      PetscCall(PetscMalloc1(r.cells * PACK + 1, &one));
      pack(s1.p4est, one);
      for (long long i = 0; i < r.cells; i++)
        for (int k = 0; k < PACK; k++) {
          double d = fabs(one[i * PACK + k] - all[i * PACK + k]);
          if (k < 5 && d != 0) bad = 1;
          if (k >= 5) diff = fmax(diff, d);
        }
      PetscCall(PetscFree(one));
    }
    PetscCall(PetscPrintf(PETSC_COMM_SELF, "ranks %d cells %lld (1 rank: %lld) steps %d max coefficient difference %.3e%s\n", size, r.cells, r1.cells,
                          r.steps, diff, bad ? " meshes differ" : ""));
    CHECK(!bad);
    CHECK(diff <= c->tol);
    PetscCall(finish(&s1));
    PetscCall(PetscFree2(counts, displs));
    PetscCall(PetscFree(all));
  }
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  config_t c;
  char msg[256] = "";
  AmrMesh mesh;
  const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  /* p4est's progress messages would drown the result lines */
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscCall(read_config(&c, msg, sizeof msg));
  if (!msg[0] && strcmp(c.check, "conservation") && strcmp(c.check, "rate") && strcmp(c.check, "ranks"))
    snprintf(msg, sizeof msg, "option -check: '%s' is not conservation, rate or ranks", c.check);
  if (msg[0]) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: error: %s\n", prog, msg));
    sc_finalize();
    PetscCall(PetscFinalize());
    return 1;
  }
  PetscCall(AmrMeshCreate(PETSC_COMM_WORLD, c.mesh, &mesh));
  if (!strcmp(c.check, "conservation"))
    PetscCall(check_conservation(&c, &mesh));
  else if (!strcmp(c.check, "rate"))
    PetscCall(check_rate(&c, &mesh));
  else
    PetscCall(check_ranks(&c, &mesh));
  const int fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s %s\n", c.check, fail ? "FAILED" : "passed"));
  PetscCall(AmrMeshDestroy(&mesh));
  sc_finalize();
  PetscCall(PetscFinalize());
  return fail;
}
