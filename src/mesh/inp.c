/* The Abaqus .inp reader (inp.h); its jobs are the inp_*.c files beside it.
 *
 * Mesh generators write more than the cells: gmsh adds the boundary's line
 * and face elements (T3D2, and CPS4 faces in a 3D file) with one ELSET per
 * physical group, Abaqus/CAE wraps the mesh in *Part and *Instance and names
 * boundaries with *Surface over internal element sets, Cubit writes node and
 * side sets.  This reader takes the elements of the program's dimension as
 * the cells, the others only as names for boundary faces, and checks
 * everything p4est's connectivity builder takes for granted, so a broken
 * file ends in one sentence naming the file and line. */
#include "mesh/impl/inp.h"

#include <stdlib.h>
#include <string.h>

const int amr_inp_shape_dim[] = {0, 1, 2, 2, 3, 3, 3, 3};
const int amr_inp_shape_corners[] = {0, 2, 3, 4, 4, 5, 6, 8};
const int amr_inp_face_corners2[4][4] = {{0, 2, -1, -1}, {1, 3, -1, -1}, {0, 1, -1, -1}, {2, 3, -1, -1}};
const int amr_inp_face_corners3[6][4] = {{0, 2, 4, 6}, {1, 3, 5, 7}, {0, 1, 4, 5}, {2, 3, 6, 7}, {0, 1, 2, 3}, {4, 5, 6, 7}};

void AmrInpFree(AmrInpMesh *m)
{
  free(m->xyz);
  free(m->cell);
  for (int s = 0; s < m->nsets; s++) free(m->set[s].face);
  free(m->set);
  memset(m, 0, sizeof *m);
}

int AmrInpParse(const char *path, const char *text, size_t len, int dim, AmrInpMesh *m, char *msg, size_t msglen)
{
  inp_reader r = {.path = path, .dim = dim, .msg = msg, .msglen = msglen};
  memset(m, 0, sizeof *m);
  int ok = AmrInpLines(&r, text, len);
  r.line = 0;
  if (ok && !r.nnode) ok = AmrInpFail(&r, "no *NODE section with nodes");
  if (ok) ok = AmrInpCheck(&r, m);
  if (ok) ok = AmrInpSets(&r, m);
  if (!ok) AmrInpFree(m);
  free(r.node);
  free(r.sec);
  free(r.elem);
  for (long s = 0; s < r.nset; s++) free(r.set[s].e);
  free(r.set);
  free(r.tok);
  free(r.elem_by_id);
  free(r.vert);
  free(r.vnode);
  free(r.cellelem);
  free(r.elemcell);
  free(r.bface);
  free(r.bnode);
  return ok;
}
