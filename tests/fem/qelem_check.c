/* FemQElemGradient (the reference gradient of a nodal function by sum
 * factorisation, which the Kelly estimator uses on both sides of every face
 * point) against the basis gradients of FemQElemEval summed node by node:
 * Q1 and Q2, random coefficients at random points and at the corners, to
 * 1e-13 relative to the coefficients' size. */
#include <stdlib.h>
#include "check.h"
#include "mesh/p4est_dim.h"
#include "fem/qelem.h"

int main(void)
{
  srand(20261126);
  for (int degree = 1; degree <= 2; degree++) {
    FemQElem qe;
    double worst = 0.0;
    CHECK(FemQElemInit(&qe, degree) == 0);
    for (int trial = 0; trial < 200 + P4EST_CHILDREN; trial++) {
      double eta[3] = {0, 0, 0}, coef[FEM_MAX_VNODES], dphi[FEM_MAX_VNODES * P4EST_DIM], g[3], ref[3] = {0, 0, 0};
      for (int d = 0; d < P4EST_DIM; d++)
        eta[d] = trial < P4EST_CHILDREN ? (double)(trial >> d & 1) : (double)rand() / RAND_MAX;
      for (int i = 0; i < qe.vnodes; i++) coef[i] = 2.0 * rand() / RAND_MAX - 1.0;
      FemQElemEval(&qe, eta, NULL, dphi);
      for (int i = 0; i < qe.vnodes; i++)
        for (int d = 0; d < P4EST_DIM; d++) ref[d] += coef[i] * dphi[i * P4EST_DIM + d];
      FemQElemGradient(&qe, eta, coef, g);
      for (int d = 0; d < P4EST_DIM; d++) worst = fmax(worst, fabs(g[d] - ref[d]));
    }
    printf("Q%d, %dD: largest difference %.2e\n", degree, P4EST_DIM, worst);
    CHECK(worst <= 1e-13);
    FemQElemFree(&qe);
  }
  printf("%s\n", check_failures ? "FAILED" : "passed");
  return check_failures != 0;
}
