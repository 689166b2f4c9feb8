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

/* The strategies -amr_strategy takes: threshold, then mark.h's. */
#define AMR_MAX_STRATEGIES 16

static PetscErrorCode strategy_names(const char **names, int *n)
{
  PetscFunctionBeginUser;
  names[0] = "threshold";
  for (*n = 1; AmrMarkStrategyName(*n - 1); (*n)++) {
    PetscCheck(*n < AMR_MAX_STRATEGIES, PETSC_COMM_SELF, PETSC_ERR_PLIB, "more than %d marking strategies", AMR_MAX_STRATEGIES);
    names[*n] = AmrMarkStrategyName(*n - 1);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrAdaptOptionsRead(MPI_Comm comm, AmrAdaptOptions *o)
{
  static const char *const report_ranks[] = {"auto", "yes", "no"};
  const char *names[AMR_MAX_STRATEGIES];
  int nnames, strategy;
  PetscBool ranks_set = PETSC_FALSE;
  PetscInt maxl = o->mark.max_level, def;
  PetscBool known;

  PetscFunctionBeginUser;
  PetscCall(strategy_names(names, &nnames));
  PetscCall(PetscEListFind(nnames, names, o->strategy, &def, &known));
  strategy = (int)def;
  PetscCheck(known, PETSC_COMM_SELF, PETSC_ERR_PLIB, "the problem's default strategy %s is not one of -amr_strategy's", o->strategy);
  PetscOptionsBegin(comm, NULL, "Adaptation and output", NULL);
  PetscCall(AmrOptionsChoice(PetscOptionsObject, "-amr_strategy", "Marking strategy", "strategy", nnames, names, &strategy, NULL));
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
  AMR_OPTION("-report", PetscOptionsString("-report", "Write one JSON object per cycle to FILE.jsonl", NULL, o->report, o->report, sizeof o->report, NULL));
  PetscCall(AmrOptionsChoice(PetscOptionsObject, "-report_ranks", "With -report: every rank's values to FILE.jsonl.ranks (MPI-IO; auto: up to 1024 ranks)", "choice", 3, report_ranks, &o->report_ranks, &ranks_set));
  AMR_OPTION("-vtk_interval", PetscOptionsInt("-vtk_interval", "With -vtk: write every K-th cycle (the initial state of a problem with time and the last cycle always)", NULL, o->vtk_interval, &o->vtk_interval, NULL));
  PetscOptionsEnd();
  PetscCall(PetscStrncpy(o->strategy, names[strategy], sizeof o->strategy));
  PetscCheck(o->mark.refine_fraction >= 0 && o->mark.refine_fraction <= 1, comm, PETSC_ERR_USER_INPUT,
             "option -amr_refine_fraction %g: must be from 0 to 1", (double)o->mark.refine_fraction);
  PetscCheck(o->mark.coarsen_fraction >= 0 && o->mark.coarsen_fraction <= 1 - o->mark.refine_fraction, comm, PETSC_ERR_USER_INPUT,
             "option -amr_coarsen_fraction %g: must be from 0 to 1 - refine fraction (%g)", (double)o->mark.coarsen_fraction,
             1 - (double)o->mark.refine_fraction);
  PetscCheck(o->mark.theta > 0 && o->mark.theta <= 1, comm, PETSC_ERR_USER_INPUT, "option -amr_doerfler_theta %g: must be above 0 and at most 1",
             (double)o->mark.theta);
  PetscCheck(maxl >= o->mark.min_level && maxl <= P4EST_QMAXLEVEL, comm, PETSC_ERR_USER_INPUT,
             "option -amr_max_level %" PetscInt_FMT ": must be from -amr_min_level (%d) to %d", maxl, o->mark.min_level, P4EST_QMAXLEVEL);
  PetscCheck(!ranks_set || o->report[0] || o->report_ranks != AMR_REPORT_RANKS_YES, comm, PETSC_ERR_USER_INPUT, "option -report_ranks yes: needs -report FILE.jsonl, beside which the side file goes");
  PetscCheck(o->vtk_interval >= 1, comm, PETSC_ERR_USER_INPUT, "option -vtk_interval %" PetscInt_FMT ": must be at least 1", o->vtk_interval);
  o->mark.max_level = (int)maxl;
  PetscFunctionReturn(0);
}
