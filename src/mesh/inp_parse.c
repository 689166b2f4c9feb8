/* The Abaqus .inp reader's first pass (mesh/impl/inp.h): the file's lines
 * split into keyword lines (keywords and parameters case-insensitive) and
 * data lines (comma-separated fields, an element's nodes continued on the
 * next line after a final comma), every number and id checked as it is
 * read, into the reader's nodes, element sections, elements and set
 * definitions. */
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#include "mesh/impl/inp.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int AmrInpFail(inp_reader *r, const char *fmt, ...)
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

int AmrInpGrow(void **p, long *cap, long need, size_t size)
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
    if (!AmrInpGrow((void **)&r->tok, &r->captok, r->ntok + 1, sizeof(char *))) return AmrInpFail(r, "out of memory");
    r->tok[r->ntok++] = t;
    if (!c) break;
    s = c + 1;
  }
  return 1;
}

int AmrInpParseInt(const char *t, long *v)
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
  if (!*t) return AmrInpFail(r, "%s: field %d is empty", what, field);
  if (!AmrInpParseInt(t, id)) return AmrInpFail(r, "%s: field %d ('%.40s') is not an integer", what, field, t);
  if (*id < 1 || *id > INP_MAX_ID) return AmrInpFail(r, "%s: field %d: id %ld is not from 1 to %ld", what, field, *id, INP_MAX_ID);
  return 1;
}

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

