/* The Abaqus .inp reader's sets (mesh/impl/inp.h): the sets as the file
 * defines them (*ELSET, *NSET, *SURFACE and the ELSET=/NSET= of a section,
 * members by id, range or earlier set), and after the checks each set
 * resolved to the boundary faces it names, or the reason it names none:
 * the mesh's boundary parts. */
#define _POSIX_C_SOURCE 200809L /* strcasecmp */
#include "mesh/impl/inp.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Abaqus face labels S1.. (edges of 2D shells: E1..) as p4est faces */
static const int label_face2[4] = {2, 1, 3, 0};
static const int label_face3[6] = {4, 5, 2, 1, 3, 0};

/* The first reason a set is not a boundary part is the one reported. */
void AmrInpSetWhy(inp_set_t *s, const char *fmt, ...)
{
  va_list ap;
  if (s->why[0]) return;
  va_start(ap, fmt);
  vsnprintf(s->why, sizeof s->why, fmt, ap);
  va_end(ap);
}

static int set_find(const inp_reader *r, const char *name)
{
  for (long i = 0; i < r->nset; i++)
    if (!strcasecmp(r->set[i].name, name)) return (int)i;
  /* Abaqus/CAE qualifies part sets by their instance: "Part-1-1.Set-1" */
  const char *dot = strrchr(name, '.');
  return dot && dot[1] ? set_find(r, dot + 1) : -1;
}

int AmrInpSetGet(inp_reader *r, const char *name, const char *keyword, int *index)
{
  if (!*name) return AmrInpFail(r, "%s needs a name", keyword);
  int i = set_find(r, name);
  if (i < 0) {
    if (r->nset >= 1000000) return AmrInpFail(r, "more than a million sets");
    if (!AmrInpGrow((void **)&r->set, &r->capset, r->nset + 1, sizeof(inp_set_t))) return AmrInpFail(r, "out of memory");
    i = (int)r->nset++;
    memset(&r->set[i], 0, sizeof(inp_set_t));
    snprintf(r->set[i].name, sizeof r->set[i].name, "%s", name);
  }
  *index = i;
  return 1;
}

int AmrInpSetAdd(inp_reader *r, int s, inp_entry_t e)
{
  inp_set_t *set = &r->set[s];
  inp_entry_t *last = set->n ? &set->e[set->n - 1] : NULL;
  /* consecutive ids, as in every node and element section, stay one range */
  if (last && e.ref < 0 && e.lo == e.hi && last->ref < 0 && last->kind == e.kind && last->label == e.label && last->step == 1 && last->hi + 1 == e.lo) {
    last->hi = e.lo;
    return 1;
  }
  if (!AmrInpGrow((void **)&set->e, &set->cap, set->n + 1, sizeof(inp_entry_t))) return AmrInpFail(r, "out of memory");
  set->e[set->n++] = e;
  return 1;
}

int AmrInpSetAddId(inp_reader *r, int s, int kind, long id, int label)
{
  inp_entry_t e = {kind, -1, id, id, 1, label};
  return AmrInpSetAdd(r, s, e);
}

/* One member of a set's data line: an id or the name of an earlier set. */
int AmrInpSetMember(inp_reader *r, int s, int kind, const char *t, int label)
{
  long id;
  if (AmrInpParseInt(t, &id)) {
    if (id < 1 || id > INP_MAX_ID) {
      AmrInpSetWhy(&r->set[s], "names %s %ld (line %ld)", kind == M_NODES ? "node" : "element", id, r->line);
      return 1;
    }
    return AmrInpSetAddId(r, s, kind, id, label);
  }
  int ref = set_find(r, t);
  if (ref < 0) {
    AmrInpSetWhy(&r->set[s], "refers to set '%.80s' (line %ld), which the file does not define before it", t, r->line);
    return 1;
  }
  inp_entry_t e = {kind, ref, 0, 0, 1, label};
  return AmrInpSetAdd(r, s, e);
}

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
    if (amr_inp_shape_dim[shape] != r->dim) {
      AmrInpSetWhy(z->s, "has a face of element %ld (line %ld), which is not a cell", el->id, el->line);
      return;
    }
    const long c = r->elemcell[el - r->elem];
    if (label > nf) {
      AmrInpSetWhy(z->s, "names side S%d of element %ld, which has %d sides", label, el->id, nf);
      return;
    }
    for (int f = 0; f < nf; f++) {
      const int want = r->dim == 2 ? label_face2[label ? label - 1 : 0] : label_face3[label ? label - 1 : 0];
      if (label && f != want) continue;
      if (r->bface[c * nf + f]) z->fmark[c * nf + f] = 1;
      else if (label) AmrInpSetWhy(z->s, "names side S%d of element %ld, which is not on the domain boundary", label, el->id);
    }
    return;
  }
  if (amr_inp_shape_dim[shape] == r->dim) AmrInpSetWhy(z->s, "holds cells (element %ld, line %ld), not boundary elements", el->id, el->line);
  else if (el->face >= 0) z->fmark[el->face] = 1;
  else if (el->face == FACE_INTERIOR) AmrInpSetWhy(z->s, "holds element %ld (line %ld), which lies inside the domain, not on its boundary", el->id, el->line);
  else AmrInpSetWhy(z->s, "holds element %ld (%s, line %ld), which is no %s of a cell", el->id, r->sec[el->sec].type, el->line, r->dim == 2 ? "edge" : "face");
}

