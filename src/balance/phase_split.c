/* The multi-constraint split of the curve behind lb_phase_choose
 * (lbphase.h) by prefix sums: no array as long as the parts but the chosen
 * cut's positions, each rank placing the cuts that fall in its own piece.
 *
 * For caps c_k on the phases' part loads, the parts ask for unequal shares
 * of any one combined weight: a part is full when its largest phase load
 * over its cap, max_k L_kq / c_k, reaches the others'.  A cut of equal
 * shares gives every part the same sum of the cell weights it cuts by, so
 * the split reweighs: it starts from the sum sum_k w_k / c_k, cuts it by
 * sfc's rule (lb_phase_trial), and multiplies the weight of every cell by
 * its part's max_k L_kq / c_k over the mean part's, so that a part above
 * the mean grows heavier and the next cut makes it smaller; rounds repeat
 * while the modelled time falls.  A part's loads are differences of the
 * phases' prefix sums at its two cuts: a rank knows those at the cuts in
 * its piece, the last cut before it (the trial's account) and the first
 * after it (one MPI_Exscan with MPI_MIN over the ranks in reverse order).
 * Around that the caps are searched one phase at a time (scaled by 2,
 * then 1.25, each way while the time falls).  Every round is a trial and
 * one reduction of the phases' prefixes, so the split costs a bounded
 * number of reductions of nphases numbers whatever the number of parts,
 * and the same cuts on any number of processes. */
#include "balance/lbphase.h"
#include "balance/impl/lbcall.h"
#include "balance/impl/phase.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rounds of reweighing one trial of caps makes at most, and rounds of the
 * whole search: each a trial and a reduction, about 150 collectives at
 * most, which leaves the combinations' search room within the 400 per
 * rank that lbbench -step's check allows. */
#define SPLIT_TRIAL_ROUNDS 6
#define SPLIT_ROUNDS 24

/* A part's factor never falls below this: cells whose capped phases weigh
 * nothing keep a weight, so that the cut's midpoints still grow. */
#define SPLIT_MIN_FACTOR 1e-6

/* What the split's search carries besides the search of cuts. */
typedef struct {
  lb_phase_search *s;
  MPI_Comm reversed; /* the ranks in reverse order, for the first cut after a piece */
  double *m;         /* this rank's cell weights of the current round */
  double *best_m;    /* and those of the best cut so far */
  double *after;     /* nphases: the phases' prefixes at the first cut after the piece */
  int rounds;
} split_state;

/* max_k alpha_k L_k of a part between prefixes lo and hi, over the mean
 * part's. */
static double part_factor(const lb_phase_search *s, const double *alpha, const double *lo, const double *hi)
{
  double b = 0, mean = 0;
  for (int k = 0; k < s->nphases; k++) {
    b = fmax(b, alpha[k] * (hi[k] - lo[k]));
    mean += alpha[k] * s->piece.total[k] / s->nparts;
  }
  return mean > 0 ? fmax(b / mean, SPLIT_MIN_FACTOR) : 1;
}

/* Reweigh this rank's cells by their parts' factors, after a trial that
 * recorded its cuts (the trial's account left the phases' prefixes at the
 * last cut before the piece in s->scratch + 2 nphases). */
static lb_err reweigh(split_state *st, const double *alpha)
{
  lb_phase_search *s = st->s;
  const int K = s->nphases;
  const double *before = s->scratch + 2 * K, *lo;
  int64_t start = 0;

  /* the first cut at or after the piece's end: the curve's end if none */
  for (int k = 0; k < K; k++) st->after[k] = s->nl > 0 ? s->lrun[k] : HUGE_VAL;
  LB_MPI(MPI_Exscan(MPI_IN_PLACE, st->after, K, MPI_DOUBLE, MPI_MIN, st->reversed));
  for (int k = 0; k < K; k++)
    if (s->piece.rank == s->piece.size - 1 || st->after[k] == HUGE_VAL) st->after[k] = s->piece.total[k];
  /* MPI_Exscan leaves rank 0's last cut before the piece undefined: the curve's start */
  if (s->piece.rank == 0)
    for (int k = 0; k < K; k++) s->scratch[2 * K + k] = 0;
  lo = before;
  for (int l = 0; l <= s->nl; l++) {
    const int64_t end = l < s->nl ? s->lpos[l] : s->n;
    const double *hi = l < s->nl ? s->lrun + (size_t)l * K : st->after;
    const double f = part_factor(s, alpha, lo, hi);
    for (int64_t i = start; i < end; i++) st->m[i] *= f;
    start = end;
    lo = hi;
  }
  return LB_OK;
}

