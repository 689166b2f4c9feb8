/** @file repeat.h
 *  Lieber et al. 2016's timing protocol for lbbench: an initial run finds the
 *  iteration count; repetitions run that count without the stop check and
 *  report the median run time and the spread.  Also the report fields the
 *  modes share: a run's line header and its spectral interval. */
#ifndef AMRDLB_REPEAT_H
#define AMRDLB_REPEAT_H

#include <stdio.h>

#include "balance/balance.h"
#include "util/json.h"

/** Start a report line of lbbench on f (json_begin) with the fields every
 *  run has: method, graph, ranks, backend, scenario. */
void json_run_header(json_line *j, FILE *f, const char *method, const char *graph, int ranks, const char *backend, const char *scenario);

/** Median, quartiles and extremes of a set of run times. */
typedef struct { double median, p25, p75, min, max; } lb_spread;

/** The parameters of a repetition of the run that gave `first` with p:
 *  its iteration count and no target (methods that stop by themselves, and
 *  runs of no iteration, keep p's stopping rule); no observer, no costs. */
lb_params lb_repeat_params(const lb_method *m, const lb_params *p, const lb_result *first);

/** Sort t[0..n) (n >= 1) and return its spread (quartiles interpolated). */
lb_spread lb_spread_of(double *t, int n);

/** The fields NAME_median_s, NAME_p25_s, NAME_p75_s, NAME_min_s, NAME_max_s. */
void json_spread(json_line *j, const char *name, const lb_spread *s);

/** The fields spectrum ([lambda_min, lambda_max] of the Laplacian the
 *  method set up with) and spectrum_exact (false: lambda_2 estimated), both
 *  null for a method that uses none. */
void json_spectrum(json_line *j, const lb_result *r);

/** The human line of the same, printed only for a method that uses one. */
void lb_print_spectrum(const lb_result *r);

#endif
