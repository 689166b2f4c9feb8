/*
 * The upwind DG advection solver (advect.h): the object, its set-up and
 * its explicit SSP Runge-Kutta time stepping with the Barth-Jespersen
 * limiter.  Its cells, faces, adaptation and diagnostics are the
 * advect_*.c files beside it (fem/impl/advect.h).  Written for 2D;
 * compiled again with P4_TO_P8 for 3D.
 *
 * Basis: 1 and the cell reference coordinates xi_k in [-1,1], i.e. P1 in
 * the tree's reference coordinates.  Because a quadrant is an affine image
 * of its parent in those coordinates, refinement is an exact restriction
 * and coarsening an exact L2 projection: both conserve the integral of u.
 *
 * Every face flux is computed once from a canonical side (the small side of
 * a hanging face, otherwise the smaller tree/quadrant), so the two cells of
 * a face, on one rank or on two, receive bitwise opposite mass fluxes.
 *
 * Why the steps are written here and not PETSc's TSSSP with a post-stage
 * hook for the limiter (measured with PETSc 3.18, medians of 3):
 * - TSSSP has no 3-stage third-order scheme, this solver's default for
 *   degree 1 (-adv_rk 3, Shu-Osher): its rks3 needs n^2 >= 4 stages, and
 *   TSSolve with 3 stages stops with "must be a square number at least 4".
 * - Its rks2 calls the post-stage hook once per 2-stage step (2000 calls
 *   in 2000 steps), not after the final combination: the limiter would
 *   need a post-step hook too, and every stage here starts limited.
 * - The boundary inflow is summed with the stages' convex combinations
 *   (mass balance to round-off); in TS it would be an extra unknown.
 * - TSSSP's own work per stage is small: 1.36 us per stage more than this
 *   loop on 30 doubles (200000 steps, rks2), against 251 us of a stage's
 *   own work in `mpiexec -n 2 amr2d -options_file
 *   config/lb-darcy-transport.opts` (transport 0.306 s of the slowest rank
 *   over 406 steps of 3 stages): 0.5%.  Speed does not decide it; the
 *   scheme and the limiter's place do.
 */
#include "fem/impl/advect.h"
#include "balance/lbclock.h"

#include <math.h>
#include <string.h>

static void init_cell(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  (void)t;
  memset(q->p.user_data, 0, p4est->data_size);
}

double *FemAdvectCellExtra(FemAdvectCell *cell, int f) { return (double *)(cell + 1) + (size_t)f * FEM_ADVECT_NB; }

size_t FemAdvectCellBytes(const FemAdvectProblem *prob) { return sizeof(FemAdvectCell) + (size_t)prob->nextra * FEM_ADVECT_NB * sizeof(double); }

/** L2 projection of exact(x, t) onto the basis of quadrant q. */
static void project_exact(FemAdvect adv, p4est_topidx_t t, const p4est_quadrant_t *q, double tm, double *c)
{
  const int nb = adv->nb, np = ipow(NQ_EXACT, DIM);
  double m[FEM_ADVECT_NB * FEM_ADVECT_NB];
  for (int i = 0; i < nb; i++) c[i] = 0;
  for (int p = 0; p < np; p++) {
    double xi[DIM], w, x[3], jinv[3][3], phi[FEM_ADVECT_NB];
    tensor_point(NQ_EXACT, p, xi, &w);
    w *= FemAdvectCellMap(adv->p4est->connectivity, t, q, xi, x, jinv);
    basis(nb, xi, phi);
    double u = adv->prob->exact(adv->ctx, x, tm);
    for (int i = 0; i < nb; i++) c[i] += w * u * phi[i];
  }
  FemAdvectMassMatrix(adv, t, q, m);
  FemAdvectSolveSmall(nb, m, c);
}

/** M^{-1} times the DG residual of state u at time t; returns the boundary
 *  outflow integral of this rank. */
