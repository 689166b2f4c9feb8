/* amr2d / amr3d: the adaptive finite element driver.
 *
 * One source for both dimensions (P4_TO_P8).  Every failure comes back here
 * as a PETSc error code: PETSC_ERR_USER_INPUT errors are collective by
 * contract (the same message on every rank) and end in one line and exit
 * status 1; anything else is a bug or a system failure, is reported with
 * its rank and aborts the job so no rank is left waiting. */
#include "app/cycle.h"
#include "app/paths.h"
#include "util/options.h"
#include "util/unknown_options.h"
#include "mesh/mesh.h"
#include "mesh/vtk.h"

#include "mesh/p4est_dim.h"
#include <math.h>
#include <string.h>
#include <unistd.h>

static const char help[] = AMR_PROGRAM ": adaptive finite elements on a p4est forest with dynamic load balancing.\n"
                                       "Options are PETSc options; -options_file FILE reads them from a file\n"
                                       "(paths in it are relative to the file's folder).\n\n";

typedef struct {
  char mesh[PETSC_MAX_PATH_LEN];
  char shape[PETSC_MAX_PATH_LEN]; /* -boundary_shape */
  PetscBool shape_set;            /* else straight-sided trees */
  PetscInt min_level;
  char vtk[PETSC_MAX_PATH_LEN]; /* empty: no output */
  PetscBool vtk_binary;
} AmrDriverOptions;

static PetscErrorCode amr_options(MPI_Comm comm, AmrDriverOptions *o)
{
  char mesh_help[512];

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(o->mesh, "builtin:unit", sizeof o->mesh));
  o->shape[0] = '\0';
  o->min_level = 3;
  o->vtk[0] = '\0';
  o->vtk_binary = PETSC_TRUE;
  PetscCall(PetscSNPrintf(mesh_help, sizeof mesh_help, "Coarse mesh: an Abaqus FILE.inp or builtin:NAME with NAME one of %s", AmrMeshBuiltinNames()));
  PetscOptionsBegin(comm, NULL, "Mesh options", NULL);
  AMR_OPTION("-mesh", PetscOptionsString("-mesh", mesh_help, NULL, o->mesh, o->mesh, sizeof o->mesh, NULL));
  AMR_OPTION("-boundary_shape", PetscOptionsString("-boundary_shape",
                                                   P4EST_DIM == 2 ? "True shape of boundary parts of the -mesh file: NAME:circle:CX,CY,R, several separated by ';'"
                                                                  : "True shape of boundary parts of the -mesh file: NAME:cylinder:CX,CY,R (axis along z) or NAME:sphere:CX,CY,CZ,R, several separated by ';'",
                                                   NULL, o->shape, o->shape, sizeof o->shape, &o->shape_set));
  AMR_OPTION("-amr_min_level", PetscOptionsInt("-amr_min_level", "Uniform refinement level of the initial forest (adaptation never coarsens below it)", NULL, o->min_level, &o->min_level, NULL));
  AMR_OPTION("-vtk", PetscOptionsString("-vtk", "Write PREFIX.pvtu and its pieces PREFIX/NAME_RANK.vtu (tree, level, rank); with -problem PREFIX_CYCLE.pvtu per output and the series PREFIX.pvd", NULL, o->vtk, o->vtk, sizeof o->vtk, NULL));
  PetscCall(AmrOptionsSwitch(PetscOptionsObject, "-vtk_binary", "With -vtk: raw binary data in the .vtu files (false: ASCII)", &o->vtk_binary));
  PetscOptionsEnd();
  /* here, before the cycle reads -amr_max_level against it: a level the
   * forest cannot reach is this option's error, not the default maximum's */
  PetscCheck(o->min_level >= 0 && o->min_level <= P4EST_QMAXLEVEL, comm, PETSC_ERR_USER_INPUT, "option -amr_min_level %" PetscInt_FMT ": must be from 0 to %d",
             o->min_level, P4EST_QMAXLEVEL);
  PetscFunctionReturn(0);
}

/* A forest this machine cannot hold is refused before p4est tries (it
 * would run out of memory); amr_options refused the levels it cannot reach. */
