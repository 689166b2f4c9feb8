/* Adjacency rebuilt from a load trace equals the forest's: a forest on a
 * multi-tree mesh, refined unevenly and 2:1 balanced, is written with the
 * app's trace writer (AmrTraceAppend), read back with lbbench's reader
 * (lb_trace_read) and its face adjacency rebuilt from the cells' trees,
 * levels and positions with the mesh alone (AmrTraceAdjacency); every
 * cell's neighbours must be the ones p4est_mesh reports for the forest
 * (local and ghost, same-size, double-size and the halves of hanging
 * faces), and the forest must have faces across trees and hanging faces.
 * The trace against a mesh of one tree is refused.
 *   trace_adjacency MESH.inp LEVEL DIR */
#include "app/tracewrite.h"
#include "mesh/mesh.h"
#include "mesh/traceadj.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static int max_level;

/* Refine where a hash of the quadrant's tree and position says so: an
 * uneven forest, the same on any number of ranks. */
static int refine_fn(p4est_t *p4est, p4est_topidx_t tree, p4est_quadrant_t *q)
{
  (void)p4est;
  uint64_t h = (uint64_t)tree * 0x9E3779B97F4A7C15u ^ (uint64_t)q->x * 0xC2B2AE3D27D4EB4Fu ^ (uint64_t)q->y * 0x165667B19E3779F9u;
#ifdef P4_TO_P8
  h ^= (uint64_t)q->z * 0x27D4EB2F165667C5u;
#endif
  h ^= h >> 29;
  return q->level < max_level && (h * 0x94D049BB133111EBu) >> 62 == 0;
}

