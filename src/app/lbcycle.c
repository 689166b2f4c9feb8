/* The balancing step of the AMR cycle: window of timed steps -> weights ->
 * method in chain mode -> cells per rank -> families kept together ->
 * decision -> p4est_partition_given with the cell data.  This file holds
 * the balancer's life and the sequence of one step; each job is a file of
 * its own (app/impl/lbcycle.h).  Compiled for 2D and 3D. */
#include "app/impl/lbcycle.h"
#include "balance/lbchain.h"

#include <string.h>

/* A trial on even loads: a method that cannot run on this graph, or an
 * out-of-range method option, fails here, before any cycle. */
static PetscErrorCode trial(AmrLb lb)
{
  double *load;
  lb_result res;
  lb_err err;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(lb->size, &load));
  for (int r = 0; r < lb->size; r++) load[r] = LB_CHAIN_UNITS;
  err = lb_balance(lb->graph, lb->o.method, &lb->o.params, load, &res);
  PetscCall(PetscFree(load));
  if (!err) lb_result_free(&res);
  PetscCheck(!err, lb->comm, PETSC_ERR_USER_INPUT, "option -lb_method %s: %s%s", lb->o.method->name, lb_errmsg(), lb->o.ring ? " (-lb_graph ring)" : "");
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbCreate(MPI_Comm comm, const AmrLbOptions *o, AmrLb *out)
{
  AmrLb lb;
  char spec[32];

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(1, &lb));
  lb->o = *o;
  lb->comm = comm;
  PetscCallMPI(MPI_Comm_size(comm, &lb->size));
  PetscCallMPI(MPI_Comm_rank(comm, &lb->rank));
  PetscCall(AmrLbWindowCreate(lb, &lb->timing));
  lb->cost = lb->timing.cost;
  /* no phases until AmrLbPhasesSet: a program may drive the steps alone */
  lb->current = -1;
  lb->predicted_next = lb->predicted_next_ipct = NAN;
  lb->balance_phase = -1;
  lb->t_start = MPI_Wtime();
  lb_migration_model_init(&lb->migration);
  lb_decide_init(&lb->decide);
  if (o->trace[0]) PetscCall(AmrTraceOpen(comm, o->trace, &lb->trace));
  *out = lb;
  if (!o->method) PetscFunctionReturn(0);
  lb->shifting = o->method->shift != NULL;
  if (lb->shifting) AMR_LB_CHECK(comm, lb_curve_shifter_init(&lb->shifter, lb->size, o->params.opt[0]));
  PetscCall(PetscSNPrintf(spec, sizeof spec, "%s:%d", o->ring ? "ring" : "line", lb->size));
  AMR_LB_CHECK(comm, lb_graph_create(spec, &lb->graph));
  PetscCall(trial(lb));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbDestroy(AmrLb *lb)
{
  PetscFunctionBeginUser;
  if (!*lb) PetscFunctionReturn(0);
  lb_graph_destroy(&(*lb)->graph);
  PetscCall(AmrTraceClose(&(*lb)->trace));
  PetscCall(AmrLbWindowDestroy(&(*lb)->timing));
  PetscCall(AmrLbPhasesDestroy(*lb));
  if ((*lb)->shifting) lb_curve_shifter_free(&(*lb)->shifter);
  PetscCall(PetscFree((*lb)->cell_cost));
  PetscCall(PetscFree(*lb));
  PetscFunctionReturn(0);
}

/* A new record of cycle cycle: nothing measured or moved yet. */
static void record_open(AmrLb lb, int cycle, AmrLbRecord *r)
{
  memset(r, 0, sizeof *r);
  r->cycle = cycle;
  r->nranks = lb->size;
  r->lb_target_iteration = -1;
  r->cut_cells = r->cut_migrated_cells = -1;
  r->part_load_optimum = NAN; /* the chain's when the method runs on it (AmrLbPropose) */
}

PetscErrorCode AmrLbBalance(AmrLb lb, p4est_t *p4est, const int *types, int cycle, PetscBool allow, int nfields, const AmrField *fields,
                            AmrLbRecord *r)
{
  const int P = lb->size;
  AmrLbStep s = {.p4est = p4est, .types = types, .decision = LB_DECIDE_REBALANCE};

  PetscFunctionBeginUser;
  record_open(lb, cycle, r);
  PetscCall(PetscMalloc5(P, &s.before, P, &s.after, P, &s.cur, P, &s.next, P, &s.counts));
  s.t0 = MPI_Wtime();
  lb->balance_phase = lb->current;
  PetscCall(AmrLbMeasure(lb, r));
  PetscCall(AmrLbWeigh(lb, &s, r));
  PetscCall(AmrLbAccount(lb, r));
  s.eligible = allow && lb->o.method && (cycle + 1) % lb->o.interval == 0;
  if (lb->trace) PetscCall(AmrLbTraceCycle(lb, &s, r));
  if (s.eligible) PetscCall(AmrLbPropose(lb, &s, r));
  s.lb_time = MPI_Wtime() - s.t0;
  AMR_LB_CHECK(lb->comm, lb_curve_part_loads(lb->comm, p4est->local_num_quadrants, s.w, P, s.next, s.after));
  /* on the forest the weights belong to, before it moves */
  PetscCall(AmrLbPhasesPredict(lb, &s, r));
  if (s.eligible) PetscCall(AmrLbDecide(lb, &s, r));
  PetscCall(AmrLbApply(lb, &s, nfields, fields, r));
  PetscCall(AmrLbRecordClose(lb, &s, r));
  PetscCall(PetscFree(s.w));
  for (int k = 0; k < s.npw; k++) PetscCall(PetscFree(s.pw[k]));
  PetscCall(PetscFree5(s.before, s.after, s.cur, s.next, s.counts));
  PetscFunctionReturn(0);
}