static PetscErrorCode amr_check_level(MPI_Comm comm, const AmrMesh *mesh, PetscInt level)
{
  PetscMPIInt size;
  double cells, bytes, memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  const double bytes_per_cell = 128; /* quadrant, user data and p4est's bookkeeping */

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  cells = (double)mesh->conn->num_trees * pow(2.0, (double)(P4EST_DIM * level));
  bytes = cells * bytes_per_cell;
  PetscCheck(cells / size < 2147483647.0 && bytes < memory, comm, PETSC_ERR_USER_INPUT,
             "option -amr_min_level %" PetscInt_FMT ": %s at this level has %.3g cells, about %.3g GB, more than this machine's %.3g GB", level, mesh->name,
             cells, bytes / 1e9, memory / 1e9);
  PetscFunctionReturn(0);
}

/* Every option again, with -help on (unknown_options.h). */
typedef struct {
  MPI_Comm comm;
  const AmrMesh *mesh;
} AmrReread;

static PetscErrorCode amr_reread(void *ctx)
{
  const AmrReread *r = ctx;
  AmrDriverOptions opt;
  AmrCycle cyc;

  PetscFunctionBeginUser;
  PetscCall(amr_options(r->comm, &opt));
  PetscCall(AmrCycleCreate(r->comm, r->mesh, opt.min_level, opt.vtk, opt.vtk_binary, &cyc));
  PetscCall(AmrCycleDestroy(&cyc));
  PetscFunctionReturn(0);
}

/* The other problems that read an option this run's problem does not
 * (-adv_degree given to lshape), found by letting each read the options
 * and asking whether it queried the name. */
static PetscErrorCode amr_owner(void *ctx, const char *name, char *hint, size_t len)
{
  const AmrReread *r = ctx;
  char dashed[258], value[PETSC_MAX_PATH_LEN] = "", current[64] = "", owners[400] = "";
  const AmrProblemOps *ops;
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetString(NULL, NULL, "-problem", current, sizeof current, NULL));
  PetscCall(PetscSNPrintf(dashed, sizeof dashed, "-%s", name));
  PetscCall(PetscOptionsGetString(NULL, NULL, dashed, value, sizeof value, &has));
  for (int i = 0; (ops = AmrProblemGet(i)); i++) {
    AmrProblem p = NULL;
    PetscBool used;
    if (!strcmp(AmrProblemOpsName(ops), current)) continue;
    /* a fresh entry, not yet queried */
    PetscCall(PetscOptionsClearValue(NULL, dashed));
    PetscCall(PetscOptionsSetValue(NULL, dashed, value[0] ? value : NULL));
    /* its error is no error of this run: a problem of the other dimension
     * refuses only after reading its options, which is all we ask of it */
    (void)AmrProblemCreate(r->comm, ops, r->mesh, 0, &p);
    PetscCall(AmrProblemDestroy(&p));
    PetscCall(PetscOptionsUsed(NULL, name, &used)); /* the database's name has no dash */
    if (!used) continue;
    if (owners[0]) PetscCall(PetscStrlcat(owners, ", ", sizeof owners));
    PetscCall(PetscStrlcat(owners, AmrProblemOpsName(ops), sizeof owners));
  }
  if (owners[0]) PetscCall(PetscSNPrintf(hint, len, " (an option of -problem %s, not read by %s%s)", owners, current[0] ? "-problem " : "a run without -problem", current));
  PetscFunctionReturn(0);
}

