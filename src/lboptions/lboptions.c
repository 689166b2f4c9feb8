/* The balancer's options of lboptions.h. */
#include "lboptions/lboptions.h"
#include "util/options.h"

#include <string.h>

/* The registered methods, then the program's own names. */
static PetscErrorCode method_names(const AmrLbMethodDefaults *d, const char **names, int *n)
{
  PetscFunctionBeginUser;
  *n = lb_method_count() + d->nextra;
  PetscCheck(*n <= AMR_LB_MAX_METHODS, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%d -lb_method names, at most %d", *n, AMR_LB_MAX_METHODS);
  for (int i = 0; i < lb_method_count(); i++) names[i] = lb_method_get(i)->name;
  for (int i = 0; i < d->nextra; i++) names[lb_method_count() + i] = d->extra[i].name;
  PetscFunctionReturn(0);
}

/* Under -help: every -lb_method value with its summary, and which defaults
 * are this program's. */
static PetscErrorCode print_methods(PetscOptionItems *PetscOptionsObject, const AmrLbMethodDefaults *d)
{
  MPI_Comm comm = PetscOptionsObject->comm;

  PetscFunctionBeginUser;
  if (!PetscOptionsObject->printhelp || PetscOptionsObject->count != 1) PetscFunctionReturn(0);
  PetscCall((*PetscHelpPrintf)(comm, "  Methods (-lb_method):\n"));
  for (int i = 0; i < lb_method_count(); i++) PetscCall((*PetscHelpPrintf)(comm, "    %-20s %s\n", lb_method_get(i)->name, lb_method_get(i)->summary));
  for (int i = 0; i < d->nextra; i++) PetscCall((*PetscHelpPrintf)(comm, "    %-20s %s\n", d->extra[i].name, d->extra[i].summary));
  PetscCall((*PetscHelpPrintf)(comm,
                               "  %s's defaults of the balancer options it shares with the other programs: -lb_method %s, -lb_target %g, -lb_max_iters %d\n",
                               d->program, d->method ? d->method : "(required)", d->target, d->max_iters));
  PetscFunctionReturn(0);
}

/* Whether option k of registered method i was listed already: it is one of
 * the chosen method's, or an earlier method (or option) has the same name. */
static PetscBool option_listed(const lb_method *chosen, int i, int k)
{
  const char *name = lb_method_get(i)->options[k].name;
  for (int l = 0; chosen && l < chosen->noptions; l++)
    if (!strcmp(chosen->options[l].name, name)) return PETSC_TRUE;
  for (int j = 0; j <= i; j++) {
    const lb_method *m = lb_method_get(j);
    for (int l = 0; l < (j < i ? m->noptions : k); l++)
      if (!strcmp(m->options[l].name, name)) return PETSC_TRUE;
  }
  return PETSC_FALSE;
}

/* The chosen method's own options, -lb_NAME, defaults from its table; under
 * -help every other method's too, each name once, so that -help lists (and
 * the unknown-option check knows) them all. */
static PetscErrorCode read_method_options(PetscOptionItems *PetscOptionsObject, const lb_method *m, double *opt)
{
  char name[64], text[256];

  PetscFunctionBeginUser;
  for (int k = 0; m && k < m->noptions; k++) {
    PetscReal v = m->options[k].def;
    PetscCall(PetscSNPrintf(name, sizeof name, "-lb_%s", m->options[k].name));
    AMR_OPTION(name, PetscOptionsReal(name, m->options[k].help, NULL, v, &v, NULL));
    opt[k] = v;
  }
  for (int i = 0; PetscOptionsObject->printhelp && i < lb_method_count(); i++) {
    const lb_method *other = lb_method_get(i);
    for (int k = 0; k < other->noptions; k++) {
      PetscReal v = other->options[k].def;
      if (option_listed(m, i, k)) continue;
      PetscCall(PetscSNPrintf(name, sizeof name, "-lb_%s", other->options[k].name));
      PetscCall(PetscSNPrintf(text, sizeof text, "%s: %s", other->name, other->options[k].help));
      AMR_OPTION(name, PetscOptionsReal(name, text, NULL, v, &v, NULL));
    }
  }
  PetscFunctionReturn(0);
}

/* -lb_target, -lb_max_iters, -lb_check_interval. */
static PetscErrorCode read_stop(PetscOptionItems *PetscOptionsObject, const AmrLbMethodDefaults *d, lb_params *p)
{
  MPI_Comm comm = PetscOptionsObject->comm;
  PetscReal target = d->target;
  PetscInt max_iters = d->max_iters, check_interval = LB_CHECK_INTERVAL;

  PetscFunctionBeginUser;
  AMR_OPTION("-lb_target", PetscOptionsReal("-lb_target", "Stop the method when avg/max >= target (0: off)", NULL, target, &target, NULL));
  AMR_OPTION("-lb_max_iters", PetscOptionsInt("-lb_max_iters", "Stop the method after this many iterations (0: off)", NULL, max_iters, &max_iters, NULL));
  AMR_OPTION("-lb_check_interval",
             PetscOptionsInt("-lb_check_interval",
                             "Neighbour-only methods (the diffusion family): check -lb_target every K iterations (1: every iteration; the stop can come up to K-1 iterations late)",
                             NULL, check_interval, &check_interval, NULL));
  PetscCheck(max_iters >= 0, comm, PETSC_ERR_USER_INPUT, "option -lb_max_iters %" PetscInt_FMT ": must not be negative", max_iters);
  PetscCheck(check_interval >= 1, comm, PETSC_ERR_USER_INPUT, "option -lb_check_interval %" PetscInt_FMT ": must be at least 1", check_interval);
  p->target = target;
  p->max_iters = (int)max_iters;
  p->check_interval = (int)check_interval;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrLbMethodOptionsRead(PetscOptionItems *PetscOptionsObject, const AmrLbMethodDefaults *d, AmrLbMethodChoice *c)
{
  const char *names[AMR_LB_MAX_METHODS];
  int n, index = -1;
  PetscInt def;
  PetscBool known;
  double opt[LB_MAX_OPTIONS];

  PetscFunctionBeginUser;
  PetscCall(method_names(d, names, &n));
  if (d->method) {
    PetscCall(PetscEListFind(n, names, d->method, &def, &known));
    PetscCheck(known, PETSC_COMM_SELF, PETSC_ERR_PLIB, "default method %s is not one of -lb_method's", d->method);
    index = (int)def;
  }
  PetscCall(print_methods(PetscOptionsObject, d));
  PetscCall(AmrOptionsChoice(PetscOptionsObject, "-lb_method", "Balancing method (the list above)", "method", n, names, &index, NULL));
  c->name = index >= 0 ? names[index] : NULL;
  c->method = index >= 0 && index < lb_method_count() ? lb_method_get(index) : NULL;
  c->extra = index >= lb_method_count() ? index - lb_method_count() : -1;
  /* without a method it only sets the defaults, and says so */
  PetscCheck(lb_params_init(&c->params, c->method) == LB_OK || !c->method, PETSC_COMM_SELF, PETSC_ERR_PLIB, "balancer: %s", lb_errmsg());
  PetscCall(read_stop(PetscOptionsObject, d, &c->params));
  PetscCall(read_method_options(PetscOptionsObject, c->method, opt));
  for (int k = 0; c->method && k < c->method->noptions; k++) c->params.opt[k] = opt[k];
  PetscFunctionReturn(0);
}
