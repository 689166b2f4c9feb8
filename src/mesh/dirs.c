/* mkdir -p of an output path's directory part (dirs.h). */
#include "mesh/dirs.h"
#include "util/fileio.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

PetscErrorCode AmrMakeParentDirs(MPI_Comm comm, const char *option, const char *value, const char *path)
{
  char dir[PETSC_MAX_PATH_LEN];
  PetscMPIInt rank;
  int err = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscStrncpy(dir, path, sizeof dir));
  if (rank == 0)
    for (char *s = strchr(dir + 1, '/'); s && !err; s = strchr(s + 1, '/')) {
      *s = '\0';
      if (mkdir(dir, 0777) && errno != EEXIST) err = errno;
      *s = '/';
    }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "option %s %s: cannot create its directory: %s", option, AmrPathShort(value), strerror(err));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCheckOutputDir(MPI_Comm comm, const char *option, const char *path)
{
  char dir[PETSC_MAX_PATH_LEN];
  char *slash;
  struct stat st;
  PetscMPIInt rank;
  int fail = 0;

  PetscFunctionBeginUser;
  PetscCall(AmrMakeParentDirs(comm, option, path, path));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscStrncpy(dir, path, sizeof dir));
  slash = strrchr(dir, '/');
  if (slash) slash[slash == dir ? 1 : 0] = '\0';
  else PetscCall(PetscStrncpy(dir, ".", sizeof dir));
  /* a file in the directory's place would pass mkdir -p's EEXIST */
  if (rank == 0) fail = stat(dir, &st) ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR : access(dir, W_OK | X_OK) ? errno : 0;
  PetscCallMPI(MPI_Bcast(&fail, 1, MPI_INT, 0, comm));
  PetscCheck(!fail, comm, PETSC_ERR_USER_INPUT, "option %s %s: cannot write into directory '%s': %s", option, AmrPathShort(path), AmrPathShort(dir), strerror(fail));
  PetscFunctionReturn(0);
}
