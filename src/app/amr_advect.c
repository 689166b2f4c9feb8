/* The advection problems of amr2d/amr3d: one adapt interval is a pressure
 * solve (darcy-transport only), -amr_interval explicit steps each timed on
 * every rank, VTK, marking, adaptation, weighing and balancing (lbcycle.h)
 * and a report record.  Compiled for 2D and 3D (P4_TO_P8). */
#include "app/amr_advect.h"
#include "app/options.h"
#include "fem/advect_darcy.h"
#include "fem/problem.h"
#include "mesh/mark.h"
#include "mesh/vtk.h"

#ifndef P4_TO_P8
#include <p4est_extended.h>
#else
#include <p8est_extended.h>
#endif
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

PetscErrorCode amr_advect_options(MPI_Comm comm, PetscInt min_level, amr_advect_options_t *o)
{
  char problem[64] = "", names[128], all[512] = "", phelp[256], msg[256];
  PetscBool set_problem, set_t_final, help;
  PetscReal t_final = 0;

  PetscFunctionBeginUser;
  memset(o, 0, sizeof(*o));
  o->interval = 10;
  AmrAdaptOptionsDefaults("threshold", min_level, PetscMin(min_level + 2, P4EST_QMAXLEVEL), &o->adapt);
  o->load_threshold = 0.1;
  advect_problem_names(names, sizeof names, "|");
  PetscCall(PetscSNPrintf(phelp, sizeof phelp, "Advection problem: %s", names));
  PetscOptionsBegin(comm, NULL, "Advection (runs when -problem names an advection problem)", NULL);
  AMR_OPTION("-problem", PetscOptionsString("-problem", phelp, NULL, problem, problem, sizeof problem, &set_problem));
  AMR_OPTION("-t_final", PetscOptionsReal("-t_final", "Final time (default: rotating-hill one revolution, moving-front 0.5, darcy-transport 1)", NULL,
                                          t_final, &t_final, &set_t_final));
  AMR_OPTION("-amr_interval", PetscOptionsInt("-amr_interval", "Time steps per adapt interval", NULL, o->interval, &o->interval, NULL));
  AMR_OPTION("-adv_load_threshold", PetscOptionsReal("-adv_load_threshold", "Cells whose tracer mean exceeds this are load type 1", NULL,
                                                     o->load_threshold, &o->load_threshold, NULL));
  PetscOptionsEnd();
  if (advect_options_get(comm, &o->adv, msg, sizeof msg)) SETERRQ(comm, PETSC_ERR_USER_INPUT, "%s", msg);
  PetscCall(PetscOptionsHasHelp(NULL, &help));
  if (help || (set_problem && advect_problem_find(problem))) PetscCall(AmrLbOptionsRead(comm, 2, &o->lb));
  if (!set_problem || fem_problem_find(problem)) PetscFunctionReturn(0);
  o->prob = advect_problem_find(problem);
  for (int i = 0; fem_problem_get(i); i++) {
    PetscCall(PetscStrlcat(all, fem_problem_get(i)->name, sizeof all));
    PetscCall(PetscStrlcat(all, ", ", sizeof all));
  }
  advect_problem_names(names, sizeof names, ", ");
  PetscCall(PetscStrlcat(all, names, sizeof all));
  PetscCheck(o->prob, comm, PETSC_ERR_USER_INPUT, "option -problem %s: unknown problem (choose from %s)", problem, all);
  o->t_final = set_t_final ? t_final : o->prob->t_final;
  PetscCheck(o->t_final > 0, comm, PETSC_ERR_USER_INPUT, "option -t_final: must be a positive time");
  PetscCheck(o->interval >= 1, comm, PETSC_ERR_USER_INPUT, "option -amr_interval %" PetscInt_FMT ": must be at least 1", o->interval);
  PetscCall(AmrAdaptOptionsRead(comm, PETSC_TRUE, &o->adapt));
  PetscFunctionReturn(0);
}

