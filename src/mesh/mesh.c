/* Coarse meshes: builtin connectivities and Abaqus files, with the
 * boundary parts the files name. */
#define _POSIX_C_SOURCE 200809L /* strcasecmp, strtok_r */
#include "mesh/mesh.h"

#include "mesh/geom.h"

#include "util/fileio.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define AMR_BUILTIN_PREFIX "builtin:"

/* The other dimension's own builtins, so that a 3D name given to amr2d
 * (or a 2D one to amr3d) is answered with the program that has it. */
#ifndef P4_TO_P8
static const char *builtin_names = "unit,periodic,rotwrap,corner,pillow,moebius,star,cubed,disk,brick[:AxB]";
static const char *const other_dim_names[] = {"twocubes", "twowrap", "rotcubes", "shell", "sphere", NULL};
#define AMR_OTHER_DIM "a 3D mesh: use amr3d"
#else
static const char *builtin_names = "unit,periodic,rotwrap,twocubes,twowrap,rotcubes,shell,sphere,brick[:AxBxC]";
static const char *const other_dim_names[] = {"corner", "pillow", "moebius", "star", "cubed", "disk", NULL};
#define AMR_OTHER_DIM "a 2D mesh: use amr2d"
#endif

const char *AmrMeshBuiltinNames(void) { return builtin_names; }

/* "brick" or "brick:AxB[xC]": p4est's byname catalogue has only one fixed
 * brick, users want to choose the number of trees per direction. */
