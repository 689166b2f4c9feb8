/* Validation of Abaqus .inp coarse meshes before p4est reads them.
 *
 * p4est_connectivity_read_inp scans upper-cased lines with sscanf, indexes
 * its vertex array with the node ids from the file and then builds the face
 * and corner connectivity, aborting the run on inconsistencies.  A user who
 * passes a broken file must get a sentence naming the file and line instead,
 * so this reader accepts exactly the subset p4est handles and checks the
 * geometry p4est takes for granted. */
#define _POSIX_C_SOURCE 200809L /* getline */
#include "mesh.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
  const char *path;
  int dim;
  long line;
  char *msg;
  size_t msglen;
  double *xyz;     /* 3 per node, by id - 1 */
  char *seen;      /* node id already defined */
  long nnodes, capnodes;
  long *elem;      /* 2^dim node ids (0-based) per element, Abaqus order */
  long nelem, capelem;
} inp_reader;

static int inp_fail(inp_reader *r, const char *fmt, ...)
{
  va_list ap;
  int n = snprintf(r->msg, r->msglen, "mesh file '%s'", r->path);
  if (n < 0 || (size_t)n >= r->msglen) return 0;
  if (r->line > 0) {
    int m = snprintf(r->msg + n, r->msglen - (size_t)n, ", line %ld", r->line);
    if (m < 0) return 0;
    n += m;
  }
  if ((size_t)n + 2 < r->msglen) {
    r->msg[n++] = ':';
    r->msg[n++] = ' ';
    va_start(ap, fmt);
    vsnprintf(r->msg + n, r->msglen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return 0;
}

/* Parse "v1, v2, ..., vk" as p4est's sscanf("%lld, %lf, ...") does: each
 * number may have leading blanks, the comma must follow it directly.  Extra
 * fields are refused (p4est would silently ignore them). */
static int inp_fields(inp_reader *r, const char *s, int k, int integer, double *val, const char *what)
{
  for (int i = 0; i < k; i++) {
    char *end;
    errno = 0;
    if (integer) {
      long long v = strtoll(s, &end, 10);
      val[i] = (double)v;
    } else {
      val[i] = strtod(s, &end);
    }
    if (end == s) return inp_fail(r, "%s: field %d is not a number", what, i + 1);
    if (errno == ERANGE || !isfinite(val[i])) return inp_fail(r, "%s: field %d is out of range", what, i + 1);
    s = end;
    if (i < k - 1) {
      if (*s != ',') return inp_fail(r, "%s: expected %d comma-separated fields, found %d", what, k, i + 1);
      s++;
    }
  }
  while (isspace((unsigned char)*s)) s++;
  if (*s == ',') return inp_fail(r, "%s: more than %d fields", what, k);
  if (*s) return inp_fail(r, "%s: unexpected text '%s'", what, s);
  return 1;
}

static int inp_grow(void **p, long *cap, long need, size_t size)
{
  if (need <= *cap) return 1;
  long c = *cap ? 2 * *cap : 64;
  while (c < need) c *= 2;
  void *q = realloc(*p, (size_t)c * size);
  if (!q) return 0;
  *p = q;
  *cap = c;
  return 1;
}

static int inp_node(inp_reader *r, const char *s)
{
  double v[4];
  if (!inp_fields(r, s, 4, 0, v, "node line (id, x, y, z)")) return 0;
  double id = v[0];
  if (id != floor(id) || id < 1 || id > 1e8) return inp_fail(r, "node id %g must be an integer from 1 to 10^8", id);
  long i = (long)id - 1;
  if (!inp_grow((void **)&r->xyz, &r->capnodes, i + 1, 3 * sizeof(double))) return inp_fail(r, "out of memory");
  /* seen[] shares the node capacity; grow it alongside */
  char *q = realloc(r->seen, (size_t)r->capnodes);
  if (!q) return inp_fail(r, "out of memory");
  r->seen = q;
  for (long j = r->nnodes; j <= i; j++) r->seen[j] = 0;
  if (i + 1 > r->nnodes) r->nnodes = i + 1;
  if (r->seen[i]) return inp_fail(r, "node %ld is defined twice", i + 1);
  r->seen[i] = 1;
  memcpy(r->xyz + 3 * i, v + 1, 3 * sizeof(double));
  return 1;
}

static int inp_element(inp_reader *r, const char *s)
{
  int nv = 1 << r->dim;
  double v[9];
  if (!inp_fields(r, s, nv + 1, 1, v, nv == 4 ? "element line (id and 4 nodes)" : "element line (id and 8 nodes)")) return 0;
  if (!inp_grow((void **)&r->elem, &r->capelem, r->nelem + 1, (size_t)nv * sizeof(long))) return inp_fail(r, "out of memory");
  long *e = r->elem + (size_t)nv * (size_t)r->nelem;
  for (int k = 0; k < nv; k++) {
    if (v[k + 1] < 1) return inp_fail(r, "element %.0f names node %.0f; node ids start at 1", v[0], v[k + 1]);
    e[k] = (long)v[k + 1] - 1;
    for (int j = 0; j < k; j++)
      if (e[j] == e[k]) return inp_fail(r, "element %.0f names node %ld twice", v[0], e[k] + 1);
  }
  r->nelem++;
  return 1;
}

/* Which element section a keyword line opens: 1 accepted, 0 error, and
 * *reading tells whether the lines that follow are elements. */
static int inp_element_keyword(inp_reader *r, const char *upper, int *reading)
{
  static const char *quad[] = {"C2D4", "CPS4", "S4"};
  const char *t = strstr(upper, "TYPE=");
  if (!t) return inp_fail(r, "*ELEMENT without TYPE= (p4est needs TYPE=C2D4, CPS4 or S4 in 2D, C3D8 in 3D)");
  t += 5;
  int is_quad = 0, is_hex = strncmp(t, "C3D8", 4) == 0;
  for (size_t i = 0; i < sizeof quad / sizeof quad[0]; i++) is_quad |= strncmp(t, quad[i], strlen(quad[i])) == 0;
  if (r->dim == 2 && is_hex) return inp_fail(r, "element type C3D8 is a 3D hexahedron, but this 2D program needs quadrilaterals (C2D4, CPS4, S4): use amr3d");
  if (r->dim == 3 && is_quad) return inp_fail(r, "element type %.4s is a 2D quadrilateral, but this 3D program needs hexahedra (C3D8): use amr2d", t);
  if (!is_quad && !is_hex) {
    char type[32];
    size_t n = strcspn(t, ", \t\r\n");
    snprintf(type, sizeof type, "%.*s", (int)(n < 31 ? n : 31), t);
    return inp_fail(r, "element type '%s' is not supported (use %s)", type, r->dim == 2 ? "C2D4, CPS4 or S4" : "C3D8");
  }
  *reading = 1;
  return 1;
}

static int inp_parse(inp_reader *r, FILE *f)
{
  char *buf = NULL;
  size_t cap = 0;
  ssize_t len;
  enum { NONE, NODES, ELEMENTS } section = NONE;
  int ok = 1;
  while (ok && (len = getline(&buf, &cap, f)) != -1) {
    r->line++;
    if ((size_t)len != strlen(buf)) {
      ok = inp_fail(r, "binary data (a NUL byte)");
      break;
    }
    char *s = buf;
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
    if (!*s || (s[0] == '*' && s[1] == '*')) continue;
    if (s[0] == '*') {
      for (char *c = s; *c; c++) *c = (char)toupper((unsigned char)*c);
      int reading = 0;
      if (strncmp(s, "*NODE", 5) == 0 && (s[5] == '\0' || s[5] == ',')) section = NODES;
      else if (strncmp(s, "*ELEMENT", 8) == 0 && (s[8] == '\0' || s[8] == ',')) {
        ok = inp_element_keyword(r, s, &reading);
        section = reading ? ELEMENTS : NONE;
      } else section = NONE;
      continue;
    }
    if (section == NODES) ok = inp_node(r, s);
    else if (section == ELEMENTS) ok = inp_element(r, s);
  }
  free(buf);
  if (ok && ferror(f)) ok = inp_fail(r, "read error");
  return ok;
}

static int inp_check_nodes(inp_reader *r)
{
  if (r->nnodes == 0) return inp_fail(r, "no *NODE section with nodes");
  if (r->nelem == 0) return inp_fail(r, "no elements (need an *ELEMENT, TYPE=%s section)", r->dim == 2 ? "CPS4" : "C3D8");
  for (long i = 0; i < r->nnodes; i++)
    if (!r->seen[i]) return inp_fail(r, "node ids must be 1..%ld without gaps, but node %ld is missing", r->nnodes, i + 1);
  int nv = 1 << r->dim;
  for (long k = 0; k < r->nelem; k++)
    for (int j = 0; j < nv; j++)
      if (r->elem[k * nv + j] >= r->nnodes)
        return inp_fail(r, "element %ld (in file order) names node %ld, but the file defines nodes 1..%ld", k + 1, r->elem[k * nv + j] + 1, r->nnodes);
  if (r->dim == 2)
    for (long i = 1; i < r->nnodes; i++)
      if (r->xyz[3 * i + 2] != r->xyz[2]) return inp_fail(r, "a 2D mesh must lie in a plane z = const, but node %ld has z = %g", i + 1, r->xyz[3 * i + 2]);
  return 1;
}

static void inp_sub(const double *a, const double *b, double *d)
{
  for (int i = 0; i < 3; i++) d[i] = a[i] - b[i];
}

/* Orientation: every corner's edge vectors must form a positive frame, which
 * for quads means convex and counter-clockwise, and for hexes a positive
 * trilinear Jacobian at the corners in Abaqus ordering. */
static int inp_check_orientation(inp_reader *r)
{
  int nv = 1 << r->dim;
  for (long k = 0; k < r->nelem; k++) {
    const long *e = r->elem + (size_t)k * (size_t)nv;
    double scale = 0;
    for (int c = 1; c < nv; c++) {
      double d[3];
      inp_sub(r->xyz + 3 * e[c], r->xyz + 3 * e[0], d);
      scale = fmax(scale, sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]));
    }
    for (int c = 0; c < nv; c++) {
      double a[3], b[3], det;
      int bottom = c < 4, i = c % 4;
      int next = (i + 1) % 4, prev = (i + 3) % 4, off = bottom ? 0 : 4;
      int n1 = off + (bottom ? next : prev), n2 = off + (bottom ? prev : next);
      inp_sub(r->xyz + 3 * e[n1], r->xyz + 3 * e[c], a);
      inp_sub(r->xyz + 3 * e[n2], r->xyz + 3 * e[c], b);
      if (r->dim == 2) {
        det = a[0] * b[1] - a[1] * b[0];
        det /= scale * scale;
      } else {
        double h[3];
        inp_sub(r->xyz + 3 * e[bottom ? c + 4 : c - 4], r->xyz + 3 * e[c], h);
        det = a[0] * (b[1] * h[2] - b[2] * h[1]) - a[1] * (b[0] * h[2] - b[2] * h[0]) + a[2] * (b[0] * h[1] - b[1] * h[0]);
        det /= scale * scale * scale;
      }
      if (!(det > 1e-12))
        return inp_fail(r, "element %ld (in file order) is %s at its node %ld: %s", k + 1, det < -1e-12 ? "inverted" : "degenerate", e[c] + 1,
                        r->dim == 2 ? "give the 4 nodes counter-clockwise, convex" : "give nodes 1-4 counter-clockwise seen from nodes 5-8");
    }
  }
  return 1;
}

