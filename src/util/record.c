/* The checkpoint's state record (record.h): named integers, reals, strings
 * and byte blobs, shared by the ranks or each rank's own, and their
 * self-describing little-endian bytes.  No forest and no file: the
 * checkpoint (mesh/checkpoint*.c) stores the bytes. */
#include "util/record.h"
#include "util/fileio.h"

#include <limits.h>
#include <string.h>

#define AMR_CKP_STATE_MAGIC "AMRDLBST"

enum { CKP_INT = 1, CKP_REAL, CKP_STRING, CKP_BYTES };
static const char *const type_names[] = {"", "integer", "real", "string", "byte blob"};

typedef struct {
  char *name;
  int type;
  size_t len;
  unsigned char *val; /* integers and reals: 8 bytes little-endian */
} CkpEntry;

typedef struct {
  int n, cap;
  CkpEntry *e;
} CkpTable;

struct _p_AmrCkpState {
  MPI_Comm comm;
  CkpTable shared, own; /* the same on every rank; this rank's part */
  int parts;            /* ranks whose parts own was written among (0: read without its parts) */
  char source[PETSC_MAX_PATH_LEN]; /* the manifest it was read from, for messages */
};

void AmrCkpPutLE(unsigned char *p, uint64_t v, int nbytes)
{
  for (int i = 0; i < nbytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

uint64_t AmrCkpGetLE(const unsigned char *p, int nbytes)
{
  uint64_t v = 0;
  for (int i = 0; i < nbytes; i++) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

PetscErrorCode AmrCkpStateCreate(MPI_Comm comm, AmrCkpState *st)
{
  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(1, st));
  (*st)->comm = comm;
  PetscCallMPI(MPI_Comm_size(comm, &(*st)->parts));
  PetscCall(PetscStrncpy((*st)->source, "(not read from a file)", sizeof (*st)->source));
  PetscFunctionReturn(0);
}

static PetscErrorCode table_free(CkpTable *t)
{
  PetscFunctionBeginUser;
  for (int i = 0; i < t->n; i++) PetscCall(PetscFree2(t->e[i].name, t->e[i].val));
  PetscCall(PetscFree(t->e));
  t->n = t->cap = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateDestroy(AmrCkpState *st)
{
  PetscFunctionBeginUser;
  if (!*st) PetscFunctionReturn(0);
  PetscCall(table_free(&(*st)->shared));
  PetscCall(table_free(&(*st)->own));
  PetscCall(PetscFree(*st));
  PetscFunctionReturn(0);
}

static CkpEntry *find(const CkpTable *t, const char *name)
{
  for (int i = 0; i < t->n; i++)
    if (!strcmp(t->e[i].name, name)) return &t->e[i];
  return NULL;
}

static PetscErrorCode set_entry(CkpTable *st, const char *name, int type, const void *p, size_t n)
{
  CkpEntry *e = find(st, name);
  size_t nl = strlen(name);

  PetscFunctionBeginUser;
  PetscCheck(nl > 0 && nl < 65536, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "checkpoint state: entry name of %zu characters", nl);
  if (e) {
    PetscCall(PetscFree2(e->name, e->val));
  } else {
    if (st->n == st->cap) {
      CkpEntry *ne;
      st->cap = st->cap ? 2 * st->cap : 16;
      PetscCall(PetscMalloc1(st->cap, &ne));
      if (st->n) PetscCall(PetscArraycpy(ne, st->e, st->n));
      PetscCall(PetscFree(st->e));
      st->e = ne;
    }
    e = &st->e[st->n++];
  }
  PetscCall(PetscMalloc2(nl + 1, &e->name, n + 1, &e->val));
  memcpy(e->name, name, nl + 1);
  if (n) memcpy(e->val, p, n);
  e->val[n] = 0; /* a string's terminator */
  e->type = type;
  e->len = n;
  PetscFunctionReturn(0);
}

/* The integer entry name of table t. */
static PetscErrorCode set_int(CkpTable *t, const char *name, int64_t v)
{
  unsigned char b[8];

  PetscFunctionBeginUser;
  AmrCkpPutLE(b, (uint64_t)v, 8);
  PetscCall(set_entry(t, name, CKP_INT, b, 8));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetInt(AmrCkpState st, const char *name, int64_t v)
{
  PetscFunctionBeginUser;
  PetscCall(set_int(&st->shared, name, v));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetReal(AmrCkpState st, const char *name, double v)
{
  unsigned char b[8];
  uint64_t bits;

  PetscFunctionBeginUser;
  memcpy(&bits, &v, 8);
  AmrCkpPutLE(b, bits, 8);
  PetscCall(set_entry(&st->shared, name, CKP_REAL, b, 8));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetString(AmrCkpState st, const char *name, const char *v)
{
  PetscFunctionBeginUser;
  PetscCall(set_entry(&st->shared, name, CKP_STRING, v, strlen(v)));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetBytes(AmrCkpState st, const char *name, const void *p, size_t n)
{
  PetscFunctionBeginUser;
  PetscCall(set_entry(&st->shared, name, CKP_BYTES, p, n));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateHas(AmrCkpState st, const char *name, PetscBool *has)
{
  PetscFunctionBeginUser;
  *has = find(&st->shared, name) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode get_entry(AmrCkpState st, const char *name, int type, CkpEntry **e)
{
  PetscFunctionBeginUser;
  *e = find(&st->shared, name);
  PetscCheck(*e, st->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' has no state entry '%s'", AmrPathShort(st->source), name);
  PetscCheck((*e)->type == type, st->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s': state entry '%s' is a %s, not a %s", AmrPathShort(st->source), name,
             type_names[(*e)->type], type_names[type]);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetInt(AmrCkpState st, const char *name, int64_t *v)
{
  CkpEntry *e;

  PetscFunctionBeginUser;
  PetscCall(get_entry(st, name, CKP_INT, &e));
  *v = (int64_t)AmrCkpGetLE(e->val, 8);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetReal(AmrCkpState st, const char *name, double *v)
{
  CkpEntry *e;
  uint64_t bits;

  PetscFunctionBeginUser;
  PetscCall(get_entry(st, name, CKP_REAL, &e));
  bits = AmrCkpGetLE(e->val, 8);
  memcpy(v, &bits, 8);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetString(AmrCkpState st, const char *name, const char **v)
{
  CkpEntry *e;

  PetscFunctionBeginUser;
  PetscCall(get_entry(st, name, CKP_STRING, &e));
  *v = (const char *)e->val;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetBytes(AmrCkpState st, const char *name, const void **p, size_t *n)
{
  CkpEntry *e;

  PetscFunctionBeginUser;
  PetscCall(get_entry(st, name, CKP_BYTES, &e));
  *p = e->val;
  *n = e->len;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateCheckString(AmrCkpState st, const char *name, const char *expected)
{
  const char *v;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetString(st, name, &v));
  PetscCheck(!strcmp(v, expected), st->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' was written with %s '%s', this run has '%s'", AmrPathShort(st->source), name, v,
             expected);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateCheckInt(AmrCkpState st, const char *name, int64_t expected)
{
  int64_t v;

  PetscFunctionBeginUser;
  PetscCall(AmrCkpStateGetInt(st, name, &v));
  PetscCheck(v == expected, st->comm, PETSC_ERR_USER_INPUT, "checkpoint '%s' was written with %s %lld, this run has %lld", AmrPathShort(st->source), name, (long long)v,
             (long long)expected);
  PetscFunctionReturn(0);
}

/* The bytes of table t: magic, version, count, then per entry the name's
 * length and bytes, the type, the value's length and bytes. */
static PetscErrorCode serialize_table(const CkpTable *t, unsigned char **buf, size_t *len)
{
  size_t n = 16, o;

  PetscFunctionBeginUser;
  for (int i = 0; i < t->n; i++) n += 4 + strlen(t->e[i].name) + 4 + 8 + t->e[i].len;
  PetscCall(PetscMalloc1(n, buf));
  memcpy(*buf, AMR_CKP_STATE_MAGIC, 8);
  AmrCkpPutLE(*buf + 8, AMR_CKP_STATE_VERSION, 4);
  AmrCkpPutLE(*buf + 12, (uint64_t)t->n, 4);
  o = 16;
  for (int i = 0; i < t->n; i++) {
    const size_t nl = strlen(t->e[i].name);
    AmrCkpPutLE(*buf + o, nl, 4);
    memcpy(*buf + o + 4, t->e[i].name, nl);
    o += 4 + nl;
    AmrCkpPutLE(*buf + o, (uint64_t)t->e[i].type, 4);
    AmrCkpPutLE(*buf + o + 4, t->e[i].len, 8);
    if (t->e[i].len) memcpy(*buf + o + 12, t->e[i].val, t->e[i].len);
    o += 12 + t->e[i].len;
  }
  *len = n;
  PetscFunctionReturn(0);
}

/* The entries of the len bytes at buf into t; what makes them no record
 * of this version goes into msg (empty: read), a PETSc error only for a
 * failed allocation.  Local: the callers make a refusal collective. */
static PetscErrorCode parse_table(CkpTable *t, const unsigned char *buf, size_t len, char *msg, size_t msglen)
{
  size_t o = 16;
  uint64_t count;

  PetscFunctionBeginUser;
  msg[0] = '\0';
  if (len < 16 || memcmp(buf, AMR_CKP_STATE_MAGIC, 8) || AmrCkpGetLE(buf + 8, 4) != AMR_CKP_STATE_VERSION) {
    PetscCall(PetscSNPrintf(msg, msglen, "not a state record of format version %d", AMR_CKP_STATE_VERSION));
    PetscFunctionReturn(0);
  }
  count = AmrCkpGetLE(buf + 12, 4);
  for (uint64_t i = 0; i < count; i++) {
    char name[65536];
    size_t nl, vl;
    int type;
    nl = len - o >= 4 ? (size_t)AmrCkpGetLE(buf + o, 4) : 0;
    if (!(nl > 0 && nl < sizeof name && len - o - 4 >= nl + 12)) {
      PetscCall(PetscSNPrintf(msg, msglen, "state record ends inside entry %d", (int)i));
      PetscFunctionReturn(0);
    }
    memcpy(name, buf + o + 4, nl);
    name[nl] = '\0';
    o += 4 + nl;
    type = (int)AmrCkpGetLE(buf + o, 4);
    vl = (size_t)AmrCkpGetLE(buf + o + 4, 8);
    o += 12;
    if (!(type >= CKP_INT && type <= CKP_BYTES && vl <= len - o && (type >= CKP_STRING || vl == 8))) {
      PetscCall(PetscSNPrintf(msg, msglen, "state entry '%s' is malformed", name));
      PetscFunctionReturn(0);
    }
    PetscCall(set_entry(t, name, type, buf + o, vl));
    o += vl;
  }
  if (o != len) PetscCall(PetscSNPrintf(msg, msglen, "%zu bytes after the last state entry", len - o));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSerialize(AmrCkpState st, unsigned char **buf, size_t *len)
{
  PetscFunctionBeginUser;
  PetscCall(serialize_table(&st->shared, buf, len));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSerializeRank(AmrCkpState st, unsigned char **buf, size_t *len)
{
  PetscFunctionBeginUser;
  PetscCall(serialize_table(&st->own, buf, len));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateParse(AmrCkpState st, const char *source, const char *path, const unsigned char *buf, size_t len)
{
  char msg[128];

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(st->source, source, sizeof st->source));
  st->parts = 0; /* until its parts are read */
  PetscCall(parse_table(&st->shared, buf, len, msg, sizeof msg));
  PetscCheck(!msg[0], st->comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s': %s", AmrPathShort(path), msg);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateParseRank(AmrCkpState st, int parts, const char *path, const unsigned char *buf, size_t len)
{
  char msg[128];
  int rank, bad;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(st->comm, &rank));
  st->parts = parts;
  msg[0] = '\0';
  if (buf) PetscCall(parse_table(&st->own, buf, len, msg, sizeof msg));
  bad = msg[0] ? rank : INT_MAX;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MIN, st->comm));
  PetscCheck(bad == INT_MAX, st->comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s': the part of rank %d is no state record of format version %d", AmrPathShort(path), bad,
             AMR_CKP_STATE_VERSION);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateRankParts(AmrCkpState st, int *parts)
{
  PetscFunctionBeginUser;
  *parts = st->parts;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetRankInt(AmrCkpState st, const char *name, int64_t v)
{
  PetscFunctionBeginUser;
  PetscCall(set_int(&st->own, name, v));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetRankBytes(AmrCkpState st, const char *name, const void *p, size_t n)
{
  PetscFunctionBeginUser;
  PetscCall(set_entry(&st->own, name, CKP_BYTES, p, n));
  PetscFunctionReturn(0);
}

/* This rank's entry name of the type, or NULL. */
static const CkpEntry *own_entry(AmrCkpState st, const char *name, int type)
{
  const CkpEntry *e = find(&st->own, name);
  return e && e->type == type ? e : NULL;
}

PetscErrorCode AmrCkpStateGetRankInt(AmrCkpState st, const char *name, PetscBool *has, int64_t *v)
{
  const CkpEntry *e = own_entry(st, name, CKP_INT);

  PetscFunctionBeginUser;
  *has = e ? PETSC_TRUE : PETSC_FALSE;
  *v = e ? (int64_t)AmrCkpGetLE(e->val, 8) : 0;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetRankBytes(AmrCkpState st, const char *name, const void **p, size_t *n)
{
  const CkpEntry *e = own_entry(st, name, CKP_BYTES);

  PetscFunctionBeginUser;
  *p = e ? e->val : NULL;
  *n = e ? e->len : 0;
  PetscFunctionReturn(0);
}
