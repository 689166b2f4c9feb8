/** \file mesh.h
 * Coarse meshes for amr2d/amr3d: reading, validating and naming them.
 *
 * Compiled once for 2D and once for 3D (P4_TO_P8).  Errors in user input
 * are raised collectively with SETERRQ(comm, PETSC_ERR_USER_INPUT, ...): the
 * same message on every rank, so the driver can print it once and exit
 * cleanly without MPI_Abort.
 */
#ifndef AMR_MESH_H
#define AMR_MESH_H

#include <petscsys.h>
#ifndef P4_TO_P8
#include <p4est_connectivity.h>
#include <p4est_geometry.h>
#else
#include <p4est_to_p8est.h>
#include <p8est_connectivity.h>
#include <p8est_geometry.h>
#endif

/** A coarse mesh: the connectivity of the trees and their geometry. */
typedef struct {
  p4est_connectivity_t *conn; /**< trees, their vertices and neighbours */
  p4est_geometry_t *geom;     /**< NULL: the (bi/tri)linear map of each tree's
                                   vertices; else a curved map (shell, sphere) */
  char name[PETSC_MAX_PATH_LEN]; /**< the -mesh value it was made from */
} amr_mesh_t;

/** Make the coarse mesh named by \a spec on every rank of \a comm.
 *
 * \a spec is either the path of an Abaqus .inp file, validated on rank 0 by
 * amr_inp_validate() and then read by p4est and broadcast, or
 * "builtin:NAME[:AxB[xC]]" for one of p4est's built-in connectivities
 * (amr_mesh_builtin_names() lists them).  Collective.
 */
PetscErrorCode amr_mesh_create(MPI_Comm comm, const char *spec, amr_mesh_t *mesh);

/** Free what amr_mesh_create() made.  Safe on a zeroed mesh. */
PetscErrorCode amr_mesh_destroy(amr_mesh_t *mesh);

/** The built-in mesh names of this dimension, separated by commas, for -help
 *  and error messages. */
const char *amr_mesh_builtin_names(void);

/** Check that \a path is an Abaqus .inp file that p4est's reader accepts and
 * that describes a valid coarse mesh of dimension \a dim (2 or 3).
 *
 * p4est's reader aborts the whole run or returns garbage on some bad files,
 * so everything it relies on is checked here first: a *NODE section of
 * "id, x, y, z" lines with ids 1..N, element types C2D4/CPS4/S4 (2D) or C3D8
 * (3D), element lines with exactly 4 or 8 existing, distinct node ids, every
 * field numeric, positive orientation (counter-clockwise quads, positive
 * Jacobian at each hex corner) and no face shared by more than two
 * elements.  Not collective: returns 0 and fills \a msg (a complete sentence
 * naming the file and line) on the first problem, 1 if the file is valid.
 */
int amr_inp_validate(const char *path, int dim, char *msg, size_t msglen);

#endif
