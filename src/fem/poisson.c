#include "mesh/p4est_dim.h"
#include <math.h>
#include <string.h>
#include "fem/femutil.h"
#include "fem/impl/poisson.h"
#include "mesh/geom.h"

/* Add the time since (cpu0, wall0) to the local work (a multigrid level's
 * to its finest level's). */
void FemPoissonAddWork(FemPoisson fp, double cpu0, double wall0)
{
  double cpu, wall;
  FemPoisson w = fp->work_owner ? fp->work_owner : fp;
  FemClocks(&cpu, &wall);
  w->work_cpu += cpu - cpu0;
  w->work_wall += wall - wall0;
}

void FemPoissonWorkTime(FemPoisson fp, double *cpu, double *wall)
{
  *cpu = fp->work_cpu;
  *wall = fp->work_wall;
}

void FemPoissonSolveTime(FemPoisson fp, double *cpu, double *wall)
{
  *cpu = fp->ksp_cpu;
  *wall = fp->ksp_wall;
}

PetscErrorCode FemPoissonConstraintMatrix(FemPoisson fp, p4est_lnodes_code_t fc, const double **C)
{
  PetscFunctionBeginUser;
  *C = NULL;
  if (!fc) PetscFunctionReturn(0);
  if (!fp->ccache[fc]) {
    PetscCall(PetscMalloc1((size_t)fp->qe.vnodes * fp->qe.vnodes, &fp->ccache[fc]));
    FemQElemConstraints(&fp->qe, fc, fp->ccache[fc]);
  }
  *C = fp->ccache[fc];
  PetscFunctionReturn(0);
}

/* BoomerAMG's classical defaults build dense coarse operators for 3D
 * stencils (Q2: 125 entries per row); HMIS coarsening with truncated
 * interpolation keeps them sparse (the Poisson solver's extended ext+i
 * with 4 weights: 4x faster here).  Only defaults: explicit -pc_hypre_*
 * options still win. */
