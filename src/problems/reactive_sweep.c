/*
 * reactive-transport's reaction sweep of one step: every local cell
 * integrates A + B -> C over dt on its own (FemReactionCell), timed by its
 * own clock reading.  With -react_offload the sweep is balanced apart from
 * the mesh (balance/lboffload.h): the cells of ranks whose reaction costs
 * more than the mean (each cell's cost: its clock in the last step) are
 * sent to ranks below it, integrated there and sent back, while the rank
 * integrates the cells it keeps.  A cell meets the same arithmetic on any
 * rank, so the fields are bit for bit those of the sweep at home; its
 * cost stays with its owner (the next cycle's weights and forecast), the
 * integrator's steps with the rank that took them.
 */
#include "problems/impl/reactive.h"

#include "balance/lbclock.h"
#include "balance/lboffload.h"
#include "fem/femutil.h"

#define DIM P4EST_DIM

/* What a cell's integration leaves with its owner: its cost, the trend of
 * its costs over the cycle and the next plan's estimate. */
static void account_owner(AmrReactive *r, FemAdvectCell *d, p4est_locidx_t K, double cpu)
{
  FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_COST)[0] += cpu;
  r->trend[K] += cpu * r->nsteps;
  r->est[K] = cpu;
}

/* And with the rank that took the steps; a point where nothing reacts
 * takes one step (a cell of nb coefficients per species has 2^(nb - 1)
 * points, or its mean): more is the front. */
static void account_worker(AmrReactive *r, const FemReactionWork *w, int nb)
{
  r->steps_local += w->steps;
  r->failed += w->failed;
  if (w->steps > (nb > 1 ? 1 << (nb - 1) : 1)) {
    r->front_steps += w->steps;
    r->front_cpu += w->cpu;
  }
}

/* Local cell K here, its data d with its centroid xibar, and its account
 * as owner and worker both. */
static PetscErrorCode react_home(AmrReactive *r, int nb, const double *xibar, FemAdvectCell *d, p4est_locidx_t K, double dt, double *clock)
{
  FemReactionWork w = {.steps = 0};

  PetscFunctionBeginUser;
  PetscCall(FemReactionCell(&r->react, nb, xibar, d->c, FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_B), FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_C), dt,
                            clock, &w));
  account_owner(r, d, K, w.cpu);
  account_worker(r, &w, nb);
  PetscFunctionReturn(0);
}

/* The sweep without the offload: every local cell here, in curve order. */
static PetscErrorCode sweep_home(AmrAdvection *s, AmrReactive *r, const double *xibar, double dt)
{
  const int nb = amr_reactive_nbasis(s);
  double clock = lb_clock_thread_cpu();

  PetscFunctionBeginUser;
  AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, { PetscCall(react_home(r, nb, xibar + (size_t)K * DIM, d, K, dt, &clock)); })
  PetscFunctionReturn(0);
}

/* A failure of the offload after the problem's checks is a bug. */
#define OFFLOAD_CHECK(comm, call) \
  do { \
    const lb_err e_ = (call); \
    PetscCheck(e_ == LB_OK, comm, PETSC_ERR_LIB, "reaction offload: %s", lb_errmsg()); \
  } while (0)

/* An item: the cell's centroid and its A, B, C; a result: A, B, C, then
 * the integrator's steps and the cell's clock. */
static int item_len(int nb) { return DIM + 3 * nb; }
static int result_len(int nb) { return 3 * nb + 2; }

static void pack_item(int nb, const double *xibar, FemAdvectCell *d, double *v)
{
  PetscArraycpy(v, xibar, DIM);
  PetscArraycpy(v + DIM, d->c, nb);
  PetscArraycpy(v + DIM + nb, FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_B), nb);
  PetscArraycpy(v + DIM + 2 * nb, FemAdvectCellExtra(d, AMR_REACTIVE_FIELD_C), nb);
}

