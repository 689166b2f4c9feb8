/* Zoltan baselines (Lieber et al. 2016 compares diffusion with Zoltan's RCB, HSFC and
 * graph repartitioning).  Zoltan sees the tasks of the local ranks as its
 * objects with their current rank as input part, and returns every
 * object's new part (RETURN_LISTS=PARTS), which becomes the task's
 * destination; the task set then moves them like any other method's.
 * Debian's Zoltan has no ParMETIS, so the graph method is PHG with
 * LB_APPROACH=REPARTITION, which weighs migration by the object sizes. */
#include "bench/zoltan_lb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zoltan.h>

/* Exported by libzoltan but not declared in zoltan.h; reseeding before every
 * partition makes PHG's randomised matching repeatable. */
void Zoltan_Srand(unsigned int seed, unsigned int *myval);

#define ZOLTAN_SEED 12345u
#define TASK_BYTES 40 /* id, weight and three coordinates */

typedef struct {
  lb_taskset *ts;
  lb_backend be;
  int lo, nobj;
  int *rank, *index; /* object -> local rank and position in its list */
} zctx;

static const double *coord_of(const zctx *z, int o)
{
  return lb_taskset_list(z->ts, z->rank[o])->x + 3 * (size_t)z->index[o];
}

static int num_obj(void *data, int *ierr)
{
  *ierr = ZOLTAN_OK;
  return ((zctx *)data)->nobj;
}

static void obj_list(void *data, int ngid, int nlid, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim, float *wgts, int *ierr)
{
  (void)ngid; (void)nlid; (void)wdim;
  zctx *z = data;
  for (int o = 0; o < z->nobj; o++) {
    const lb_task_list *L = lb_taskset_list(z->ts, z->rank[o]);
    gids[o] = (ZOLTAN_ID_TYPE)L->id[z->index[o]];
    lids[o] = (ZOLTAN_ID_TYPE)o;
    wgts[o] = (float)L->w[z->index[o]];
  }
  *ierr = ZOLTAN_OK;
}

static int num_geom(void *data, int *ierr)
{
  (void)data;
  *ierr = ZOLTAN_OK;
  return 3;
}

static void geom_multi(void *data, int ngid, int nlid, int n, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int dim, double *xyz, int *ierr)
{
  (void)ngid; (void)nlid; (void)gids; (void)dim;
  for (int i = 0; i < n; i++) memcpy(xyz + 3 * i, coord_of(data, (int)lids[i]), 3 * sizeof(double));
  *ierr = ZOLTAN_OK;
}

static void part_multi(void *data, int ngid, int nlid, int n, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int *parts, int *ierr)
{
  (void)ngid; (void)nlid; (void)gids;
  zctx *z = data;
  for (int i = 0; i < n; i++) parts[i] = z->rank[lids[i]];
  *ierr = ZOLTAN_OK;
}

static void num_edges_multi(void *data, int ngid, int nlid, int n, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int *nedges, int *ierr)
{
  (void)ngid; (void)nlid; (void)gids;
  zctx *z = data;
  for (int i = 0; i < n; i++) {
    const int *start, *nbr, *own;
    int o = (int)lids[i];
    lb_taskset_neighbours(z->ts, z->rank[o], &start, &nbr, &own);
    nedges[i] = start[z->index[o] + 1] - start[z->index[o]];
  }
  *ierr = ZOLTAN_OK;
}

/* Zoltan needs the process that holds every neighbour: its owner rank on
 * MPI, this process on the virtual backend. */
static void edge_list_multi(void *data, int ngid, int nlid, int n, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int *nedges,
                            ZOLTAN_ID_PTR nbor_gids, int *nbor_procs, int wdim, float *ewgts, int *ierr)
{
  (void)ngid; (void)nlid; (void)gids; (void)nedges; (void)wdim; (void)ewgts;
  zctx *z = data;
  int k = 0;
  for (int i = 0; i < n; i++) {
    const int *start, *nbr, *own;
    int o = (int)lids[i], t = z->index[o];
    lb_taskset_neighbours(z->ts, z->rank[o], &start, &nbr, &own);
    for (int e = start[t]; e < start[t + 1]; e++, k++) {
      nbor_gids[k] = (ZOLTAN_ID_TYPE)nbr[e];
      nbor_procs[k] = z->be == LB_BACKEND_MPI ? own[e] : 0;
    }
  }
  *ierr = ZOLTAN_OK;
}

static void obj_size_multi(void *data, int ngid, int nlid, int n, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int *bytes, int *ierr)
{
  (void)data; (void)ngid; (void)nlid; (void)gids; (void)lids;
  for (int i = 0; i < n; i++) bytes[i] = TASK_BYTES;
  *ierr = ZOLTAN_OK;
}

int lb_zoltan_is_method(const char *name)
{
  return name && (strcmp(name, "zoltan-rcb") == 0 || strcmp(name, "zoltan-hsfc") == 0 || strcmp(name, "zoltan-graph") == 0);
}

lb_err lb_zoltan_init(int argc, char **argv)
{
  float version;
  return Zoltan_Initialize(argc, argv, &version) == ZOLTAN_OK ? LB_OK : lb_error(LB_ERR_MPI, "Zoltan_Initialize failed");
}

