#include "mesh/p4est_dim.h"
#include <string.h>
#include "mesh/migrate.h"
#include "balance/lbcurve.h"

PetscErrorCode AmrFamilyCounts(p4est_t *p4est, p4est_locidx_t *counts, long long *moved)
{
  PetscFunctionBeginUser;
  *moved = (long long)p4est_partition_for_coarsening(p4est, counts);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrMigrate(p4est_t *p4est, const p4est_locidx_t *counts, int nfields, const AmrField *fields, AmrMigrateStats *st)
{
  const int size = p4est->mpisize, rank = p4est->mpirank;
  p4est_gloidx_t *old, shipped;
  p4est_locidx_t *want;
  const long revision = p4est->revision;
  long long mine[2], red[2];
  double t0 = MPI_Wtime(), wall;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc2(size + 1, &old, size, &want));
  memcpy(old, p4est->global_first_quadrant, sizeof(p4est_gloidx_t) * (size + 1));
  memcpy(want, counts, sizeof(p4est_locidx_t) * size);
  shipped = p4est_partition_given(p4est, want);
  /* Solvers rebuild their mesh data when the revision changes; unlike
   * p4est_partition_ext, p4est_partition_given does not count its move. */
  if (shipped > 0 && p4est->revision == revision) p4est->revision++;
  for (int f = 0; f < nfields; f++) {
    void *nv;
    PetscCall(PetscMalloc((size_t)p4est->local_num_quadrants * fields[f].size + 1, &nv));
    p4est_transfer_fixed(p4est->global_first_quadrant, old, p4est->mpicomm, P4EST_COMM_TAG_LAST + 1 + f, nv, *fields[f].data, fields[f].size);
    PetscCall(PetscFree(*fields[f].data));
    *fields[f].data = nv;
  }
  if (st) {
    /* cells sent: the old range minus its overlap with the new one */
    const p4est_gloidx_t *nw = p4est->global_first_quadrant;
    const long long kept = (long long)lb_curve_kept(old[rank], old[rank + 1], nw[rank], nw[rank + 1]);
    st->shipped = (long long)shipped;
    st->sent = (long long)(old[rank + 1] - old[rank]) - kept;
    st->received = (long long)(nw[rank + 1] - nw[rank]) - kept;
    wall = MPI_Wtime() - t0;
    mine[0] = st->sent + st->received;
    mine[1] = (long long)(wall * 1e9);
    PetscCallMPI(MPI_Allreduce(mine, red, 2, MPI_LONG_LONG, MPI_MAX, p4est->mpicomm));
    st->max_moved = red[0];
    st->wall_s = 1e-9 * (double)red[1];
  }
  PetscCall(PetscFree2(old, want));
  PetscFunctionReturn(0);
}

/* Faces between a local and a ghost cell, one per pair of cells (a
 * hanging face pairs the big cell with each small one). */
static void count_cut(p4est_iter_face_info_t *info, void *user)
{
  long long *cut = user;
  const p4est_iter_face_side_t *s0, *s1, *h, *f;
  if (info->sides.elem_count != 2) return;
  s0 = p4est_iter_fside_array_index_int(&info->sides, 0);
  s1 = p4est_iter_fside_array_index_int(&info->sides, 1);
  if (!s0->is_hanging && !s1->is_hanging) {
    *cut += s0->is.full.is_ghost != s1->is.full.is_ghost;
    return;
  }
  h = s0->is_hanging ? s0 : s1;
  f = s0->is_hanging ? s1 : s0;
  for (int k = 0; k < P4EST_HALF; k++) *cut += h->is.hanging.is_ghost[k] != f->is.full.is_ghost;
}

PetscErrorCode AmrCommGraphMeasure(p4est_t *p4est, AmrCommGraph *g)
{
  const int size = p4est->mpisize, rank = p4est->mpirank;
  p4est_ghost_t *ghost = p4est_ghost_new(p4est, P4EST_CONNECT_FACE);
  int nmine = 0, *mine, *nper, *disp, *all;
  long long cut = 0, red[2];

  PetscFunctionBeginUser;
  memset(g, 0, sizeof *g);
  g->nranks = size;
  p4est_iterate(p4est, ghost, &cut, NULL, count_cut,
#ifdef P4_TO_P8
                NULL,
#endif
                NULL);
  PetscCall(PetscMalloc3(size, &mine, size, &nper, size + 1, &disp));
  /* a face ghost layer holds exactly the cells across faces: its owners
   * are the ranks this one shares a face with */
  for (int r = 0; r < size; r++)
    if (r != rank && ghost->proc_offsets[r + 1] > ghost->proc_offsets[r]) mine[nmine++] = r;
  p4est_ghost_destroy(ghost);
  PetscCallMPI(MPI_Allgather(&nmine, 1, MPI_INT, nper, 1, MPI_INT, p4est->mpicomm));
  disp[0] = 0;
  for (int r = 0; r < size; r++) disp[r + 1] = disp[r] + nper[r];
  PetscCall(PetscMalloc1(disp[size] + 1, &all));
  PetscCallMPI(MPI_Allgatherv(mine, nmine, MPI_INT, all, nper, disp, MPI_INT, p4est->mpicomm));
  PetscCall(PetscMalloc2(disp[size] + 1, &g->eu, disp[size] + 1, &g->ev));
  /* each pair appears in both lists; keep it from its lower rank, whose
   * sorted list gives the pairs in (u, v) order */
  for (int u = 0; u < size; u++)
    for (int k = disp[u]; k < disp[u + 1]; k++)
      if (all[k] > u) {
        g->eu[g->nedges] = u;
        g->ev[g->nedges++] = all[k];
      }
  red[0] = cut;
  red[1] = cut;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &red[0], 1, MPI_LONG_LONG, MPI_SUM, p4est->mpicomm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &red[1], 1, MPI_LONG_LONG, MPI_MAX, p4est->mpicomm));
  g->edge_cut = red[0] / 2;
  g->edge_cut_max = red[1];
  PetscCall(PetscFree3(mine, nper, disp));
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

/* Pairs of a not in b; both sorted by (u, v). */
static int missing(const AmrCommGraph *a, const AmrCommGraph *b)
{
  int n = 0, j = 0;
  for (int i = 0; i < a->nedges; i++) {
    while (j < b->nedges && (b->eu[j] < a->eu[i] || (b->eu[j] == a->eu[i] && b->ev[j] < a->ev[i]))) j++;
    n += !(j < b->nedges && b->eu[j] == a->eu[i] && b->ev[j] == a->ev[i]);
  }
  return n;
}

void AmrCommGraphDiff(const AmrCommGraph *a, const AmrCommGraph *b, int *added, int *removed)
{
  *added = missing(b, a);
  *removed = missing(a, b);
}

PetscErrorCode AmrCommGraphFree(AmrCommGraph *g)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree2(g->eu, g->ev));
  g->nedges = 0;
  PetscFunctionReturn(0);
}
