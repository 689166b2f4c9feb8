/* The option helpers of util/options.h. */
#include "util/options.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int AmrParseReal(const char *s, double *v)
{
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return errno == 0 && end != s && *end == 0 && isfinite(*v);
}

int AmrParseInt(const char *s, long *v)
{
  char *end;
  errno = 0;
  *v = strtol(s, &end, 10);
  return errno == 0 && end != s && *end == 0;
}

/* "A, B, C" of the n names, cut to len bytes. */
static PetscErrorCode join(int n, const char *const *list, char *s, size_t len)
{
  PetscFunctionBeginUser;
  s[0] = 0;
  for (int i = 0; i < n; i++) {
    if (i) PetscCall(PetscStrlcat(s, ", ", len));
    PetscCall(PetscStrlcat(s, list[i], len));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsChoice(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, const char *what, int n,
                                const char *const *list, int *index, PetscBool *set)
{
  char value[256], names[1024];
  PetscInt found = *index;
  PetscBool given, known;

  PetscFunctionBeginUser;
  /* checked before PetscOptionsEList so that the message is ours: PETSc's
   * own names neither the program nor what the value should be */
  PetscCall(PetscOptionsGetString(PetscOptionsObject->options, PetscOptionsObject->prefix, name, value, sizeof value, &given));
  if (given) {
    PetscCall(PetscEListFind(n, list, value, &found, &known));
    PetscCall(join(n, list, names, sizeof names));
    PetscCheck(known, PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "option %s %s: unknown %s (choose from %s)", name, value, what, names);
  }
  PetscCall(PetscOptionsEList(name, help, NULL, list, n, *index >= 0 ? list[*index] : "", &found, NULL));
  *index = (int)found;
  if (set) *set = given;
  PetscFunctionReturn(0);
}

/* Read option name as text (the default printed into it) and take the
 * whole text as a number, an integer when integer is set, in [lo, hi]. */
static PetscErrorCode read_number(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, int integer, double lo, double hi, int open,
                                  const char *what, double *value, PetscBool *set)
{
  char text[64];
  double v = 0;
  long iv = 0;
  int ok;
  PetscBool given;

  PetscFunctionBeginUser;
  snprintf(text, sizeof text, integer ? "%.0f" : "%g", *value);
  PetscCall(PetscOptionsString(name, help, NULL, text, text, sizeof text, &given));
  if (set) *set = given;
  if (!given) PetscFunctionReturn(0);
  ok = integer ? AmrParseInt(text, &iv) : AmrParseReal(text, &v);
  if (integer) v = (double)iv;
  PetscCheck(ok && ((open & AMR_OPEN_LO) ? v > lo : v >= lo) && ((open & AMR_OPEN_HI) ? v < hi : v <= hi), PetscOptionsObject->comm, PETSC_ERR_USER_INPUT,
             "option %s: '%s' is not %s", name, text, what);
  *value = v;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsRealIn(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, double lo, double hi, int open,
                                const char *what, double *value)
{
  PetscFunctionBeginUser;
  PetscCall(read_number(PetscOptionsObject, name, help, 0, lo, hi, open, what, value, NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsIntIn(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, long lo, long hi, const char *what,
                               int *value, PetscBool *set)
{
  double v = *value;

  PetscFunctionBeginUser;
  PetscCall(read_number(PetscOptionsObject, name, help, 1, (double)lo, (double)hi, 0, what, &v, set));
  *value = (int)v;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsSwitch(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, PetscBool *value)
{
  static const char *const spelling[] = {"0", "false", "no", "1", "true", "yes"};
  char text[64];
  PetscInt i;
  PetscBool set, known;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(text, *value ? "true" : "false", sizeof text));
  PetscCall(PetscOptionsString(name, help, NULL, text, text, sizeof text, &set));
  if (!set) PetscFunctionReturn(0);
  if (!text[0]) {
    *value = PETSC_TRUE; /* a bare -NAME */
    PetscFunctionReturn(0);
  }
  PetscCall(PetscEListFind(6, spelling, text, &i, &known));
  PetscCheck(known, PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "option %s: '%s' is not true or false", name, text);
  *value = i >= 3 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsQuietly(MPI_Comm comm, PetscErrorCode (*read)(MPI_Comm comm, void *ctx), void *ctx, char *msg, size_t len)
{
  PetscErrorCode ierr;
  char *why = NULL;

  msg[0] = 0;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = read(comm, ctx);
  PetscCall(PetscPopErrorHandler());
  if (!ierr) return 0;
  PetscCall(PetscErrorMessage(ierr, NULL, &why));
  snprintf(msg, len, "%s", why && why[0] ? why : "invalid option");
  return ierr;
}
