#ifndef AMRDLB_FEM_SIPG_IMPL_H
#define AMRDLB_FEM_SIPG_IMPL_H

/* Private to the SIPG pressure (sipg.c), its matrix (sipg_matrix.c) and
 * its preconditioner through the continuous space (sipg_mg.c,
 * sipg_smooth.c). */

#include <petscksp.h>
#include "mesh/p4est_dim.h"
#include "fem/advect.h"
#include "fem/qelem.h"

/** Makes pc (of the pressure's KSP, its options prefix already set) the
 *  two-level preconditioner through the continuous Q1 space: block Gauss-Seidel
 *  on the DG system, BoomerAMG on the Galerkin product P^T A P
 *  (FemSipgCoarseCreate).  Call before
 *  KSPSetFromOptions, so that the -PREFIXmg_* options still win. */
PetscErrorCode FemSipgContinuousPCCreate(PC pc);

/** Makes pc (the 3D smoother's, of the DG matrix: MATBAIJ, a cell's VN
 *  unknowns one block) symmetric Gauss-Seidel over each rank's cells, the
 *  matrix's blocks held in single precision (sipg_smooth.c); under
 *  KSPRICHARDSON its iterations are the sweeps. */
PetscErrorCode FemSipgSmootherCreate(PC pc);

/** r = b - A x with the single-precision blocks of FemSipgSmootherCreate's
 *  matrix A: the V-cycle's residual (PCMGSetResidual). */
PetscErrorCode FemSipgResidual(Mat A, Vec b, Vec x, Vec r);

/** The continuous coarse space of one forest and its operator under
 *  assembly (sipg_mg.c). */
typedef struct _p_FemSipgCoarse *FemSipgCoarse;

/** Builds the prolongation from continuous Q1 on adv's forest (its lnodes:
 *  hanging nodes take their parents' interpolated values) to the DG Q1
 *  unknowns (cell on the curve * 2^d + corner, qe's node order), split
 *  where k (kcell: one value per local cell) jumps by much, for pc (made
 *  by FemSipgContinuousPCCreate).  The coarse operator P^T A P is then
 *  summed from A's blocks: every local cell's volume and Dirichlet face
 *  blocks and the interior faces' for which FemSipgCoarseNeedsFace says
 *  so, each through FemSipgCoarseAdd, and handed to pc by
 *  FemSipgCoarseFinish.  Call on every new forest. */
PetscErrorCode FemSipgCoarseCreate(PC pc, FemAdvect adv, const FemQElem *qe, const double *kcell, FemSipgCoarse *c);

/** Whether the face between cells a and b (local or ghost) adds to P^T A P:
 *  on the continuous functions its terms vanish (the jumps do), so only
 *  where a corner of either cell is a coarse unknown of its own. */
PetscBool FemSipgCoarseNeedsFace(FemSipgCoarse c, p4est_locidx_t a, p4est_locidx_t b);

/** Adds P_a^T blk P_b: blk, VN x VN row-major, the block of A of the rows
 *  of local cell a and the columns of cell b (local or ghost). */
PetscErrorCode FemSipgCoarseAdd(FemSipgCoarse c, p4est_locidx_t a, p4est_locidx_t b, const double *blk);

/** Hands pc its interpolation and coarse operator, and frees c. */
PetscErrorCode FemSipgCoarseFinish(FemSipgCoarse *c);

/** The DG matrix under assembly (sipg_matrix.c): MATBAIJ, a cell's VN
 *  unknowns one block, its block pattern known from the face list, and
 *  the cells' and faces' blocks added straight into its value arrays. */
typedef struct {
  Mat A;            /* the matrix, created by FemSipgMatrixCreate */
  PetscInt *ncols;  /* per local cell: the cells its rows couple to */
  PetscInt *cols;   /* per local cell, from its offset: those cells' global numbers, sorted */
  PetscInt *offset; /* per local cell: its first entry in cols; the last is the total */
  PetscInt cstart, cend; /* the local cells' global numbers */
  Mat part[2];           /* the diagonal part and the off-diagonal one (absent on one rank) */
  const PetscInt *ia[2], *ja[2], *garray; /* their block rows and local block columns; the latter's global cells */
  PetscInt ngarray;
  PetscScalar *a[2];
} FemSipgMatrix;

/** Creates *A (MATBAIJ, nl local cells of VN unknowns, global cell numbers
 *  from first) on the pattern of the face points pts (a cell and the cells
 *  across its faces; gidx: the global number of every local and ghost
 *  cell), all values 0, and opens its value arrays in m. */
PetscErrorCode FemSipgMatrixCreate(MPI_Comm comm, size_t nl, const FemAdvectFacePoint *pts, size_t npts, const double *gidx, PetscInt first, Mat *A,
                                   FemSipgMatrix *m);

/** Adds the VN x VN block blk (row-major) to the block of local cell K's
 *  rows and the columns of the cell numbered gcell. */
PetscErrorCode FemSipgMatrixAdd(FemSipgMatrix *m, size_t K, PetscInt gcell, const double *blk);

/** Hands the values back to the matrix, assembles it and frees m's pattern. */
PetscErrorCode FemSipgMatrixFinish(FemSipgMatrix *m);

#endif