static double residual(FemAdvect adv, double t)
{
  const int nb = adv->nb, npv = ipow(adv->nqv, DIM);
  const int nqf = ipow(adv->nqf, DIM - 1);
  const double *u = adv->u;
  double *r = adv->rhs, outflow = 0;
  memset(r, 0, sizeof(double) * (size_t)adv->nlocal * nb);
  double phiv[1 << DIM][FEM_ADVECT_NB]; /* basis at the volume points */
  for (int p = 0; nb > 1 && p < npv; p++) {
    double xi[DIM], w;
    tensor_point(adv->nqv, p, xi, &w);
    basis(nb, xi, phiv[p]);
  }
  const int restricted = adv->restricted;
  const unsigned char *emit = adv->emit;
  if (restricted)
    for (p4est_locidx_t K = 0; K < adv->nlocal + adv->nghost; K++) {
      int e = adv->active[K] != 0;
      for (int j = 0; j < nb && !e; j++) e = fabs(u[(size_t)K * nb + j]) > adv->floor;
      adv->emit[K] = (unsigned char)e;
    }
  if (nb > 1)
    for (p4est_locidx_t K = 0; K < adv->nlocal; K++)
      for (int p = 0; p < npv && (!restricted || emit[K]); p++) {
        double uq = eval(nb, u + (size_t)K * nb, phiv[p]);
        const double *g = adv->gvol + ((size_t)K * npv + p) * DIM;
        for (int k = 0; k < DIM; k++) r[(size_t)K * nb + 1 + k] += uq * g[k];
      }
  for (size_t e = 0; e < adv->nfaces; e++) {
    const Face *f = &adv->faces[e];
    const double *ua = u + (size_t)f->a * nb, *ub = u + (size_t)f->b * nb;
    for (int p = 0; p < nqf; p++) {
      if (restricted && !emit[f->bn[p] > 0 ? f->a : f->b]) continue;
      double flux = f->bn[p] * (f->bn[p] > 0 ? eval(nb, ua, f->phia[p]) : eval(nb, ub, f->phib[p]));
      if (f->a_local)
        for (int i = 0; i < nb; i++) r[(size_t)f->a * nb + i] -= flux * f->phia[p][i];
      if (f->b_local)
        for (int i = 0; i < nb; i++) r[(size_t)f->b * nb + i] += flux * f->phib[p][i];
    }
  }
  for (size_t e = 0; e < adv->nbfaces; e++) {
    const BFace *f = &adv->bfaces[e];
    const double *ua = u + (size_t)f->a * nb;
    for (int p = 0; p < nqf && (!restricted || emit[f->a]); p++) {
      double uu = f->bn[p] > 0 ? eval(nb, ua, f->phia[p]) : adv->prob->exact(adv->ctx, f->x[p], t);
      double flux = f->bn[p] * uu;
      outflow += flux;
      for (int i = 0; i < nb; i++) r[(size_t)f->a * nb + i] -= flux * f->phia[p][i];
    }
  }
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    double tmp[FEM_ADVECT_NB];
    const double *mi = adv->minv + (size_t)K * nb * nb;
    for (int i = 0; i < nb; i++) {
      tmp[i] = 0;
      for (int j = 0; j < nb; j++) tmp[i] += mi[i * nb + j] * r[(size_t)K * nb + j];
    }
    memcpy(r + (size_t)K * nb, tmp, sizeof(double) * nb);
  }
  return outflow;
}

/** Cell means of the local cells of state u, then exchanged to ghosts. */
void FemAdvectComputeMeans(FemAdvect adv)
{
  const int nb = adv->nb;
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    double s = 0;
    for (int j = 0; j < nb; j++) s += adv->m0[(size_t)K * nb + j] * adv->u[(size_t)K * nb + j];
    adv->mean[K] = s / adv->vol[K];
  }
  FemAdvectExchange(adv, adv->mean, adv->mirror_mean, sizeof(double));
}

/** Scales the linear part of degree-1 coefficients c with mean um and
 *  centroid xibar (cell coordinates) so that the vertex values stay in
 *  [mn, mx]; keeps the mean. */
void FemAdvectLimitCell(double *c, const double xibar[DIM], double um, double mn, double mx)
{
  double alpha = 1;
  const double tol = 1e-13 * (fabs(mx) + fabs(mn) + 1e-300);
  for (int v = 0; v < P4EST_CHILDREN; v++) {
    double d = 0;
    for (int k = 0; k < DIM; k++) d += c[1 + k] * (((v >> k) & 1 ? 1 : -1) - xibar[k]);
    if (d > tol)
      alpha = fmin(alpha, (mx - um) / d);
    else if (d < -tol)
      alpha = fmin(alpha, (mn - um) / d);
  }
  if (alpha >= 1) return;
  alpha = fmax(alpha, 0);
  double shift = 0;
  for (int k = 0; k < DIM; k++) {
    c[1 + k] *= alpha;
    shift += c[1 + k] * xibar[k];
  }
  c[0] = um - shift;
}

/** Barth-Jespersen: scales the linear part of every cell so that its
 *  vertex values stay within the means of the cell and its face
 *  neighbours; keeps every cell mean, hence conservative. */