/* One trial of factors alpha (1 / caps): rounds of cuts and reweighing
 * while the time falls; the best cut so far kept in sp (its model,
 * factors) and st->best_m. */
static lb_err split_trial(split_state *st, const double *alpha, lb_phase_choice *sp, int *better)
{
  lb_phase_search *s = st->s;
  double last = HUGE_VAL;
  lb_phase_model m;

  *better = 0;
  lb_phase_combine(s->n, s->nphases, s->w, alpha, s->mean, st->m);
  for (int round = 0; round < SPLIT_TRIAL_ROUNDS && st->rounds < SPLIT_ROUNDS; round++) {
    if (round > 0) {
      LB_CALL(reweigh(st, alpha));
      sp->collectives++;
    }
    LB_CALL(lb_phase_trial(s, st->m, &m));
    st->rounds++;
    sp->evaluated++;
    sp->collectives += LB_PHASE_TRIAL_COLLECTIVES;
    if (!(m.time < last * (1 - LB_PHASE_BETTER))) break;
    last = m.time;
    if (sp->evaluated == 1 || m.time < sp->model.time * (1 - LB_PHASE_BETTER)) {
      *better = 1;
      sp->model = m;
      memcpy(sp->alpha, alpha, sizeof(double) * s->nphases);
      memcpy(st->best_m, st->m, sizeof(double) * s->n);
    }
  }
  return LB_OK;
}

/* Scale phase k's factor by scale while the time falls; *moved: once at
 * least. */
static lb_err split_steps(split_state *st, int k, double scale, lb_phase_choice *sp, int *moved)
{
  lb_phase_search *s = st->s;
  double *a = s->combined + s->n;
  int better = 1;

  for (*moved = 0; better && st->rounds < SPLIT_ROUNDS; *moved |= better) {
    memcpy(a, sp->alpha, sizeof(double) * s->nphases);
    a[k] *= scale;
    LB_CALL(split_trial(st, a, sp, &better));
  }
  return LB_OK;
}

static lb_err split_run(split_state *st, const double *start, lb_phase_choice *sp)
{
  static const double factor[] = {2, 1.25};
  lb_phase_search *s = st->s;
  double *a = s->combined + s->n;
  int better, up;

  for (int k = 0; k < s->nphases; k++) a[k] = lb_phase_searched(s, k) && start[k] > 0 ? 1 / start[k] : 0;
  LB_CALL(split_trial(st, a, sp, &better));
  for (size_t f = 0; f < sizeof factor / sizeof *factor; f++)
    for (int k = 0; k < s->nphases; k++) {
      if (!lb_phase_searched(s, k) || sp->alpha[k] == 0) continue;
      LB_CALL(split_steps(st, k, factor[f], sp, &up));
      /* a step up that helped needs no step down */
      if (!up) LB_CALL(split_steps(st, k, 1 / factor[f], sp, &up));
    }
  return lb_phase_cut_counts(s, st->best_m, sp);
}

lb_err lb_phase_split_search(lb_phase_search *s, const double *start, lb_phase_choice *sp)
{
  split_state st = {s, MPI_COMM_NULL, NULL, NULL, NULL, 0};
  lb_err err = LB_OK;

  st.m = malloc(sizeof(double) * (2 * (size_t)s->n + s->nphases));
  if (!st.m) return lb_error(LB_ERR_MEM, "phase model: out of memory for the split's weights");
  st.best_m = st.m + s->n;
  st.after = st.m + 2 * s->n;
  if (MPI_Comm_split(s->comm, 0, s->piece.size - 1 - s->piece.rank, &st.reversed) != MPI_SUCCESS)
    err = lb_error(LB_ERR_MPI, "phase model: MPI_Comm_split failed");
  sp->collectives++;
  s->record = 1;
  if (!err) err = split_run(&st, start, sp);
  s->record = 0;
  if (st.reversed != MPI_COMM_NULL) MPI_Comm_free(&st.reversed);
  free(st.m);
  return err;
}

lb_err lb_phase_split(MPI_Comm comm, int64_t n, int nphases, const double *const *w, int nparts, const double *start, int64_t *counts)
{
  lb_phase_search s;
  lb_phase_choice sp;
  lb_err err = lb_phase_search_open(&s, comm, n, nphases, w, nparts, &sp);

  if (!err) err = lb_phase_split_search(&s, start, &sp);
  if (!err) memcpy(counts, sp.counts, sizeof(int64_t) * nparts);
  lb_phase_search_close(&s);
  lb_phase_choice_free(&sp);
  return err;
}
