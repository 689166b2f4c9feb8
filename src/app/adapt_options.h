/** \file adapt_options.h
 * The adaptation and output options of the cycle, the same for every
 * problem: -amr_strategy and its parameters, -amr_max_level, -report,
 * -report_ranks, -vtk_interval.  Read once, by the cycle, with the problem's defaults. */
#ifndef AMR_APP_ADAPT_OPTIONS_H
#define AMR_APP_ADAPT_OPTIONS_H

#include <petscsys.h>
#include "mesh/mark.h"

/** Shared adaptation and output options. */
typedef struct {
  char strategy[32];               /**< -amr_strategy: a mark.h strategy, or threshold */
  AmrMarkParams mark;          /**< fractions, theta, -amr_min_level .. -amr_max_level */
  PetscReal refine_tol, coarsen_tol; /**< threshold: -amr_refine_tol, -amr_coarsen_tol */
  PetscInt vtk_interval;           /**< -vtk_interval: VTK every K-th cycle */
  char report[PETSC_MAX_PATH_LEN]; /**< -report FILE.jsonl, empty: none */
  int report_ranks;                /**< -report_ranks: AMR_REPORT_RANKS_AUTO, _YES or _NO */
} AmrAdaptOptions;

/** -report_ranks: the per-rank side file FILE.jsonl.ranks beside the
 *  report, on up to AMR_REPORT_RANKS_AUTO_MAX ranks (auto), always or never. */
enum { AMR_REPORT_RANKS_AUTO, AMR_REPORT_RANKS_YES, AMR_REPORT_RANKS_NO };
#define AMR_REPORT_RANKS_AUTO_MAX 1024

/** Defaults of the shared options: strategy \a strategy, levels from
 *  \a min_level to \a max_level, fractions 0.3 / 0.03, theta 0.5,
 *  thresholds 0.1 / 0.02, VTK every cycle, no report (its side file
 *  auto). */
void AmrAdaptOptionsDefaults(const char *strategy, PetscInt min_level, PetscInt max_level, AmrAdaptOptions *o);

/** Read and check the shared options, starting from the defaults in \a o;
 *  the strategies are mark.h's and threshold (on the indicator itself).
 *  Collective; bad values are PETSC_ERR_USER_INPUT errors naming the
 *  option. */
PetscErrorCode AmrAdaptOptionsRead(MPI_Comm comm, AmrAdaptOptions *o);

#endif
