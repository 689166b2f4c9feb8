/* The -amr_* adaptation options and the output options of the cycle. */
#include "mesh/p4est_dim.h"
#include <string.h>
#include "app/adapt_options.h"
#include "util/options.h"

void AmrAdaptOptionsDefaults(const char *strategy, PetscInt min_level, PetscInt max_level, AmrAdaptOptions *o)
{
  memset(o, 0, sizeof *o);
  PetscStrncpy(o->strategy, strategy, sizeof o->strategy);
  o->mark.refine_fraction = 0.3;
  o->mark.coarsen_fraction = 0.03;
  o->mark.theta = 0.5;
  o->mark.min_level = (int)min_level;
  o->mark.max_level = (int)max_level;
  o->refine_tol = 0.1;
  o->coarsen_tol = 0.02;
  o->vtk_interval = 1;
}

static PetscBool strategy_known(const char *name)
{
  if (!strcmp(name, "threshold")) return PETSC_TRUE;
  for (int s = 0; AmrMarkStrategyName(s); s++)
    if (!strcmp(AmrMarkStrategyName(s), name)) return PETSC_TRUE;
  return PETSC_FALSE;
}

PetscErrorCode AmrAdaptOptionsRead(MPI_Comm comm, AmrAdaptOptions *o)
{
  char slist[128] = "threshold";
  PetscInt maxl = o->mark.max_level;
  PetscBool set_report;

  PetscFunctionBeginUser;
  for (int s = 0; AmrMarkStrategyName(s); s++) {
    PetscCall(PetscStrlcat(slist, ", ", sizeof slist));
    PetscCall(PetscStrlcat(slist, AmrMarkStrategyName(s), sizeof slist));
  }
  PetscOptionsBegin(comm, NULL, "Adaptation and output", NULL);
  AMR_OPTION("-amr_strategy", PetscOptionsString("-amr_strategy", slist, NULL, o->strategy, o->strategy, sizeof o->strategy, NULL));
  AMR_OPTION("-amr_refine_fraction", PetscOptionsReal("-amr_refine_fraction", "fraction: share of the cells refined", NULL, o->mark.refine_fraction,
                                                      &o->mark.refine_fraction, NULL));
  AMR_OPTION("-amr_coarsen_fraction", PetscOptionsReal("-amr_coarsen_fraction", "fraction, doerfler: share of the cells coarsened", NULL,
                                                       o->mark.coarsen_fraction, &o->mark.coarsen_fraction, NULL));
  AMR_OPTION("-amr_doerfler_theta", PetscOptionsReal("-amr_doerfler_theta", "doerfler: share of the squared estimate refined", NULL, o->mark.theta,
                                                     &o->mark.theta, NULL));
  AMR_OPTION("-amr_refine_tol", PetscOptionsReal("-amr_refine_tol", "threshold: refine where the indicator exceeds this", NULL, o->refine_tol,
                                                 &o->refine_tol, NULL));
  AMR_OPTION("-amr_coarsen_tol", PetscOptionsReal("-amr_coarsen_tol", "threshold: coarsen families whose indicators are all below this", NULL,
                                                  o->coarsen_tol, &o->coarsen_tol, NULL));
  AMR_OPTION("-amr_max_level", PetscOptionsInt("-amr_max_level", "Finest level refinement may reach", NULL, maxl, &maxl, NULL));
  AMR_OPTION("-report", PetscOptionsString("-report", "Write one JSON object per cycle to FILE.jsonl", NULL, o->report, o->report, sizeof o->report,
                                           &set_report));
  AMR_OPTION("-vtk_interval", PetscOptionsInt("-vtk_interval", "With -vtk: write every K-th cycle (the initial state of a problem with time and the last cycle always)", NULL, o->vtk_interval, &o->vtk_interval, NULL));
  PetscOptionsEnd();
  PetscCheck(strategy_known(o->strategy), comm, PETSC_ERR_USER_INPUT, "option -amr_strategy %s: unknown strategy (choose from %s)",
             o->strategy, slist);
  PetscCheck(o->mark.refine_fraction >= 0 && o->mark.refine_fraction <= 1, comm, PETSC_ERR_USER_INPUT,
             "option -amr_refine_fraction %g: must be from 0 to 1", (double)o->mark.refine_fraction);
  PetscCheck(o->mark.coarsen_fraction >= 0 && o->mark.coarsen_fraction <= 1 - o->mark.refine_fraction, comm, PETSC_ERR_USER_INPUT,
             "option -amr_coarsen_fraction %g: must be from 0 to 1 - refine fraction (%g)", (double)o->mark.coarsen_fraction,
             1 - (double)o->mark.refine_fraction);
  PetscCheck(o->mark.theta > 0 && o->mark.theta <= 1, comm, PETSC_ERR_USER_INPUT, "option -amr_doerfler_theta %g: must be above 0 and at most 1",
             (double)o->mark.theta);
  PetscCheck(maxl >= o->mark.min_level && maxl <= P4EST_QMAXLEVEL, comm, PETSC_ERR_USER_INPUT,
             "option -amr_max_level %" PetscInt_FMT ": must be from -amr_min_level (%d) to %d", maxl, o->mark.min_level, P4EST_QMAXLEVEL);
  PetscCheck(!set_report || o->report[0], comm, PETSC_ERR_USER_INPUT, "option -report: needs a file name, e.g. -report run.jsonl");
  PetscCheck(o->vtk_interval >= 1, comm, PETSC_ERR_USER_INPUT, "option -vtk_interval %" PetscInt_FMT ": must be at least 1", o->vtk_interval);
  o->mark.max_level = (int)maxl;
  PetscFunctionReturn(0);
}
