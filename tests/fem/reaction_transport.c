/*
 * reaction_transport: the discretisation of reactive-transport without the
 * app.  A is the DG tracer of fem/advect.h, injected at every inflow face
 * (value 1) with the constant velocity (1, 1/2[, 1/4]) into a domain that
 * holds B = b0 (fem/reaction.h) on a uniform forest of -mesh at -level;
 * after every transport step each cell reacts over the step (Lie
 * splitting), timed on its own.  Asserts, on any number of ranks:
 *   - B + C and A + C - inflow(A) keep their integrals to -tol (relative);
 *   - the cells that react (load type reacting at the start of the
 *     reaction) take at least -min_contrast times the mean steps per cell
 *     of each of the other two types;
 *   - with -compare_serial, rank 0 runs again alone and every cell's
 *     coefficients of A, B, C and its total steps equal the parallel run's
 *     bit for bit.
 * CPU per cell by type, and of the transport step, is printed, never
 * asserted.
 */

#include "fem/advect.h"
#include "fem/femutil.h"
#include "fem/reaction.h"
#include "mesh/geom.h"
#include "mesh/mesh.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mesh/p4est_dim.h"
#include "balance/lbclock.h"

#define DIM P4EST_DIM

static void velocity(void *ctx, const FemAdvectPoint *pt, double b[3])
{
  (void)ctx;
  (void)pt;
  b[0] = 1;
  b[1] = 0.5;
  b[2] = DIM == 3 ? 0.25 : 0;
}

/** No A at the start; A = 1 flows in through every inflow face. */
static double inflow(void *ctx, const double x[3], double t)
{
  (void)ctx;
  (void)x;
  return t > 0 ? 1 : 0;
}

static const FemAdvectProblem injection = {.name = "injection", .velocity = velocity, .exact = inflow, .has_exact = 0, .t_final = 0.3};

typedef struct {
  char mesh[PETSC_MAX_PATH_LEN];
  PetscInt level;
  PetscReal t_final, tol, min_contrast;
  PetscBool compare_serial;
  FemAdvectOptions adv;
  FemReactionParams react;
} config_t;

/** What one run leaves: the integrals, the work per load type, and the
 *  forest with its species for the comparison between rank counts. */
typedef struct {
  double mass0[FEM_REACTION_NS], mass[FEM_REACTION_NS], inflow;
  double transport_cpu; /* of the DG steps, all ranks */
  double cell_steps[FEM_REACTION_NTYPES], steps[FEM_REACTION_NTYPES], cpu[FEM_REACTION_NTYPES];
  int nsteps;
  long long cells;
  p4est_t *p4est;
  FemAdvect adv;
  int nb;
  double *spec[FEM_REACTION_NS]; /* B and C per cell; A's entry points into the cells */
  double *work; /* ROS2 steps per cell over the run */
  FemAdvectCell **cell;
} run_t;

/** Integrals of the basis functions 1, xi_k over every local cell, nb per
 *  cell: the tensor 3-point Gauss rule is exact for them on (multi)linear
 *  trees. */
static void basis_integrals(p4est_t *p4est, int nb, double *m0)
{
  static const double gx[3] = {-0.77459666924148337704, 0, 0.77459666924148337704};
  static const double gw[3] = {0.55555555555555555556, 0.88888888888888888889, 0.55555555555555555556};
  const int np = DIM == 2 ? 9 : 27;
  size_t K = 0;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++, K++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      double *m = m0 + K * nb;
      for (int j = 0; j < nb; j++) m[j] = 0;
      for (int p = 0; p < np; p++) {
        double xi[3] = {0}, eta[3] = {0}, x[3], J[3][3], Ji[3][3], w = 1;
        for (int k = 0, idx = p; k < DIM; k++, idx /= 3) {
          xi[k] = gx[idx % 3];
          w *= gw[idx % 3] / 2; /* d eta = d xi / 2 */
          eta[k] = 0.5 * (xi[k] + 1);
        }
        AmrGeomQuadMap(p4est->connectivity, t, q, eta, x, J);
        w *= fabs(AmrGeomInvert(J, Ji));
        m[0] += w;
        for (int k = 0; k + 1 < nb; k++) m[1 + k] += w * xi[k];
      }
    }
  }
}

