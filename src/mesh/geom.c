#include "mesh/p4est_dim.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mesh/geom.h"

/* Shapes one tree may touch (its faces, and in 3D the edges it shares with
 * other trees' faces): every tree pays for them in its attribute. */
#define TREE_SHAPES 2

/* The tree attribute: which faces (and 3D edges) lie on which of the
 * tree's shapes, 1-based, 0 for straight. */
typedef struct {
  signed char face[P4EST_FACES];
#ifdef P4_TO_P8
  signed char edge[P8EST_EDGES];
#endif
  AmrGeomShape shape[TREE_SHAPES];
} TreeShapes;

static const TreeShapes *tree_shapes(const p4est_connectivity_t *conn, p4est_topidx_t t)
{
  if (conn->tree_attr_bytes != sizeof(TreeShapes)) return NULL;
  return (const TreeShapes *)(conn->tree_to_attr + (size_t)t * sizeof(TreeShapes));
}

static int tree_curved(const TreeShapes *ts)
{
  if (!ts) return 0;
  for (int f = 0; f < P4EST_FACES; f++)
    if (ts->face[f]) return 1;
#ifdef P4_TO_P8
  for (int e = 0; e < P8EST_EDGES; e++)
    if (ts->edge[e]) return 1;
#endif
  return 0;
}

/* The tree's multilinear map at xi and its Jacobian: the corners
 * contracted one direction at a time (x first, as the corner numbering
 * runs), each step halving the points and keeping the derivatives taken so
 * far; about a third of the work of summing the corners' shape functions. */
static void multilinear_map(const p4est_connectivity_t *conn, p4est_topidx_t t, const double xi[3], double x[3], double J[3][3])
{
  const p4est_topidx_t *ttv = conn->tree_to_vertex + (size_t)t * P4EST_CHILDREN;
  double v[P4EST_CHILDREN][3], dv[P4EST_DIM][P4EST_CHILDREN / 2][3];
  int m = P4EST_CHILDREN;
  for (int c = 0; c < P4EST_CHILDREN; c++) memcpy(v[c], conn->vertices + 3 * (size_t)ttv[c], sizeof v[c]);
  for (int b = 0; b < P4EST_DIM; b++) {
    const double s = xi[b], r = 1.0 - s;
    m /= 2;
    for (int k = 0; k < m; k++)
      for (int a = 0; a < 3; a++) {
        dv[b][k][a] = v[2 * k + 1][a] - v[2 * k][a];
        for (int e = 0; e < b; e++) dv[e][k][a] = r * dv[e][2 * k][a] + s * dv[e][2 * k + 1][a];
        v[k][a] = r * v[2 * k][a] + s * v[2 * k + 1][a];
      }
  }
  memcpy(x, v[0], 3 * sizeof(double));
  if (!J) return;
  memset(J, 0, 9 * sizeof(double));
  for (int a = 0; a < P4EST_DIM; a++)
    for (int b = 0; b < P4EST_DIM; b++) J[a][b] = dv[b][0][a];
}

/* The closest point P of the shape to y, and DP = dP/dy. */
static void shape_project(const AmrGeomShape *s, const double y[3], double p[3], double DP[3][3])
{
  double rho = 0.0, u[3] = {0, 0, 0};
  for (int a = 0; a < s->dim; a++) rho += (y[a] - s->c[a]) * (y[a] - s->c[a]);
  rho = sqrt(rho);
  for (int a = 0; a < s->dim; a++) u[a] = (y[a] - s->c[a]) / rho;
  for (int a = 0; a < 3; a++) {
    p[a] = a < s->dim ? s->c[a] + s->r * u[a] : y[a];
    for (int b = 0; b < 3; b++) DP[a][b] = a < s->dim && b < s->dim ? s->r / rho * ((a == b) - u[a] * u[b]) : (a == b);
  }
}

/* Add coef times the Gordon-Hall term of one face or edge: the entity
 * where the coordinates d of the mask `fixed` equal bit d of `side`, its
 * multilinear image y projected on shape s, the gap P(y) - y blended in by
 * the linear weights of the fixed coordinates. */
