/* Niemoeller et al. 2020's offset-shifting sequence as a blob (lbstate.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "balance/impl/lbcall.h"
#include "balance/lbstate.h"
#include "balance/impl/pack.h"

#define SHIFTER_TAG "LBCS"
#define SHIFTER_WHAT "offset-shifting sequence"

lb_err lb_curve_shifter_pack(const lb_curve_shifter *s, void **buf, size_t *len)
{
  lb_packer p;
  lb_pack_begin(&p, SHIFTER_TAG);
  lb_pack_i64(&p, s->nparts);
  lb_pack_i64(&p, s->steps);
  lb_pack_i64(&p, s->have_best);
  lb_pack_i64(&p, s->settled);
  lb_pack_f64(&p, s->best_max_over_avg);
  lb_pack_i64(&p, s->best_ncells);
  lb_pack_f64(&p, s->best_total);
  return lb_pack_end(&p, buf, len);
}

lb_err lb_curve_shifter_restore(lb_curve_shifter *s, const void *buf, size_t len, const int64_t *best_counts)
{
  lb_unpacker u;
  int64_t nparts, steps, have_best, settled, best_ncells, *stored = NULL;
  double best_moa, best_total;
  size_t left;

  LB_CALL(lb_unpack_begin(&u, buf, len, SHIFTER_TAG, SHIFTER_WHAT));
  nparts = lb_unpack_i64(&u);
  steps = lb_unpack_i64(&u);
  have_best = lb_unpack_i64(&u);
  settled = lb_unpack_i64(&u);
  best_moa = lb_unpack_f64(&u);
  best_ncells = lb_unpack_i64(&u);
  best_total = lb_unpack_f64(&u);
  left = u.failed ? 0 : u.len - u.pos;
  /* a blob packed before the counts moved to the parts' own state holds
   * them after the rest: exactly nparts of them, so that a damaged nparts
   * cannot make this allocate more than the blob holds */
  if (u.failed || nparts < 1 || nparts > INT_MAX || (left && left != 8 * (size_t)nparts) || steps < 0)
    return lb_error(LB_ERR_FILE, "state: packed %s is malformed", SHIFTER_WHAT);
  if (left) {
    stored = malloc((size_t)nparts * sizeof *stored);
    if (!stored) return lb_error(LB_ERR_MEM, "state: out of memory for %lld parts", (long long)nparts);
    for (int64_t q = 0; q < nparts; q++) stored[q] = lb_unpack_i64(&u);
    best_counts = stored;
  }
  {
    lb_err err = lb_unpack_end(&u, SHIFTER_WHAT);
    if (err) {
      free(stored);
      return err;
    }
  }
  s->steps = (long)steps;
  s->have_best = s->settled = 0;
  /* without the best partition's counts the search starts again */
  if (nparts == s->nparts && (best_counts || !have_best)) {
    s->have_best = have_best != 0;
    s->settled = settled != 0;
    s->best_max_over_avg = best_moa;
    s->best_ncells = best_ncells;
    s->best_total = best_total;
    if (have_best) memcpy(s->best_counts, best_counts, (size_t)nparts * sizeof *best_counts);
  }
  free(stored);
  return LB_OK;
}
