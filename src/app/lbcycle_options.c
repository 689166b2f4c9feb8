/* The -lb_* options of the balancing step: the balancer's own through the
 * reader lbbench shares (lboptions/), then the cycle's: weights, schedule,
 * processor graph, initial partition, load trace; and the name of the
 * method they chose. */
#include "app/impl/lbcycle.h"
#include "lboptions/lboptions.h"
#include "util/options.h"

#include <string.h>

const char *const amr_lb_weight_names[] = {"count", "timing", "model", "measured", "phases"};

static const char *const graph_names[] = {"line", "ring"}, *const initial_names[] = {"even", "skew"};

/* What the app's balancer options differ in from lbbench's: a cycle must
 * end, so the method stops at 99% balance or after 1000 iterations, and
 * "none" measures without balancing. */
static const AmrLbExtraMethod app_extra[] = {{.name = "none", .summary = "no balancing: measure and report only"}};
static const AmrLbMethodDefaults app_defaults = {.program = AMR_PROGRAM, .method = "sfc", .target = 0.99, .max_iters = 1000, .nextra = 1, .extra = app_extra};

/* -lb_weights, -lb_cost and the timing fit's -lb_window, -lb_trim,
 * -lb_history, -lb_forget. */
#define AMR_LB_MAX_COST 1e100
#define AMR_LB_MAX_WINDOW (1 << 20)