/* Another rank's cells, from items into results. */
static PetscErrorCode react_items(AmrReactive *r, int nb, int64_t n, const double *items, double *res, double dt)
{
  const int li = item_len(nb), lr = result_len(nb);
  double clock = lb_clock_thread_cpu();

  PetscFunctionBeginUser;
  for (int64_t i = 0; i < n; i++) {
    const double *it = items + i * li;
    double *o = res + i * lr;
    FemReactionWork w = {.steps = 0};
    PetscCall(PetscArraycpy(o, it + DIM, 3 * nb));
    PetscCall(FemReactionCell(&r->react, nb, it, o, o + nb, o + 2 * nb, dt, &clock, &w));
    o[3 * nb] = w.steps;
    o[3 * nb + 1] = w.cpu;
    account_worker(r, &w, nb);
  }
  PetscFunctionReturn(0);
}

/* The sweep with the offload; cell[K]: every local cell's data. */
static PetscErrorCode sweep_offload(AmrProblem p, AmrAdvection *s, AmrReactive *r, const double *xibar, double dt)
{
  const int nb = amr_reactive_nbasis(s), li = item_len(nb), lr = result_len(nb);
  const int64_t n = s->p4est->local_num_quadrants;
  double *off = r->off + (size_t)r->nsteps * OFF_N, *sbuf, *rbuf, *res, *back, clock;
  lb_clock p0, p1;
  FemAdvectCell **cell;
  lb_offload_info info;
  lb_offload *o;
  char *sent;

  PetscFunctionBeginUser;
  /* the plan's own work: its first collective also waits for the
   * slowest rank's transport step, which is no cost of the plan */
  lb_clock_now(&p0);
  OFFLOAD_CHECK(p->comm, lb_offload_plan(p->comm, 1, &n, r->est, LB_OFFLOAD_QUANTUM, &o));
  lb_clock_now(&p1);
  lb_clock_between(&p0, &p1, &off[OFF_PLAN_S], NULL, NULL, NULL);
  lb_offload_info_get(o, 0, &info);
  off[OFF_BEFORE] = (double)info.load_before * LB_OFFLOAD_QUANTUM;
  off[OFF_AFTER] = (double)info.load_after * LB_OFFLOAD_QUANTUM;
  off[OFF_MEAN] = off[OFF_BEFORE];
  off[OFF_MOVED] = (double)info.nsend;
  off[OFF_MESSAGES] = info.nsend_ranks + info.nrecv_ranks;
  off[OFF_PLAN_MESSAGES] = (double)info.plan_messages;
  PetscCall(PetscMalloc2(n + 1, &cell, n + 1, &sent));
  PetscCall(PetscMalloc4((size_t)info.nsend * li + 1, &sbuf, (size_t)info.nrecv * li + 1, &rbuf, (size_t)info.nrecv * lr + 1, &res, (size_t)info.nsend * lr + 1,
                         &back));
  AMR_REACTIVE_FOR_CELLS(s->p4est, K, d, {
    cell[K] = d;
    sent[K] = 0;
  })
  for (int64_t i = 0; i < info.nsend; i++) {
    const p4est_locidx_t K = (p4est_locidx_t)info.send[i];
    sent[K] = 1;
    pack_item(nb, xibar + (size_t)K * DIM, cell[K], sbuf + i * li);
  }
  OFFLOAD_CHECK(p->comm, lb_offload_forward_begin(o, li * sizeof(double), sbuf, rbuf));
  /* the cells kept, while the others travel */
  clock = lb_clock_thread_cpu();
  for (p4est_locidx_t K = 0; K < n; K++)
    if (!sent[K]) PetscCall(react_home(r, nb, xibar + (size_t)K * DIM, cell[K], K, dt, &clock));
  OFFLOAD_CHECK(p->comm, lb_offload_forward_end(o));
  PetscCall(react_items(r, nb, info.nrecv, rbuf, res, dt));
  OFFLOAD_CHECK(p->comm, lb_offload_backward_begin(o, lr * sizeof(double), res, back));
  OFFLOAD_CHECK(p->comm, lb_offload_backward_end(o));
  for (int64_t i = 0; i < info.nsend; i++) {
    const p4est_locidx_t K = (p4est_locidx_t)info.send[i];
    const double *b = back + i * lr;
    PetscCall(PetscArraycpy(cell[K]->c, b, nb));
    PetscCall(PetscArraycpy(FemAdvectCellExtra(cell[K], AMR_REACTIVE_FIELD_B), b + nb, nb));
    PetscCall(PetscArraycpy(FemAdvectCellExtra(cell[K], AMR_REACTIVE_FIELD_C), b + 2 * nb, nb));
    account_owner(r, cell[K], K, b[3 * nb + 1]);
  }
  PetscCall(PetscFree4(sbuf, rbuf, res, back));
  PetscCall(PetscFree2(cell, sent));
  lb_offload_destroy(&o);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrReactiveSweep(AmrProblem p, double dt, double *cpu, double *wall)
{
  AmrAdvection *s = p->impl;
  AmrReactive *r = s->after_ctx;
  double w0, c0, *xibar;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)s->p4est->local_num_quadrants * DIM + 1, &xibar));
  PetscCall(FemAdvectCellCentroids(s->adv, xibar));
  w0 = MPI_Wtime();
  c0 = lb_clock_thread_cpu();
  if (r->offload) PetscCall(sweep_offload(p, s, r, xibar, dt));
  else PetscCall(sweep_home(s, r, xibar, dt));
  *cpu = lb_clock_thread_cpu() - c0;
  *wall = MPI_Wtime() - w0;
  r->nsteps++;
  PetscCall(PetscFree(xibar));
  r->wall_local += *wall;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrReactiveOffloadReduce(AmrProblem p)
{
  AmrReactive *r = ((AmrAdvection *)p->impl)->after_ctx;
  const int n = r->nsteps;
  double *max;

  PetscFunctionBeginUser;
  if (!r->offload || !n) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1((size_t)n * OFF_N, &max));
  PetscCall(PetscArraycpy(max, r->off, (size_t)n * OFF_N));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, r->off, n * OFF_N, MPI_DOUBLE, MPI_SUM, p->comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, max, n * OFF_N, MPI_DOUBLE, MPI_MAX, p->comm));
  for (int k = 0; k < n; k++) {
    double *o = r->off + (size_t)k * OFF_N;
    const double *m = max + (size_t)k * OFF_N;
    o[OFF_BEFORE] = m[OFF_BEFORE];
    o[OFF_AFTER] = m[OFF_AFTER];
    o[OFF_MEAN] /= r->nranks;
    o[OFF_MESSAGES] /= 2; /* each counted by its sender and its receiver */
    o[OFF_PLAN_S] = m[OFF_PLAN_S];
  }
  PetscCall(PetscFree(max));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrReactiveOffloadReport(AmrProblem p, json_line *j)
{
  AmrAdvection *s = p->impl;
  AmrReactive *r = s->after_ctx;
  const int nb = amr_reactive_nbasis(s);
  static const struct {
    const char *name;
    int slot;
  } field[] = {{"reaction_planned_max_before_s", OFF_BEFORE},
               {"reaction_planned_max_after_s", OFF_AFTER},
               {"reaction_planned_mean_s", OFF_MEAN},
               {"offload_moved", OFF_MOVED},
               {"offload_messages", OFF_MESSAGES},
               {"offload_plan_messages", OFF_PLAN_MESSAGES},
               {"offload_plan_s", OFF_PLAN_S}};
  const int n = r->offload ? r->nsteps : 0;
  double *v;

  PetscFunctionBeginUser;
  json_bool(j, "offload", r->offload);
  PetscCall(PetscMalloc1(n + 1, &v));
  for (size_t f = 0; f < sizeof field / sizeof field[0]; f++) {
    for (int k = 0; k < n; k++) v[k] = r->off[(size_t)k * OFF_N + field[f].slot];
    json_reals(j, field[f].name, n, v);
  }
  /* each moved cell's item there and its result back */
  for (int k = 0; k < n; k++) v[k] = r->off[(size_t)k * OFF_N + OFF_MOVED] * (double)sizeof(double) * (item_len(nb) + result_len(nb));
  json_reals(j, "offload_bytes", n, v);
  PetscCall(PetscFree(v));
  PetscFunctionReturn(0);
}
