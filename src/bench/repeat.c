/* Lieber et al. 2016's timing protocol: "after an initial run to determine the
 * number of iterations, we run (without checking the criterion) 61
 * repetitions ... and report the median run time", with 25/75 percentiles
 * as error bars; and the other parts of a run's report that chain and task
 * mode share. */
#include "bench/repeat.h"


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

lb_spread lb_spread_of(double *t, int n)
{
  lb_sort_values(n, t);
  lb_spread s = {lb_quantile_sorted(t, n, 0.5), lb_quantile_sorted(t, n, 0.25), lb_quantile_sorted(t, n, 0.75), t[0], t[n - 1]};
  return s;
}

void json_spread(json_line *j, const char *name, const lb_spread *s)
{
  static const char *const field[] = {"median", "p25", "p75", "min", "max"};
  const double v[] = {s->median, s->p25, s->p75, s->min, s->max};
  char key[96];
  for (int i = 0; i < 5; i++) {
    snprintf(key, sizeof key, "%s_%s_s", name, field[i]);
    json_real(j, key, v[i]);
  }
}

void json_spectrum(json_line *j, const lb_result *r)
{
  if (r->spectrum_exact < 0) {
    json_null(j, "spectrum");
    json_null(j, "spectrum_exact");
    return;
  }
  json_reals(j, "spectrum", 2, r->spectrum);
  json_bool(j, "spectrum_exact", r->spectrum_exact);
}

void lb_print_spectrum(const lb_result *r)
{
  if (r->spectrum_exact < 0) return;
  printf("  Laplacian interval [%.6g, %.6g]%s\n", r->spectrum[0], r->spectrum[1],
         r->spectrum_exact ? "" : " (lambda_2 estimated: the smallest Ritz value, Lanczos did not converge it)");
}

void json_run_header(json_line *j, FILE *f, const char *method, const char *graph, int ranks, const char *backend, const char *scenario)
{
  json_begin(j, f);
  json_str(j, "method", method);
  json_str(j, "graph", graph);
  json_int(j, "ranks", ranks);
  json_str(j, "backend", backend);
  json_str(j, "scenario", scenario);
}
