#ifndef AMRDLB_LBCALL_H
#define AMRDLB_LBCALL_H

/* Private to the balancer library: early return on failure. */

/** Return from the calling function if the call failed. */
#define LB_CALL(call)                    \
  do {                                   \
    lb_err lb_call_err_ = (call);        \
    if (lb_call_err_) return lb_call_err_; \
  } while (0)

/** Return LB_ERR_MPI, naming the call, if an MPI call failed. */
#define LB_MPI(call)                                                                      \
  do {                                                                                    \
    if ((call) != MPI_SUCCESS) return lb_error(LB_ERR_MPI, "MPI call failed: %s", #call); \
  } while (0)

#endif
