/* The method registry: the built-in methods and any a user registers, as
 * PETSc's PCRegister keeps PC types.  A built-in method is methods/NAME.c
 * defining `const lb_method lb_method_NAME`, plus X(NAME) in the list
 * below; the list is registered through lb_method_register on the first
 * use of the registry, so a user's method and a built-in one take the same
 * way in. */
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

#define LB_DECLARE(id) extern const lb_method lb_method_##id;
LB_METHOD_LIST(LB_DECLARE)
#undef LB_DECLARE

/* A fixed table, so that the pointers lb_method_find hands out stay valid
 * while methods are added; 64 is four times the built-in ones. */
#define LB_METHODS_MAX 64

static const lb_method *methods[LB_METHODS_MAX];
static int nmethods = -1; /* -1: the built-in ones not registered yet */

static lb_err register_builtins(void)
{
  lb_err err = LB_OK;

  if (nmethods >= 0) return LB_OK;
  nmethods = 0;
#define LB_REGISTER(id) \
  if (!err) err = lb_method_register(lb_method_##id.name, &lb_method_##id);
  LB_METHOD_LIST(LB_REGISTER)
#undef LB_REGISTER
  return err;
}

static const lb_method *lookup(const char *name)
{
  for (int i = 0; i < nmethods; i++)
    if (strcmp(methods[i]->name, name) == 0) return methods[i];
  return NULL;
}

lb_err lb_method_register(const char *name, const lb_method *m)
{
  lb_err err = register_builtins();

  if (err) return err;
  if (!name || !name[0]) return lb_error(LB_ERR_ARG, "lb_method_register: a method needs a name");
  if (!m || !m->step) return lb_error(LB_ERR_ARG, "lb_method_register: method '%s' has no step", name);
  /* the name is the one in reports and on the command line: one name a table */
  if (!m->name || strcmp(m->name, name))
    return lb_error(LB_ERR_ARG, "lb_method_register: method '%s' has the name '%s' in its table", name, m->name ? m->name : "(null)");
  if (lookup(name)) return lb_error(LB_ERR_ARG, "lb_method_register: a method '%s' is registered already", name);
  if (nmethods == LB_METHODS_MAX) return lb_error(LB_ERR_ARG, "lb_method_register: method '%s': %d methods registered already", name, LB_METHODS_MAX);
  methods[nmethods++] = m;
  return LB_OK;
}

int lb_method_count(void) { return register_builtins() ? 0 : nmethods; }

const lb_method *lb_method_get(int i)
{
  return i >= 0 && i < lb_method_count() ? methods[i] : NULL;
}

const lb_method *lb_method_find(const char *name)
{
  const lb_method *m;
  char names[512] = "";
  size_t len = 0;

  if (register_builtins()) return NULL;
  if (name && (m = lookup(name))) return m;
  /* why not, for the caller to print */
  for (int i = 0; i < nmethods && len < sizeof names; i++)
    len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", methods[i]->name);
  lb_error(LB_ERR_METHOD, "unknown method '%s' (choose from %s)", name ? name : "(null)", names);
  return NULL;
}
