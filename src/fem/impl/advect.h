#ifndef AMRDLB_FEM_ADVECT_IMPL_H
#define AMRDLB_FEM_ADVECT_IMPL_H

/* Private to the advection solver's files: the object (advect.c: set-up
 * and time stepping), its cells (advect_cells.c), its faces
 * (advect_faces.c), its adaptation (advect_adapt.c) and its diagnostics
 * (advect_diag.c); everyone else uses fem/advect.h. */

#include "fem/advect.h"
#include "fem/femutil.h"
#include "mesh/p4est_dim.h"

#define DIM P4EST_DIM
/* Most face quadrature points: 2 per tangential direction (degree 1). */
#define FQ_MAX (1 << (DIM - 1))
/* Points per direction for mass matrices, projections and errors: exact
 * for the (multi)linear tree maps times the degree-1 basis. */
#define NQ_EXACT 3

/** An interior face between a reference side a and the other side b.
 *  a, b index the state array: local cells first, then ghosts. */
typedef struct {
  p4est_locidx_t a, b;
  int a_local, b_local;
  double bn[FQ_MAX]; /* quadrature weight * b.n dS, n outward from a */
  double phia[FQ_MAX][FEM_ADVECT_NB], phib[FQ_MAX][FEM_ADVECT_NB];
} Face;

/** A domain boundary face of local cell a. */
typedef struct {
  p4est_locidx_t a;
  double bn[FQ_MAX];
  double phia[FQ_MAX][FEM_ADVECT_NB];
  double x[FQ_MAX][3];
} BFace;

struct _p_FemAdvect {
  p4est_t *p4est;
  const FemAdvectProblem *prob;
  void *ctx;
  FemAdvectOptions opt;
  int nb; /* basis functions in use: 1 or DIM + 1 */
  int nqf; /* face points per tangential direction */
  int nqv; /* volume points per direction for the volume term */
  double time;
  double inflow_local; /* net boundary inflow on this rank, all steps */

  /* mesh data, rebuilt by FemAdvectMeshChanged */
  p4est_ghost_t *ghost;
  p4est_locidx_t nlocal, nghost;
  double *vol; /* |K| */
  double *m0; /* first row of the mass matrix: integrals of phi_j */
  double *minv; /* inverse mass matrices, nb * nb per cell */
  double *gvol; /* volume-term weights: w |det J| J^{-1} b per point */
  double *outflow; /* integral of max(b.n, 0) over the cell boundary */
  Face *faces;
  size_t nfaces, capfaces;
  BFace *bfaces;
  size_t nbfaces, capbfaces;
  void **mirror_state, **mirror_mean;

  /* with an active region (FemAdvectSetActive), only its cells and their
   * face neighbours advect (active = 1), local then ghost */
  int restricted;
  double *active;
  double floor; /* FemAdvectSetActive: tracer that makes a cell outside advect */
  unsigned char *emit; /* per stage: active, or tracer above floor */

  /* work arrays */
  double *u, *u0, *rhs, *mean, *mn, *mx;
  FemAdvectCell **cells; /* user data of the local cells, in order */
  PetscErrorCode cb_err; /* first failure inside a p4est callback */
  int min_level, max_level; /* of the adaptation in progress */
  long revision;  /* of the forest the cells' data belong to */
  long frevision; /* of the forest the velocity's data belong to (-1: none) */

  /* FemAdvectFacePoints: the face iteration lists its points here, and the
   * next face list of the same forest (FemAdvectBuildVelocity) takes their
   * geometry from them, then frees them */
  int collecting;
  FemAdvectFacePoint *collect;
  size_t ncollect, capcollect;
  long crevision; /* of the forest the points belong to */
  size_t npoints; /* face points of the iteration so far: the next index */

  /* this rank's own work in time steps (thread CPU and wall seconds, less
   * the time inside MPI) */
  double work_cpu, work_wall;

  /* -log_view events, registered by the first FemAdvectCreate() */
  PetscLogEvent ev_setup, ev_advance, ev_adapt;
};

/** Basis values at cell coordinates xi. */
static inline void basis(int nb, const double xi[DIM], double phi[FEM_ADVECT_NB])
{
  phi[0] = 1;
  for (int k = 0; k + 1 < nb; k++) phi[1 + k] = xi[k];
}

static inline double eval(int nb, const double *c, const double *phi)
{
  double u = 0;
  for (int j = 0; j < nb; j++) u += c[j] * phi[j];
  return u;
}

/** Iterates over the tensor points of an n-point rule in DIM directions:
 *  idx in [0, n^DIM) gives the point xi and weight w. */
static inline void tensor_point(int n, int idx, double xi[DIM], double *w)
{
  *w = 1;
  for (int k = 0; k < DIM; k++) {
    int i = idx % n;
    idx /= n;
    xi[k] = FemGaussX[n][i];
    *w *= FemGaussW[n][i];
  }
}

static inline int ipow(int b, int e)
{
  int r = 1;
  while (e-- > 0) r *= b;
  return r;
}

/** Physical point x, |det| of d x / d xi, and the inverse jinv of d x / d xi
 *  at cell coordinates xi of quadrant q in tree t. */
double FemAdvectCellMap(const p4est_connectivity_t *conn, p4est_topidx_t t, const p4est_quadrant_t *q, const double xi[DIM], double x[3],
                        double jinv[3][3]);
/** Mass matrix m of quadrant q (nb x nb, row major). */
void FemAdvectMassMatrix(FemAdvect adv, p4est_topidx_t t, const p4est_quadrant_t *q, double *m);
/** Solves m x = b in place (b becomes x); m is destroyed.  n <= FEM_ADVECT_NB. */
void FemAdvectSolveSmall(int n, double *m, double *b);
/** Frees the per-forest data (advect_cells.c). */
void FemAdvectFreeMesh(FemAdvect adv);
/** The cells' data if the forest changed since they were built: enough for
 *  the ghost exchange, the cell counts and the face points. */
PetscErrorCode FemAdvectSyncCells(FemAdvect adv);
/** All per-forest data, the velocity's included. */
PetscErrorCode FemAdvectSyncMesh(FemAdvect adv);
/** Ghost exchange of arr (local cells, then ghosts) with size bytes per
 *  cell from the mirrors' addresses. */
void FemAdvectExchange(FemAdvect adv, double *arr, void **mirrors, size_t size);
/** The velocity's data on the current cells: the volume term's weights,
 *  the face list with its fluxes, the cells' outflow (advect_faces.c). */
PetscErrorCode FemAdvectBuildVelocity(FemAdvect adv);
/** Frees FemAdvectFacePoints' list. */
void FemAdvectFreeCollect(FemAdvect adv);
/** Copies the state between the quadrant data (to_cells) and adv->u. */
void FemAdvectStateIO(FemAdvect adv, int to_cells);
/** The local cells' means of adv->u into adv->mean, exchanged to ghosts. */
void FemAdvectComputeMeans(FemAdvect adv);
/** Scales the linear part of degree-1 coefficients c with mean um and
 *  centroid xibar (cell coordinates) so that the vertex values stay in
 *  [mn, mx]; keeps the mean. */
void FemAdvectLimitCell(double *c, const double xibar[DIM], double um, double mn, double mx);

#endif
