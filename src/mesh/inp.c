/* The Abaqus .inp reader.
 *
 * Mesh generators write more than the cells: gmsh adds the boundary's line
 * and face elements (T3D2, and CPS4 faces in a 3D file) with one ELSET per
 * physical group, Abaqus/CAE wraps the mesh in *Part and *Instance and names
 * boundaries with *Surface over internal element sets, Cubit writes node and
 * side sets.  This reader takes the elements of the program's dimension as
 * the cells, the others only as names for boundary faces, and checks
 * everything p4est's connectivity builder takes for granted, so a broken
 * file ends in one sentence naming the file and line. */
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#include "mesh/inp.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { SH_UNKNOWN, SH_LINE, SH_TRI, SH_QUAD, SH_TET, SH_PYRAMID, SH_WEDGE, SH_HEX };
static const char *const shape_name[] = {"element", "line", "triangle", "quadrilateral", "tetrahedron", "pyramid", "wedge", "hexahedron"};
static const int shape_dim[] = {0, 1, 2, 2, 3, 3, 3, 3};
static const int shape_corners[] = {0, 2, 3, 4, 4, 5, 6, 8};

/* Abaqus corner order (counter-clockwise; hexes: 1-4 then 5-8 above them)
 * to p4est's z-order, and the p4est corners of each p4est face. */
static const int abaqus_to_z[8] = {0, 1, 3, 2, 4, 5, 7, 6};
static const int face_corners2[4][4] = {{0, 2, -1, -1}, {1, 3, -1, -1}, {0, 1, -1, -1}, {2, 3, -1, -1}};
static const int face_corners3[6][4] = {{0, 2, 4, 6}, {1, 3, 5, 7}, {0, 1, 4, 5}, {2, 3, 6, 7}, {0, 1, 2, 3}, {4, 5, 6, 7}};
/* Abaqus face labels S1.. (edges of 2D shells: E1..) as p4est faces */
static const int label_face2[4] = {2, 1, 3, 0};
static const int label_face3[6] = {4, 5, 2, 1, 3, 0};

#define INP_MAX_NODES 27 /* C3D27 */
#define INP_MAX_ID 2147483647L
#define INP_MAX_COORD 1e100
#define INP_MAX_NEST 16

typedef struct {
  long id;
  double x[3];
  long line;
} inp_node_t;

typedef struct {
  char type[32];
  int shape, nn; /* nn: nodes per element, 0 if the type is unknown */
  long line;
} inp_sec_t;

typedef struct {
  long id, line;
  int sec;
  long node[8]; /* corner node ids, after resolution node indices */
  long face;    /* lower-dimensional: cell * 2 dim + face on the boundary,
                   FACE_INTERIOR, or FACE_NONE */
} inp_elem_t;
#define FACE_INTERIOR (-2)
#define FACE_NONE (-1)

enum { M_ELEMS, M_NODES, M_FACES };
typedef struct {
  int kind;
  int ref;             /* -1: the ids lo..hi by step; else a set's members */
  long lo, hi, step;
  int label;           /* M_FACES: 0 every boundary face, else S1.. */
} inp_entry_t;

typedef struct {
  char name[AMR_INP_NAME];
  char why[AMR_INP_WHY];
  inp_entry_t *e;
  long n, cap;
} inp_set_t;

typedef struct {
  const char *path;
  int dim;
  long line;
  char *msg;
  size_t msglen;
  inp_node_t *node;
  long nnode, capnode;
  inp_sec_t *sec;
  long nsec, capsec;
  inp_elem_t *elem;
  long nelem, capelem;
  inp_set_t *set;
  long nset, capset;
  char **tok;
  long ntok, captok;
  int ninstance, instance_lines;
  double shift[3];
  /* after the parse */
  long (*elem_by_id)[2]; /* (id, element index), sorted by id */
  long *vert;       /* node index -> vertex index, -1 if no cell uses it */
  long *vnode;      /* vertex -> node index */
  long *cellelem;   /* cell -> element index */
  long *elemcell;   /* element -> cell index, -1 if not a cell */
  char *bface;      /* per cell face: on the boundary */
  char *bnode;      /* per node: on a boundary face */
} inp_reader;

