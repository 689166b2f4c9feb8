#ifndef AMRDLB_MESH_GEOM_H
#define AMRDLB_MESH_GEOM_H

/* Geometry of the trees of a forest: every tree is the bilinear (2D) or
 * trilinear (3D) image of the reference square/cube spanned by its coarse
 * mesh vertices, so the map and its Jacobian come from the connectivity. */

#include "mesh/p4est_dim.h"

/** Map tree reference coordinates xi in [0,1]^dim of tree t to physical
 *  coordinates x (3 entries, unused ones zero) and, if J is not NULL, the
 *  Jacobian J[a][b] = dx_a / dxi_b. */
void AmrGeomTreeMap(const p4est_connectivity_t *conn, p4est_topidx_t t,
                       const double xi[3], double x[3], double J[3][3]);

/** Map reference coordinates eta in [0,1]^dim of quadrant q of tree t to
 *  physical x and, if J is not NULL, the Jacobian dx/deta. */
void AmrGeomQuadMap(const p4est_connectivity_t *conn, p4est_topidx_t t,
                       const p4est_quadrant_t *q, const double eta[3],
                       double x[3], double J[3][3]);

/** Invert the map of tree t by Newton's method: find xi with x(xi) = x,
 *  starting from the guess in xi.  Returns 0 on convergence, -1 if Newton
 *  stalls (a degenerate tree). */
int AmrGeomTreeInverse(const p4est_connectivity_t *conn, p4est_topidx_t t,
                          const double x[3], double xi[3]);

/** Whether the map of tree t is affine (a parallelogram / parallelepiped,
 *  to round-off); if so, x0 receives its image of the origin and J its
 *  constant Jacobian dx/dxi. */
int AmrGeomTreeAffine(const p4est_connectivity_t *conn, p4est_topidx_t t, double x0[3], double J[3][3]);

/** Determinant and inverse of the dim x dim leading block of J. */
double AmrGeomInvert(const double J[3][3], double Jinv[3][3]);

#endif
