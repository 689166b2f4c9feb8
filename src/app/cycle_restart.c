/* Checkpoint and restart of the cycle (cycle.h, impl/cycle.h): the
 * checkpoint written after a cycle's balancing step and the run continued
 * from it.  Compiled for 2D and 3D (P4_TO_P8). */
#include "app/impl/cycle.h"

#include <string.h>

#include "util/options.h"
#include "util/fileio.h"

/* -checkpoint, -checkpoint_interval, -restart. */
PetscErrorCode AmrCycleCheckpointOptions(MPI_Comm comm, AmrCycle cyc)
{
  PetscInt interval = 1;

  PetscFunctionBeginUser;
  PetscOptionsBegin(comm, NULL, "Checkpoint and restart", NULL);
  AMR_OPTION("-checkpoint", PetscOptionsString("-checkpoint", "Write a checkpoint PREFIX.manifest, PREFIX.S.forest, PREFIX.S.state, PREFIX.S.ranks after the balancing step of every -checkpoint_interval-th cycle (replaced atomically)",
                                               NULL, cyc->checkpoint, cyc->checkpoint, sizeof cyc->checkpoint, NULL));
  AMR_OPTION("-checkpoint_interval", PetscOptionsInt("-checkpoint_interval", "Checkpoint every K-th cycle (0: none)", NULL, interval, &interval, NULL));
  AMR_OPTION("-restart", PetscOptionsString("-restart", "Continue the run of checkpoint PREFIX, with its options; options given here override them (not -problem, -mesh, -degree)",
                                            NULL, cyc->restart, cyc->restart, sizeof cyc->restart, NULL));
  PetscOptionsEnd();
  PetscCheck(interval >= 0, comm, PETSC_ERR_USER_INPUT, "option -checkpoint_interval %" PetscInt_FMT ": must not be negative", interval);
  cyc->checkpoint_interval = interval;
  PetscFunctionReturn(0);
}

/* The VTK series' outputs up to the checkpoint, so that a restart's .pvd
 * lists the whole run (vtk.prefix: a restart writing another series
 * starts it anew). */
static PetscErrorCode save_vtk_series(AmrCycle cyc, AmrCkpState st)
{
  const char *prefix;
  const int *cycles;
  const double *times;
  int64_t *c;
  int n;

  PetscFunctionBeginUser;
  if (!cyc->vtk) PetscFunctionReturn(0);
  AmrVtkSeriesEntries(cyc->vtk, &prefix, &n, &cycles, &times);
  PetscCall(PetscMalloc1((size_t)n + 1, &c));
  for (int i = 0; i < n; i++) c[i] = cycles[i];
  PetscCall(AmrCkpStateSetString(st, "vtk.prefix", prefix));
  PetscCall(AmrCkpStateSetBytes(st, "vtk.cycles", c, sizeof(int64_t) * n));
  PetscCall(AmrCkpStateSetBytes(st, "vtk.times", times, sizeof(double) * n));
  PetscCall(PetscFree(c));
  PetscFunctionReturn(0);
}

static PetscErrorCode load_vtk_series(AmrCycle cyc, AmrCkpState st)
{
  const char *prefix, *saved;
  const int *cycles;
  const double *times;
  const void *bc, *bt;
  size_t nc, nt;
  int *c, n;
  double *t;
  PetscBool has;

  PetscFunctionBeginUser;
  if (!cyc->vtk) PetscFunctionReturn(0);
  PetscCall(AmrCkpStateHas(st, "vtk.prefix", &has));
  if (!has) PetscFunctionReturn(0);
  PetscCall(AmrCkpStateGetString(st, "vtk.prefix", &saved));
  AmrVtkSeriesEntries(cyc->vtk, &prefix, &n, &cycles, &times);
  if (strcmp(saved, prefix)) PetscFunctionReturn(0);
  PetscCall(AmrCkpStateGetBytes(st, "vtk.cycles", &bc, &nc));
  PetscCall(AmrCkpStateGetBytes(st, "vtk.times", &bt, &nt));
  PetscCheck(nc % sizeof(int64_t) == 0 && nt / sizeof(double) == nc / sizeof(int64_t) && nt % sizeof(double) == 0, cyc->comm, PETSC_ERR_USER_INPUT,
             "checkpoint '%s.manifest': malformed vtk.cycles or vtk.times entry", cyc->restart);
  n = (int)(nc / sizeof(int64_t));
  PetscCall(PetscMalloc2((size_t)n + 1, &c, (size_t)n + 1, &t));
  for (int i = 0; i < n; i++) {
    int64_t v;
    memcpy(&v, (const char *)bc + sizeof v * i, sizeof v);
    c[i] = (int)v;
  }
  if (n) memcpy(t, bt, nt);
  PetscCall(AmrVtkSeriesRestore(cyc->vtk, n, c, t));
  PetscCall(PetscFree2(c, t));
  PetscFunctionReturn(0);
}

