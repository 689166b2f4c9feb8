/* Error messages of the balancer library: one line per failure, kept per
 * thread so that callers can print it after the code travelled up. */
#include "balance/balance.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char lb_message[512];

const char *lb_errmsg(void) { return lb_message; }

lb_err lb_error(lb_err code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lb_message, sizeof lb_message, fmt, ap);
  va_end(ap);
  return code;
}

const char *lb_stop_name(lb_stop s)
{
  switch (s) {
  case LB_STOP_TARGET: return "target";
  case LB_STOP_MAX_ITERS: return "max_iters";
  case LB_STOP_CONVERGED: return "converged";
  case LB_STOP_NONE: break;
  }
  return "none";
}
