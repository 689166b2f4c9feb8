/** \file traceadj.h
 * The face adjacency of a load trace's cells (balance/loadtrace.h, format
 * version 2), rebuilt from each cell's tree, level and quadrant position
 * with the coarse mesh's connectivity: what the forest's p4est_mesh gives
 * for the forest the trace recorded, across trees and hanging faces, so a
 * replay can use the cells' true neighbours without the forest.
 * Compiled for 2D and 3D (P4_TO_P8).
 */
#ifndef AMR_MESH_TRACEADJ_H
#define AMR_MESH_TRACEADJ_H

#include <petscsys.h>
#include "mesh/p4est_dim.h"
#include "balance/loadtrace.h"

/** The face neighbours of every cell of trace cycle t on the coarse mesh
 *  conn, in compressed rows: cell i's neighbours (indices of t's cells,
 *  ascending, each once, never i) are adj[xadj[i] .. xadj[i + 1]); a
 *  same-size or coarser neighbour across a face counts once, every finer
 *  cell touching the face counts.  Not collective.  A trace of another
 *  dimension or without positions (version 1), a cell on a tree the mesh
 *  lacks, or cells that do not tile every tree of the mesh whole (the trace was not
 *  recorded on this mesh) is a PETSC_ERR_USER_INPUT error naming what
 *  (the caller names the file), as is a trace of more cells than an int
 *  indexes.  The rows are malloc'ed (a replay hands them to the balancer
 *  library, which frees with free()), on error too: free(*xadj), free(*adj).
 *  \param[in] conn the coarse mesh the trace was recorded on
 *  \param[in] t the trace cycle
 *  \param[out] xadj row offsets, one more than the cells (malloc'ed)
 *  \param[out] adj the neighbours' indices (malloc'ed)
 */
PetscErrorCode AmrTraceAdjacency(p4est_connectivity_t *conn, const lb_load_trace *t, int64_t **xadj, int **adj);

#endif
