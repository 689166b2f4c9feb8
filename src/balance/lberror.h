#ifndef AMRDLB_LBERROR_H
#define AMRDLB_LBERROR_H

/* Error codes of the balancer library, as declared in balance.h. A failing
 * function records one line naming the option, rank, step or cell, so that
 * the program prints "<program>: error: <line>" once and exits. */

/** Error codes; LB_OK is zero so "if (err)" tests for failure. */
typedef enum {
  LB_OK = 0,
  LB_ERR_ARG,  /**< invalid argument or option value */
  LB_ERR_MEM,  /**< allocation failed */
  LB_ERR_LOAD, /**< negative or non-finite load, time or weight */
  LB_ERR_MPI   /**< an MPI call failed */
} lb_err;

/** Record the message of the error being returned and return code. */
lb_err lb_error(lb_err code, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/** The message recorded by the last failing call. */
const char *lb_errmsg(void);

#endif