/** Global integrals of the three species. */
static PetscErrorCode integrals(run_t *r, const double *m0, double mass[FEM_REACTION_NS])
{
  double loc[FEM_REACTION_NS] = {0};
  const p4est_locidx_t n = r->p4est->local_num_quadrants;
  PetscFunctionBeginUser;
  for (p4est_locidx_t K = 0; K < n; K++)
    for (int j = 0; j < r->nb; j++) {
      loc[0] += m0[(size_t)K * r->nb + j] * r->cell[K]->c[j];
      for (int s = 1; s < FEM_REACTION_NS; s++) loc[s] += m0[(size_t)K * r->nb + j] * r->spec[s][(size_t)K * r->nb + j];
    }
  PetscCallMPI(MPI_Allreduce(loc, mass, FEM_REACTION_NS, MPI_DOUBLE, MPI_SUM, r->p4est->mpicomm));
  PetscFunctionReturn(0);
}

static PetscErrorCode run(const config_t *c, MPI_Comm comm, p4est_connectivity_t *conn, run_t *r)
{
  double *m0;
  PetscFunctionBeginUser;
  memset(r, 0, sizeof(*r));
  r->p4est = p4est_new_ext(comm, conn, 0, (int)c->level, 1, 0, NULL, NULL);
  PetscCall(FemAdvectCreate(r->p4est, &injection, NULL, &c->adv, &r->adv));
  r->nb = c->adv.degree ? FEM_ADVECT_NB : 1;
  const p4est_locidx_t n = r->p4est->local_num_quadrants;
  const size_t len = (size_t)n * r->nb + 1;
  PetscCall(PetscMalloc1(n + 1, &r->cell));
  for (p4est_topidx_t t = r->p4est->first_local_tree; t <= r->p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(r->p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++)
      r->cell[tr->quadrants_offset + i] = p4est_quadrant_array_index(&tr->quadrants, i)->p.user_data;
  }
  PetscCall(PetscCalloc1(len, &r->spec[1]));
  PetscCall(PetscCalloc1(len, &r->spec[2]));
  PetscCall(PetscCalloc1(n + 1, &r->work));
  PetscCall(PetscMalloc1(len, &m0));
  for (p4est_locidx_t K = 0; K < n; K++) r->spec[1][(size_t)K * r->nb] = c->react.b0;
  basis_integrals(r->p4est, r->nb, m0);
  PetscCall(integrals(r, m0, r->mass0));
  while (FemAdvectTime(r->adv) < c->t_final) {
    const double t0 = FemAdvectTime(r->adv);
    int taken;
    PetscCall(FemAdvectAdvance(r->adv, c->t_final, 1, &taken));
    const double dt = FemAdvectTime(r->adv) - t0;
    r->nsteps += taken;
    double clock = lb_clock_thread_cpu();
    for (p4est_locidx_t K = 0; K < n; K++) {
      double *a = r->cell[K]->c, *b = r->spec[1] + (size_t)K * r->nb, *cc = r->spec[2] + (size_t)K * r->nb;
      FemReactionWork w;
      const FemReactionState st = FemReactionCellState(&c->react, r->nb, a, b, cc);
      double xibar[DIM];
      for (int k = 0; k < DIM; k++) xibar[k] = r->nb > 1 ? m0[(size_t)K * r->nb + 1 + k] / m0[(size_t)K * r->nb] : 0;
      PetscCall(FemReactionCell(&c->react, r->nb, xibar, a, b, cc, dt, &clock, &w));
      r->cell_steps[st] += 1;
      r->steps[st] += w.steps;
      r->cpu[st] += w.cpu;
      r->work[K] += w.steps;
    }
  }
  PetscCall(integrals(r, m0, r->mass));
  PetscCall(FemAdvectMass(r->adv, &r->mass[0], &r->inflow));
  double wall, cpu;
  FemAdvectWorkTime(r->adv, &cpu, &wall);
  PetscCallMPI(MPI_Allreduce(&cpu, &r->transport_cpu, 1, MPI_DOUBLE, MPI_SUM, comm));
  double loc[3 * FEM_REACTION_NTYPES], glob[3 * FEM_REACTION_NTYPES];
  for (int s = 0; s < FEM_REACTION_NTYPES; s++) {
    loc[s] = r->cell_steps[s];
    loc[FEM_REACTION_NTYPES + s] = r->steps[s];
    loc[2 * FEM_REACTION_NTYPES + s] = r->cpu[s];
  }
  PetscCallMPI(MPI_Allreduce(loc, glob, 3 * FEM_REACTION_NTYPES, MPI_DOUBLE, MPI_SUM, comm));
  for (int s = 0; s < FEM_REACTION_NTYPES; s++) {
    r->cell_steps[s] = glob[s];
    r->steps[s] = glob[FEM_REACTION_NTYPES + s];
    r->cpu[s] = glob[2 * FEM_REACTION_NTYPES + s];
  }
  r->cells = (long long)r->p4est->global_num_quadrants;
  PetscCall(PetscFree(m0));
  PetscFunctionReturn(0);
}

