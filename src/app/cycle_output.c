/* What a cycle writes besides its report (impl/cycle.h): the -vtk and
 * -checkpoint paths checked before the first cycle, and the VTK output of
 * a cycle.  Compiled for 2D and 3D (P4_TO_P8). */
#include "app/impl/cycle.h"

#include <math.h>

#include "util/fileio.h"
#include "mesh/dirs.h"

/* Output paths that cannot take the files are refused before the first
 * cycle, not after its work. */
PetscErrorCode AmrCycleCheckOutputs(AmrCycle cyc)
{
  PetscFunctionBeginUser;
  if (cyc->vtk) {
    const char *prefix;
    const int *cycles;
    const double *times;
    int n;
    AmrVtkSeriesEntries(cyc->vtk, &prefix, &n, &cycles, &times);
    PetscCall(AmrCheckOutputDir(cyc->comm, "-vtk", prefix));
  }
  if (cyc->checkpoint[0] && cyc->checkpoint_interval) {
    char path[PETSC_MAX_PATH_LEN + 16];
    PetscCall(AmrCheckOutputDir(cyc->comm, "-checkpoint", cyc->checkpoint));
    /* the manifest is read and replaced after the first cycle: a folder
     * or a FIFO in its place is refused before it */
    PetscCall(PetscSNPrintf(path, sizeof path, "%s.manifest", cyc->checkpoint));
    PetscCall(AmrFileCheckRegular(cyc->comm, "-checkpoint", path, 0));
    PetscCall(PetscSNPrintf(path, sizeof path, "%s.manifest.new", cyc->checkpoint));
    PetscCall(AmrFileCheckRegular(cyc->comm, "-checkpoint", path, 0));
    PetscCall(AmrFileLock(cyc->comm, "-checkpoint", cyc->checkpoint, &cyc->checkpoint_lock));
  }
  PetscFunctionReturn(0);
}

/* The cycle's VTK output at the problem's time (the cycle without one):
 * the problem's point and cell fields, the indicator and the load type,
 * besides the tree, level and rank the writer adds.  cycle < 0: the
 * initial state, which has no indicator yet. */
PetscErrorCode AmrCycleWriteVtk(AmrCycle cyc, int cycle)
{
  const AmrProblem p = cyc->problem;
  const p4est_locidx_t n = cyc->p4est->local_num_quadrants;
  AmrVtkData d;
  double *eta, *type = NULL;

  PetscFunctionBeginUser;
  PetscCall(AmrProblemVtk(p, &d));
  if (cycle >= 0) {
    PetscCall(PetscMalloc1((size_t)n + 1, &eta));
    for (p4est_locidx_t e = 0; e < n; e++) eta[e] = sqrt(cyc->eta2[e]);
    PetscCall(AmrVtkAddCellField(&d, "indicator", eta));
  }
  if (AmrProblemHasLoadTypes(p)) {
    PetscCall(PetscMalloc1((size_t)n + 1, &type));
    for (p4est_locidx_t e = 0; e < n; e++) type[e] = cyc->types[e];
    PetscCall(AmrVtkAddCellField(&d, "load_type", type));
  }
  PetscCall(AmrVtkSeriesWrite(cyc->vtk, cyc->p4est, cycle, p->state.sim_time >= 0 ? p->state.sim_time : cycle, &d));
  /* the problem's arrays are the cycle's to free, as ours */
  for (int k = 0; k < d.npoint; k++) PetscCall(PetscFree(d.point[k].values));
  for (int k = 0; k < d.ncell; k++) PetscCall(PetscFree(d.cell[k].values));
  PetscFunctionReturn(0);
}