lb_err lb_zoltan_partition(lb_taskset *ts, const char *name, lb_backend be, MPI_Comm comm, double imbalance_tol, double *runtime_s)
{
  if (!lb_zoltan_is_method(name)) return lb_error(LB_ERR_METHOD, "'%s' is not a Zoltan baseline", name);
  if (!(imbalance_tol >= 1)) return lb_error(LB_ERR_ARG, "-zoltan_imbalance_tol %g must be at least 1", imbalance_tol);
  zctx z = {ts, be, 0, 0, NULL, NULL};
  int lo, hi;
  lb_taskset_local(ts, &lo, &hi);
  z.lo = lo;
  for (int r = lo; r < hi; r++) z.nobj += lb_taskset_list(ts, r)->n;
  z.rank = malloc(((size_t)z.nobj + 1) * sizeof *z.rank);
  z.index = malloc(((size_t)z.nobj + 1) * sizeof *z.index);
  if (!z.rank || !z.index) { free(z.rank); free(z.index); return lb_error(LB_ERR_MEM, "out of memory for Zoltan objects"); }
  for (int r = lo, o = 0; r < hi; r++)
    for (int t = 0; t < lb_taskset_list(ts, r)->n; t++, o++) { z.rank[o] = r; z.index[o] = t; }
  MPI_Comm zc = be == LB_BACKEND_MPI ? comm : MPI_COMM_SELF;
  int nranks;
  if (be == LB_BACKEND_MPI) MPI_Comm_size(comm, &nranks);
  else nranks = hi - lo;
  char parts[32], tol[32];
  snprintf(parts, sizeof parts, "%d", nranks);
  snprintf(tol, sizeof tol, "%.6g", imbalance_tol);
  struct Zoltan_Struct *zz = Zoltan_Create(zc);
  lb_err err = LB_OK;
  if (!zz) { err = lb_error(LB_ERR_MPI, "Zoltan_Create failed"); goto out; }
  const char *method = strcmp(name, "zoltan-rcb") == 0 ? "RCB" : strcmp(name, "zoltan-hsfc") == 0 ? "HSFC" : "GRAPH";
  const char *params[][2] = {
    {"DEBUG_LEVEL", "0"}, {"LB_METHOD", method}, {"NUM_GID_ENTRIES", "1"}, {"NUM_LID_ENTRIES", "1"},
    {"OBJ_WEIGHT_DIM", "1"}, {"EDGE_WEIGHT_DIM", "0"}, {"NUM_GLOBAL_PARTS", parts}, {"RETURN_LISTS", "PARTS"},
    {"IMBALANCE_TOL", tol}, {"LB_APPROACH", "REPARTITION"}, {"GRAPH_PACKAGE", "PHG"},
  };
  int np = strcmp(method, "GRAPH") == 0 ? 11 : 10;
  for (int i = 0; i < np && !err; i++)
    if (Zoltan_Set_Param(zz, params[i][0], params[i][1]) != ZOLTAN_OK)
      err = lb_error(LB_ERR_ARG, "Zoltan refuses parameter %s=%s", params[i][0], params[i][1]);
  if (err) goto out;
  Zoltan_Set_Num_Obj_Fn(zz, num_obj, &z);
  Zoltan_Set_Obj_List_Fn(zz, obj_list, &z);
  Zoltan_Set_Num_Geom_Fn(zz, num_geom, &z);
  Zoltan_Set_Geom_Multi_Fn(zz, geom_multi, &z);
  Zoltan_Set_Part_Multi_Fn(zz, part_multi, &z);
  Zoltan_Set_Num_Edges_Multi_Fn(zz, num_edges_multi, &z);
  Zoltan_Set_Edge_List_Multi_Fn(zz, edge_list_multi, &z);
  Zoltan_Set_Obj_Size_Multi_Fn(zz, obj_size_multi, &z);
  int changes, ngid, nlid, nimp, nexp, *impp = NULL, *imppart = NULL, *expp = NULL, *exppart = NULL;
  ZOLTAN_ID_PTR impg = NULL, impl = NULL, expg = NULL, expl = NULL;
  Zoltan_Srand(ZOLTAN_SEED, NULL);
  double t0 = MPI_Wtime();
  int rc = Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &impg, &impl, &impp, &imppart,
                               &nexp, &expg, &expl, &expp, &exppart);
  double t = MPI_Wtime() - t0;
  if (rc != ZOLTAN_OK && rc != ZOLTAN_WARN) err = lb_error(LB_ERR_MPI, "%s: Zoltan_LB_Partition failed (code %d)", name, rc);
  for (int i = 0; !err && i < nexp; i++) {
    int o = (int)expl[i];
    if (o < 0 || o >= z.nobj || exppart[i] < 0 || exppart[i] >= nranks) { err = lb_error(LB_ERR_MPI, "%s: Zoltan returned part %d for object %d", name, exppart[i], o); break; }
    lb_taskset_dest(ts, z.rank[o])[z.index[o]] = exppart[i] == z.rank[o] ? -1 : exppart[i];
  }
  Zoltan_LB_Free_Part(&impg, &impl, &impp, &imppart);
  Zoltan_LB_Free_Part(&expg, &expl, &expp, &exppart);
  if (be == LB_BACKEND_MPI) MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
  *runtime_s = t;
out:
  Zoltan_Destroy(&zz);
  free(z.rank);
  free(z.index);
  return err;
}
