/** \file lboptions.h
 * The balancer's options, read the same way by amr2d/amr3d and lbbench:
 * -lb_method (a registered method, or a name the program adds), -lb_target,
 * -lb_max_iters, -lb_check_interval and the chosen method's own options
 * -lb_NAME.  The programs differ only in their defaults. */
#ifndef AMR_LBOPTIONS_LBOPTIONS_H
#define AMR_LBOPTIONS_LBOPTIONS_H

#include <petscsys.h>
#include "balance/balance.h"

/** A -lb_method value a program adds to the registered methods. */
typedef struct {
  const char *name, *summary;
} AmrLbExtraMethod;

/** Names -lb_method may take: the registry's and a program's own. */
#define AMR_LB_MAX_METHODS 32

/** What a program reading the balancer's options sets: its defaults. */
typedef struct {
  const char *program;              /**< named in -help's line on the defaults */
  const char *method;               /**< default -lb_method; NULL: the program requires one */
  double target;                    /**< default -lb_target */
  int max_iters;                    /**< default -lb_max_iters */
  int nextra;                       /**< -lb_method names beyond the registry */
  const AmrLbExtraMethod *extra;
} AmrLbMethodDefaults;

/** What was read. */
typedef struct {
  const char *name;      /**< -lb_method; NULL: not given and no default */
  const lb_method *method; /**< the registered method of that name; NULL: a program's own name, or none */
  int extra;             /**< index of the program's own name, -1: none */
  lb_params params;      /**< target, max_iters, check_interval and the method's options; the rest as lb_params_init leaves it */
} AmrLbMethodChoice;

/** Read the balancer's options inside the caller's PetscOptionsBegin()
 *  block.  Under -help also lists every method with its summary, every
 *  other method's options (once each) and a line saying which defaults are
 *  the program's.  Bad values are PETSC_ERR_USER_INPUT errors naming the
 *  option and the value. */
PetscErrorCode AmrLbMethodOptionsRead(PetscOptionItems *PetscOptionsObject, const AmrLbMethodDefaults *d, AmrLbMethodChoice *c);

#endif
