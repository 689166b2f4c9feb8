/* Quality metrics of a balancing result, in the definitions of the papers (src/balance/README.md, References):
 * I% of Niemoeller et al. 2020, the L2 distance of Horton 1993 Table 5, TransferTot and
 * TransferMax of Lieber et al. 2016. */
#include "balance/balance.h"

#include <math.h>
#include <stdlib.h>

static int ascending(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void lb_sort_values(int n, double *x) { qsort(x, (size_t)n, sizeof *x, ascending); }

double lb_quantile_sorted(const double *x, int n, double q)
{
  const double at = q * (n - 1);
  const int i = (int)at;
  return i + 1 < n ? x[i] + (at - i) * (x[i + 1] - x[i]) : x[n - 1];
}

void lb_metrics_loads(int n, const double *load, lb_metrics *mt)
{
  double sum = 0, mx = -HUGE_VAL;
  for (int r = 0; r < n; r++) {
    sum += load[r];
    if (load[r] > mx) mx = load[r];
  }
  double avg = sum / n, l2 = 0;
  for (int r = 0; r < n; r++) l2 += (load[r] - avg) * (load[r] - avg);
  mt->max_over_avg = avg > 0 ? mx / avg : 1.0;
  mt->imbalance_pct = (n > 1 && mx > 0) ? 100.0 * (mx - avg) * n / (mx * (n - 1)) : 0.0;
  mt->l2_imbalance = sqrt(l2);
  mt->transfer_tot = mt->transfer_max = mt->migrated_units = mt->unit_hops = 0;
}

lb_err lb_metrics_compute(const lb_result *res, lb_metrics *mt)
{
  if (!res || !res->load || !res->flow) return lb_error(LB_ERR_ARG, "metrics of an empty result");
  lb_metrics_loads(res->n, res->load, mt);
  double total = 0, tot = 0, mx = 0, moved = 0;
  for (int r = 0; r < res->n; r++) {
    total += res->load[r];
    if (res->load0[r] > res->load[r]) moved += res->load0[r] - res->load[r];
  }
  for (int k = 0; k < res->m; k++) {
    tot += fabs(res->flow[k]);
    if (fabs(res->flow[k]) > mx) mx = fabs(res->flow[k]);
  }
  mt->transfer_tot = total > 0 ? tot / total : 0;
  mt->transfer_max = total > 0 ? mx / (total / res->n) : 0;
  mt->migrated_units = moved;
  /* A flow crossing k edges is handed over k times; a direct transfer once. */
  mt->unit_hops = tot;
  if (res->ntransfers > 0) {
    mt->unit_hops = 0;
    for (int i = 0; i < res->ntransfers; i++) mt->unit_hops += res->transfer[i].amount;
  }
  return LB_OK;
}
