/* SIGINT and SIGTERM during a run (impl/cycle.h): rank 0 prints one line
 * naming the last cycle done and the checkpoint that continues the run,
 * instead of PETSc's trace, which would say nothing of the run.  Compiled
 * for 2D and 3D (P4_TO_P8). */
#define _POSIX_C_SOURCE 200809L /* sigaction */
#include "app/impl/cycle.h"
#include "util/options.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* The line an interrupt prints on rank 0, rewritten after every cycle and
 * checkpoint into the buffer the handler is not reading, then published by
 * one store: the handler may run at any instruction.  The human lines are
 * every 10th cycle after cycle 10, so this line names the last cycle done. */
static char interrupt_line[2][2 * PETSC_MAX_PATH_LEN + 256];
static size_t interrupt_len[2];
static volatile sig_atomic_t interrupt_current = -1; /* -1: print nothing (not rank 0) */
/* PETSc and MPI run threads of their own, any of which may take the
 * signal: a mask on this thread would not hold it back, a flag does */
static volatile sig_atomic_t interrupt_deferred, interrupt_pending;

static void on_interrupt(int sig)
{
  const int k = interrupt_current;
  if (interrupt_deferred) {
    interrupt_pending = sig;
    return;
  }
  if (k >= 0) {
    ssize_t unused = write(STDERR_FILENO, interrupt_line[k], interrupt_len[k]);
    (void)unused;
  }
  _exit(128 + sig);
}

void AmrCycleDeferInterrupts(PetscBool defer)
{
  interrupt_deferred = defer;
  if (!defer && interrupt_pending) on_interrupt(interrupt_pending);
}

PetscErrorCode AmrCycleCatchInterrupts(AmrCycle cyc, int done)
{
  const int k = interrupt_current == 0 ? 1 : 0;
  char *l = interrupt_line[k];
  const size_t len = sizeof interrupt_line[k];
  PetscMPIInt rank;
  struct sigaction sa;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(cyc->comm, &rank));
  if (done < 0) PetscCall(PetscSNPrintf(l, len, "%s: interrupted before cycle %d was done", AMR_PROGRAM, cyc->first));
  else PetscCall(PetscSNPrintf(l, len, "%s: interrupted after cycle %d", AMR_PROGRAM, done));
  if (cyc->held_by)
    PetscCall(PetscSNPrintf(l + strlen(l), len - strlen(l), "; checkpoint %s continues the run at cycle %d: -restart %s\n", cyc->held_by, cyc->held_next,
                            cyc->held_by));
  else if (cyc->checkpoint[0] && cyc->checkpoint_interval) PetscCall(PetscSNPrintf(l + strlen(l), len - strlen(l), "; no checkpoint written yet\n"));
  else PetscCall(PetscSNPrintf(l + strlen(l), len - strlen(l), "; no checkpoint (-checkpoint PREFIX writes one)\n"));
  interrupt_len[k] = strlen(l);
  if (rank == 0) interrupt_current = k;
  /* over PETSc's handler, whose trace would say nothing of the run */
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  PetscCheck(!sigaction(SIGINT, &sa, NULL) && !sigaction(SIGTERM, &sa, NULL), cyc->comm, PETSC_ERR_SYS, "cannot catch SIGINT and SIGTERM: %s",
             strerror(errno));
  PetscFunctionReturn(0);
}
