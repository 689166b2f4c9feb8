/* The run's identity and a restart's trust in its checkpoint (impl/cycle.h).
 * A checkpoint whose checksums match can still hold what a writer's bug or
 * an edit put there: every entry of its state the restart takes is checked
 * against the forest and the options before any is used, so that a bad one
 * ends in one line naming the entry and the checkpoint, never in a wrong
 * cycle number, a crash or records of the report replaced.  Compiled for
 * 2D and 3D (P4_TO_P8). */
#define _GNU_SOURCE /* getrandom */
#include "app/impl/cycle.h"

#include "mesh/p4est_dim.h"
#include "balance/lbdecide.h"
#include "util/fileio.h"
#include <limits.h>
#include <math.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

PetscErrorCode AmrCycleNewRunId(AmrCycle cyc)
{
  uint32_t id = 0;
  PetscMPIInt rank;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(cyc->comm, &rank));
  if (!rank) {
    /* the clock and the process where the system has no randomness at hand */
    if (getrandom(&id, sizeof id, GRND_NONBLOCK) != (ssize_t)sizeof id) id = (uint32_t)time(NULL) * 2654435761u ^ (uint32_t)getpid();
    /* 0 is "none recorded" in a trace's header */
    if (!id) id = 1;
  }
  PetscCallMPI(MPI_Bcast(&id, 1, MPI_UINT32_T, 0, cyc->comm));
  cyc->run_id = id;
  cyc->run_known = PETSC_TRUE;
  PetscCall(AmrLbSetRun(cyc->lb, id));
  PetscFunctionReturn(0);
}

/* Integer entry name in [lo, hi]. */
static PetscErrorCode int_in(AmrCycle cyc, AmrCkpState st, const char *name, int64_t lo, int64_t hi, int64_t *v)
{
  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetInt(st, name, v));
  PetscCheck(*v >= lo && *v <= hi, cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': %s %lld is outside %lld to %lld", AmrPathShort(cyc->restart), name,
             (long long)*v, (long long)lo, (long long)hi);
  PetscFunctionReturn(0);
}

/* Real entry name finite and at least lo. */
static PetscErrorCode real_in(AmrCycle cyc, AmrCkpState st, const char *name, double lo)
{
  double v;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetReal(st, name, &v));
  PetscCheck(isfinite(v) && v >= lo, cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': %s %g is not a finite number from %g", AmrPathShort(cyc->restart),
             name, v, lo);
  PetscFunctionReturn(0);
}

/* Byte entry name, where the checkpoint has it: a whole number of items
 * of size bytes, n of them (any number when n is 0); *buf and *count. */
static PetscErrorCode items(AmrCycle cyc, AmrCkpState st, const char *name, size_t size, size_t n, const void **buf, size_t *count)
{
  size_t len;
  PetscBool has;

  PetscFunctionBeginUser;
  *buf = NULL;
  *count = 0;
  PetscCall(AmrCkpStateHas(st, name, &has));
  if (!has) PetscFunctionReturn(0);
  PetscCall(AmrCkpStateGetBytes(st, name, buf, &len));
  PetscCheck(len % size == 0 && (!n || len == n * size), cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': %s holds %zu bytes, not %s%zu-byte items",
             AmrPathShort(cyc->restart), name, len, n ? "the expected " : "whole ", size);
  *count = len / size;
  PetscFunctionReturn(0);
}

/* Byte entry name, where the checkpoint has it: n doubles (any number
 * when n is 0), each finite and at least lo. */
static PetscErrorCode reals_in(AmrCycle cyc, AmrCkpState st, const char *name, size_t n, double lo)
{
  const void *buf;
  size_t count;

  PetscFunctionBeginUser;
  PetscCall(items(cyc, st, name, sizeof(double), n, &buf, &count));
  for (size_t i = 0; i < count; i++) {
    double v;
    memcpy(&v, (const char *)buf + sizeof v * i, sizeof v);
    PetscCheck(isfinite(v) && v >= lo, cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': %s[%zu] %g is not a finite number from %g",
               AmrPathShort(cyc->restart), name, i, v, lo);
  }
  PetscFunctionReturn(0);
}

/* The lowest rank whose bad holds, INT_MAX when none: a check of what a
 * rank reads from its own part, made the same on every rank. */
static PetscErrorCode first_bad(AmrCycle cyc, PetscBool bad, int *who)
{
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(cyc->comm, who));
  if (!bad) *who = INT_MAX;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, who, 1, MPI_INT, MPI_MIN, cyc->comm));
  PetscFunctionReturn(0);
}

/* cycle.cells, on as many ranks as wrote the checkpoint: each rank's in
 * its own part, within the forest, summing to the forest's cells (the
 * restart takes them as its partition). */
static PetscErrorCode check_rank_cells(AmrCycle cyc, AmrCkpState st, const p4est_t *p4est)
{
  const long long N = (long long)p4est->global_num_quadrants;
  long long sum;
  int64_t c;
  int parts, who;
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateRankParts(st, &parts));
  if (parts != p4est->mpisize) PetscFunctionReturn(0);
  PetscCall(AmrCkpStateGetRankInt(st, "cycle.cells", &has, &c));
  PetscCall(first_bad(cyc, !has || c < 0 || c > N, &who));
  PetscCheck(who == INT_MAX, cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': the part of rank %d has no cycle.cells within 0 to the forest's %lld cells",
             AmrPathShort(cyc->restart), who, N);
  sum = (long long)c;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_LONG_LONG, MPI_SUM, cyc->comm));
  PetscCheck(sum == N, cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': cycle.cells sums to %lld cells over the ranks' parts, its forest holds %lld",
             AmrPathShort(cyc->restart), sum, N);
  PetscFunctionReturn(0);
}

