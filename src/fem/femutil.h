#ifndef AMRDLB_FEMUTIL_H
#define AMRDLB_FEMUTIL_H

/*
 * What the discretisations share and is not a discretisation: the clocks
 * of each rank's own work, the Gauss-Legendre rules.
 * No forest: one library for 2D and 3D.
 */

/** Most points of a Gauss-Legendre rule in FemGaussX. */
#define FEM_GAUSS_MAX 5

/** The n-point Gauss-Legendre rule on [-1, 1], n = 1 .. FEM_GAUSS_MAX:
 *  points FemGaussX[n][0 .. n-1] (increasing), weights FemGaussW[n][...]
 *  (summing to 2); row 0 is unused.  The one table of every element's
 *  quadrature (FemQElem, FemAdvect, FemReaction). */
extern const double FemGaussX[FEM_GAUSS_MAX + 1][FEM_GAUSS_MAX];
extern const double FemGaussW[FEM_GAUSS_MAX + 1][FEM_GAUSS_MAX];

/** This thread's CPU time (lb_clock_thread_cpu of balance/lbclock.h, the
 *  one reading of that clock) and its wall clock (lb_clock_wall), read
 *  together. */
void FemClocks(double *cpu, double *wall);

#endif
