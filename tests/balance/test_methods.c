/* Every registered method on several graphs (virtual backend): load is
 * conserved (exactly for whole units, to 1e-12 relative otherwise), the
 * flows explain every final load, whole-unit methods stay integral, and
 * tree and multilevel reach floor/ceil of the average where they must.
 * Methods that accept injected load get some at later steps and must still
 * end level (Ripple's superposition). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "check.h"

static unsigned long long rng = 0x2545F4914F6CDD1Dull;
static unsigned next(void)
{
  rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
  return (unsigned)(rng >> 11);
}

static void check_run(const lb_graph *g, const lb_method *m, const lb_params *p, const lb_result *res, double total)
{
  int integral = (m->flags & LB_INTEGRAL) != 0;
  double tol = integral ? 0 : 1e-12 * total;
  double *net = calloc((size_t)g->n, sizeof *net), sum = 0;
  for (int k = 0; k < g->m; k++) { net[g->eu[k]] -= res->flow[k]; net[g->ev[k]] += res->flow[k]; }
  for (int i = 0; i < p->ninject; i++) net[p->inject[i].rank] += p->inject[i].amount;
  for (int r = 0; r < g->n; r++) {
    sum += res->load[r];
    if (!CHECK_MSG(!(fabs(res->load0[r] + net[r] - res->load[r]) > (integral ? 0 : 1e-12 * total + 1e-12)),
                   "%s on %s: rank %d: flows give %.17g, load is %.17g", m->name, g->spec, r, res->load0[r] + net[r], res->load[r]))
      break;
    if (integral) CHECK_MSG(res->load[r] == floor(res->load[r]), "%s on %s: rank %d load %g not integral", m->name, g->spec, r, res->load[r]);
  }
  CHECK_MSG(!(fabs(sum - total) > tol), "%s on %s: total %.17g, expected %.17g", m->name, g->spec, sum, total);
  if (strcmp(m->name, "tree") == 0 || (strcmp(m->name, "multilevel") == 0 && g->kind == LB_GRAPH_LINE)) {
    double q = floor(total / g->n);
    for (int r = 0; r < g->n; r++)
      if (!CHECK_MSG(res->load[r] == q || res->load[r] == q + 1, "%s on %s: rank %d ends with %g, not floor/ceil of the average", m->name, g->spec, r,
                     res->load[r]))
        break;
  }
  free(net);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *specs[] = {"line:64", "line:37", "ring:33", "mesh2d:8x8", "mesh2d:5x3", "mesh3d:4x4x4", "torus3d:3x4x5", "hypercube:6", "tree:40:3"};
  int runs = 0;
  for (int s = 0; s < 9; s++) {
    lb_graph *g;
    if (!CHECK_MSG(lb_graph_create(specs[s], &g) == LB_OK, "%s: %s", specs[s], lb_errmsg())) break;
    double *load = malloc((size_t)g->n * sizeof *load), total = 0;
    for (int r = 0; r < g->n; r++) total += load[r] = next() % 50;
    for (int i = 0; i < lb_method_count(); i++) {
      const lb_method *m = lb_method_get(i);
      lb_params p;
      lb_result res;
      lb_params_init(&p, m);
      if (!(m->flags & LB_TERMINATES)) p.max_iters = 200;
      const lb_inject inj[3] = {{4, 0, 100}, {9, g->n / 2, 30.5}, {9, g->n - 1, 7}};
      if (m->flags & LB_INJECT) { p.inject = inj; p.ninject = 3; }
      lb_err err = lb_balance(g, m, &p, load, &res);
      if (err == LB_ERR_UNSUPPORTED) { printf("  %s on %s: not applicable (%s)\n", m->name, specs[s], lb_errmsg()); continue; }
      if (!CHECK_MSG(!err, "%s on %s: %s", m->name, specs[s], lb_errmsg())) continue;
      lb_metrics mt;
      lb_metrics_compute(&res, &mt);
      printf("%-20s %-14s its %5d rounds %5lld max/avg %.6f\n", m->name, specs[s], res.iterations, res.rounds, mt.max_over_avg);
      check_run(g, m, &p, &res, total + res.injected);
      if ((m->flags & LB_INJECT) && (m->flags & LB_TERMINATES))
        CHECK_MSG(!(mt.max_over_avg - 1 > 1e-12), "%s on %s: not level after injections, max/avg - 1 = %g", m->name, specs[s], mt.max_over_avg - 1);
      lb_result_free(&res);
      runs++;
    }
    free(load);
    lb_graph_destroy(&g);
  }
  printf("%s: %d runs\n", check_failures ? "FAILED" : "all methods conserve load", runs);
  MPI_Finalize();
  return check_failures != 0;
}
