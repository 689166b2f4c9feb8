/* VTK XML output: unstructured-grid pieces (.vtu), their parallel header
 * (.pvtu) and the run's collection (.pvd), as VTK's "VTK File Formats"
 * describes them.  The files say version 2.2: VTK 9.2 and later read a
 * Lagrange hexahedron of an older file with the previous edge order (the
 * k-axis edges 10 and 11 swapped), so the version must match the order
 * vtk_position() writes. */
#define _POSIX_C_SOURCE 200809L /* fdopen */
#include "mesh/vtk.h"
#include "mesh/dirs.h"
#include "mesh/geom.h"
#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* VTK cell types */
enum { VTK_QUAD_ = 9, VTK_HEX_ = 12, VTK_LAGRANGE_QUAD_ = 70, VTK_LAGRANGE_HEX_ = 72 };

typedef enum { T_F64, T_I64, T_I32, T_U8 } vtype_t;
static const char *const type_name[] = {"Float64", "Int64", "Int32", "UInt8"};
static const size_t type_size[] = {8, 8, 4, 1};

/* The sections of a piece, in the order they are written. */
enum { S_POINTDATA, S_CELLDATA, S_POINTS, S_CELLS, NSECTIONS };
static const char *const section_name[NSECTIONS] = {"PointData", "CellData", "Points", "Cells"};

typedef struct {
  int section;
  const char *name;
  vtype_t type;
  int ncomp;
  size_t n; /* values, all components counted */
  const void *data;
} varray_t;

#define MAX_ARRAYS (2 * AMR_VTK_MAX_FIELDS + 7)

void AmrVtkDataInit(AmrVtkData *d, p4est_geometry_t *geom, int degree)
{
  memset(d, 0, sizeof *d);
  d->geom = geom;
  d->degree = degree;
}

