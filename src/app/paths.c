/* Options-file-relative paths (paths.h).
 *
 * PETSc inserts the command line in order, an -options_file's contents
 * where the option stands, so the value in force is the last one in that
 * order; the options database does not say where a value came from, so
 * the command line is walked again here and each file read into a scratch
 * database. */
#include "app/paths.h"

#include <stdio.h>
#include <string.h>

static const char *const path_options[] = {"-mesh", "-report", "-vtk", "-checkpoint", "-restart"};
#define NPATHS (sizeof path_options / sizeof path_options[0])

typedef struct {
  char value[PETSC_MAX_PATH_LEN];
  char file[PETSC_MAX_PATH_LEN]; /* the options file it came from; empty: the command line */
} PathSource;

/* The path options set in options file `file`, as coming from it. */
static PetscErrorCode read_file(MPI_Comm comm, const char *file, PathSource src[])
{
  PetscOptions scratch;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsCreate(&scratch));
  PetscCall(PetscOptionsInsertFile(comm, scratch, file, PETSC_TRUE));
  for (size_t k = 0; k < NPATHS; k++) {
    PetscBool set;
    char value[PETSC_MAX_PATH_LEN];
    PetscCall(PetscOptionsGetString(scratch, NULL, path_options[k], value, sizeof value, &set));
    if (!set) continue;
    PetscCall(PetscStrncpy(src[k].value, value, sizeof src[k].value));
    PetscCall(PetscStrncpy(src[k].file, file, sizeof src[k].file));
  }
  PetscCall(PetscOptionsDestroy(&scratch));
  PetscFunctionReturn(0);
}

/* value relative to the folder of file, in the database as option. */
static PetscErrorCode resolve(MPI_Comm comm, const char *option, const PathSource *s)
{
  const char *slash = strrchr(s->file, '/');
  char path[PETSC_MAX_PATH_LEN];
  int n;

  PetscFunctionBeginUser;
  if (!s->file[0] || !s->value[0] || s->value[0] == '/' || !strncmp(s->value, "builtin:", 8) || !slash) PetscFunctionReturn(0);
  n = snprintf(path, sizeof path, "%.*s/%s", (int)(slash - s->file), s->file, s->value);
  PetscCheck(n >= 0 && (size_t)n < sizeof path, comm, PETSC_ERR_USER_INPUT, "option %s %s of options file %s: the path is too long", option,
             s->value, s->file);
  PetscCall(PetscOptionsSetValue(NULL, option, path));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsResolvePaths(MPI_Comm comm)
{
  PathSource src[NPATHS];
  char **args;
  int argc;

  PetscFunctionBeginUser;
  memset(src, 0, sizeof src);
  PetscCall(PetscGetArgs(&argc, &args));
  for (int i = 1; i < argc; i++) {
    if (!strcmp(args[i], "-options_file") && i + 1 < argc) PetscCall(read_file(comm, args[++i], src));
    for (size_t k = 0; k < NPATHS; k++)
      if (!strcmp(args[i], path_options[k])) src[k].file[0] = '\0';
  }
  for (size_t k = 0; k < NPATHS; k++) PetscCall(resolve(comm, path_options[k], &src[k]));
  PetscFunctionReturn(0);
}