static PetscErrorCode finish(run_t *r)
{
  PetscFunctionBeginUser;
  PetscCall(FemAdvectDestroy(&r->adv));
  p4est_destroy(r->p4est);
  PetscCall(PetscFree(r->spec[1]));
  PetscCall(PetscFree(r->spec[2]));
  PetscCall(PetscFree(r->work));
  PetscCall(PetscFree(r->cell));
  PetscFunctionReturn(0);
}

/* Per cell: tree, coordinates, level, the three species, the steps. */
#define PACK (6 + FEM_REACTION_NS * FEM_ADVECT_NB)

static void pack(const run_t *r, double *buf)
{
  size_t K = 0;
  for (p4est_topidx_t t = r->p4est->first_local_tree; t <= r->p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(r->p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++, K++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      double *b = buf + K * PACK;
      memset(b, 0, sizeof(double) * PACK);
      b[0] = t;
      b[1] = q->x;
      b[2] = q->y;
#ifdef P4_TO_P8
      b[3] = q->z;
#endif
      b[4] = q->level;
      b[5] = r->work[K];
      for (int j = 0; j < r->nb; j++) {
        b[6 + j] = r->cell[K]->c[j];
        b[6 + FEM_ADVECT_NB + j] = r->spec[1][K * r->nb + j];
        b[6 + 2 * FEM_ADVECT_NB + j] = r->spec[2][K * r->nb + j];
      }
    }
  }
}