PetscErrorCode AmrVtkAddCellField(AmrVtkData *d, const char *name, const double *values)
{
  PetscFunctionBeginUser;
  PetscCheck(d->ncell < AMR_VTK_MAX_FIELDS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "VTK output: more than %d cell fields", AMR_VTK_MAX_FIELDS);
  d->cell[d->ncell].name = name;
  d->cell[d->ncell++].values = values;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrVtkAddPointField(AmrVtkData *d, const char *name, const double *values)
{
  PetscFunctionBeginUser;
  PetscCheck(d->npoint < AMR_VTK_MAX_FIELDS, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "VTK output: more than %d point fields", AMR_VTK_MAX_FIELDS);
  d->point[d->npoint].name = name;
  d->point[d->npoint++].values = values;
  PetscFunctionReturn(0);
}

static const char *byte_order(void)
{
  const uint16_t one = 1;
  return *(const uint8_t *)&one ? "LittleEndian" : "BigEndian";
}

static const char *file_part(const char *path)
{
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* Position in VTK's point order of the node with lattice coordinates
 * (i, j, k), each 0..p, of a cell of degree p: corners in VTK's
 * quadrilateral/hexahedron order, then edge, face and interior nodes as
 * VTK's Lagrange cells number them (edges like the linear hexahedron's:
 * bottom, top, then the k-axis edges from corners 0, 1, 2, 3; faces by
 * normal direction, low side first).  For p = 1 only the corner rule
 * applies: the linear cells' order. */
static int vtk_position(int i, int j, int k, int p)
{
  const int m = p - 1; /* inner nodes per edge */
  const int ib = i == 0 || i == p, jb = j == 0 || j == p;
#if P4EST_DIM == 2
  (void)k;
  if (ib && jb) return i ? (j ? 2 : 1) : (j ? 3 : 0);
  if (!ib && jb) return 4 + (i - 1) + (j ? 2 * m : 0);
  if (ib && !jb) return 4 + (j - 1) + (i ? m : 3 * m);
  return 4 + 4 * m + (i - 1) + m * (j - 1);
#else
  const int kb = k == 0 || k == p;
  const int nb = ib + jb + kb;
  int off = 8;
  if (nb == 3) return (i ? (j ? 2 : 1) : (j ? 3 : 0)) + (k ? 4 : 0);
  if (nb == 2) {
    if (!ib) return off + (i - 1) + (j ? 2 * m : 0) + (k ? 4 * m : 0);
    if (!jb) return off + (j - 1) + (i ? m : 3 * m) + (k ? 4 * m : 0);
    return off + 8 * m + (k - 1) + m * (i ? (j ? 2 : 1) : (j ? 3 : 0));
  }
  off += 12 * m;
  if (nb == 1) {
    if (ib) return off + (j - 1) + m * (k - 1) + (i ? m * m : 0);
    off += 2 * m * m;
    if (jb) return off + (i - 1) + m * (k - 1) + (j ? m * m : 0);
    off += 2 * m * m;
    return off + (i - 1) + m * (j - 1) + (k ? m * m : 0);
  }
  off += 6 * m * m;
  return off + (i - 1) + m * ((j - 1) + m * (k - 1));
#endif
}

/* The geometry of the local cells: points (3 coordinates each, every cell
 * its own nodes in lexicographic order), connectivity in VTK order,
 * offsets, types and the tree, level and rank of every cell. */
typedef struct {
  size_t ncells, npoints;
  double *xyz;
  int64_t *conn, *offsets;
  uint8_t *types;
  int32_t *tree, *level, *rank;
} vgrid_t;

static PetscErrorCode grid_build(p4est_t *p4est, const AmrVtkData *d, vgrid_t *g)
{
  const int p = d->degree, n1 = p + 1;
  const int npc = P4EST_DIM == 2 ? n1 * n1 : n1 * n1 * n1;
  int perm[27]; /* perm[VTK position] = lexicographic node */
  size_t c = 0;

  PetscFunctionBeginUser;
  for (int n = 0; n < npc; n++) perm[vtk_position(n % n1, (n / n1) % n1, n / (n1 * n1), p)] = n;
  g->ncells = (size_t)p4est->local_num_quadrants;
  g->npoints = g->ncells * (size_t)npc;
  PetscCall(PetscMalloc4(3 * g->npoints + 1, &g->xyz, g->npoints + 1, &g->conn, g->ncells + 1, &g->offsets, g->ncells + 1, &g->types));
  PetscCall(PetscMalloc3(g->ncells + 1, &g->tree, g->ncells + 1, &g->level, g->ncells + 1, &g->rank));
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    const p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    for (size_t q = 0; q < tr->quadrants.elem_count; q++, c++) {
      const p4est_quadrant_t *quad = p4est_quadrant_array_index((sc_array_t *)&tr->quadrants, q);
      double h, x0[3];
      AmrGeomQuadBox(quad, x0, &h);
      for (int n = 0; n < npc; n++) {
        const int idx[3] = {n % n1, (n / n1) % n1, n / (n1 * n1)};
        double eta[3] = {0, 0, 0}, *x = g->xyz + 3 * (c * npc + n);
        for (int a = 0; a < P4EST_DIM; a++) eta[a] = (double)idx[a] / p;
        if (d->geom) {
          double abc[3] = {0, 0, 0};
          for (int a = 0; a < P4EST_DIM; a++) abc[a] = x0[a] + h * eta[a];
          d->geom->X(d->geom, t, abc, x);
        } else AmrGeomQuadMap(p4est->connectivity, t, quad, eta, x, NULL);
        g->conn[c * npc + n] = (int64_t)(c * npc + perm[n]);
      }
      g->offsets[c] = (int64_t)((c + 1) * npc);
      g->types[c] = (uint8_t)(P4EST_DIM == 2 ? (p == 1 ? VTK_QUAD_ : VTK_LAGRANGE_QUAD_) : (p == 1 ? VTK_HEX_ : VTK_LAGRANGE_HEX_));
      g->tree[c] = (int32_t)t;
      g->level[c] = quad->level;
      g->rank[c] = (int32_t)p4est->mpirank;
    }
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode grid_free(vgrid_t *g)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree4(g->xyz, g->conn, g->offsets, g->types));
  PetscCall(PetscFree3(g->tree, g->level, g->rank));
  PetscFunctionReturn(0);
}

/* The arrays of a piece, section by section (g may hold no cells, as on
 * a rank without any: the list of names and types is the same). */
static int arrays_list(const AmrVtkData *d, const vgrid_t *g, varray_t *a)
{
  int n = 0;
  for (int f = 0; f < d->npoint; f++) a[n++] = (varray_t){S_POINTDATA, d->point[f].name, T_F64, 1, g->npoints, d->point[f].values};
  a[n++] = (varray_t){S_CELLDATA, "treeid", T_I32, 1, g->ncells, g->tree};
  a[n++] = (varray_t){S_CELLDATA, "level", T_I32, 1, g->ncells, g->level};
  a[n++] = (varray_t){S_CELLDATA, "mpirank", T_I32, 1, g->ncells, g->rank};
  for (int f = 0; f < d->ncell; f++) a[n++] = (varray_t){S_CELLDATA, d->cell[f].name, T_F64, 1, g->ncells, d->cell[f].values};
  a[n++] = (varray_t){S_POINTS, "Points", T_F64, 3, 3 * g->npoints, g->xyz};
  a[n++] = (varray_t){S_CELLS, "connectivity", T_I64, 1, g->npoints, g->conn};
  a[n++] = (varray_t){S_CELLS, "offsets", T_I64, 1, g->ncells, g->offsets};
  a[n++] = (varray_t){S_CELLS, "types", T_U8, 1, g->ncells, g->types};
  return n;
}

