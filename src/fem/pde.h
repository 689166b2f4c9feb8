#ifndef AMRDLB_FEM_PDE_H
#define AMRDLB_FEM_PDE_H

/* The data of a problem -div(k grad u) = f, as the Poisson discretisation
 * (fem/poisson.h) takes it; the problems themselves are in src/problems.
 * Coordinates are always 3 doubles; in 2D the third is zero and ignored. */

typedef enum { FEM_BC_DIRICHLET = 0, FEM_BC_NEUMANN = 1 } FemBC;

/** One problem: data functions and, when known, the exact solution. */
typedef struct {
  const char *name;
  const char *help;     /**< one line for -help */
  const char *domain;   /**< the coarse mesh it is posed on (for messages) */
  int dims;             /**< bit mask of supported dimensions: 1<<2, 1<<3 */
  /** Exact solution (NULL if unknown); also the Dirichlet and Neumann data. */
  double (*u)(int dim, const double x[3]);
  /** Gradient of the exact solution (NULL if unknown). */
  void (*grad)(int dim, const double x[3], double g[3]);
  double (*f)(int dim, const double x[3]);
  /** Coefficient k at x in coarse tree `tree`. */
  double (*k)(int dim, const double x[3], long tree);
  /** Boundary type at point x with outward normal n. */
  FemBC (*bc)(int dim, const double x[3], const double n[3]);
  /** 1 if k depends on the tree only, not on x: lets assembly use
   *  precomputed reference stiffness matrices on affine cells. */
  int k_per_tree;
  /** Neumann data g at x with outward normal n (NULL: k grad u . n of the
   *  exact solution): data that belong to the true boundary, whatever
   *  boundary the mesh has (a hole without flux). */
  double (*flux)(int dim, const double x[3], const double n[3]);
} FemProblem;

#endif
