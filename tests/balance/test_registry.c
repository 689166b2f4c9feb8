/* The method registry open to users (lb_method_register): the 14 built-in
 * methods are registered through it; a user's method is found, listed and
 * run; a taken name, a name unlike the table's and a table without a step
 * are refused with a reason; an unknown name's reason lists the user's
 * method too. */
#include <string.h>

#include "check.h"
#include "balance/balance.h"

static lb_err mine_setup(lb_run *run, void **state)
{
  *state = NULL;
  return lb_run_channels(run, 0, 0);
}

/* Every rank's load to the average at once: the graph's total is known
 * because every rank starts with 1 more than its index (line:4: 1..4). */
static lb_err mine_step(lb_run *run, void *state, int lo, int hi)
{
  const lb_graph *g = lb_run_graph(run);
  double *load = lb_run_load(run);

  (void)state;
  for (int r = lo; r < hi; r++) load[r] = (g->n + 1) / 2.0;
  lb_run_stop(run, LB_STOP_CONVERGED);
  return LB_OK;
}

static const lb_method mine = {.name = "mine", .summary = "a user's method", .flags = LB_TERMINATES, .setup = mine_setup, .step = mine_step};
static const lb_method stepless = {.name = "stepless", .summary = "no step"};

int main(void)
{
  const int builtin = lb_method_count();
  lb_graph *g = NULL;
  lb_params p;
  lb_result res;
  const double load0[4] = {1, 2, 3, 4};

  CHECK_EQ(builtin, 14);
  CHECK(lb_method_find("tree") != NULL);
  CHECK(lb_method_register("mine", &mine) == LB_OK);
  CHECK_EQ(lb_method_count(), builtin + 1);
  CHECK(lb_method_get(builtin) == &mine);
  CHECK(lb_method_find("mine") == &mine);

  CHECK(lb_method_register("mine", &mine) == LB_ERR_ARG);
  CHECK_MSG(strstr(lb_errmsg(), "'mine' is registered already") != NULL, "%s", lb_errmsg());
  CHECK(lb_method_register("tree", &mine) == LB_ERR_ARG);
  CHECK_MSG(strstr(lb_errmsg(), "has the name 'mine' in its table") != NULL, "%s", lb_errmsg());
  CHECK(lb_method_register("stepless", &stepless) == LB_ERR_ARG);
  CHECK_MSG(strstr(lb_errmsg(), "'stepless' has no step") != NULL, "%s", lb_errmsg());
  CHECK_EQ(lb_method_count(), builtin + 1);

  CHECK(lb_method_find("nope") == NULL);
  CHECK_MSG(strstr(lb_errmsg(), "unknown method 'nope'") && strstr(lb_errmsg(), ", mine)"), "%s", lb_errmsg());

  if (CHECK(lb_graph_create("line:4", &g) == LB_OK) && CHECK(lb_params_init(&p, &mine) == LB_OK) &&
      CHECK(lb_balance(g, &mine, &p, load0, &res) == LB_OK)) {
    for (int r = 0; r < 4; r++) CHECK_NEAR(res.load[r], 2.5, 0);
    lb_result_free(&res);
  }
  lb_graph_destroy(&g);
  printf("registry: %d built-in methods, %d checks failed\n", builtin, check_failures);
  return check_failures != 0;
}
