/* sfc and sfc-shift (Niemoeller et al. 2020) on the loads of the chain of ranks
 * 0 - 1 - ... - n-1. Both are offset shifting on the share axis
 * (lb_curve_shift_bounds in curve.c) with every rank's load standing for
 * both its measured load and its weight: sfc is one shift with penalty 1
 * (the full chains-on-chains cut), sfc-shift one shift per iteration with
 * -lb_penalty. Here, as in lbbench, no timing exists, so the loads are
 * their own measurement; on a curve with measured times (the app, lbbench
 * on a trace) sfc-shift's shift hook runs the balancing sequence instead
 * (lb_curve_shifter_step, lbcurve.h). */
#include "balance/balance.h"
#include "balance/lbcurve.h"
#include "balance/impl/lbcall.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  double penalty;
} sfc_state;

static void sfc_destroy(void *p) { free(p); }

static lb_err setup(lb_run *run, void **state, const char *name, double penalty)
{
  const lb_graph *g = lb_run_graph(run);
  sfc_state *s = calloc(1, sizeof *s);
  if (!s) return lb_error(LB_ERR_MEM, "out of memory");
  *state = s;
  if (!(penalty >= 1.0) || isinf(penalty)) return lb_error(LB_ERR_ARG, "-lb_penalty %g must be finite and at least 1", penalty);
  for (int r = 0; r + 1 < g->n; r++)
    if (lb_graph_edge(g, r, r + 1) < 0)
      return lb_error(LB_ERR_UNSUPPORTED, "method '%s' moves load along the chain of ranks, but graph '%s' has no edge %d-%d (use line:N or ring:N)",
                      name, g->spec, r, r + 1);
  s->penalty = penalty;
  return lb_run_channels(run, 0, 0);
}

static lb_err sfc_setup(lb_run *run, void **state) { return setup(run, state, "sfc", 1.0); }

static lb_err exact_setup(lb_run *run, void **state) { return setup(run, state, "sfc-exact", 1.0); }

/* -lb_hiersfc_groups G for nparts parts: a whole number from 1 to nparts,
 * or -1 (PETSc's PETSC_DECIDE) for ceil(sqrt(nparts)) (below). */
static lb_err hier_groups(double G, int nparts, int *groups)
{
  if (G == -1.0) {
    int g = (int)ceil(sqrt((double)nparts));
    *groups = g < nparts ? g : nparts;
    return LB_OK;
  }
  if (!(G >= 1.0) || G != floor(G) || G > nparts)
    return lb_error(LB_ERR_ARG, "-lb_hiersfc_groups %g: the number of groups must be a whole number from 1 to the %d ranks (or -1: ceil(sqrt(%d)))", G,
                    nparts, nparts);
  *groups = (int)G;
  return LB_OK;
}

static lb_err hier_setup(lb_run *run, void **state)
{
  int groups = 1;
  LB_CALL(hier_groups(lb_run_params(run)->opt[0], lb_run_graph(run)->n, &groups));
  return setup(run, state, "hiersfc", 1.0);
}

static lb_err shift_setup(lb_run *run, void **state) { return setup(run, state, "sfc-shift", lb_run_params(run)->opt[0]); }

/* With the loads as the weights the share axis is the weight axis over
 * the mean m, so lb_curve_shift_bounds' stop of offset j, T_j = L_j -
 * (L_j - j) / f, lies at weight W_j - (W_j - j m) / f, W_j the load of
 * ranks 0..j-1: the flow across edge (j-1, j) is (W_j - j m) / f. A rank
 * needs only the prefix sums at its two cuts and the total, one exact scan
 * (lb_run_scan_loads), never the other ranks' loads; the scan's sum at a
 * cut is the same number on the ranks either side, so the flows agree and
 * the load is conserved. */
