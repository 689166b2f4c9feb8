#include "lberror.h"

#include <stdarg.h>
#include <stdio.h>

static char lb_message[512];

const char *lb_errmsg(void) { return lb_message; }

lb_err lb_error(lb_err code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lb_message, sizeof lb_message, fmt, ap);
  va_end(ap);
  return code;
}
