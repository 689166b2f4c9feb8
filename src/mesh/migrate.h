#ifndef AMRDLB_MESH_MIGRATE_H
#define AMRDLB_MESH_MIGRATE_H

/* Repartition a forest to given cells per rank, carrying every cell's data
 * (the quadrants' user data with the forest, arrays kept outside it with
 * p4est_transfer_fixed), and measure the subdomain communication graph:
 * which pairs of ranks share a face. */

#include <petscsys.h>
#include "mesh/p4est_dim.h"

/** An array of per-cell data kept outside the forest: size bytes per local
 *  cell in *data (PetscMalloc'd); AmrMigrate replaces *data by the array of
 *  the new partition. */
typedef struct {
  void **data;
  size_t size;
} AmrField;

/** What one repartition moved. */
typedef struct {
  long long shipped;  /**< cells whose rank changed, all ranks */
  long long sent, received; /**< this rank's cells sent and received */
  long long max_moved; /**< largest sent + received of any rank */
  double wall_s;      /**< largest wall time of any rank for the move */
} AmrMigrateStats;

/** Correct cells per rank (counts: mpisize values, summing to the global
 *  count) so that no family of siblings is split between ranks and the
 *  forest can still coarsen; collective.  Returns through *moved how many
 *  cells the correction moved between parts.
 *  \param[in] p4est the forest
 *  \param[in,out] counts cells per rank, corrected in place
 *  \param[out] moved cells the correction moved between parts
 */
PetscErrorCode AmrFamilyCounts(p4est_t *p4est, p4est_locidx_t *counts, long long *moved);

/** Repartition p4est so that rank r holds counts[r] cells (in curve order),
 *  moving the quadrants' user data and the nfields outside arrays along;
 *  collective.  st may be NULL.
 *  \param[in,out] p4est the forest, repartitioned
 *  \param[in] counts cells per rank wanted
 *  \param[in] nfields arrays kept outside the forest
 *  \param[in,out] fields those arrays, replaced by the new partition's
 *  \param[out] st what moved, or NULL
 */
PetscErrorCode AmrMigrate(p4est_t *p4est, const p4est_locidx_t *counts, int nfields, const AmrField *fields,
                          AmrMigrateStats *st);

/** The subdomain communication graph: rank pairs that share a face. */
typedef struct {
  int nranks;
  int nedges;          /**< pairs u < v of ranks that share at least one face */
  int *eu, *ev;        /**< the pairs, sorted by (u, v) */
  long long edge_cut;  /**< cell faces between two ranks (a hanging face counts once per small cell) */
  long long edge_cut_max; /**< largest number of such faces of one rank */
} AmrCommGraph;

/** Measure the communication graph from a face ghost layer; collective,
 *  the result is the same on every rank.  Free with AmrCommGraphFree.
 *  \param[in] p4est the forest
 *  \param[out] g the graph
 */
PetscErrorCode AmrCommGraphMeasure(p4est_t *p4est, AmrCommGraph *g);

/** Pairs in b but not in a (*added) and in a but not in b (*removed).
 *  \param[in] a the graph before
 *  \param[in] b the graph after
 *  \param[out] added pairs in b not in a
 *  \param[out] removed pairs in a not in b
 */
void AmrCommGraphDiff(const AmrCommGraph *a, const AmrCommGraph *b, int *added, int *removed);

/** Free the arrays of a graph.
 *  \param[in,out] g the graph, emptied
 */
PetscErrorCode AmrCommGraphFree(AmrCommGraph *g);

#endif
