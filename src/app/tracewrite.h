/** \file tracewrite.h
 * -trace_loads FILE: the app's half of the load trace (balance/loadtrace.h,
 * src/app/FORMATS.md's format): every balancing step appends the weighted curve
 * it saw, each rank its own cells at its offset, rank 0 the headers and
 * the per-rank arrays, never gathered.  Plain checked writes, not MPI-IO:
 * Open MPI's MPI-IO reports a failed write (a full disk) as a success. */
#ifndef AMR_APP_TRACEWRITE_H
#define AMR_APP_TRACEWRITE_H

#include <petscsys.h>
#include "mesh/p4est_dim.h"
#include "balance/loadtrace.h"

typedef struct _p_AmrTrace *AmrTrace;

/** Open path for writing (collective; created if missing, its contents
 *  kept until the first append).  A file that cannot be opened is a user
 *  error naming the option. */
PetscErrorCode AmrTraceOpen(MPI_Comm comm, const char *path, AmrTrace *t);

/** Append one cycle (collective): the scalars, costs, phase names,
 *  measured times and predicted loads of head (its first, w, type, x,
 *  tree, level, pos, pw are not read), the split and the cells' centres,
 *  trees, levels and positions from the forest, the local cells' weights
 *  w, load types (NULL: all 0) and, for each of head->nphases phases k,
 *  their weights pw[k] (NULL when there are none).  The first append cuts the file to the end
 *  the run continues from (AmrTraceContinue; 0 for a new run).  *cpu_s: this
 *  rank's thread CPU seconds of the append. */
PetscErrorCode AmrTraceAppend(AmrTrace t, p4est_t *p4est, const lb_load_trace *head, const double *w, const int *types, const double *const *pw,
                              double *cpu_s);

/** The file's name and the offset after the last cycle appended. */
void AmrTraceEnd(AmrTrace t, const char **path, int64_t *end);

/** The run id the file header carries (0 until set). */
void AmrTraceSetRun(AmrTrace t, uint32_t run);

/** A restart continues the file at end (the checkpoint's; 0: the file
 *  is begun anew): the cycles written after the checkpoint are dropped at
 *  the next append.  Before anything is written, and so that the file
 *  stays as it is (collective): with check_run, a file that holds
 *  another run's trace (its header's run id is not t's, or it holds no
 *  header) is a user error naming the option; so is a file shorter than
 *  end (cut, or removed and created anew). */
PetscErrorCode AmrTraceContinue(AmrTrace t, PetscBool check_run, int64_t end);

/** Close the file, its data on disk: a failure is a user error naming
 *  the option. */
PetscErrorCode AmrTraceClose(AmrTrace *t);

#endif
