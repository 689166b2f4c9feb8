/* The checkpoint's state record (record.h): named integers, reals, strings
 * and byte blobs, and their self-describing little-endian bytes.  No forest
 * and no file: the checkpoint (mesh/checkpoint.c) stores the bytes. */
#include "util/record.h"
#include "util/fileio.h"

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

struct _p_AmrCkpState {
  MPI_Comm comm;
  int n, cap;
  CkpEntry *e;
  char source[PETSC_MAX_PATH_LEN]; /* the manifest it was read from, for messages */
};

static void put_le(unsigned char *p, uint64_t v, int nbytes)
{
  for (int i = 0; i < nbytes; i++) p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get_le(const unsigned char *p, int nbytes)
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
  PetscCall(PetscStrncpy((*st)->source, "(not read from a file)", sizeof (*st)->source));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateDestroy(AmrCkpState *st)
{
  PetscFunctionBeginUser;
  if (!*st) PetscFunctionReturn(0);
  for (int i = 0; i < (*st)->n; i++) PetscCall(PetscFree2((*st)->e[i].name, (*st)->e[i].val));
  PetscCall(PetscFree((*st)->e));
  PetscCall(PetscFree(*st));
  PetscFunctionReturn(0);
}

static CkpEntry *find(AmrCkpState st, const char *name)
{
  for (int i = 0; i < st->n; i++)
    if (!strcmp(st->e[i].name, name)) return &st->e[i];
  return NULL;
}

static PetscErrorCode set_entry(AmrCkpState st, const char *name, int type, const void *p, size_t n)
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

PetscErrorCode AmrCkpStateSetInt(AmrCkpState st, const char *name, int64_t v)
{
  unsigned char b[8];

  PetscFunctionBeginUser;
  put_le(b, (uint64_t)v, 8);
  PetscCall(set_entry(st, name, CKP_INT, b, 8));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetReal(AmrCkpState st, const char *name, double v)
{
  unsigned char b[8];
  uint64_t bits;

  PetscFunctionBeginUser;
  memcpy(&bits, &v, 8);
  put_le(b, bits, 8);
  PetscCall(set_entry(st, name, CKP_REAL, b, 8));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetString(AmrCkpState st, const char *name, const char *v)
{
  PetscFunctionBeginUser;
  PetscCall(set_entry(st, name, CKP_STRING, v, strlen(v)));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateSetBytes(AmrCkpState st, const char *name, const void *p, size_t n)
{
  PetscFunctionBeginUser;
  PetscCall(set_entry(st, name, CKP_BYTES, p, n));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateHas(AmrCkpState st, const char *name, PetscBool *has)
{
  PetscFunctionBeginUser;
  *has = find(st, name) ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

static PetscErrorCode get_entry(AmrCkpState st, const char *name, int type, CkpEntry **e)
{
  PetscFunctionBeginUser;
  *e = find(st, name);
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
  *v = (int64_t)get_le(e->val, 8);
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateGetReal(AmrCkpState st, const char *name, double *v)
{
  CkpEntry *e;
  uint64_t bits;

  PetscFunctionBeginUser;
  PetscCall(get_entry(st, name, CKP_REAL, &e));
  bits = get_le(e->val, 8);
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

PetscErrorCode AmrCkpStateSerialize(AmrCkpState st, unsigned char **buf, size_t *len)
{
  size_t n = 16, o;

  PetscFunctionBeginUser;
  for (int i = 0; i < st->n; i++) n += 4 + strlen(st->e[i].name) + 4 + 8 + st->e[i].len;
  PetscCall(PetscMalloc1(n, buf));
  memcpy(*buf, AMR_CKP_STATE_MAGIC, 8);
  put_le(*buf + 8, AMR_CKP_STATE_VERSION, 4);
  put_le(*buf + 12, (uint64_t)st->n, 4);
  o = 16;
  for (int i = 0; i < st->n; i++) {
    const size_t nl = strlen(st->e[i].name);
    put_le(*buf + o, nl, 4);
    memcpy(*buf + o + 4, st->e[i].name, nl);
    o += 4 + nl;
    put_le(*buf + o, (uint64_t)st->e[i].type, 4);
    put_le(*buf + o + 4, st->e[i].len, 8);
    if (st->e[i].len) memcpy(*buf + o + 12, st->e[i].val, st->e[i].len);
    o += 12 + st->e[i].len;
  }
  *len = n;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrCkpStateParse(AmrCkpState st, const char *source, const char *path, const unsigned char *buf, size_t len)
{
  MPI_Comm comm = st->comm;
  size_t o = 16;
  uint64_t count;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(st->source, source, sizeof st->source));
  PetscCheck(len >= 16 && !memcmp(buf, AMR_CKP_STATE_MAGIC, 8) && get_le(buf + 8, 4) == AMR_CKP_STATE_VERSION, comm, PETSC_ERR_USER_INPUT,
             "checkpoint file '%s' is not a state record of format version %d", AmrPathShort(path), AMR_CKP_STATE_VERSION);
  count = get_le(buf + 12, 4);
  for (uint64_t i = 0; i < count; i++) {
    char name[65536];
    size_t nl, vl;
    int type;
    PetscCheck(len - o >= 4, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s': state record ends inside entry %d", AmrPathShort(path), (int)i);
    nl = (size_t)get_le(buf + o, 4);
    PetscCheck(nl > 0 && nl < sizeof name && len - o - 4 >= nl + 12, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s': state record ends inside entry %d",
               AmrPathShort(path), (int)i);
    memcpy(name, buf + o + 4, nl);
    name[nl] = '\0';
    o += 4 + nl;
    type = (int)get_le(buf + o, 4);
    vl = (size_t)get_le(buf + o + 4, 8);
    o += 12;
    PetscCheck(type >= CKP_INT && type <= CKP_BYTES && vl <= len - o && (type >= CKP_STRING || vl == 8), comm, PETSC_ERR_USER_INPUT,
               "checkpoint file '%s': state entry '%s' is malformed", AmrPathShort(path), name);
    PetscCall(set_entry(st, name, type, buf + o, vl));
    o += vl;
  }
  PetscCheck(o == len, comm, PETSC_ERR_USER_INPUT, "checkpoint file '%s': %zu bytes after the last state entry", AmrPathShort(path), len - o);
  PetscFunctionReturn(0);
}