static void add_gap(const p4est_connectivity_t *conn, p4est_topidx_t t, const AmrGeomShape *s, const double xi[3], int fixed, int side, double coef,
                    double x[3], double J[3][3])
{
  double p[3] = {xi[0], xi[1], xi[2]}, lam[3] = {1, 1, 1}, w = coef, y[3], Jy[3][3], P[3], DP[3][3];
  for (int d = 0; d < P4EST_DIM; d++) {
    if (!(fixed >> d & 1)) continue;
    p[d] = side >> d & 1;
    lam[d] = p[d] ? xi[d] : 1.0 - xi[d];
    w *= lam[d];
  }
  multilinear_map(conn, t, p, y, J ? Jy : NULL);
  shape_project(s, y, P, DP);
  for (int a = 0; a < 3; a++) x[a] += w * (P[a] - y[a]);
  if (!J) return;
  for (int b = 0; b < P4EST_DIM; b++) {
    if (fixed >> b & 1) {
      /* d(weight)/dxi_b: the other fixed coordinates' weights, signed */
      double dw = side >> b & 1 ? coef : -coef;
      for (int d = 0; d < P4EST_DIM; d++)
        if (d != b) dw *= lam[d];
      for (int a = 0; a < P4EST_DIM; a++) J[a][b] += dw * (P[a] - y[a]);
      continue;
    }
    for (int a = 0; a < P4EST_DIM; a++) {
      double g = 0.0;
      for (int c = 0; c < P4EST_DIM; c++) g += (DP[a][c] - (a == c)) * Jy[c][b];
      J[a][b] += w * g;
    }
  }
}

void AmrGeomTreeMap(const p4est_connectivity_t *conn, p4est_topidx_t t,
                       const double xi[3], double x[3], double J[3][3])
{
  const TreeShapes *ts = tree_shapes(conn, t);
  multilinear_map(conn, t, xi, x, J);
  if (!ts) return;
  for (int f = 0; f < P4EST_FACES; f++)
    if (ts->face[f]) add_gap(conn, t, &ts->shape[ts->face[f] - 1], xi, 1 << (f / 2), (f % 2) << (f / 2), 1.0, x, J);
#ifdef P4_TO_P8
  /* Faces blend in their edges' gaps already: an edge between two curved
   * faces is counted once too often, one between straight faces (curved
   * by a neighbour tree's face) is missing. */
  for (int e = 0; e < P8EST_EDGES; e++) {
    if (!ts->edge[e]) continue;
    const int f0 = p8est_edge_faces[e][0], f1 = p8est_edge_faces[e][1];
    const int coef = !ts->face[f0] + !ts->face[f1] - 1;
    if (coef) add_gap(conn, t, &ts->shape[ts->edge[e] - 1], xi, (1 << (f0 / 2)) | (1 << (f1 / 2)), ((f0 % 2) << (f0 / 2)) | ((f1 % 2) << (f1 / 2)), coef, x, J);
  }
#endif
}

void AmrGeomQuadBox(const p4est_quadrant_t *q, double lo[3], double *h)
{
  *h = (double)P4EST_QUADRANT_LEN(q->level) / P4EST_ROOT_LEN;
  lo[0] = (double)q->x / P4EST_ROOT_LEN;
  lo[1] = (double)q->y / P4EST_ROOT_LEN;
#ifdef P4_TO_P8
  lo[2] = (double)q->z / P4EST_ROOT_LEN;
#else
  lo[2] = 0;
#endif
}

void AmrGeomQuadMap(const p4est_connectivity_t *conn, p4est_topidx_t t,
                       const p4est_quadrant_t *q, const double eta[3],
                       double x[3], double J[3][3])
{
  double h, xi[3];
  AmrGeomQuadBox(q, xi, &h);
  for (int k = 0; k < P4EST_DIM; k++) xi[k] += h * eta[k];
  AmrGeomTreeMap(conn, t, xi, x, J);
  if (J)
    for (int a = 0; a < P4EST_DIM; a++)
      for (int b = 0; b < P4EST_DIM; b++) J[a][b] *= h;
}

double AmrGeomInvert(const double J[3][3], double Ji[3][3])
{
#ifndef P4_TO_P8
  const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
  Ji[0][0] = J[1][1] / det;
  Ji[0][1] = -J[0][1] / det;
  Ji[1][0] = -J[1][0] / det;
  Ji[1][1] = J[0][0] / det;
#else
  const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                     J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                     J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 3; b++) {
      /* Cofactor of J[b][a], cyclic index form. */
      const int b1 = (b + 1) % 3, b2 = (b + 2) % 3, a1 = (a + 1) % 3, a2 = (a + 2) % 3;
      Ji[a][b] = (J[b1][a1] * J[b2][a2] - J[b1][a2] * J[b2][a1]) / det;
    }
