#include "mesh/p4est_dim.h"
#include <stdlib.h>
#include <string.h>
#include "fem/qelem.h"
#include "fem/femutil.h"

void FemLagrange1d(int p, int j, double s, double *val, double *der)
{
  if (p == 1) {
    *val = j ? s : 1.0 - s;
    *der = j ? 1.0 : -1.0;
    return;
  }
  /* Nodes 0, 1/2, 1. */
  switch (j) {
  case 0: *val = 2.0 * (s - 0.5) * (s - 1.0); *der = 4.0 * s - 3.0; break;
  case 1: *val = -4.0 * s * (s - 1.0); *der = -8.0 * s + 4.0; break;
  default: *val = 2.0 * s * (s - 0.5); *der = 4.0 * s - 1.0; break;
  }
}

/* Gauss-Legendre points and weights on [0,1], n = 1..FEM_MAX_GAUSS1. */
static void gauss1d(int n, double *x, double *w)
{
  for (int i = 0; i < n; i++) {
    x[i] = 0.5 * (FemGaussX[n][i] + 1.0);
    w[i] = 0.5 * FemGaussW[n][i];
  }
}

/* Lexicographic index i (x fastest) to per-direction indices, n per direction. */
static void lex(int i, int n, int id[3])
{
  id[0] = i % n;
  id[1] = (i / n) % n;
  id[2] = i / (n * n);
}

void FemQElemEval(const FemQElem *qe, const double eta[3], double *phi, double *dphi)
{
  double val[3][FEM_MAX_N1], der[3][FEM_MAX_N1];
  for (int d = 0; d < P4EST_DIM; d++)
    for (int j = 0; j < qe->n1; j++) FemLagrange1d(qe->degree, j, eta[d], &val[d][j], &der[d][j]);
  for (int i = 0; i < qe->vnodes; i++) {
    int id[3];
    lex(i, qe->n1, id);
    double v = 1.0;
    for (int d = 0; d < P4EST_DIM; d++) v *= val[d][id[d]];
    if (phi) phi[i] = v;
    if (!dphi) continue;
    for (int g = 0; g < P4EST_DIM; g++) {
      double s = 1.0;
      for (int d = 0; d < P4EST_DIM; d++) s *= (d == g) ? der[d][id[d]] : val[d][id[d]];
      dphi[i * P4EST_DIM + g] = s;
    }
  }
}

void FemQElemGradient(const FemQElem *qe, const double eta[3], const double *coef, double g[3])
{
  const int n = qe->n1;
  double val[3][FEM_MAX_N1], der[3][FEM_MAX_N1];
  int i = 0;
  for (int d = 0; d < P4EST_DIM; d++)
    for (int j = 0; j < n; j++) FemLagrange1d(qe->degree, j, eta[d], &val[d][j], &der[d][j]);
  g[0] = g[1] = g[2] = 0.0;
  /* x, then y, then z: each sum contracts one direction, nodes in lexicographic order */
  for (int c = 0; c < (P4EST_DIM == 3 ? n : 1); c++) {
    double s[3] = {0, 0, 0}; /* d/dx, d/dy and the value on this z-layer */
    for (int b = 0; b < n; b++) {
      double v = 0.0, dx = 0.0;
      for (int a = 0; a < n; a++, i++) {
        v += coef[i] * val[0][a];
        dx += coef[i] * der[0][a];
      }
      s[0] += dx * val[1][b];
      s[1] += v * der[1][b];
      s[2] += v * val[1][b];
    }
#ifdef P4_TO_P8
    g[0] += s[0] * val[2][c];
    g[1] += s[1] * val[2][c];
    g[2] += s[2] * der[2][c];
#else
    g[0] = s[0];
    g[1] = s[1];
#endif
  }
}

void FemQElemNode(const FemQElem *qe, int i, double eta[3])
{
  int id[3];
  lex(i, qe->n1, id);
  for (int d = 0; d < 3; d++) eta[d] = d < P4EST_DIM ? (double)id[d] / qe->degree : 0.0;
}

static void rule_init(const FemQElem *qe, FemRule *r, int n1)
{
  double *x = r->x1, *w = r->w1;
  r->n1 = n1;
  gauss1d(n1, x, w);
  r->npts = 1;
  for (int d = 0; d < P4EST_DIM; d++) r->npts *= n1;
  r->eta = calloc(3 * (size_t)r->npts, sizeof(double));
  r->w = malloc(sizeof(double) * r->npts);
  r->phi = malloc(sizeof(double) * r->npts * qe->vnodes);
  r->dphi = malloc(sizeof(double) * r->npts * qe->vnodes * P4EST_DIM);
  for (int q = 0; q < r->npts; q++) {
    int id[3];
    lex(q, n1, id);
    r->w[q] = 1.0;
    for (int d = 0; d < P4EST_DIM; d++) {
      r->eta[3 * q + d] = x[id[d]];
      r->w[q] *= w[id[d]];
    }
    FemQElemEval(qe, r->eta + 3 * q, r->phi + (size_t)q * qe->vnodes,
                   r->dphi + (size_t)q * qe->vnodes * P4EST_DIM);
  }
}