static int cmp_i64(const void *a, const void *b)
{
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Global index of the mesh's local or ghost quadrant idx. */
static int64_t global_of(const p4est_t *p4est, const p4est_ghost_t *ghost, const p4est_mesh_t *mesh, p4est_locidx_t idx)
{
  if (idx < p4est->local_num_quadrants) return (int64_t)p4est->global_first_quadrant[p4est->mpirank] + idx;
  const p4est_locidx_t g = idx - p4est->local_num_quadrants;
  const p4est_quadrant_t *q = p4est_quadrant_array_index((sc_array_t *)&ghost->ghosts, (size_t)g);
  return (int64_t)p4est->global_first_quadrant[mesh->ghost_to_proc[g]] + q->p.piggy3.local_num;
}

int main(int argc, char **argv)
{
  AmrMesh amesh;
  AmrTrace tr;
  lb_load_trace h, t;
  char path[PETSC_MAX_PATH_LEN];
  double cpu, *zero, *w;
  int64_t *xadj;
  int *adj;
  long long pairs[3] = {0, 0, 0}; /* neighbour pairs, across trees, across levels */

  if (argc < 4) return 2;
  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscCall(AmrMeshCreate(PETSC_COMM_WORLD, argv[1], &amesh));
  const int level = atoi(argv[2]);
  max_level = level + 3;
  p4est_t *p4est = p4est_new_ext(PETSC_COMM_WORLD, amesh.conn, 0, level, 1, 0, NULL, NULL);
  p4est_refine(p4est, 1, refine_fn, NULL);
  p4est_balance(p4est, P4EST_CONNECT_FULL, NULL);
  p4est_partition(p4est, 0, NULL);

  /* the forest's trace, through the app's writer and lbbench's reader */
  PetscCall(PetscSNPrintf(path, sizeof path, "%s/adjacency%dd_np%d.trace", argv[3], P4EST_DIM, p4est->mpisize));
  PetscCall(PetscCalloc2(p4est->mpisize, &zero, p4est->local_num_quadrants + 1, &w));
  memset(&h, 0, sizeof h);
  h.ntypes = 1;
  h.time = h.predicted = zero;
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) w[i] = 1;
  PetscCall(AmrTraceOpen(PETSC_COMM_WORLD, path, &tr));
  PetscCall(AmrTraceAppend(tr, p4est, &h, w, NULL, NULL, &cpu));
  PetscCall(AmrTraceClose(&tr));
  CHECK_MSG(lb_trace_read(path, -1, &t) == LB_OK, "%s", lb_errmsg());
  CHECK_EQ(t.ncells, p4est->global_num_quadrants);
  PetscCall(AmrTraceAdjacency(amesh.conn, &t, &xadj, &adj));

  /* p4est's face neighbours of every local cell */
  p4est_ghost_t *ghost = p4est_ghost_new(p4est, P4EST_CONNECT_FULL);
  p4est_mesh_t *mesh = p4est_mesh_new_ext(p4est, ghost, 1, 0, P4EST_CONNECT_FULL);
  int64_t nb[P4EST_FACES * P4EST_HALF];
  int wrong = 0;
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) {
    const int64_t gi = (int64_t)p4est->global_first_quadrant[p4est->mpirank] + i;
    int n = 0;
    for (int f = 0; f < P4EST_FACES; f++) {
      const p4est_locidx_t qq = mesh->quad_to_quad[P4EST_FACES * i + f];
      const int v = mesh->quad_to_face[P4EST_FACES * i + f];
      if (v >= 0 && qq == i && v == f) continue; /* the boundary */
      if (v >= 0)
        nb[n++] = global_of(p4est, ghost, mesh, qq);
      else
        for (int k = 0; k < P4EST_HALF; k++) nb[n++] = global_of(p4est, ghost, mesh, ((p4est_locidx_t *)sc_array_index(mesh->quad_to_half, (size_t)qq))[k]);
    }
    qsort(nb, (size_t)n, sizeof *nb, cmp_i64);
    int m = 0;
    for (int k = 0; k < n; k++)
      if (nb[k] != gi && (m == 0 || nb[m - 1] != nb[k])) nb[m++] = nb[k];
    const int *row = adj + xadj[gi];
    int same = xadj[gi + 1] - xadj[gi] == m;
    for (int k = 0; same && k < m; k++) same = row[k] == nb[k];
    if (!same && wrong++ < 5)
      CHECK_MSG(same, "cell %lld (tree %d, level %d): rebuilt %lld neighbours, p4est %d (first %lld / %lld)", (long long)gi, (int)t.tree[gi],
                (int)t.level[gi], (long long)(xadj[gi + 1] - xadj[gi]), m, (long long)(xadj[gi + 1] > xadj[gi] ? row[0] : -1),
                (long long)(m ? nb[0] : -1));
    for (int k = 0; k < m; k++) {
      pairs[0]++;
      pairs[1] += t.tree[nb[k]] != t.tree[gi];
      pairs[2] += t.level[nb[k]] != t.level[gi];
    }
  }
  CHECK_EQ(wrong, 0);
  MPI_Allreduce(MPI_IN_PLACE, pairs, 3, MPI_LONG_LONG, MPI_SUM, PETSC_COMM_WORLD);
  CHECK_MSG(pairs[1] > 0 && pairs[2] > 0, "the forest has %lld neighbour pairs across trees, %lld across levels: the test needs both", pairs[1], pairs[2]);

  /* the trace on a mesh it was not recorded on */
  {
    p4est_connectivity_t *one = p4est_connectivity_new_periodic();
    int64_t *x2 = NULL;
    int *a2 = NULL;
    PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
    const PetscErrorCode ierr = AmrTraceAdjacency(one, &t, &x2, &a2);
    PetscPopErrorHandler();
    CHECK(ierr == PETSC_ERR_USER_INPUT);
    free(x2);
    free(a2);
    p4est_connectivity_destroy(one);
  }
  const int failed = check_finish(PETSC_COMM_WORLD);
  if (!failed)
    PetscCall(PetscPrintf(PETSC_COMM_WORLD, "adjacency check passed: %lld cells on %d trees, %lld neighbour pairs (%lld across trees, %lld across levels) as p4est_mesh's\n",
                          (long long)t.ncells, (int)amesh.conn->num_trees, pairs[0] / 2, pairs[1] / 2, pairs[2] / 2));
  p4est_mesh_destroy(mesh);
  p4est_ghost_destroy(ghost);
  p4est_destroy(p4est);
  lb_trace_free(&t);
  free(xadj);
  free(adj);
  PetscCall(PetscFree2(zero, w));
  PetscCall(AmrMeshDestroy(&amesh));
  PetscCall(PetscFinalize());
  return failed;
}