PetscBool AmrCycleRestarts(AmrCycle cyc) { return cyc && cyc->problem && cyc->restart[0] ? PETSC_TRUE : PETSC_FALSE; }

/* Copy every local quadrant's user data (qsize bytes each, curve order)
 * into buf, or back from it into the forest (to_forest). */
static void copy_quadrant_data(p4est_t *p4est, size_t qsize, char *buf, PetscBool to_forest)
{
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count && qsize; i++) {
      void *q = p4est_quadrant_array_index(&tr->quadrants, i)->p.user_data;
      char *b = buf + qsize * (tr->quadrants_offset + i);
      if (to_forest) memcpy(q, b, qsize);
      else memcpy(b, q, qsize);
    }
  }
}

/* Write the checkpoint after cycle's balancing step: the forest with the
 * problem's fields, what the next cycle needs (problem state, the
 * problem's own, the balancer's), the options and the run totals. */
PetscErrorCode AmrCycleWriteCheckpoint(AmrCycle cyc, int cycle)
{
  const AmrProblem p = cyc->problem;
  p4est_t *p4est = cyc->p4est;
  AmrField fields[AMR_PROBLEM_MAX_FIELDS];
  int64_t sizes[AMR_PROBLEM_MAX_FIELDS];
  AmrCkpState st;
  char *options;
  int nf;

  PetscFunctionBeginUser;
  AmrCycleFields(cyc, &nf, fields);
  PetscCall(AmrCkpStateCreate(cyc->comm, &st));
  PetscCall(AmrCkpStateSetString(st, "program", AMR_PROGRAM));
  PetscCall(AmrCkpStateSetString(st, "problem", AmrProblemGetName(p)));
  PetscCall(AmrCkpStateSetInt(st, "degree", p->degree));
  PetscCall(AmrCkpStateSetString(st, "mesh", p->mesh->name));
  PetscCall(PetscOptionsGetAll(NULL, &options));
  PetscCall(AmrCkpStateSetString(st, "options", options));
  PetscCall(PetscFree(options));
  /* the layout, which the restart needs before the problem is set up */
  PetscCall(AmrCkpStateSetInt(st, "layout.quadrant_data", (int64_t)p4est->data_size));
  for (int k = 0; k < nf; k++) sizes[k] = (int64_t)fields[k].size;
  PetscCall(AmrCkpStateSetBytes(st, "layout.fields", sizes, sizeof(int64_t) * nf));
  /* this rank's share of the partition, which a restart on as many ranks
   * takes back */
  PetscCall(AmrCkpStateSetRankInt(st, "cycle.cells", (int64_t)p4est->local_num_quadrants));
  PetscCall(AmrCkpStateSetInt(st, "cycle.next", cycle + 1));
  PetscCall(AmrCkpStateSetInt(st, "cycle.restarts", cyc->restarts));
  PetscCall(AmrCkpStateSetInt(st, "run.id", cyc->run_id));
  PetscCall(AmrCkpStateSetReal(st, "state.sim_time", p->state.sim_time));
  PetscCall(AmrCkpStateSetInt(st, "state.step", p->state.step));
  PetscCall(AmrCkpStateSetInt(st, "state.done", p->state.done));
  PetscCall(AmrLbSave(cyc->lb, st));
  PetscCall(save_vtk_series(cyc, st));
  PetscCall(AmrProblemSave(p, st));
  /* the new checkpoint replaces the one the interrupt line names: an
   * interrupt waits until the line names the new one */
  AmrCycleDeferInterrupts(PETSC_TRUE);
  PetscCall(AmrCheckpointWrite(cyc->checkpoint, p4est, nf, fields, st));
  cyc->held_by = cyc->checkpoint;
  cyc->held_next = cycle + 1;
  PetscCall(AmrCycleCatchInterrupts(cyc, cycle));
  AmrCycleDeferInterrupts(PETSC_FALSE);
  PetscCall(AmrCkpStateDestroy(&st));
  PetscFunctionReturn(0);
}

/* Options of the checkpoint's run that are not given again, so that a
 * restart continues the run it continues; -restart itself is this run's. */
