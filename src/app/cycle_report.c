/* The report (impl/cycle.h, FORMATS.md): opened once every option was
 * accepted, a restart's earlier records kept, and one record per cycle
 * written whole or not at all.  Compiled for 2D and 3D (P4_TO_P8). */
#define _GNU_SOURCE /* memrchr, open_memstream */
#include "app/impl/cycle.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fileio.h"
#include "util/options.h"
#include "mesh/dirs.h"

/* The cycle number of a report line (NUL-terminated), -1 if it has none. */
static long line_cycle(const char *line)
{
  const char *c = strstr(line, "\"cycle\":");
  return c ? strtol(c + 8, NULL, 10) : -1;
}

/* Whether a report line was written by another run than cyc's. */
static int line_foreign(const AmrCycle cyc, const char *line)
{
  const char *c = strstr(line, "\"run_id\":\"");
  char id[16];
  if (!cyc->run_known) return 0;
  snprintf(id, sizeof id, "%08x\"", (unsigned)cyc->run_id);
  return !c || strncmp(c + 10, id, 9);
}

/* Rank 0: what a restart keeps of the existing report: *whole, how many
 * records of cycles 0, 1, ... before cyc->first it starts with, in order,
 * each ended by its newline (-1: no report to continue); *keep, their
 * bytes; *partial, the bytes of a record cut at the file's end (no
 * newline), 0 when none; *foreign, 1 when a record before cyc->first was
 * written by another run (run_id).  Returns 0 or the error code of a failed
 * read (AmrFileStrerror).  The report is read whole, not by lines: a record
 * of many ranks is longer than any line buffer, and its end is what decides
 * it was cut. */
static int report_kept(AmrCycle cyc, long *whole, long *keep, long *partial, int *foreign)
{
  struct stat sb;
  char *text = NULL, *last;
  size_t len = 0;
  int err = 0;

  *whole = -1;
  *keep = *partial = 0;
  *foreign = 0;
  if (cyc->first <= 0) return 0;
  /* a device (/dev/null) holds no records to continue */
  if (!stat(cyc->adapt.report, &sb) && S_ISCHR(sb.st_mode)) return 0;
  err = AmrFileRead(cyc->adapt.report, 1, &text, &len);
  if (err == ENOENT) return 0;
  if (!err) {
    *whole = 0;
    /* what follows the last newline is a record that a kill or a full
     * disk cut: a restart must not append to it */
    last = len ? memrchr(text, '\n', len) : NULL;
    *partial = (long)(len - (last ? (size_t)(last + 1 - text) : 0));
    for (char *l = text, *nl; (nl = strchr(l, '\n')); l = nl + 1) {
      *nl = '\0';
      if (*whole >= cyc->first) break;
      /* another run's records are never cut: the restart is refused */
      if ((*foreign = line_foreign(cyc, l))) break;
      if (line_cycle(l) != *whole) break;
      ++*whole;
      *keep = (long)(nl + 1 - text);
    }
  }
  free(text);
  return err;
}

/* Open the report, opened only once every option was accepted so that a
 * typo does not truncate the report of an earlier run.  A restart keeps
 * the lines of the cycles before its first (those of the interrupted run
 * up to its checkpoint) and appends to them. */