void FemRuleFacePoint(const FemRule *r, int f, int k, double eta[3], double *w)
{
  *w = 1.0;
  eta[0] = eta[1] = eta[2] = 0.0;
  for (int d = 0; d < P4EST_DIM; d++) {
    if (d == f / 2) {
      eta[d] = f % 2;
      continue;
    }
    eta[d] = r->x1[k % r->n1];
    *w *= r->w1[k % r->n1];
    k /= r->n1;
  }
}

static void rule_free(FemRule *r)
{
  free(r->eta);
  free(r->w);
  free(r->phi);
  free(r->dphi);
}

int FemQElemInit(FemQElem *qe, int degree)
{
  if (degree < 1 || degree > FEM_MAX_DEGREE) return -1;
  qe->degree = degree;
  qe->n1 = degree + 1;
  qe->vnodes = 1;
  for (int d = 0; d < P4EST_DIM; d++) qe->vnodes *= qe->n1;
  rule_init(qe, &qe->cell, degree + 1);
  rule_init(qe, &qe->accurate, degree + 3);
  const size_t n2 = (size_t)qe->vnodes * qe->vnodes;
  qe->stiff = calloc(P4EST_DIM * P4EST_DIM * n2, sizeof(double));
  for (int q = 0; q < qe->cell.npts; q++) {
    const double *dphi = qe->cell.dphi + (size_t)q * qe->vnodes * P4EST_DIM;
    for (int a = 0; a < P4EST_DIM; a++)
      for (int b = 0; b < P4EST_DIM; b++)
        for (int i = 0; i < qe->vnodes; i++)
          for (int j = 0; j < qe->vnodes; j++)
            qe->stiff[(a * P4EST_DIM + b) * n2 + (size_t)i * qe->vnodes + j] +=
              qe->cell.w[q] * dphi[i * P4EST_DIM + a] * dphi[j * P4EST_DIM + b];
  }
  /* A child's node at child coordinate t sits at parent coordinate
   * (c + t)/2 in each direction; interpolating the parent's polynomial
   * there gives the child's value. */
  for (int c = 0; c < P4EST_CHILDREN; c++) {
    double *P = malloc(sizeof(double) * qe->vnodes * qe->vnodes);
    for (int i = 0; i < qe->vnodes; i++) {
      double eta[3];
      FemQElemNode(qe, i, eta);
      for (int d = 0; d < P4EST_DIM; d++) eta[d] = 0.5 * (((c >> d) & 1) + eta[d]);
      FemQElemEval(qe, eta, P + (size_t)i * qe->vnodes, NULL);
    }
    qe->child_interp[c] = P;
  }
  return 0;
}

void FemQElemFree(FemQElem *qe)
{
  rule_free(&qe->cell);
  rule_free(&qe->accurate);
  free(qe->stiff);
  for (int c = 0; c < P4EST_CHILDREN; c++) free(qe->child_interp[c]);
}

int FemQElemNodeOnFace(const FemQElem *qe, int i, int f)
{
  int id[3];
  lex(i, qe->n1, id);
  return id[f / 2] == (f % 2) * qe->degree;
}

#ifdef P4_TO_P8
/* Whether node id lies on edge e (p8est edge numbering: edges 4d..4d+3 run
 * along direction d, the two other coordinates given by the bits of e%4). */
static int on_edge(const int id[3], int p, int e)
{
  const int d = e / 4, a = d == 0 ? 1 : 0, b = d == 2 ? 1 : 2;
  return id[a] == (e & 1) * p && id[b] == ((e >> 1) & 1) * p;
}
#endif

int FemQElemConstraints(const FemQElem *qe, p4est_lnodes_code_t fc, double *C)
{
  int hface[P4EST_FACES];
#ifndef P4_TO_P8
  if (!p4est_lnodes_decode(fc, hface)) return 0;
#else
  int hedge[P8EST_EDGES];
  if (!p8est_lnodes_decode(fc, hface, hedge)) return 0;
#endif
  const int c = fc & (P4EST_CHILDREN - 1), n = qe->vnodes;
  /* A node on a hanging face or edge takes the parent's interpolant: in the
   * directions normal to that face or edge its child coordinate equals the
   * parent's, so full tensor interpolation is exact there too. */
  memset(C, 0, sizeof(double) * n * n);
  for (int i = 0; i < n; i++) {
    int hanging = 0;
    for (int f = 0; f < P4EST_FACES; f++)
      if (hface[f] >= 0 && FemQElemNodeOnFace(qe, i, f)) hanging = 1;
#ifdef P4_TO_P8
    int id[3];
    lex(i, qe->n1, id);
    for (int e = 0; e < P8EST_EDGES; e++)
      if (hedge[e] >= 0 && hedge[e] < 4 && on_edge(id, qe->degree, e)) hanging = 1;
#endif
    if (hanging)
      memcpy(C + (size_t)i * n, qe->child_interp[c] + (size_t)i * n, sizeof(double) * n);
    else
      C[(size_t)i * n + i] = 1.0;
  }
  return 1;
}
