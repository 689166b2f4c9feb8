/** \file unknown_options.h
 * No option is silently ignored: after all options were read, an option of
 * the database that nothing queried is a user error naming it and the
 * nearest known option.  Used by amr2d/amr3d and lbbench. */
#ifndef AMR_UTIL_UNKNOWN_OPTIONS_H
#define AMR_UTIL_UNKNOWN_OPTIONS_H

#include <petscsys.h>

/** Reads every option of the program again (with -help on, so that the
 *  queries list the known names); must not fail on the values. */
typedef PetscErrorCode (*AmrOptionsReader)(void *ctx);

/** Fills hint (len bytes) with where an option this run does not read
 *  belongs (" (an option of ...)"), or leaves it empty; called like the
 *  reader, with -help on and the output silenced. */
typedef PetscErrorCode (*AmrOptionsOwner)(void *ctx, const char *name, char *hint, size_t len);

/** Check that every option in the database was queried, or is one of
 *  PETSc's own (-log_view, -options_left, ...) or an option a solver in use
 *  reads only when it solves (-PREFIXksp_view, -PREFIXksp_converged_reason,
 *  ...), PREFIX one of the nsolvers prefixes in solvers ("" for none).  Otherwise a collective
 *  PETSC_ERR_USER_INPUT error "unknown option -NAME (did you mean -KNOWN?)"
 *  for the first such option; the nearest known name comes from running
 *  reread(ctx) with its -help lines captured, and owner(ctx, ...)
 *  (NULL: none) replaces that hint with the part of the program the
 *  option belongs to.  -h is answered with -help. */
PetscErrorCode AmrOptionsCheckUnused(MPI_Comm comm, int nsolvers, const char *const solvers[], AmrOptionsReader reread, AmrOptionsOwner owner, void *ctx);

#endif
