/** \file vtk.h
 * ParaView output of the forest: VTK XML unstructured grids, one .vtu piece
 * per rank in a folder of the output's own and a .pvtu naming them, with cell data and point data, in raw
 * appended binary or ASCII; and a .pvd collection of the outputs of a run
 * with their times. */
#ifndef AMR_VTK_H
#define AMR_VTK_H

#include <petscsys.h>
#include "mesh/p4est_dim.h"

/** Largest number of cell fields, and of point fields, in one output. */
#define AMR_VTK_MAX_FIELDS 8

/** A named scalar field of the local cells. */
typedef struct {
  const char *name;
  const double *values; /**< cell field: one per local cell; point field: (degree+1)^dim per local cell */
} AmrVtkField;

/** What one output holds besides the tree, level and MPI rank of every
 *  cell (cell fields treeid, level, mpirank, always written).
 *
 *  Every cell has its own points (none shared with its neighbours, so a
 *  field may jump between cells, as a DG solution does): the
 *  (degree+1)^dim equispaced nodes of the cell, numbered lexicographically
 *  with x fastest, as fem/qelem.h and p4est_lnodes number them.  A point
 *  field gives one value per such node, cell after cell.  Degree 1 writes
 *  linear quadrilaterals/hexahedra, degree 2 VTK's quadratic Lagrange
 *  cells (VTK_LAGRANGE_QUADRILATERAL, VTK_LAGRANGE_HEXAHEDRON), which
 *  ParaView interpolates quadratically. */
typedef struct {
  p4est_geometry_t *geom; /**< NULL: the multilinear tree maps of the coarse mesh */
  int degree;             /**< 1 or 2 */
  int ncell, npoint;      /**< fields in use */
  AmrVtkField cell[AMR_VTK_MAX_FIELDS], point[AMR_VTK_MAX_FIELDS];
} AmrVtkData;

/** An empty output of the given point degree (1 or 2).
 *  \param[out] d the empty output
 *  \param[in] geom the curved map, or NULL
 *  \param[in] degree 1 or 2
 */
void AmrVtkDataInit(AmrVtkData *d, p4est_geometry_t *geom, int degree);

/** Add a cell field (one value per local cell).  The values must live
 *  until the output is written.
 *  \param[in,out] d the output
 *  \param[in] name the field's name
 *  \param[in] values one per local cell
 */
PetscErrorCode AmrVtkAddCellField(AmrVtkData *d, const char *name, const double *values);

/** Add a point field ((degree+1)^dim values per local cell, in the node
 *  order of AmrVtkData).  The values must live until the output is
 *  written.
 *  \param[in,out] d the output
 *  \param[in] name the field's name
 *  \param[in] values (degree+1)^dim per local cell
 */
PetscErrorCode AmrVtkAddPointField(AmrVtkData *d, const char *name, const double *values);

/** Write \a prefix.pvtu and the pieces \a prefix/NAME_RANK.vtu (NAME the
 *  last part of \a prefix, RANK with 4 digits), the
 *  data arrays as raw appended binary (\a binary) or as ASCII.  Creates the directory of \a prefix and the pieces' folder when missing.  A file that cannot
 *  be written is a collective PETSC_ERR_USER_INPUT error naming it.
 *  Collective.
 *  \param[in] p4est the forest
 *  \param[in] prefix the files' path prefix
 *  \param[in] binary raw appended binary, else ASCII
 *  \param[in] d the fields
 */
PetscErrorCode AmrVtkWrite(p4est_t *p4est, const char *prefix, PetscBool binary, const AmrVtkData *d);

/** The outputs of one run, listed with their times in a .pvd file. */
typedef struct _p_AmrVtkSeries AmrVtkSeries;

/** A series writing \a prefix_CYCLE.pvtu (CYCLE with 4 digits), binary or
 *  ASCII as AmrVtkWrite(), and the collection \a prefix.pvd.
 *  \param[in] comm the ranks that write
 *  \param[in] prefix the outputs' path prefix
 *  \param[in] binary raw appended binary, else ASCII
 *  \param[out] s the series
 */
PetscErrorCode AmrVtkSeriesCreate(MPI_Comm comm, const char *prefix, PetscBool binary, AmrVtkSeries **s);

/** Write the output of \a cycle at simulation time \a time (the cycle
 *  number for a run without time; \a cycle < 0: the initial state,
 *  \a prefix_init.pvtu), then rewrite \a prefix.pvd with every
 *  output so far (written beside it and renamed, so a run killed at any
 *  moment leaves a valid collection).  Times must increase.  Collective.
 *  \param[in,out] s the series
 *  \param[in] p4est the forest
 *  \param[in] cycle the cycle, < 0 for the initial state
 *  \param[in] time the output's time
 *  \param[in] d the fields
 */
PetscErrorCode AmrVtkSeriesWrite(AmrVtkSeries *s, p4est_t *p4est, int cycle, double time, const AmrVtkData *d);

/** The outputs listed so far, for a checkpoint to keep: the series'
 *  prefix, *n outputs with their cycles and times (valid until the next
 *  write).
 *  \param[in] s the series
 *  \param[out] prefix its path prefix
 *  \param[out] n outputs listed
 *  \param[out] cycles their cycles
 *  \param[out] times their times
 */
void AmrVtkSeriesEntries(const AmrVtkSeries *s, const char **prefix, int *n, const int **cycles, const double **times);

/** Replace the listed outputs by the \a n outputs (\a cycles, \a times)
 *  a checkpoint kept and rewrite \a prefix.pvd with them, so that after a
 *  restart the collection holds the run's outputs up to the checkpoint
 *  (not those a killed run wrote after it, which the restart writes
 *  again) and then the new ones.  Times must increase (else a collective
 *  user error).  Collective.
 *  \param[in,out] s the series
 *  \param[in] n outputs kept
 *  \param[in] cycles their cycles
 *  \param[in] times their times
 */
PetscErrorCode AmrVtkSeriesRestore(AmrVtkSeries *s, int n, const int *cycles, const double *times);

/** Free the series (its files stay).
 *  \param[in,out] s the series; NULL after
 */
PetscErrorCode AmrVtkSeriesDestroy(AmrVtkSeries **s);

#endif
