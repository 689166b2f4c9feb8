/** \file amr_option.h
 * Option parsing helper shared by the driver's source files. */
#ifndef AMR_OPTION_H
#define AMR_OPTION_H

#include <petscsys.h>

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
