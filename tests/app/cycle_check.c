#define _POSIX_C_SOURCE 200809L /* strtok_r */
/*
 * cycle_check: the cycle's balancing step (app/lbcycle.h) on an adapted
 * darcy-transport forest (unit square, -level, -max_level; set up, solved
 * and adapted through the app's cycle, app/cycle.h), with a Poisson
 * solution kept outside the forest as element coefficients.  -check:
 *
 *   migration  for none and every registered method, starting each time
 *              from the even split: one rebalance with the -lb_weights
 *              given (default model costs 1,4).  Asserts that the tracer
 *              mass, the Poisson solution's integral and the cell count are
 *              unchanged, that every cell's data (quadrant, tracer
 *              coefficients, load type, indicator, Poisson coefficients) is
 *              bitwise the same after the move, wherever the cell went, and
 *              that on several ranks every method but none moved cells.
 *   graph      for the methods of -methods (comma separated): from the
 *              even split, whose imbalance under the weights must be below
 *              -max_pct, one rebalance.  Asserts that the method adds no
 *              pair of ranks sharing a face, and that the balancer's record
 *              and AmrCommGraphMeasure agree with an independent recount of
 *              the pairs (owners of every local cell's face neighbours)
 *              before and after.
 *   fitcounts  the timing fit on synthetic windows over this forest: the
 *              type-1 cells of each rank grow by a fixed number every step
 *              (a front crossing cells within the window), each step's time
 *              exactly its cells' costs (1 and 10 units per cell).  Asserts
 *              that with the counts of every step (AmrLbAddStep) the fitted
 *              cost ratio is 10, and that with the counts of the window's
 *              start alone (a problem that reports none) it is off by more
 *              than 20%: the bias the steps' counts remove.
 *
 * Prints "<check> passed" and exits 0 when the property holds.
 */
#include "app/cycle.h"
#include "fem/poisson.h"
#include "mesh/mesh.h"
#include "problems/advection.h"
#include "problems/poisson.h"
#include "check.h"

#include "mesh/p4est_dim.h"
#include <math.h>
#include <string.h>

typedef struct {
  p4est_t *p4est;
  AmrCycle cyc;
  FemAdvect adv;
  FemPoisson fp;
  double *coef; /* Poisson element coefficients, outside the forest */
  int *types;
} setup_t;

/* The load types of the current forest. */
static PetscErrorCode cell_types(setup_t *s)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(s->types));
  PetscCall(PetscMalloc1(s->p4est->local_num_quadrants + 1, &s->types));
  PetscCall(FemAdvectCellTypes(s->p4est, s->types));
  PetscFunctionReturn(0);
}

/* darcy-transport through the cycle: refined towards the initial data, a
 * pressure solve and ten steps, adapted once more after them; a Poisson
 * solution on that mesh. */
static PetscErrorCode build(MPI_Comm comm, const AmrMesh *mesh, int level, int max_level, setup_t *s)
{
  char v[32];
  AmrProblem p;
  double *eta2;
  PetscInt its;
  PetscReal rnorm;

  PetscFunctionBeginUser;
  memset(s, 0, sizeof *s);
  PetscCall(PetscOptionsSetValue(NULL, "-problem", "darcy-transport"));
  PetscCall(PetscOptionsSetValue(NULL, "-amr_interval", "10"));
  PetscCall(PetscSNPrintf(v, sizeof v, "%d", max_level));
  PetscCall(PetscOptionsSetValue(NULL, "-amr_max_level", v));
  PetscCall(AmrCycleCreate(comm, mesh, level, "", PETSC_TRUE, &s->cyc));
  p = AmrCycleGetProblem(s->cyc);
  s->p4est = p4est_new_ext(comm, mesh->conn, 0, level, 1, 0, NULL, NULL);
  PetscCall(AmrCycleSetup(s->cyc, s->p4est));
  s->adv = ((AmrAdvection *)p->impl)->adv;
  PetscCall(AmrProblemSolve(p));
  PetscCall(PetscMalloc1(s->p4est->local_num_quadrants + 1, &eta2));
  PetscCall(AmrProblemEstimate(p, eta2));
  PetscCall(AmrCycleAdapt(s->cyc, eta2));
  PetscCall(PetscFree(eta2));
  PetscCall(cell_types(s));
  PetscCall(FemPoissonCreate(comm, AmrPoissonData("sine"), 1, NULL, NULL, &s->fp));
  PetscCall(FemPoissonSetup(s->fp, s->p4est));
  PetscCall(FemPoissonAssemble(s->fp));
  PetscCall(FemPoissonSolve(s->fp, &its, &rnorm));
  PetscCall(PetscMalloc1((size_t)s->p4est->local_num_quadrants * FemPoissonVNodes(s->fp) + 1, &s->coef));
  PetscCall(FemPoissonElementCoefficients(s->fp, s->coef));
  PetscFunctionReturn(0);
}

