#include "mesh/p4est_dim.h"
#include <string.h>
#include "mesh/shapes.h"

/* A connectivity from vertices and tree corners; p4est completes the
 * face, edge and corner neighbours from shared vertices. */
static p4est_connectivity_t *from_vertices(int nv, const double (*v)[3], int nt, const int (*ttv)[P4EST_CHILDREN])
{
#ifndef P4_TO_P8
  p4est_connectivity_t *conn = p4est_connectivity_new(nv, nt, 0, 0);
#else
  p4est_connectivity_t *conn = p8est_connectivity_new(nv, nt, 0, 0, 0, 0);
#endif
  memcpy(conn->vertices, v, sizeof(double) * 3 * nv);
  for (int t = 0; t < nt; t++) {
    for (int c = 0; c < P4EST_CHILDREN; c++) conn->tree_to_vertex[t * P4EST_CHILDREN + c] = ttv[t][c];
    for (int f = 0; f < P4EST_FACES; f++) {
      conn->tree_to_tree[t * P4EST_FACES + f] = t;
      conn->tree_to_face[t * P4EST_FACES + f] = (int8_t)f;
    }
  }
  p4est_connectivity_complete(conn);
  return conn;
}

/* The 3^dim points of the grid with spacing (hi-lo)/2 on [lo, hi]^dim,
 * point (i, j, k) at index i + 3 j + 9 k. */
static void grid_vertices(double lo, double hi, double (*v)[3])
{
  const int n = P4EST_DIM == 2 ? 9 : 27;
  for (int i = 0; i < n; i++) {
    v[i][0] = lo + 0.5 * (hi - lo) * (i % 3);
    v[i][1] = lo + 0.5 * (hi - lo) * ((i / 3) % 3);
    v[i][2] = P4EST_DIM == 2 ? 0.0 : lo + 0.5 * (hi - lo) * (i / 9);
  }
}

/* Corners of the grid cell with lower grid corner (a, b, c). */
static void grid_cell(int a, int b, int c, int ttv[P4EST_CHILDREN])
{
  for (int k = 0; k < P4EST_CHILDREN; k++)
    ttv[k] = (a + (k & 1)) + 3 * (b + ((k >> 1) & 1)) + 9 * (c + ((k >> 2) & 1));
}

p4est_connectivity_t *AmrShapeNew(const char *name)
{
  double v[27][3];
  int ttv[8][P4EST_CHILDREN], nt = 0;

  if (!strcmp(name, "unit")) {
#ifndef P4_TO_P8
    return p4est_connectivity_new_unitsquare();
#else
    return p8est_connectivity_new_unitcube();
#endif
  }
  if (!strcmp(name, "unit-split")) {
    grid_vertices(0.0, 1.0, v);
    for (int c = 0; c < (P4EST_DIM == 3 ? 2 : 1); c++)
      for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++) grid_cell(a, b, c, ttv[nt++]);
    return from_vertices(P4EST_DIM == 2 ? 9 : 27, v, nt, ttv);
  }
#ifndef P4_TO_P8
  if (!strcmp(name, "lshape")) {
    /* (-1,1)^2 without the quadrant x > 0, y < 0; the upper right tree is
     * rotated by 90 degrees. */
    grid_vertices(-1.0, 1.0, v);
    grid_cell(0, 0, 0, ttv[nt++]);
    grid_cell(0, 1, 0, ttv[nt++]);
    ttv[nt][0] = 5; ttv[nt][1] = 8; ttv[nt][2] = 4; ttv[nt][3] = 7;
    nt++;
    return from_vertices(9, v, nt, ttv);
  }
#else
  if (!strcmp(name, "fichera")) {
    /* (-1,1)^3 without the octant x, y, z > 0. */
    grid_vertices(-1.0, 1.0, v);
    for (int c = 0; c < 2; c++)
      for (int b = 0; b < 2; b++)
        for (int a = 0; a < 2; a++)
          if (a + b + c < 3) grid_cell(a, b, c, ttv[nt++]);
    return from_vertices(27, v, nt, ttv);
  }
#endif
  return NULL;
}
