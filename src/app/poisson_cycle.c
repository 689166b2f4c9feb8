#ifndef P4_TO_P8
#include <p4est_bits.h>
#include <p4est_vtk.h>
#else
#include <p4est_to_p8est.h>
#include <p8est_bits.h>
#include <p8est_vtk.h>
#endif
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "app/poisson_cycle.h"
#include "fem/poisson.h"
#include "mesh/adapt.h"

enum { PH_SETUP, PH_ASSEMBLY, PH_SOLVE, PH_ESTIMATE, PH_ADAPT, PH_PARTITION, PH_OUTPUT, NPHASES };
static const char *phase_name[NPHASES] = {"setup", "assembly", "solve", "estimate", "adapt", "partition", "output"};

PetscErrorCode AmrPoissonOptionsRead(MPI_Comm comm, AmrPoissonOptions *o, char *msg, size_t len)
{
  char pname[64] = "sine", list[256] = "";
  PetscBool found;

  PetscFunctionBeginUser;
  msg[0] = '\0';
  memset(o, 0, sizeof(*o));
  o->degree = 1;
  o->cycles = 8;
  o->vtk_interval = 1;
  strcpy(o->strategy, "fraction");
  o->mark.refine_fraction = 0.3;
  o->mark.coarsen_fraction = 0.03;
  o->mark.theta = 0.5;
  o->mark.min_level = 0;
  o->mark.max_level = P4EST_QMAXLEVEL;
  PetscInt minl = o->mark.min_level, maxl = o->mark.max_level;
  for (int i = 0; fem_problem_get(i); i++) {
    if (i) strncat(list, ", ", sizeof(list) - strlen(list) - 1);
    strncat(list, fem_problem_get(i)->name, sizeof(list) - strlen(list) - 1);
  }
  PetscOptionsBegin(comm, NULL, "Poisson cycle (amr2d/amr3d)", NULL);
  PetscCall(PetscOptionsString("-problem", list, NULL, pname, pname, sizeof(pname), NULL));
  PetscCall(PetscOptionsInt("-degree", "polynomial degree of the elements: 1 or 2", NULL, o->degree, &o->degree, NULL));
  PetscCall(PetscOptionsString("-amr_strategy", "marking: fraction, doerfler or uniform", NULL, o->strategy,
                               o->strategy, sizeof(o->strategy), NULL));
  PetscCall(PetscOptionsReal("-amr_refine_fraction", "fraction strategy: share of cells refined", NULL,
                             o->mark.refine_fraction, &o->mark.refine_fraction, NULL));
  PetscCall(PetscOptionsReal("-amr_coarsen_fraction", "share of cells coarsened", NULL, o->mark.coarsen_fraction,
                             &o->mark.coarsen_fraction, NULL));
  PetscCall(PetscOptionsReal("-amr_doerfler_theta", "doerfler strategy: share of the squared estimate refined", NULL,
                             o->mark.theta, &o->mark.theta, NULL));
  PetscCall(PetscOptionsInt("-amr_min_level", "coarsest level kept", NULL, minl, &minl, NULL));
  PetscCall(PetscOptionsInt("-amr_max_level", "finest level allowed", NULL, maxl, &maxl, NULL));
  PetscCall(PetscOptionsInt("-amr_cycles", "number of solve-estimate-adapt cycles", NULL, o->cycles, &o->cycles, NULL));
  PetscCall(PetscOptionsString("-report", "write one JSON object per cycle to this file", NULL, o->report, o->report,
                               sizeof(o->report), NULL));
  PetscCall(PetscOptionsString("-vtk", "write VTK files PREFIX_NNNN.vtu", NULL, o->vtk, o->vtk, sizeof(o->vtk), &found));
  PetscCall(PetscOptionsInt("-vtk_interval", "write VTK every K cycles", NULL, o->vtk_interval, &o->vtk_interval, NULL));
  PetscOptionsEnd();
  o->mark.min_level = (int)minl;
  o->mark.max_level = (int)maxl;

  int s;
  for (s = 0; AmrMarkStrategyName(s); s++)
    if (!strcmp(AmrMarkStrategyName(s), o->strategy)) break;
  o->problem = fem_problem_find(pname);
  if (!o->problem)
    snprintf(msg, len, "unknown -problem '%s' (choose from %s)", pname, list);
  else if (!(o->problem->dims & (1 << P4EST_DIM)))
    snprintf(msg, len, "-problem %s is not available in %dD", pname, P4EST_DIM);
  else if (o->degree != 1 && o->degree != 2)
    snprintf(msg, len, "-degree %d is not supported (use 1 or 2)", (int)o->degree);
  else if (!AmrMarkStrategyName(s))
    snprintf(msg, len, "unknown -amr_strategy '%s' (choose from fraction, doerfler, uniform)", o->strategy);
  else if (!(o->mark.refine_fraction >= 0 && o->mark.refine_fraction <= 1))
    snprintf(msg, len, "-amr_refine_fraction %g is not in [0, 1]", o->mark.refine_fraction);
  else if (!(o->mark.coarsen_fraction >= 0 && o->mark.coarsen_fraction <= 1 - o->mark.refine_fraction))
    snprintf(msg, len, "-amr_coarsen_fraction %g is not in [0, 1 - refine fraction]", o->mark.coarsen_fraction);
  else if (!(o->mark.theta > 0 && o->mark.theta <= 1))
    snprintf(msg, len, "-amr_doerfler_theta %g is not in (0, 1]", o->mark.theta);
  else if (minl < 0 || maxl > P4EST_QMAXLEVEL || minl > maxl)
    snprintf(msg, len, "-amr_min_level %d / -amr_max_level %d: need 0 <= min <= max <= %d", (int)minl, (int)maxl,
             P4EST_QMAXLEVEL);
  else if (o->cycles < 1)
    snprintf(msg, len, "-amr_cycles %d: need at least 1", (int)o->cycles);
  else if (o->vtk_interval < 1)
    snprintf(msg, len, "-vtk_interval %d: need at least 1", (int)o->vtk_interval);
  else if (found && !o->vtk[0])
    snprintf(msg, len, "-vtk needs a file name prefix");
  PetscFunctionReturn(0);
}