static PetscErrorCode destroy(setup_t *s)
{
  PetscFunctionBeginUser;
  PetscCall(FemPoissonDestroy(&s->fp));
  PetscCall(AmrCycleDestroy(&s->cyc));
  PetscCall(PetscFree(s->coef));
  PetscCall(PetscFree(s->types));
  p4est_destroy(s->p4est);
  PetscFunctionReturn(0);
}

/* Integral of the Poisson solution by the midpoint rule on every cell (the
 * unit square's one tree: a cell's area is its side squared). */
static PetscErrorCode solution_integral(setup_t *s, double *integral)
{
  const int vn = FemPoissonVNodes(s->fp);
  const double centre[3] = {0.5, 0.5, 0.5};
  double local = 0;
  PetscFunctionBeginUser;
  for (p4est_topidx_t t = s->p4est->first_local_tree; t <= s->p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(s->p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      const double h = (double)P4EST_QUADRANT_LEN(q->level) / P4EST_ROOT_LEN;
      local += pow(h, P4EST_DIM) * FemPoissonEvalRef(s->fp, s->coef + (tr->quadrants_offset + i) * vn, centre);
    }
  }
  PetscCallMPI(MPI_Allreduce(&local, integral, 1, MPI_DOUBLE, MPI_SUM, s->p4est->mpicomm));
  PetscFunctionReturn(0);
}

/* Every cell's data in curve order, gathered on rank 0 (NULL elsewhere):
 * tree, level, coordinates, load type, tracer, indicator, Poisson
 * coefficients. */
static PetscErrorCode snapshot(setup_t *s, int *per, double **all)
{
  p4est_t *p4est = s->p4est;
  const int vn = FemPoissonVNodes(s->fp);
  const int n = (int)p4est->local_num_quadrants, size = p4est->mpisize;
  double *mine, *d;
  int *cnt = NULL, *disp = NULL;

  PetscFunctionBeginUser;
  *per = 6 + FEM_ADVECT_NB + 1 + vn;
  PetscCall(PetscMalloc1((size_t)n * *per + 1, &mine));
  d = mine;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      const FemAdvectCell *c = q->p.user_data;
      *d++ = t;
      *d++ = q->level;
      *d++ = q->x;
      *d++ = q->y;
#ifdef P4_TO_P8
      *d++ = q->z;
#else
      *d++ = 0;
#endif
      *d++ = c->load_type;
      for (int k = 0; k < FEM_ADVECT_NB; k++) *d++ = c->c[k];
      *d++ = c->indicator;
      for (int k = 0; k < vn; k++) *d++ = s->coef[(tr->quadrants_offset + i) * vn + k];
    }
  }
  *all = NULL;
  if (p4est->mpirank == 0) {
    PetscCall(PetscMalloc2(size, &cnt, size, &disp));
    PetscCall(PetscMalloc1((size_t)p4est->global_num_quadrants * *per + 1, all));
    for (int r = 0; r < size; r++) {
      cnt[r] = (int)(p4est->global_first_quadrant[r + 1] - p4est->global_first_quadrant[r]) * *per;
      disp[r] = (int)p4est->global_first_quadrant[r] * *per;
    }
  }
  PetscCallMPI(MPI_Gatherv(mine, n * *per, MPI_DOUBLE, *all, cnt, disp, MPI_DOUBLE, 0, p4est->mpicomm));
  if (p4est->mpirank == 0) PetscCall(PetscFree2(cnt, disp));
  PetscCall(PetscFree(mine));
  PetscFunctionReturn(0);
}

/* Options for one method: the command line's weights, that method. */
static PetscErrorCode method_options(MPI_Comm comm, const lb_method *m, AmrLbOptions *o)
{
  PetscFunctionBeginUser;
  PetscCall(AmrLbOptionsRead(comm, 2, o));
  o->method = m;
  o->skew = 0;
  o->threshold = -1;
  o->interval = 1;
  if (m) {
    PetscCheck(lb_params_init(&o->params, m) == LB_OK, comm, PETSC_ERR_LIB, "%s", lb_errmsg());
    o->params.backend = LB_BACKEND_MPI;
    o->params.comm = comm;
    o->params.target = 0.99;
    o->params.max_iters = 1000;
  }
  PetscFunctionReturn(0);
}