/* Marks for the next adaptation, by the chosen strategy. */
static PetscErrorCode mark(MPI_Comm comm, advect_t *adv, p4est_t *p4est, const amr_advect_options_t *o, signed char *marks)
{
  const p4est_locidx_t n = p4est->local_num_quadrants;
  double *eta2;
  signed char *level;

  PetscFunctionBeginUser;
  if (!strcmp(o->adapt.strategy, "threshold")) {
    PetscCall(advect_mark_threshold(adv, o->adapt.refine_tol, o->adapt.coarsen_tol, marks));
    PetscFunctionReturn(0);
  }
  PetscCall(advect_indicator(adv));
  PetscCall(PetscMalloc2(n + 1, &eta2, n + 1, &level));
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tr->quadrants, i);
      const double e = ((const advect_cell_t *)q->p.user_data)->indicator;
      eta2[tr->quadrants_offset + i] = e * e;
      level[tr->quadrants_offset + i] = (signed char)q->level;
    }
  }
  PetscCall(AmrMark(comm, o->adapt.strategy, (long)n, eta2, level, &o->adapt.mark, marks));
  PetscCall(PetscFree2(eta2, level));
  PetscFunctionReturn(0);
}

/* Mark and adapt; the balancer repartitions. */
static PetscErrorCode adapt(MPI_Comm comm, advect_t *adv, p4est_t *p4est, PetscInt min_level, const amr_advect_options_t *o)
{
  signed char *marks;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(p4est->local_num_quadrants + 1, &marks));
  PetscCall(mark(comm, adv, p4est, o, marks));
  PetscCall(advect_adapt(adv, marks, (int)min_level, o->adapt.mark.max_level));
  PetscCall(PetscFree(marks));
  PetscFunctionReturn(0);
}


/* The numbers one adapt interval reports. */
typedef struct {
  int cycle, steps;
  PetscInt ksp_its;
  double sim_time, mass, mass0, inflow, l2, t_poisson, t_advection, t_ksp;
  long long cells, type1, dofs;
} record_t;

/* VTK at the simulation time: the tracer at the corners of every cell
 * (discontinuous point data) and its cell mean, the load type and, for
 * darcy-transport, the pressure at the corners. */
static PetscErrorCode write_vtk(amr_vtk_series_t *vtk, advect_t *adv, advect_darcy_t *darcy, p4est_t *p4est, int cycle)
{
  amr_vtk_data_t d;
  double *corners, *pressure = NULL, *mean, *type;
  int *types = NULL;
  const p4est_locidx_t n = p4est->local_num_quadrants;

  PetscFunctionBeginUser;
  PetscCall(advect_corner_values(adv, &corners));
  if (darcy) PetscCall(advect_darcy_pressure_values(darcy, &pressure));
  PetscCall(PetscMalloc2((size_t)n + 1, &mean, (size_t)n + 1, &type));
  PetscCall(advect_cell_means(adv, mean));
  PetscCall(advect_cell_types(p4est, &types));
  for (p4est_locidx_t e = 0; e < n; e++) type[e] = types[e];
  amr_vtk_data_init(&d, NULL, 1);
  PetscCall(amr_vtk_add_point_field(&d, "tracer", corners));
  if (pressure) PetscCall(amr_vtk_add_point_field(&d, "pressure", pressure));
  PetscCall(amr_vtk_add_cell_field(&d, "tracer", mean));
  PetscCall(amr_vtk_add_cell_field(&d, "load_type", type));
  PetscCall(amr_vtk_series_write(vtk, p4est, cycle, advect_time(adv), &d));
  PetscCall(PetscFree2(mean, type));
  PetscCall(PetscFree(types));
  PetscCall(PetscFree(pressure));
  PetscCall(PetscFree(corners));
  PetscFunctionReturn(0);
}

/* Gathers the record of the interval just finished. */
static PetscErrorCode measure(MPI_Comm comm, advect_t *adv, p4est_t *p4est, const amr_advect_options_t *o, record_t *r)
{
  const advect_problem_t *prob = o->prob;
  double times[3] = {r->t_poisson, r->t_advection, r->t_ksp};
  long long type1 = 0;

  PetscFunctionBeginUser;
  r->sim_time = advect_time(adv);
  PetscCall(advect_mass(adv, &r->mass, &r->inflow));
  r->l2 = NAN;
  if (prob->has_exact) PetscCall(advect_l2_error(adv, &r->l2));
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t i = 0; i < tr->quadrants.elem_count; i++)
      type1 += ((const advect_cell_t *)p4est_quadrant_array_index(&tr->quadrants, i)->p.user_data)->load_type == 1;
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &type1, 1, MPI_LONG_LONG, MPI_SUM, comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, times, 3, MPI_DOUBLE, MPI_MAX, comm));
  r->type1 = type1;
  r->cells = (long long)p4est->global_num_quadrants;
  r->dofs = r->cells * (o->adv.degree ? P4EST_DIM + 1 : 1);
  r->t_poisson = times[0];
  r->t_advection = times[1];
  r->t_ksp = times[2];
  PetscFunctionReturn(0);
}