PetscErrorCode FemHypreDefaults(const char *prefix, const char *interp, int p_max)
{
  char pmax[16];
  const char *const defaults[][2] = {{"-pc_hypre_boomeramg_coarsen_type", "HMIS"}, {"-pc_hypre_boomeramg_interp_type", interp}, {"-pc_hypre_boomeramg_P_max", pmax}};

  PetscFunctionBeginUser;
  PetscCall(PetscSNPrintf(pmax, sizeof pmax, "%d", p_max));
  for (size_t k = 0; k < sizeof(defaults) / sizeof(defaults[0]); k++) {
    PetscBool set;
    char name[256];
    PetscCall(PetscOptionsHasName(NULL, prefix, defaults[k][0], &set));
    PetscCall(PetscSNPrintf(name, sizeof(name), "-%s%s", prefix ? prefix : "", defaults[k][0] + 1));
    if (!set) PetscCall(PetscOptionsSetValue(NULL, name, defaults[k][1]));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonCreateLevel(MPI_Comm comm, const FemProblem *prob, int degree, PetscBool assembled,
                                     const signed char *tree_bc, FemPoisson *out)
{
  FemPoisson fp;

  PetscFunctionBeginUser;
  PetscCheck(degree >= 1 && degree <= FEM_MAX_DEGREE, comm, PETSC_ERR_ARG_OUTOFRANGE,
             "degree %d is not supported (use 1 or 2)", degree);
  PetscCall(PetscCalloc1(1, &fp));
  fp->comm = comm;
  fp->prob = prob;
  fp->tree_bc = tree_bc;
  fp->assembled = assembled;
  FemQElemInit(&fp->qe, degree);
  *out = fp;
  PetscFunctionReturn(0);
}

const char *const FemPoissonOperators[] = {"assembled", "matrix-free", "FemPoissonOperator", "FEM_POISSON_", NULL};
const char *const FemPoissonPCTypes[] = {"amg", "mg", "FemPoissonPCType", "FEM_POISSON_PC_", NULL};

PetscErrorCode FemPoissonCreate(MPI_Comm comm, const FemProblem *prob, int degree, const FemPoissonSolverOptions *opt,
                                const char *prefix, FemPoisson *out)
{
  const FemPoissonSolverOptions defaults = FEM_POISSON_SOLVER_DEFAULTS;
  FemPoisson fp;

  PetscFunctionBeginUser;
  PetscCall(FemPoissonCreateLevel(comm, prob, degree, PETSC_TRUE, NULL, &fp));
  PetscCall(KSPCreate(comm, &fp->ksp));
  PetscCall(KSPSetType(fp->ksp, KSPCG));
  PetscCall(KSPSetTolerances(fp->ksp, 1e-10, 1e-50, PETSC_DEFAULT, 10000));
  if (prefix) PetscCall(KSPSetOptionsPrefix(fp->ksp, prefix));
  if (!opt) opt = &defaults;
#ifdef P4_TO_P8
  {
    /* only where BoomerAMG runs: an option nothing reads is an error */
    char type[64] = "";
    PetscCall(PetscOptionsGetString(NULL, prefix, "-pc_type", type, sizeof type, NULL));
    if (opt->pc == FEM_POISSON_PC_AMG || !strcmp(type, PCHYPRE)) PetscCall(FemHypreDefaults(prefix, "ext+i", 4));
  }
#endif
  /* the KSP reads its options first with the preconditioner it will use,
   * so that -help shows that one */
  PetscCall(FemPoissonSetSolver(fp, opt));
  *out = fp;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonSetSolver(FemPoisson fp, const FemPoissonSolverOptions *opt)
{
  PC pc;

  PetscFunctionBeginUser;
  PetscCheck(opt->cheby_degree >= 1, fp->comm, PETSC_ERR_ARG_OUTOFRANGE, "the Chebyshev degree must be at least 1");
  PetscCheck(opt->smoothing_range > 1.0, fp->comm, PETSC_ERR_ARG_OUTOFRANGE, "the smoothing range must exceed 1");
  PetscCheck(opt->eig_its >= 1, fp->comm, PETSC_ERR_ARG_OUTOFRANGE, "the eigenvalue estimate needs at least 1 iteration");
  fp->opt = *opt;
  fp->assembled = opt->op == FEM_POISSON_ASSEMBLED;
  /* the -pc_ and -mg_ options of the command line still win */
  PetscCall(KSPGetPC(fp->ksp, &pc));
  PetscCall(PCSetType(pc, opt->pc == FEM_POISSON_PC_MG ? PCMG : PCHYPRE));
  PetscCall(KSPSetFromOptions(fp->ksp));
  if (!fp->assembled && opt->pc == FEM_POISSON_PC_MG) {
    /* this pair assembles no fine matrix: an algebraic multigrid given by
     * -pc_type would build one from the shell operator column by column
     * (30 s a solve at 54k DoFs) and fail a cycle later */
    PCType type;
    PetscBool amg;
    PetscCall(PCGetType(pc, &type));
    PetscCall(PetscObjectTypeCompareAny((PetscObject)pc, &amg, PCHYPRE, PCGAMG, PCML, ""));
    PetscCheck(!amg, fp->comm, PETSC_ERR_USER_INPUT,
               "option -pc_type %s: algebraic multigrid needs the assembled matrix: use -poisson_operator assembled -poisson_pc amg (the default is matrix-free + geometric multigrid)",
               type);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode teardown(FemPoisson fp)
{
  PetscFunctionBeginUser;
  /* The KSP keeps its type and options but must forget the old sizes. */
  if (fp->ksp && fp->b) PetscCall(KSPReset(fp->ksp));
  PetscCall(FemPoissonMGDestroy(&fp->mg));
  PetscCall(FemPoissonMFDestroy(&fp->mf));
  PetscCall(MatDestroy(&fp->A));
  PetscCall(VecDestroy(&fp->b));
  PetscCall(VecDestroy(&fp->u));
  PetscCall(PetscFree(fp->gidx));
  PetscCall(PetscFree2(fp->dirichlet, fp->gval));
  PetscCall(PetscFree2(fp->etree, fp->equad));
  PetscCall(PetscFree3(fp->taffine, fp->tx0, fp->tJ));
  if (fp->lnodes) p4est_lnodes_destroy(fp->lnodes);
  if (fp->ghost) p4est_ghost_destroy(fp->ghost);
  fp->lnodes = NULL;
  fp->ghost = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonSetBoundaryTypes(FemPoisson fp, const signed char *tree_bc)
{
  PetscFunctionBeginUser;
  fp->tree_bc = tree_bc;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonDestroy(FemPoisson *fpp)
{
  FemPoisson fp = *fpp;

  PetscFunctionBeginUser;
  if (!fp) PetscFunctionReturn(0);
  PetscCall(teardown(fp));
  if (fp->ksp) PetscCall(KSPDestroy(&fp->ksp));
  for (int c = 0; c < FEM_NCODES; c++) PetscCall(PetscFree(fp->ccache[c]));
  FemQElemFree(&fp->qe);
  PetscCall(PetscFree(fp));
  *fpp = NULL;
  PetscFunctionReturn(0);
}

PetscInt FemPoissonGlobalSize(FemPoisson fp) { return fp->nglobal; }
int FemPoissonVNodes(FemPoisson fp) { return fp->qe.vnodes; }
p4est_lnodes_t *FemPoissonLNodes(FemPoisson fp) { return fp->lnodes; }
Mat FemPoissonMatrix(FemPoisson fp) { return fp->A; }
Mat FemPoissonOperatorMat(FemPoisson fp) { return fp->assembled ? fp->A : FemPoissonMFMat(fp->mf); }

/* Whether face f of quadrant q in tree t lies on the domain boundary. */
static int boundary_face(const p4est_t *p4est, p4est_topidx_t t, const p4est_quadrant_t *q, int f)
{
  const p4est_connectivity_t *conn = p4est->connectivity;
  const p4est_qcoord_t h = P4EST_QUADRANT_LEN(q->level);
#ifndef P4_TO_P8
  const p4est_qcoord_t c[3] = {q->x, q->y, 0};
#else
  const p4est_qcoord_t c[3] = {q->x, q->y, q->z};
#endif
  if (conn->tree_to_tree[(size_t)t * P4EST_FACES + f] != t ||
      conn->tree_to_face[(size_t)t * P4EST_FACES + f] != f)
    return 0;
  return (f % 2) ? c[f / 2] + h == P4EST_ROOT_LEN : c[f / 2] == 0;
}

/* The map of quadrant q of tree t at reference point eta: physical point
 * and (if J is not NULL) Jacobian dx/deta.  Affine trees take the
 * precomputed tree Jacobian instead of evaluating the multilinear map. */
static void element_map(FemPoisson fp, p4est_topidx_t t, const p4est_quadrant_t *q, const double eta[3], double x[3],
                        double J[3][3])
{
  if (!fp->taffine[t]) {
    AmrGeomQuadMap(fp->p4est->connectivity, t, q, eta, x, J);
    return;
  }
  const double *tJ = fp->tJ + 9 * (size_t)t, *tx0 = fp->tx0 + 3 * (size_t)t;
  double h, xi[3];
  AmrGeomQuadBox(q, xi, &h);
  for (int k = 0; k < P4EST_DIM; k++) xi[k] += h * eta[k];
  for (int a = 0; a < 3; a++) {
    x[a] = tx0[a];
    for (int b = 0; b < P4EST_DIM; b++) x[a] += tJ[3 * a + b] * xi[b];
  }
  if (J) {
    memset(J, 0, 9 * sizeof(double));
    for (int a = 0; a < P4EST_DIM; a++)
      for (int b = 0; b < P4EST_DIM; b++) J[a][b] = tJ[3 * a + b] * h;
  }
}

/* Geometry at reference point eta of element quadrant q: physical point,
 * inverse Jacobian and |det J|. */
double FemPoissonElementGeometry(FemPoisson fp, p4est_topidx_t t, const p4est_quadrant_t *q, const double eta[3],
                               double x[3], double Ji[3][3])
{
  double J[3][3];
  element_map(fp, t, q, eta, x, J);
  return fabs(AmrGeomInvert(J, Ji));
}

/* Outward unit normal of reference face f under inverse Jacobian Ji, and
 * the surface factor |J^-T e_f| that turns |det J| dA into dS. */
static double face_normal(const double Ji[3][3], int f, double n[3])
{
  double len = 0.0;
  const double s = (f % 2) ? 1.0 : -1.0;
  for (int a = 0; a < 3; a++) {
    n[a] = a < P4EST_DIM ? s * Ji[f / 2][a] : 0.0;
    len += n[a] * n[a];
  }
  len = sqrt(len);
  for (int a = 0; a < 3; a++) n[a] /= len;
  return len;
}

/* Physical gradients of the basis: g[i*DIM+a] = sum_b dphi[i*DIM+b] Ji[b][a]. */
static void physical_gradients(int vn, const double *dphi, const double Ji[3][3], double *g)
{
  for (int i = 0; i < vn; i++)
    for (int a = 0; a < P4EST_DIM; a++) {
      double s = 0.0;
      for (int b = 0; b < P4EST_DIM; b++) s += dphi[i * P4EST_DIM + b] * Ji[b][a];
      g[i * P4EST_DIM + a] = s;
    }
}

/* Neumann data at boundary point x of tree t with outward normal n. */
static double neumann_data(FemPoisson fp, p4est_topidx_t t, const double x[3], const double n[3])
{
  double gu[3] = {0, 0, 0}, g = 0.0;
  if (fp->prob->flux) return fp->prob->flux(P4EST_DIM, x, n);
  if (fp->prob->grad) fp->prob->grad(P4EST_DIM, x, gu);
  for (int a = 0; a < P4EST_DIM; a++) g += gu[a] * n[a];
  return g * fp->prob->k(P4EST_DIM, x, (long)t);
}

/* Boundary type of face f of element (t, q): the named boundary parts of
 * the mesh first (-bc_dirichlet, -bc_neumann), else the problem's choice at
 * the face centre. */
static FemBC face_bc(FemPoisson fp, p4est_topidx_t t, const p4est_quadrant_t *q, int f)
{
  if (fp->tree_bc && fp->tree_bc[(size_t)t * P4EST_FACES + f] >= 0) return (FemBC)fp->tree_bc[(size_t)t * P4EST_FACES + f];
  double eta[3] = {0.5, 0.5, 0.5}, x[3], Ji[3][3], n[3];
  eta[f / 2] = f % 2;
  FemPoissonElementGeometry(fp, t, q, eta, x, Ji);
  face_normal(Ji, f, n);
  return fp->prob->bc(P4EST_DIM, x, n);
}

/* Whether row i of constraint matrix C (may be NULL) leaves node i free. */
void FemPoissonElementDofs(FemPoisson fp, p4est_locidx_t e, PetscInt *rows)
{
  const int vn = fp->qe.vnodes;
  const p4est_locidx_t *en = fp->lnodes->element_nodes + (size_t)e * vn;
  for (int i = 0; i < vn; i++) rows[i] = fp->dirichlet[en[i]] ? -1 : fp->gidx[en[i]];
}

int FemPoissonNodeFree(const double *C, int n, int i)
{
  if (!C) return 1;
  for (int j = 0; j < n; j++)
    if (C[(size_t)i * n + j] != (i == j ? 1.0 : 0.0)) return 0;
  return 1;
}

/* Sorts a[0..n) and drops repeats; returns the new length. */
static PetscInt sort_unique(PetscInt *a, PetscInt n)
{
  PetscInt m = 0;
  PetscSortInt(n, a);
  for (PetscInt k = 0; k < n; k++)
    if (!m || a[k] != a[m - 1]) a[m++] = a[k];
  return m;
}

/* The columns of the row of local node i: all free nodes of the elements
 * around it (a Dirichlet row keeps only its diagonal).  Appends to
 * cols[*len..], growing it. */
static PetscErrorCode node_columns(FemPoisson fp, p4est_locidx_t i, const PetscInt *ioff, const p4est_locidx_t *inc,
                                   PetscInt **cols, size_t *len, size_t *cap)
{
  const int vn = fp->qe.vnodes;
  const size_t need = *len + (size_t)(ioff[i + 1] - ioff[i]) * vn + 1;
  PetscInt n = 0, *c;

  PetscFunctionBeginUser;
  if (need > *cap) {
    *cap = 2 * need;
    PetscCall(PetscRealloc(sizeof(PetscInt) * *cap, cols));
  }
  c = *cols + *len;
  if (fp->dirichlet[i]) c[n++] = fp->gidx[i];
  else
    for (PetscInt k = ioff[i]; k < ioff[i + 1]; k++)
      for (int j = 0; j < vn; j++) {
        const p4est_locidx_t node = fp->lnodes->element_nodes[(size_t)inc[k] * vn + j];
        if (!fp->dirichlet[node]) c[n++] = fp->gidx[node];
      }
  *len += sort_unique(c, n);
  PetscFunctionReturn(0);
}

/* Exact preallocation from the element-node connectivity: every rank
 * derives the rows of its local nodes from its elements, sends the rows of
 * nodes owned elsewhere to their owners (the lnodes sharers), and each
 * owner merges them into the CSR structure of its rows. */
static PetscErrorCode preallocate(FemPoisson fp)
{
  const p4est_lnodes_t *ln = fp->lnodes;
  const int vn = fp->qe.vnodes;
  const p4est_locidx_t nel = ln->num_local_elements, nloc = ln->num_local_nodes, owned = ln->owned_count;
  const int nsh = (int)ln->sharers->elem_count;
  PetscInt *ioff, *roff, *cols = NULL, **sbuf, **rbuf, *scount, *rcount, *ia, *ja;
  p4est_locidx_t *inc, *fill;
  size_t len = 0, cap = 0;
  MPI_Request *req;
  int rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(fp->comm, &rank));
  PetscCall(PetscCalloc1(nloc + 1, &ioff));
  for (size_t k = 0; k < (size_t)nel * vn; k++) ioff[ln->element_nodes[k] + 1]++;
  for (p4est_locidx_t i = 0; i < nloc; i++) ioff[i + 1] += ioff[i];
  PetscCall(PetscMalloc1((size_t)nel * vn + 1, &inc));
  PetscCall(PetscMalloc1(nloc + 1, &fill));
  for (p4est_locidx_t i = 0; i < nloc; i++) fill[i] = (p4est_locidx_t)ioff[i];
  for (p4est_locidx_t e = 0; e < nel; e++)
    for (int j = 0; j < vn; j++) inc[fill[ln->element_nodes[(size_t)e * vn + j]]++] = e;
  PetscCall(PetscMalloc1(nloc + 1, &roff));
  roff[0] = 0;
  for (p4est_locidx_t i = 0; i < nloc; i++) {
    PetscCall(node_columns(fp, i, ioff, inc, &cols, &len, &cap));
    roff[i + 1] = (PetscInt)len;
  }
  PetscCall(PetscFree(inc));
  PetscCall(PetscFree(fill));

  /* Rows of nodes owned by sharer s: [row, ncols, cols...] per node. */
  PetscCall(PetscCalloc4(nsh, &sbuf, nsh, &rbuf, nsh, &scount, nsh, &rcount));
  PetscCall(PetscMalloc1(4 * (size_t)nsh + 1, &req));
  for (int s = 0; s < nsh; s++) {
    const p4est_lnodes_rank_t *sh = sc_array_index(ln->sharers, (size_t)s);
    if (sh->rank == rank) continue;
    for (p4est_locidx_t i = sh->owned_offset; i < sh->owned_offset + sh->owned_count; i++)
      scount[s] += 2 + roff[i + 1] - roff[i];
    PetscCall(PetscMalloc1(scount[s] + 1, &sbuf[s]));
    PetscInt *b = sbuf[s];
    for (p4est_locidx_t i = sh->owned_offset; i < sh->owned_offset + sh->owned_count; i++) {
      *b++ = fp->gidx[i];
      *b++ = roff[i + 1] - roff[i];
      for (PetscInt k = roff[i]; k < roff[i + 1]; k++) *b++ = cols[k];
    }
  }
  int nreq = 0;
  for (int s = 0; s < nsh; s++) {
    const p4est_lnodes_rank_t *sh = sc_array_index(ln->sharers, (size_t)s);
    if (sh->rank == rank) continue;
    PetscCallMPI(MPI_Irecv(&rcount[s], 1, MPIU_INT, sh->rank, 4101, fp->comm, &req[nreq++]));
    PetscCallMPI(MPI_Isend(&scount[s], 1, MPIU_INT, sh->rank, 4101, fp->comm, &req[nreq++]));
  }
  PetscCallMPI(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));
  nreq = 0;
  for (int s = 0; s < nsh; s++) {
    const p4est_lnodes_rank_t *sh = sc_array_index(ln->sharers, (size_t)s);
    if (sh->rank == rank) continue;
    PetscCall(PetscMalloc1(rcount[s] + 1, &rbuf[s]));
    PetscCallMPI(MPI_Irecv(rbuf[s], (int)rcount[s], MPIU_INT, sh->rank, 4102, fp->comm, &req[nreq++]));
    PetscCallMPI(MPI_Isend(sbuf[s], (int)scount[s], MPIU_INT, sh->rank, 4102, fp->comm, &req[nreq++]));
  }
  PetscCallMPI(MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE));

  /* Merge: owned row i gets its own columns plus every received row i. */
  PetscInt *extra, *eoff, total = 0;
  PetscCall(PetscCalloc1(owned + 1, &eoff));
  for (int s = 0; s < nsh; s++)
    for (PetscInt k = 0; k < rcount[s]; k += 2 + rbuf[s][k + 1]) eoff[rbuf[s][k] - ln->global_offset + 1] += rbuf[s][k + 1];
  for (p4est_locidx_t i = 0; i < owned; i++) {
    eoff[i + 1] += eoff[i] + roff[i + 1] - roff[i];
  }
  total = eoff[owned];
  PetscCall(PetscMalloc1(total + 1, &extra));
  PetscCall(PetscMalloc1(owned + 1, &ia));
  for (p4est_locidx_t i = 0; i < owned; i++) {
    ia[i] = eoff[i];
    for (PetscInt k = roff[i]; k < roff[i + 1]; k++) extra[ia[i]++] = cols[k];
  }
  for (int s = 0; s < nsh; s++)
    for (PetscInt k = 0; k < rcount[s]; k += 2 + rbuf[s][k + 1]) {
      const PetscInt i = rbuf[s][k] - ln->global_offset;
      for (PetscInt m = 0; m < rbuf[s][k + 1]; m++) extra[ia[i]++] = rbuf[s][k + 2 + m];
    }
  PetscCall(PetscMalloc1(total + 1, &ja));
  ia[0] = 0;
  for (p4est_locidx_t i = 0; i < owned; i++) {
    const PetscInt n = sort_unique(extra + eoff[i], eoff[i + 1] - eoff[i]);
    PetscCall(PetscArraycpy(ja + ia[i], extra + eoff[i], n));
    ia[i + 1] = ia[i] + n;
  }
  PetscCall(MatSeqAIJSetPreallocationCSR(fp->A, ia, ja, NULL));
  PetscCall(MatMPIAIJSetPreallocationCSR(fp->A, ia, ja, NULL));

  for (int s = 0; s < nsh; s++) {
    PetscCall(PetscFree(sbuf[s]));
    PetscCall(PetscFree(rbuf[s]));
  }
  PetscCall(PetscFree4(sbuf, rbuf, scount, rcount));
  PetscCall(PetscFree(req));
  PetscCall(PetscFree(eoff));
  PetscCall(PetscFree(extra));
  PetscCall(PetscFree(ia));
  PetscCall(PetscFree(ja));
  PetscCall(PetscFree(ioff));
  PetscCall(PetscFree(roff));
  PetscCall(PetscFree(cols));
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonSetup(FemPoisson fp, p4est_t *p4est)
{
  const int vn = fp->qe.vnodes;
  p4est_lnodes_t *ln;
  PetscInt *ghosts;
  Vec flag, lflag;
  PetscScalar *fa;
  int size;

  PetscFunctionBeginUser;
  PetscCall(teardown(fp));
  fp->p4est = p4est;
  fp->ghost = p4est_ghost_new(p4est, P4EST_CONNECT_FULL);
  fp->lnodes = ln = p4est_lnodes_new(p4est, fp->ghost, fp->qe.degree);
  const p4est_locidx_t nel = ln->num_local_elements, nloc = ln->num_local_nodes, owned = ln->owned_count;
  PetscCallMPI(MPI_Comm_size(fp->comm, &size));
  fp->nglobal = 0;
  for (int r = 0; r < size; r++) fp->nglobal += ln->global_owned_count[r];

  PetscCall(PetscMalloc2(nel, &fp->etree, nel, &fp->equad));
  {
    const p4est_topidx_t nt = p4est->connectivity->num_trees;
    PetscCall(PetscMalloc3(nt, &fp->taffine, 3 * (size_t)nt, &fp->tx0, 9 * (size_t)nt, &fp->tJ));
    for (p4est_topidx_t t = 0; t < nt; t++)
      fp->taffine[t] = (char)AmrGeomTreeAffine(p4est->connectivity, t, fp->tx0 + 3 * (size_t)t,
                                                  (double(*)[3])(fp->tJ + 9 * (size_t)t));
  }
  for (p4est_topidx_t t = p4est->first_local_tree, e = 0; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++, e++) {
      fp->etree[e] = t;
      fp->equad[e] = p4est_quadrant_array_index(&tree->quadrants, k);
    }
  }
  PetscCall(PetscMalloc1(nloc, &fp->gidx));
  PetscCall(PetscMalloc1(nloc - owned, &ghosts));
  for (p4est_locidx_t i = 0; i < nloc; i++)
    fp->gidx[i] = (PetscInt)(i < owned ? ln->global_offset + i : ln->nonlocal_nodes[i - owned]);
  for (p4est_locidx_t i = owned; i < nloc; i++) ghosts[i - owned] = fp->gidx[i];
  PetscCall(VecCreateGhost(fp->comm, owned, fp->nglobal, nloc - owned, ghosts, &fp->u));
  PetscCall(PetscFree(ghosts));
  PetscCall(VecCreateMPI(fp->comm, owned, fp->nglobal, &fp->b));
  PetscCall(VecSetOption(fp->b, VEC_IGNORE_NEGATIVE_INDICES, PETSC_TRUE));

  /* Dirichlet nodes: those on a Dirichlet face of some cell. */
  PetscCall(VecDuplicate(fp->u, &flag));
  PetscCall(VecGhostGetLocalForm(flag, &lflag));
  PetscCall(VecGetArray(lflag, &fa));
  for (p4est_locidx_t e = 0; e < nel; e++)
    for (int f = 0; f < P4EST_FACES; f++)
      if (boundary_face(p4est, fp->etree[e], fp->equad[e], f) && face_bc(fp, fp->etree[e], fp->equad[e], f) == FEM_BC_DIRICHLET)
        for (int i = 0; i < vn; i++)
          if (FemQElemNodeOnFace(&fp->qe, i, f)) fa[ln->element_nodes[(size_t)e * vn + i]] = 1.0;
  PetscCall(VecRestoreArray(lflag, &fa));
  PetscCall(VecGhostRestoreLocalForm(flag, &lflag));
  /* A rank may hold a boundary node only through a corner of one of its
   * cells; the owner hears of every boundary face and tells all sharers. */
  PetscCall(VecGhostUpdateBegin(flag, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateEnd(flag, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateBegin(flag, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(flag, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(PetscMalloc2(nloc, &fp->dirichlet, nloc, &fp->gval));
  PetscCall(VecGhostGetLocalForm(flag, &lflag));
  PetscCall(VecGetArray(lflag, &fa));
  for (p4est_locidx_t i = 0; i < nloc; i++) {
    fp->dirichlet[i] = fa[i] > 0.5;
    /* NAN: a Dirichlet value still to evaluate */
    fp->gval[i] = fp->dirichlet[i] && fp->prob->u ? NAN : 0.0;
  }
  PetscCall(VecRestoreArray(lflag, &fa));
  PetscCall(VecGhostRestoreLocalForm(flag, &lflag));
  PetscCall(VecDestroy(&flag));
  /* The Dirichlet data at the Dirichlet nodes only, each by the first cell
   * that holds it; a constrained position holds a node of the parent's
   * face, so its coordinates come from the parent. */
  for (p4est_locidx_t e = 0; e < nel; e++) {
    const p4est_locidx_t *en = ln->element_nodes + (size_t)e * vn;
    for (int i = 0; i < vn; i++) {
      const p4est_quadrant_t *q = fp->equad[e];
      p4est_quadrant_t parent;
      const double *C;
      double eta[3], x[3];
      if (!isnan(fp->gval[en[i]])) continue;
      PetscCall(FemPoissonConstraintMatrix(fp, ln->face_code[e], &C));
      if (!FemPoissonNodeFree(C, vn, i)) {
        p4est_quadrant_parent(q, &parent);
        q = &parent;
      }
      FemQElemNode(&fp->qe, i, eta);
      element_map(fp, fp->etree[e], q, eta, x, NULL);
      fp->gval[en[i]] = fp->prob->u(P4EST_DIM, x);
    }
  }

  /* BoomerAMG needs the matrix, even under a matrix-free operator */
  if (fp->assembled || (fp->ksp && fp->opt.pc == FEM_POISSON_PC_AMG)) {
    PetscCall(MatCreate(fp->comm, &fp->A));
    PetscCall(MatSetSizes(fp->A, owned, owned, fp->nglobal, fp->nglobal));
    PetscCall(MatSetType(fp->A, MATAIJ));
    PetscCall(preallocate(fp));
    PetscCall(MatSetOption(fp->A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    PetscCall(MatSetOption(fp->A, MAT_SYMMETRIC, PETSC_TRUE));
  }
  if (!fp->assembled) PetscCall(FemPoissonMFCreate(fp, &fp->mf));
  if (fp->ksp && fp->opt.pc == FEM_POISSON_PC_MG) PetscCall(FemPoissonMGCreate(fp, &fp->mg));
  fp->guess = PETSC_FALSE;
  PetscFunctionReturn(0);
}

/* Stiffness and load of an affine cell with constant k: K is k |det J|
 * times the reference moments weighted by M = J^-1 J^-T, the load needs
 * only f at the mapped quadrature points. */
static void element_system_affine(FemPoisson fp, p4est_locidx_t e, double *K, double *F)
{
  const FemQElem *qe = &fp->qe;
  const FemRule *r = &qe->cell;
  const int vn = qe->vnodes;
  const size_t n2 = (size_t)vn * vn;
  const p4est_topidx_t t = fp->etree[e];
  const p4est_quadrant_t *q = fp->equad[e];
  const double origin[3] = {0, 0, 0};
  double J[3][3], Ji[3][3], x0[3], M[P4EST_DIM][P4EST_DIM];

  element_map(fp, t, q, origin, x0, J);
  const double adet = fabs(AmrGeomInvert(J, Ji)), kd = adet * fp->prob->k(P4EST_DIM, x0, (long)t);
  for (int a = 0; a < P4EST_DIM; a++)
    for (int b = 0; b < P4EST_DIM; b++) {
      M[a][b] = 0.0;
      for (int c = 0; c < P4EST_DIM; c++) M[a][b] += Ji[a][c] * Ji[b][c];
    }
  for (size_t k = 0; K && k < n2; k++) {
    double s = 0.0;
    for (int a = 0; a < P4EST_DIM; a++)
      for (int b = 0; b < P4EST_DIM; b++) s += M[a][b] * qe->stiff[(a * P4EST_DIM + b) * n2 + k];
    K[k] = kd * s;
  }
  memset(F, 0, sizeof(double) * vn);
  for (int k = 0; k < r->npts; k++) {
    double x[3];
    for (int a = 0; a < 3; a++) {
      x[a] = x0[a];
      for (int b = 0; b < P4EST_DIM; b++) x[a] += J[a][b] * r->eta[3 * k + b];
    }
    const double fw = r->w[k] * adet * fp->prob->f(P4EST_DIM, x);
    const double *phi = r->phi + (size_t)k * vn;
    for (int i = 0; i < vn; i++) F[i] += fw * phi[i];
  }
}

/* Stiffness and load by quadrature: any cell, any k(x). */
static void element_system_quadrature(FemPoisson fp, p4est_locidx_t e, double *K, double *F)
{
  const FemQElem *qe = &fp->qe;
  const FemRule *r = &qe->cell;
  const int vn = qe->vnodes;
  const p4est_topidx_t t = fp->etree[e];
  double g[FEM_MAX_VNODES * P4EST_DIM];

  if (K) memset(K, 0, sizeof(double) * vn * vn);
  memset(F, 0, sizeof(double) * vn);
  for (int k = 0; k < r->npts; k++) {
    double x[3], Ji[3][3];
    const double wq = r->w[k] * FemPoissonElementGeometry(fp, t, fp->equad[e], r->eta + 3 * k, x, Ji);
    const double kw = wq * fp->prob->k(P4EST_DIM, x, (long)t), fw = wq * fp->prob->f(P4EST_DIM, x);
    const double *phi = r->phi + (size_t)k * vn;
    for (int i = 0; i < vn; i++) F[i] += fw * phi[i];
    if (!K) continue;
    physical_gradients(vn, r->dphi + (size_t)k * vn * P4EST_DIM, Ji, g);
    for (int i = 0; i < vn; i++) {
      for (int j = i; j < vn; j++) {
        double s = 0.0;
        for (int a = 0; a < P4EST_DIM; a++) s += g[i * P4EST_DIM + a] * g[j * P4EST_DIM + a];
        K[i * vn + j] += kw * s;
      }
    }
  }
  for (int i = 0; K && i < vn; i++)
    for (int j = 0; j < i; j++) K[i * vn + j] = K[j * vn + i];
}

/* Adds the Neumann data k du/dn of the element's Neumann faces to F. */
static void element_neumann(FemPoisson fp, p4est_locidx_t e, double *F)
{
  const FemQElem *qe = &fp->qe;
  const FemRule *r = &qe->cell;
  const p4est_topidx_t t = fp->etree[e];
  const p4est_quadrant_t *q = fp->equad[e];
  int nf = 1;

  for (int d = 1; d < P4EST_DIM; d++) nf *= r->n1;
  for (int f = 0; f < P4EST_FACES; f++) {
    if (!boundary_face(fp->p4est, t, q, f) || face_bc(fp, t, q, f) != FEM_BC_NEUMANN) continue;
    for (int k = 0; k < nf; k++) {
      double eta[3], w, x[3], Ji[3][3], n[3], phi[FEM_MAX_VNODES];
      FemRuleFacePoint(r, f, k, eta, &w);
      const double adet = FemPoissonElementGeometry(fp, t, q, eta, x, Ji);
      const double ds = w * adet * face_normal(Ji, f, n), gn = neumann_data(fp, t, x, n);
      FemQElemEval(qe, eta, phi, NULL);
      for (int i = 0; i < qe->vnodes; i++) F[i] += ds * gn * phi[i];
    }
  }
}

/* Element stiffness K (vn x vn; NULL: the load only) and load F, before
 * constraints. */
void FemPoissonElementSystem(FemPoisson fp, p4est_locidx_t e, double *K, double *F)
{
  if (fp->prob->k_per_tree && fp->taffine[fp->etree[e]]) element_system_affine(fp, e, K, F);
  else element_system_quadrature(fp, e, K, F);
  element_neumann(fp, e, F);
}

/* K <- C^T K C (unless K is NULL) and F <- C^T F for an element with
 * hanging nodes. */
void FemPoissonApplyConstraints(int n, const double *C, double *K, double *F)
{
  double T[FEM_MAX_VNODES * FEM_MAX_VNODES], G[FEM_MAX_VNODES];
  for (int i = 0; K && i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++) s += K[i * n + k] * C[k * n + j];
      T[i * n + j] = s;
    }
  for (int i = 0; i < n; i++) {
    double s = 0.0;
    for (int k = 0; k < n; k++) s += C[k * n + i] * F[k];
    G[i] = s;
    for (int j = 0; K && j < n; j++) {
      double u = 0.0;
      for (int k = 0; k < n; k++) u += C[k * n + i] * T[k * n + j];
      K[i * n + j] = u;
    }
  }
  memcpy(F, G, sizeof(double) * n);
}

PetscErrorCode FemPoissonAssemble(FemPoisson fp)
{
  const int vn = fp->qe.vnodes;
  const p4est_lnodes_t *ln = fp->lnodes;
  double K[FEM_MAX_VNODES * FEM_MAX_VNODES], F[FEM_MAX_VNODES], cpu0, wall0;

  PetscFunctionBeginUser;
  if (!fp->A) {
    PetscCall(FemPoissonMFRHS(fp->mf, fp->b));
    PetscFunctionReturn(0);
  }
  PetscCall(MatZeroEntries(fp->A));
  PetscCall(VecZeroEntries(fp->b));
  FemClocks(&cpu0, &wall0);
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    const p4est_locidx_t *en = ln->element_nodes + (size_t)e * vn;
    PetscInt rows[FEM_MAX_VNODES];
    const double *C;
    FemPoissonElementDofs(fp, e, rows);
    FemPoissonElementSystem(fp, e, K, F);
    PetscCall(FemPoissonConstraintMatrix(fp, ln->face_code[e], &C));
    if (C) FemPoissonApplyConstraints(vn, C, K, F);
    /* Symmetric elimination of Dirichlet nodes: their columns move to the
     * right-hand side, their rows keep the diagonal with rhs diag * g. */
    for (int i = 0; i < vn; i++) {
      if (fp->dirichlet[en[i]]) {
        const PetscScalar kii = K[i * vn + i], bi = kii * fp->gval[en[i]];
        PetscCall(MatSetValue(fp->A, fp->gidx[en[i]], fp->gidx[en[i]], kii, ADD_VALUES));
        PetscCall(VecSetValue(fp->b, fp->gidx[en[i]], bi, ADD_VALUES));
        continue;
      }
      for (int j = 0; j < vn; j++)
        if (fp->dirichlet[en[j]]) F[i] -= K[i * vn + j] * fp->gval[en[j]];
    }
    PetscCall(MatSetValues(fp->A, vn, rows, vn, rows, K, ADD_VALUES));
    PetscCall(VecSetValues(fp->b, vn, rows, F, ADD_VALUES));
  }
  /* the exchange of off-rank entries waits on other ranks: not local work */
  FemPoissonAddWork(fp, cpu0, wall0);
  PetscCall(MatAssemblyBegin(fp->A, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyBegin(fp->b));
  PetscCall(MatAssemblyEnd(fp->A, MAT_FINAL_ASSEMBLY));
  PetscCall(VecAssemblyEnd(fp->b));
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonSetInitialGuess(FemPoisson fp, const double *coef)
{
  const int vn = fp->qe.vnodes;
  const p4est_lnodes_t *ln = fp->lnodes;

  PetscFunctionBeginUser;
  PetscCall(VecZeroEntries(fp->u));
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    const double *C;
    PetscCall(FemPoissonConstraintMatrix(fp, ln->face_code[e], &C));
    for (int i = 0; i < vn; i++) {
      const p4est_locidx_t node = ln->element_nodes[(size_t)e * vn + i];
      if (FemPoissonNodeFree(C, vn, i))
        PetscCall(VecSetValue(fp->u, fp->gidx[node], fp->dirichlet[node] ? fp->gval[node] : coef[(size_t)e * vn + i],
                              INSERT_VALUES));
    }
  }
  PetscCall(VecAssemblyBegin(fp->u));
  PetscCall(VecAssemblyEnd(fp->u));
  PetscCall(VecGhostUpdateBegin(fp->u, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(fp->u, INSERT_VALUES, SCATTER_FORWARD));
  fp->guess = PETSC_TRUE;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonSolve(FemPoisson fp, PetscInt *its, PetscReal *rnorm)
{
  KSPConvergedReason reason;
  Mat op = FemPoissonOperatorMat(fp);
  PC pc;
  PetscBool mg;
  double cpu0, wall0, cpu1, wall1;

  PetscFunctionBeginUser;
  PetscCall(KSPSetOperators(fp->ksp, op, fp->A ? fp->A : op));
  PetscCall(KSPGetPC(fp->ksp, &pc));
  PetscCall(PetscObjectTypeCompare((PetscObject)pc, PCMG, &mg));
  if (mg) {
    PetscCheck(fp->mg, fp->comm, PETSC_ERR_USER_INPUT, "option -pc_type mg: use -poisson_pc mg for the geometric multigrid");
    PetscCall(FemPoissonMGSetUpPC(fp->mg, pc));
  }
  PetscCall(KSPSetInitialGuessNonzero(fp->ksp, fp->guess));
  FemClocks(&cpu0, &wall0);
  PetscCall(KSPSolve(fp->ksp, fp->b, fp->u));
  FemClocks(&cpu1, &wall1);
  fp->ksp_cpu += cpu1 - cpu0;
  fp->ksp_wall += wall1 - wall0;
  PetscCall(KSPGetConvergedReason(fp->ksp, &reason));
  PetscCall(KSPGetIterationNumber(fp->ksp, its));
  PetscCall(KSPGetResidualNorm(fp->ksp, rnorm));
  /* The reason is the same on every rank, so this is a collective error;
   * it comes from the solver options the user chose, hence USER_INPUT. */
  PetscCheck(reason > 0, fp->comm, PETSC_ERR_USER_INPUT,
             "the linear solver did not converge (%s after %" PetscInt_FMT " iterations): check the -ksp_ and -pc_ options",
             KSPConvergedReasons[reason], *its);
  PetscCall(VecGhostUpdateBegin(fp->u, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(fp->u, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonElementCoefficients(FemPoisson fp, double *coef)
{
  const int vn = fp->qe.vnodes;
  const p4est_lnodes_t *ln = fp->lnodes;
  Vec lu;
  const PetscScalar *ua;

  PetscFunctionBeginUser;
  PetscCall(VecGhostGetLocalForm(fp->u, &lu));
  PetscCall(VecGetArrayRead(lu, &ua));
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    double ul[FEM_MAX_VNODES], *ce = coef + (size_t)e * vn;
    const double *C;
    for (int i = 0; i < vn; i++) ul[i] = ua[ln->element_nodes[(size_t)e * vn + i]];
    PetscCall(FemPoissonConstraintMatrix(fp, ln->face_code[e], &C));
    for (int i = 0; i < vn; i++) {
      if (!C) {
        ce[i] = ul[i];
        continue;
      }
      ce[i] = 0.0;
      for (int j = 0; j < vn; j++) ce[i] += C[i * vn + j] * ul[j];
    }
  }
  PetscCall(VecRestoreArrayRead(lu, &ua));
  PetscCall(VecGhostRestoreLocalForm(fp->u, &lu));
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonPointValues(FemPoisson fp, double **values)
{
  PetscFunctionBeginUser;
  /* Lagrange coefficients are the values at the nodes */
  PetscCall(PetscMalloc1((size_t)fp->lnodes->num_local_elements * fp->qe.vnodes + 1, values));
  PetscCall(FemPoissonElementCoefficients(fp, *values));
  PetscFunctionReturn(0);
}

double FemPoissonEvalRef(FemPoisson fp, const double *coef, const double eta[3])
{
  double phi[FEM_MAX_VNODES], v = 0.0;
  FemQElemEval(&fp->qe, eta, phi, NULL);
  for (int i = 0; i < fp->qe.vnodes; i++) v += coef[i] * phi[i];
  return v;
}

PetscErrorCode FemPoissonExactError(FemPoisson fp, double *cell_l2sq, double *cell_h1sq, double *l2, double *h1)
{
  const int vn = fp->qe.vnodes;
  const FemRule *r = &fp->qe.accurate;
  const p4est_locidx_t nel = fp->lnodes->num_local_elements;
  double *coef, sum[2] = {0, 0};

  PetscFunctionBeginUser;
  PetscCheck(fp->prob->u && fp->prob->grad, fp->comm, PETSC_ERR_SUP, "problem %s has no exact solution",
             fp->prob->name);
  PetscCall(PetscMalloc1((size_t)nel * vn, &coef));
  PetscCall(FemPoissonElementCoefficients(fp, coef));
  for (p4est_locidx_t e = 0; e < nel; e++) {
    const double *c = coef + (size_t)e * vn;
    double el2 = 0.0, eh1 = 0.0;
    for (int k = 0; k < r->npts; k++) {
      double x[3], Ji[3][3], uh = 0.0, gr[3] = {0, 0, 0}, ge[3];
      const double wq = r->w[k] * FemPoissonElementGeometry(fp, fp->etree[e], fp->equad[e], r->eta + 3 * k, x, Ji);
      const double *phi = r->phi + (size_t)k * vn, *dphi = r->dphi + (size_t)k * vn * P4EST_DIM;
      /* the reference gradient first: one transform per point, not per node */
      for (int i = 0; i < vn; i++) {
        uh += c[i] * phi[i];
        for (int b = 0; b < P4EST_DIM; b++) gr[b] += c[i] * dphi[i * P4EST_DIM + b];
      }
      fp->prob->grad(P4EST_DIM, x, ge);
      const double du = fp->prob->u(P4EST_DIM, x) - uh;
      el2 += wq * du * du;
      for (int a = 0; a < P4EST_DIM; a++) {
        double gh = 0.0;
        for (int b = 0; b < P4EST_DIM; b++) gh += gr[b] * Ji[b][a];
        eh1 += wq * (ge[a] - gh) * (ge[a] - gh);
      }
    }
    if (cell_l2sq) cell_l2sq[e] = el2;
    if (cell_h1sq) cell_h1sq[e] = eh1;
    sum[0] += el2;
    sum[1] += eh1;
  }
  PetscCall(PetscFree(coef));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, sum, 2, MPI_DOUBLE, MPI_SUM, fp->comm));
  *l2 = sqrt(sum[0]);
  *h1 = sqrt(sum[1]);
  PetscFunctionReturn(0);
}

/* ---- Kelly indicator ---------------------------------------------------- */

typedef struct {
  FemPoisson fp;
  const double *coef;   /* local elements */
  const double *gcoef;  /* ghost elements */
  double *eta2;
  int failed;           /* a tree map could not be inverted */
} KellyCtx;

/* One quadrant adjacent to a face, local or ghost. */
typedef struct {
  p4est_topidx_t t;
  const p4est_quadrant_t *q;
  const double *coef;
  p4est_locidx_t local; /* local element index, -1 for a ghost */
  int face;
  double k;             /* k in the cell when constant per tree, else NAN */
} KellySide;

static KellySide kelly_side(KellyCtx *kc, const p4est_iter_face_side_t *s, int h)
{
  KellySide ks;
  const int vn = kc->fp->qe.vnodes;
  const int ghost = s->is_hanging ? s->is.hanging.is_ghost[h] : s->is.full.is_ghost;
  const p4est_locidx_t id = s->is_hanging ? s->is.hanging.quadid[h] : s->is.full.quadid;
  ks.t = s->treeid;
  ks.q = s->is_hanging ? s->is.hanging.quad[h] : s->is.full.quad;
  ks.face = s->face;
  if (ghost) {
    ks.local = -1;
    ks.coef = kc->gcoef + (size_t)id * vn;
  } else {
    ks.local = p4est_tree_array_index(kc->fp->p4est->trees, s->treeid)->quadrants_offset + id;
    ks.coef = kc->coef + (size_t)ks.local * vn;
  }
  ks.k = NAN;
  if (kc->fp->prob->k_per_tree) {
    const double centre[3] = {0.5, 0.5, 0.5};
    double x[3];
    element_map(kc->fp, ks.t, ks.q, centre, x, NULL);
    ks.k = kc->fp->prob->k(P4EST_DIM, x, (long)ks.t);
  }
  return ks;
}

static double diameter(FemPoisson fp, const KellySide *s)
{
  const double e0[3] = {0, 0, 0}, e1[3] = {1, 1, 1};
  double a[3], b[3], d = 0.0;
  element_map(fp, s->t, s->q, e0, a, NULL);
  element_map(fp, s->t, s->q, e1, b, NULL);
  for (int k = 0; k < 3; k++) d += (a[k] - b[k]) * (a[k] - b[k]);
  return sqrt(d);
}

/* k grad(u_h) . n of side s at its reference point eta, where its inverse
 * Jacobian is Ji.  k is this side's: where it is not constant per tree,
 * taken a little inside the cell, since it may jump across the face
 * (problem jump) and on the face it is either side's. */
static double side_flux(FemPoisson fp, const KellySide *s, const double eta[3], const double Ji[3][3], const double n[3])
{
  double gr[3], gn = 0.0, k = s->k;
  FemQElemGradient(&fp->qe, eta, s->coef, gr);
  for (int a = 0; a < P4EST_DIM; a++)
    for (int b = 0; b < P4EST_DIM; b++) gn += gr[b] * Ji[b][a] * n[a];
  if (isnan(k)) {
    double inside[3], xi[3];
    for (int d = 0; d < 3; d++) inside[d] = eta[d] + 1e-6 * (0.5 - eta[d]);
    element_map(fp, s->t, s->q, inside, xi, NULL);
    k = fp->prob->k(P4EST_DIM, xi, (long)s->t);
  }
  return gn * k;
}

/* Reference coordinates in quadrant b of the point at reference eta of
 * quadrant a (physical point x): direct in one tree, Newton across trees. */
static int locate(const p4est_t *p4est, const KellySide *a, const double eta[3], const double x[3],
                  const KellySide *b, double etab[3])
{
#ifndef P4_TO_P8
  const double qa[3] = {a->q->x, a->q->y, 0}, qb[3] = {b->q->x, b->q->y, 0};
#else
  const double qa[3] = {a->q->x, a->q->y, a->q->z}, qb[3] = {b->q->x, b->q->y, b->q->z};
#endif
  const double ha = P4EST_QUADRANT_LEN(a->q->level), hb = P4EST_QUADRANT_LEN(b->q->level);
  double xi[3] = {0, 0, 0};
  if (a->t == b->t) {
    for (int d = 0; d < P4EST_DIM; d++) xi[d] = qa[d] + eta[d] * ha;
  } else {
    for (int d = 0; d < P4EST_DIM; d++) xi[d] = (qb[d] + 0.5 * hb) / P4EST_ROOT_LEN;
    if (AmrGeomTreeInverse(p4est->connectivity, b->t, x, xi)) return -1;
    for (int d = 0; d < P4EST_DIM; d++) xi[d] *= P4EST_ROOT_LEN;
  }
  etab[0] = etab[1] = etab[2] = 0.0;
  for (int d = 0; d < P4EST_DIM; d++) etab[d] = (xi[d] - qb[d]) / hb;
  return 0;
}

/* Integrate the squared flux jump over the face of small side a (the
 * whole face when conforming) against side b; add to local cells. */
static void kelly_pair(KellyCtx *kc, const KellySide *a, const KellySide *b)
{
  FemPoisson fp = kc->fp;
  const FemRule *r = &fp->qe.cell;
  double integral = 0.0;
  int nf = 1;
  for (int d = 1; d < P4EST_DIM; d++) nf *= r->n1;
  for (int k = 0; k < nf; k++) {
    double eta[3], etab[3], w, x[3], Ji[3][3], Jib[3][3], xb[3], n[3];
    FemRuleFacePoint(r, a->face, k, eta, &w);
    const double ds = w * FemPoissonElementGeometry(fp, a->t, a->q, eta, x, Ji) * face_normal(Ji, a->face, n);
    if (locate(fp->p4est, a, eta, x, b, etab)) {
      kc->failed = 1;
      return;
    }
    if (a->t == b->t) {
      /* one tree's map, scaled by each quadrant's size */
      const double ratio = (double)P4EST_QUADRANT_LEN(a->q->level) / P4EST_QUADRANT_LEN(b->q->level);
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) Jib[i][j] = Ji[i][j] * ratio;
    } else {
      FemPoissonElementGeometry(fp, b->t, b->q, etab, xb, Jib);
    }
    const double jump = side_flux(fp, a, eta, Ji, n) - side_flux(fp, b, etab, Jib, n);
    integral += ds * jump * jump;
  }
  if (a->local >= 0) kc->eta2[a->local] += diameter(fp, a) / 24.0 * integral;
  if (b->local >= 0) kc->eta2[b->local] += diameter(fp, b) / 24.0 * integral;
}

/* A Neumann face carries the residual g - k du_h/dn, counted twice since
 * no neighbour shares it. */
static void kelly_boundary(KellyCtx *kc, const KellySide *a)
{
  FemPoisson fp = kc->fp;
  const FemRule *r = &fp->qe.cell;
  double integral = 0.0;
  int nf = 1;
  if (a->local < 0 || face_bc(fp, a->t, a->q, a->face) != FEM_BC_NEUMANN) return;
  for (int d = 1; d < P4EST_DIM; d++) nf *= r->n1;
  for (int k = 0; k < nf; k++) {
    double eta[3], w, x[3], Ji[3][3], n[3];
    FemRuleFacePoint(r, a->face, k, eta, &w);
    const double ds = w * FemPoissonElementGeometry(fp, a->t, a->q, eta, x, Ji) * face_normal(Ji, a->face, n);
    const double res = neumann_data(fp, a->t, x, n) - side_flux(fp, a, eta, Ji, n);
    integral += ds * res * res;
  }
  kc->eta2[a->local] += diameter(fp, a) / 12.0 * integral;
}

static void kelly_face(p4est_iter_face_info_t *info, void *user)
{
  KellyCtx *kc = user;
  p4est_iter_face_side_t *s = (p4est_iter_face_side_t *)info->sides.array;
  if (info->sides.elem_count == 1) {
    KellySide a = kelly_side(kc, &s[0], 0);
    kelly_boundary(kc, &a);
    return;
  }
  /* Put the hanging (small) side first. */
  const int small = s[1].is_hanging ? 1 : 0;
  KellySide b = kelly_side(kc, &s[1 - small], 0);
  if (!s[small].is_hanging) {
    KellySide a = kelly_side(kc, &s[small], 0);
    kelly_pair(kc, &a, &b);
    return;
  }
  for (int h = 0; h < P4EST_HALF; h++) {
    KellySide a = kelly_side(kc, &s[small], h);
    kelly_pair(kc, &a, &b);
  }
}

PetscErrorCode FemPoissonKelly(FemPoisson fp, double *eta2, double *total)
{
  const int vn = fp->qe.vnodes;
  const p4est_locidx_t nel = fp->lnodes->num_local_elements;
  const size_t nmirror = fp->ghost->mirrors.elem_count, nghost = fp->ghost->ghosts.elem_count;
  double *coef, *gcoef, sum = 0.0, cpu0, wall0;
  void **mirror;
  KellyCtx kc;
  int failed;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)nel * vn + 1, &coef));
  PetscCall(PetscMalloc1(nghost * vn + 1, &gcoef));
  PetscCall(PetscMalloc1(nmirror + 1, &mirror));
  PetscCall(FemPoissonElementCoefficients(fp, coef));
  for (size_t m = 0; m < nmirror; m++) {
    const p4est_quadrant_t *mq = p4est_quadrant_array_index(&fp->ghost->mirrors, m);
    mirror[m] = coef + (size_t)mq->p.piggy3.local_num * vn;
  }
  p4est_ghost_exchange_custom(fp->p4est, fp->ghost, sizeof(double) * vn, mirror, gcoef);
  memset(eta2, 0, sizeof(double) * nel);
  kc.fp = fp;
  kc.coef = coef;
  kc.gcoef = gcoef;
  kc.eta2 = eta2;
  kc.failed = 0;
  FemClocks(&cpu0, &wall0);
#ifndef P4_TO_P8
  p4est_iterate(fp->p4est, fp->ghost, &kc, NULL, kelly_face, NULL);
#else
  p8est_iterate(fp->p4est, fp->ghost, &kc, NULL, kelly_face, NULL, NULL);
#endif
  FemPoissonAddWork(fp, cpu0, wall0);
  PetscCall(PetscFree(coef));
  PetscCall(PetscFree(gcoef));
  PetscCall(PetscFree(mirror));
  PetscCallMPI(MPI_Allreduce(&kc.failed, &failed, 1, MPI_INT, MPI_MAX, fp->comm));
  PetscCheck(!failed, fp->comm, PETSC_ERR_PLIB, "a coarse cell's map could not be inverted (degenerate mesh?)");
  for (p4est_locidx_t e = 0; e < nel; e++) sum += eta2[e];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, fp->comm));
  *total = sqrt(sum);
  PetscFunctionReturn(0);
}

/* ---- solution transfer --------------------------------------------------- */

static void quad_origin(const p4est_quadrant_t *q, double o[3])
{
  o[0] = q->x;
  o[1] = q->y;
#ifdef P4_TO_P8
  o[2] = q->z;
#else
  o[2] = 0;
#endif
}

void FemPoissonTransfer(void *ctx, int nout, const p4est_quadrant_t *out[], const double *outc[],
                        int nin, const p4est_quadrant_t *in[], double *inc[])
{
  FemPoisson fp = ctx;
  const int vn = fp->qe.vnodes;
  /* Every incoming node lies in an outgoing quadrant (its ancestor when
   * refining, a child containing it when coarsening): evaluate there.  The
   * positions are exact binary fractions, so the containment test is too. */
  for (int j = 0; j < nin; j++) {
    double oj[3];
    const double hj = P4EST_QUADRANT_LEN(in[j]->level);
    quad_origin(in[j], oj);
    for (int i = 0; i < vn; i++) {
      double eta[3], pos[3];
      FemQElemNode(&fp->qe, i, eta);
      for (int d = 0; d < 3; d++) pos[d] = oj[d] + eta[d] * hj;
      for (int k = 0; k < nout; k++) {
        double ok[3], etak[3] = {0, 0, 0};
        const double hk = P4EST_QUADRANT_LEN(out[k]->level);
        int inside = 1;
        quad_origin(out[k], ok);
        for (int d = 0; d < P4EST_DIM; d++) {
          etak[d] = (pos[d] - ok[d]) / hk;
          if (etak[d] < 0.0 || etak[d] > 1.0) inside = 0;
        }
        if (inside) {
          inc[j][i] = FemPoissonEvalRef(fp, outc[k], etak);
          break;
        }
      }
    }
  }
}
