/* Another code's use of the installed balancer: the tree method on a line
 * of 4 ranks from all load on rank 0 (virtual backend, one process). */
#include <stdio.h>
#include "balance/balance.h"

int main(int argc, char **argv)
{
  const double load0[4] = {4, 0, 0, 0};
  const lb_method *m;
  lb_graph *g = NULL;
  lb_params p;
  lb_result res;
  int rc = 1;

  MPI_Init(&argc, &argv);
  m = lb_method_find("tree");
  if (m && lb_graph_create("line:4", &g) == LB_OK && lb_params_init(&p, m) == LB_OK && lb_balance(g, m, &p, load0, &res) == LB_OK) {
    printf("loads after tree: %g %g %g %g\n", res.load[0], res.load[1], res.load[2], res.load[3]);
    lb_result_free(&res);
    rc = 0;
  } else {
    fprintf(stderr, "example: %s\n", lb_errmsg());
  }
  lb_graph_destroy(&g);
  MPI_Finalize();
  return rc;
}