static double balance_error(const record_t *r) { return fabs(r->mass - r->mass0 - r->inflow) / fabs(r->mass0); }

static PetscErrorCode print_record(MPI_Comm comm, const record_t *r)
{
  char l2[64] = "";

  PetscFunctionBeginUser;
  if (!isnan(r->l2)) PetscCall(PetscSNPrintf(l2, sizeof l2, ", L2 error %.4e", r->l2));
  PetscCall(PetscPrintf(comm, "%s: cycle %d, t %.5f, step %d: %lld cells (%lld of type 1), mass %.10e, balance error %.1e%s\n", AMR_PROGRAM,
                        r->cycle, r->sim_time, r->steps, r->cells, r->type1, r->mass, balance_error(r), l2));
  PetscFunctionReturn(0);
}

/* One JSON object per adapt interval: the solver's numbers, then the
 * balancer's (rank 0 writes; rep is NULL elsewhere). */
static void write_record(FILE *rep, const char *problem, int ranks, const record_t *r, AmrLb lb, const AmrLbRecord *lr)
{
  if (!rep) return;
  fprintf(rep,
          "{\"program\":\"%s\",\"problem\":\"%s\",\"ranks\":%d,\"cycle\":%d,\"sim_time\":%.17g,\"step\":%d,\"cells\":%lld,\"dofs\":%lld,"
          "\"cells_type0\":%lld,\"cells_type1\":%lld,\"mass\":%.17g,\"mass_initial\":%.17g,\"boundary_inflow\":%.17g,"
          "\"mass_balance_error\":%.17g,\"t_poisson\":%.9g,\"t_ksp\":%.9g,\"t_advection\":%.9g",
          AMR_PROGRAM, problem, ranks, r->cycle, r->sim_time, r->steps, r->cells, r->dofs, r->cells - r->type1, r->type1, r->mass, r->mass0, r->inflow,
          balance_error(r), r->t_poisson, r->t_ksp, r->t_advection);
  if (r->ksp_its >= 0)
    fprintf(rep, ",\"ksp_its\":%d", (int)r->ksp_its);
  else
    fprintf(rep, ",\"ksp_its\":null");
  if (!isnan(r->l2))
    fprintf(rep, ",\"l2_error\":%.17g,\"error\":%.17g", r->l2, r->l2);
  else
    fprintf(rep, ",\"error\":null");
  AmrLbRecordJSON(rep, lb, lr);
  fprintf(rep, "}\n");
  fflush(rep);
}

/* Wall time this rank has spent in KSPSolve so far (PETSc's event log). */
static PetscErrorCode ksp_time(double *t)
{
  PetscLogEvent ev;
  PetscEventPerfInfo info;

  PetscFunctionBeginUser;
  PetscCall(PetscLogEventGetId("KSPSolve", &ev));
  PetscCall(PetscLogEventGetPerfInfo(0, ev, &info));
  *t = info.time;
  PetscFunctionReturn(0);
}

/* Opens the report on rank 0; a failure is a user error on every rank. */
static PetscErrorCode open_report(MPI_Comm comm, const char *path, FILE **rep)
{
  PetscMPIInt rank;
  int err = 0;

  PetscFunctionBeginUser;
  *rep = NULL;
  if (!path[0]) PetscFunctionReturn(0);
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    *rep = fopen(path, "w");
    if (!*rep) err = errno;
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "option -report: cannot write '%s': %s", path, strerror(err));
  PetscFunctionReturn(0);
}

