/* The curved tree maps of -boundary_shape (geom.c): on every tree the
 * Jacobian equals central differences of the map, and the trees meet
 * without gaps: a point on a face shared by two trees, mapped from one,
 * is found by Newton on the face of the other, at the same face
 * coordinates (the 3D edges curved by a neighbour's face included).
 * Usage: geom_check FILE.inp BOUNDARY_SHAPE */
#include "mesh/geom.h"
#include "mesh/mesh.h"
#include "check.h"

#include <math.h>
#include <stdio.h>

static const double samples[3] = {0.0, 0.3, 1.0};

/* Point k of the 3^dim samples of the reference cube. */
static void sample(int k, double xi[3])
{
  xi[0] = xi[1] = xi[2] = 0.0;
  for (int d = 0; d < P4EST_DIM; d++, k /= 3) xi[d] = samples[k % 3];
}

int main(int argc, char **argv)
{
  AmrMesh mesh;
  int npts = 1, nonaffine = 0, faces = 0;
  double jerr = 0.0, gap = 0.0;

  if (argc != 3 || PetscInitialize(&argc, &argv, NULL, NULL)) return 2;
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscCall(AmrMeshCreate(PETSC_COMM_WORLD, argv[1], &mesh));
  PetscCall(AmrMeshSetBoundaryShapes(PETSC_COMM_WORLD, &mesh, argv[2]));
  const p4est_connectivity_t *conn = mesh.conn;
  for (int d = 0; d < P4EST_DIM; d++) npts *= 3;
  for (p4est_topidx_t t = 0; t < conn->num_trees; t++) {
    double x0[3], J0[3][3];
    nonaffine += !AmrGeomTreeAffine(conn, t, x0, J0);
    for (int k = 0; k < npts; k++) {
      double xi[3], x[3], J[3][3];
      sample(k, xi);
      AmrGeomTreeMap(conn, t, xi, x, J);
      for (int b = 0; b < P4EST_DIM; b++) {
        const double h = 1e-6;
        double p[3] = {xi[0], xi[1], xi[2]}, m[3] = {xi[0], xi[1], xi[2]}, xp[3], xm[3];
        p[b] += h;
        m[b] -= h;
        AmrGeomTreeMap(conn, t, p, xp, NULL);
        AmrGeomTreeMap(conn, t, m, xm, NULL);
        for (int a = 0; a < P4EST_DIM; a++) jerr = fmax(jerr, fabs(J[a][b] - (xp[a] - xm[a]) / (2 * h)));
      }
      /* the sample on a face shared with another tree: there too */
      for (int f = 0; f < P4EST_FACES; f++) {
        const p4est_topidx_t t2 = conn->tree_to_tree[(size_t)t * P4EST_FACES + f];
        const int f2 = conn->tree_to_face[(size_t)t * P4EST_FACES + f] % P4EST_FACES;
        if (xi[f / 2] != f % 2 || (t2 == t && f2 == f)) continue;
        double xi2[3] = {0.5, 0.5, P4EST_DIM == 3 ? 0.5 : 0.0};
        faces++;
        if (!CHECK_MSG(!AmrGeomTreeInverse(conn, t2, x, xi2), "tree %ld face %d: Newton fails in tree %ld", (long)t, f, (long)t2)) continue;
        /* on the face, at the same face coordinates (up to the face's
         * orientation: each one a sample or its mirror) */
        gap = fmax(gap, fabs(xi2[f2 / 2] - f2 % 2));
        for (int d = 0; d < P4EST_DIM; d++) {
          double off = 1.0;
          for (int i = 0; i < 3; i++) off = fmin(off, fmin(fabs(xi2[d] - samples[i]), fabs(xi2[d] - 1 + samples[i])));
          if (d != f2 / 2) gap = fmax(gap, off);
        }
      }
    }
  }
  printf("geom_check: %ld trees, %d not affine; Jacobian against differences %.2e; %d face points, %.2e off the neighbour's face\n", (long)conn->num_trees, nonaffine, jerr,
         faces, gap);
  CHECK(nonaffine > 0 && jerr < 1e-7 && faces > 0 && gap < 1e-10);
  PetscCall(AmrMeshDestroy(&mesh));
  PetscCall(PetscFinalize());
  return check_failures != 0;
}