static PetscErrorCode amr_run(MPI_Comm comm)
{
  AmrDriverOptions opt;
  AmrCycle cyc;
  AmrMesh mesh;
  p4est_t *p4est;
  PetscBool help;
  PetscMPIInt size;
  long long local, minmax[2];

  PetscFunctionBeginUser;
  PetscCall(AmrOptionsResolvePaths(comm));
  /* a restart's stored options first, so that everything reads them */
  PetscCall(AmrCycleRestartOptions(comm));
  PetscCall(AmrOptionsCheckValues(comm));
  PetscCall(amr_options(comm, &opt));
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  /* the problem reads the mesh only at setup */
  memset(&mesh, 0, sizeof mesh);
  PetscCall(AmrCycleCreate(comm, &mesh, opt.min_level, opt.vtk, opt.vtk_binary, &cyc));
  if (help) {
    PetscCall(AmrCycleDestroy(&cyc));
    PetscFunctionReturn(0);
  }
  {
    /* every option has been read: one that nothing read is a typo */
    AmrReread r = {comm, &mesh};
    int nsolvers;
    const char *const *prefix;
    PetscCall(AmrProblemGetSolvers(cyc ? AmrCycleGetProblem(cyc) : NULL, &nsolvers, &prefix));
    PetscCall(AmrOptionsCheckUnused(comm, nsolvers, prefix, amr_reread, amr_owner, &r));
  }
  PetscCall(AmrMeshCreate(comm, opt.mesh, &mesh));
  PetscCall(AmrMeshSetBoundaryShapes(comm, &mesh, opt.shape_set ? opt.shape : NULL));
  PetscCall(amr_check_level(comm, &mesh, opt.min_level));
  PetscCall(AmrMeshViewParts(comm, &mesh, AMR_PROGRAM));
  if (AmrCycleRestarts(cyc)) {
    PetscCall(AmrCycleRestart(cyc, mesh.conn, &p4est));
    PetscCall(AmrCycleRun(cyc));
    PetscCall(AmrCycleDestroy(&cyc));
    p4est_destroy(p4est);
    PetscCall(AmrMeshDestroy(&mesh));
    PetscFunctionReturn(0);
  }
  /* fill_uniform creates the refined forest already partitioned by cell count */
  p4est = p4est_new_ext(comm, mesh.conn, 0, (int)opt.min_level, 1, 0, NULL, NULL);
  if (opt.vtk[0] && !cyc) {
    AmrVtkData d;
    sc_array_t *part = sc_array_new(sizeof(double));
    AmrMeshBoundaryField(&mesh, p4est, part);
    AmrVtkDataInit(&d, mesh.geom, 1);
    if (mesh.nparts) PetscCall(AmrVtkAddCellField(&d, "boundary_part", (const double *)part->array));
    PetscCall(AmrVtkWrite(p4est, opt.vtk, opt.vtk_binary, &d));
    sc_array_destroy(part);
  }
  local = (long long)p4est->local_num_quadrants;
  minmax[0] = -local;
  minmax[1] = local;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, minmax, 2, MPI_LONG_LONG, MPI_MAX, comm));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(PetscPrintf(comm, "%s: mesh %s, level %" PetscInt_FMT ": %lld cells on %d rank%s (min %lld, max %lld per rank)\n", AMR_PROGRAM,
                        mesh.name, opt.min_level, (long long)p4est->global_num_quadrants, size, size > 1 ? "s" : "", -minmax[0], minmax[1]));
  if (cyc) {
    PetscCall(AmrCycleSetup(cyc, p4est));
    PetscCall(AmrCycleRun(cyc));
  }
  PetscCall(AmrCycleDestroy(&cyc));
  p4est_destroy(p4est);
  PetscCall(AmrMeshDestroy(&mesh));
  PetscFunctionReturn(0);
}

/* Print the one error line and return the exit status; only returns for
 * collective user errors. */
static int amr_report(MPI_Comm comm, PetscErrorCode err)
{
  const char *text = NULL;
  char *why = NULL;
  int rank;

  PetscErrorMessage(err, &text, &why);
  MPI_Comm_rank(comm, &rank);
  if (err == PETSC_ERR_USER_INPUT) {
    if (rank == 0) fprintf(stderr, "%s: error: %s\n", AMR_PROGRAM, why && why[0] ? why : text);
    return 1;
  }
  fprintf(stderr, "%s: error: [rank %d] %s%s%s\n", AMR_PROGRAM, rank, text ? text : "internal error", why && why[0] ? ": " : "", why ? why : "");
  MPI_Abort(comm, 2);
  return 2;
}

int main(int argc, char **argv)
{
  PetscErrorCode err;
  int status = 0;

  if (AmrInitialize(&argc, &argv, AMR_PROGRAM, help)) return 1;
  /* errors are reported once, by amr_report, not as PETSc tracebacks */
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  err = amr_run(PETSC_COMM_WORLD);
  if (err) status = amr_report(PETSC_COMM_WORLD, err);
  /* sc_finalize aborts on unfreed p4est memory: a check worth having on
   * success, noise after a user error that left objects behind */
  if (!status) sc_finalize();
  PetscPopErrorHandler();
  err = AmrFinalize();
  return status ? status : (err ? 1 : 0);
}