#endif
  return det;
}

int AmrGeomTreeInverse(const p4est_connectivity_t *conn, p4est_topidx_t t,
                          const double x[3], double xi[3])
{
  double scale = 0.0;
  for (int c = 0; c < P4EST_CHILDREN; c++) {
    const double *v = conn->vertices + 3 * (size_t)conn->tree_to_vertex[(size_t)t * P4EST_CHILDREN + c];
    for (int a = 0; a < P4EST_DIM; a++) scale = fmax(scale, fabs(v[a]));
  }
  for (int it = 0; it < 50; it++) {
    double y[3], J[3][3], Ji[3][3], r = 0.0;
    AmrGeomTreeMap(conn, t, xi, y, J);
    AmrGeomInvert(J, Ji);
    for (int a = 0; a < P4EST_DIM; a++) r = fmax(r, fabs(y[a] - x[a]));
    if (r <= 1e-14 * (1.0 + scale)) return 0;
    for (int a = 0; a < P4EST_DIM; a++) {
      double s = 0.0;
      for (int b = 0; b < P4EST_DIM; b++) s += Ji[a][b] * (x[b] - y[b]);
      xi[a] += s;
    }
  }
  return -1;
}

int AmrGeomTreeAffine(const p4est_connectivity_t *conn, p4est_topidx_t t, double x0[3], double J[3][3])
{
  const double origin[3] = {0, 0, 0};
  double scale = 0.0;
  AmrGeomTreeMap(conn, t, origin, x0, J);
  /* a curved tree's corners may still span a parallelogram */
  if (tree_curved(tree_shapes(conn, t))) return 0;
  for (int a = 0; a < P4EST_DIM; a++)
    for (int b = 0; b < P4EST_DIM; b++) scale = fmax(scale, fabs(J[a][b]));
  /* The map is affine iff every corner is x0 plus the Jacobian applied to
   * the corner's reference coordinates. */
  for (int c = 0; c < P4EST_CHILDREN; c++) {
    const double *v = conn->vertices + 3 * (size_t)conn->tree_to_vertex[(size_t)t * P4EST_CHILDREN + c];
    for (int a = 0; a < P4EST_DIM; a++) {
      double y = x0[a];
      for (int b = 0; b < P4EST_DIM; b++) y += J[a][b] * ((c >> b) & 1);
      if (fabs(y - v[a]) > 1e-12 * scale) return 0;
    }
  }
  return 1;
}

#ifdef P4_TO_P8
/* A curved edge: its two vertices (ascending) and the shape it lies on. */
typedef struct {
  p4est_topidx_t v[2];
  int shape;
} ShapeEdge;

static int edge_cmp(const void *a, const void *b)
{
  const ShapeEdge *x = a, *y = b;
  if (x->v[0] != y->v[0]) return x->v[0] < y->v[0] ? -1 : 1;
  return (x->v[1] > y->v[1]) - (x->v[1] < y->v[1]);
}

/* Edge e of tree t by its vertices, ascending. */
static ShapeEdge edge_key(const p4est_connectivity_t *conn, size_t t, int e, int shape)
{
  ShapeEdge s;
  const p4est_topidx_t a = conn->tree_to_vertex[t * P4EST_CHILDREN + p8est_edge_corners[e][0]],
                       b = conn->tree_to_vertex[t * P4EST_CHILDREN + p8est_edge_corners[e][1]];
  s.v[0] = a < b ? a : b;
  s.v[1] = a < b ? b : a;
  s.shape = shape;
  return s;
}
#endif

/* Index (1-based) of shape k in the tree's table, added if new; 0 if full. */
static int tree_slot(TreeShapes *ts, int *ids, int k, const AmrGeomShape *shape)
{
  for (int i = 0; i < TREE_SHAPES; i++) {
    if (ids[i] == k) return i + 1;
    if (ids[i] < 0) {
      ids[i] = k;
      ts->shape[i] = shape[k];
      return i + 1;
    }
  }
  return 0;
}

/* The vertices of the faces on shapes, moved onto them (a gap of round-off
 * would otherwise open between a curved tree and its straight neighbour). */