static int inp_fail(inp_reader *r, const char *fmt, ...)
{
  va_list ap;
  int n = snprintf(r->msg, r->msglen, "mesh file '%s'", r->path);
  if (n < 0 || (size_t)n >= r->msglen) return 0;
  if (r->line > 0) {
    int m = snprintf(r->msg + n, r->msglen - (size_t)n, ", line %ld", r->line);
    if (m < 0 || (size_t)(n + m) >= r->msglen) return 0;
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

/* The first reason a set is not a boundary part is the one reported. */
static void set_why(inp_set_t *s, const char *fmt, ...)
{
  va_list ap;
  if (s->why[0]) return;
  va_start(ap, fmt);
  vsnprintf(s->why, sizeof s->why, fmt, ap);
  va_end(ap);
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

static char *trim(char *s)
{
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
  return s;
}

/* Split a data line at its commas into r->tok; a final comma (gmsh ends
 * set lines with one; Abaqus uses it to continue an element on the next
 * line) is reported in *trailing, not as an empty field. */
static int inp_split(inp_reader *r, char *s, int *trailing)
{
  r->ntok = 0;
  *trailing = 0;
  for (;;) {
    char *c = strchr(s, ',');
    if (c) *c = '\0';
    char *t = trim(s);
    if (!c && !*t && r->ntok > 0) {
      *trailing = 1;
      break;
    }
    if (!inp_grow((void **)&r->tok, &r->captok, r->ntok + 1, sizeof(char *))) return inp_fail(r, "out of memory");
    r->tok[r->ntok++] = t;
    if (!c) break;
    s = c + 1;
  }
  return 1;
}

static int parse_int(const char *t, long *v)
{
  char *end;
  errno = 0;
  long long x = strtoll(t, &end, 10);
  if (end == t || *end || errno == ERANGE || x < LONG_MIN / 2 || x > LONG_MAX / 2) return 0;
  *v = (long)x;
  return 1;
}

static int parse_real(const char *t, double *v)
{
  char *end;
  errno = 0;
  *v = strtod(t, &end);
  return end != t && !*end && errno != ERANGE && isfinite(*v);
}

static int inp_id(inp_reader *r, const char *t, int field, const char *what, long *id)
{
  if (!*t) return inp_fail(r, "%s: field %d is empty", what, field);
  if (!parse_int(t, id)) return inp_fail(r, "%s: field %d ('%.40s') is not an integer", what, field, t);
  if (*id < 1 || *id > INP_MAX_ID) return inp_fail(r, "%s: field %d: id %ld is not from 1 to %ld", what, field, *id, INP_MAX_ID);
  return 1;
}

/* ---- keyword lines ------------------------------------------------------ */

typedef struct {
  char word[40];   /* upper case, blanks collapsed: "END PART" */
  char *key[16];   /* upper case, no blanks */
  char *val[16];   /* as written, quotes removed; "" for a flag */
  int n;
} inp_keyword_t;

static void keyword_parse(char *s, inp_keyword_t *k)
{
  char *rest = strchr(s, ',');
  size_t w = 0;
  int blank = 0;
  if (rest) *rest++ = '\0';
  for (s++; *s; s++) {
    if (isspace((unsigned char)*s)) {
      blank = w > 0;
      continue;
    }
    if (blank && w + 1 < sizeof k->word) k->word[w++] = ' ';
    blank = 0;
    if (w + 1 < sizeof k->word) k->word[w++] = (char)toupper((unsigned char)*s);
  }
  k->word[w] = '\0';
  k->n = 0;
  while (rest && k->n < 16) {
    char *p = rest, *eq, *v = (char *)"", *o;
    if ((rest = strchr(p, ','))) *rest++ = '\0';
    if ((eq = strchr(p, '='))) {
      *eq = '\0';
      v = trim(eq + 1);
      size_t n = strlen(v);
      if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        v[n - 1] = '\0';
        v++;
      }
    }
    char *key = p;
    for (o = p; *p; p++)
      if (!isspace((unsigned char)*p)) *o++ = (char)toupper((unsigned char)*p);
    *o = '\0';
    if (!*key) continue;
    k->key[k->n] = key;
    k->val[k->n++] = v;
  }
}

static const char *keyword_get(const inp_keyword_t *k, const char *key)
{
  for (int i = 0; i < k->n; i++)
    if (!strcmp(k->key[i], key)) return k->val[i];
  return NULL;
}

/* The shape and node count of an Abaqus element type (upper case); an
 * unknown type keeps SH_UNKNOWN and its elements are skipped. */
static void classify(const char *t, inp_sec_t *s)
{
  static const char *const solid[] = {"DC3D", "AC3D", "C3D"};
  static const char *const plane[] = {"CPEG", "CPS", "CPE", "CGAX", "CAX", "DC2D", "DCAX", "C2D", "SFM3D", "M3D", "R3D", "DS", "S"};
  static const char *const line[] = {"T2D", "T3D", "RB2D", "RB3D", "R2D", "DC1D"};
  const char *const *fam[3] = {line, plane, solid};
  const size_t nfam[3] = {sizeof line / sizeof *line, sizeof plane / sizeof *plane, sizeof solid / sizeof *solid};
  s->shape = SH_UNKNOWN;
  s->nn = 0;
  if ((t[0] == 'B' && (t[1] == '2' || t[1] == '3') && isdigit((unsigned char)t[2])) || (!strncmp(t, "SAX", 3) && isdigit((unsigned char)t[3]))) {
    int d = t[0] == 'B' ? t[2] - '0' : t[3] - '0';
    s->shape = SH_LINE;
    s->nn = t[0] == 'B' ? (d == 2 ? 3 : 2) : d + 1;
    return;
  }
  for (int f = 0; f < 3; f++)
    for (size_t i = 0; i < nfam[f]; i++) {
      size_t l = strlen(fam[f][i]);
      if (strncmp(t, fam[f][i], l) || !isdigit((unsigned char)t[l])) continue;
      long n = strtol(t + l, NULL, 10);
      if (f == 0 && (n == 2 || n == 3)) s->shape = SH_LINE;
      if (f == 1 && (n == 3 || n == 6)) s->shape = SH_TRI;
      if (f == 1 && (n == 4 || n == 8 || n == 9)) s->shape = SH_QUAD;
      if (f == 2 && (n == 4 || n == 10)) s->shape = SH_TET;
      if (f == 2 && (n == 5 || n == 13)) s->shape = SH_PYRAMID;
      if (f == 2 && (n == 6 || n == 15)) s->shape = SH_WEDGE;
      if (f == 2 && (n == 8 || n == 20 || n == 27)) s->shape = SH_HEX;
      if (s->shape != SH_UNKNOWN) s->nn = (int)n;
      return;
    }
}

/* ---- sets --------------------------------------------------------------- */

static int set_find(const inp_reader *r, const char *name)
{
  for (long i = 0; i < r->nset; i++)
    if (!strcasecmp(r->set[i].name, name)) return (int)i;
  /* Abaqus/CAE qualifies part sets by their instance: "Part-1-1.Set-1" */
  const char *dot = strrchr(name, '.');
  return dot && dot[1] ? set_find(r, dot + 1) : -1;
}

static int set_get(inp_reader *r, const char *name, const char *keyword, int *index)
{
  if (!*name) return inp_fail(r, "%s needs a name", keyword);
  int i = set_find(r, name);
  if (i < 0) {
    if (r->nset >= 1000000) return inp_fail(r, "more than a million sets");
    if (!inp_grow((void **)&r->set, &r->capset, r->nset + 1, sizeof(inp_set_t))) return inp_fail(r, "out of memory");
    i = (int)r->nset++;
    memset(&r->set[i], 0, sizeof(inp_set_t));
    snprintf(r->set[i].name, sizeof r->set[i].name, "%s", name);
  }
  *index = i;
  return 1;
}

static int set_add(inp_reader *r, int s, inp_entry_t e)
{
  inp_set_t *set = &r->set[s];
  inp_entry_t *last = set->n ? &set->e[set->n - 1] : NULL;
  /* consecutive ids, as in every node and element section, stay one range */
  if (last && e.ref < 0 && e.lo == e.hi && last->ref < 0 && last->kind == e.kind && last->label == e.label && last->step == 1 && last->hi + 1 == e.lo) {
    last->hi = e.lo;
    return 1;
  }
  if (!inp_grow((void **)&set->e, &set->cap, set->n + 1, sizeof(inp_entry_t))) return inp_fail(r, "out of memory");
  set->e[set->n++] = e;
  return 1;
}

static int set_add_id(inp_reader *r, int s, int kind, long id, int label)
{
  inp_entry_t e = {kind, -1, id, id, 1, label};
  return set_add(r, s, e);
}

/* One member of a set's data line: an id or the name of an earlier set. */
static int set_member(inp_reader *r, int s, int kind, const char *t, int label)
{
  long id;
  if (parse_int(t, &id)) {
    if (id < 1 || id > INP_MAX_ID) {
      set_why(&r->set[s], "names %s %ld (line %ld)", kind == M_NODES ? "node" : "element", id, r->line);
      return 1;
    }
    return set_add_id(r, s, kind, id, label);
  }
  int ref = set_find(r, t);
  if (ref < 0) {
    set_why(&r->set[s], "refers to set '%.80s' (line %ld), which the file does not define before it", t, r->line);
    return 1;
  }
  inp_entry_t e = {kind, ref, 0, 0, 1, label};
  return set_add(r, s, e);
}

/* ---- data lines ----------------------------------------------------------- */

static int inp_node(inp_reader *r, int nset)
{
  double x[3] = {0, 0, 0};
  long id;
  if (r->ntok < 3 || r->ntok > 4)
    return inp_fail(r, "node line: expected id, x, y[, z] (3 or 4 comma-separated fields), found %ld", r->ntok);
  if (!inp_id(r, r->tok[0], 1, "node line", &id)) return 0;
  for (long i = 1; i < r->ntok; i++) {
    if (!parse_real(r->tok[i], &x[i - 1])) return inp_fail(r, "node line: field %ld ('%.40s') is not a number", i + 1, r->tok[i]);
    if (fabs(x[i - 1]) > INP_MAX_COORD) return inp_fail(r, "node line: field %ld (%g) is out of range", i + 1, x[i - 1]);
  }
  if (!inp_grow((void **)&r->node, &r->capnode, r->nnode + 1, sizeof(inp_node_t))) return inp_fail(r, "out of memory");
  inp_node_t *n = &r->node[r->nnode++];
  n->id = id;
  n->line = r->line;
  memcpy(n->x, x, sizeof x);
  return nset < 0 || set_add_id(r, nset, M_NODES, id, 0);
}

/* An element line; *pending carries an element whose line ended with a
 * comma on to the next line (long elements, as Abaqus allows). */
static int inp_element(inp_reader *r, int sec, int elset, int trailing, long *pending, long *have)
{
  const inp_sec_t *s = &r->sec[sec];
  char what[96];
  snprintf(what, sizeof what, "element line (type %s: id and %d nodes)", s->type, s->nn);
  for (long i = 0; i < r->ntok; i++) {
    long v;
    if (!inp_id(r, r->tok[i], (int)(*have + 1), what, &v)) return 0;
    if (*have == 0) {
      if (!inp_grow((void **)&r->elem, &r->capelem, r->nelem + 1, sizeof(inp_elem_t))) return inp_fail(r, "out of memory");
      inp_elem_t *e = &r->elem[r->nelem];
      memset(e, 0, sizeof *e);
      e->id = v;
      e->line = r->line;
      e->sec = sec;
    } else {
      inp_elem_t *e = &r->elem[r->nelem];
      if (*have > s->nn) return inp_fail(r, "%s: more than %d nodes", what, s->nn);
      int k = (int)*have - 1, corners = shape_corners[s->shape];
      if (k < corners) {
        for (int j = 0; j < k; j++)
          if (e->node[j] == v) return inp_fail(r, "element %ld names node %ld twice", e->id, v);
        e->node[k] = v;
      }
    }
    (*have)++;
  }
  if (*have < s->nn + 1 && trailing) {
    *pending = 1;
    return 1;
  }
  if (*have != s->nn + 1) return inp_fail(r, "%s: found %ld fields", what, *have);
  *pending = 0;
  *have = 0;
  r->nelem++;
  return elset < 0 || set_add_id(r, elset, M_ELEMS, r->elem[r->nelem - 1].id, 0);
}

/* "S3" (faces of solids and plane elements) or "E3" (edges of shells):
 * the label number, or 0 if the label names no face of a cell. */
static int face_label(const char *t)
{
  if ((toupper((unsigned char)t[0]) == 'S' || toupper((unsigned char)t[0]) == 'E') && t[1] >= '1' && t[1] <= '6' && !t[2]) return t[1] - '0';
  return 0;
}

enum { S_NONE, S_NODE, S_ELEM, S_SKIP, S_SET, S_SURF, S_INSTANCE };

static int inp_keyword(inp_reader *r, char *s, int *state, int *cur, int *kind, int *generate, int *sec)
{
  inp_keyword_t k;
  const char *v;
  keyword_parse(s, &k);
  *state = S_NONE;
  *cur = -1;
  *generate = keyword_get(&k, "GENERATE") != NULL;
  if (!strcmp(k.word, "NODE")) {
    *state = S_NODE;
    if ((v = keyword_get(&k, "NSET")) && !set_get(r, v, "NSET=", cur)) return 0;
  } else if (!strcmp(k.word, "ELEMENT")) {
    if (!(v = keyword_get(&k, "TYPE")) || !*v) return inp_fail(r, "*ELEMENT without TYPE= (e.g. TYPE=CPS4 for quadrilaterals, C3D8 for hexahedra)");
    if (!inp_grow((void **)&r->sec, &r->capsec, r->nsec + 1, sizeof(inp_sec_t))) return inp_fail(r, "out of memory");
    inp_sec_t *es = &r->sec[r->nsec];
    size_t n = 0;
    for (; v[n] && n + 1 < sizeof es->type; n++) es->type[n] = (char)toupper((unsigned char)v[n]);
    es->type[n] = '\0';
    es->line = r->line;
    classify(es->type, es);
    *sec = (int)r->nsec++;
    *state = es->shape == SH_UNKNOWN ? S_SKIP : S_ELEM;
    if ((v = keyword_get(&k, "ELSET")) && !set_get(r, v, "ELSET=", cur)) return 0;
  } else if (!strcmp(k.word, "ELSET") || !strcmp(k.word, "NSET")) {
    const int nodes = k.word[0] == 'N';
    if (!(v = keyword_get(&k, nodes ? "NSET" : "ELSET"))) return inp_fail(r, "*%s without %s=NAME", k.word, k.word);
    if (!set_get(r, v, nodes ? "NSET=" : "ELSET=", cur)) return 0;
    *state = S_SET;
    *kind = nodes ? M_NODES : M_ELEMS;
  } else if (!strcmp(k.word, "SURFACE")) {
    if (!(v = keyword_get(&k, "NAME"))) return inp_fail(r, "*SURFACE without NAME=");
    const char *type = keyword_get(&k, "TYPE");
    if (type && strcasecmp(type, "ELEMENT") && strcasecmp(type, "NODE")) return 1; /* analytical, cutting: no mesh faces */
    if (!set_get(r, v, "NAME=", cur)) return 0;
    *state = type && !strcasecmp(type, "NODE") ? S_SET : S_SURF;
    *kind = *state == S_SET ? M_NODES : M_FACES;
    *generate = 0;
  } else if (!strcmp(k.word, "INSTANCE")) {
    if (++r->ninstance > 1) return inp_fail(r, "a second *INSTANCE: only meshes of one part instance are supported");
    *state = S_INSTANCE;
  } else if (!strcmp(k.word, "INCLUDE")) {
    return inp_fail(r, "*INCLUDE is not supported: write the included file into this one");
  }
  return 1;
}

static int inp_data(inp_reader *r, char *s, int state, int cur, int kind, int generate, int sec, long *pending, long *have)
{
  int trailing;
  if (!inp_split(r, s, &trailing)) return 0;
  switch (state) {
  case S_NODE:
    return inp_node(r, cur);
  case S_ELEM:
    return inp_element(r, sec, cur, trailing, pending, have);
  case S_SET:
    if (generate) {
      long v[3] = {0, 0, 1};
      if (r->ntok < 2 || r->ntok > 3) return inp_fail(r, "set line with GENERATE: expected first, last[, step], found %ld fields", r->ntok);
      for (long i = 0; i < r->ntok; i++)
        if (!parse_int(r->tok[i], &v[i])) return inp_fail(r, "set line with GENERATE: field %ld ('%.40s') is not an integer", i + 1, r->tok[i]);
      if (v[0] < 1 || v[1] < v[0] || v[2] < 1 || v[1] > INP_MAX_ID)
        return inp_fail(r, "set line with GENERATE: %ld, %ld, %ld is not a range of ids from 1 to %ld", v[0], v[1], v[2], INP_MAX_ID);
      inp_entry_t e = {kind, -1, v[0], v[1], v[2], 0};
      return set_add(r, cur, e);
    }
    for (long i = 0; i < r->ntok; i++) {
      if (!*r->tok[i]) return inp_fail(r, "set line: field %ld is empty", i + 1);
      if (!set_member(r, cur, kind, r->tok[i], 0)) return 0;
    }
    return 1;
  case S_SURF: {
    if (r->ntok > 2 || !*r->tok[0]) return inp_fail(r, "surface line: expected an element set or element id and a face label such as S1");
    int label = 0;
    if (r->ntok == 2) {
      label = face_label(r->tok[1]);
      if (!label) {
        set_why(&r->set[cur], "has the face label '%.20s' (line %ld), which is not a side of a cell", r->tok[1], r->line);
        return 1;
      }
    }
    return set_member(r, cur, M_FACES, r->tok[0], label);
  }
  case S_INSTANCE:
    /* the first line shifts the part, a second would rotate it */
    if (r->instance_lines++ > 0) return inp_fail(r, "*INSTANCE with a rotation is not supported");
    if (r->ntok != 3) return inp_fail(r, "*INSTANCE translation: expected 3 comma-separated numbers, found %ld", r->ntok);
    for (int i = 0; i < 3; i++)
      if (!parse_real(r->tok[i], &r->shift[i]) || fabs(r->shift[i]) > INP_MAX_COORD)
        return inp_fail(r, "*INSTANCE translation: field %d ('%.40s') is not a number", i + 1, r->tok[i]);
    return 1;
  }
  return 1;
}

static int inp_lines(inp_reader *r, const char *text, size_t len)
{
  char *buf = NULL;
  size_t cap = 0, pos = 0;
  int state = S_NONE, cur = -1, kind = M_ELEMS, generate = 0, sec = -1, ok = 1;
  long pending = 0, have = 0, pending_line = 0;
  while (ok && pos < len) {
    const char *nl = memchr(text + pos, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
    r->line++;
    if (memchr(text + pos, '\0', n)) {
      ok = inp_fail(r, "binary data (a NUL byte)");
      break;
    }
    if (n + 1 > cap) {
      char *b = realloc(buf, n + 1);
      if (!b) {
        ok = inp_fail(r, "out of memory");
        break;
      }
      buf = b;
      cap = n + 1;
    }
    memcpy(buf, text + pos, n);
    buf[n] = '\0';
    pos += n + 1;
    char *s = trim(buf);
    if (!*s || (s[0] == '*' && s[1] == '*')) continue;
    if (s[0] == '*') {
      if (pending) {
        r->line = pending_line;
        ok = inp_fail(r, "element %ld: the line ends with a comma but no more nodes follow", r->elem[r->nelem].id);
        break;
      }
      ok = inp_keyword(r, s, &state, &cur, &kind, &generate, &sec);
      continue;
    }
    if (state == S_NONE || state == S_SKIP) continue;
    ok = inp_data(r, s, state, cur, kind, generate, sec, &pending, &have);
    if (pending) pending_line = r->line;
  }
  if (ok && pending) {
    r->line = pending_line;
    ok = inp_fail(r, "element %ld: the line ends with a comma but no more nodes follow", r->elem[r->nelem].id);
  }
  free(buf);
  return ok;
}

/* ---- the mesh from the parsed file ---------------------------------------- */

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
static long node_lower(const inp_reader *r, long id)
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
static long elem_lower(const inp_reader *r, long id)
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
  long lo = node_lower(r, id);
  return lo < r->nnode && r->node[lo].id == id ? lo : -1;
}

static int inp_ids(inp_reader *r)
{
  qsort(r->node, (size_t)r->nnode, sizeof(inp_node_t), cmp_node);
  for (long i = 1; i < r->nnode; i++)
    if (r->node[i].id == r->node[i - 1].id) {
      r->line = r->node[i].line > r->node[i - 1].line ? r->node[i].line : r->node[i - 1].line;
      return inp_fail(r, "node %ld is defined twice (lines %ld and %ld)", r->node[i].id, r->node[i - 1].line < r->node[i].line ? r->node[i - 1].line : r->node[i].line, r->line);
    }
  if (!(r->elem_by_id = malloc((size_t)(r->nelem + 1) * sizeof *r->elem_by_id))) return inp_fail(r, "out of memory");
  for (long i = 0; i < r->nelem; i++) {
    r->elem_by_id[i][0] = r->elem[i].id;
    r->elem_by_id[i][1] = i;
  }
  qsort(r->elem_by_id, (size_t)r->nelem, sizeof *r->elem_by_id, cmp_elem);
  for (long i = 1; i < r->nelem; i++) {
    const inp_elem_t *a = &r->elem[r->elem_by_id[i - 1][1]], *b = &r->elem[r->elem_by_id[i][1]];
    if (a->id == b->id) {
      r->line = a->line > b->line ? a->line : b->line;
      return inp_fail(r, "element %ld is defined twice (lines %ld and %ld)", a->id, a->line < b->line ? a->line : b->line, r->line);
    }
  }
  for (long i = 0; i < r->nelem; i++) {
    inp_elem_t *e = &r->elem[i];
    for (int k = 0; k < shape_corners[r->sec[e->sec].shape]; k++) {
      long n = node_index(r, e->node[k]);
      r->line = e->line;
      if (n < 0) return inp_fail(r, "element %ld names node %ld, which the file does not define", e->id, e->node[k]);
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
  if (!p) return inp_fail(r, "out of memory");
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
      return inp_fail(r, "nodes %ld and %ld are both at (%g, %g, %g): the cells meeting there do not connect (merge the nodes; gmsh: Coherence)", a, b, x, y,
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
    int sec = r->elem[i].sec, d = shape_dim[r->sec[sec].shape];
    if (d > fdim) fdim = d;
    if (first[d] < 0) first[d] = sec;
  }
  if (fdim < 2) {
    if (r->nsec) {
      r->line = r->sec[0].line;
      return inp_fail(r, "no cells: the elements (first type %s) include no %s or %s", r->sec[0].type, cells2, cells3);
    }
    return inp_fail(r, "no cells: no *ELEMENT section of %s or %s", cells2, cells3);
  }
  const inp_sec_t *fs = &r->sec[first[fdim]];
  r->line = fs->line;
  if (fdim == 3 && r->dim == 2)
    return inp_fail(r, "element type %s is a 3D %s, but this 2D program needs %s: use amr3d", fs->type, shape_name[fs->shape], cells2);
  if (fdim == 2 && r->dim == 3)
    return inp_fail(r, "element type %s is a 2D %s, but this 3D program needs %s: use amr2d", fs->type, shape_name[fs->shape], cells3);
  for (long s = 0; s < r->nsec; s++) {
    const inp_sec_t *c = &r->sec[s];
    r->line = c->line;
    if (shape_dim[c->shape] != r->dim || c->nn == 1 << r->dim) continue;
    if (c->shape == SH_QUAD || c->shape == SH_HEX)
      return inp_fail(r, "element type %s has %d nodes: only linear %s are cells (gmsh: Mesh.ElementOrder = 1)", c->type, c->nn, r->dim == 2 ? cells2 : cells3);
    return inp_fail(r, "element type %s (%s) cannot be a cell of a %s forest: mesh with %s (gmsh: %s)", c->type, shape_name[c->shape],
                    r->dim == 2 ? "quadtree" : "octree", r->dim == 2 ? cells2 : cells3,
                    r->dim == 2 ? "Recombine Surface" : "a transfinite or extruded volume with Recombine");
  }
  r->line = 0;
  m->dim = r->dim;
  for (long i = 0; i < r->nelem; i++) m->ncell += shape_dim[r->sec[r->elem[i].sec].shape] == r->dim;
  if (m->ncell > INP_MAX_ID / 8) return inp_fail(r, "too many cells (%ld)", m->ncell);
  const int nv = 1 << r->dim;
  r->cellelem = malloc((size_t)m->ncell * sizeof(long));
  r->elemcell = malloc((size_t)(r->nelem + 1) * sizeof(long));
  r->vert = malloc((size_t)(r->nnode + 1) * sizeof(long));
  r->vnode = malloc((size_t)(r->nnode + 1) * sizeof(long));
  m->cell = malloc((size_t)m->ncell * nv * sizeof(long));
  if (!r->cellelem || !r->elemcell || !r->vert || !r->vnode || !m->cell) return inp_fail(r, "out of memory");
  for (long i = 0; i < r->nnode; i++) r->vert[i] = -1;
  for (long i = 0, c = 0; i < r->nelem; i++) {
    r->elemcell[i] = -1;
    if (shape_dim[r->sec[r->elem[i].sec].shape] == r->dim) {
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
  if (!(m->xyz = malloc((size_t)(m->nvert + 1) * 3 * sizeof(double)))) return inp_fail(r, "out of memory");
  for (long v = 0; v < m->nvert; v++)
    for (int a = 0; a < 3; a++) m->xyz[3 * v + a] = r->node[r->vnode[v]].x[a] + r->shift[a];
  for (long c = 0; c < m->ncell; c++)
    for (int k = 0; k < nv; k++) m->cell[c * nv + abaqus_to_z[k]] = r->vert[r->elem[r->cellelem[c]].node[k]];
  if (r->dim == 2)
    for (long v = 1; v < m->nvert; v++)
      if (m->xyz[3 * v + 2] != m->xyz[2])
        return inp_fail(r, "a 2D mesh must lie in a plane z = const, but node %ld has z = %g and node %ld z = %g", r->node[r->vnode[v]].id,
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
        return inp_fail(r, "element %ld is %s at its node %ld: %s", el->id, det < -1e-12 ? "inverted" : "degenerate", r->node[el->node[c]].id,
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
  if (!key) return inp_fail(r, "out of memory");
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
      ok = inp_fail(r, "elements %ld and %ld have the same nodes", a->id, b->id);
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
    return inp_fail(r, "out of memory");
  }
  for (long c = 0; c < m->ncell; c++)
    for (int j = 0; j < nf; j++) {
      inp_face_t *t = &f[c * nf + j];
      for (int i = 0; i < fv; i++) t->key[i] = m->cell[c * nv + (r->dim == 2 ? face_corners2[j][i] : face_corners3[j][i])];
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
      ok = inp_fail(r, "the %s of nodes %ld, %ld%s is shared by more than two cells (elements %ld, %ld, %ld)", r->dim == 2 ? "edge" : "face",
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
    if (shape_dim[shape] != r->dim - 1 || shape_corners[shape] != fv) continue;
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
    if (shape_dim[r->sec[el->sec].shape] != 2 || el->face != FACE_NONE) continue;
    r->line = el->line;
    ok = inp_fail(r, "element %ld (%s) is no face of a hexahedron: mixed 2D and 3D cells are not supported", el->id, r->sec[el->sec].type);
  }
  free(f);
  return ok;
}

/* ---- sets as boundary parts ------------------------------------------------- */

typedef struct {
  inp_reader *r;
  const AmrInpMesh *m;
  inp_set_t *s;
  char *fmark, *nmark;
} inp_resolve_t;

static void resolve_elem(inp_resolve_t *z, const inp_elem_t *el, int kind, int label)
{
  inp_reader *r = z->r;
  const int nf = 2 * r->dim, shape = r->sec[el->sec].shape;
  if (kind == M_FACES) {
    if (shape_dim[shape] != r->dim) {
      set_why(z->s, "has a face of element %ld (line %ld), which is not a cell", el->id, el->line);
      return;
    }
    const long c = r->elemcell[el - r->elem];
    if (label > nf) {
      set_why(z->s, "names side S%d of element %ld, which has %d sides", label, el->id, nf);
      return;
    }
    for (int f = 0; f < nf; f++) {
      const int want = r->dim == 2 ? label_face2[label ? label - 1 : 0] : label_face3[label ? label - 1 : 0];
      if (label && f != want) continue;
      if (r->bface[c * nf + f]) z->fmark[c * nf + f] = 1;
      else if (label) set_why(z->s, "names side S%d of element %ld, which is not on the domain boundary", label, el->id);
    }
    return;
  }
  if (shape_dim[shape] == r->dim) set_why(z->s, "holds cells (element %ld, line %ld), not boundary elements", el->id, el->line);
  else if (el->face >= 0) z->fmark[el->face] = 1;
  else if (el->face == FACE_INTERIOR) set_why(z->s, "holds element %ld (line %ld), which lies inside the domain, not on its boundary", el->id, el->line);
  else set_why(z->s, "holds element %ld (%s, line %ld), which is no %s of a cell", el->id, r->sec[el->sec].type, el->line, r->dim == 2 ? "edge" : "face");
}

static void resolve_entries(inp_resolve_t *z, const inp_set_t *from, int kind, int label, int depth)
{
  inp_reader *r = z->r;
  if (depth > INP_MAX_NEST) {
    set_why(z->s, "refers to sets nested more than %d deep", INP_MAX_NEST);
    return;
  }
  for (long i = 0; i < from->n; i++) {
    const inp_entry_t *e = &from->e[i];
    const int ekind = e->kind == M_NODES ? M_NODES : M_ELEMS, want = kind == M_NODES ? M_NODES : M_ELEMS;
    if (depth > 0 && ekind != want) continue;
    const int lab = depth > 0 ? label : e->label, k = depth > 0 ? kind : e->kind;
    if (e->ref >= 0) {
      resolve_entries(z, &r->set[e->ref], k, lab, depth + 1);
      continue;
    }
    if (k == M_NODES) {
      long j = node_lower(r, e->lo);
      if (e->lo == e->hi && (j >= r->nnode || r->node[j].id != e->lo)) set_why(z->s, "names node %ld, which the file does not define", e->lo);
      for (; j < r->nnode && r->node[j].id <= e->hi; j++)
        if ((r->node[j].id - e->lo) % e->step == 0) z->nmark[j] = 1;
      continue;
    }
    long j = elem_lower(r, e->lo);
    if (e->lo == e->hi && (j >= r->nelem || r->elem_by_id[j][0] != e->lo)) set_why(z->s, "names element %ld, which the file does not define", e->lo);
    for (; j < r->nelem && r->elem_by_id[j][0] <= e->hi; j++) {
      const inp_elem_t *el = &r->elem[r->elem_by_id[j][1]];
      if ((el->id - e->lo) % e->step == 0 && r->sec[el->sec].shape != SH_UNKNOWN) resolve_elem(z, el, k, lab);
    }
  }
}

static int inp_sets(inp_reader *r, AmrInpMesh *m)
{
  const int nf = 2 * r->dim, fv = 1 << (r->dim - 1), nv = 1 << r->dim;
  const long n = m->ncell * nf;
  inp_resolve_t z = {r, m, NULL, calloc((size_t)n + 1, 1), calloc((size_t)r->nnode + 1, 1)};
  m->set = calloc((size_t)r->nset + 1, sizeof(AmrInpSet));
  if (!z.fmark || !z.nmark || !m->set) {
    free(z.fmark);
    free(z.nmark);
    return inp_fail(r, "out of memory");
  }
  int ok = 1;
  for (long s = 0; ok && s < r->nset; s++) {
    AmrInpSet *out = &m->set[m->nsets++];
    z.s = &r->set[s];
    memset(z.fmark, 0, (size_t)n);
    memset(z.nmark, 0, (size_t)r->nnode);
    resolve_entries(&z, z.s, M_ELEMS, 0, 0);
    /* a node set names the boundary faces whose corners it holds */
    int nodes = 0;
    for (long i = 0; i < r->nnode; i++)
      if (z.nmark[i]) {
        nodes = 1;
        if (!r->bnode[i]) set_why(z.s, "holds node %ld (line %ld), which is not on the domain boundary", r->node[i].id, r->node[i].line);
      }
    for (long c = 0; nodes && c < m->ncell; c++)
      for (int f = 0; f < nf; f++) {
        int all = r->bface[c * nf + f];
        for (int k = 0; all && k < fv; k++) all = z.nmark[r->vnode[m->cell[c * nv + (r->dim == 2 ? face_corners2[f][k] : face_corners3[f][k])]]];
        if (all) z.fmark[c * nf + f] = 1;
      }
    memcpy(out->name, z.s->name, sizeof out->name);
    for (long i = 0; i < n; i++) out->nfaces += z.fmark[i];
    if (!out->nfaces) set_why(z.s, "names no boundary face");
    memcpy(out->why, z.s->why, sizeof out->why);
    if (out->why[0]) {
      out->nfaces = 0;
      continue;
    }
    if (!(out->face = malloc((size_t)out->nfaces * sizeof(long)))) {
      ok = inp_fail(r, "out of memory");
      break;
    }
    for (long i = 0, k = 0; i < n; i++)
      if (z.fmark[i]) out->face[k++] = i;
  }
  free(z.fmark);
  free(z.nmark);
  return ok;
}

void AmrInpFree(AmrInpMesh *m)
{
  free(m->xyz);
  free(m->cell);
  for (int s = 0; s < m->nsets; s++) free(m->set[s].face);
  free(m->set);
  memset(m, 0, sizeof *m);
}

int AmrInpParse(const char *path, const char *text, size_t len, int dim, AmrInpMesh *m, char *msg, size_t msglen)
{
  inp_reader r = {.path = path, .dim = dim, .msg = msg, .msglen = msglen};
  memset(m, 0, sizeof *m);
  int ok = inp_lines(&r, text, len);
  r.line = 0;
  if (ok && !r.nnode) ok = inp_fail(&r, "no *NODE section with nodes");
  if (ok) ok = inp_ids(&r);
  if (ok) ok = inp_cells(&r, m);
  if (ok) ok = inp_orientation(&r, m);
  if (ok) ok = inp_twins(&r, m);
  if (ok) ok = inp_faces(&r, m);
  if (ok) ok = inp_sets(&r, m);
  if (!ok) AmrInpFree(m);
  free(r.node);
  free(r.sec);
  free(r.elem);
  for (long s = 0; s < r.nset; s++) free(r.set[s].e);
  free(r.set);
  free(r.tok);
  free(r.elem_by_id);
  free(r.vert);
  free(r.vnode);
  free(r.cellelem);
  free(r.elemcell);
  free(r.bface);
  free(r.bnode);
  return ok;
}
