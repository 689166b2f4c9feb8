/* Another code's use of the installed balancer on the line of its MPI
 * ranks, all load on rank 0 at the start, each process one rank (the MPI
 * backend): the built-in tree method, then a method of the code's own,
 * registered with lb_method_register and run the same way.
 * mpiexec -n 4 ./example */
#include <stdio.h>
#include <stdlib.h>
#include "balance/balance.h"

/* The code's own method: first-order diffusion with alpha 1/(max degree
 * + 1), each rank publishing its load once a superstep and moving alpha
 * times each difference to its neighbours.  It never stops by itself:
 * lb_params' target stops it. */
static lb_err user_setup(lb_run *run, void **state)
{
  *state = NULL;
  return lb_run_channels(run, 0, 1);
}

static lb_err user_step(lb_run *run, void *state, int lo, int hi)
{
  const lb_graph *g = lb_run_graph(run);
  const double alpha = 1.0 / (g->max_degree + 1);
  double *load = lb_run_load(run), *flow = lb_run_flow(run), *out = lb_pub_out(run);

  (void)state;
  if (lb_run_step(run) > 0) {
    const double *in = lb_pub_in(run);
    for (int r = lo; r < hi; r++) {
      load[r] = in[r];
      for (int e = g->xadj[r]; e < g->xadj[r + 1]; e++) {
        const double f = alpha * (in[r] - in[g->adj[e]]);
        flow[e] += f;
        load[r] -= f;
      }
    }
    lb_run_end_iteration(run, 1);
  }
  for (int r = lo; r < hi; r++) out[r] = load[r];
  return LB_OK;
}

static const lb_method user_diffusion = {
  .name = "user-diffusion",
  .summary = "first-order diffusion, alpha 1/(max degree + 1): the example's own method",
  .flags = LB_CONNECTED | LB_LOCAL,
  .setup = user_setup,
  .step = user_step,
};

/* Balance load0 over the line with the method called name, stopped at
 * avg/max target (0: by the method); rank 0 prints the loads after it.
 * 0 on success. */
static int run(const char *name, double target, const lb_graph *g, const double *load0, int size, int rank)
{
  const lb_method *m = lb_method_find(name);
  lb_params p;
  lb_result res;

  if (!m || lb_params_init(&p, m) != LB_OK) return 1;
  p.backend = LB_BACKEND_MPI;
  p.comm = MPI_COMM_WORLD;
  p.target = target;
  if (lb_balance(g, m, &p, load0, &res) != LB_OK) return 1;
  if (rank == 0) {
    printf("loads after %s on %d ranks:", name, size);
    for (int r = 0; r < size; r++) printf(" %.2f", res.load[r]);
    printf("\n");
  }
  lb_result_free(&res);
  return 0;
}

int main(int argc, char **argv)
{
  lb_graph *g = NULL;
  char spec[32];
  double *load0;
  int rank, size, rc = 1;

  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  /* every process passes every rank's load; each balances its own */
  load0 = calloc((size_t)size, sizeof *load0);
  load0[0] = size;
  snprintf(spec, sizeof spec, "line:%d", size);
  if (lb_graph_create(spec, &g) == LB_OK && !run("tree", 0, g, load0, size, rank) &&
      lb_method_register(user_diffusion.name, &user_diffusion) == LB_OK && !run("user-diffusion", 0.999, g, load0, size, rank))
    rc = 0;
  if (rc) fprintf(stderr, "example: %s\n", lb_errmsg());
  lb_graph_destroy(&g);
  free(load0);
  MPI_Finalize();
  return rc;
}
