/** @file tracemesh.h
 *  lbbench's -mesh: the true face adjacency of a trace's cells
 *  (mesh/traceadj.h) on the coarse mesh the recording ran on, for 2D and
 *  3D traces in one executable.  The mesh reader and the adjacency are
 *  compiled once per dimension (p4est's P4_TO_P8 convention); lbbench's 3D
 *  copy gets its own symbol names (src/bench/CMakeLists.txt), so both
 *  dimensions link into lbbench without the app's libraries. */
#ifndef AMRDLB_TRACEMESH_H
#define AMRDLB_TRACEMESH_H

#include <stdint.h>

#include "balance/loadtrace.h"

/** The face neighbours of the cells of trace cycle t (read from file
 *  path) on the coarse mesh spec (-mesh: FILE.inp or builtin:NAME, as
 *  amr2d/amr3d take it), in compressed rows: cell i's neighbours are
 *  adj[xadj[i] .. xadj[i + 1]), ascending (both malloc'ed; free with
 *  free()).  *maxdeg gets the longest row.  Not collective: every process
 *  builds the same rows.  A mesh that cannot be read, a trace without
 *  positions (version 1), or a trace not recorded on this mesh (another
 *  dimension, other trees) is an LB_ERR_ARG error naming -mesh and the
 *  file. */
lb_err lb_trace_mesh_adjacency(const char *spec, const char *path, const lb_load_trace *t, int64_t **xadj, int **adj, int *maxdeg);

/** The same for one dimension (lb_trace_mesh_adjacency picks by t->dim). */
lb_err lb_trace_mesh_adjacency_2d(const char *spec, const char *path, const lb_load_trace *t, int64_t **xadj, int **adj, int *maxdeg);
/** The same for one dimension (lb_trace_mesh_adjacency picks by t->dim). */
lb_err lb_trace_mesh_adjacency_3d(const char *spec, const char *path, const lb_load_trace *t, int64_t **xadj, int **adj, int *maxdeg);

#endif