static void limit(FemAdvect adv)
{
  const int nb = adv->nb;
  FemAdvectComputeMeans(adv);
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) adv->mn[K] = adv->mx[K] = adv->mean[K];
  for (size_t e = 0; e < adv->nfaces; e++) {
    const Face *f = &adv->faces[e];
    double ma = adv->mean[f->a], mb = adv->mean[f->b];
    if (f->a_local) {
      adv->mn[f->a] = fmin(adv->mn[f->a], mb);
      adv->mx[f->a] = fmax(adv->mx[f->a], mb);
    }
    if (f->b_local) {
      adv->mn[f->b] = fmin(adv->mn[f->b], ma);
      adv->mx[f->b] = fmax(adv->mx[f->b], ma);
    }
  }
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    double xibar[DIM];
    for (int k = 0; k < DIM; k++) xibar[k] = adv->m0[(size_t)K * nb + 1 + k] / adv->vol[K];
    FemAdvectLimitCell(adv->u + (size_t)K * nb, xibar, adv->mean[K], adv->mn[K], adv->mx[K]);
  }
}

PetscErrorCode FemAdvectTimeStep(FemAdvect adv, double *dt)
{
  double local = INFINITY;
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncMesh(adv));
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++)
    if (adv->outflow[K] > 0) local = fmin(local, adv->opt.cfl * adv->vol[K] / ((2 * adv->opt.degree + 1) * adv->outflow[K]));
  PetscCallMPI(MPI_Allreduce(&local, dt, 1, MPI_DOUBLE, MPI_MIN, adv->p4est->mpicomm));
  PetscFunctionReturn(0);
}

/** Copies the state between the quadrant data and the work array. */
void FemAdvectStateIO(FemAdvect adv, int to_cells)
{
  const size_t bytes = sizeof(double) * adv->nb;
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) {
    double *s = adv->u + (size_t)K * adv->nb;
    if (to_cells)
      memcpy(adv->cells[K]->c, s, bytes);
    else
      memcpy(s, adv->cells[K]->c, bytes);
  }
}

/** One SSP-RK step in Shu-Osher form, tracking the boundary inflow with
 *  the same convex combinations so that mass balance holds exactly. */
static void rk_step(FemAdvect adv, double dt)
{
  static const double a2[2] = {0, 0.5}, a3[3] = {0, 0.75, 1.0 / 3};
  static const double c2[2] = {0, 1}, c3[3] = {0, 1, 0.5};
  const int ns = adv->opt.rk_stages, nb = adv->nb;
  const double *a = ns == 2 ? a2 : a3, *ct = ns == 2 ? c2 : c3;
  const size_t n = (size_t)adv->nlocal * nb;
  double phi = 0; /* outflow accumulated by the stages */
  /* a step's own work (FemAdvectWorkTime: the timing weights, the
   * report's rank times): its time less its time inside MPI, the ghost
   * exchanges' waits, as the profiling layer counts it for every phase */
  lb_clock c0, c1;
  double own_cpu, own_wall;
  lb_clock_now(&c0);
  memcpy(adv->u0, adv->u, n * sizeof(double));
  for (int s = 0; s < ns; s++) {
    FemAdvectExchange(adv, adv->u, adv->mirror_state, nb * sizeof(double));
    double out = residual(adv, adv->time + ct[s] * dt);
    for (size_t i = 0; i < n; i++) adv->u[i] = a[s] * adv->u0[i] + (1 - a[s]) * (adv->u[i] + dt * adv->rhs[i]);
    phi = (1 - a[s]) * (phi + dt * out);
    if (adv->opt.limiter && nb > 1) limit(adv);
  }
  adv->inflow_local -= phi;
  lb_clock_now(&c1);
  lb_clock_between(&c0, &c1, &own_cpu, &own_wall, NULL, NULL);
  adv->work_cpu += own_cpu;
  adv->work_wall += own_wall;
}

