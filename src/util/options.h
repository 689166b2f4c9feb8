/** \file options.h
 * Option parsing helpers shared by the driver's parts. */
#ifndef AMR_UTIL_OPTIONS_H
#define AMR_UTIL_OPTIONS_H

#include <petscsys.h>

/* The program's name in its messages: one source, two executables. */
#ifndef P4_TO_P8
#define AMR_PROGRAM "amr2d"
#else
#define AMR_PROGRAM "amr3d"
#endif

/* Turn a PETSc option-parsing error (which does not name the option) into a
 * user error that does. */
#define AMR_OPTION(name, call) \
  do { \
    PetscErrorCode ierr_ = (call); \
    if (ierr_) { \
      char *why_; \
      PetscCall(PetscErrorMessage(ierr_, NULL, &why_)); \
      SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "option %s: %s", name, why_ ? why_ : "invalid value"); \
    } \
  } while (0)

#endif
