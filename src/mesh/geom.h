#ifndef AMRDLB_MESH_GEOM_H
#define AMRDLB_MESH_GEOM_H

/* Geometry of the trees of a forest: every tree is the bilinear (2D) or
 * trilinear (3D) image of the reference square/cube spanned by its coarse
 * mesh vertices, so the map and its Jacobian come from the connectivity.
 * A tree with faces on a boundary shape (AmrGeomSetShapes) is instead the
 * transfinite (Gordon-Hall) map that puts those faces on the shape; the
 * shapes travel as the connectivity's tree attributes, so every forest on
 * it (and every coarser copy, and a checkpoint) has the curved maps. */

#include "mesh/p4est_dim.h"

/** A boundary shape: a circle in 2D, a cylinder along z or a sphere in 3D. */
typedef struct {
  int dim;     /**< 2: distance from the axis along z through c (circle,
                    cylinder); 3: distance from the point c (sphere) */
  double c[3]; /**< centre (c[2] unused when dim is 2) */
  double r;    /**< radius, positive */
} AmrGeomShape;

/** Put boundary faces of conn on shapes: face t * P4EST_FACES + f of tree t
 *  lies on shape[face_shape[t * P4EST_FACES + f]] (-1: a straight face).
 *  The vertices of those faces, within 1e-5 r of their shape, are moved
 *  onto it; in 3D an edge of such a face is curved in every tree that has
 *  it.  Returns 0, or -1 with one sentence in msg and the shape at fault
 *  in *bad: a vertex off its shape, an edge on two shapes, a tree
 *  touching more than two shapes.  Not collective (same result on every
 *  rank from the same input).
 *  \param[in,out] conn the connectivity whose vertices and tree attributes are set
 *  \param[in] shape the shapes
 *  \param[in] face_shape per tree face: the index of its shape, -1 for none
 *  \param[out] bad on failure, the shape at fault
 *  \param[out] msg on failure, the reason
 *  \param[in] len bytes of msg
 */
int AmrGeomSetShapes(p4est_connectivity_t *conn, const AmrGeomShape *shape, const int *face_shape, int *bad, char *msg, size_t len);

/** Map tree reference coordinates xi in [0,1]^dim of tree t to physical
 *  coordinates x (3 entries, unused ones zero) and, if J is not NULL, the
 *  Jacobian J[a][b] = dx_a / dxi_b.
 *  \param[in] conn the coarse mesh
 *  \param[in] t the tree
 *  \param[in] xi reference coordinates in [0,1]^dim
 *  \param[out] x physical coordinates
 *  \param[out] J the Jacobian dx/dxi, or NULL
 */
void AmrGeomTreeMap(const p4est_connectivity_t *conn, p4est_topidx_t t,
                       const double xi[3], double x[3], double J[3][3]);

/** Quadrant q's lower corner lo in its tree's reference coordinates
 *  ([0,1]^dim; lo[2] = 0 in 2D) and its edge length h there: the one
 *  conversion from p4est's integer coordinates.
 *  \param[in] q the quadrant
 *  \param[out] lo its lower corner in its tree's reference coordinates
 *  \param[out] h its edge length there
 */
void AmrGeomQuadBox(const p4est_quadrant_t *q, double lo[3], double *h);

/** Map reference coordinates eta in [0,1]^dim of quadrant q of tree t to
 *  physical x and, if J is not NULL, the Jacobian dx/deta.
 *  \param[in] conn the coarse mesh
 *  \param[in] t the quadrant's tree
 *  \param[in] q the quadrant
 *  \param[in] eta reference coordinates in the quadrant, [0,1]^dim
 *  \param[out] x physical coordinates
 *  \param[out] J the Jacobian dx/deta, or NULL
 */
void AmrGeomQuadMap(const p4est_connectivity_t *conn, p4est_topidx_t t,
                       const p4est_quadrant_t *q, const double eta[3],
                       double x[3], double J[3][3]);

/** Invert the map of tree t by Newton's method: find xi with x(xi) = x,
 *  starting from the guess in xi.  Returns 0 on convergence, -1 if Newton
 *  stalls (a degenerate tree).
 *  \param[in] conn the coarse mesh
 *  \param[in] t the tree
 *  \param[in] x the physical point
 *  \param[in,out] xi the first guess, then the reference coordinates of x
 */
int AmrGeomTreeInverse(const p4est_connectivity_t *conn, p4est_topidx_t t,
                          const double x[3], double xi[3]);

/** Whether the map of tree t is affine (a parallelogram / parallelepiped,
 *  to round-off, with no face or edge on a shape); if so, x0 receives its image of the origin and J its
 *  constant Jacobian dx/dxi.
 *  \param[in] conn the coarse mesh
 *  \param[in] t the tree
 *  \param[out] x0 if affine, the image of the origin
 *  \param[out] J if affine, the constant Jacobian dx/dxi
 */
int AmrGeomTreeAffine(const p4est_connectivity_t *conn, p4est_topidx_t t, double x0[3], double J[3][3]);

/** Determinant and inverse of the dim x dim leading block of J.
 *  \param[in] J the matrix
 *  \param[out] Jinv the inverse of its dim x dim block
 */
double AmrGeomInvert(const double J[3][3], double Jinv[3][3]);

#endif
