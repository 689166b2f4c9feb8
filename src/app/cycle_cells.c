/* The cycle's per-cell arrays (impl/cycle.h): the problem's fields as the
 * repartition carries them, the load type and indicator of every local
 * cell, the problem's measured cell costs.  Compiled for 2D and 3D
 * (P4_TO_P8). */
#include "app/impl/cycle.h"

void AmrCycleFields(AmrCycle cyc, int *n, AmrField fields[])
{
  const AmrProblem p = cyc->problem;
  *n = 0;
  for (int k = 0; k < p->nfields; k++)
    if (p->field[k].data) {
      fields[*n].data = p->field[k].data;
      fields[*n].size = p->field[k].size;
      (*n)++;
    }
}

PetscErrorCode AmrCycleCellArrays(AmrCycle cyc)
{
  const p4est_locidx_t n = cyc->p4est->local_num_quadrants;

  PetscFunctionBeginUser;
  PetscCall(PetscFree(cyc->types));
  PetscCall(PetscFree(cyc->eta2));
  PetscCall(PetscMalloc1(n + 1, &cyc->types));
  PetscCall(PetscMalloc1(n + 1, &cyc->eta2));
  PetscCall(AmrProblemLoadTypes(cyc->problem, n, cyc->types));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleCellCosts(AmrCycle cyc, double **cost)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(cyc->p4est->local_num_quadrants + 1, cost));
  PetscCall(AmrProblemCellCosts(cyc->problem, *cost));
  PetscFunctionReturn(0);
}