static void write_ascii(FILE *f, const varray_t *a)
{
  for (size_t i = 0; i < a->n; i++) {
    switch (a->type) {
    case T_F64: fprintf(f, "%.17g", ((const double *)a->data)[i]); break;
    case T_I64: fprintf(f, "%lld", (long long)((const int64_t *)a->data)[i]); break;
    case T_I32: fprintf(f, "%ld", (long)((const int32_t *)a->data)[i]); break;
    case T_U8: fprintf(f, "%u", (unsigned)((const uint8_t *)a->data)[i]); break;
    }
    fputc(i % 6 == 5 || i + 1 == a->n ? '\n' : ' ', f);
  }
}

/* A new output file at path for stdio, NULL with *err set: a FIFO or a
 * folder in its place is refused rather than waited on (AmrFileOpen). */
static FILE *open_output(const char *path, int *err)
{
  FILE *f = NULL;
  int fd;
  *err = AmrFileOpen(path, O_WRONLY | O_CREAT | O_TRUNC, 1, &fd);
  if (!*err && !(f = fdopen(fd, "w"))) {
    *err = errno;
    close(fd);
  }
  return f;
}

/* Write one piece; returns 0 or an error code (AmrFileStrerror). */
static int write_piece(const char *path, PetscBool binary, const AmrVtkData *d, const vgrid_t *g)
{
  varray_t a[MAX_ARRAYS];
  const int na = arrays_list(d, g, a);
  unsigned long long offset = 0;
  int err;
  FILE *f = open_output(path, &err);

  if (!f) return err;
  fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"2.2\" byte_order=\"%s\" header_type=\"UInt64\">\n", byte_order());
  fprintf(f, "  <UnstructuredGrid>\n    <Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">\n", g->npoints, g->ncells);
  for (int s = 0, k = 0; s < NSECTIONS; s++) {
    if (s == S_POINTDATA && d->npoint)
      fprintf(f, "      <PointData Scalars=\"%s\">\n", d->point[0].name);
    else
      fprintf(f, "      <%s>\n", section_name[s]);
    for (; k < na && a[k].section == s; k++) {
      fprintf(f, "        <DataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"%d\" format=\"%s\"", type_name[a[k].type], a[k].name, a[k].ncomp,
              binary ? "appended" : "ascii");
      if (binary) {
        fprintf(f, " offset=\"%llu\"/>\n", offset);
        offset += sizeof(uint64_t) + a[k].n * type_size[a[k].type];
      } else {
        fprintf(f, ">\n");
        write_ascii(f, &a[k]);
        fprintf(f, "        </DataArray>\n");
      }
    }
    fprintf(f, "      </%s>\n", section_name[s]);
  }
  fprintf(f, "    </Piece>\n  </UnstructuredGrid>\n");
  if (binary) {
    fprintf(f, "  <AppendedData encoding=\"raw\">\n   _");
    for (int k = 0; k < na; k++) {
      const uint64_t bytes = (uint64_t)(a[k].n * type_size[a[k].type]);
      /* a failed write sets the stream's flag, which AmrFileClose reports */
      fwrite(&bytes, sizeof bytes, 1, f);
      if (bytes) fwrite(a[k].data, 1, (size_t)bytes, f);
    }
    fprintf(f, "\n  </AppendedData>\n");
  }
  fprintf(f, "</VTKFile>\n");
  return AmrFileClose(f);
}

/* The path of rank's piece of output prefix: in the folder prefix/ beside
 * prefix.pvtu (at P ranks one output is P files, and a folder of its own
 * keeps a run of many outputs at many ranks from piling them all into one
 * directory). */
static void piece_path(const char *prefix, int rank, char *buf, size_t len)
{
  snprintf(buf, len, "%s/%s_%04d.vtu", prefix, file_part(prefix), rank);
}

/* The parallel header naming every rank's piece; returns 0 or an errno
 * value. */