/* Back to equal cell counts (families kept), carrying the solution: the
 * starting point both migration and graph checks measure from. */
static PetscErrorCode even_split(MPI_Comm comm, setup_t *s)
{
  AmrLbOptions o;
  AmrLb lb;
  AmrField field = {(void **)&s->coef, sizeof(double) * FemPoissonVNodes(s->fp)};

  PetscFunctionBeginUser;
  PetscCall(method_options(comm, NULL, &o));
  PetscCall(AmrLbCreate(comm, &o, &lb));
  PetscCall(AmrLbInitial(lb, s->p4est, s->types, 1, &field));
  PetscCall(AmrLbDestroy(&lb));
  PetscCall(cell_types(s));
  PetscFunctionReturn(0);
}

/* One rebalance from the even split with method m (NULL: none). */
static PetscErrorCode rebalance(setup_t *s, const lb_method *m, AmrLbRecord *rec)
{
  MPI_Comm comm = s->p4est->mpicomm;
  AmrLbOptions o;
  AmrLb lb;
  AmrField field = {(void **)&s->coef, sizeof(double) * FemPoissonVNodes(s->fp)};

  PetscFunctionBeginUser;
  PetscCall(method_options(comm, m, &o));
  PetscCall(AmrLbCreate(comm, &o, &lb));
  PetscCall(AmrLbInitial(lb, s->p4est, s->types, 1, &field));
  PetscCall(cell_types(s));
  PetscCall(AmrLbWindowStart(lb, s->p4est, s->types));
  PetscCall(AmrLbBalance(lb, s->p4est, s->types, 0, PETSC_TRUE, 1, &field, rec));
  PetscCall(cell_types(s));
  PetscCall(AmrLbDestroy(&lb));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_migration(setup_t *s)
{
  MPI_Comm comm = s->p4est->mpicomm;
  const int size = s->p4est->mpisize;

  PetscFunctionBeginUser;
  for (int i = -1; i < lb_method_count(); i++) {
    const lb_method *m = i < 0 ? NULL : lb_method_get(i);
    double mass0, mass1, int0, int1, *a0, *a1;
    long long cells0 = (long long)s->p4est->global_num_quadrants;
    int per, bad = 0;
    AmrLbRecord rec;

    /* from the even split, measured there */
    PetscCall(even_split(comm, s));
    PetscCall(FemAdvectMass(s->adv, &mass0, NULL));
    PetscCall(solution_integral(s, &int0));
    PetscCall(snapshot(s, &per, &a0));
    PetscCall(rebalance(s, m, &rec));
    PetscCall(FemAdvectMass(s->adv, &mass1, NULL));
    PetscCall(solution_integral(s, &int1));
    PetscCall(snapshot(s, &per, &a1));
    if (a0) bad = memcmp(a0, a1, sizeof(double) * per * (size_t)cells0) != 0;
    PetscCallMPI(MPI_Bcast(&bad, 1, MPI_INT, 0, comm));
    PetscCall(PetscFree(a0));
    PetscCall(PetscFree(a1));
    PetscCall(PetscPrintf(comm,
                          "%-18s cells %lld -> %lld, moved %lld (max %lld per rank), I%% %.2f -> %.2f, tracer mass %.15e -> %.15e, solution integral %.15e -> %.15e, cell data %s\n",
                          m ? m->name : "none", cells0, (long long)s->p4est->global_num_quadrants, rec.migrated_cells_tot, rec.migrated_cells_max,
                          rec.kept_imbalance_pct, rec.predicted_imbalance_pct, mass0, mass1, int0, int1, bad ? "DIFFER" : "identical"));
    if (!CHECK(!(bad || cells0 != (long long)s->p4est->global_num_quadrants || fabs(mass1 - mass0) > 1e-13 * fabs(mass0) ||
                 fabs(int1 - int0) > 1e-13 * fabs(int0) || (size > 1 && m && rec.migrated_cells_tot == 0) || (!m && rec.migrated_cells_tot != 0))))
      PetscCall(PetscPrintf(comm, "  FAILED\n"));
  }
  PetscFunctionReturn(0);
}

/* Independent recount of the pairs of ranks that share a face: the owners
 * of the half-size face neighbours of every local cell (on a 2:1 balanced
 * forest each lies in exactly one leaf), gathered and made symmetric.
 * Returns the sorted pairs u < v on every rank. */
static PetscErrorCode recount(p4est_t *p4est, int *npairs, int **pairs)
{
  const int size = p4est->mpisize, rank = p4est->mpirank;
  int *nb, *all, *cnt, *disp, *mark;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(size, &nb));
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      for (int f = 0; f < P4EST_FACES; f++) {
        p4est_quadrant_t same, kids[P4EST_CHILDREN];
        int nface;
        const p4est_topidx_t nt = p4est_quadrant_face_neighbor_extra(q, t, f, &same, &nface, p4est->connectivity);
        if (nt < 0) continue;
        nface %= P4EST_FACES;
        p4est_quadrant_childrenv(&same, kids);
        for (int c = 0; c < P4EST_CHILDREN; c++) {
          if (((c >> (nface / 2)) & 1) != (nface & 1)) continue; /* not on the shared face */
          const int owner = p4est_comm_find_owner(p4est, nt, &kids[c], rank);
          if (owner != rank) nb[owner] = 1;
        }
      }
    }
  }
  PetscCall(PetscMalloc3((size_t)size * size, &all, size, &cnt, size, &disp));
  for (int r = 0; r < size; r++) {
    cnt[r] = size;
    disp[r] = r * size;
  }
  PetscCallMPI(MPI_Allgatherv(nb, size, MPI_INT, all, cnt, disp, MPI_INT, p4est->mpicomm));
  PetscCall(PetscCalloc1((size_t)size * size, &mark));
  *npairs = 0;
  for (int u = 0; u < size; u++)
    for (int v = 0; v < size; v++)
      if (all[u * size + v]) mark[PetscMin(u, v) * size + PetscMax(u, v)] = 1;
  PetscCall(PetscMalloc1(2 * (size_t)size * size + 1, pairs));
  for (int u = 0; u < size; u++)
    for (int v = u + 1; v < size; v++)
      if (mark[u * size + v]) {
        (*pairs)[2 * *npairs] = u;
        (*pairs)[2 * *npairs + 1] = v;
        (*npairs)++;
      }
  PetscCall(PetscFree3(all, cnt, disp));
  PetscCall(PetscFree(mark));
  PetscCall(PetscFree(nb));
  PetscFunctionReturn(0);
}