PetscErrorCode AmrCycleOpenReport(AmrCycle cyc)
{
  PetscMPIInt rank;
  long whole = -1, keep = 0, partial = 0;
  int fail[3] = {0, 0, 0}; /* read, write, another run's records */
  const char *shown = AmrPathShort(cyc->adapt.report);

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(cyc->comm, &rank));
  if (cyc->adapt.report[0]) PetscCall(AmrMakeParentDirs(cyc->comm, "-report", cyc->adapt.report, cyc->adapt.report));
  if (cyc->adapt.report[0]) PetscCall(AmrFileCheckRegular(cyc->comm, "-report", cyc->adapt.report, 1));
  /* before the file is read or cut: another run may be writing it */
  if (cyc->adapt.report[0]) PetscCall(AmrFileLock(cyc->comm, "-report", cyc->adapt.report, &cyc->report_lock));
  if (cyc->adapt.report[0] && rank == 0) {
    fail[0] = report_kept(cyc, &whole, &keep, &partial, &fail[2]);
    /* a report that lost records before the checkpoint, or holds another
     * run's, stays as it is; one continued is cut after its kept records,
     * not rewritten, so that a full disk now cannot take them */
    if (!fail[0] && !fail[2] && (whole < 0 || whole >= cyc->first)) {
      fail[1] = AmrFileOpen(cyc->adapt.report, O_WRONLY | O_CREAT | (whole < 0 ? O_TRUNC : 0), 1, &cyc->report);
      if (!fail[1] && whole >= 0 && ftruncate(cyc->report, (off_t)keep)) fail[1] = errno;
      if (!fail[1] && lseek(cyc->report, 0, SEEK_END) < 0) fail[1] = errno;
    }
  }
  PetscCallMPI(MPI_Bcast(fail, 3, MPI_INT, 0, cyc->comm));
  PetscCheck(!fail[0], cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot read: %s", shown, AmrFileStrerror(fail[0]));
  PetscCheck(!fail[2], cyc->comm, PETSC_ERR_USER_INPUT,
             "option -report %s: holds the records of another run, not of checkpoint '%s.manifest' (run_id %08x): left as it is (give this run's report, or another file)",
             shown, AmrPathShort(cyc->restart), (unsigned)cyc->run_id);
  PetscCallMPI(MPI_Bcast(&whole, 1, MPI_LONG, 0, cyc->comm));
  PetscCheck(whole < 0 || whole >= cyc->first, cyc->comm, PETSC_ERR_USER_INPUT,
             "option -report %s: holds %ld whole records, the checkpoint continues after cycle %d: a record was cut or lost (restore the report, or give another file)",
             shown, whole, cyc->first - 1);
  PetscCheck(!fail[1], cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot write: %s", shown, AmrFileStrerror(fail[1]));
  /* the one line that says a record was dropped, as the issue asks */
  if (partial > 0 && whole >= 0)
    PetscCall(PetscPrintf(cyc->comm, "%s: option -report %s: its last record was cut (%ld bytes without an end of line): cut back to the record of cycle %d\n", AMR_PROGRAM,
                          cyc->adapt.report, partial, cyc->first - 1));
  PetscFunctionReturn(0);
}

/* Each rank's KSPSolve time of the cycle, wall and thread CPU, beside the
 * weighed local work (rank_time): the solve's own imbalance, which the
 * weights do not see.  Absent for a problem without a linear solve. */
static PetscErrorCode report_ksp(AmrCycle cyc, json_line *j)
{
  const AmrProblem p = cyc->problem;
  const int P = cyc->p4est->mpisize;
  double mine[2] = {p->ksp_wall, p->ksp_cpu}, *all, *wall, *cpu;

  PetscFunctionBeginUser;
  if (isnan(mine[0])) PetscFunctionReturn(0);
  PetscCall(PetscMalloc3(2 * P, &all, P, &wall, P, &cpu));
  PetscCallMPI(MPI_Gather(mine, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, 0, cyc->comm));
  for (int r = 0; r < P; r++) {
    wall[r] = all[2 * r];
    cpu[r] = all[2 * r + 1];
  }
  json_reals(j, "rank_ksp_time", P, wall);
  json_reals(j, "rank_ksp_cpu", P, cpu);
  PetscCall(PetscFree3(all, wall, cpu));
  PetscFunctionReturn(0);
}

/* The report line of a cycle: the common fields, the balancer's, the
 * problem's. */
PetscErrorCode AmrCycleWriteRecord(AmrCycle cyc, int cycle, long long cells, const double *t, const AmrLbRecord *lr)
{
  const AmrProblem p = cyc->problem;
  json_line j;
  char *line = NULL;
  size_t len = 0;
  FILE *mem = NULL;
  int err = 0, cut = 0;

  PetscFunctionBeginUser;
  /* composed whole first: a record that cannot be written fails with the
   * system's reason, at once */
  if (cyc->report >= 0 && !(mem = open_memstream(&line, &len))) err = errno;
  json_begin(&j, mem);
  json_str(&j, "program", AMR_PROGRAM);
  json_int(&j, "dim", P4EST_DIM);
  json_str(&j, "problem", AmrProblemGetName(p));
  json_str(&j, "mesh", p->mesh->name);
  json_int(&j, "degree", p->degree);
  json_int(&j, "ranks", cyc->p4est->mpisize);
  json_int(&j, "cycle", cycle);
  {
    char id[16];
    PetscCall(PetscSNPrintf(id, sizeof id, "%08x", (unsigned)cyc->run_id));
    json_str(&j, "run_id", id);
  }
  json_bool(&j, "restarted", cyc->restarts > 0);
  if (p->state.sim_time >= 0)
    json_real(&j, "sim_time", p->state.sim_time);
  else
    json_null(&j, "sim_time");
  if (p->state.step >= 0)
    json_int(&j, "step", p->state.step);
  else
    json_null(&j, "step");
  json_int(&j, "cells", cells);
  json_int(&j, "dofs", p->dofs);
  for (int ph = 0; ph < AMR_CYCLE_NPHASES; ph++) {
    char key[32];
    PetscCall(PetscSNPrintf(key, sizeof key, "t_%s", AmrCyclePhaseName(ph)));
    json_real(&j, key, t[ph]);
  }
  AmrLbRecordJSON(&j, cyc->lb, lr);
  PetscCall(report_ksp(cyc, &j));
  PetscCall(AmrProblemReport(p, &j));
  json_end(&j);
  /* with the system before the cycle's checkpoint: a killed run loses no
   * record, and a full disk ends the run before the checkpoint that would
   * continue after the lost record */
  if (mem && fclose(mem)) err = errno;
  if (mem && !err) {
    /* every record before this one was written whole: this is where it
     * starts (write(2), not stdio: a test's shim can fail it part way) */
    const off_t at = lseek(cyc->report, 0, SEEK_CUR);
    err = AmrFileWrite(cyc->report, line, len, -1);
    /* the part of the record a full disk took is cut, so that the report
     * ends with a whole record, as a restart needs */
    cut = err && at >= 0 && !ftruncate(cyc->report, at);
  }
  free(line);
  {
    int ec[2] = {err, cut};
    PetscCallMPI(MPI_Bcast(ec, 2, MPI_INT, 0, cyc->comm));
    PetscCheck(!ec[0], cyc->comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot write: %s%s", AmrPathShort(cyc->adapt.report), strerror(ec[0]),
               ec[1] ? " (cut back to its last whole record)" : "");
  }
  PetscCall(AmrCycleCatchInterrupts(cyc, cycle));
  PetscFunctionReturn(0);
}
