/* lbbench's -mesh (tracemesh.h), compiled once for 2D and once for 3D
 * (P4_TO_P8): the coarse mesh read as amr2d/amr3d read it, the trace's
 * adjacency rebuilt on it (AmrTraceAdjacency), and PETSc's errors turned
 * into the balancer's one-line errors naming -mesh and the trace. */
#include "bench/tracemesh.h"
#include "mesh/mesh.h"
#include "mesh/traceadj.h"

#include <stdlib.h>
#include <string.h>

#ifdef P4_TO_P8
#define TRACE_MESH_ADJACENCY lb_trace_mesh_adjacency_3d
#else
#define TRACE_MESH_ADJACENCY lb_trace_mesh_adjacency_2d
#endif

/* The mesh and the rows (xadj, adj); the mesh's and the trace's checks
 * raise PETSc errors, which the caller turns into one line. */
static PetscErrorCode rows(const char *spec, const lb_load_trace *t, int *ntrees, int64_t **xadj, int **adj)
{
  AmrMesh mesh;

  PetscFunctionBeginUser;
  PetscCall(AmrMeshCreate(PETSC_COMM_SELF, spec, &mesh));
  *ntrees = (int)mesh.conn->num_trees;
  const PetscErrorCode ierr = AmrTraceAdjacency(mesh.conn, t, xadj, adj);
  PetscCall(AmrMeshDestroy(&mesh));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

lb_err TRACE_MESH_ADJACENCY(const char *spec, const char *path, const lb_load_trace *t, int64_t **xadj, int **adj, int *maxdeg)
{
  int ntrees = 0;
  const char *why = NULL;
  *xadj = NULL;
  *adj = NULL;
  *maxdeg = 0;
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  const PetscErrorCode ierr = rows(spec, t, &ntrees, xadj, adj);
  PetscPopErrorHandler();
  if (ierr) {
    PetscErrorMessage(ierr, NULL, (char **)&why);
    free(*xadj);
    free(*adj);
    *xadj = NULL;
    *adj = NULL;
    /* the mesh's own errors name -mesh; the trace's name the cycle */
    if (why && !strncmp(why, "option -mesh", 12)) return lb_error(LB_ERR_ARG, "%s", why);
    if (!ntrees) return lb_error(LB_ERR_ARG, "-mesh %s (for %dD trace '%s'): %s", spec, t->dim, path, why ? why : "unknown error");
    return lb_error(LB_ERR_ARG, "-mesh %s: trace '%s' was not recorded on this mesh of %d trees: %s", spec, path, ntrees, why ? why : "unknown error");
  }
  for (int64_t i = 0; i < t->ncells; i++)
    if ((*xadj)[i + 1] - (*xadj)[i] > *maxdeg) *maxdeg = (int)((*xadj)[i + 1] - (*xadj)[i]);
  return LB_OK;
}

#ifndef P4_TO_P8
lb_err lb_trace_mesh_adjacency(const char *spec, const char *path, const lb_load_trace *t, int64_t **xadj, int **adj, int *maxdeg)
{
  *xadj = NULL;
  *adj = NULL;
  if (t->version < 2 || !t->pos)
    return lb_error(LB_ERR_ARG, "-mesh %s: trace '%s' is format version %d, which records no cell positions (record it again)", spec, path, t->version);
  if (t->dim == 2) return lb_trace_mesh_adjacency_2d(spec, path, t, xadj, adj, maxdeg);
  return lb_trace_mesh_adjacency_3d(spec, path, t, xadj, adj, maxdeg);
}
#endif