static int inp_node(inp_reader *r, int nset)
{
  double x[3] = {0, 0, 0};
  long id;
  if (r->ntok < 3 || r->ntok > 4)
    return AmrInpFail(r, "node line: expected id, x, y[, z] (3 or 4 comma-separated fields), found %ld", r->ntok);
  if (!inp_id(r, r->tok[0], 1, "node line", &id)) return 0;
  for (long i = 1; i < r->ntok; i++) {
    if (!parse_real(r->tok[i], &x[i - 1])) return AmrInpFail(r, "node line: field %ld ('%.40s') is not a number", i + 1, r->tok[i]);
    if (fabs(x[i - 1]) > INP_MAX_COORD) return AmrInpFail(r, "node line: field %ld (%g) is out of range", i + 1, x[i - 1]);
  }
  if (!AmrInpGrow((void **)&r->node, &r->capnode, r->nnode + 1, sizeof(inp_node_t))) return AmrInpFail(r, "out of memory");
  inp_node_t *n = &r->node[r->nnode++];
  n->id = id;
  n->line = r->line;
  memcpy(n->x, x, sizeof x);
  return nset < 0 || AmrInpSetAddId(r, nset, M_NODES, id, 0);
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
      if (!AmrInpGrow((void **)&r->elem, &r->capelem, r->nelem + 1, sizeof(inp_elem_t))) return AmrInpFail(r, "out of memory");
      inp_elem_t *e = &r->elem[r->nelem];
      memset(e, 0, sizeof *e);
      e->id = v;
      e->line = r->line;
      e->sec = sec;
    } else {
      inp_elem_t *e = &r->elem[r->nelem];
      if (*have > s->nn) return AmrInpFail(r, "%s: more than %d nodes", what, s->nn);
      int k = (int)*have - 1, corners = amr_inp_shape_corners[s->shape];
      if (k < corners) {
        for (int j = 0; j < k; j++)
          if (e->node[j] == v) return AmrInpFail(r, "element %ld names node %ld twice", e->id, v);
        e->node[k] = v;
      }
    }
    (*have)++;
  }
  if (*have < s->nn + 1 && trailing) {
    *pending = 1;
    return 1;
  }
  if (*have != s->nn + 1) return AmrInpFail(r, "%s: found %ld fields", what, *have);
  *pending = 0;
  *have = 0;
  r->nelem++;
  return elset < 0 || AmrInpSetAddId(r, elset, M_ELEMS, r->elem[r->nelem - 1].id, 0);
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
    if ((v = keyword_get(&k, "NSET")) && !AmrInpSetGet(r, v, "NSET=", cur)) return 0;
  } else if (!strcmp(k.word, "ELEMENT")) {
    if (!(v = keyword_get(&k, "TYPE")) || !*v) return AmrInpFail(r, "*ELEMENT without TYPE= (e.g. TYPE=CPS4 for quadrilaterals, C3D8 for hexahedra)");
    if (!AmrInpGrow((void **)&r->sec, &r->capsec, r->nsec + 1, sizeof(inp_sec_t))) return AmrInpFail(r, "out of memory");
    inp_sec_t *es = &r->sec[r->nsec];
    size_t n = 0;
    for (; v[n] && n + 1 < sizeof es->type; n++) es->type[n] = (char)toupper((unsigned char)v[n]);
    es->type[n] = '\0';
    es->line = r->line;
    classify(es->type, es);
    *sec = (int)r->nsec++;
    *state = es->shape == SH_UNKNOWN ? S_SKIP : S_ELEM;
    if ((v = keyword_get(&k, "ELSET")) && !AmrInpSetGet(r, v, "ELSET=", cur)) return 0;
  } else if (!strcmp(k.word, "ELSET") || !strcmp(k.word, "NSET")) {
    const int nodes = k.word[0] == 'N';
    if (!(v = keyword_get(&k, nodes ? "NSET" : "ELSET"))) return AmrInpFail(r, "*%s without %s=NAME", k.word, k.word);
    if (!AmrInpSetGet(r, v, nodes ? "NSET=" : "ELSET=", cur)) return 0;
    *state = S_SET;
    *kind = nodes ? M_NODES : M_ELEMS;
  } else if (!strcmp(k.word, "SURFACE")) {
    if (!(v = keyword_get(&k, "NAME"))) return AmrInpFail(r, "*SURFACE without NAME=");
    const char *type = keyword_get(&k, "TYPE");
    if (type && strcasecmp(type, "ELEMENT") && strcasecmp(type, "NODE")) return 1; /* analytical, cutting: no mesh faces */
    if (!AmrInpSetGet(r, v, "NAME=", cur)) return 0;
    *state = type && !strcasecmp(type, "NODE") ? S_SET : S_SURF;
    *kind = *state == S_SET ? M_NODES : M_FACES;
    *generate = 0;
  } else if (!strcmp(k.word, "INSTANCE")) {
    if (++r->ninstance > 1) return AmrInpFail(r, "a second *INSTANCE: only meshes of one part instance are supported");
    *state = S_INSTANCE;
  } else if (!strcmp(k.word, "INCLUDE")) {
    return AmrInpFail(r, "*INCLUDE is not supported: write the included file into this one");
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
      if (r->ntok < 2 || r->ntok > 3) return AmrInpFail(r, "set line with GENERATE: expected first, last[, step], found %ld fields", r->ntok);
      for (long i = 0; i < r->ntok; i++)
        if (!AmrInpParseInt(r->tok[i], &v[i])) return AmrInpFail(r, "set line with GENERATE: field %ld ('%.40s') is not an integer", i + 1, r->tok[i]);
      if (v[0] < 1 || v[1] < v[0] || v[2] < 1 || v[1] > INP_MAX_ID)
        return AmrInpFail(r, "set line with GENERATE: %ld, %ld, %ld is not a range of ids from 1 to %ld", v[0], v[1], v[2], INP_MAX_ID);
      inp_entry_t e = {kind, -1, v[0], v[1], v[2], 0};
      return AmrInpSetAdd(r, cur, e);
    }
    for (long i = 0; i < r->ntok; i++) {
      if (!*r->tok[i]) return AmrInpFail(r, "set line: field %ld is empty", i + 1);
      if (!AmrInpSetMember(r, cur, kind, r->tok[i], 0)) return 0;
    }
    return 1;
  case S_SURF: {
    if (r->ntok > 2 || !*r->tok[0]) return AmrInpFail(r, "surface line: expected an element set or element id and a face label such as S1");
    int label = 0;
    if (r->ntok == 2) {
      label = face_label(r->tok[1]);
      if (!label) {
        AmrInpSetWhy(&r->set[cur], "has the face label '%.20s' (line %ld), which is not a side of a cell", r->tok[1], r->line);
        return 1;
      }
    }
    return AmrInpSetMember(r, cur, M_FACES, r->tok[0], label);
  }
  case S_INSTANCE:
    /* the first line shifts the part, a second would rotate it */
    if (r->instance_lines++ > 0) return AmrInpFail(r, "*INSTANCE with a rotation is not supported");
    if (r->ntok != 3) return AmrInpFail(r, "*INSTANCE translation: expected 3 comma-separated numbers, found %ld", r->ntok);
    for (int i = 0; i < 3; i++)
      if (!parse_real(r->tok[i], &r->shift[i]) || fabs(r->shift[i]) > INP_MAX_COORD)
        return AmrInpFail(r, "*INSTANCE translation: field %d ('%.40s') is not a number", i + 1, r->tok[i]);
    return 1;
  }
  return 1;
}

int AmrInpLines(inp_reader *r, const char *text, size_t len)
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
      ok = AmrInpFail(r, "binary data (a NUL byte)");
      break;
    }
    if (n + 1 > cap) {
      char *b = realloc(buf, n + 1);
      if (!b) {
        ok = AmrInpFail(r, "out of memory");
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
        ok = AmrInpFail(r, "element %ld: the line ends with a comma but no more nodes follow", r->elem[r->nelem].id);
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
    ok = AmrInpFail(r, "element %ld: the line ends with a comma but no more nodes follow", r->elem[r->nelem].id);
  }
  free(buf);
  return ok;
}
