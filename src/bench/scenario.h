/** @file scenario.h
 *  Initial load vectors for lbbench. */
#ifndef AMRDLB_SCENARIO_H
#define AMRDLB_SCENARIO_H

#include "balance/balance.h"

/** Fill load[0..g->n) from a scenario spec: point (Lieber et al. 2016 POINT: the
 *  centre rank raised so that avg/max = 0.9; base 0 means 512),
 *  point:RANK:AMOUNT (others get base), box (Lieber et al. 2016 BOX: base everywhere, a box of k_i/2+1 ranks per
 *  dimension around k_i/2 raised so that avg/max = 0.9; base 0 means 512),
 *  random:SEED (base + an integer in 0..100 per rank), file:PATH (one load per
 *  line, # comments).  Errors name the spec or the file. */
lb_err lb_scenario_loads(const lb_graph *g, const char *spec, double base, double *load);

/** Read exactly n non-negative finite numbers, one per line (# comments),
 *  from path into v; `what` names the n items in error messages. */
lb_err lb_read_values(const char *path, int n, const char *what, double *v);

#endif
