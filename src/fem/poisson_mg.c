/* Geometric multigrid for FemPoisson over the forest's own levels (issue
 * 20).  Level by level from the finest forest: a copy partitioned so that
 * families stay on one rank (p4est's even split), every family coarsened
 * once, 2:1 balanced; until a coarsening changes nothing.  Each level is a
 * complete FemPoisson discretisation (Q1, its own hanging-node constraints
 * and Dirichlet nodes), assembled or matrix-free as -poisson_mg_level_operator
 * says (assembled by default: a Q1 matrix has few entries per row, and its
 * product measured cheaper than the cell loop, 2D and 3D); the coarsest is
 * assembled for the direct (or AMG) coarse solve.  Q2 first
 * goes to Q1 on the finest forest (so does a matrix-free Q1 on a forest
 * that cannot coarsen, to have an assembled coarsest level).
 *
 * The transfer from level c to level f is nodal interpolation: every node
 * of a fine cell that is not constrained takes the value of the coarse
 * function (coarse constraints applied) at its position in the coarse cell
 * containing the fine cell, which is the same cell or its parent.  Fine
 * and coarse partitions differ, so at setup each rank asks the owners of
 * the coarse cells containing its fine cells for their node numbers; the
 * apply then gathers the coarse values it needs with one VecScatter.
 * Restriction is the transpose, written out cell by cell. */
#include "mesh/p4est_dim.h"
#include "fem/femutil.h"
#include "fem/impl/poisson.h"

/* The transfer between two successive levels. */
typedef struct {
  FemPoisson c, f;
  Vec cl;              /* the coarse values the fine cells need (sequential) */
  VecScatter scatter;  /* coarse global vector -> cl */
  PetscInt *cidx;      /* per fine cell, c's vnodes indices into cl (-1: Dirichlet) */
  unsigned char *rel;  /* per fine cell: 0 the same cell, 1 + child id of the parent */
  p4est_lnodes_code_t *cfc; /* per fine cell: the coarse cell's face code */
  double *E[P4EST_CHILDREN + 1]; /* per rel: f.vnodes x c.vnodes interpolation */
  uint32_t *fmask;     /* per face code of f's cells: bit i set if node i is free */
  Vec winv;            /* ghosted (f's layout): 1 / number of cells interpolating each node */
  Vec fg;              /* ghosted work vector of f */
  Mat P;               /* shell: MatMult prolongs, MatMultTranspose restricts */
} Transfer;

struct _p_FemPoissonMG {
  FemPoisson fp;       /* the finest level (not owned) */
  int nlev;
  FemPoisson *lev;     /* coarsest first; lev[nlev - 1] == fp */
  p4est_t **forest;    /* per level: its own coarsened forest, NULL when it is a finer level's */
  Transfer *tr;        /* tr[l] from level l - 1 to l, l >= 1 */
};

/* ---- transfer -------------------------------------------------------------- */

