#ifndef AMRDLB_FEM_POISSON_IMPL_H
#define AMRDLB_FEM_POISSON_IMPL_H

/* Private to the Poisson discretisation (poisson.c, with its element
 * kernels poisson_elem.c, assembly poisson_assemble.c, estimators
 * poisson_estimate.c and transfer poisson_transfer.c), its matrix-free
 * operator (poisson_mf.c) and its multigrid (poisson_mg.c): the object
 * itself and the element helpers they share. */

#include "fem/poisson.h"

/* The face codes of a 2D (3D) element fit in 4 (9) bits. */
#define FEM_NCODES (1 << (P4EST_DIM == 2 ? 4 : 9))

typedef struct _p_FemPoissonMF *FemPoissonMF;
typedef struct _p_FemPoissonMG *FemPoissonMG;

struct _p_FemPoisson {
  MPI_Comm comm;
  const FemProblem *prob;
  FemQElem qe;
  p4est_t *p4est;
  p4est_ghost_t *ghost;
  p4est_lnodes_t *lnodes;
  PetscInt nglobal;
  PetscInt *gidx;      /* global number of every local node */
  char *dirichlet;     /* per local node */
  double *gval;        /* Dirichlet value per local node */
  double *ccache[FEM_NCODES]; /* constraint matrices by face code, built on demand */
  p4est_topidx_t *etree;      /* tree of every local element */
  const p4est_quadrant_t **equad; /* quadrant of every local element */
  char *taffine;              /* per tree: is its map affine */
  double *tx0, *tJ;           /* per affine tree: image of the origin, Jacobian */
  Mat A;               /* assembled matrix, NULL when no one needs it */
  Vec b, u;            /* u is ghosted in lnodes' local order */
  KSP ksp;             /* NULL for the levels of a multigrid */
  PetscBool guess;
  double work_cpu, work_wall; /* element and face loops of assembly, estimation, matrix-free operator */
  double ksp_cpu, ksp_wall;   /* KSPSolve, waits included */
  FemPoisson work_owner;      /* a multigrid level's work counts as its finest level's (NULL: its own) */
  const signed char *tree_bc; /* per tree face: 0/1 overrides prob->bc, -1 or NULL: prob->bc */
  FemPoissonSolverOptions opt; /* operator, preconditioner, smoother */
  PetscBool assembled;  /* this discretisation's operator is the assembled A */
  FemPoissonMF mf;      /* the matrix-free operator, when not assembled */
  FemPoissonMG mg;      /* the multigrid hierarchy, -poisson_pc mg */
};

/** Create the discretisation without a solver (a multigrid level). */
PetscErrorCode FemPoissonCreateLevel(MPI_Comm comm, const FemProblem *prob, int degree, PetscBool assembled,
                                     const signed char *tree_bc, FemPoisson *fp);

/** The operator of the current setup: A or the matrix-free shell. */
Mat FemPoissonOperatorMat(FemPoisson fp);

/* The element kernels (poisson_elem.c) that the set-up, the assembly,
 * the estimators and the other operators share. */
PetscErrorCode FemPoissonConstraintMatrix(FemPoisson fp, p4est_lnodes_code_t fc, const double **C);
double FemPoissonElementGeometry(FemPoisson fp, p4est_topidx_t t, const p4est_quadrant_t *q, const double eta[3], double x[3],
                        double Ji[3][3]);
void FemPoissonElementSystem(FemPoisson fp, p4est_locidx_t e, double *K, double *F);
/** The global numbers of element e's nodes, -1 for Dirichlet nodes. */
void FemPoissonElementDofs(FemPoisson fp, p4est_locidx_t e, PetscInt *rows);
void FemPoissonApplyConstraints(int n, const double *C, double *K, double *F);
int FemPoissonNodeFree(const double *C, int n, int i);
void FemPoissonAddWork(FemPoisson fp, double cpu0, double wall0);
/** The map of quadrant q of tree t at reference point eta: physical point
 *  x and (if J is not NULL) the Jacobian dx/deta. */
void FemPoissonElementMap(FemPoisson fp, p4est_topidx_t t, const p4est_quadrant_t *q, const double eta[3], double x[3], double J[3][3]);
/** Whether face f of quadrant q in tree t lies on the domain boundary. */
int FemPoissonBoundaryFace(const p4est_t *p4est, p4est_topidx_t t, const p4est_quadrant_t *q, int f);
/** Boundary type of face f of element (t, q). */
FemBC FemPoissonFaceBC(FemPoisson fp, p4est_topidx_t t, const p4est_quadrant_t *q, int f);
/** Outward unit normal n of reference face f under inverse Jacobian Ji;
 *  returns the surface factor that turns |det J| dA into dS. */
double FemPoissonFaceNormal(const double Ji[3][3], int f, double n[3]);
/** Neumann data at boundary point x of tree t with outward normal n. */
double FemPoissonNeumannData(FemPoisson fp, p4est_topidx_t t, const double x[3], const double n[3]);

/* The assembled matrix's exact preallocation (poisson_assemble.c). */
PetscErrorCode FemPoissonPreallocate(FemPoisson fp);

/* The matrix-free operator (poisson_mf.c). */
PetscErrorCode FemPoissonMFCreate(FemPoisson fp, FemPoissonMF *mf);
PetscErrorCode FemPoissonMFDestroy(FemPoissonMF *mf);
/** The shell matrix of the operator (owned by mf). */
Mat FemPoissonMFMat(FemPoissonMF mf);
/** Recompute the operator's diagonal (done by FemPoissonMFCreate). */
PetscErrorCode FemPoissonMFDiagonal(FemPoissonMF mf);
/** The right-hand side b (load, Neumann data, Dirichlet lifting) without
 *  an assembled matrix; equals the assembled path's b. */
PetscErrorCode FemPoissonMFRHS(FemPoissonMF mf, Vec b);

/* The geometric multigrid (poisson_mg.c). */
PetscErrorCode FemPoissonMGCreate(FemPoisson fp, FemPoissonMG *mg);
PetscErrorCode FemPoissonMGDestroy(FemPoissonMG *mg);
/** Configure pc (of type PCMG) with the levels, operators, smoothers and transfers. */
PetscErrorCode FemPoissonMGSetUpPC(FemPoissonMG mg, PC pc);
/** The levels (coarsest first, the last is the finest) and the transfers:
 *  P[l] (l >= 1, either may be NULL) prolongs from level l - 1 to l, its
 *  transpose restricts. */
PetscErrorCode FemPoissonMGLevels(FemPoissonMG mg, int *nlev, FemPoisson **lev, Mat *P);

#endif
