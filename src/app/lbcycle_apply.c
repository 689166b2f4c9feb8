/* apply: the repartition with the cell data (p4est_partition_given, with
 * families kept on one rank so they can be coarsened), and the
 * communication graph before and after; the even and initial splits. */
#include "app/impl/lbcycle.h"

#include <string.h>

/* Move the forest to the cells per rank counts (families kept together)
 * with its data, and report what moved. */
static PetscErrorCode move(p4est_t *p4est, p4est_locidx_t *counts, int nfields, const AmrField *fields, AmrMigrateStats *st)
{
  long long corrected;

  PetscFunctionBeginUser;
  PetscCall(AmrFamilyCounts(p4est, counts, &corrected));
  PetscCall(AmrMigrate(p4est, counts, nfields, fields, st));
  PetscFunctionReturn(0);
}

/* Split the curve into equal sums of w (cells of weight 0 go along), with
 * families kept together, and move the forest there with its data. */
static PetscErrorCode split(p4est_t *p4est, const double *w, int nfields, const AmrField *fields)
{
  const int P = p4est->mpisize;
  lb_curve_result cut;
  p4est_locidx_t *counts;

  PetscFunctionBeginUser;
  AMR_LB_CHECK(p4est->mpicomm, lb_curve_sfc(p4est->mpicomm, p4est->local_num_quadrants, w, P, &cut));
  PetscCall(PetscMalloc1(P, &counts));
  for (int r = 0; r < P; r++) counts[r] = (p4est_locidx_t)cut.counts[r];
  lb_curve_result_free(&cut);
  PetscCall(move(p4est, counts, nfields, fields, NULL));
  PetscCall(PetscFree(counts));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbPartitionEven(p4est_t *p4est, int nfields, const AmrField *fields)
{
  double *w;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(p4est->local_num_quadrants + 1, &w));
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) w[i] = 1.0;
  PetscCall(split(p4est, w, nfields, fields));
  PetscCall(PetscFree(w));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbInitial(AmrLb lb, p4est_t *p4est, const int *types, int nfields, const AmrField *fields)
{
  double *w;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(p4est->local_num_quadrants + 1, &w));
  for (p4est_locidx_t i = 0; i < p4est->local_num_quadrants; i++) w[i] = !lb->o.skew || (types ? types[i] : 0) == 0 ? 1.0 : 0.0;
  PetscCall(split(p4est, w, nfields, fields));
  PetscCall(PetscFree(w));
  PetscCall(AmrLbPhasesInitial(lb, p4est));
  PetscFunctionReturn(0);
}

/* Repartition to s->counts with the data; the measured migration feeds
 * the model that predicts the next one, and the rule learns it moved. */
static PetscErrorCode migrate(AmrLb lb, AmrLbStep *s, int nfields, const AmrField *fields, AmrLbRecord *r)
{
  AmrMigrateStats st;

  PetscFunctionBeginUser;
  PetscCall(AmrMigrate(s->p4est, s->counts, nfields, fields, &st));
  r->migrated_cells_tot = st.shipped;
  r->migrated_cells_max = st.max_moved;
  r->migrate_time_s = st.wall_s;
  if (st.max_moved > 0) AMR_LB_CHECK(lb->comm, lb_migration_model_add(&lb->migration, st.max_moved, st.wall_s));
  lb_decide_rebalanced(&lb->decide, s->decision, &s->in);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbApply(AmrLb lb, AmrLbStep *s, int nfields, const AmrField *fields, AmrLbRecord *r)
{
  const int P = lb->size;
  AmrCommGraph g0, g1;

  PetscFunctionBeginUser;
  PetscCall(AmrCommGraphMeasure(s->p4est, &g0));
  if (r->rebalanced) {
    PetscCall(migrate(lb, s, nfields, fields, r));
    PetscCall(AmrCommGraphMeasure(s->p4est, &g1));
    AmrCommGraphDiff(&g0, &g1, &r->comm_edges_added, &r->comm_edges_removed);
    PetscCall(AmrCommGraphFree(&g0));
    g0 = g1;
  } else {
    memcpy(s->after, s->before, sizeof(double) * P);
    memcpy(s->next, s->cur, sizeof(int64_t) * P);
  }
  r->comm_edges = g0.nedges;
  r->edge_cut = g0.edge_cut;
  PetscCall(AmrCommGraphFree(&g0));
  PetscFunctionReturn(0);
}
