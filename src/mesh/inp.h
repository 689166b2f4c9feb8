/** \file inp.h
 * The Abaqus .inp reader: coarse meshes as gmsh, Cubit and Abaqus/CAE
 * write them, with their named boundary parts.
 *
 * Plain C, no MPI and no p4est: AmrMeshCreate() (mesh.c) runs it on one
 * rank and builds the p4est connectivity from its result.
 */
#ifndef AMR_INP_H
#define AMR_INP_H

#include <stddef.h>

/** Longest set name kept (Abaqus allows 80 characters). */
#define AMR_INP_NAME 81
/** Room for the reason a set is not a boundary part. */
#define AMR_INP_WHY 200

/** A named set of the file (*ELSET, *NSET, *SURFACE, ELSET= of *ELEMENT,
 * NSET= of *NODE; sets of one name, case-insensitive, are one set). */
typedef struct {
  char name[AMR_INP_NAME]; /**< as the file first spells it */
  char why[AMR_INP_WHY];   /**< empty: a boundary part; else why it is not one */
  long nfaces;             /**< boundary faces it names */
  long *face;              /**< cell * 2 dim + p4est face number, ascending */
} AmrInpSet;

/** A coarse mesh read from an .inp file. */
typedef struct {
  int dim;       /**< 2 or 3 */
  long nvert;    /**< vertices: the nodes cells use, in increasing node id */
  double *xyz;   /**< 3 coordinates per vertex */
  long ncell;    /**< cells (trees), in file order */
  long *cell;    /**< 2^dim vertex indices per cell, in p4est's corner order */
  int nsets;     /**< named sets, in the order the file defines them */
  AmrInpSet *set;
} AmrInpMesh;

/** Parse the \a len bytes of \a text, the contents of the .inp file \a path
 * (used in messages only), as a mesh of dimension \a dim (2 or 3).
 *
 * Cells are the elements of the program's dimension (linear quadrilaterals
 * CPS4, CPE4, C2D4, S4, S4R, ... in 2D; hexahedra C3D8, C3D8R, ... in 3D);
 * lower-dimensional elements only name boundary parts.  Keywords and
 * parameters are case-insensitive, ** lines are comments, *Part, *Assembly
 * and one *Instance (with an optional translation) are accepted.  Checked:
 * every number, node and element ids (unique), nodes of cells defined and
 * distinct, positive orientation of every cell, no face in more than two
 * cells.  Returns 1 and fills \a m, or 0 with \a msg one sentence naming
 * the file (and line) and \a m empty.  Not collective.
 * \param[in] path the file, named in messages
 * \param[in] text its contents
 * \param[in] len bytes of text
 * \param[in] dim 2 or 3: the cells' dimension
 * \param[out] m the mesh, or empty on failure
 * \param[out] msg on failure, the sentence
 * \param[in] msglen bytes of msg
 */
int AmrInpParse(const char *path, const char *text, size_t len, int dim, AmrInpMesh *m, char *msg, size_t msglen);

/** Free what AmrInpParse() allocated; safe on a zeroed mesh.
 *  \param[in,out] m the mesh, zeroed
 */
void AmrInpFree(AmrInpMesh *m);

#endif
