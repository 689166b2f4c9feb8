#ifndef AMRDLB_MESH_MARK_H
#define AMRDLB_MESH_MARK_H

/* Marking strategies, registered by name: which cells to refine (+1) and
 * coarsen (-1) from a per-cell error indicator.  Thresholds are found by
 * parallel bisection, so the marks do not depend on the partition. */

#include <petscsys.h>

/** Parameters shared by all strategies. */
typedef struct {
  double refine_fraction;  /**< fraction: share of cells refined (0.3) */
  double coarsen_fraction; /**< share of cells coarsened (0.03) */
  double theta;            /**< doerfler: share of the squared estimate refined (0.5) */
  int min_level, max_level;
} AmrMarkParams;

/** Mark n local cells from their squared indicators eta2 and levels with
 *  the strategy called name; marks[i] becomes +1, 0 or -1.  Cells below
 *  min_level are always refined, none above max_level nor coarsened below
 *  min_level.
 *  \param[in] comm the ranks of the forest
 *  \param[in] name the strategy (AmrMarkStrategyName)
 *  \param[in] n local cells
 *  \param[in] eta2 their squared indicators
 *  \param[in] level their levels
 *  \param[in] par the strategy's parameters and the level bounds
 *  \param[out] marks +1 refine, 0 keep, -1 coarsen, per cell
 */
PetscErrorCode AmrMark(MPI_Comm comm, const char *name, long n, const double *eta2, const signed char *level,
                       const AmrMarkParams *par, signed char *marks);

/** The i-th strategy name, NULL past the end.
 *  \param[in] i index from 0
 */
const char *AmrMarkStrategyName(int i);

#endif
