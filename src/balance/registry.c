/* The method registry.  Adding a method: write methods/NAME.c defining
 * `const lb_method lb_method_NAME`, then add X(NAME) to this list. */
#include "balance/balance.h"

#include <stdio.h>
#include <string.h>

#define LB_METHOD_LIST(X) \
  X(diffusion)            \
  X(diffusion_discrete)   \
  X(second_order)         \
  X(chebyshev)            \
  X(chemotaxis)           \
  X(dimension_exchange)   \
  X(multilevel)           \
  X(tree)                 \
  X(ripple_tortoise)      \
  X(ripple_hare)          \
  X(sfc)                  \
  X(sfc_shift)            \
  X(sfc_exact)            \
  X(hiersfc)

#define LB_DECLARE(name) extern const lb_method lb_method_##name;
LB_METHOD_LIST(LB_DECLARE)
#undef LB_DECLARE

#define LB_ENTRY(name) &lb_method_##name,
static const lb_method *const lb_methods[] = {LB_METHOD_LIST(LB_ENTRY)};
#undef LB_ENTRY

int lb_method_count(void) { return (int)(sizeof lb_methods / sizeof lb_methods[0]); }

const lb_method *lb_method_get(int i)
{
  return i >= 0 && i < lb_method_count() ? lb_methods[i] : NULL;
}

const lb_method *lb_method_find(const char *name)
{
  char names[512] = "";
  size_t len = 0;

  for (int i = 0; name && i < lb_method_count(); i++)
    if (strcmp(lb_methods[i]->name, name) == 0) return lb_methods[i];
  /* why not, for the caller to print */
  for (int i = 0; i < lb_method_count() && len < sizeof names; i++)
    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", lb_methods[i]->name);
  lb_error(LB_ERR_METHOD, "unknown method '%s' (choose from %s)", name ? name : "(null)", names);
  return NULL;
}
