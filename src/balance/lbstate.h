#ifndef AMRDLB_LBSTATE_H
#define AMRDLB_LBSTATE_H

/* The balancer's state that lives from one balancing step to the next, as
 * byte blobs a checkpoint can store and a restarted run restore.  Only two
 * library objects carry such state: the timing fit's stacked windows
 * (lb_weights_history) and Niemoeller et al. 2020's offset-shifting sequence
 * (lb_curve_shifter).  No method keeps state between lb_balance calls
 * (second-order diffusion's previous flow, for one, lives and dies inside
 * one call), so methods have nothing to save.
 *
 * A blob is little-endian and self-describing: a 4-byte tag, a format
 * version, then the object's fields; restoring checks all of it and returns
 * LB_ERR_FILE for a blob that is not what it claims. */

#include <stddef.h>

#include "balance/lbcurve.h"
#include "balance/lbweights.h"

/** Version of the blobs written by this library. */
#define LB_STATE_VERSION 2

/** Pack a history (its load types, the number of ranks of its fits and
 *  every held window's rows held here, oldest first) into a malloc'd blob
 *  *buf of *len bytes (free()): a history of lb_weights_fit holds the
 *  rank's own rows, one per window, so each rank packs its own part and
 *  nothing is gathered; one of lb_weights_fit_table holds every rank's. */
lb_err lb_weights_history_pack(const lb_weights_history *h, void **buf, size_t *len);

/**
 * Restore the windows of a packed history into h, a history created for
 * the restarted run (its length and forgetting factor come from that run's
 * options): the newest min(length, stored) windows are kept.  Windows
 * measured on another number of ranks than nranks are dropped, since
 * their rows cannot be stacked with this run's.  The blob's rows are
 * those h holds per window: a rank's own blob for the history of its
 * lb_weights_fit, every rank's for lb_weights_fit_table.  *kept receives
 * the number of windows restored.  A blob of other load types is
 * LB_ERR_ARG.
 */
lb_err lb_weights_history_restore(lb_weights_history *h, const void *buf, size_t len, int nranks, int *kept);

/**
 * Pack a sequence into a malloc'd blob: every field of lb_curve_shifter
 * but the best partition's counts, which are one per part (part q's is
 * best_counts[q]): each part saves its own beside its other state, so
 * that no process writes P of them.
 */
lb_err lb_curve_shifter_pack(const lb_curve_shifter *s, void **buf, size_t *len);

/**
 * Restore a packed sequence into s, initialised by lb_curve_shifter_init
 * for the restarted run (its parts and penalty factor stay): the steps
 * taken, and the best partition and whether shifting settled when the blob
 * has as many parts as s and best_counts gives the best partition's
 * counts (nparts values, gathered from the parts' own saves; NULL where
 * they were not kept; a blob of an earlier version holds them itself and
 * they are taken from it); otherwise the search starts again from the
 * current partition.
 */
lb_err lb_curve_shifter_restore(lb_curve_shifter *s, const void *buf, size_t len, const int64_t *best_counts);

#endif
