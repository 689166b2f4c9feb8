#ifndef P4_TO_P8
#include <p4est_bits.h>
#else
#include <p4est_to_p8est.h>
#include <p8est_bits.h>
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "app/options.h"
#include "app/poisson_cycle.h"
#include "fem/poisson.h"
#include "mesh/adapt.h"
#include "mesh/vtk.h"

enum { PH_SETUP, PH_ASSEMBLY, PH_SOLVE, PH_ESTIMATE, PH_ADAPT, PH_PARTITION, PH_OUTPUT, NPHASES };
static const char *phase_name[NPHASES] = {"setup", "assembly", "solve", "estimate", "adapt", "partition", "output"};

PetscErrorCode AmrPoissonOptionsRead(MPI_Comm comm, PetscInt min_level, const char *vtk, AmrPoissonOptions *o)
{
  char pname[64] = "", list[256] = "";
  PetscBool help;

  PetscFunctionBeginUser;
  memset(o, 0, sizeof(*o));
  o->degree = 1;
  o->cycles = 8;
  AmrAdaptOptionsDefaults("fraction", min_level, P4EST_QMAXLEVEL, &o->adapt);
  PetscCall(PetscStrncpy(o->vtk, vtk, sizeof(o->vtk)));
  for (int i = 0; fem_problem_get(i); i++) {
    if (i) PetscCall(PetscStrlcat(list, ", ", sizeof(list)));
    PetscCall(PetscStrlcat(list, fem_problem_get(i)->name, sizeof(list)));
  }
  PetscOptionsBegin(comm, NULL, "Poisson cycle (runs when -problem is given)", NULL);
  AMR_OPTION("-problem", PetscOptionsString("-problem", list, NULL, pname, pname, sizeof(pname), NULL));
  AMR_OPTION("-degree", PetscOptionsInt("-degree", "Polynomial degree of the elements: 1 or 2", NULL, o->degree, &o->degree, NULL));
  AMR_OPTION("-amr_cycles", PetscOptionsInt("-amr_cycles", "Number of solve-estimate-adapt cycles", NULL, o->cycles, &o->cycles, NULL));
  AMR_OPTION("-bc_dirichlet", PetscOptionsString("-bc_dirichlet", "Boundary parts (sets of the -mesh file, comma-separated) with Dirichlet data; default: the problem's own", NULL, o->bc_dirichlet, o->bc_dirichlet, sizeof(o->bc_dirichlet), NULL));
  AMR_OPTION("-bc_neumann", PetscOptionsString("-bc_neumann", "Boundary parts (sets of the -mesh file, comma-separated) with Neumann data; default: the problem's own", NULL, o->bc_neumann, o->bc_neumann, sizeof(o->bc_neumann), NULL));
  PetscOptionsEnd();
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  if (help) {
    /* A solver made and dropped lists the -ksp_ and -pc_ options too. */
    FemPoisson fp;
    PetscCall(FemPoissonCreate(comm, fem_problem_get(0), 1, NULL, &fp));
    PetscCall(FemPoissonDestroy(&fp));
  }
  if (help || pname[0]) PetscCall(AmrAdaptOptionsRead(comm, PETSC_FALSE, &o->adapt));
  if (!pname[0]) PetscFunctionReturn(0);

  o->problem = fem_problem_find(pname);
  PetscCheck(o->problem, comm, PETSC_ERR_USER_INPUT, "option -problem %s: unknown problem (choose from %s)", pname, list);
  PetscCheck(o->problem->dims & (1 << P4EST_DIM), comm, PETSC_ERR_USER_INPUT, "option -problem %s: not available in %dD", pname, P4EST_DIM);
  PetscCheck(o->degree == 1 || o->degree == 2, comm, PETSC_ERR_USER_INPUT, "option -degree %" PetscInt_FMT ": must be 1 or 2", o->degree);
  PetscCheck(o->cycles >= 1, comm, PETSC_ERR_USER_INPUT, "option -amr_cycles %" PetscInt_FMT ": must be at least 1", o->cycles);
  /* one load type: every cell costs the same to assemble */
  PetscCall(AmrLbOptionsRead(comm, 1, &o->lb));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonCheckMesh(MPI_Comm comm, const p4est_connectivity_t *conn, PetscBool geom_is_null, const char *mesh_name)
{
  PetscFunctionBeginUser;
  PetscCheck(geom_is_null, comm, PETSC_ERR_USER_INPUT,
             "option -mesh %s: curved geometries are not supported by the Poisson solver (use a mesh of straight-sided cells)", mesh_name);
#ifndef P4_TO_P8
  for (p4est_topidx_t v = 0; v < conn->num_vertices; v++)
    PetscCheck(conn->vertices[3 * v + 2] == 0.0, comm, PETSC_ERR_USER_INPUT,
               "option -mesh %s: the 2D Poisson solver needs a planar mesh (vertex %ld has z = %g)", mesh_name, (long)v,
               conn->vertices[3 * v + 2]);
#endif
  /* Without a boundary (periodic meshes) no Dirichlet condition pins the
   * solution and the system would be singular. */
  PetscBool boundary = PETSC_FALSE;
  for (p4est_topidx_t t = 0; t < conn->num_trees; t++)
    for (int f = 0; f < P4EST_FACES; f++)
      if (conn->tree_to_tree[(size_t)t * P4EST_FACES + f] == t && conn->tree_to_face[(size_t)t * P4EST_FACES + f] == f) boundary = PETSC_TRUE;
  PetscCheck(boundary, comm, PETSC_ERR_USER_INPUT,
             "option -mesh %s: the domain has no boundary (periodic), so the Poisson problem would be singular", mesh_name);
  PetscFunctionReturn(0);
}

/* VTK: the solution at the cell centres, the indicator and, when the
 * exact solution is known, the H1 error of every cell, besides the tree,
 * level and rank the writer adds. */
static PetscErrorCode write_vtk(p4est_t *p4est, FemPoisson fp, const double *eta2, const double *err2, const char *prefix, int cycle)
{
  const int vn = FemPoissonVNodes(fp);
  const p4est_locidx_t n = p4est->local_num_quadrants;
  const double centre[3] = {0.5, 0.5, 0.5};
  const char *names[3] = {"solution", "indicator", "error"};
  char name[PETSC_MAX_PATH_LEN + 16];
  sc_array_t *f[3];
  double *coef;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)n * vn + 1, &coef));
  PetscCall(FemPoissonElementCoefficients(fp, coef));
  for (int k = 0; k < 3; k++) f[k] = sc_array_new_count(sizeof(double), (size_t)n);
  for (p4est_locidx_t e = 0; e < n; e++) {
    *(double *)sc_array_index(f[0], (size_t)e) = FemPoissonEvalRef(fp, coef + (size_t)e * vn, centre);
    *(double *)sc_array_index(f[1], (size_t)e) = sqrt(eta2[e]);
    *(double *)sc_array_index(f[2], (size_t)e) = err2 ? sqrt(err2[e]) : 0.0;
  }
  PetscCall(PetscSNPrintf(name, sizeof(name), "%s_%04d", prefix, cycle));
  PetscCall(amr_vtk_write(p4est, NULL, name, err2 ? 3 : 2, names, f));
  for (int k = 0; k < 3; k++) sc_array_destroy(f[k]);
  PetscCall(PetscFree(coef));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonRun(MPI_Comm comm, p4est_t *p4est, const AmrPoissonOptions *o)
{
  PetscLogStage stage[NPHASES];
  FILE *report = NULL;
  FemPoisson fp;
  AmrLb lb;
  double *coef = NULL, *eta2 = NULL, *err2 = NULL;
  int rank, size, fail = 0;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (o->adapt.report[0] && rank == 0) {
    report = fopen(o->adapt.report, "w");
    fail = report ? 0 : errno;
  }
  PetscCallMPI(MPI_Bcast(&fail, 1, MPI_INT, 0, comm));
  PetscCheck(!fail, comm, PETSC_ERR_USER_INPUT, "option -report %s: cannot open for writing: %s", o->adapt.report, strerror(fail));
  for (int ph = 0; ph < NPHASES; ph++) {
    char sname[32];
    snprintf(sname, sizeof(sname), "%c%s", phase_name[ph][0] - 'a' + 'A', phase_name[ph] + 1);
    PetscCall(PetscLogStageRegister(sname, &stage[ph]));
  }
  PetscCall(FemPoissonCreate(comm, o->problem, (int)o->degree, NULL, &fp));
  PetscCall(FemPoissonSetBoundaryTypes(fp, o->tree_bc));
  const int vn = FemPoissonVNodes(fp);
  /* Keep families on one rank from the start, so coarsening, and with it
   * the mesh sequence, does not depend on the number of ranks. */
  PetscCall(AmrLbCreate(comm, &o->lb, &lb));
  PetscCall(AmrLbInitial(lb, p4est, NULL, 0, NULL));

  double total[NPHASES] = {0};
  for (PetscInt cycle = 0; cycle < o->cycles; cycle++) {
    double t[NPHASES] = {0}, t0, cpu0, l2 = NAN, h1 = NAN, est;
    PetscInt its;
    PetscReal rnorm;
    AmrLbRecord lr;
    const p4est_locidx_t n = p4est->local_num_quadrants;

    PetscCall(PetscLogStagePush(stage[PH_SETUP]));
    t0 = MPI_Wtime();
    PetscCall(FemPoissonSetup(fp, p4est));
    if (coef) PetscCall(FemPoissonSetInitialGuess(fp, coef));
    PetscCall(PetscFree(coef));
    t[PH_SETUP] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(stage[PH_ASSEMBLY]));
    t0 = MPI_Wtime();
    /* the assembly is this rank's own work: the balancer weighs by it */
    PetscCall(AmrLbWindowStart(lb, p4est, NULL));
    cpu0 = AmrLbThreadTime();
    PetscCall(FemPoissonAssemble(fp));
    t[PH_ASSEMBLY] = MPI_Wtime() - t0;
    PetscCall(AmrLbAddStep(lb, AmrLbThreadTime() - cpu0, t[PH_ASSEMBLY]));
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(stage[PH_SOLVE]));
    t0 = MPI_Wtime();
    PetscCall(FemPoissonSolve(fp, &its, &rnorm));
    t[PH_SOLVE] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(stage[PH_ESTIMATE]));
    t0 = MPI_Wtime();
    PetscCall(PetscFree2(eta2, err2));
    PetscCall(PetscMalloc2((size_t)n + 1, &eta2, (size_t)n + 1, &err2));
    PetscCall(FemPoissonKelly(fp, eta2, &est));
    if (o->problem->u) PetscCall(FemPoissonExactError(fp, NULL, err2, &l2, &h1));
    t[PH_ESTIMATE] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(stage[PH_OUTPUT]));
    t0 = MPI_Wtime();
    if (o->vtk[0] && cycle % o->adapt.vtk_interval == 0) PetscCall(write_vtk(p4est, fp, eta2, o->problem->u ? err2 : NULL, o->vtk, (int)cycle));
    t[PH_OUTPUT] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    /* Adapt with this cycle's indicator, carrying the solution, then weigh
     * and balance for the next cycle. */
    const PetscBool last = cycle == o->cycles - 1;
    const long long cells = (long long)p4est->global_num_quadrants, dofs = (long long)FemPoissonGlobalSize(fp);
    if (!last) {
      signed char *marks, *level;
      PetscCall(PetscLogStagePush(stage[PH_ADAPT]));
      t0 = MPI_Wtime();
      PetscCall(PetscMalloc2(n, &marks, n, &level));
      for (p4est_topidx_t tr = p4est->first_local_tree, e = 0; tr <= p4est->last_local_tree; tr++) {
        p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, tr);
        for (size_t k = 0; k < tree->quadrants.elem_count; k++, e++)
          level[e] = p4est_quadrant_array_index(&tree->quadrants, k)->level;
      }
      PetscCall(AmrMark(comm, o->adapt.strategy, n, eta2, level, &o->adapt.mark, marks));
      PetscCall(PetscMalloc1((size_t)n * vn, &coef));
      PetscCall(FemPoissonElementCoefficients(fp, coef));
      PetscCall(AmrAdapt(p4est, marks, o->adapt.mark.min_level, o->adapt.mark.max_level, vn, &coef, FemPoissonTransfer, fp));
      PetscCall(PetscFree2(marks, level));
      t[PH_ADAPT] = MPI_Wtime() - t0;
      PetscCall(PetscLogStagePop());
    }
    PetscCall(PetscLogStagePush(stage[PH_PARTITION]));
    t0 = MPI_Wtime();
    {
      AmrField field = {(void **)&coef, sizeof(double) * vn};
      PetscCall(AmrLbBalance(lb, p4est, NULL, (int)cycle, !last, coef ? 1 : 0, &field, &lr));
    }
    t[PH_PARTITION] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, t, NPHASES, MPI_DOUBLE, MPI_MAX, comm));
    for (int ph = 0; ph < NPHASES; ph++) total[ph] += t[ph];
    const double eff = est / h1;
    if (o->problem->u)
      PetscCall(PetscPrintf(comm, "cycle %2d: cells %9lld dofs %9lld its %3d res %.1e L2 %.3e H1 %.3e estimate %.3e eff %.3f |",
                            (int)cycle, cells, dofs, (int)its, (double)rnorm, l2, h1, est, eff));
    else
      PetscCall(PetscPrintf(comm, "cycle %2d: cells %9lld dofs %9lld its %3d res %.1e estimate %.3e |", (int)cycle, cells,
                            dofs, (int)its, (double)rnorm, est));
    for (int ph = 0; ph < NPHASES; ph++) PetscCall(PetscPrintf(comm, " %s %.3f", phase_name[ph], t[ph]));
    PetscCall(PetscPrintf(comm, " s\n"));
    if (report) {
      fprintf(report, "{\"cycle\": %d, \"dim\": %d, \"problem\": \"%s\", \"degree\": %d, \"ranks\": %d, \"cells\": %lld, "
                      "\"dofs\": %lld, \"ksp_its\": %d, \"ksp_rnorm\": %.6e",
              (int)cycle, P4EST_DIM, o->problem->name, (int)o->degree, size, cells, dofs, (int)its, (double)rnorm);
      if (o->problem->u)
        fprintf(report, ", \"l2_error\": %.6e, \"h1_error\": %.6e, \"estimate\": %.6e, \"effectivity\": %.6f", l2, h1,
                est, eff);
      else
        fprintf(report, ", \"l2_error\": null, \"h1_error\": null, \"estimate\": %.6e, \"effectivity\": null", est);
      for (int ph = 0; ph < NPHASES; ph++) fprintf(report, ", \"t_%s\": %.6f", phase_name[ph], t[ph]);
      fprintf(report, ", \"sim_time\": null, \"error\": ");
      if (o->problem->u)
        fprintf(report, "%.6e", h1);
      else
        fprintf(report, "null");
      AmrLbRecordJSON(report, lb, &lr);
      fprintf(report, "}\n");
      fflush(report);
    }
    PetscCall(AmrLbRecordPrint(comm, AMR_PROGRAM, &lr, -1, cells, dofs, t[PH_ASSEMBLY] + t[PH_SOLVE]));
    PetscCall(AmrLbRecordFree(&lr));
  }
  {
    double all = 0.0;
    for (int ph = 0; ph < NPHASES; ph++) all += total[ph];
    PetscCall(PetscPrintf(comm, "total %.3f s (without output %.3f s):", all, all - total[PH_OUTPUT]));
    for (int ph = 0; ph < NPHASES; ph++) PetscCall(PetscPrintf(comm, " %s %.3f", phase_name[ph], total[ph]));
    PetscCall(PetscPrintf(comm, " s\n"));
  }
  PetscCall(AmrLbSummary(lb, comm, AMR_PROGRAM));
  if (report) fclose(report);
  PetscCall(PetscFree2(eta2, err2));
  PetscCall(FemPoissonDestroy(&fp));
  PetscCall(AmrLbDestroy(&lb));
  PetscFunctionReturn(0);
}
