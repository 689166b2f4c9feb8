#ifndef AMRDLB_MESH_SHAPES_H
#define AMRDLB_MESH_SHAPES_H

/* Small coarse meshes built in code for the finite element tests and
 * problems: the unit square/cube as one tree or as 2^dim trees, the L-shape
 * (2D, three trees, one of them rotated so inter-tree orientation is
 * exercised) and the Fichera corner (3D, seven trees). */

#include "mesh/p4est_dim.h"

/** The coarse mesh called name ("unit", "brick", "lshape" in 2D,
 *  "fichera" in 3D), or NULL if unknown. */
p4est_connectivity_t *AmrShapeNew(const char *name);

#endif
