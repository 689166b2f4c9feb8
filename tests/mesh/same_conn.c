/* The project's reader builds the same connectivity as p4est 2.2's own
 * reader (p4est_connectivity_read_inp, used here only as the reference) on
 * files both accept: the shipped meshes give the forests they gave before.
 * Usage: same_conn FILE.inp... */
#include "mesh/mesh.h"
#include "check.h"

#include <stdio.h>

int main(int argc, char **argv)
{
  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  for (int i = 1; i < argc; i++) {
    AmrMesh mesh;
    PetscCall(AmrMeshCreate(PETSC_COMM_WORLD, argv[i], &mesh));
    p4est_connectivity_t *ref = p4est_connectivity_read_inp(argv[i]);
    const int same = ref && p4est_connectivity_is_equal(ref, mesh.conn);
    printf("%s: %ld trees, %ld vertices, %ld corners: %s p4est's reader\n", argv[i], (long)mesh.conn->num_trees, (long)mesh.conn->num_vertices,
           (long)mesh.conn->num_corners, same ? "same as" : "DIFFERENT from");
    CHECK(same);
    if (ref) p4est_connectivity_destroy(ref);
    PetscCall(AmrMeshDestroy(&mesh));
  }
  const int differ = check_finish(PETSC_COMM_WORLD);
  sc_finalize();
  PetscFinalize();
  return differ;
}
