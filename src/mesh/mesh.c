/* Coarse meshes: builtin connectivities and validated Abaqus files. */
#include "mesh.h"

#include <stdio.h>
#include <string.h>

#define AMR_BUILTIN_PREFIX "builtin:"

#ifndef P4_TO_P8
static const char *builtin_names = "unit,periodic,rotwrap,corner,pillow,moebius,star,cubed,disk,brick[:AxB]";
#else
static const char *builtin_names = "unit,periodic,rotwrap,twocubes,twowrap,rotcubes,shell,sphere,brick[:AxBxC]";
#endif

const char *amr_mesh_builtin_names(void) { return builtin_names; }

/* "brick" or "brick:AxB[xC]": p4est's byname catalogue has only one fixed
 * brick, users want to choose the number of trees per direction. */
static PetscErrorCode mesh_brick(MPI_Comm comm, const char *spec, const char *size, p4est_connectivity_t **conn)
{
  int n[3] = {2, 3, 5}, got = P4EST_DIM;
  char tail;

  PetscFunctionBeginUser;
  if (size) {
#ifndef P4_TO_P8
    got = sscanf(size, "%dx%d%c", &n[0], &n[1], &tail);
#else
    got = sscanf(size, "%dx%dx%d%c", &n[0], &n[1], &n[2], &tail);
#endif
  }
  PetscCheck(got == P4EST_DIM, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: the brick size must be %s", spec,
             P4EST_DIM == 2 ? "AxB, e.g. brick:4x2" : "AxBxC, e.g. brick:4x2x2");
  for (int i = 0; i < P4EST_DIM; i++)
    PetscCheck(n[i] >= 1 && n[i] <= 4096, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: brick sizes must be from 1 to 4096", spec);
#ifndef P4_TO_P8
  *conn = p4est_connectivity_new_brick(n[0], n[1], 0, 0);
#else
  *conn = p8est_connectivity_new_brick(n[0], n[1], n[2], 0, 0, 0);
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode mesh_builtin(MPI_Comm comm, const char *spec, amr_mesh_t *mesh)
{
  char name[64];
  const char *arg = spec + strlen(AMR_BUILTIN_PREFIX), *colon = strchr(arg, ':');
  size_t len = colon ? (size_t)(colon - arg) : strlen(arg);

  PetscFunctionBeginUser;
  PetscCheck(len > 0 && len < sizeof name, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: unknown builtin mesh (choose builtin:NAME with NAME one of %s)",
             spec, builtin_names);
  memcpy(name, arg, len);
  name[len] = '\0';
  if (!strcmp(name, "brick")) PetscCall(mesh_brick(comm, spec, colon ? colon + 1 : NULL, &mesh->conn));
  else {
    /* byname's catalogue has two names we want plainer: the fixed brick and
     * "unit"; every other name passes through unchanged. */
    PetscCheck(!colon, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: only builtin:brick takes a size", spec);
    if (strstr(builtin_names, name) && strcmp(name, "brick23") && strcmp(name, "brick235")) mesh->conn = p4est_connectivity_new_byname(name);
    PetscCheck(mesh->conn, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: unknown builtin mesh '%s' (choose one of %s)", spec, name, builtin_names);
  }
#ifdef P4_TO_P8
  /* shell and sphere reuse vertices and are only a domain through their map */
  if (!strcmp(name, "shell")) mesh->geom = p8est_geometry_new_shell(mesh->conn, 1.0, 0.55);
  if (!strcmp(name, "sphere")) mesh->geom = p8est_geometry_new_sphere(mesh->conn, 1.0, 0.6, 0.3);
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode mesh_inp(MPI_Comm comm, const char *path, amr_mesh_t *mesh)
{
  PetscMPIInt rank;
  char msg[PETSC_MAX_PATH_LEN + 256] = "";
  int ok = 1;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    ok = amr_inp_validate(path, P4EST_DIM, msg, sizeof msg);
    if (ok) {
      mesh->conn = p4est_connectivity_read_inp(path);
      if (!mesh->conn) {
        snprintf(msg, sizeof msg, "mesh file '%s': p4est could not read it", path);
        ok = 0;
      } else if (!p4est_connectivity_is_valid(mesh->conn)) {
        snprintf(msg, sizeof msg, "mesh file '%s': p4est built an invalid connectivity from it", path);
        p4est_connectivity_destroy(mesh->conn);
        mesh->conn = NULL;
        ok = 0;
      }
    }
  }
  /* one rank read the file: everyone must learn the verdict before anyone
   * raises an error, or the others would wait in the broadcast forever */
  PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm));
  if (!ok) {
    PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "%s", msg);
  }
  mesh->conn = p4est_connectivity_bcast(mesh->conn, 0, comm);
  PetscFunctionReturn(0);
}

PetscErrorCode amr_mesh_create(MPI_Comm comm, const char *spec, amr_mesh_t *mesh)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(mesh, sizeof *mesh));
  PetscCheck(spec && spec[0], comm, PETSC_ERR_USER_INPUT, "option -mesh: empty value (give FILE.inp or builtin:NAME)");
  PetscCall(PetscStrncpy(mesh->name, spec, sizeof mesh->name));
  if (!strncmp(spec, AMR_BUILTIN_PREFIX, strlen(AMR_BUILTIN_PREFIX))) PetscCall(mesh_builtin(comm, spec, mesh));
  else PetscCall(mesh_inp(comm, spec, mesh));
  PetscFunctionReturn(0);
}

PetscErrorCode amr_mesh_destroy(amr_mesh_t *mesh)
{
  PetscFunctionBeginUser;
  if (mesh->geom) p4est_geometry_destroy(mesh->geom);
  if (mesh->conn) p4est_connectivity_destroy(mesh->conn);
  mesh->geom = NULL;
  mesh->conn = NULL;
  PetscFunctionReturn(0);
}