static PetscErrorCode read_weights(PetscOptionItems *PetscOptionsObject, AmrLbOptions *o)
{
  MPI_Comm comm = PetscOptionsObject->comm;
  const int ntypes = o->ntypes;
  PetscReal cost[AMR_LB_MAX_TYPES + 1], trim = 0.25, forget = 0.9;
  PetscInt ncost = AMR_LB_MAX_TYPES + 1, window = 10, history = 32;
  PetscBool cost_set;
  int weights = AMR_LB_COUNT;

  PetscFunctionBeginUser;
  for (int t = 0; t <= AMR_LB_MAX_TYPES; t++) cost[t] = 1.0;
  PetscCall(AmrOptionsChoice(PetscOptionsObject, "-lb_weights",
                             "Cell weights: count (every cell 1), timing (least squares on the problem's timed steps, Niemoeller et al. 2020), model (-lb_cost), measured (each cell its own measured cost; problems that time their cells) or phases (least squares per phase of the cycle; the cut of least modelled cycle time, the sum over phases of the slowest rank)",
                             "weight mode", 5, amr_lb_weight_names, &weights, NULL));
  AMR_OPTION("-lb_cost", PetscOptionsRealArray("-lb_cost", "Cost per load type, comma separated: the model weights, and timing's weights until a fit succeeds", NULL,
                                               cost, &ncost, &cost_set));
  AMR_OPTION("-lb_window", PetscOptionsInt("-lb_window", "timing and phases: number of last timed steps (samples of a phase) the fit uses", NULL, window, &window, NULL));
  AMR_OPTION("-lb_trim", PetscOptionsReal("-lb_trim", "timing and phases: fraction cut from each end of the sorted window (truncated mean)", NULL, trim, &trim, NULL));
  AMR_OPTION("-lb_history", PetscOptionsInt("-lb_history", "timing and phases: number of last windows (one per cycle) whose rows the fit stacks", NULL, history, &history, NULL));
  AMR_OPTION("-lb_forget", PetscOptionsReal("-lb_forget", "timing and phases: forgetting factor, a window k cycles old weighs forget^k in the fit", NULL, forget, &forget, NULL));
  PetscCheck(!cost_set || ncost == ntypes, comm, PETSC_ERR_USER_INPUT,
             "option -lb_cost: needs %d value%s, one cost per load type of this problem, got %d", ntypes, ntypes > 1 ? "s" : "", (int)ncost);
  for (int t = 0; t < ntypes; t++) {
    o->cost[t] = cost_set ? cost[t] : 1.0;
    PetscCheck(o->cost[t] > 0 && isfinite(o->cost[t]), comm, PETSC_ERR_USER_INPUT, "option -lb_cost: cost %g of load type %d must be positive", o->cost[t], t);
    /* the weights of every cell are summed along the curve (and squared):
     * a cost beyond this overflows them on a large forest */
    PetscCheck(o->cost[t] <= AMR_LB_MAX_COST, comm, PETSC_ERR_USER_INPUT,
               "option -lb_cost: cost %g of load type %d is above %g, beyond which the sums of the cells' weights overflow", o->cost[t], t, AMR_LB_MAX_COST);
  }
  PetscCheck(window >= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_window %" PetscInt_FMT ": must be at least 1", window);
  /* every fitted phase keeps a window of samples per load type in memory */
  PetscCheck(window <= AMR_LB_MAX_WINDOW, comm, PETSC_ERR_USER_INPUT,
             "option -lb_window %" PetscInt_FMT ": at most %d samples (a window per fitted phase is kept in memory)", window, AMR_LB_MAX_WINDOW);
  PetscCheck(trim >= 0 && trim < 0.5, comm, PETSC_ERR_USER_INPUT, "option -lb_trim %g: must be in [0, 0.5)", (double)trim);
  PetscCheck(history >= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_history %" PetscInt_FMT ": must be at least 1", history);
  PetscCheck(forget > 0 && forget <= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_forget %g: must be in (0, 1]", (double)forget);
  o->weights = (AmrLbWeights)weights;
  o->window = (int)window;
  o->trim = trim;
  o->history = (int)history;
  o->forget = forget;
  PetscFunctionReturn(0);
}

/* When and where the method runs: -lb_interval, -lb_threshold, -lb_graph,
 * -lb_initial, -trace_loads, and -lb_mpi_profile. */
static PetscErrorCode read_schedule(PetscOptionItems *PetscOptionsObject, AmrLbOptions *o)
{
  MPI_Comm comm = PetscOptionsObject->comm;
  PetscInt interval = 1;
  PetscReal threshold = 0;
  PetscBool threshold_set, profile = PETSC_TRUE;
  int graph = 0, initial = 0;

  PetscFunctionBeginUser;
  AMR_OPTION("-lb_interval", PetscOptionsInt("-lb_interval", "Balance every K-th cycle", NULL, interval, &interval, NULL));
  AMR_OPTION("-lb_threshold", PetscOptionsReal("-lb_threshold", "PCT: balance only when the imbalance I% (measured, or predicted for the adapted mesh) exceeds PCT and the time lost to imbalance since the last rebalance reaches the predicted migration cost (rank-s); not given: balance every -lb_interval-th cycle",
                                               NULL, threshold, &threshold, &threshold_set));
  PetscCall(AmrOptionsChoice(PetscOptionsObject, "-lb_graph",
                             "Processor graph of the method: line (the ranks along the curve) or ring (the line closed; cells still move along the curve)", "graph", 2,
                             graph_names, &graph, NULL));
  PetscCall(AmrOptionsChoice(PetscOptionsObject, "-lb_initial",
                             "Initial partition: even (equal cell counts) or skew (equal counts of type-0 cells, the other types left where the curve puts them)",
                             "initial partition", 2, initial_names, &initial, NULL));
  AMR_OPTION("-trace_loads", PetscOptionsString("-trace_loads", "Append the weighted curve the balancer saw in every cycle to FILE (binary; lbbench -scenario trace:FILE replays it)",
                                                NULL, o->trace, o->trace, sizeof o->trace, NULL));
  PetscCall(AmrOptionsSwitch(PetscOptionsObject, "-lb_mpi_profile",
                             "Subtract each rank's time inside MPI (its waits, measured by the MPI profiling layer) from every phase's time: own work; "
                             "false: whole thread time, which measures what the layer costs",
                             &profile));
  lb_mpi_profile(profile);
  PetscCheck(interval >= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_interval %" PetscInt_FMT ": must be at least 1", interval);
  PetscCheck(!threshold_set || (threshold >= 0 && threshold < 100), comm, PETSC_ERR_USER_INPUT, "option -lb_threshold %g: must be a percentage in [0, 100)",
             (double)threshold);
  o->interval = (int)interval;
  o->threshold = threshold_set ? threshold : -1;
  o->ring = graph == 1;
  o->skew = initial == 1;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbOptionsRead(MPI_Comm comm, int ntypes, AmrLbOptions *o)
{
  AmrLbMethodChoice method;

  PetscFunctionBeginUser;
  memset(o, 0, sizeof *o);
  o->ntypes = ntypes;
  PetscOptionsBegin(comm, NULL, "Load balancing (the cycle's weigh and balance steps)", NULL);
  PetscCall(AmrLbMethodOptionsRead(PetscOptionsObject, &app_defaults, &method));
  PetscCall(read_weights(PetscOptionsObject, o));
  PetscCall(read_schedule(PetscOptionsObject, o));
  PetscOptionsEnd();
  o->method = method.method;
  if (o->method) {
    o->params = method.params;
    o->params.backend = LB_BACKEND_MPI;
    o->params.comm = comm;
  }
  PetscFunctionReturn(0);
}

const char *AmrLbMethodName(const AmrLb lb) { return lb->o.method ? lb->o.method->name : "none"; }
