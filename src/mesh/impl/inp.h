#ifndef AMR_INP_IMPL_H
#define AMR_INP_IMPL_H

/* Private to the Abaqus .inp reader: the reader's state and the jobs of a
 * parse, each a file: the lines (inp_parse.c), the checks (inp_check.c),
 * the sets and boundary parts (inp_sets.c), run in order by AmrInpParse()
 * (inp.c).  Every function that can fail returns 0 after AmrInpFail()
 * wrote the one sentence naming the file and line, else 1. */

#include "mesh/inp.h"

#include <stddef.h>

enum { SH_UNKNOWN, SH_LINE, SH_TRI, SH_QUAD, SH_TET, SH_PYRAMID, SH_WEDGE, SH_HEX };
/* Per shape: its dimension and corners. */
extern const int amr_inp_shape_dim[], amr_inp_shape_corners[];
/* The p4est corners of each p4est face, 2D and 3D. */
extern const int amr_inp_face_corners2[4][4], amr_inp_face_corners3[6][4];

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

/** Writes "mesh file 'PATH', line N: " and the message into r->msg; returns 0. */
int AmrInpFail(inp_reader *r, const char *fmt, ...);
/** Grows *p (*cap elements of size bytes) to hold need; 0 when out of memory. */
int AmrInpGrow(void **p, long *cap, long need, size_t size);
/** A whole integer field t into *v; 0 if it is none. */
int AmrInpParseInt(const char *t, long *v);

/* The lines (inp_parse.c): nodes, sections, elements, set definitions. */
int AmrInpLines(inp_reader *r, const char *text, size_t len);

/* The checks (inp_check.c), which fill m's vertices and cells. */
int AmrInpCheck(inp_reader *r, AmrInpMesh *m);
/** First node index with an id >= id (after the checks sorted them). */
long AmrInpNodeLower(const inp_reader *r, long id);
/** First position in r->elem_by_id with an id >= id. */
long AmrInpElemLower(const inp_reader *r, long id);

/* The sets (inp_sets.c): definitions while the lines are read ... */
/** The first reason a set is not a boundary part is the one reported. */
void AmrInpSetWhy(inp_set_t *s, const char *fmt, ...);
/** The index of the set named name (made if new) into *index. */
int AmrInpSetGet(inp_reader *r, const char *name, const char *keyword, int *index);
/** Adds entry e to set s. */
int AmrInpSetAdd(inp_reader *r, int s, inp_entry_t e);
/** Adds the id of a node or element (kind) to set s. */
int AmrInpSetAddId(inp_reader *r, int s, int kind, long id, int label);
/** One member of a set's data line: an id or the name of an earlier set. */
int AmrInpSetMember(inp_reader *r, int s, int kind, const char *t, int label);
/* ... and after the checks, the boundary faces each names (m->set). */
int AmrInpSets(inp_reader *r, AmrInpMesh *m);

#endif