/* VTK: solution at the cell corners, indicator, level, rank and tree. */
static PetscErrorCode write_vtk(p4est_t *p4est, FemPoisson fp, const double *eta2, const char *prefix, int cycle)
{
  const int vn = FemPoissonVNodes(fp), p = vn == P4EST_CHILDREN ? 1 : 2;
  const p4est_locidx_t n = p4est->local_num_quadrants;
  char name[PETSC_MAX_PATH_LEN + 16];
  double *coef;
  sc_array_t *corner, *ind;
  p4est_vtk_context_t *ctx;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)n * vn, &coef));
  PetscCall(FemPoissonElementCoefficients(fp, coef));
  corner = sc_array_new_count(sizeof(double), (size_t)n * P4EST_CHILDREN);
  ind = sc_array_new_count(sizeof(double), (size_t)n);
  for (p4est_locidx_t e = 0; e < n; e++) {
    for (int c = 0; c < P4EST_CHILDREN; c++) {
      const int i = p * (c & 1) + (p + 1) * p * ((c >> 1) & 1) + (p + 1) * (p + 1) * p * ((c >> 2) & 1);
      *(double *)sc_array_index(corner, (size_t)e * P4EST_CHILDREN + c) = coef[(size_t)e * vn + i];
    }
    *(double *)sc_array_index(ind, (size_t)e) = sqrt(eta2[e]);
  }
  snprintf(name, sizeof(name), "%s_%04d", prefix, cycle);
  ctx = p4est_vtk_context_new(p4est, name);
  p4est_vtk_context_set_scale(ctx, 1.0);
  p4est_vtk_context_set_continuous(ctx, 1);
  ctx = p4est_vtk_write_header(ctx);
  if (ctx) ctx = p4est_vtk_write_cell_dataf(ctx, 1, 1, 1, 0, 1, 0, "indicator", ind, ctx);
  if (ctx) ctx = p4est_vtk_write_point_dataf(ctx, 1, 0, "solution", corner, ctx);
  const int ok = ctx && p4est_vtk_write_footer(ctx) == 0;
  sc_array_destroy(corner);
  sc_array_destroy(ind);
  PetscCall(PetscFree(coef));
  PetscCheck(ok, PetscObjectComm((PetscObject)FemPoissonMatrix(fp)), PETSC_ERR_FILE_WRITE,
             "cannot write VTK file %s", name);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrPoissonRun(MPI_Comm comm, p4est_t *p4est, const AmrPoissonOptions *o, char *msg, size_t len)
{
  PetscLogStage stage[NPHASES];
  FILE *report = NULL;
  FemPoisson fp;
  double *coef = NULL, *eta2 = NULL;
  int rank, size, fail = 0;

  PetscFunctionBeginUser;
  msg[0] = '\0';
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  if (o->report[0] && rank == 0) {
    report = fopen(o->report, "w");
    fail = !report;
  }
  PetscCallMPI(MPI_Bcast(&fail, 1, MPI_INT, 0, comm));
  if (fail) {
    snprintf(msg, len, "-report %s: cannot open the file for writing", o->report);
    PetscFunctionReturn(0);
  }
  for (int ph = 0; ph < NPHASES; ph++) {
    char sname[32];
    snprintf(sname, sizeof(sname), "%c%s", phase_name[ph][0] - 'a' + 'A', phase_name[ph] + 1);
    PetscCall(PetscLogStageRegister(sname, &stage[ph]));
  }
  PetscCall(FemPoissonCreate(comm, o->problem, (int)o->degree, NULL, &fp));
  const int vn = FemPoissonVNodes(fp);

  for (PetscInt cycle = 0; cycle < o->cycles; cycle++) {
    double t[NPHASES] = {0}, t0, l2 = NAN, h1 = NAN, est;
    PetscInt its;
    PetscReal rnorm;
    p4est_locidx_t n = p4est->local_num_quadrants;

    if (cycle > 0) {
      /* Adapt with the previous cycle's indicator, carrying the solution. */
      signed char *marks, *level;
      PetscCall(PetscLogStagePush(stage[PH_ADAPT]));
      t0 = MPI_Wtime();
      PetscCall(PetscMalloc2(n, &marks, n, &level));
      for (p4est_topidx_t tr = p4est->first_local_tree, e = 0; tr <= p4est->last_local_tree; tr++) {
        p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, tr);
        for (size_t k = 0; k < tree->quadrants.elem_count; k++, e++)
          level[e] = p4est_quadrant_array_index(&tree->quadrants, k)->level;
      }
      PetscCall(AmrMark(comm, o->strategy, n, eta2, level, &o->mark, marks));
      PetscCall(PetscMalloc1((size_t)n * vn, &coef));
      PetscCall(FemPoissonElementCoefficients(fp, coef));
      PetscCall(AmrAdapt(p4est, marks, o->mark.min_level, o->mark.max_level, vn, &coef, FemPoissonTransfer, fp));
      PetscCall(PetscFree2(marks, level));
      t[PH_ADAPT] = MPI_Wtime() - t0;
      PetscCall(PetscLogStagePop());
      PetscCall(PetscLogStagePush(stage[PH_PARTITION]));
      t0 = MPI_Wtime();
      PetscCall(AmrPartition(p4est, vn, &coef));
      t[PH_PARTITION] = MPI_Wtime() - t0;
      PetscCall(PetscLogStagePop());
      n = p4est->local_num_quadrants;
    }

    PetscCall(PetscLogStagePush(stage[PH_SETUP]));
    t0 = MPI_Wtime();
    PetscCall(FemPoissonSetup(fp, p4est));
    if (coef) PetscCall(FemPoissonSetInitialGuess(fp, coef));
    PetscCall(PetscFree(coef));
    t[PH_SETUP] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(stage[PH_ASSEMBLY]));
    t0 = MPI_Wtime();
    PetscCall(FemPoissonAssemble(fp));
    t[PH_ASSEMBLY] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(stage[PH_SOLVE]));
    t0 = MPI_Wtime();
    PetscCall(FemPoissonSolve(fp, &its, &rnorm));
    t[PH_SOLVE] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(stage[PH_ESTIMATE]));
    t0 = MPI_Wtime();
    PetscCall(PetscFree(eta2));
    PetscCall(PetscMalloc1((size_t)n + 1, &eta2));
    PetscCall(FemPoissonKelly(fp, eta2, &est));
    if (o->problem->u) PetscCall(FemPoissonExactError(fp, NULL, NULL, &l2, &h1));
    t[PH_ESTIMATE] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCall(PetscLogStagePush(stage[PH_OUTPUT]));
    t0 = MPI_Wtime();
    if (o->vtk[0] && cycle % o->vtk_interval == 0) PetscCall(write_vtk(p4est, fp, eta2, o->vtk, (int)cycle));
    t[PH_OUTPUT] = MPI_Wtime() - t0;
    PetscCall(PetscLogStagePop());

    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, t, NPHASES, MPI_DOUBLE, MPI_MAX, comm));
    const long long cells = (long long)p4est->global_num_quadrants, dofs = (long long)FemPoissonGlobalSize(fp);
    const double eff = est / h1;
    if (o->problem->u)
      PetscCall(PetscPrintf(comm, "cycle %2d: cells %9lld dofs %9lld its %3d L2 %.3e H1 %.3e estimate %.3e eff %.3f |",
                            (int)cycle, cells, dofs, (int)its, l2, h1, est, eff));
    else
      PetscCall(PetscPrintf(comm, "cycle %2d: cells %9lld dofs %9lld its %3d estimate %.3e |", (int)cycle, cells, dofs,
                            (int)its, est));
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
      fprintf(report, "}\n");
      fflush(report);
    }
  }
  if (report) fclose(report);
  PetscCall(PetscFree(eta2));
  PetscCall(FemPoissonDestroy(&fp));
  PetscFunctionReturn(0);
}
