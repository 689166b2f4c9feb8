/* The named boundary parts of a mesh file land on the right tree faces:
 * every face of a part has its corners where the geometry says (x = 0 for
 * the left side, on the circle for the hole), each part has the expected
 * number of faces, the parts cover every boundary face of the domain once,
 * and AmrMeshBoundaryTypes() marks the first part's faces Dirichlet and
 * the others' Neumann.
 * Usage: parts_check FILE.inp NAME:FACES:WHERE...   (WHERE: x=V, y=V, z=V,
 * or r=V for the distance from (0.5, 0.5) in the xy plane) */
#include "mesh/mesh.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int on(const double *x, const char *where)
{
  const double v = atof(where + 2);
  if (where[0] == 'r') return fabs(hypot(x[0] - 0.5, x[1] - 0.5) - v) < 1e-9;
  return fabs(x[where[0] - 'x'] - v) < 1e-12;
}

int main(int argc, char **argv)
{
  AmrMesh mesh;
  signed char *bc;
  char dirichlet[256] = "", neumann[256] = "";

  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  PetscCall(AmrMeshCreate(PETSC_COMM_WORLD, argv[1], &mesh));
  const p4est_connectivity_t *conn = mesh.conn;
  const size_t nf = (size_t)conn->num_trees * P4EST_FACES;
  int *covered = calloc(nf, sizeof(int));
  for (int a = 2; a < argc; a++) {
    char name[64], where[32] = "";
    long want;
    if (sscanf(argv[a], "%63[^:]:%ld:%31s", name, &want, where) < 2) return 2;
    strcat(a == 2 ? dirichlet : neumann, name);
    if (a > 2 && a + 1 < argc) strcat(neumann, ",");
    int p = -1;
    for (int i = 0; i < mesh.nparts; i++)
      if (!strcmp(mesh.part[i].name, name)) p = i;
    if (!CHECK_MSG(p >= 0 && !mesh.part[p].why[0], "part %s: missing or not on the boundary (%s)", name, p < 0 ? "" : mesh.part[p].why)) continue;
    const AmrInpSet *part = &mesh.part[p];
    int off = 0;
    for (long j = 0; j < part->nfaces; j++) {
      const long t = part->face[j] / P4EST_FACES, f = part->face[j] % P4EST_FACES;
      covered[part->face[j]]++;
      for (int k = 0; k < P4EST_HALF; k++) {
        const double *x = conn->vertices + 3 * conn->tree_to_vertex[t * P4EST_CHILDREN + p4est_face_corners[f][k]];
        if (where[0] && !on(x, where)) off++;
      }
    }
    printf("part %s: %ld faces (expected %ld), %d corners off %s\n", name, part->nfaces, want, off, where[0] ? where : "(anywhere)");
    CHECK(part->nfaces == want && !off);
  }
  long boundary = 0, once = 0;
  for (size_t i = 0; i < nf; i++) {
    const int b = conn->tree_to_tree[i] == (p4est_topidx_t)(i / P4EST_FACES) && conn->tree_to_face[i] == (int8_t)(i % P4EST_FACES);
    boundary += b;
    once += b && covered[i] == 1;
    CHECK(b || !covered[i]);
  }
  printf("boundary faces %ld, named once %ld\n", boundary, once);
  CHECK_EQ(once, boundary);
  PetscCall(AmrMeshBoundaryTypes(PETSC_COMM_WORLD, &mesh, dirichlet, neumann, &bc));
  long types[2] = {0, 0};
  for (size_t i = 0; i < nf; i++)
    if (bc[i] >= 0) types[bc[i]]++;
  printf("-bc_dirichlet %s -bc_neumann %s: %ld Dirichlet, %ld Neumann faces\n", dirichlet, neumann, types[0], types[1]);
  CHECK_EQ(types[0] + types[1], boundary);
  for (int i = 0; i < mesh.nparts; i++)
    if (!strcmp(mesh.part[i].name, dirichlet)) CHECK_EQ(types[0], mesh.part[i].nfaces);
  PetscCall(PetscFree(bc));
  free(covered);
  PetscCall(AmrMeshDestroy(&mesh));
  const int fail = check_finish(PETSC_COMM_WORLD);
  printf("%s\n", fail ? "FAILED" : "ok");
  sc_finalize();
  PetscFinalize();
  return fail;
}
