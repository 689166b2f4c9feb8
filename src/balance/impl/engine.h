/* Private to the engine and its two backends: the state of one run. */
#ifndef AMRDLB_ENGINE_H
#define AMRDLB_ENGINE_H

#include "balance/balance.h"

#define LB_MAX_REDUCTIONS 8

typedef struct {
  lb_op op;
  int ngroups;
  double *acc[2];  /* contributions of supersteps of each parity */
  int touched;     /* some local rank contributed this superstep */
  double *res;     /* result of the previous superstep */
  double *mpi_res; /* MPI backend: buffer res points to */
} lb_reduction;

typedef struct lb_backend_ops lb_backend_ops;

struct lb_run {
  const lb_graph *g;
  const lb_method *m;
  const lb_params *p;
  const lb_backend_ops *be;
  double spectrum[2];      /* lb_run_set_spectrum, copied to the result */
  int spectrum_exact;
  int lo, hi;              /* local ranks */
  int step, iterations, last_moved;
  double *load, *flow, *inj;
  double *transit;         /* per directed edge: load posted on it this superstep (lb_run_transit) */
  int transit_dirty;       /* some local entry of transit is non-zero */
  double *transit_in;      /* per directed edge: load in transit towards its owner (from edge_swap) */
  double *held;            /* per rank: load plus load in transit to it */
  int msg_cap, pub_len;
  double *msg[2];          /* msg_cap doubles per directed edge, by superstep parity */
  int *mlen[2], *mstamp[2];
  double *pub[2];
  int nred;
  lb_reduction red[LB_MAX_REDUCTIONS];
  long long messages, bytes, collectives;
  double *xfer;            /* direct transfers recorded here: from, to, amount */
  int nxfer, xcap;
  int iter_ended, moved;
  lb_stop stop;
  /* The stop check's inputs of every iteration since the last check: this
   * process's largest (capacity-scaled) load, reduced at the next check in
   * its one collective (or in the result's, after the last iteration), so
   * that the first iteration at which the target held is exact at any
   * check interval. */
  double *pend;
  int npend, pend_cap;
  double *pend_total;      /* the total load at each of those iterations */
  int target_iteration;    /* first iteration found at the target, -1: none yet */
  /* An LB_ACCOUNTED method's bytes (lb_run_account): the process's, and
   * per rank (n entries, from the first superstep on) */
  long long mem_proc, mem_proc_peak;
  long long *mem, *mem_peak;
  /* lb_run_scan_loads, hi - lo + 1 values each, from its first call: the
   * local ranks' quanta, then their prefix sums; those sums as loads */
  int64_t *scan_q;
  double *scan_x;
  /* MPI backend */
  MPI_Comm gcomm;
  double *sbuf, *rbuf;
  int slot_w, nreq;        /* doubles per neighbour message; persistent requests (receives, then sends) */
  MPI_Request *req;
};

/* What a backend provides; the engine does everything else. */
struct lb_backend_ops {
  lb_err (*setup)(lb_run *run);
  /* End of a superstep: deliver the messages and publications of every
   * local rank to its neighbours (neighbour-only, no collective). */
  lb_err (*exchange)(lb_run *run);
  /* Reduce the contributions of this superstep to reduction `slot` over all
   * processes into its result (collective). */
  lb_err (*reduce)(lb_run *run, int slot);
  /* Reduce nv doubles in place over all processes (collective). */
  lb_err (*allreduce)(lb_run *run, double *v, int nv, lb_op op);
  /* For every directed edge e of a local rank: in[e] = out[rev[e]], the
   * value the neighbour wrote for the opposite direction (collective). */
  lb_err (*edge_swap)(lb_run *run, const double *out, double *in);
  /* Exact prefix sums of integers (collective): on entry v[1 + i] is local
   * rank lo + i's value, on return v[i] is the sum over the ranks before
   * lo + i (i = 0..hi - lo) and *total the sum over all ranks.  Integer
   * sums do not depend on their order, so both backends agree bit for bit. */
  lb_err (*scan)(lb_run *run, int64_t *v, int64_t *total);
  /* all[0..n) = local[r] of every rank r (collective). */
  lb_err (*gather)(lb_run *run, const double *local, double *all);
  void (*teardown)(lb_run *run);
};

extern const lb_backend_ops lb_backend_virtual;
extern const lb_backend_ops lb_backend_mpi;

#endif