static PetscErrorCode mesh_brick(MPI_Comm comm, const char *spec, const char *size, p4est_connectivity_t **conn)
{
  int n[3] = {2, 3, 5}, got = P4EST_DIM;
  char tail;

  PetscFunctionBeginUser;
  if (size) {
#ifndef P4_TO_P8
    got = sscanf(size, "%dx%d%c", &n[0], &n[1], &tail);
#else
    got = sscanf(size, "%dx%dx%d%c", &n[0], &n[1], &n[2], &tail);
#endif
  }
  PetscCheck(got == P4EST_DIM, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: the brick size must be %s", spec,
             P4EST_DIM == 2 ? "AxB, e.g. brick:4x2" : "AxBxC, e.g. brick:4x2x2");
  for (int i = 0; i < P4EST_DIM; i++)
    PetscCheck(n[i] >= 1 && n[i] <= 4096, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: brick sizes must be from 1 to 4096", spec);
#ifndef P4_TO_P8
  *conn = p4est_connectivity_new_brick(n[0], n[1], 0, 0);
#else
  *conn = p8est_connectivity_new_brick(n[0], n[1], n[2], 0, 0, 0);
#endif
  PetscFunctionReturn(0);
}

static PetscErrorCode mesh_builtin(MPI_Comm comm, const char *spec, AmrMesh *mesh)
{
  char name[64];
  const char *arg = spec + strlen(AMR_BUILTIN_PREFIX), *colon = strchr(arg, ':');
  size_t len = colon ? (size_t)(colon - arg) : strlen(arg);

  PetscFunctionBeginUser;
  PetscCheck(len > 0 && len < sizeof name, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: unknown builtin mesh (choose builtin:NAME with NAME one of %s)",
             spec, builtin_names);
  memcpy(name, arg, len);
  name[len] = '\0';
  if (!strcmp(name, "brick")) PetscCall(mesh_brick(comm, spec, colon ? colon + 1 : NULL, &mesh->conn));
  else {
    /* byname's catalogue has two names we want plainer: the fixed brick and
     * "unit"; every other name passes through unchanged. */
    PetscCheck(!colon, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: only builtin:brick takes a size", spec);
    for (int i = 0; other_dim_names[i]; i++)
      PetscCheck(strcmp(name, other_dim_names[i]), comm, PETSC_ERR_USER_INPUT, "option -mesh %s: " AMR_OTHER_DIM, spec);
    if (strstr(builtin_names, name) && strcmp(name, "brick23") && strcmp(name, "brick235")) mesh->conn = p4est_connectivity_new_byname(name);
    PetscCheck(mesh->conn, comm, PETSC_ERR_USER_INPUT, "option -mesh %s: unknown builtin mesh '%s' (choose one of %s)", spec, name, builtin_names);
  }
#ifdef P4_TO_P8
  /* shell and sphere reuse vertices and are only a domain through their map */
  if (!strcmp(name, "shell")) mesh->geom = p8est_geometry_new_shell(mesh->conn, 1.0, 0.55);
  if (!strcmp(name, "sphere")) mesh->geom = p8est_geometry_new_sphere(mesh->conn, 1.0, 0.6, 0.3);
#endif
  PetscFunctionReturn(0);
}

/* The connectivity of the parsed cells: trees and vertices as the file
 * has them, every face first a boundary, then p4est finds the face, edge
 * and corner neighbours from the shared vertices. */
static p4est_connectivity_t *mesh_connectivity(const AmrInpMesh *m)
{
  const p4est_topidx_t nv = (p4est_topidx_t)m->nvert, nt = (p4est_topidx_t)m->ncell;
#ifndef P4_TO_P8
  p4est_connectivity_t *conn = p4est_connectivity_new(nv, nt, 0, 0);
#else
  p4est_connectivity_t *conn = p8est_connectivity_new(nv, nt, 0, 0, 0, 0);
#endif
  memcpy(conn->vertices, m->xyz, 3 * (size_t)nv * sizeof(double));
  for (size_t i = 0; i < (size_t)nt * P4EST_CHILDREN; i++) conn->tree_to_vertex[i] = (p4est_topidx_t)m->cell[i];
  for (p4est_topidx_t t = 0; t < nt; t++)
    for (int f = 0; f < P4EST_FACES; f++) {
      conn->tree_to_tree[(size_t)t * P4EST_FACES + f] = t;
      conn->tree_to_face[(size_t)t * P4EST_FACES + f] = (int8_t)f;
    }
  p4est_connectivity_complete(conn);
  return conn;
}

/* The named sets travel as fixed records plus one array of all faces. */
static PetscErrorCode mesh_bcast_parts(MPI_Comm comm, AmrMesh *mesh)
{
  PetscMPIInt rank;
  long counts[2] = {mesh->nparts, 0}, *faces = NULL;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  for (int i = 0; i < mesh->nparts; i++) counts[1] += mesh->part[i].nfaces;
  PetscCallMPI(MPI_Bcast(counts, 2, MPI_LONG, 0, comm));
  if (!counts[0]) PetscFunctionReturn(0);
  if (rank) {
    mesh->nparts = (int)counts[0];
    /* calloc, as AmrInpParse's sets on rank 0: one way to free them */
    mesh->part = calloc((size_t)counts[0], sizeof(AmrInpSet));
    PetscCheck(mesh->part, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory");
  }
  PetscCallMPI(MPI_Bcast(mesh->part, (int)(counts[0] * sizeof(AmrInpSet)), MPI_BYTE, 0, comm));
  PetscCall(PetscMalloc1(counts[1] + 1, &faces));
  if (!rank)
    for (long i = 0, k = 0; i < counts[0]; i++)
      for (long j = 0; j < mesh->part[i].nfaces; j++) faces[k++] = mesh->part[i].face[j];
  PetscCallMPI(MPI_Bcast(faces, (int)counts[1], MPI_LONG, 0, comm));
  if (rank)
    for (long i = 0, k = 0; i < counts[0]; i++) {
      AmrInpSet *p = &mesh->part[i];
      p->face = NULL;
      if (!p->nfaces) continue;
      p->face = malloc((size_t)p->nfaces * sizeof(long));
      PetscCheck(p->face, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory");
      memcpy(p->face, faces + k, (size_t)p->nfaces * sizeof(long));
      k += p->nfaces;
    }
  PetscCall(PetscFree(faces));
  PetscFunctionReturn(0);
}

/* Rank 0 parses (or reports readerr), everyone learns the verdict before
 * anyone raises an error, so no rank waits in a broadcast forever. */
static PetscErrorCode mesh_inp_text(MPI_Comm comm, const char *name, const char *text, size_t len, const char *readerr, AmrMesh *mesh)
{
  PetscMPIInt rank;
  char msg[PETSC_MAX_PATH_LEN + 512] = "";
  int ok = 1;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    AmrInpMesh m;
    if (readerr) {
      PetscCall(PetscStrncpy(msg, readerr, sizeof msg));
      ok = 0;
    } else ok = AmrInpParse(name, text, len, P4EST_DIM, &m, msg, sizeof msg);
    if (ok) {
      mesh->conn = mesh_connectivity(&m);
      mesh->nparts = m.nsets;
      mesh->part = m.set;
      m.set = NULL;
      m.nsets = 0;
      AmrInpFree(&m);
      if (!p4est_connectivity_is_valid(mesh->conn)) {
        snprintf(msg, sizeof msg, "mesh file '%s': p4est finds the connectivity of its cells invalid", name);
        ok = 0;
      }
    }
  }
  PetscCallMPI(MPI_Bcast(&ok, 1, MPI_INT, 0, comm));
  if (!ok) {
    PetscCallMPI(MPI_Bcast(msg, (int)sizeof msg, MPI_CHAR, 0, comm));
    PetscCall(AmrMeshDestroy(mesh));
    SETERRQ(comm, PETSC_ERR_USER_INPUT, "%s", msg);
  }
  mesh->conn = p4est_connectivity_bcast(mesh->conn, 0, comm);
  PetscCall(mesh_bcast_parts(comm, mesh));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrMeshCreateInp(MPI_Comm comm, const char *name, const char *text, size_t len, AmrMesh *mesh)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(mesh, sizeof *mesh));
  PetscCall(PetscStrncpy(mesh->name, name, sizeof mesh->name));
  PetscCall(mesh_inp_text(comm, name, text, len, NULL, mesh));
  PetscFunctionReturn(0);
}

/* Rank 0 reads the whole file: it is parsed once, from memory. */
static PetscErrorCode mesh_inp(MPI_Comm comm, const char *path, AmrMesh *mesh)
{
  PetscMPIInt rank;
  char err[PETSC_MAX_PATH_LEN + 128] = "", *text = NULL;
  size_t len = 0;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  if (rank == 0) {
    /* a folder or a FIFO is refused rather than read or waited on */
    const int e = AmrFileRead(path, 0, &text, &len);
    if (e < 0) snprintf(err, sizeof err, "mesh file '%s': %s", AmrPathShort(path), AmrFileStrerror(e));
    else if (e == ENOMEM) snprintf(err, sizeof err, "mesh file '%s': out of memory reading it", AmrPathShort(path));
    else if (e) snprintf(err, sizeof err, "mesh file '%s': cannot open: %s", AmrPathShort(path), strerror(e));
  }
  ierr = mesh_inp_text(comm, path, text, len, err[0] ? err : NULL, mesh);
  free(text);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrMeshCreate(MPI_Comm comm, const char *spec, AmrMesh *mesh)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMemzero(mesh, sizeof *mesh));
  PetscCheck(spec && spec[0], comm, PETSC_ERR_USER_INPUT, "option -mesh: empty value (give FILE.inp or builtin:NAME)");
  PetscCall(PetscStrncpy(mesh->name, spec, sizeof mesh->name));
  if (!strncmp(spec, AMR_BUILTIN_PREFIX, strlen(AMR_BUILTIN_PREFIX))) PetscCall(mesh_builtin(comm, spec, mesh));
  else {
    const size_t n = strlen(spec);
    /* the geometry beside each mesh in meshes/ is the likelier slip */
    PetscCheck(n < 4 || strcasecmp(spec + n - 4, ".geo"), comm, PETSC_ERR_USER_INPUT,
               "option -mesh %s: a gmsh geometry, not a mesh: export it with gmsh -%d -format inp %s", spec, P4EST_DIM, spec);
    /* gmsh's default output; its reader would only say it found no *NODE */
    PetscCheck(n < 4 || strcasecmp(spec + n - 4, ".msh"), comm, PETSC_ERR_USER_INPUT,
               "option -mesh %s: a gmsh .msh file, which is not read: convert it with gmsh %s -save -format inp -o %.*s.inp", spec, spec, (int)(n - 4), spec);
    PetscCall(mesh_inp(comm, spec, mesh));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrMeshDestroy(AmrMesh *mesh)
{
  PetscFunctionBeginUser;
  if (mesh->geom) p4est_geometry_destroy(mesh->geom);
  if (mesh->conn) p4est_connectivity_destroy(mesh->conn);
  for (int i = 0; i < mesh->nparts; i++) free(mesh->part[i].face);
  free(mesh->part);
  mesh->part = NULL;
  mesh->geom = NULL;
  mesh->conn = NULL;
  mesh->nparts = 0;
  PetscFunctionReturn(0);
}

static int mesh_find_part(const AmrMesh *mesh, const char *name)
{
  for (int i = 0; i < mesh->nparts; i++)
    if (!strcasecmp(mesh->part[i].name, name)) return i;
  return -1;
}

/* "left, right (4 faces)": the boundary parts, for messages. */
static void mesh_part_list(const AmrMesh *mesh, char *buf, size_t len, int counts)
{
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < mesh->nparts && n + 1 < len; i++) {
    const AmrInpSet *p = &mesh->part[i];
    if (p->why[0]) continue;
    int m = counts ? snprintf(buf + n, len - n, "%s%d %s (%ld face%s)", n ? ", " : "", i + 1, p->name, p->nfaces, p->nfaces == 1 ? "" : "s")
                   : snprintf(buf + n, len - n, "%s%s", n ? ", " : "", p->name);
    if (m < 0) break;
    n += (size_t)m;
  }
  if (n >= len && len > 4) strcpy(buf + len - 4, "...");
}

/* s without its leading and trailing blanks (cut in place). */
static char *mesh_trim(char *s)
{
  while (*s == ' ') s++;
  for (char *e = s + strlen(s); e > s && e[-1] == ' ';) *--e = '\0';
  return s;
}

/* The boundary part called name, which option opt (value value) names. */
static PetscErrorCode mesh_boundary_part(MPI_Comm comm, const AmrMesh *mesh, const char *opt, const char *value, const char *name, int *p)
{
  char parts[512];

  PetscFunctionBeginUser;
  mesh_part_list(mesh, parts, sizeof parts, 0);
  *p = mesh_find_part(mesh, name);
  PetscCheck(mesh->nparts, comm, PETSC_ERR_USER_INPUT, "option %s %s: mesh %s has no named boundary parts (they come from the sets of an .inp file)", opt, value,
             mesh->name);
  PetscCheck(*p >= 0, comm, PETSC_ERR_USER_INPUT, "option %s %s: mesh file '%s' has no set '%s' (its boundary parts: %s)", opt, value, mesh->name, name,
             parts[0] ? parts : "none");
  PetscCheck(!mesh->part[*p].why[0], comm, PETSC_ERR_USER_INPUT, "option %s %s: set '%s' of mesh file '%s' is not on the domain boundary: it %s", opt, value,
             mesh->part[*p].name, mesh->name, mesh->part[*p].why);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrMeshBoundaryTypes(MPI_Comm comm, const AmrMesh *mesh, const char *dirichlet, const char *neumann, signed char **bc)
{
  const char *opt[2] = {"-bc_dirichlet", "-bc_neumann"}, *list[2] = {dirichlet, neumann};
  const size_t nf = (size_t)mesh->conn->num_trees * P4EST_FACES;
  int *owner;

  PetscFunctionBeginUser;
  *bc = NULL;
  if (!dirichlet[0] && !neumann[0]) PetscFunctionReturn(0);
  PetscCall(PetscMalloc1(nf, bc));
  PetscCall(PetscMalloc1(nf, &owner));
  for (size_t i = 0; i < nf; i++) (*bc)[i] = -1;
  for (int type = 0; type < 2; type++) {
    char names[PETSC_MAX_PATH_LEN], *save = NULL;
    PetscCall(PetscStrncpy(names, list[type], sizeof names));
    if (!names[0]) continue;
    int count = 0;
    for (char *tok = strtok_r(names, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      tok = mesh_trim(tok);
      if (!*tok) continue;
      count++;
      int p;
      PetscCall(mesh_boundary_part(comm, mesh, opt[type], list[type], tok, &p));
      const AmrInpSet *part = &mesh->part[p];
      for (long j = 0; j < part->nfaces; j++) {
        const long f = part->face[j];
        PetscCheck((*bc)[f] < 0 || (*bc)[f] == type, comm, PETSC_ERR_USER_INPUT,
                   "options -bc_dirichlet and -bc_neumann: the sets '%s' and '%s' of mesh file '%s' share boundary faces", mesh->part[owner[f]].name, part->name,
                   mesh->name);
        (*bc)[f] = (signed char)type;
        owner[f] = p;
      }
    }
    PetscCheck(count, comm, PETSC_ERR_USER_INPUT, "option %s: needs set names, e.g. %s left,right", opt[type], opt[type]);
  }
  PetscCall(PetscFree(owner));
  /* Neumann on every boundary face leaves the solution unique only up to a
   * constant: the solver would not converge. */
  PetscBool dirichlet_face = PETSC_FALSE;
  for (size_t i = 0; i < nf; i++) {
    const p4est_topidx_t t = (p4est_topidx_t)(i / P4EST_FACES);
    const int f = (int)(i % P4EST_FACES);
    if (mesh->conn->tree_to_tree[i] == t && mesh->conn->tree_to_face[i] == f && (*bc)[i] != 1) dirichlet_face = PETSC_TRUE;
  }
  PetscCheck(dirichlet_face, comm, PETSC_ERR_USER_INPUT, "option -bc_neumann %s: every boundary face of mesh file '%s' would be Neumann, so the solution is not unique (name a Dirichlet part)",
             neumann, mesh->name);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrMeshViewParts(MPI_Comm comm, const AmrMesh *mesh, const char *program)
{
  char parts[2048];

  PetscFunctionBeginUser;
  mesh_part_list(mesh, parts, sizeof parts, 1);
  if (parts[0]) PetscCall(PetscPrintf(comm, "%s: boundary parts of %s: %s\n", program, mesh->name, parts));
  PetscFunctionReturn(0);
}

void AmrMeshBoundaryField(const AmrMesh *mesh, p4est_t *p4est, sc_array_t *field)
{
  const size_t nf = (size_t)p4est->connectivity->num_trees * P4EST_FACES;
  int *tag = calloc(nf + 1, sizeof(int));
  size_t e = 0;
  sc_array_resize(field, (size_t)p4est->local_num_quadrants);
  for (int i = 0; tag && i < mesh->nparts; i++)
    for (long j = 0; j < mesh->part[i].nfaces; j++) tag[mesh->part[i].face[j]] = i + 1;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++, e++) {
      const p4est_quadrant_t *q = p4est_quadrant_array_index(&tree->quadrants, k);
      const p4est_qcoord_t h = P4EST_QUADRANT_LEN(q->level);
#ifndef P4_TO_P8
      const p4est_qcoord_t xyz[2] = {q->x, q->y};
#else
      const p4est_qcoord_t xyz[3] = {q->x, q->y, q->z};
#endif
      double value = 0;
      for (int f = 0; tag && f < P4EST_FACES; f++) {
        const int touches = f % 2 ? xyz[f / 2] + h == P4EST_ROOT_LEN : xyz[f / 2] == 0;
        if (touches && tag[(size_t)t * P4EST_FACES + f] > value) value = tag[(size_t)t * P4EST_FACES + f];
      }
      *(double *)sc_array_index(field, e) = value;
    }
  }
  free(tag);
}

/* One NAME:SHAPE:NUMBERS of -boundary_shape \a spec (item is cut in
 * place): the part it names and its shape. */
static PetscErrorCode mesh_parse_shape(MPI_Comm comm, const AmrMesh *mesh, const char *spec, char *item, int *part, AmrGeomShape *shape)
{
  char *kind = strchr(item, ':'), *nums = kind ? strchr(kind + 1, ':') : NULL, *end;
  int n = 0, want;

  PetscFunctionBeginUser;
  PetscCheck(nums, comm, PETSC_ERR_USER_INPUT, "option -boundary_shape %s: '%s' is not NAME:SHAPE:NUMBERS (e.g. hole:%s)", spec, item,
             P4EST_DIM == 2 ? "circle:0.5,0.5,0.3" : "cylinder:0.5,0.5,0.3");
  *kind++ = '\0';
  *nums++ = '\0';
  PetscCall(mesh_boundary_part(comm, mesh, "-boundary_shape", spec, mesh_trim(item), part));
  kind = mesh_trim(kind);
  shape->dim = !strcmp(kind, "sphere") ? 3 : 2;
  want = shape->dim + 1;
  PetscCheck(!strcmp(kind, "circle") || !strcmp(kind, "cylinder") || !strcmp(kind, "sphere"), comm, PETSC_ERR_USER_INPUT,
             "option -boundary_shape %s: unknown shape '%s' (amr2d: circle; amr3d: cylinder, sphere)", spec, kind);
  PetscCheck(strcmp(kind, P4EST_DIM == 2 ? "sphere" : "circle") && (P4EST_DIM == 3 || strcmp(kind, "cylinder")), comm, PETSC_ERR_USER_INPUT,
             "option -boundary_shape %s: shape '%s' is %s", spec, kind, P4EST_DIM == 2 ? "3D: use amr3d (amr2d has circle)" : "2D: use amr2d (amr3d has cylinder and sphere)");
  for (char *c = nums;; c = end + 1) {
    double v = strtod(c, &end);
    PetscCheck(end != c && n < want && (*end == ',' || *end == '\0') && isfinite(v), comm, PETSC_ERR_USER_INPUT,
               "option -boundary_shape %s: a %s takes %d numbers %s, not '%s'", spec, kind, want, shape->dim == 2 ? "CX,CY,R" : "CX,CY,CZ,R", nums);
    if (n < shape->dim) shape->c[n] = v;
    else shape->r = v;
    n++;
    if (!*end) break;
  }
  PetscCheck(n == want, comm, PETSC_ERR_USER_INPUT, "option -boundary_shape %s: a %s takes %d numbers %s, not '%s'", spec, kind, want,
             shape->dim == 2 ? "CX,CY,R" : "CX,CY,CZ,R", nums);
  PetscCheck(shape->r > 0, comm, PETSC_ERR_USER_INPUT, "option -boundary_shape %s: the radius %g of set '%s' must be positive", spec, shape->r,
             mesh->part[*part].name);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrMeshSetBoundaryShapes(MPI_Comm comm, AmrMesh *mesh, const char *spec)
{
  const size_t nf = (size_t)mesh->conn->num_trees * P4EST_FACES;
  char buf[PETSC_MAX_PATH_LEN], *save = NULL, msg[256];
  int *face_shape, *part, n = 0, bad;
  AmrGeomShape *shape;

  PetscFunctionBeginUser;
  if (!spec) PetscFunctionReturn(0);
  PetscCall(PetscStrncpy(buf, spec, sizeof buf));
  /* calloc: the shapes are copied into the tree attributes, padding too,
   * and a checkpoint compares those bytes */
  PetscCall(PetscCalloc3(strlen(spec) + 1, &shape, strlen(spec) + 1, &part, nf, &face_shape));
  for (size_t i = 0; i < nf; i++) face_shape[i] = -1;
  for (char *tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
    if (!*mesh_trim(tok)) continue;
    PetscCall(mesh_parse_shape(comm, mesh, spec, tok, &part[n], &shape[n]));
    for (int k = 0; k < n; k++)
      PetscCheck(part[k] != part[n], comm, PETSC_ERR_USER_INPUT, "option -boundary_shape %s: set '%s' is given two shapes", spec, mesh->part[part[n]].name);
    for (long j = 0; j < mesh->part[part[n]].nfaces; j++) face_shape[mesh->part[part[n]].face[j]] = n;
    n++;
  }
  PetscCheck(n, comm, PETSC_ERR_USER_INPUT, "option -boundary_shape: needs NAME:SHAPE:NUMBERS, e.g. -boundary_shape hole:%s",
             P4EST_DIM == 2 ? "circle:0.5,0.5,0.3" : "cylinder:0.5,0.5,0.3");
  const int err = AmrGeomSetShapes(mesh->conn, shape, face_shape, &bad, msg, sizeof msg);
  const char *name = err && bad >= 0 ? mesh->part[part[bad]].name : "";
  PetscCall(PetscFree3(shape, part, face_shape));
  PetscCheck(!err, comm, PETSC_ERR_USER_INPUT, "option -boundary_shape %s: set '%s' of mesh file '%s': %s", spec, name, mesh->name, msg);
  PetscFunctionReturn(0);
}
