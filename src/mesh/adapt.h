#ifndef AMRDLB_MESH_ADAPT_H
#define AMRDLB_MESH_ADAPT_H

/* Refine, coarsen and 2:1 balance a forest while carrying a
 * fixed number of doubles per cell (e.g. a solution's element coefficients)
 * to the new cells. */

#include <petscsys.h>
#include "mesh/p4est_dim.h"

/** Fill the values of the incoming cells from the outgoing ones; all are
 *  quadrants of one tree: one parent and its descendants when refining,
 *  a family and its parent when coarsening. */
typedef void (*AmrTransfer)(void *ctx, int nout, const p4est_quadrant_t *out[], const double *outv[],
                               int nin, const p4est_quadrant_t *in[], double *inv[]);

/** Refine the local cells with marks[i] > 0 (below max_level), coarsen the
 *  families whose cells are all marked < 0 (above min_level), then 2:1
 *  balance across faces, edges and corners.  vals holds nvals doubles per
 *  local cell; on return it is reallocated (PetscMalloc) for the new cells,
 *  filled through transfer.  The forest must carry no user data
 *  (data_size 0); it carries none on return.
 *  \param[in,out] p4est the forest, adapted in place (no user data)
 *  \param[in] marks per local cell: > 0 refine, < 0 coarsen, 0 keep
 *  \param[in] min_level no family is coarsened to below this level
 *  \param[in] max_level no cell is refined beyond this level
 *  \param[in] nvals doubles per cell in *vals
 *  \param[in,out] vals the cells' values, replaced by the new cells'
 *  \param[in] transfer fills new cells' values from the old ones'
 *  \param[in] ctx passed to transfer
 */
PetscErrorCode AmrAdapt(p4est_t *p4est, const signed char *marks, int min_level, int max_level, int nvals,
                        double **vals, AmrTransfer transfer, void *ctx);

#endif