static PetscErrorCode prolong(Mat P, Vec x, Vec y)
{
  Transfer *t;
  Vec lf;
  const PetscScalar *ca, *wa;
  PetscScalar *fa;
  double cpu0, wall0;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(P, &t));
  const p4est_lnodes_t *ln = t->f->lnodes;
  const int vf = t->f->qe.vnodes, vc = t->c->qe.vnodes;
  PetscCall(VecScatterBegin(t->scatter, x, t->cl, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecScatterEnd(t->scatter, x, t->cl, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostGetLocalForm(t->fg, &lf));
  PetscCall(VecZeroEntries(lf));
  PetscCall(VecGetArray(lf, &fa));
  PetscCall(VecGetArrayRead(t->cl, &ca));
  PetscCall(VecGetArrayRead(t->winv, &wa)); /* local form: owned entries and ghosts */
  FemClocks(&cpu0, &wall0);
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    const PetscInt *ci = t->cidx + (size_t)e * vc;
    const p4est_locidx_t *en = ln->element_nodes + (size_t)e * vf;
    const double *Cc, *E = t->E[t->rel[e]];
    const uint32_t fm = t->fmask[ln->face_code[e]];
    double xe[FEM_MAX_VNODES], ve[FEM_MAX_VNODES];
    PetscCall(FemPoissonConstraintMatrix(t->c, t->cfc[e], &Cc));
    for (int j = 0; j < vc; j++) xe[j] = ci[j] >= 0 ? ca[ci[j]] : 0.0;
    for (int j = 0; j < vc; j++) {
      ve[j] = xe[j];
      if (Cc) {
        ve[j] = 0.0;
        for (int k = 0; k < vc; k++) ve[j] += Cc[j * vc + k] * xe[k];
      }
    }
    for (int i = 0; i < vf; i++) {
      if (!(fm >> i & 1) || t->f->dirichlet[en[i]]) continue;
      double s = 0.0;
      for (int j = 0; j < vc; j++) s += E[i * vc + j] * ve[j];
      fa[en[i]] += wa[en[i]] * s;
    }
  }
  FemPoissonAddWork(t->f, cpu0, wall0);
  PetscCall(VecRestoreArrayRead(t->winv, &wa));
  PetscCall(VecRestoreArrayRead(t->cl, &ca));
  PetscCall(VecRestoreArray(lf, &fa));
  PetscCall(VecGhostRestoreLocalForm(t->fg, &lf));
  PetscCall(VecGhostUpdateBegin(t->fg, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateEnd(t->fg, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecCopy(t->fg, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode restrict_(Mat P, Vec r, Vec y)
{
  Transfer *t;
  Vec lf;
  PetscScalar *ca;
  const PetscScalar *fa, *wa;
  double cpu0, wall0;

  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(P, &t));
  const p4est_lnodes_t *ln = t->f->lnodes;
  const int vf = t->f->qe.vnodes, vc = t->c->qe.vnodes;
  PetscCall(VecCopy(r, t->fg));
  PetscCall(VecGhostUpdateBegin(t->fg, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(t->fg, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecZeroEntries(t->cl));
  PetscCall(VecGhostGetLocalForm(t->fg, &lf));
  PetscCall(VecGetArrayRead(lf, &fa));
  PetscCall(VecGetArray(t->cl, &ca));
  PetscCall(VecGetArrayRead(t->winv, &wa));
  FemClocks(&cpu0, &wall0);
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    const PetscInt *ci = t->cidx + (size_t)e * vc;
    const p4est_locidx_t *en = ln->element_nodes + (size_t)e * vf;
    const double *Cc, *E = t->E[t->rel[e]];
    const uint32_t fm = t->fmask[ln->face_code[e]];
    double ve[FEM_MAX_VNODES] = {0};
    PetscCall(FemPoissonConstraintMatrix(t->c, t->cfc[e], &Cc));
    for (int i = 0; i < vf; i++) {
      if (!(fm >> i & 1) || t->f->dirichlet[en[i]]) continue;
      const double w = wa[en[i]] * fa[en[i]];
      for (int j = 0; j < vc; j++) ve[j] += E[i * vc + j] * w;
    }
    for (int k = 0; k < vc; k++) {
      if (ci[k] < 0) continue;
      double s = ve[k];
      if (Cc) {
        s = 0.0;
        for (int j = 0; j < vc; j++) s += Cc[j * vc + k] * ve[j];
      }
      ca[ci[k]] += s;
    }
  }
  FemPoissonAddWork(t->f, cpu0, wall0);
  PetscCall(VecRestoreArrayRead(t->winv, &wa));
  PetscCall(VecRestoreArray(t->cl, &ca));
  PetscCall(VecRestoreArrayRead(lf, &fa));
  PetscCall(VecGhostRestoreLocalForm(t->fg, &lf));
  PetscCall(VecZeroEntries(y));
  PetscCall(VecScatterBegin(t->scatter, t->cl, y, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecScatterEnd(t->scatter, t->cl, y, ADD_VALUES, SCATTER_REVERSE));
  PetscFunctionReturn(0);
}

/* Per face code of the fine cells, which of their nodes are free (a cell
 * always has some); per fine node, 1 / the number of local cells in which
 * it is free (summed over all ranks), so that prolongation's sum over
 * cells interpolates. */
static PetscErrorCode node_weights(Transfer *t)
{
  const p4est_lnodes_t *ln = t->f->lnodes;
  const int vf = t->f->qe.vnodes;
  Vec lw;
  PetscScalar *wa;
  PetscInt n;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(FEM_NCODES, &t->fmask));
  PetscCall(VecDuplicate(t->f->u, &t->winv));
  PetscCall(VecGhostGetLocalForm(t->winv, &lw));
  PetscCall(VecZeroEntries(lw));
  PetscCall(VecGetArray(lw, &wa));
  for (p4est_locidx_t e = 0; e < ln->num_local_elements; e++) {
    const p4est_lnodes_code_t fc = ln->face_code[e];
    if (!t->fmask[fc]) {
      const double *Cf;
      PetscCall(FemPoissonConstraintMatrix(t->f, fc, &Cf));
      for (int i = 0; i < vf; i++) t->fmask[fc] |= (uint32_t)FemPoissonNodeFree(Cf, vf, i) << i;
    }
    for (int i = 0; i < vf; i++)
      if (t->fmask[fc] >> i & 1) wa[ln->element_nodes[(size_t)e * vf + i]] += 1.0;
  }
  PetscCall(VecRestoreArray(lw, &wa));
  PetscCall(VecGhostRestoreLocalForm(t->winv, &lw));
  PetscCall(VecGhostUpdateBegin(t->winv, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGhostUpdateEnd(t->winv, ADD_VALUES, SCATTER_REVERSE));
  PetscCall(VecGetLocalSize(t->winv, &n));
  PetscCall(VecGetArray(t->winv, &wa));
  for (PetscInt i = 0; i < n; i++) {
    PetscCheck(wa[i] > 0.5, t->f->comm, PETSC_ERR_PLIB, "a node is free in no cell");
    wa[i] = 1.0 / wa[i];
  }
  PetscCall(VecRestoreArray(t->winv, &wa));
  PetscCall(VecGhostUpdateBegin(t->winv, INSERT_VALUES, SCATTER_FORWARD));
  PetscCall(VecGhostUpdateEnd(t->winv, INSERT_VALUES, SCATTER_FORWARD));
  PetscFunctionReturn(0);
}

/* The interpolation matrices: fine node i of a cell that is the coarse
 * cell itself (rel 0) or its child rel - 1, in the coarse cell's reference
 * coordinates, against the coarse basis. */
static PetscErrorCode interpolation_tables(Transfer *t)
{
  const int vf = t->f->qe.vnodes, vc = t->c->qe.vnodes;

  PetscFunctionBeginUser;
  for (int r = 0; r <= P4EST_CHILDREN; r++) {
    PetscCall(PetscMalloc1((size_t)vf * vc, &t->E[r]));
    for (int i = 0; i < vf; i++) {
      double eta[3];
      FemQElemNode(&t->f->qe, i, eta);
      if (r)
        for (int d = 0; d < P4EST_DIM; d++) eta[d] = 0.5 * (((r - 1) >> d & 1) + eta[d]);
      FemQElemEval(&t->c->qe, eta, t->E[r] + (size_t)i * vc, NULL);
    }
  }
  PetscFunctionReturn(0);
}

/* Request: tree, x, y, z, level of a fine cell.  Reply: the containing
 * coarse cell's level and face code, then its vnodes global node numbers
 * (-1 for Dirichlet nodes). */
#define REQ 5

/* Answer the requests of one rank about this rank's coarse cells. */
static PetscErrorCode answer(FemPoisson c, const int64_t *req, int64_t *rep)
{
  const int vc = c->qe.vnodes;
  p4est_quadrant_t q;
  p4est_tree_t *tree = p4est_tree_array_index(c->p4est->trees, (p4est_topidx_t)req[0]);

  PetscFunctionBeginUser;
  memset(&q, 0, sizeof q);
  q.x = (p4est_qcoord_t)req[1];
  q.y = (p4est_qcoord_t)req[2];
#ifdef P4_TO_P8
  q.z = (p4est_qcoord_t)req[3];
#endif
  q.level = (int8_t)req[4];
  const ssize_t k = p4est_find_higher_bound(&tree->quadrants, &q, 0);
  PetscCheck(k >= 0, c->comm, PETSC_ERR_PLIB, "no coarse cell contains a fine cell");
  const p4est_quadrant_t *K = p4est_quadrant_array_index(&tree->quadrants, (size_t)k);
  PetscCheck(p4est_quadrant_is_equal(K, &q) || p4est_quadrant_is_ancestor(K, &q), c->comm, PETSC_ERR_PLIB,
             "the coarse level is not nested in the fine one");
  const p4est_locidx_t e = tree->quadrants_offset + (p4est_locidx_t)k;
  rep[0] = K->level;
  rep[1] = c->lnodes->face_code[e];
  for (int j = 0; j < vc; j++) {
    const p4est_locidx_t node = c->lnodes->element_nodes[(size_t)e * vc + j];
    rep[2 + j] = c->dirichlet[node] ? -1 : (int64_t)c->gidx[node];
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode transfer_create(FemPoisson c, FemPoisson f, Transfer *t)
{
  const p4est_lnodes_t *ln = f->lnodes;
  const p4est_locidx_t nel = ln->num_local_elements;
  const int vc = c->qe.vnodes, rsz = 2 + vc;
  int size, *owner, *scount, *rcount, *sdisp, *rdisp, *fill;
  int64_t *sreq, *rreq, *srep, *rrep;
  PetscInt *glob, nglob;
  IS is;

  PetscFunctionBeginUser;
  t->c = c;
  t->f = f;
  PetscCallMPI(MPI_Comm_size(f->comm, &size));
  PetscCall(PetscMalloc1(nel + 1, &owner));
  PetscCall(PetscCalloc4(size, &scount, size, &rcount, size + 1, &sdisp, size + 1, &rdisp));
  PetscCall(PetscMalloc1(size, &fill));
  for (p4est_locidx_t e = 0; e < nel; e++) {
    owner[e] = p4est_comm_find_owner(c->p4est, f->etree[e], f->equad[e], c->p4est->mpirank);
    scount[owner[e]] += REQ;
  }
  PetscCallMPI(MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, f->comm));
  for (int r = 0; r < size; r++) {
    sdisp[r + 1] = sdisp[r] + scount[r];
    rdisp[r + 1] = rdisp[r] + rcount[r];
    fill[r] = sdisp[r];
  }
  PetscCall(PetscMalloc2(sdisp[size] + 1, &sreq, rdisp[size] + 1, &rreq));
  for (p4est_locidx_t e = 0; e < nel; e++) {
    const p4est_quadrant_t *q = f->equad[e];
    int64_t *s = sreq + fill[owner[e]];
    fill[owner[e]] += REQ;
    s[0] = f->etree[e];
    s[1] = q->x;
    s[2] = q->y;
#ifdef P4_TO_P8
    s[3] = q->z;
#else
    s[3] = 0;
#endif
    s[4] = q->level;
  }
  PetscCallMPI(MPI_Alltoallv(sreq, scount, sdisp, MPI_INT64_T, rreq, rcount, rdisp, MPI_INT64_T, f->comm));
  /* replies: the same order, rsz numbers per request */
  PetscCall(PetscMalloc2((size_t)rdisp[size] / REQ * rsz + 1, &srep, (size_t)sdisp[size] / REQ * rsz + 1, &rrep));
  for (int k = 0; k < rdisp[size] / REQ; k++) PetscCall(answer(c, rreq + (size_t)k * REQ, srep + (size_t)k * rsz));
  for (int r = 0; r <= size; r++) {
    if (r < size) {
      scount[r] = scount[r] / REQ * rsz;
      rcount[r] = rcount[r] / REQ * rsz;
    }
    sdisp[r] = sdisp[r] / REQ * rsz;
    rdisp[r] = rdisp[r] / REQ * rsz;
  }
  PetscCallMPI(MPI_Alltoallv(srep, rcount, rdisp, MPI_INT64_T, rrep, scount, sdisp, MPI_INT64_T, f->comm));

  PetscCall(PetscMalloc3((size_t)nel * vc + 1, &t->cidx, nel + 1, &t->rel, nel + 1, &t->cfc));
  for (int r = 0; r < size; r++) fill[r] = sdisp[r];
  for (p4est_locidx_t e = 0; e < nel; e++) {
    const int64_t *a = rrep + fill[owner[e]];
    const p4est_quadrant_t *q = f->equad[e];
    fill[owner[e]] += rsz;
    PetscCheck(a[0] == q->level || a[0] == q->level - 1, f->comm, PETSC_ERR_PLIB, "levels differ by more than one refinement");
    t->rel[e] = (unsigned char)(a[0] == q->level ? 0 : 1 + p4est_quadrant_child_id(q));
    t->cfc[e] = (p4est_lnodes_code_t)a[1];
    for (int j = 0; j < vc; j++) t->cidx[(size_t)e * vc + j] = (PetscInt)a[2 + j];
  }
  PetscCall(PetscFree2(sreq, rreq));
  PetscCall(PetscFree2(srep, rrep));
  PetscCall(PetscFree4(scount, rcount, sdisp, rdisp));
  PetscCall(PetscFree(fill));
  PetscCall(PetscFree(owner));

  /* coarse numbers -> positions in cl */
  PetscCall(PetscMalloc1((size_t)nel * vc + 1, &glob));
  nglob = 0;
  for (size_t k = 0; k < (size_t)nel * vc; k++)
    if (t->cidx[k] >= 0) glob[nglob++] = t->cidx[k];
  PetscCall(PetscSortRemoveDupsInt(&nglob, glob));
  for (size_t k = 0; k < (size_t)nel * vc; k++)
    if (t->cidx[k] >= 0) PetscCall(PetscFindInt(t->cidx[k], nglob, glob, &t->cidx[k]));
  PetscCall(ISCreateGeneral(PETSC_COMM_SELF, nglob, glob, PETSC_OWN_POINTER, &is));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, nglob, &t->cl));
  PetscCall(VecScatterCreate(c->b, is, t->cl, NULL, &t->scatter));
  PetscCall(ISDestroy(&is));

  PetscCall(interpolation_tables(t));
  PetscCall(node_weights(t));
  PetscCall(VecDuplicate(f->u, &t->fg));
  {
    PetscInt mf, Mf, mc, Mc;
    PetscCall(VecGetLocalSize(f->b, &mf));
    PetscCall(VecGetSize(f->b, &Mf));
    PetscCall(VecGetLocalSize(c->b, &mc));
    PetscCall(VecGetSize(c->b, &Mc));
    PetscCall(MatCreateShell(f->comm, mf, mc, Mf, Mc, t, &t->P));
  }
  PetscCall(MatShellSetOperation(t->P, MATOP_MULT, (void (*)(void))prolong));
  PetscCall(MatShellSetOperation(t->P, MATOP_MULT_TRANSPOSE, (void (*)(void))restrict_));
  PetscFunctionReturn(0);
}

static PetscErrorCode transfer_destroy(Transfer *t)
{
  PetscFunctionBeginUser;
  PetscCall(MatDestroy(&t->P));
  PetscCall(VecDestroy(&t->cl));
  PetscCall(VecScatterDestroy(&t->scatter));
  PetscCall(VecDestroy(&t->winv));
  PetscCall(PetscFree(t->fmask));
  PetscCall(VecDestroy(&t->fg));
  PetscCall(PetscFree3(t->cidx, t->rel, t->cfc));
  for (int r = 0; r <= P4EST_CHILDREN; r++) PetscCall(PetscFree(t->E[r]));
  PetscFunctionReturn(0);
}

/* ---- hierarchy ------------------------------------------------------------- */

static int coarsen_all(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *children[])
{
  (void)p4est; (void)t; (void)children;
  return 1;
}

/* The next coarser forest, or NULL when coarsening changes nothing. */
static p4est_t *coarser(p4est_t *fine)
{
  p4est_t *c = p4est_copy(fine, 0);
  p4est_partition(c, 1, NULL);
  p4est_coarsen(c, 0, coarsen_all, NULL);
  p4est_balance(c, P4EST_CONNECT_FULL, NULL);
  p4est_partition(c, 1, NULL);
  if (c->global_num_quadrants == fine->global_num_quadrants) {
    p4est_destroy(c);
    return NULL;
  }
  return c;
}

/* A level's discretisation on forest p4est; the coarsest is assembled. */
static PetscErrorCode level_create(FemPoisson fp, p4est_t *p4est, int degree, PetscBool assembled, FemPoisson *lev)
{
  PetscFunctionBeginUser;
  PetscCall(FemPoissonCreateLevel(fp->comm, fp->prob, degree, assembled, fp->tree_bc, lev));
  (*lev)->work_owner = fp;
  PetscCall(FemPoissonSetup(*lev, p4est));
  if (assembled) PetscCall(FemPoissonAssemble(*lev));
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonMGCreate(FemPoisson fp, FemPoissonMG *out)
{
  FemPoissonMG mg;
  p4est_t *chain[64];
  int nh = 0, pq;
  /* the Q1 levels below the finest: -poisson_mg_level_operator */
  const PetscBool level_assembled = fp->opt.level_op == FEM_POISSON_ASSEMBLED;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(1, &mg));
  mg->fp = fp;
  /* the h-levels below the finest forest, finest first */
  for (p4est_t *cur = fp->p4est; nh < 64;) {
    p4est_t *c = coarser(cur);
    if (!c) break;
    chain[nh++] = cur = c;
  }
  /* a Q1 level on the finest forest: below Q2, and as the assembled
   * coarse level of a matrix-free operator on a forest that cannot coarsen */
  pq = fp->qe.degree > 1 || (!nh && !fp->assembled);
  mg->nlev = 1 + pq + nh;
  PetscCall(PetscCalloc3(mg->nlev, &mg->lev, mg->nlev, &mg->forest, mg->nlev, &mg->tr));
  mg->lev[mg->nlev - 1] = fp;
  if (pq) PetscCall(level_create(fp, fp->p4est, 1, nh ? level_assembled : PETSC_TRUE, &mg->lev[mg->nlev - 2]));
  for (int k = 0; k < nh; k++) {
    const int l = nh - 1 - k;
    mg->forest[l] = chain[k];
    PetscCall(level_create(fp, chain[k], 1, l == 0 ? PETSC_TRUE : level_assembled, &mg->lev[l]));
  }
  for (int l = 1; l < mg->nlev; l++) PetscCall(transfer_create(mg->lev[l - 1], mg->lev[l], &mg->tr[l]));
  *out = mg;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonMGDestroy(FemPoissonMG *mgp)
{
  FemPoissonMG mg = *mgp;

  PetscFunctionBeginUser;
  if (!mg) PetscFunctionReturn(0);
  for (int l = 1; l < mg->nlev; l++) PetscCall(transfer_destroy(&mg->tr[l]));
  for (int l = 0; l < mg->nlev - 1; l++) PetscCall(FemPoissonDestroy(&mg->lev[l]));
  for (int l = 0; l < mg->nlev; l++)
    if (mg->forest[l]) p4est_destroy(mg->forest[l]);
  PetscCall(PetscFree3(mg->lev, mg->forest, mg->tr));
  PetscCall(PetscFree(mg));
  *mgp = NULL;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonMGLevels(FemPoissonMG mg, int *nlev, FemPoisson **lev, Mat *P)
{
  PetscFunctionBeginUser;
  *nlev = mg->nlev;
  if (lev) *lev = mg->lev;
  for (int l = 1; P && l < mg->nlev; l++) P[l] = mg->tr[l].P;
  PetscFunctionReturn(0);
}

PetscErrorCode FemPoissonMGSetUpPC(FemPoissonMG mg, PC pc)
{
  const FemPoissonSolverOptions *o = &mg->fp->opt;

  PetscFunctionBeginUser;
  PetscCall(PCMGSetLevels(pc, mg->nlev, NULL));
  PetscCall(PCMGSetType(pc, PC_MG_MULTIPLICATIVE));
  PetscCall(PCMGSetGalerkin(pc, PC_MG_GALERKIN_NONE));
  for (int l = 0; l < mg->nlev; l++) {
    KSP ksp;
    PC sp;
    Mat A = FemPoissonOperatorMat(mg->lev[l]);
    PetscCall(PCMGGetSmoother(pc, l, &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    if (l) {
      KSP est;
      PetscCall(PCMGSetInterpolation(pc, l, mg->tr[l].P));
      PetscCall(KSPSetType(ksp, KSPCHEBYSHEV));
      PetscCall(KSPGetPC(ksp, &sp));
      PetscCall(PCSetType(sp, PCJACOBI));
      PetscCall(KSPSetTolerances(ksp, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, o->cheby_degree));
      PetscCall(KSPChebyshevEstEigSet(ksp, 0.0, 1.1 / o->smoothing_range, 0.0, 1.1));
      PetscCall(KSPChebyshevEstEigSetUseNoisy(ksp, PETSC_TRUE));
      PetscCall(KSPChebyshevEstEigGetKSP(ksp, &est));
      PetscCall(KSPSetType(est, KSPCG));
      PetscCall(KSPSetTolerances(est, PETSC_DEFAULT, PETSC_DEFAULT, PETSC_DEFAULT, o->eig_its));
    }
    /* -mg_levels_* and -mg_coarse_* still win */
    PetscCall(KSPSetFromOptions(ksp));
  }
  PetscFunctionReturn(0);
}
