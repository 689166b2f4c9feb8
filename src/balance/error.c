#include "lberror.h"

#include <stdarg.h>
#include <stdio.h>

/* One message is enough: a failing call returns at once and the caller
 * reports it before making another library call. */
static char lb_error_text[512];

lb_error lb_error_set(lb_error code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lb_error_text, sizeof lb_error_text, fmt, ap);
  va_end(ap);
  return code;
}

const char *lb_error_message(void) { return lb_error_text; }
