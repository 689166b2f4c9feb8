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
#include "mesh/p4est_dim.h"
#include "mesh/inp.h"

/** A coarse mesh: the connectivity of the trees, their geometry and the
 * named sets of its file. */
typedef struct {
  p4est_connectivity_t *conn; /**< trees, their vertices and neighbours */
  p4est_geometry_t *geom;     /**< NULL: the (bi/tri)linear map of each tree's
                                   vertices; else a curved map (shell, sphere) */
  char name[PETSC_MAX_PATH_LEN]; /**< the -mesh value it was made from */
  int nparts;                 /**< named sets of the .inp file (0 for builtins) */
  AmrInpSet *part;        /**< each with its boundary faces as
                                   tree * P4EST_FACES + face, or why it is no
                                   boundary part */
} AmrMesh;

/** Make the coarse mesh named by \a spec on every rank of \a comm.
 *
 * \a spec is either the path of an Abaqus .inp file, read and checked on
 * rank 0 (AmrInpParse()) and broadcast, or "builtin:NAME[:AxB[xC]]" for
 * one of p4est's built-in connectivities (AmrMeshBuiltinNames() lists
 * them).  Collective; a bad file is a PETSC_ERR_USER_INPUT error with one
 * line naming the file and line on every rank.
 * \param[in] comm the ranks that get the mesh
 * \param[in] spec the -mesh value
 * \param[out] mesh the coarse mesh
 */
PetscErrorCode AmrMeshCreate(MPI_Comm comm, const char *spec, AmrMesh *mesh);

/** Make the coarse mesh from the \a len bytes of .inp text \a text (only
 * rank 0's are read; \a name stands for the file in messages).  What
 * AmrMeshCreate() does with a file's contents; collective.
 * \param[in] comm the ranks that get the mesh
 * \param[in] name the file's name in messages
 * \param[in] text .inp text (rank 0's is read)
 * \param[in] len bytes of text
 * \param[out] mesh the coarse mesh
 */
PetscErrorCode AmrMeshCreateInp(MPI_Comm comm, const char *name, const char *text, size_t len, AmrMesh *mesh);

/** Free what AmrMeshCreate() made.  Safe on a zeroed mesh.
 * \param[in,out] mesh the mesh, zeroed
 */
PetscErrorCode AmrMeshDestroy(AmrMesh *mesh);

/** The built-in mesh names of this dimension, separated by commas, for -help
 *  and error messages. */
const char *AmrMeshBuiltinNames(void);

/** The boundary condition type of every tree face from the comma-separated
 * set names of the options -bc_dirichlet (\a dirichlet) and -bc_neumann
 * (\a neumann): *bc gets num_trees * P4EST_FACES entries, 0 Dirichlet,
 * 1 Neumann, -1 for faces neither names (the problem decides), or NULL
 * when both lists are empty.  A name the mesh does not have, a set that is
 * not on the boundary, a face named by both options and a boundary that
 * would be Neumann everywhere are collective user errors.  Free *bc with
 * PetscFree().
 * \param[in] comm the ranks of the run
 * \param[in] mesh the coarse mesh with its sets
 * \param[in] dirichlet the value of -bc_dirichlet (may be empty)
 * \param[in] neumann the value of -bc_neumann (may be empty)
 * \param[out] bc per tree face 0, 1 or -1, or NULL
 */
PetscErrorCode AmrMeshBoundaryTypes(MPI_Comm comm, const AmrMesh *mesh, const char *dirichlet, const char *neumann, signed char **bc);

/** Give boundary parts their true shapes, from the value \a spec of the
 * option -boundary_shape: "NAME:SHAPE:NUMBERS", several separated by ';'.
 * SHAPE is circle (amr2d; CX,CY,R), cylinder (amr3d, axis along z through
 * CX,CY; CX,CY,R) or sphere (amr3d; CX,CY,CZ,R).  The trees with faces on
 * these parts then map their refined cells onto the shapes (geom.h);
 * vertices of the parts are moved onto the shapes (within 1e-5 R).  NULL
 * \a spec: nothing (an empty one is an error).  Collective; a bad value is
 * a user error naming the option.
 * \param[in] comm the ranks of the run
 * \param[in,out] mesh the mesh whose parts get shapes
 * \param[in] spec the value of -boundary_shape, or NULL
 */
PetscErrorCode AmrMeshSetBoundaryShapes(MPI_Comm comm, AmrMesh *mesh, const char *spec);

/** Print one line listing the mesh's boundary parts with their face counts
 * (nothing for a mesh without named sets).  Collective.
 * \param[in] comm the ranks of the run
 * \param[in] mesh the coarse mesh
 * \param[in] program the line's prefix
 */
PetscErrorCode AmrMeshViewParts(MPI_Comm comm, const AmrMesh *mesh, const char *program);

/** The cell field `boundary_part`: for every local cell of \a p4est the
 * number (1-based, in AmrMeshViewParts()'s order) of the last boundary
 * part that names one of its faces, 0 for none.  \a field is resized to
 * the local cells (doubles).
 * \param[in] mesh the coarse mesh
 * \param[in] p4est the forest on it
 * \param[out] field one double per local cell
 */
void AmrMeshBoundaryField(const AmrMesh *mesh, p4est_t *p4est, sc_array_t *field);

#endif