PetscErrorCode FemAdvectAdvance(FemAdvect adv, double t_end, int nsteps, int *taken)
{
  double dt;
  int n = 0;
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncMesh(adv));
  PetscCall(PetscLogEventBegin(adv->ev_advance, 0, 0, 0, 0));
  PetscCall(FemAdvectTimeStep(adv, &dt));
  FemAdvectStateIO(adv, 0);
  /* a coarsened cell's L2 projection can undershoot its children's
   * bounds: limited again, every stage starts from a limited state, which
   * keeps the means within the data's range */
  if (adv->opt.limiter && adv->nb > 1) limit(adv);
  while (n < nsteps && adv->time < t_end) {
    double h = dt;
    int last = adv->time + h >= t_end - 1e-12 * h;
    if (last) h = t_end - adv->time;
    rk_step(adv, h);
    adv->time = last ? t_end : adv->time + h;
    n++;
  }
  FemAdvectStateIO(adv, 1);
  if (taken) *taken = n;
  PetscCall(PetscLogEventEnd(adv->ev_advance, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

/* The active region from its seed cells: they and their face neighbours.
 * A face whose upwind cell lies outside carries no flux, on both sides, so
 * the region saves work without losing conservation. */
PetscErrorCode FemAdvectSetActive(FemAdvect adv, const int *seed, double floor)
{
  double *region = adv->mn; /* local work space */
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncMesh(adv));
  adv->restricted = seed != NULL;
  adv->floor = floor;
  if (!seed) PetscFunctionReturn(0);
  for (p4est_locidx_t K = 0; K < adv->nlocal; K++) adv->active[K] = region[K] = seed[K] != 0;
  PetscCall(FemAdvectGhostExchange(adv, adv->active, 1));
  for (size_t e = 0; e < adv->nfaces; e++) {
    const Face *f = &adv->faces[e];
    if (f->a_local && adv->active[f->b]) region[f->a] = 1;
    if (f->b_local && adv->active[f->a]) region[f->b] = 1;
  }
  memcpy(adv->active, region, sizeof(double) * (size_t)adv->nlocal);
  PetscCall(FemAdvectGhostExchange(adv, adv->active, 1));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectCreate(p4est_t *p4est, const FemAdvectProblem *prob, void *ctx, const FemAdvectOptions *opt, FemAdvect *out)
{
  FemAdvect adv;
  static PetscClassId classid;
  static PetscLogEvent ev_setup, ev_advance, ev_adapt;
  PetscFunctionBeginUser;
  if (!classid) {
    PetscCall(PetscClassIdRegister("Advection", &classid));
    PetscCall(PetscLogEventRegister("FemAdvectSetup", classid, &ev_setup));
    PetscCall(PetscLogEventRegister("FemAdvectAdvance", classid, &ev_advance));
    PetscCall(PetscLogEventRegister("FemAdvectAdapt", classid, &ev_adapt));
  }
  PetscCheck(prob->nextra >= 0 && prob->nextra <= FEM_ADVECT_MAX_EXTRA, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "%d extra fields (at most %d)", prob->nextra,
             FEM_ADVECT_MAX_EXTRA);
  PetscCall(PetscCalloc1(1, &adv));
  adv->p4est = p4est;
  adv->ev_setup = ev_setup;
  adv->ev_advance = ev_advance;
  adv->ev_adapt = ev_adapt;
  adv->prob = prob;
  adv->ctx = ctx;
  adv->opt = *opt;
  adv->nb = opt->degree ? FEM_ADVECT_NB : 1;
  adv->nqf = prob->face_flux ? 2 : opt->degree + 1;
  adv->nqv = opt->degree + 1;
  void *saved = p4est->user_pointer;
  p4est_reset_data(p4est, FemAdvectCellBytes(prob), init_cell, saved);
  PetscCall(FemAdvectMeshChanged(adv));
  PetscCall(FemAdvectProjectExact(adv));
  *out = adv;
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectProjectExact(FemAdvect adv)
{
  p4est_t *p4est = adv->p4est;
  PetscFunctionBeginUser;
  PetscCall(FemAdvectSyncMesh(adv));
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      project_exact(adv, t, q, adv->time, adv->cells[tr->quadrants_offset + i]->c);
    }
  }
  if (adv->opt.limiter && adv->nb > 1) {
    FemAdvectStateIO(adv, 0);
    limit(adv);
    FemAdvectStateIO(adv, 1);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectDestroy(FemAdvect *adv)
{
  PetscFunctionBeginUser;
  if (!*adv) PetscFunctionReturn(0);
  FemAdvectFreeMesh(*adv);
  PetscCall(PetscFree(*adv));
  PetscFunctionReturn(0);
}

PetscErrorCode FemAdvectCellTypes(p4est_t *p4est, int *types)
{
  PetscFunctionBeginUser;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++)
      types[tr->quadrants_offset + i] = ((const FemAdvectCell *)p4est_quadrant_array_index(&tr->quadrants, i)->p.user_data)->load_type;
  }
  PetscFunctionReturn(0);
}

p4est_t *FemAdvectForest(FemAdvect adv) { return adv->p4est; }

double FemAdvectTime(FemAdvect adv) { return adv->time; }

void FemAdvectGetHistory(FemAdvect adv, double *time, double *inflow_local)
{
  *time = adv->time;
  *inflow_local = adv->inflow_local;
}

void FemAdvectSetHistory(FemAdvect adv, double time, double inflow_local)
{
  adv->time = time;
  adv->inflow_local = inflow_local;
}

void FemAdvectWorkTime(FemAdvect adv, double *cpu, double *wall)
{
  *cpu = adv->work_cpu;
  *wall = adv->work_wall;
}
