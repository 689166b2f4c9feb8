/* The Abaqus .inp reader's checks (mesh/impl/inp.h): what p4est's
 * connectivity builder takes for granted, made sure of after the parse:
 * unique node and element ids, the cells (the elements of the program's
 * dimension) and their vertices, no two distinct nodes at one point, every
 * cell positively oriented, no cell given twice, no face in more than two
 * cells; and which faces and nodes lie on the domain boundary. */
#include "mesh/impl/inp.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const shape_name[] = {"element", "line", "triangle", "quadrilateral", "tetrahedron", "pyramid", "wedge", "hexahedron"};
/* Abaqus corner order (counter-clockwise; hexes: 1-4 then 5-8 above them)
 * to p4est's z-order. */
static const int abaqus_to_z[8] = {0, 1, 3, 2, 4, 5, 7, 6};

static int cmp_node(const void *a, const void *b)
{
  const inp_node_t *x = a, *y = b;
  return x->id < y->id ? -1 : x->id > y->id;
}

static int cmp_elem(const void *a, const void *b)
{
  long x = *(const long *)a, y = *(const long *)b;
  return x < y ? -1 : x > y;
}


/* First node index with an id >= id. */
long AmrInpNodeLower(const inp_reader *r, long id)
{
  long lo = 0, hi = r->nnode;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (r->node[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* First position in elem_by_id with an id >= id. */
long AmrInpElemLower(const inp_reader *r, long id)
{
  long lo = 0, hi = r->nelem;
  while (lo < hi) {
    long mid = lo + (hi - lo) / 2;
    if (r->elem_by_id[mid][0] < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

static long node_index(const inp_reader *r, long id)
{
  long lo = AmrInpNodeLower(r, id);
  return lo < r->nnode && r->node[lo].id == id ? lo : -1;
}

static int inp_ids(inp_reader *r)
{
  qsort(r->node, (size_t)r->nnode, sizeof(inp_node_t), cmp_node);
  for (long i = 1; i < r->nnode; i++)
    if (r->node[i].id == r->node[i - 1].id) {
      r->line = r->node[i].line > r->node[i - 1].line ? r->node[i].line : r->node[i - 1].line;
      return AmrInpFail(r, "node %ld is defined twice (lines %ld and %ld)", r->node[i].id, r->node[i - 1].line < r->node[i].line ? r->node[i - 1].line : r->node[i].line, r->line);
    }
  if (!(r->elem_by_id = malloc((size_t)(r->nelem + 1) * sizeof *r->elem_by_id))) return AmrInpFail(r, "out of memory");
  for (long i = 0; i < r->nelem; i++) {
    r->elem_by_id[i][0] = r->elem[i].id;
    r->elem_by_id[i][1] = i;
  }
  qsort(r->elem_by_id, (size_t)r->nelem, sizeof *r->elem_by_id, cmp_elem);
  for (long i = 1; i < r->nelem; i++) {
    const inp_elem_t *a = &r->elem[r->elem_by_id[i - 1][1]], *b = &r->elem[r->elem_by_id[i][1]];
    if (a->id == b->id) {
      r->line = a->line > b->line ? a->line : b->line;
      return AmrInpFail(r, "element %ld is defined twice (lines %ld and %ld)", a->id, a->line < b->line ? a->line : b->line, r->line);
    }
  }
  for (long i = 0; i < r->nelem; i++) {
    inp_elem_t *e = &r->elem[i];
    for (int k = 0; k < amr_inp_shape_corners[r->sec[e->sec].shape]; k++) {
      long n = node_index(r, e->node[k]);
      r->line = e->line;
      if (n < 0) return AmrInpFail(r, "element %ld names node %ld, which the file does not define", e->id, e->node[k]);
      e->node[k] = n;
    }
  }
  r->line = 0;
  return 1;
}

typedef struct {
  double x[3];
  long v;
} inp_point_t;

static int point_cmp(const void *pa, const void *pb)
{
  const inp_point_t *a = pa, *b = pb;
  for (int i = 0; i < 3; i++)
    if (a->x[i] != b->x[i]) return a->x[i] < b->x[i] ? -1 : 1;
  return 0;
}

/* Two distinct nodes of the cells at one point: the cells on either side
 * share no vertex there, and the mesh is cut along them (a slit that
 * changes the solution) where the file meant one node. */
static int inp_coincident(inp_reader *r, const AmrInpMesh *m)
{
  inp_point_t *p = malloc((size_t)(m->nvert + 1) * sizeof *p);
  if (!p) return AmrInpFail(r, "out of memory");
  for (long v = 0; v < m->nvert; v++) {
    memcpy(p[v].x, &m->xyz[3 * v], sizeof p[v].x);
    p[v].v = v;
  }
  qsort(p, (size_t)m->nvert, sizeof *p, point_cmp);
  for (long i = 1; i < m->nvert; i++)
    if (!point_cmp(&p[i - 1], &p[i])) {
      const long lo = p[i - 1].v < p[i].v ? p[i - 1].v : p[i].v, hi = p[i - 1].v + p[i].v - lo;
      const long a = r->node[r->vnode[lo]].id, b = r->node[r->vnode[hi]].id;
      const double x = p[i].x[0] - r->shift[0], y = p[i].x[1] - r->shift[1], z = p[i].x[2] - r->shift[2];
      free(p);
      return AmrInpFail(r, "nodes %ld and %ld are both at (%g, %g, %g): the cells meeting there do not connect (merge the nodes; gmsh: Coherence)", a, b, x, y,
                      z);
    }
  free(p);
  return 1;
}

/* The dimension of the file's cells: the highest of its elements. */
static int inp_cells(inp_reader *r, AmrInpMesh *m)
{
  static const char *const cells2 = "quadrilaterals (CPS4, CPE4, C2D4, S4, S4R, ...)", *const cells3 = "hexahedra (C3D8, C3D8R, ...)";
  int fdim = 0, first[4] = {-1, -1, -1, -1};
  for (long i = 0; i < r->nelem; i++) {
    int sec = r->elem[i].sec, d = amr_inp_shape_dim[r->sec[sec].shape];
    if (d > fdim) fdim = d;
    if (first[d] < 0) first[d] = sec;
  }
  if (fdim < 2) {
    if (r->nsec) {
      r->line = r->sec[0].line;
      return AmrInpFail(r, "no cells: the elements (first type %s) include no %s or %s", r->sec[0].type, cells2, cells3);
    }
    return AmrInpFail(r, "no cells: no *ELEMENT section of %s or %s", cells2, cells3);
  }
  const inp_sec_t *fs = &r->sec[first[fdim]];
  r->line = fs->line;
  if (fdim == 3 && r->dim == 2)
    return AmrInpFail(r, "element type %s is a 3D %s, but this 2D program needs %s: use amr3d", fs->type, shape_name[fs->shape], cells2);
  if (fdim == 2 && r->dim == 3)
    return AmrInpFail(r, "element type %s is a 2D %s, but this 3D program needs %s: use amr2d", fs->type, shape_name[fs->shape], cells3);
  for (long s = 0; s < r->nsec; s++) {
    const inp_sec_t *c = &r->sec[s];
    r->line = c->line;
    if (amr_inp_shape_dim[c->shape] != r->dim || c->nn == 1 << r->dim) continue;
    if (c->shape == SH_QUAD || c->shape == SH_HEX)
      return AmrInpFail(r, "element type %s has %d nodes: only linear %s are cells (gmsh: Mesh.ElementOrder = 1)", c->type, c->nn, r->dim == 2 ? cells2 : cells3);
    return AmrInpFail(r, "element type %s (%s) cannot be a cell of a %s forest: mesh with %s (gmsh: %s)", c->type, shape_name[c->shape],
                    r->dim == 2 ? "quadtree" : "octree", r->dim == 2 ? cells2 : cells3,
                    r->dim == 2 ? "Recombine Surface" : "a transfinite or extruded volume with Recombine");
  }
  r->line = 0;
  m->dim = r->dim;
  for (long i = 0; i < r->nelem; i++) m->ncell += amr_inp_shape_dim[r->sec[r->elem[i].sec].shape] == r->dim;
  if (m->ncell > INP_MAX_ID / 8) return AmrInpFail(r, "too many cells (%ld)", m->ncell);
  const int nv = 1 << r->dim;
  r->cellelem = malloc((size_t)m->ncell * sizeof(long));
  r->elemcell = malloc((size_t)(r->nelem + 1) * sizeof(long));
  r->vert = malloc((size_t)(r->nnode + 1) * sizeof(long));
  r->vnode = malloc((size_t)(r->nnode + 1) * sizeof(long));
  m->cell = malloc((size_t)m->ncell * nv * sizeof(long));
  if (!r->cellelem || !r->elemcell || !r->vert || !r->vnode || !m->cell) return AmrInpFail(r, "out of memory");
  for (long i = 0; i < r->nnode; i++) r->vert[i] = -1;
  for (long i = 0, c = 0; i < r->nelem; i++) {
    r->elemcell[i] = -1;
    if (amr_inp_shape_dim[r->sec[r->elem[i].sec].shape] == r->dim) {
      r->elemcell[i] = c;
      r->cellelem[c++] = i;
      for (int k = 0; k < nv; k++) r->vert[r->elem[i].node[k]] = 0;
    }
  }
  for (long i = 0; i < r->nnode; i++)
    if (!r->vert[i]) {
      r->vnode[m->nvert] = i;
      r->vert[i] = m->nvert++;
    }
  if (!(m->xyz = malloc((size_t)(m->nvert + 1) * 3 * sizeof(double)))) return AmrInpFail(r, "out of memory");
  for (long v = 0; v < m->nvert; v++)
    for (int a = 0; a < 3; a++) m->xyz[3 * v + a] = r->node[r->vnode[v]].x[a] + r->shift[a];
  for (long c = 0; c < m->ncell; c++)
    for (int k = 0; k < nv; k++) m->cell[c * nv + abaqus_to_z[k]] = r->vert[r->elem[r->cellelem[c]].node[k]];
  if (r->dim == 2)
    for (long v = 1; v < m->nvert; v++)
      if (m->xyz[3 * v + 2] != m->xyz[2])
        return AmrInpFail(r, "a 2D mesh must lie in a plane z = const, but node %ld has z = %g and node %ld z = %g", r->node[r->vnode[v]].id,
                        m->xyz[3 * v + 2], r->node[r->vnode[0]].id, m->xyz[2]);
  return inp_coincident(r, m);
}

static void vsub(const double *a, const double *b, double *d)
{
  for (int i = 0; i < 3; i++) d[i] = a[i] - b[i];
}

/* Orientation: every corner's edge vectors must form a positive frame, which
 * for quads means convex and counter-clockwise, and for hexes a positive
 * trilinear Jacobian at the corners (Abaqus order, as in the file). */
static int inp_orientation(inp_reader *r, const AmrInpMesh *m)
{
  const int nv = 1 << r->dim;
  for (long k = 0; k < m->ncell; k++) {
    const inp_elem_t *el = &r->elem[r->cellelem[k]];
    const double *x[8];
    double scale = 0;
    for (int c = 0; c < nv; c++) x[c] = m->xyz + 3 * r->vert[el->node[c]];
    for (int c = 1; c < nv; c++) {
      double d[3];
      vsub(x[c], x[0], d);
      scale = fmax(scale, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    }
    for (int c = 0; c < nv; c++) {
      double a[3], b[3], det;
      int bottom = c < 4, i = c % 4;
      int next = (i + 1) % 4, prev = (i + 3) % 4, off = bottom ? 0 : 4;
      vsub(x[off + (bottom ? next : prev)], x[c], a);
      vsub(x[off + (bottom ? prev : next)], x[c], b);
      if (r->dim == 2) {
        det = (a[0] * b[1] - a[1] * b[0]) / (scale * scale);
      } else {
        double h[3];
        vsub(x[bottom ? c + 4 : c - 4], x[c], h);
        det = a[0] * (b[1] * h[2] - b[2] * h[1]) - a[1] * (b[0] * h[2] - b[2] * h[0]) + a[2] * (b[0] * h[1] - b[1] * h[0]);
        det /= scale * scale * scale;
      }
      if (!(det > 1e-12)) {
        r->line = el->line;
        return AmrInpFail(r, "element %ld is %s at its node %ld: %s", el->id, det < -1e-12 ? "inverted" : "degenerate", r->node[el->node[c]].id,
                        r->dim == 2 ? "give the 4 nodes counter-clockwise, convex" : "give nodes 1-4 counter-clockwise seen from nodes 5-8");
      }
    }
  }
  return 1;
}

typedef struct {
  long key[4]; /* sorted vertex indices, -1 padded */
  long code;   /* cell * 2 dim + face */
} inp_face_t;

static int cmp_face(const void *a, const void *b)
{
  const inp_face_t *x = a, *y = b;
  for (int i = 0; i < 4; i++)
    if (x->key[i] != y->key[i]) return x->key[i] < y->key[i] ? -1 : 1;
  return 0;
}

static void face_sort_key(long *k, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && k[j - 1] > k[j]; j--) {
      long s = k[j];
      k[j] = k[j - 1];
      k[j - 1] = s;
    }
  for (int i = n; i < 4; i++) k[i] = -1;
}

static int cmp_cellkey(const void *a, const void *b)
{
  const long *x = a, *y = b;
  for (int i = 0; i < 8; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/* Two cells on the same nodes (an element given twice under two ids)
 * would be two trees on top of each other, glued face to face. */
static int inp_twins(inp_reader *r, const AmrInpMesh *m)
{
  const int nv = 1 << r->dim;
  long (*key)[9] = malloc((size_t)(m->ncell + 1) * sizeof *key);
  if (!key) return AmrInpFail(r, "out of memory");
  for (long c = 0; c < m->ncell; c++) {
    for (int k = 0; k < 8; k++) key[c][k] = k < nv ? m->cell[c * nv + k] : -1;
    for (int i = 1; i < nv; i++)
      for (int j = i; j > 0 && key[c][j - 1] > key[c][j]; j--) {
        long t = key[c][j];
        key[c][j] = key[c][j - 1];
        key[c][j - 1] = t;
      }
    key[c][8] = c;
  }
  qsort(key, (size_t)m->ncell, sizeof *key, cmp_cellkey);
  int ok = 1;
  for (long c = 1; ok && c < m->ncell; c++)
    if (!cmp_cellkey(key[c - 1], key[c])) {
      const inp_elem_t *a = &r->elem[r->cellelem[key[c - 1][8]]], *b = &r->elem[r->cellelem[key[c][8]]];
      r->line = a->line > b->line ? a->line : b->line;
      ok = AmrInpFail(r, "elements %ld and %ld have the same nodes", a->id, b->id);
    }
  free(key);
  return ok;
}

/* Faces in more than two cells make p4est's connectivity builder go wrong;
 * the faces in one cell are the boundary, and the lower-dimensional
 * elements on them name them. */
static int inp_faces(inp_reader *r, const AmrInpMesh *m)
{
  const int nf = 2 * r->dim, fv = 1 << (r->dim - 1), nv = 1 << r->dim;
  const long n = m->ncell * nf;
  inp_face_t *f = malloc((size_t)(n + 1) * sizeof(inp_face_t));
  r->bface = calloc((size_t)n + 1, 1);
  r->bnode = calloc((size_t)r->nnode + 1, 1);
  if (!f || !r->bface || !r->bnode) {
    free(f);
    return AmrInpFail(r, "out of memory");
  }
  for (long c = 0; c < m->ncell; c++)
    for (int j = 0; j < nf; j++) {
      inp_face_t *t = &f[c * nf + j];
      for (int i = 0; i < fv; i++) t->key[i] = m->cell[c * nv + (r->dim == 2 ? amr_inp_face_corners2[j][i] : amr_inp_face_corners3[j][i])];
      face_sort_key(t->key, fv);
      t->code = c * nf + j;
    }
  qsort(f, (size_t)n, sizeof(inp_face_t), cmp_face);
  int ok = 1;
  for (long i = 0; ok && i < n;) {
    long j = i + 1;
    while (j < n && !cmp_face(&f[i], &f[j])) j++;
    if (j - i > 2) {
      const inp_elem_t *a = &r->elem[r->cellelem[f[i].code / nf]], *b = &r->elem[r->cellelem[f[i + 1].code / nf]], *c = &r->elem[r->cellelem[f[i + 2].code / nf]];
      r->line = c->line;
      ok = AmrInpFail(r, "the %s of nodes %ld, %ld%s is shared by more than two cells (elements %ld, %ld, %ld)", r->dim == 2 ? "edge" : "face",
                    r->node[r->vnode[f[i].key[0]]].id, r->node[r->vnode[f[i].key[1]]].id, r->dim == 2 ? "" : ", ...", a->id, b->id, c->id);
    }
    if (j - i == 1) {
      r->bface[f[i].code] = 1;
      for (int k = 0; k < fv; k++) r->bnode[r->vnode[f[i].key[k]]] = 1;
    }
    i = j;
  }
  /* every lower-dimensional element: which face it covers */
  for (long e = 0; ok && e < r->nelem; e++) {
    inp_elem_t *el = &r->elem[e];
    const int shape = r->sec[el->sec].shape;
    el->face = FACE_NONE;
    if (amr_inp_shape_dim[shape] != r->dim - 1 || amr_inp_shape_corners[shape] != fv) continue;
    inp_face_t key;
    int onvert = 1;
    for (int k = 0; k < fv; k++) onvert &= (key.key[k] = r->vert[el->node[k]]) >= 0;
    if (!onvert) continue;
    face_sort_key(key.key, fv);
    inp_face_t *hit = bsearch(&key, f, (size_t)n, sizeof(inp_face_t), cmp_face);
    if (hit) el->face = r->bface[hit->code] ? hit->code : FACE_INTERIOR;
  }
  /* a 2D element that is no face of a hexahedron is a 2D cell next to 3D ones */
  for (long e = 0; ok && r->dim == 3 && e < r->nelem; e++) {
    const inp_elem_t *el = &r->elem[e];
    if (amr_inp_shape_dim[r->sec[el->sec].shape] != 2 || el->face != FACE_NONE) continue;
    r->line = el->line;
    ok = AmrInpFail(r, "element %ld (%s) is no face of a hexahedron: mixed 2D and 3D cells are not supported", el->id, r->sec[el->sec].type);
  }
  free(f);
  return ok;
}

int AmrInpCheck(inp_reader *r, AmrInpMesh *m)
{
  return inp_ids(r) && inp_cells(r, m) && inp_orientation(r, m) && inp_twins(r, m) && inp_faces(r, m);
}