/* The problem's state: a time, a step and done where the problem has
 * time (its initial sim_time is not negative), none where it has not. */
static PetscErrorCode check_problem_state(AmrCycle cyc, AmrCkpState st)
{
  const PetscBool timed = cyc->problem->state.sim_time >= 0;
  double t;
  int64_t v;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetReal(st, "state.sim_time", &t));
  PetscCheck(isfinite(t) && (timed ? t >= 0 : t < 0), cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': state.sim_time %g is not %s", AmrPathShort(cyc->restart),
             t, timed ? "a finite time from 0" : "negative, as for a problem without time");
  PetscCall(int_in(cyc, st, "state.step", timed ? 0 : -1, timed ? INT64_MAX : -1, &v));
  PetscCall(int_in(cyc, st, "state.done", 0, 1, &v));
  PetscFunctionReturn(0);
}

/* The VTK series so far: cycles before the checkpoint's next (or the
 * initial state's -1), finite times. */
static PetscErrorCode check_vtk(AmrCycle cyc, AmrCkpState st, int64_t next)
{
  const void *buf;
  size_t n;

  PetscFunctionBeginUser;
  PetscCall(items(cyc, st, "vtk.cycles", sizeof(int64_t), 0, &buf, &n));
  for (size_t i = 0; i < n; i++) {
    int64_t c;
    memcpy(&c, (const char *)buf + sizeof c * i, sizeof c);
    /* -1: the initial state of a problem with time */
    PetscCheck(c >= -1 && c < next, cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': vtk.cycles[%zu] %lld is outside -1 to cycle.next %lld",
               AmrPathShort(cyc->restart), i, (long long)c, (long long)next);
  }
  if (n) PetscCall(reals_in(cyc, st, "vtk.times", n, -INFINITY));
  PetscFunctionReturn(0);
}

/* Whether q can be a position on the curve of p4est's forest. */
static PetscBool position_on(const p4est_t *p4est, const p4est_quadrant_t *q)
{
  return q->p.which_tree >= 0 && q->p.which_tree <= (p4est_topidx_t)p4est->connectivity->num_trees && q->level >= 0 && q->level <= P4EST_QMAXLEVEL;
}

/* The balancer's entries whose values index arrays or sum into the run's
 * totals. */
static PetscErrorCode check_balancer(AmrCycle cyc, AmrCkpState st, const p4est_t *p4est)
{
  static const char *const totals[] = {"lb.elapsed_s", "lb.lost_rank_s", "lb.lb_total_s", "lb.migrate_total_s"};
  const void *buf;
  size_t n;
  int64_t v;
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(int_in(cyc, st, "lb.migration_n", 0, LB_MIGRATION_HISTORY, &v));
  PetscCall(int_in(cyc, st, "lb.migration_head", 0, LB_MIGRATION_HISTORY - 1, &v));
  PetscCall(reals_in(cyc, st, "lb.migration_per_cell", LB_MIGRATION_HISTORY, -INFINITY));
  for (size_t k = 0; k < sizeof totals / sizeof totals[0]; k++) PetscCall(real_in(cyc, st, totals[k], 0));
  /* the summary's split of the wall subtracts it from the wall clock */
  PetscCall(reals_in(cyc, st, "lb.cycles_wall", 1, 0));
  PetscCall(AmrCkpStateHas(st, "lb.trace_end", &has));
  if (has) PetscCall(int_in(cyc, st, "lb.trace_end", 0, INT64_MAX, &v));
  /* the initial partition's positions on the curve: quadrants of this
   * forest, the end shared, each rank's first in its own part */
  PetscCall(items(cyc, st, "lb.initial_end", sizeof(p4est_quadrant_t), 0, &buf, &n));
  if (n) {
    p4est_quadrant_t q;
    int who;
    memcpy(&q, buf, sizeof q);
    PetscCheck(position_on(p4est, &q), cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': lb.initial_end is no position on this forest (tree %d, level %d)",
               AmrPathShort(cyc->restart), (int)q.p.which_tree, (int)q.level);
    PetscCall(AmrCkpStateGetRankBytes(st, "lb.initial_position", &buf, &n));
    if (buf && n == sizeof q) memcpy(&q, buf, sizeof q);
    PetscCall(first_bad(cyc, buf && (n != sizeof q || !position_on(p4est, &q)), &who));
    PetscCheck(who == INT_MAX, cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest': lb.initial_position in the part of rank %d is no position on this forest",
               AmrPathShort(cyc->restart), who);
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleCheckState(AmrCycle cyc, AmrCkpState st, p4est_t *p4est)
{
  int64_t next, v;
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(int_in(cyc, st, "cycle.next", 1, INT_MAX - 1, &next));
  PetscCall(int_in(cyc, st, "cycle.restarts", 0, INT_MAX - 1, &v));
  PetscCall(AmrCkpStateHas(st, "run.id", &has));
  if (has) PetscCall(int_in(cyc, st, "run.id", 1, UINT32_MAX, &v));
  PetscCall(check_rank_cells(cyc, st, p4est));
  PetscCall(check_problem_state(cyc, st));
  PetscCall(check_vtk(cyc, st, next));
  PetscCall(check_balancer(cyc, st, p4est));
  PetscFunctionReturn(0);
}
