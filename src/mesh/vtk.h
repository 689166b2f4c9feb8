/** \file vtk.h
 * ParaView output of the forest: one .pvtu plus one .vtu per rank. */
#ifndef AMR_VTK_H
#define AMR_VTK_H

#include <petscsys.h>
#ifndef P4_TO_P8
#include <p4est.h>
#include <p4est_geometry.h>
#else
#include <p4est_to_p8est.h>
#include <p8est.h>
#include <p8est_geometry.h>
#endif

/** Largest number of extra cell fields amr_vtk_write() takes. */
#define AMR_VTK_MAX_FIELDS 8

/** Write \a prefix.pvtu and \a prefix_RANK.vtu with the tree, level and MPI
 * rank of every cell plus \a nfields cell scalars (\a values[i] holds one
 * double per local cell).  Creates the directory of \a prefix when missing.
 * \a geom may be NULL (vertex map).  Collective. */
PetscErrorCode amr_vtk_write(p4est_t *p4est, p4est_geometry_t *geom, const char *prefix, int nfields, const char *const names[], sc_array_t *const values[]);

#endif
