/* VTK output through p4est's writer. */
#include "vtk.h"

#ifndef P4_TO_P8
#include <p4est_vtk.h>
#else
#include <p8est_vtk.h>
#endif
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* mkdir -p of the directory part of prefix, so "-vtk out/run1/m" works on a
 * fresh checkout. */
static PetscErrorCode vtk_make_dirs(MPI_Comm comm, const char *prefix)
{
  char dir[PETSC_MAX_PATH_LEN];
  PetscMPIInt rank;
  int err = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCall(PetscStrncpy(dir, prefix, sizeof dir));
  if (rank == 0)
    for (char *s = strchr(dir + 1, '/'); s && !err; s = strchr(s + 1, '/')) {
      *s = '\0';
      if (mkdir(dir, 0777) && errno != EEXIST) err = errno;
      *s = '/';
    }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "option -vtk %s: cannot create its directory: %s", prefix, strerror(err));
  PetscFunctionReturn(0);
}

PetscErrorCode amr_vtk_write(p4est_t *p4est, p4est_geometry_t *geom, const char *prefix, int nfields, const char *const names[], sc_array_t *const values[])
{
  p4est_vtk_context_t *cont;
  const char *n[AMR_VTK_MAX_FIELDS];
  sc_array_t *v[AMR_VTK_MAX_FIELDS];

  PetscFunctionBeginUser;
  PetscCheck(nfields >= 0 && nfields <= AMR_VTK_MAX_FIELDS, p4est->mpicomm, PETSC_ERR_ARG_OUTOFRANGE, "amr_vtk_write: %d fields, at most %d", nfields,
             AMR_VTK_MAX_FIELDS);
  PetscCall(vtk_make_dirs(p4est->mpicomm, prefix));
  for (int i = 0; i < AMR_VTK_MAX_FIELDS; i++) {
    n[i] = i < nfields ? names[i] : NULL;
    v[i] = i < nfields ? values[i] : NULL;
  }
  cont = p4est_vtk_context_new(p4est, prefix);
  p4est_vtk_context_set_geom(cont, geom);
  p4est_vtk_context_set_scale(cont, 1.0);
  cont = p4est_vtk_write_header(cont);
  PetscCheck(cont, p4est->mpicomm, PETSC_ERR_FILE_OPEN, "option -vtk %s: cannot write the VTK header", prefix);
  /* p4est's cell-data writer is variadic only (the array version is not in
   * the 2.2 library), so the field count picks the call. */
  switch (nfields) {
  case 0: cont = p4est_vtk_write_cell_dataf(cont, 1, 1, 1, 0, 0, 0, cont); break;
  case 1: cont = p4est_vtk_write_cell_dataf(cont, 1, 1, 1, 0, 1, 0, n[0], v[0], cont); break;
  case 2: cont = p4est_vtk_write_cell_dataf(cont, 1, 1, 1, 0, 2, 0, n[0], v[0], n[1], v[1], cont); break;
  case 3: cont = p4est_vtk_write_cell_dataf(cont, 1, 1, 1, 0, 3, 0, n[0], v[0], n[1], v[1], n[2], v[2], cont); break;
  case 4: cont = p4est_vtk_write_cell_dataf(cont, 1, 1, 1, 0, 4, 0, n[0], v[0], n[1], v[1], n[2], v[2], n[3], v[3], cont); break;
  case 5: cont = p4est_vtk_write_cell_dataf(cont, 1, 1, 1, 0, 5, 0, n[0], v[0], n[1], v[1], n[2], v[2], n[3], v[3], n[4], v[4], cont); break;
  case 6: cont = p4est_vtk_write_cell_dataf(cont, 1, 1, 1, 0, 6, 0, n[0], v[0], n[1], v[1], n[2], v[2], n[3], v[3], n[4], v[4], n[5], v[5], cont); break;
  case 7:
    cont = p4est_vtk_write_cell_dataf(cont, 1, 1, 1, 0, 7, 0, n[0], v[0], n[1], v[1], n[2], v[2], n[3], v[3], n[4], v[4], n[5], v[5], n[6], v[6], cont);
    break;
  default:
    cont = p4est_vtk_write_cell_dataf(cont, 1, 1, 1, 0, 8, 0, n[0], v[0], n[1], v[1], n[2], v[2], n[3], v[3], n[4], v[4], n[5], v[5], n[6], v[6], n[7],
                                      v[7], cont);
  }
  PetscCheck(cont, p4est->mpicomm, PETSC_ERR_FILE_WRITE, "option -vtk %s: cannot write the cell data", prefix);
  PetscCheck(!p4est_vtk_write_footer(cont), p4est->mpicomm, PETSC_ERR_FILE_WRITE, "option -vtk %s: cannot finish the VTK files", prefix);
  PetscFunctionReturn(0);
}
