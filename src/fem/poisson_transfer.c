/* The Poisson solution cell by cell (poisson.h): the element coefficients
 * with the hanging nodes resolved, their point values and evaluation, the
 * transfer of the coefficients through refinement and coarsening, and the
 * initial guess from transferred coefficients.  Written for 2D; compiled
 * again with P4_TO_P8 for 3D. */
#include "mesh/p4est_dim.h"
#include "fem/impl/poisson.h"

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
