/* The unknown-option check (unknown_options.h). */
#include "util/unknown_options.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* PETSc's own options that are read after the check (at PetscFinalize, at a
 * solve) or that only PetscInitialize looks at. */
static const char *const petsc_own[] = {"help", "options_left", "options_file", "options_view", "options_monitor", "log_view", "log_view_memory",
                                        "log_trace", "log_all", "log_exclude", "log_sync", "malloc_debug", "malloc_dump", "malloc_view", "malloc_test",
                                        "malloc_coalesce", "memory_view", "objects_dump", "info", "info_exclude", "on_error_abort", "on_error_attach_debugger",
                                        "start_in_debugger", "debugger_ranks", "no_signal_handler", "fp_trap", "check_pointer_intensity", "version",
                                        "use_gpu_aware_mpi", "history", "viewer_binary_skip_info", "skip_petscrc", "stop_for_debugger", NULL};

/* A solver's options that it reads only when it solves (viewers, the
 * convergence reason, eigenvalue estimates): -PREFIX, a family, then a
 * name containing one of the words.  Its other options were read when it
 * was made, so an unread one is a typo. */
static const char *const solver_families[] = {"ksp_", "pc_", "mat_", "vec_", NULL};
static const char *const solver_late[] = {"view", "converged_r", "final_residual", "compute_", NULL};

static PetscBool known(const char *name, int nsolvers, const char *const solvers[])
{
  for (int i = 0; petsc_own[i]; i++)
    if (!strcmp(name, petsc_own[i])) return PETSC_TRUE;
  for (int s = 0; s < nsolvers; s++) {
    const size_t n = strlen(solvers[s]);
    if (strncmp(name, solvers[s], n)) continue;
    for (int f = 0; solver_families[f]; f++) {
      if (strncmp(name + n, solver_families[f], strlen(solver_families[f]))) continue;
      for (int w = 0; solver_late[w]; w++)
        if (strstr(name + n, solver_late[w])) return PETSC_TRUE;
    }
  }
  return PETSC_FALSE;
}

/* The option names the -help lines of a reread name. */
typedef struct {
  char (*name)[64];
  int n, cap;
} NameList;

static NameList captured;

static void add_name(const char *s, size_t len)
{
  if (len == 0 || len >= 64) return;
  for (int i = 0; i < captured.n; i++)
    if (strlen(captured.name[i]) == len && !strncmp(captured.name[i], s, len)) return;
  if (captured.n == captured.cap) {
    char(*more)[64] = realloc(captured.name, sizeof *more * (size_t)(2 * captured.cap + 16));
    if (!more) return;
    captured.name = more;
    captured.cap = 2 * captured.cap + 16;
  }
  memcpy(captured.name[captured.n], s, len);
  captured.name[captured.n][len] = '\0';
  captured.n++;
}

/* Stands in for PetscHelpPrintf: keeps the "  -name <...>" of each line. */
static PetscErrorCode capture(MPI_Comm comm, const char format[], ...)
{
  char line[1024];
  va_list ap;

  (void)comm;
  va_start(ap, format);
  vsnprintf(line, sizeof line, format, ap);
  va_end(ap);
  for (const char *c = line; *c; c++) {
    if (*c == '-' && (c == line || c[-1] == ' ' || c[-1] == '\n') && (isalpha((unsigned char)c[1]))) {
      size_t len = 0;
      while (isalnum((unsigned char)c[1 + len]) || c[1 + len] == '_') len++;
      if (c[1 + len] == ' ' || c[1 + len] == '\0' || c[1 + len] == '\n' || c[1 + len] == ':') add_name(c + 1, len);
      c += len;
    }
  }
  return 0;
}

/* Silences PETSc's other output while the reread runs. */
static PetscErrorCode quiet(FILE *f, const char format[], va_list ap)
{
  (void)f;
  (void)format;
  (void)ap;
  return 0;
}

