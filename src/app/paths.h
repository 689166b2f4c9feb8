/** \file paths.h
 * Paths in an options file are relative to that file, so that
 * "-options_file /anywhere/config/lshape.opts" runs from any folder. */
#ifndef AMR_APP_PATHS_H
#define AMR_APP_PATHS_H

#include <petscsys.h>

/** Before any option is read: every path option (-mesh, -report, -vtk,
 *  -checkpoint, -restart) whose value in force comes from an
 *  -options_file on the command line and is relative gets that file's
 *  folder prepended in the options database.  A value given on the command
 *  line (after the file) stays relative to the current folder; so do
 *  absolute paths and builtin meshes.  Collective. */
PetscErrorCode AmrOptionsResolvePaths(MPI_Comm comm);

#endif