static int write_pvtu(const char *path, const char *prefix, int nranks, const AmrVtkData *d)
{
  vgrid_t none;
  varray_t a[MAX_ARRAYS];
  int na, err;
  FILE *f = open_output(path, &err);

  if (!f) return err;
  memset(&none, 0, sizeof none);
  na = arrays_list(d, &none, a);
  fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"PUnstructuredGrid\" version=\"2.2\" byte_order=\"%s\" header_type=\"UInt64\">\n", byte_order());
  fprintf(f, "  <PUnstructuredGrid GhostLevel=\"0\">\n");
  for (int s = 0, k = 0; s < S_CELLS; s++) {
    if (s == S_POINTDATA && d->npoint)
      fprintf(f, "    <PPointData Scalars=\"%s\">\n", d->point[0].name);
    else
      fprintf(f, "    <P%s>\n", section_name[s]);
    for (; k < na && a[k].section == s; k++)
      fprintf(f, "      <PDataArray type=\"%s\" Name=\"%s\" NumberOfComponents=\"%d\"/>\n", type_name[a[k].type], a[k].name, a[k].ncomp);
    fprintf(f, "    </P%s>\n", section_name[s]);
  }
  for (int r = 0; r < nranks; r++) {
    char source[2 * PETSC_MAX_PATH_LEN + 32];
    /* relative to the .pvtu beside the folder */
    piece_path(file_part(prefix), r, source, sizeof source);
    fprintf(f, "    <Piece Source=\"%s\"/>\n", source);
  }
  fprintf(f, "  </PUnstructuredGrid>\n</VTKFile>\n");
  return AmrFileClose(f);
}

/* A collective check of a per-rank errno value: the message names the -vtk
 * option's value and the file of the lowest failing rank, prefix + suffix,
 * or with suffix NULL that rank's piece. */
static PetscErrorCode check_written(MPI_Comm comm, int err, const char *option, const char *prefix, const char *suffix)
{
  char file[2 * PETSC_MAX_PATH_LEN + 32];
  int rank;

  PetscFunctionBeginUser;
  PetscCallMPI(AmrFileAgree(comm, &err, &rank));
  if (!err) PetscFunctionReturn(0);
  if (suffix) PetscCall(PetscSNPrintf(file, sizeof file, "%s%s", prefix, suffix));
  else piece_path(prefix, rank, file, sizeof file);
  SETERRQ(comm, PETSC_ERR_USER_INPUT, "option -vtk %s: cannot write %s: %s", AmrPathShort(option), AmrPathShort(file), AmrFileStrerror(err));
}

/* AmrVtkWrite(), with option (the -vtk value) for the messages. */
static PetscErrorCode write_output(p4est_t *p4est, const char *option, const char *prefix, PetscBool binary, const AmrVtkData *d)
{
  char path[2 * PETSC_MAX_PATH_LEN + 32];
  vgrid_t g;
  int err;

  PetscFunctionBeginUser;
  PetscCheck(d->degree == 1 || d->degree == 2, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "VTK output: degree %d (1 or 2)", d->degree);
  piece_path(prefix, p4est->mpirank, path, sizeof path);
  PetscCall(AmrMakeParentDirs(p4est->mpicomm, "-vtk", option, path));
  PetscCall(grid_build(p4est, d, &g));
  err = write_piece(path, binary, d, &g);
  PetscCall(grid_free(&g));
  PetscCall(check_written(p4est->mpicomm, err, option, prefix, NULL));
  PetscCall(PetscSNPrintf(path, sizeof path, "%s.pvtu", prefix));
  err = p4est->mpirank == 0 ? write_pvtu(path, prefix, p4est->mpisize, d) : 0;
  PetscCall(check_written(p4est->mpicomm, err, option, prefix, ".pvtu"));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrVtkWrite(p4est_t *p4est, const char *prefix, PetscBool binary, const AmrVtkData *d)
{
  PetscFunctionBeginUser;
  PetscCall(write_output(p4est, prefix, prefix, binary, d));
  PetscFunctionReturn(0);
}

struct _p_AmrVtkSeries {
  MPI_Comm comm;
  char prefix[PETSC_MAX_PATH_LEN];
  PetscBool binary;
  int n, cap;
  int *cycle;
  double *time;
};

PetscErrorCode AmrVtkSeriesCreate(MPI_Comm comm, const char *prefix, PetscBool binary, AmrVtkSeries **s)
{
  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(1, s));
  (*s)->comm = comm;
  (*s)->binary = binary;
  PetscCall(PetscStrncpy((*s)->prefix, prefix, sizeof (*s)->prefix));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrVtkSeriesDestroy(AmrVtkSeries **s)
{
  PetscFunctionBeginUser;
  if (!*s) PetscFunctionReturn(0);
  PetscCall(PetscFree2((*s)->cycle, (*s)->time));
  PetscCall(PetscFree(*s));
  PetscFunctionReturn(0);
}

/* The collection of every output so far, written under a temporary name
 * and renamed over the old one; returns 0 or an errno value. */
/* The file of a series' output: PREFIX_CYCLE, PREFIX_init for the initial
 * state (cycle < 0); dir: with the series' directory, else the bare name
 * the .pvd lists. */
static void output_name(const AmrVtkSeries *s, int cycle, int dir, char *buf, size_t len)
{
  const char *prefix = dir ? s->prefix : file_part(s->prefix);
  if (cycle < 0) snprintf(buf, len, "%s_init", prefix);
  else snprintf(buf, len, "%s_%04d", prefix, cycle);
}

static int write_pvd(const AmrVtkSeries *s)
{
  char path[PETSC_MAX_PATH_LEN + 16], tmp[PETSC_MAX_PATH_LEN + 16];
  FILE *f;
  int err;

  snprintf(path, sizeof path, "%s.pvd", s->prefix);
  snprintf(tmp, sizeof tmp, "%s.pvd.tmp", s->prefix);
  if (!(f = open_output(tmp, &err))) return err;
  fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"%s\">\n  <Collection>\n", byte_order());
  for (int i = 0; i < s->n; i++) {
    char name[PETSC_MAX_PATH_LEN + 16];
    output_name(s, s->cycle[i], 0, name, sizeof name);
    fprintf(f, "    <DataSet timestep=\"%.17g\" group=\"\" part=\"0\" file=\"%s.pvtu\"/>\n", s->time[i], name);
  }
  fprintf(f, "  </Collection>\n</VTKFile>\n");
  err = AmrFileClose(f);
  if (!err && rename(tmp, path)) err = errno;
  return err;
}