/* Whether the measured graph has exactly the recounted pairs. */
static int same_pairs(const AmrCommGraph *g, int n, const int *pairs)
{
  if (g->nedges != n) return 0;
  for (int k = 0; k < n; k++)
    if (g->eu[k] != pairs[2 * k] || g->ev[k] != pairs[2 * k + 1]) return 0;
  return 1;
}

/* Pairs of b missing from a. */
static int count_new(int na, const int *a, int nb, const int *b)
{
  int n = 0;
  for (int j = 0; j < nb; j++) {
    int found = 0;
    for (int i = 0; i < na && !found; i++) found = a[2 * i] == b[2 * j] && a[2 * i + 1] == b[2 * j + 1];
    n += !found;
  }
  return n;
}

static PetscErrorCode check_graph(setup_t *s, const char *methods, double max_pct)
{
  MPI_Comm comm = s->p4est->mpicomm;
  char list[512], *name, *save = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(list, methods, sizeof list));
  for (name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
    const lb_method *m = lb_method_find(name);
    AmrCommGraph g0, g1;
    AmrLbRecord rec;
    int n0, n1, *p0, *p1, added, removed, ok0, ok1;
    PetscCheck(m, comm, PETSC_ERR_USER_INPUT, "option -methods: unknown method %s", name);
    PetscCall(even_split(comm, s));
    PetscCall(AmrCommGraphMeasure(s->p4est, &g0));
    PetscCall(recount(s->p4est, &n0, &p0));
    PetscCall(rebalance(s, m, &rec));
    PetscCall(AmrCommGraphMeasure(s->p4est, &g1));
    PetscCall(recount(s->p4est, &n1, &p1));
    added = count_new(n0, p0, n1, p1);
    removed = count_new(n1, p1, n0, p0);
    ok0 = same_pairs(&g0, n0, p0);
    ok1 = same_pairs(&g1, n1, p1);
    PetscCall(PetscPrintf(comm, "%-18s I%% %.2f -> %.2f, moved %lld cells, pairs %d -> %d (recount %d -> %d), added %d removed %d (recount %d, %d), edge cut %lld\n",
                          name, rec.kept_imbalance_pct, rec.predicted_imbalance_pct, rec.migrated_cells_tot, g0.nedges, rec.comm_edges, n0, n1,
                          rec.comm_edges_added, rec.comm_edges_removed, added, removed, rec.edge_cut));
    if (!CHECK(ok0 && ok1 && rec.comm_edges == n1 && rec.comm_edges_added == added && rec.comm_edges_removed == removed && added == 0 &&
               rec.kept_imbalance_pct <= max_pct && rec.edge_cut == g1.edge_cut))
      PetscCall(PetscPrintf(comm, "  FAILED\n"));
    PetscCall(PetscFree(p0));
    PetscCall(PetscFree(p1));
    PetscCall(AmrCommGraphFree(&g0));
    PetscCall(AmrCommGraphFree(&g1));
  }
  PetscFunctionReturn(0);
}

