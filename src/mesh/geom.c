#include "mesh/p4est_dim.h"
#include <math.h>
#include <string.h>
#include "mesh/geom.h"

void AmrGeomTreeMap(const p4est_connectivity_t *conn, p4est_topidx_t t,
                       const double xi[3], double x[3], double J[3][3])
{
  const p4est_topidx_t *ttv = conn->tree_to_vertex + (size_t)t * P4EST_CHILDREN;
  memset(x, 0, 3 * sizeof(double));
  if (J) memset(J, 0, 9 * sizeof(double));
  for (int c = 0; c < P4EST_CHILDREN; c++) {
    /* Tensor-product vertex weight and its derivative in each direction. */
    double w[P4EST_DIM], dw[P4EST_DIM];
    for (int d = 0; d < P4EST_DIM; d++) {
      const int bit = (c >> d) & 1;
      w[d] = bit ? xi[d] : 1.0 - xi[d];
      dw[d] = bit ? 1.0 : -1.0;
    }
    double N = 1.0;
    for (int d = 0; d < P4EST_DIM; d++) N *= w[d];
    const double *v = conn->vertices + 3 * (size_t)ttv[c];
    for (int a = 0; a < 3; a++) x[a] += N * v[a];
    if (!J) continue;
    for (int b = 0; b < P4EST_DIM; b++) {
      double dN = dw[b];
      for (int d = 0; d < P4EST_DIM; d++)
        if (d != b) dN *= w[d];
      for (int a = 0; a < P4EST_DIM; a++) J[a][b] += dN * v[a];
    }
  }
}

void AmrGeomQuadMap(const p4est_connectivity_t *conn, p4est_topidx_t t,
                       const p4est_quadrant_t *q, const double eta[3],
                       double x[3], double J[3][3])
{
  const double h = (double)P4EST_QUADRANT_LEN(q->level) / P4EST_ROOT_LEN;
  double xi[3] = {0, 0, 0};
  xi[0] = (double)q->x / P4EST_ROOT_LEN + h * eta[0];
  xi[1] = (double)q->y / P4EST_ROOT_LEN + h * eta[1];
#ifdef P4_TO_P8
  xi[2] = (double)q->z / P4EST_ROOT_LEN + h * eta[2];
#endif
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
