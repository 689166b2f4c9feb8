/* Seed 001's timing protocol: "after an initial run to determine the
 * number of iterations, we run (without checking the criterion) 61
 * repetitions ... and report the median run time", with 25/75 percentiles
 * as error bars. */
#include "repeat.h"

#include <stdlib.h>

lb_params lb_repeat_params(const lb_method *m, const lb_params *p, const lb_result *first)
{
  lb_params q = *p;
  q.observer = NULL;
  q.observer_ctx = NULL;
  q.track_costs = 0;
  if (!(m->flags & LB_TERMINATES) && first->iterations > 0) {
    q.target = 0;
    q.max_iters = first->iterations;
  }
  return q;
}

static int by_value(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Linear interpolation between the order statistics of sorted t[0..n). */
static double quantile(const double *t, int n, double q)
{
  double x = q * (n - 1);
  int i = (int)x;
  return i + 1 < n ? t[i] + (x - i) * (t[i + 1] - t[i]) : t[n - 1];
}

lb_spread lb_spread_of(double *t, int n)
{
  qsort(t, (size_t)n, sizeof *t, by_value);
  lb_spread s = {quantile(t, n, 0.5), quantile(t, n, 0.25), quantile(t, n, 0.75), t[0], t[n - 1]};
  return s;
}

void json_spread(FILE *f, const char *name, const lb_spread *s)
{
  fprintf(f, "\"%s_median_s\":%.9g,\"%s_p25_s\":%.9g,\"%s_p75_s\":%.9g,\"%s_min_s\":%.9g,\"%s_max_s\":%.9g,", name, s->median, name, s->p25,
          name, s->p75, name, s->min, name, s->max);
}
