/** \file dirs.h
 * Missing directories of an output path, created as `mkdir -p` would, so
 * that "-vtk out/run1/m" or "-report out/run1.jsonl" works on a fresh
 * checkout. */
#ifndef AMR_DIRS_H
#define AMR_DIRS_H

#include <petscsys.h>

/** Create the missing directories of path's directory part (rank 0 of
 *  comm; collective).  A failure is a collective PETSC_ERR_USER_INPUT
 *  error "option OPTION VALUE: cannot create its directory: REASON".
 *  \param[in] comm the ranks that agree on the result
 *  \param[in] option the option named in the error
 *  \param[in] value the option's value, named in the error
 *  \param[in] path the output path whose directories are made
 */
PetscErrorCode AmrMakeParentDirs(MPI_Comm comm, const char *option, const char *value, const char *path);

/** AmrMakeParentDirs, then whether path's directory takes new files, so
 *  that an output path is refused before the work whose output it is.  A
 *  failure is a collective PETSC_ERR_USER_INPUT error "option OPTION PATH:
 *  cannot write into directory 'DIR': REASON".
 *  \param[in] comm the ranks that agree on the result
 *  \param[in] option the option named in the error
 *  \param[in] path the output path
 */
PetscErrorCode AmrCheckOutputDir(MPI_Comm comm, const char *option, const char *path);

#endif