/* The fitted cost ratio of type 1 to type 0 after four synthetic windows
 * of ten steps on this forest, with the counts of every step or (steps 0)
 * with the window's start counts alone.  Nothing is repartitioned. */
static PetscErrorCode fitted_ratio(setup_t *s, int steps, double *ratio)
{
  MPI_Comm comm = s->p4est->mpicomm;
  const p4est_locidx_t n = s->p4est->local_num_quadrants;
  const int64_t d = 2 * (n / 80); /* even: the mean over ten steps is whole */
  const double cost[2] = {1e-6, 1e-5};
  AmrLbOptions o;
  AmrLb lb;
  int *types, rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(method_options(comm, NULL, &o));
  o.weights = AMR_LB_TIMING;
  PetscCall(AmrLbCreate(comm, &o, &lb));
  PetscCall(PetscMalloc1(n + 1, &types));
  for (int w = 0; w < 4; w++) {
    /* each rank and window its own mix, so that the rows determine the costs */
    const int64_t m = (int64_t)n * (1 + rank + w) / 8;
    AmrLbRecord rec;
    for (p4est_locidx_t i = 0; i < n; i++) types[i] = i < m;
    PetscCall(AmrLbWindowStart(lb, s->p4est, types));
    for (int k = 0; k < 10; k++) {
      const int64_t counts[2] = {n - m - d * k, m + d * k};
      const double t = (double)counts[0] * cost[0] + (double)counts[1] * cost[1];
      PetscCall(AmrLbAddStep(lb, t, t, steps ? counts : NULL));
    }
    PetscCall(AmrLbBalance(lb, s->p4est, types, w, PETSC_FALSE, 0, NULL, &rec));
    *ratio = rec.cost[1] / rec.cost[0];
  }
  PetscCall(PetscFree(types));
  PetscCall(AmrLbDestroy(&lb));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_fitcounts(setup_t *s)
{
  double with, without;

  PetscFunctionBeginUser;
  PetscCheck(s->p4est->local_num_quadrants >= 80, s->p4est->mpicomm, PETSC_ERR_USER_INPUT, "fitcounts: needs 80 cells per rank");
  PetscCall(fitted_ratio(s, 1, &with));
  PetscCall(fitted_ratio(s, 0, &without));
  CHECK_NEAR(with, 10.0, 1e-6);
  CHECK_MSG(fabs(without / 10 - 1) > 0.2, "start counts fitted ratio %g", without);
  PetscCall(PetscPrintf(s->p4est->mpicomm, "fitted cost ratio 10 (true): %.9g with the steps' counts, %.3g with the start counts\n", with, without));
  PetscFunctionReturn(0);
}

static PetscErrorCode run(MPI_Comm comm)
{
  char check[32] = "migration", methods[512] = "diffusion,diffusion-discrete,second-order,chebyshev,chemotaxis,dimension-exchange";
  PetscInt level = 4, max_level = 6;
  PetscReal max_pct = 5;
  AmrMesh mesh;
  setup_t s;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-check", check, sizeof check, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-methods", methods, sizeof methods, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-level", &level, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_level", &max_level, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-max_pct", &max_pct, NULL));
  PetscCheck(!strcmp(check, "migration") || !strcmp(check, "graph") || !strcmp(check, "fitcounts"), comm, PETSC_ERR_USER_INPUT,
             "option -check %s: migration, graph or fitcounts", check);
  PetscCall(AmrMeshCreate(comm, "builtin:unit", &mesh));
  PetscCall(build(comm, &mesh, (int)level, (int)max_level, &s));
  if (!strcmp(check, "migration"))
    PetscCall(check_migration(&s));
  else if (!strcmp(check, "graph"))
    PetscCall(check_graph(&s, methods, max_pct));
  else
    PetscCall(check_fitcounts(&s));
  PetscCall(destroy(&s));
  PetscCall(AmrMeshDestroy(&mesh));
  if (check_finish(comm))
    PetscCall(PetscPrintf(comm, "%s FAILED (%d checks over the ranks)\n", check, check_failures));
  else
    PetscCall(PetscPrintf(comm, "%s passed\n", check));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscErrorCode err;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  err = run(PETSC_COMM_WORLD);
  sc_finalize();
  PetscCall(PetscFinalize());
  return err || check_failures ? 1 : 0;
}