static lb_err sfc_step(lb_run *run, void *state, int lo, int hi)
{
  sfc_state *s = state;
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run), *flow = lb_run_flow(run), total;
  const double *prefix;
  int n = g->n, moved = 0;
  LB_CALL(lb_run_scan_loads(run, &prefix, &total));
  const double mean = total / n;
  for (int r = lo; r < hi; r++) {
    double left = r > 0 ? (prefix[r - lo] - r * mean) / s->penalty : 0.0;
    double right = r + 1 < n ? (prefix[r - lo + 1] - (r + 1) * mean) / s->penalty : 0.0;
    if (right != 0.0) moved = 1;
    if (r + 1 < n) flow[lb_graph_edge(g, r, r + 1)] += right;
    if (r > 0) flow[lb_graph_edge(g, r, r - 1)] -= left;
    load[r] = load[r] - right + left;
  }
  /* sfc's one shift ends the run; sfc-shift's ends it once no cut moves */
  if (s->penalty != 1.0) LB_CALL(lb_run_any(run, &moved));
  lb_run_end_iteration(run, moved);
  if (!moved || s->penalty == 1.0) lb_run_stop(run, LB_STOP_CONVERGED);
  return LB_OK;
}

static const lb_option shift_options[] = {
  {"penalty", 1.25, "penalty factor f >= 1 of the offset shifting (Niemoeller et al. 2020); 1 gives the full sfc cut"},
};

const lb_method lb_method_sfc = {
  .name = "sfc",
  .summary = "chains-on-chains split of the chain of ranks into equal loads (Niemoeller et al. 2020)",
  .flags = LB_TERMINATES,
  .setup = sfc_setup,
  .step = sfc_step,
  .destroy = sfc_destroy,
};

const lb_method lb_method_sfc_shift = {
  .name = "sfc-shift",
  .summary = "Niemoeller offset shifting with a penalty factor, one shift per iteration (Niemoeller et al. 2020)",
  .options = shift_options,
  .noptions = 1,
  .setup = shift_setup,
  .step = sfc_step,
  .destroy = sfc_destroy,
  .shift = lb_curve_shifter_step,
};

static lb_err exact_partition(const lb_params *p, MPI_Comm comm, int64_t n, const double *w, int nparts, lb_curve_result *res)
{
  (void)p;
  return lb_curve_exact(comm, n, w, nparts, res);
}

static lb_err hier_partition(const lb_params *p, MPI_Comm comm, int64_t n, const double *w, int nparts, lb_curve_result *res)
{
  int groups = 1;
  LB_CALL(hier_groups(p->opt[0], nparts, &groups));
  return lb_curve_hier(comm, n, w, nparts, groups, res);
}

const lb_method lb_method_sfc_exact = {
  .name = "sfc-exact",
  .summary = "the exact 1D partition of the curve: least largest part over contiguous cuts of whole cells (Pinar and Aykanat 2004)",
  .flags = LB_TERMINATES,
  .setup = exact_setup,
  .step = sfc_step,
  .destroy = sfc_destroy,
  .partition = exact_partition,
};

/* The group count's default: Lieber and Nagel 2014 leave G to the user
 * (groups trade the roots' gathered pieces, about P/G ranks' cells, against
 * the coarse split's quality); ceil(sqrt(P)) makes both levels P^(1/2). */
static const lb_option hier_options[] = {
  {"hiersfc_groups", -1.0, "number of groups G of HierSFC (Lieber and Nagel 2014), 1 (the exact partition) to P (sfc); -1: ceil(sqrt(P))"},
};

const lb_method lb_method_hiersfc = {
  .name = "hiersfc",
  .summary = "HierSFC: sfc's prefix-sum split into groups of ranks, the exact partition inside each group (Lieber and Nagel 2014)",
  .options = hier_options,
  .noptions = 1,
  .flags = LB_TERMINATES,
  .setup = hier_setup,
  .step = sfc_step,
  .destroy = sfc_destroy,
  .partition = hier_partition,
};
