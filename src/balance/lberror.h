#ifndef AMRDLB_LBERROR_H
#define AMRDLB_LBERROR_H

/* Error codes of the balancer library. A failing function records one line
 * describing the cause (naming the option, rank, step or cell), so that the
 * program can print "<program>: error: <line>" once and exit. */

/** Error codes; LB_OK is zero so "if (err)" tests for failure. */
typedef enum {
  LB_OK = 0,
  LB_ERR_ARG,   /**< invalid argument or option value */
  LB_ERR_DATA,  /**< invalid data: NaN, infinite or negative times or weights */
  LB_ERR_MEM,   /**< allocation failed */
  LB_ERR_MPI,   /**< an MPI call failed */
  LB_ERR_LAPACK /**< a LAPACK routine failed */
} lb_error;

/** Record the message of the error being returned and return code. */
lb_error lb_error_set(lb_error code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** The message recorded by the last failing call. */
const char *lb_error_message(void);

/** Return from the calling function if the call failed. */
#define LB_CALL(call)                 \
  do {                                \
    lb_error lb_call_err_ = (call);   \
    if (lb_call_err_) return lb_call_err_; \
  } while (0)

/** Return LB_ERR_MPI, with the call named, if an MPI call failed. */
#define LB_MPI(call)                                                     \
  do {                                                                   \
    if ((call) != MPI_SUCCESS) return lb_error_set(LB_ERR_MPI, "MPI call failed: %s", #call); \
  } while (0)

#endif