/* Edit distance (insert, delete, substitute, swap of neighbours). */
static int distance(const char *a, const char *b)
{
  const int n = (int)strlen(a), m = (int)strlen(b);
  int d[64][64];
  if (n >= 64 || m >= 64) return 1 << 20;
  for (int i = 0; i <= n; i++) d[i][0] = i;
  for (int j = 0; j <= m; j++) d[0][j] = j;
  for (int i = 1; i <= n; i++)
    for (int j = 1; j <= m; j++) {
      int v = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
      if (d[i - 1][j] + 1 < v) v = d[i - 1][j] + 1;
      if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v) v = d[i - 2][j - 2] + 1;
      d[i][j] = v;
    }
  return d[n][m];
}

PetscErrorCode AmrOptionsCheckUnused(MPI_Comm comm, int nsolvers, const char *const solvers[], AmrOptionsReader reread, AmrOptionsOwner owner, void *ctx)
{
  PetscInt n;
  char **names, **values, unknown[256] = "", hint[128] = "", owner_hint[512] = "";
  int found = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsLeftGet(NULL, &n, &names, &values));
  for (PetscInt i = 0; i < n && !found; i++)
    if (!known(names[i], nsolvers, solvers)) {
      PetscCall(PetscStrncpy(unknown, names[i], sizeof unknown));
      found = 1;
    }
  PetscCall(PetscOptionsLeftRestore(NULL, &n, &names, &values));
  /* every rank read the same options, but decide together */
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &found, 1, MPI_INT, MPI_MAX, comm));
  if (!found) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Bcast(unknown, sizeof unknown, MPI_CHAR, 0, comm));
  {
    PetscErrorCode (*saved)(MPI_Comm, const char[], ...) = PetscHelpPrintf;
    PetscErrorCode (*saved_vf)(FILE *, const char[], va_list) = PetscVFPrintf;
    PetscErrorCode err;
    captured.n = 0;
    /* PETSc prints each options block's help once per run: forget the
     * blocks the first reading saw */
    PetscCall(PetscOptionsHelpPrintedDestroy(&PetscOptionsHelpPrintedSingleton));
    PetscCall(PetscOptionsHelpPrintedCreate(&PetscOptionsHelpPrintedSingleton));
    PetscCall(PetscOptionsSetValue(NULL, "-help", NULL));
    PetscHelpPrintf = capture;
    PetscVFPrintf = quiet;
    err = reread(ctx);
    if (!err && owner) err = owner(ctx, unknown, owner_hint, sizeof owner_hint);
    PetscHelpPrintf = saved;
    PetscVFPrintf = saved_vf;
    PetscCall(PetscOptionsClearValue(NULL, "-help"));
    PetscCall(err);
  }
  {
    int best = 1 << 20, limit = (int)strlen(unknown) / 3 + 1;
    for (int i = 0; i < captured.n; i++) {
      const int d = distance(unknown, captured.name[i]);
      if (d < best && d <= limit) {
        best = d;
        PetscCall(PetscSNPrintf(hint, sizeof hint, " (did you mean -%s?)", captured.name[i]));
      }
    }
    /* a known name that this run does not read: another method's option */
    if (best == 0) PetscCall(PetscStrncpy(hint, " (not read with the options chosen: another -problem, -lb_method or mode reads it)", sizeof hint));
    /* PETSc's -help is too far from -h for the distance */
    if (!strcmp(unknown, "h")) PetscCall(PetscStrncpy(hint, " (did you mean -help?)", sizeof hint));
  }
  free(captured.name);
  captured.name = NULL;
  captured.n = captured.cap = 0;
  {
    /* reported here, not again by -options_left at the end */
    char dashed[sizeof unknown + 1];
    PetscCall(PetscSNPrintf(dashed, sizeof dashed, "-%s", unknown));
    PetscCall(PetscOptionsClearValue(NULL, dashed));
  }
  SETERRQ(comm, PETSC_ERR_USER_INPUT, "unknown option -%s%s", unknown, owner_hint[0] ? owner_hint : hint);
}
