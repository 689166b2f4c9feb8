#include <math.h>
#include <string.h>
#include "mesh/mark.h"

#define AMR_MARK_TIE 1e-6

typedef struct {
  MPI_Comm comm;
  long n;
  const double *v;
  int sum; /* measure: 0 counts cells, 1 sums values, over v >= t */
} measure_t;

static PetscErrorCode measure(const measure_t *m, double t, double *out)
{
  double s = 0.0;
  PetscFunctionBeginUser;
  for (long i = 0; i < m->n; i++)
    if (m->v[i] >= t) s += m->sum ? m->v[i] : 1.0;
  PetscCallMPI(MPI_Allreduce(&s, out, 1, MPI_DOUBLE, MPI_SUM, m->comm));
  PetscFunctionReturn(0);
}

/* The largest threshold t with measure(t) >= target, by bisection between
 * the global extremes (the measure does not increase with t). */
static PetscErrorCode bisect(const measure_t *m, double target, double *t)
{
  double lo = INFINITY, hi = -INFINITY, mhi;
  PetscFunctionBeginUser;
  for (long i = 0; i < m->n; i++) {
    lo = fmin(lo, m->v[i]);
    hi = fmax(hi, m->v[i]);
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_DOUBLE, MPI_MIN, m->comm));
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_DOUBLE, MPI_MAX, m->comm));
  PetscCall(measure(m, hi, &mhi));
  if (mhi >= target) {
    *t = hi;
    PetscFunctionReturn(0);
  }
  for (int it = 0; it < 200 && hi - lo > 1e-14 * fabs(hi); it++) {
    /* Geometric midpoints resolve indicators spread over many decades. */
    const double mid = lo > 0 ? sqrt(lo * hi) : 0.5 * (lo + hi);
    double mm;
    PetscCall(measure(m, mid, &mm));
    if (mm >= target) lo = mid;
    else hi = mid;
  }
  *t = lo;
  PetscFunctionReturn(0);
}

/* Coarsen the share par->coarsen_fraction of cells with the smallest
 * indicators: all cells below the threshold t_c. */
static PetscErrorCode coarsen_threshold(const measure_t *m, double total_cells, const AmrMarkParams *par,
                                        double *tc)
{
  PetscFunctionBeginUser;
  *tc = -INFINITY;
  if (par->coarsen_fraction > 0) {
    measure_t c = *m;
    c.sum = 0;
    PetscCall(bisect(&c, total_cells - floor(par->coarsen_fraction * total_cells), tc));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode thresholds_fraction(const measure_t *m, double ncells, const AmrMarkParams *par,
                                          double *tr, double *tc)
{
  measure_t c = *m;
  PetscFunctionBeginUser;
  c.sum = 0;
  *tr = INFINITY;
  if (par->refine_fraction > 0) PetscCall(bisect(&c, fmax(1.0, floor(par->refine_fraction * ncells)), tr));
  PetscCall(coarsen_threshold(m, ncells, par, tc));
  PetscFunctionReturn(0);
}

static PetscErrorCode thresholds_doerfler(const measure_t *m, double ncells, const AmrMarkParams *par,
                                          double *tr, double *tc)
{
  measure_t s = *m;
  double total;
  PetscFunctionBeginUser;
  s.sum = 1;
  PetscCall(measure(&s, -INFINITY, &total));
  PetscCall(bisect(&s, par->theta * total, tr));
  PetscCall(coarsen_threshold(m, ncells, par, tc));
  PetscFunctionReturn(0);
}

static PetscErrorCode thresholds_uniform(const measure_t *m, double ncells, const AmrMarkParams *par,
                                         double *tr, double *tc)
{
  (void)m; (void)ncells; (void)par;
  PetscFunctionBeginUser;
  *tr = -INFINITY;
  *tc = -INFINITY;
  PetscFunctionReturn(0);
}

static const struct {
  const char *name;
  PetscErrorCode (*thresholds)(const measure_t *, double, const AmrMarkParams *, double *, double *);
} strategies[] = {
  {"fraction", thresholds_fraction},
  {"doerfler", thresholds_doerfler},
  {"uniform", thresholds_uniform},
};

const char *AmrMarkStrategyName(int i)
{
  if (i < 0 || i >= (int)(sizeof(strategies) / sizeof(strategies[0]))) return NULL;
  return strategies[i].name;
}

PetscErrorCode AmrMark(MPI_Comm comm, const char *name, long n, const double *eta2, const signed char *level,
                       const AmrMarkParams *par, signed char *marks)
{
  measure_t m = {comm, n, eta2, 0};
  double ncells = (double)n, tr, tc;
  int s;

  PetscFunctionBeginUser;
  for (s = 0; AmrMarkStrategyName(s); s++)
    if (!strcmp(strategies[s].name, name)) break;
  PetscCheck(AmrMarkStrategyName(s), comm, PETSC_ERR_ARG_UNKNOWN_TYPE, "unknown marking strategy '%s'", name);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &ncells, 1, MPI_DOUBLE, MPI_SUM, comm));
  PetscCall(strategies[s].thresholds(&m, ncells, par, &tr, &tc));
  /* Indicators that agree to a relative AMR_MARK_TIE are one value: cells
   * equal by symmetry are then marked alike although round-off (which
   * depends on the number of ranks) separates their indicators. */
  tr *= 1.0 - AMR_MARK_TIE;
  tc *= 1.0 - AMR_MARK_TIE;
  for (long i = 0; i < n; i++) {
    marks[i] = 0;
    if (level[i] < par->min_level || (eta2[i] >= tr && level[i] < par->max_level)) marks[i] = 1;
    else if (eta2[i] < tc && level[i] > par->min_level) marks[i] = -1;
  }
  PetscFunctionReturn(0);
}