static void resolve_entries(inp_resolve_t *z, const inp_set_t *from, int kind, int label, int depth)
{
  inp_reader *r = z->r;
  if (depth > INP_MAX_NEST) {
    AmrInpSetWhy(z->s, "refers to sets nested more than %d deep", INP_MAX_NEST);
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
      long j = AmrInpNodeLower(r, e->lo);
      if (e->lo == e->hi && (j >= r->nnode || r->node[j].id != e->lo)) AmrInpSetWhy(z->s, "names node %ld, which the file does not define", e->lo);
      for (; j < r->nnode && r->node[j].id <= e->hi; j++)
        if ((r->node[j].id - e->lo) % e->step == 0) z->nmark[j] = 1;
      continue;
    }
    long j = AmrInpElemLower(r, e->lo);
    if (e->lo == e->hi && (j >= r->nelem || r->elem_by_id[j][0] != e->lo)) AmrInpSetWhy(z->s, "names element %ld, which the file does not define", e->lo);
    for (; j < r->nelem && r->elem_by_id[j][0] <= e->hi; j++) {
      const inp_elem_t *el = &r->elem[r->elem_by_id[j][1]];
      if ((el->id - e->lo) % e->step == 0 && r->sec[el->sec].shape != SH_UNKNOWN) resolve_elem(z, el, k, lab);
    }
  }
}

int AmrInpSets(inp_reader *r, AmrInpMesh *m)
{
  const int nf = 2 * r->dim, fv = 1 << (r->dim - 1), nv = 1 << r->dim;
  const long n = m->ncell * nf;
  inp_resolve_t z = {r, m, NULL, calloc((size_t)n + 1, 1), calloc((size_t)r->nnode + 1, 1)};
  m->set = calloc((size_t)r->nset + 1, sizeof(AmrInpSet));
  if (!z.fmark || !z.nmark || !m->set) {
    free(z.fmark);
    free(z.nmark);
    return AmrInpFail(r, "out of memory");
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
        if (!r->bnode[i]) AmrInpSetWhy(z.s, "holds node %ld (line %ld), which is not on the domain boundary", r->node[i].id, r->node[i].line);
      }
    for (long c = 0; nodes && c < m->ncell; c++)
      for (int f = 0; f < nf; f++) {
        int all = r->bface[c * nf + f];
        for (int k = 0; all && k < fv; k++) all = z.nmark[r->vnode[m->cell[c * nv + (r->dim == 2 ? amr_inp_face_corners2[f][k] : amr_inp_face_corners3[f][k])]]];
        if (all) z.fmark[c * nf + f] = 1;
      }
    memcpy(out->name, z.s->name, sizeof out->name);
    for (long i = 0; i < n; i++) out->nfaces += z.fmark[i];
    if (!out->nfaces) AmrInpSetWhy(z.s, "names no boundary face");
    memcpy(out->why, z.s->why, sizeof out->why);
    if (out->why[0]) {
      out->nfaces = 0;
      continue;
    }
    if (!(out->face = malloc((size_t)out->nfaces * sizeof(long)))) {
      ok = AmrInpFail(r, "out of memory");
      break;
    }
    for (long i = 0, k = 0; i < n; i++)
      if (z.fmark[i]) out->face[k++] = i;
  }
  free(z.fmark);
  free(z.nmark);
  return ok;
}
