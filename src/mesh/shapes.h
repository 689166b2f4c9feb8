#ifndef AMRDLB_MESH_SHAPES_H
#define AMRDLB_MESH_SHAPES_H

/* Small coarse meshes built in code for the finite element tests: the unit
 * square/cube as one tree ("unit") or as 2^dim trees ("unit-split"; not
 * -mesh builtin:brick, p4est's AxB(xC) unit trees of mesh.c), the L-shape
 * (2D, three trees, one of them rotated so inter-tree orientation is
 * exercised) and the Fichera corner (3D, seven trees). */

#include "mesh/p4est_dim.h"

/** The coarse mesh called name ("unit", "unit-split", "lshape" in 2D,
 *  "fichera" in 3D), or NULL if unknown.
 *  \param[in] name the mesh's name
 */
p4est_connectivity_t *AmrShapeNew(const char *name);

#endif
