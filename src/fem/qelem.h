#ifndef AMRDLB_FEM_QELEM_H
#define AMRDLB_FEM_QELEM_H

/* Reference Lagrange element Q1/Q2 on [0,1]^dim with equispaced nodes
 * (the Lobatto points of degree <= 2), numbered lexicographically with x
 * fastest as in p4est_lnodes, and tensor Gauss rules on it. */

#include "mesh/p4est_dim.h"
#include "fem/femutil.h"

#define FEM_MAX_DEGREE 2
#define FEM_MAX_N1 (FEM_MAX_DEGREE + 1)
#if P4EST_DIM == 2
#define FEM_MAX_VNODES (FEM_MAX_N1 * FEM_MAX_N1)
#else
#define FEM_MAX_VNODES (FEM_MAX_N1 * FEM_MAX_N1 * FEM_MAX_N1)
#endif
#define FEM_MAX_GAUSS1 FEM_GAUSS_MAX

/** A tensor Gauss rule with the element basis tabulated at its points. */
typedef struct {
  int n1;            /**< points per direction */
  double x1[FEM_MAX_GAUSS1], w1[FEM_MAX_GAUSS1]; /**< the 1D rule on [0,1] */
  int npts;          /**< number of points */
  double *eta;       /**< npts x 3 reference coordinates */
  double *w;         /**< npts weights (sum 1) */
  double *phi;       /**< npts x vnodes basis values */
  double *dphi;      /**< npts x vnodes x P4EST_DIM reference gradients */
} FemRule;

/** The reference element of one degree. */
typedef struct {
  int degree, n1, vnodes;
  FemRule cell;   /**< (degree+1)^dim points: exact stiffness on affine cells */
  FemRule accurate; /**< (degree+3)^dim points: errors and load vectors */
  /** Reference stiffness moments S[(a*DIM+b)*vnodes^2 + i*vnodes + j] =
   *  int d_a phi_i d_b phi_j over [0,1]^dim: on an affine cell with
   *  constant k the stiffness matrix is a combination of them. */
  double *stiff;
  /** Per child id c: the interpolation matrix from the parent's nodes to
   *  the child's nodes, vnodes x vnodes (row: child node). */
  double *child_interp[P4EST_CHILDREN];
} FemQElem;

/** Point k (0 <= k < n1^(dim-1)) of the face rule of r on reference face
 *  f: its reference coordinates and its weight (faces have measure 1). */
void FemRuleFacePoint(const FemRule *r, int f, int k, double eta[3], double *w);

/** Value and derivative of the 1D Lagrange basis function j of degree p at s. */
void FemLagrange1d(int p, int j, double s, double *val, double *der);

/** Fill qe for degree 1 or 2; returns 0 or -1 for an unsupported degree. */
int FemQElemInit(FemQElem *qe, int degree);

/** Free what FemQElemInit allocated. */
void FemQElemFree(FemQElem *qe);

/** Tabulate the basis (values into phi[vnodes], reference gradients into
 *  dphi[vnodes*P4EST_DIM], either may be NULL) at reference point eta. */
void FemQElemEval(const FemQElem *qe, const double eta[3], double *phi, double *dphi);

/** The reference gradient g[P4EST_DIM] at reference point eta of the
 *  function with nodal coefficients coef[vnodes], by sum factorisation. */
void FemQElemGradient(const FemQElem *qe, const double eta[3], const double *coef, double g[3]);

/** Reference coordinates of node i. */
void FemQElemNode(const FemQElem *qe, int i, double eta[3]);

/** Whether node i lies on reference face f. */
int FemQElemNodeOnFace(const FemQElem *qe, int i, int f);

/** Build the hanging-node constraint matrix C (vnodes x vnodes, row major)
 *  of an element with lnodes face code fc: values at the element's own node
 *  positions are C times the values of the nodes listed in element_nodes
 *  (which, on hanging faces and edges, are the parent's nodes).  Returns 1
 *  if the element has hanging nodes, 0 (C untouched) if not. */
int FemQElemConstraints(const FemQElem *qe, p4est_lnodes_code_t fc, double *C);

#endif