static int snap_vertices(p4est_connectivity_t *conn, const AmrGeomShape *shape, const int *face_shape, int *bad, char *msg, size_t len)
{
  for (size_t i = 0; i < (size_t)conn->num_trees * P4EST_FACES; i++) {
    const int k = face_shape[i], f = (int)(i % P4EST_FACES);
    if (k < 0) continue;
    for (int c = 0; c < P4EST_HALF; c++) {
      const p4est_topidx_t v = conn->tree_to_vertex[(i / P4EST_FACES) * P4EST_CHILDREN + p4est_face_corners[f][c]];
      double *x = conn->vertices + 3 * (size_t)v, p[3], DP[3][3], d = 0.0;
      shape_project(&shape[k], x, p, DP);
      for (int a = 0; a < 3; a++) d += (p[a] - x[a]) * (p[a] - x[a]);
      if (sqrt(d) > 1e-5 * shape[k].r || !isfinite(d)) {
        snprintf(msg, len, "vertex (%g, %g, %g) of its faces is %.3g from the %s, not on it", x[0], x[1], x[2], sqrt(d),
                 shape[k].dim == 2 ? (P4EST_DIM == 2 ? "circle" : "cylinder") : "sphere");
        *bad = k;
        return -1;
      }
      memcpy(x, p, sizeof p);
    }
  }
  return 0;
}

int AmrGeomSetShapes(p4est_connectivity_t *conn, const AmrGeomShape *shape, const int *face_shape, int *bad, char *msg, size_t len)
{
  const size_t nt = (size_t)conn->num_trees;
  int ok = 0;
#ifdef P4_TO_P8
  ShapeEdge *edges = NULL;
  size_t ne = 0;
#endif

  *bad = -1;
  if (snap_vertices(conn, shape, face_shape, bad, msg, len)) return -1;
#ifdef P4_TO_P8
  /* every edge of a face on a shape, found again by its vertices in the
   * trees that share it */
  edges = malloc((nt * P4EST_FACES * 4 + 1) * sizeof *edges);
  if (!edges) {
    snprintf(msg, len, "out of memory");
    return -1;
  }
  for (size_t i = 0; i < nt * P4EST_FACES; i++) {
    if (face_shape[i] < 0) continue;
    for (int k = 0; k < 4; k++) edges[ne++] = edge_key(conn, i / P4EST_FACES, p8est_face_edges[i % P4EST_FACES][k], face_shape[i]);
  }
  qsort(edges, ne, sizeof *edges, edge_cmp);
  for (size_t i = 1; i < ne; i++)
    if (!edge_cmp(&edges[i - 1], &edges[i]) && edges[i - 1].shape != edges[i].shape) {
      snprintf(msg, len, "an edge of its faces lies on another shape's faces too (shapes may only meet at vertices)");
      *bad = edges[i].shape;
      goto done;
    }
#endif
  p4est_connectivity_set_attr(conn, sizeof(TreeShapes));
  memset(conn->tree_to_attr, 0, nt * sizeof(TreeShapes));
  for (size_t t = 0; t < nt; t++) {
    TreeShapes *ts = (TreeShapes *)(conn->tree_to_attr + t * sizeof(TreeShapes));
    int ids[TREE_SHAPES];
    for (int i = 0; i < TREE_SHAPES; i++) ids[i] = -1;
    for (int f = 0; f < P4EST_FACES; f++) {
      const int k = face_shape[t * P4EST_FACES + f];
      if (k >= 0 && !(ts->face[f] = (signed char)tree_slot(ts, ids, k, shape))) *bad = k;
    }
#ifdef P4_TO_P8
    for (int e = 0; e < P8EST_EDGES && ne; e++) {
      const ShapeEdge key = edge_key(conn, t, e, -1);
      const ShapeEdge *hit = bsearch(&key, edges, ne, sizeof *edges, edge_cmp);
      if (hit && !(ts->edge[e] = (signed char)tree_slot(ts, ids, hit->shape, shape))) *bad = hit->shape;
    }
#endif
    if (*bad >= 0) {
      snprintf(msg, len, "tree %ld touches more than %d shapes", (long)t, TREE_SHAPES);
      p4est_connectivity_set_attr(conn, 0);
      goto done;
    }
  }
  ok = 1;
done:
#ifdef P4_TO_P8
  free(edges);
#endif
  return ok ? 0 : -1;
}