PetscErrorCode amr_advect_run(MPI_Comm comm, const amr_mesh_t *mesh, p4est_t *p4est, PetscInt min_level, const char *vtk,
                              PetscBool vtk_binary, const amr_advect_options_t *o)
{
  advect_darcy_t *darcy = NULL;
  advect_t *adv;
  amr_vtk_series_t *series = NULL;
  AmrLb lb;
  FILE *rep;
  PetscMPIInt size;
  PetscBool logging;
  int *types = NULL;
  const PetscBool uniform = !strcmp(o->adapt.strategy, "uniform");
  record_t r = {0};

  PetscFunctionBeginUser;
  PetscCheck(!mesh->geom, comm, PETSC_ERR_USER_INPUT,
             "option -mesh: %s is curved; advection needs trees that are the (bi/tri)linear maps of their vertices", mesh->name);
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCall(AmrLbCreate(comm, &o->lb, &lb));
  PetscCall(open_report(comm, o->adapt.report, &rep));
  /* the KSP time comes from PETSc's event log, switched on here when -log_view did not */
  PetscCall(PetscLogIsActive(&logging));
  if (!logging) PetscCall(PetscLogDefaultBegin());
  if (o->prob->darcy) PetscCall(advect_darcy_create(comm, &darcy));
  if (vtk[0]) PetscCall(amr_vtk_series_create(comm, vtk, vtk_binary, &series));
  PetscCall(advect_create(p4est, o->prob, darcy, &o->adv, &adv));
  /* refine towards the initial data (split by cell count, families
   * together), then take it on the fine cells */
  for (PetscInt l = min_level; !uniform && l < o->adapt.mark.max_level; l++) {
    PetscCall(adapt(comm, adv, p4est, min_level, o));
    p4est_partition_ext(p4est, 1, NULL);
    PetscCall(advect_project_exact(adv));
  }
  PetscCall(advect_classify(adv, o->load_threshold));
  PetscCall(advect_cell_types(p4est, &types));
  PetscCall(AmrLbInitial(lb, p4est, types, 0, NULL));
  PetscCall(advect_mass(adv, &r.mass0, NULL));
  for (;;) {
    AmrLbRecord lr;
    double t0 = MPI_Wtime(), k0 = 0, k1 = 0;
    PetscBool last;
    PetscCall(advect_cell_types(p4est, &types));
    PetscCall(AmrLbWindowStart(lb, p4est, types));
    r.ksp_its = -1;
    if (darcy) {
      PetscCall(ksp_time(&k0));
      PetscCall(advect_darcy_update(darcy, adv, &r.ksp_its));
      PetscCall(ksp_time(&k1));
    }
    r.t_poisson = MPI_Wtime() - t0;
    r.t_ksp = k1 - k0;
    t0 = MPI_Wtime();
    /* one step at a time, so that each step's own work is timed (the same
     * steps as one call for the whole interval) */
    for (PetscInt k = 0; k < o->interval && advect_time(adv) < o->t_final; k++) {
      double c0, c1, w0, w1;
      int n;
      advect_work_time(adv, &c0, &w0);
      PetscCall(advect_advance(adv, o->t_final, 1, &n));
      advect_work_time(adv, &c1, &w1);
      PetscCall(AmrLbAddStep(lb, c1 - c0, w1 - w0));
      r.steps += n;
    }
    r.t_advection = MPI_Wtime() - t0;
    PetscCall(advect_classify(adv, o->load_threshold));
    PetscCall(measure(comm, adv, p4est, o, &r));
    PetscCall(print_record(comm, &r));
    if (series && r.cycle % o->adapt.vtk_interval == 0) PetscCall(write_vtk(series, adv, darcy, p4est, r.cycle));
    last = advect_time(adv) >= o->t_final;
    if (!last && !uniform) PetscCall(adapt(comm, adv, p4est, min_level, o));
    PetscCall(advect_cell_types(p4est, &types));
    PetscCall(AmrLbBalance(lb, p4est, types, r.cycle, !last, 0, NULL, &lr));
    write_record(rep, o->prob->name, size, &r, lb, &lr);
    PetscCall(AmrLbRecordPrint(comm, AMR_PROGRAM, &lr, r.sim_time, r.cells, r.dofs, r.t_poisson + r.t_advection));
    PetscCall(AmrLbRecordFree(&lr));
    r.cycle++;
    if (last) break;
  }
  PetscCall(AmrLbSummary(lb, comm, AMR_PROGRAM));
  if (rep) fclose(rep);
  PetscCall(PetscFree(types));
  PetscCall(advect_destroy(&adv));
  PetscCall(advect_darcy_destroy(&darcy));
  PetscCall(amr_vtk_series_destroy(&series));
  PetscCall(AmrLbDestroy(&lb));
  PetscFunctionReturn(0);
}
