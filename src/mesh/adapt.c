#include "mesh/p4est_dim.h"
#include <string.h>
#include "mesh/adapt.h"

/* Each cell's user data during adaptation: its mark, then its values. */
typedef struct {
  int nvals, min_level, max_level;
  AmrTransfer transfer;
  void *ctx;
} adapt_ctx_t;

static int refine_fn(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  const adapt_ctx_t *ac = p4est->user_pointer;
  (void)t;
  return ((double *)q->p.user_data)[0] > 0 && q->level < ac->max_level;
}

static int coarsen_fn(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q[])
{
  const adapt_ctx_t *ac = p4est->user_pointer;
  (void)t;
  if (q[0]->level <= ac->min_level) return 0;
  for (int c = 0; c < P4EST_CHILDREN; c++)
    if (((double *)q[c]->p.user_data)[0] >= 0) return 0;
  return 1;
}

static void replace_fn(p4est_t *p4est, p4est_topidx_t t, int nout, p4est_quadrant_t *out[], int nin,
                       p4est_quadrant_t *in[])
{
  const adapt_ctx_t *ac = p4est->user_pointer;
  const p4est_quadrant_t *cout[P4EST_CHILDREN], *cin[P4EST_CHILDREN];
  const double *vout[P4EST_CHILDREN];
  double *vin[P4EST_CHILDREN];
  (void)t;
  for (int k = 0; k < nout; k++) {
    cout[k] = out[k];
    vout[k] = (const double *)out[k]->p.user_data + 1;
  }
  for (int k = 0; k < nin; k++) {
    cin[k] = in[k];
    vin[k] = (double *)in[k]->p.user_data + 1;
    ((double *)in[k]->p.user_data)[0] = 0.0; /* new cells are not marked */
  }
  ac->transfer(ac->ctx, nout, cout, vout, nin, cin, vin);
}

PetscErrorCode AmrAdapt(p4est_t *p4est, const signed char *marks, int min_level, int max_level, int nvals,
                        double **vals, AmrTransfer transfer, void *ctx)
{
  adapt_ctx_t ac = {nvals, min_level, max_level, transfer, ctx};
  void *saved = p4est->user_pointer;
  const size_t stride = (size_t)nvals + 1;
  double *nv;

  PetscFunctionBeginUser;
  PetscCheck(p4est->data_size == 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONGSTATE,
             "AmrAdapt needs a forest without cell data");
  p4est_reset_data(p4est, sizeof(double) * stride, NULL, &ac);
  for (p4est_topidx_t t = p4est->first_local_tree, e = 0; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++, e++) {
      double *d = p4est_quadrant_array_index(&tree->quadrants, k)->p.user_data;
      d[0] = marks[e];
      if (nvals) memcpy(d + 1, *vals + (size_t)e * nvals, sizeof(double) * nvals);
    }
  }
  p4est_refine_ext(p4est, 0, max_level, refine_fn, NULL, replace_fn);
  p4est_coarsen_ext(p4est, 0, 0, coarsen_fn, NULL, replace_fn);
  p4est_balance_ext(p4est, P4EST_CONNECT_FULL, NULL, replace_fn);

  PetscCall(PetscMalloc1((size_t)p4est->local_num_quadrants * nvals + 1, &nv));
  for (p4est_topidx_t t = p4est->first_local_tree, e = 0; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++, e++) {
      const double *d = p4est_quadrant_array_index(&tree->quadrants, k)->p.user_data;
      if (nvals) memcpy(nv + (size_t)e * nvals, d + 1, sizeof(double) * nvals);
    }
  }
  p4est_reset_data(p4est, 0, NULL, saved);
  PetscCall(PetscFree(*vals));
  *vals = nv;
  PetscFunctionReturn(0);
}
