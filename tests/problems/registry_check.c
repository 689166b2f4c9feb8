/* The problem registry open to a program (AmrProblemRegister): the 13
 * built-in problems are registered through it; a program's own problem
 * (here sine's ops under another name) is found, listed and named; a
 * taken name and a name unlike the ops' are refused with a reason. */
#include <string.h>

#include "check.h"
#include "problems/impl/problem.h"

/* The error code of a registration, its message into msg. */
static PetscErrorCode try_register(const char *name, const AmrProblemOps *ops, char *msg, size_t len)
{
  char *specific = NULL;
  PetscErrorCode ierr;

  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = AmrProblemRegister(name, ops);
  PetscCall(PetscPopErrorHandler());
  msg[0] = '\0';
  if (ierr) {
    PetscCall(PetscErrorMessage(ierr, NULL, &specific));
    PetscCall(PetscStrncpy(msg, specific ? specific : "", len));
  }
  return ierr;
}

int main(int argc, char **argv)
{
  AmrProblemOps mine;
  char names[1024], msg[256];
  int builtin = 0;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  while (AmrProblemGet(builtin)) builtin++;
  CHECK_EQ(builtin, 13);
  mine = *AmrProblemFind("sine");
  mine.name = "user-sine";
  CHECK(AmrProblemFind("user-sine") == NULL);
  CHECK_EQ(try_register("user-sine", &mine, msg, sizeof msg), 0);
  CHECK(AmrProblemFind("user-sine") == &mine);
  CHECK(AmrProblemGet(builtin) == &mine);
  CHECK(!strcmp(AmrProblemOpsName(AmrProblemGet(builtin)), "user-sine"));
  PetscCall(AmrProblemNames(",", names, sizeof names));
  CHECK_MSG(strstr(names, ",reactive-transport,user-sine") != NULL, "%s", names);

  CHECK_EQ(try_register("user-sine", &mine, msg, sizeof msg), PETSC_ERR_ARG_WRONGSTATE);
  CHECK_MSG(strstr(msg, "user-sine is registered already") != NULL, "%s", msg);
  CHECK_EQ(try_register("sine2", &mine, msg, sizeof msg), PETSC_ERR_ARG_WRONG);
  CHECK_MSG(strstr(msg, "sine2 has the name user-sine in its ops") != NULL, "%s", msg);
  CHECK(AmrProblemGet(builtin + 1) == NULL);

  printf("problem registry: %d built-in problems, %d checks failed\n", builtin, check_failures);
  PetscCall(PetscFinalize());
  return check_failures != 0;
}