PetscErrorCode AmrCycleRestartOptions(MPI_Comm comm)
{
  char prefix[PETSC_MAX_PATH_LEN] = "", **names, **values, **gnames, **gvalues, *current;
  const char *stored;
  PetscBool set, help;
  PetscOptions old, now;
  AmrCkpState st;
  PetscInt n, ng;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-restart", prefix, sizeof prefix, &set));
  if (help || !set || !prefix[0]) PetscFunctionReturn(0);
  PetscCall(AmrCheckpointReadState(comm, prefix, &st));
  PetscCall(AmrCkpStateCheckString(st, "program", AMR_PROGRAM));
  PetscCall(AmrCkpStateGetString(st, "options", &stored));
  PetscCall(PetscOptionsCreate(&old));
  PetscCall(PetscOptionsInsertString(old, stored));
  PetscCall(PetscOptionsLeftGet(old, &n, &names, &values));
  /* what was given (a copy, as none of it counts as read there) */
  PetscCall(PetscOptionsGetAll(NULL, &current));
  PetscCall(PetscOptionsCreate(&now));
  PetscCall(PetscOptionsInsertString(now, current));
  PetscCall(PetscFree(current));
  PetscCall(PetscOptionsLeftGet(now, &ng, &gnames, &gvalues));
  for (PetscInt i = 0; i < n; i++) {
    char dashed[256];
    PetscBool given = PETSC_FALSE, has;
    if (!strcmp(names[i], "restart") || !strcmp(names[i], "help") || !strcmp(names[i], "options_file")) continue;
    for (PetscInt k = 0; k < ng && !given; k++) given = !strcmp(names[i], gnames[k]);
    if (given) continue;
    PetscCall(PetscSNPrintf(dashed, sizeof dashed, "-%s", names[i]));
    PetscCall(PetscOptionsSetValue(NULL, dashed, values[i]));
    /* marked as read: one the restart does not use (another method's
     * option after -lb_method was changed) is not a typo of this run */
    PetscCall(PetscOptionsHasName(NULL, NULL, dashed, &has));
  }
  PetscCall(PetscOptionsLeftRestore(now, &ng, &gnames, &gvalues));
  PetscCall(PetscOptionsLeftRestore(old, &n, &names, &values));
  PetscCall(PetscOptionsDestroy(&now));
  PetscCall(PetscOptionsDestroy(&old));
  PetscCall(AmrCkpStateDestroy(&st));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCycleRestart(AmrCycle cyc, p4est_connectivity_t *conn, p4est_t **out)
{
  const AmrProblem p = cyc->problem;
  const char *prefix = cyc->restart;
  AmrField stored[AMR_PROBLEM_MAX_FIELDS], fields[AMR_PROBLEM_MAX_FIELDS];
  void *arrays[AMR_PROBLEM_MAX_FIELDS] = {NULL};
  const void *buf;
  size_t len, qsize;
  int64_t v, sizes[AMR_PROBLEM_MAX_FIELDS];
  AmrCkpState st;
  p4est_t *p4est;
  PetscMPIInt size;
  char *qdata;
  int nstored, nf;

  PetscFunctionBeginUser;
  *out = NULL;
  PetscCallMPI(MPI_Comm_size(cyc->comm, &size));
  /* what a restart may not change, checked before the forest is read */
  PetscCall(AmrCheckpointReadState(cyc->comm, prefix, &st));
  PetscCall(AmrCkpStateCheckString(st, "problem", AmrProblemGetName(p)));
  PetscCall(AmrCkpStateCheckInt(st, "degree", p->degree));
  PetscCall(AmrCkpStateCheckString(st, "mesh", p->mesh->name));
  PetscCall(AmrCkpStateGetInt(st, "layout.quadrant_data", &v));
  qsize = (size_t)v;
  PetscCall(AmrCkpStateGetBytes(st, "layout.fields", &buf, &len));
  PetscCheck(len % sizeof(int64_t) == 0 && len / sizeof(int64_t) <= AMR_PROBLEM_MAX_FIELDS, cyc->comm, PETSC_ERR_USER_INPUT,
             "checkpoint '%s.manifest': malformed layout.fields entry", prefix);
  nstored = (int)(len / sizeof(int64_t));
  memcpy(sizes, buf, len);
  PetscCall(AmrCkpStateDestroy(&st));
  for (int k = 0; k < nstored; k++) {
    stored[k].data = &arrays[k];
    stored[k].size = (size_t)sizes[k];
  }
  PetscCall(AmrCheckpointRead(cyc->comm, prefix, conn, qsize, nstored, stored, &p4est, NULL, &st));
  /* every entry taken below within its range before any is used */
  PetscCall(AmrCycleCheckState(cyc, st, p4est));
  PetscCall(AmrCkpStateGetInt(st, "cycle.next", &v));
  cyc->first = (int)v;
  PetscCheck(cyc->first < cyc->cycles, cyc->comm, PETSC_ERR_USER_INPUT, "option -amr_cycles %" PetscInt_FMT ": checkpoint '%s.manifest' continues at cycle %d",
             cyc->cycles, AmrPathShort(prefix), cyc->first);
  if (p->state.sim_time >= 0) {
    /* a run at its -t_final has nothing left to do: refused as a passed
     * -amr_cycles is, not run as a cycle of no steps.  The problem read
     * -t_final already; without one given here or in the checkpoint's
     * options its default is the checkpoint run's, which it has not reached */
    PetscReal t_final;
    PetscBool set;
    double t;
    PetscCall(AmrCkpStateGetReal(st, "state.sim_time", &t));
    PetscCall(PetscOptionsGetReal(NULL, NULL, "-t_final", &t_final, &set));
    PetscCheck(!set || t < t_final, cyc->comm, PETSC_ERR_USER_INPUT, "option -t_final %g: checkpoint '%s.manifest' continues at t %g", (double)t_final, prefix, t);
  }
  PetscCall(AmrCkpStateGetInt(st, "cycle.restarts", &v));
  cyc->restarts = (int)v + 1;
  /* the run it continues; a checkpoint of a build before run ids has none,
   * and its report and trace carry none to check */
  {
    PetscBool has;
    PetscCall(AmrCkpStateHas(st, "run.id", &has));
    if (has) PetscCall(AmrCkpStateGetInt(st, "run.id", &v));
    cyc->run_id = has ? (uint32_t)v : cyc->run_id;
    cyc->run_known = has;
  }

  /* on as many ranks the checkpoint's partition, each rank's count from
   * its own part gathered into the array p4est's repartition takes (as
   * long as its own global_first_quadrant), else an even one with
   * families kept together (the balancer takes over from there) */
  {
    int parts;
    PetscCall(AmrCkpStateRankParts(st, &parts));
    if (parts == size) {
      p4est_locidx_t *counts, mine;
      PetscBool has;
      PetscCall(AmrCkpStateGetRankInt(st, "cycle.cells", &has, &v));
      mine = (p4est_locidx_t)v;
      PetscCall(PetscMalloc1(size, &counts));
      PetscCallMPI(MPI_Allgather(&mine, 1, P4EST_MPI_LOCIDX, counts, 1, P4EST_MPI_LOCIDX, cyc->comm));
      PetscCall(AmrMigrate(p4est, counts, nstored, stored, NULL));
      PetscCall(PetscFree(counts));
    } else {
      PetscCall(AmrLbPartitionEven(p4est, nstored, stored));
    }
  }

  /* the problem on the loaded forest, then its data back in place: setup
   * may have reset the quadrant data to initial values */
  PetscCall(PetscMalloc1(qsize * (size_t)p4est->local_num_quadrants + 1, &qdata));
  copy_quadrant_data(p4est, qsize, qdata, PETSC_FALSE);
  PetscCall(AmrCycleCheckOutputs(cyc));
  /* the trace and the report checked for this run's before either is cut */
  PetscCall(AmrLbContinueTrace(cyc->lb, st, cyc->run_id, cyc->run_known));
  PetscCall(AmrCycleOpenReport(cyc));
  cyc->p4est = p4est;
  *out = p4est;
  PetscCall(AmrProblemSetUp(p, p4est));
  AmrCycleFields(cyc, &nf, fields);
  {
    PetscBool same = p4est->data_size == qsize && nf == nstored;
    for (int k = 0; same && k < nf; k++) same = fields[k].size == stored[k].size;
    PetscCheck(same, cyc->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s.manifest' holds other cell data than problem %s has", prefix, AmrProblemGetName(p));
  }
  copy_quadrant_data(p4est, qsize, qdata, PETSC_TRUE);
  PetscCall(PetscFree(qdata));
  for (int k = 0; k < nf; k++) {
    PetscCall(PetscFree(*fields[k].data));
    *fields[k].data = arrays[k];
  }

  /* the state of the run at the end of the checkpoint's cycle */
  {
    double t;
    PetscCall(AmrCkpStateGetReal(st, "state.sim_time", &t));
    p->state.sim_time = t;
    PetscCall(AmrCkpStateGetInt(st, "state.step", &v));
    p->state.step = (long long)v;
    PetscCall(AmrCkpStateGetInt(st, "state.done", &v));
    p->state.done = v ? PETSC_TRUE : PETSC_FALSE;
  }
  PetscCall(AmrProblemLoad(p, st));
  PetscCall(AmrLbLoad(cyc->lb, st));
  PetscCall(load_vtk_series(cyc, st));
  PetscCall(AmrCkpStateDestroy(&st));
  PetscCall(AmrCycleCellArrays(cyc));
  cyc->held_by = cyc->restart;
  cyc->held_next = cyc->first;
  PetscCall(AmrCycleCatchInterrupts(cyc, cyc->first - 1));
  PetscCall(PetscPrintf(cyc->comm, "%s: restarted from checkpoint %s at cycle %d: %lld cells on %d rank%s\n", AMR_PROGRAM, prefix, cyc->first,
                        (long long)p4est->global_num_quadrants, size, size > 1 ? "s" : ""));
  PetscFunctionReturn(0);
}