static int cmp_face(const void *a, const void *b)
{
  const long *x = a, *y = b;
  for (int i = 0; i < 5; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

/* A face (edge in 2D) in more than two elements makes p4est's connectivity
 * builder abort; find it here and name it. */
static int inp_check_faces(inp_reader *r)
{
  static const int qf[4][4] = {{0, 1, -1, -1}, {1, 2, -1, -1}, {2, 3, -1, -1}, {3, 0, -1, -1}};
  static const int hf[6][4] = {{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 5, 4}, {1, 2, 6, 5}, {2, 3, 7, 6}, {3, 0, 4, 7}};
  const int(*tab)[4] = r->dim == 2 ? qf : hf;
  int nv = 1 << r->dim, nf = 2 * r->dim, fv = r->dim == 2 ? 2 : 4;
  long n = r->nelem * nf;
  long *faces = malloc((size_t)n * 5 * sizeof(long));
  if (!faces) return inp_fail(r, "out of memory");
  for (long k = 0; k < r->nelem; k++)
    for (int f = 0; f < nf; f++) {
      long *t = faces + 5 * (k * nf + f);
      for (int j = 0; j < 4; j++) t[j] = tab[f][j] >= 0 ? r->elem[k * nv + tab[f][j]] : -1;
      for (int i = 1; i < fv; i++) /* sort the face's nodes: insertion */
        for (int j = i; j > 0 && t[j - 1] > t[j]; j--) {
          long s = t[j];
          t[j] = t[j - 1];
          t[j - 1] = s;
        }
      t[4] = k;
    }
  qsort(faces, (size_t)n, 5 * sizeof(long), cmp_face);
  int ok = 1;
  for (long i = 0; ok && i + 2 < n; i++)
    if (!memcmp(faces + 5 * i, faces + 5 * (i + 2), 4 * sizeof(long)))
      ok = inp_fail(r, "the %s of nodes %ld, %ld%s is shared by more than two elements (%ld, %ld, %ld in file order)", r->dim == 2 ? "edge" : "face",
                    faces[5 * i] + 1, faces[5 * i + 1] + 1, r->dim == 2 ? "" : ", ...", faces[5 * i + 4] + 1, faces[5 * i + 9] + 1,
                    faces[5 * i + 14] + 1);
  free(faces);
  return ok;
}

int amr_inp_validate(const char *path, int dim, char *msg, size_t msglen)
{
  inp_reader r = {.path = path, .dim = dim, .msg = msg, .msglen = msglen};
  struct stat st;
  if (stat(path, &st)) return inp_fail(&r, "cannot open: %s", strerror(errno));
  if (S_ISDIR(st.st_mode)) return inp_fail(&r, "is a directory, not a mesh file");
  FILE *f = fopen(path, "r");
  if (!f) return inp_fail(&r, "cannot open: %s", strerror(errno));
  int ok = inp_parse(&r, f);
  fclose(f);
  r.line = 0;
  if (ok) ok = inp_check_nodes(&r);
  if (ok) ok = inp_check_orientation(&r);
  if (ok) ok = inp_check_faces(&r);
  free(r.xyz);
  free(r.seen);
  free(r.elem);
  return ok;
}