/** Rank 0 runs alone and compares with the packed cells of all ranks. */
static PetscErrorCode compare_serial(const config_t *c, p4est_connectivity_t *conn, const run_t *r)
{
  PetscMPIInt rank, size;
  int *counts = NULL, *displs = NULL, nmine = (int)r->p4est->local_num_quadrants * PACK;
  double *all = NULL, *mine;
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscMalloc1(nmine + 1, &mine));
  pack(r, mine);
  if (rank == 0) {
    PetscCall(PetscMalloc2(size, &counts, size, &displs));
    PetscCall(PetscMalloc1(r->cells * PACK + 1, &all));
  }
  PetscCallMPI(MPI_Gather(&nmine, 1, MPI_INT, counts, 1, MPI_INT, 0, PETSC_COMM_WORLD));
  if (rank == 0)
    for (int i = 0; i < size; i++) displs[i] = i ? displs[i - 1] + counts[i - 1] : 0;
  PetscCallMPI(MPI_Gatherv(mine, nmine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, PETSC_COMM_WORLD));
  PetscCall(PetscFree(mine));
  if (rank == 0) {
    int bad = 0;
    run_t one;
    double *ref;
    long long differ = 0;
    PetscCall(run(c, PETSC_COMM_SELF, conn, &one));
    PetscCall(PetscMalloc1(one.cells * PACK + 1, &ref));
    pack(&one, ref);
    if (one.cells != r->cells) bad = 1;
    for (long long i = 0; !bad && i < r->cells; i++) differ += memcmp(ref + i * PACK, all + i * PACK, sizeof(double) * PACK) != 0;
    /* the integrals are sums in another order: equal to round-off */
    double dmass = 0;
    for (int s = 0; s < FEM_REACTION_NS; s++) dmass = fmax(dmass, fabs(one.mass[s] - r->mass[s]) / fabs(one.mass[s]));
    CHECK(!bad);
    CHECK(dmass <= c->tol);
    PetscCall(PetscPrintf(PETSC_COMM_SELF,
                          "ranks %d against 1: cells %lld / %lld, cells differing in A, B, C or steps %lld, "
                          "integrals differing by %.1e (relative)\n",
                          size, r->cells, one.cells, differ, dmass));
    CHECK_EQ(differ, 0);
    PetscCall(PetscFree(ref));
    PetscCall(finish(&one));
    PetscCall(PetscFree2(counts, displs));
    PetscCall(PetscFree(all));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode read_config(config_t *c, char *msg, size_t len)
{
  PetscFunctionBeginUser;
  memset(c, 0, sizeof(*c));
  strcpy(c->mesh, "builtin:unit");
  c->level = 4;
  c->t_final = injection.t_final;
  c->tol = 1e-13;
  c->min_contrast = 10;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mesh", c->mesh, sizeof c->mesh, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-level", &c->level, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-t_final", &c->t_final, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-tol", &c->tol, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-min_contrast", &c->min_contrast, NULL));
  PetscCall(PetscOptionsGetBool(NULL, NULL, "-compare_serial", &c->compare_serial, NULL));
  if (FemAdvectOptionsRead(PETSC_COMM_WORLD, &c->adv, msg, len)) PetscFunctionReturn(0);
  FemReactionDefaults(&c->react);
  if (FemReactionOptionsRead(PETSC_COMM_WORLD, &c->react, msg, len)) PetscFunctionReturn(0);
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  config_t c;
  char msg[256] = "";
  AmrMesh mesh;
  run_t r;
  const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  static const char *type_name[FEM_REACTION_NTYPES] = {"inert", "reacting", "reacted"};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscCall(read_config(&c, msg, sizeof msg));
  if (msg[0]) {
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%s: error: %s\n", prog, msg));
    sc_finalize();
    PetscCall(PetscFinalize());
    return 1;
  }
  PetscCall(AmrMeshCreate(PETSC_COMM_WORLD, c.mesh, &mesh));
  PetscCall(run(&c, PETSC_COMM_WORLD, mesh.conn, &r));
  /* B + C stays; A + C changes by the inflow of A only */
  const double err_bc = fabs((r.mass[1] + r.mass[2]) - (r.mass0[1] + r.mass0[2])) / (r.mass0[1] + r.mass0[2]);
  const double err_ac = fabs((r.mass[0] + r.mass[2]) - (r.mass0[0] + r.mass0[2]) - r.inflow) / r.inflow;
  PetscCall(PetscPrintf(PETSC_COMM_WORLD,
                        "cells %lld steps %d t %.4f: A %.12e B %.12e C %.12e inflow of A %.12e\n"
                        "relative change of B + C %.3e, of A + C - inflow %.3e\n",
                        r.cells, r.nsteps, FemAdvectTime(r.adv), r.mass[0], r.mass[1], r.mass[2], r.inflow, err_bc, err_ac));
  CHECK(err_bc <= c.tol && err_ac <= c.tol);
  double mean[FEM_REACTION_NTYPES];
  for (int s = 0; s < FEM_REACTION_NTYPES; s++) {
    mean[s] = r.cell_steps[s] > 0 ? r.steps[s] / r.cell_steps[s] : 0;
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "type %d %-8s: %9.0f cell reactions, %7.2f ROS2 steps and %8.3f us CPU per cell\n", s, type_name[s],
                          r.cell_steps[s], mean[s], r.cell_steps[s] > 0 ? 1e6 * r.cpu[s] / r.cell_steps[s] : 0));
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "transport (DG step): %.3f us CPU per cell\n", 1e6 * r.transport_cpu / ((double)r.cells * r.nsteps)));
  const double other = fmax(mean[FEM_REACTION_INERT], mean[FEM_REACTION_REACTED]);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "steps per cell, reacting against the dearer of the others: %.1f\n", mean[FEM_REACTION_REACTING] / other));
  /* every type must occur, or the contrast says nothing */
  for (int s = 0; s < FEM_REACTION_NTYPES; s++) CHECK(r.cell_steps[s] > 0);
  CHECK(mean[FEM_REACTION_REACTING] >= c.min_contrast * other);
  /* an inert and a reacted cell both take one step per point, which is
   * why reactive-transport weighs them as one load type (quiet) */
  {
    const double points = c.adv.degree ? (double)(1 << P4EST_DIM) : 1.0;
    CHECK_NEAR(mean[FEM_REACTION_INERT], points, 0);
    CHECK_NEAR(mean[FEM_REACTION_REACTED], points, 0);
  }
  if (c.compare_serial) PetscCall(compare_serial(&c, mesh.conn, &r));
  PetscCall(finish(&r));
  const int fail = check_finish(PETSC_COMM_WORLD);
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "reaction-transport %s\n", fail ? "FAILED" : "passed"));
  PetscCall(AmrMeshDestroy(&mesh));
  sc_finalize();
  PetscCall(PetscFinalize());
  return fail;
}
