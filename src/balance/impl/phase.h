#ifndef AMRDLB_IMPL_PHASE_H
#define AMRDLB_IMPL_PHASE_H

/* Private to the phase model (phase.c, phase_split.c). */

/** A candidate's modelled time (or sum of caps) must fall below the best's
 *  by more than this fraction to replace it: round-off in the sums is some
 *  1e-16 of the time, so ties keep the earlier, simpler candidate (the
 *  plain sum of the weights first). */
#define LB_PHASE_BETTER 1e-12

#endif