/* Append the output of cycle at time to the list. */
static PetscErrorCode series_append(AmrVtkSeries *s, int cycle, double time)
{
  PetscFunctionBeginUser;
  if (s->n == s->cap) {
    int *c;
    double *t;
    s->cap = s->cap ? 2 * s->cap : 16;
    PetscCall(PetscMalloc2(s->cap, &c, s->cap, &t));
    if (s->n) {
      PetscCall(PetscArraycpy(c, s->cycle, s->n));
      PetscCall(PetscArraycpy(t, s->time, s->n));
    }
    PetscCall(PetscFree2(s->cycle, s->time));
    s->cycle = c;
    s->time = t;
  }
  s->cycle[s->n] = cycle;
  s->time[s->n++] = time;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrVtkSeriesWrite(AmrVtkSeries *s, p4est_t *p4est, int cycle, double time, const AmrVtkData *d)
{
  char prefix[PETSC_MAX_PATH_LEN + 16];
  int err;

  PetscFunctionBeginUser;
  PetscCheck(s->n == 0 || time > s->time[s->n - 1], s->comm, PETSC_ERR_ARG_WRONG, "VTK series %s: time %g after %g", s->prefix, time, s->time[s->n - 1]);
  output_name(s, cycle, 1, prefix, sizeof prefix);
  PetscCall(write_output(p4est, s->prefix, prefix, s->binary, d));
  PetscCall(series_append(s, cycle, time));
  err = p4est->mpirank == 0 ? write_pvd(s) : 0;
  PetscCall(check_written(s->comm, err, s->prefix, s->prefix, ".pvd"));
  PetscFunctionReturn(0);
}

void AmrVtkSeriesEntries(const AmrVtkSeries *s, const char **prefix, int *n, const int **cycles, const double **times)
{
  *prefix = s->prefix;
  *n = s->n;
  *cycles = s->cycle;
  *times = s->time;
}

PetscErrorCode AmrVtkSeriesRestore(AmrVtkSeries *s, int n, const int *cycles, const double *times)
{
  PetscMPIInt rank;
  int err;

  PetscFunctionBeginUser;
  s->n = 0;
  for (int i = 0; i < n; i++) {
    PetscCheck(i == 0 || times[i] > times[i - 1], s->comm, PETSC_ERR_USER_INPUT, "VTK series %s: the restored output %d has time %g after %g", s->prefix, i,
               times[i], times[i - 1]);
    PetscCall(series_append(s, cycles[i], times[i]));
  }
  PetscCallMPI(MPI_Comm_rank(s->comm, &rank));
  err = rank == 0 ? write_pvd(s) : 0;
  PetscCall(check_written(s->comm, err, s->prefix, s->prefix, ".pvd"));
  PetscFunctionReturn(0);
}
