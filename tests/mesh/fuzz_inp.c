/* Fuzzer of the .inp reader: random mutations of real mesh files (cut
 * lines and files, deleted, repeated and swapped lines, garbage bytes, huge,
 * negative and zero numbers, stray keywords), each read collectively by
 * AmrMeshCreateInp() in this one process group.  Every mutation must
 * end in a mesh p4est can refine, or in PETSC_ERR_USER_INPUT with one line
 * naming the file, the same verdict on every rank.  A crash, a hang (the
 * CTest time limit) or any other error fails the test.
 * Usage: fuzz_inp SEED MUTATIONS FILE.inp... */
#include "mesh/mesh.h"
#include "check.h"
#include "util/fileio.h"

#include "mesh/p4est_dim.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long rng_state;

static unsigned long rng(unsigned long n)
{
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return n ? (unsigned long)(rng_state % n) : 0;
}

typedef struct {
  char *s;
  size_t len, cap;
} text_t;

static void text_splice(text_t *t, size_t at, size_t cut, const char *ins, size_t nins)
{
  if (at > t->len) at = t->len;
  if (cut > t->len - at) cut = t->len - at;
  if (t->len - cut + nins + 1 > t->cap) {
    t->cap = 2 * (t->len + nins + 1);
    t->s = realloc(t->s, t->cap);
    if (!t->s) abort();
  }
  memmove(t->s + at + nins, t->s + at + cut, t->len - at - cut);
  memcpy(t->s + at, ins, nins);
  t->len = t->len - cut + nins;
}

/* Start and length (with its newline) of a random line. */
static void random_line(const text_t *t, size_t *start, size_t *len)
{
  size_t p = rng(t->len);
  while (p > 0 && t->s[p - 1] != '\n') p--;
  size_t e = p;
  while (e < t->len && t->s[e] != '\n') e++;
  *start = p;
  *len = e - p + (e < t->len);
}

static const char *const keywords[] = {"*ELEMENT, TYPE=T3D2, ELSET=x\n", "*ELSET, ELSET=x, GENERATE\n", "*NSET, NSET=x\n", "*SURFACE, NAME=x\n",
                                       "*INSTANCE, NAME=i, PART=p\n", "*NODE\n", "*ELEMENT, TYPE=CPS3\n", "*ELEMENT, TYPE=C3D8R\n", "*ELEMENT\n",
                                       "*End Part\n", "** comment\n", "*ELEMENT, TYPE=S4R, ELSET=y\n"};
static const char *const numbers[] = {"99999999999999999999", "-7", "0", "1e300", "2147483648", "-1e-300", "nan", "inf", "1.5", "3"};

static void mutate(text_t *t)
{
  size_t a, n, b, m;
  char g[16];
  switch (rng(8)) {
  case 0: /* the file cut anywhere */
    t->len = rng(t->len + 1);
    break;
  case 1: /* a line cut short */
    random_line(t, &a, &n);
    if (n > 1) text_splice(t, a + rng(n - 1), 1 + rng(n - 1) / 2, "", 0);
    break;
  case 2: /* a line deleted */
    random_line(t, &a, &n);
    text_splice(t, a, n, "", 0);
    break;
  case 3: /* a line repeated elsewhere */
    random_line(t, &a, &n);
    {
      char *copy = malloc(n + 1);
      memcpy(copy, t->s + a, n);
      random_line(t, &b, &m);
      text_splice(t, b, 0, copy, n);
      free(copy);
    }
    break;
  case 4: /* garbage bytes, binary included */
    n = 1 + rng(sizeof g);
    for (size_t i = 0; i < n; i++) g[i] = (char)(rng(4) ? 32 + rng(95) : rng(256));
    text_splice(t, rng(t->len + 1), 0, g, n);
    break;
  case 5: /* a number replaced by a huge, negative, zero or odd one */
    for (int tries = 0; tries < 50; tries++) {
      a = rng(t->len);
      if (t->s[a] < '0' || t->s[a] > '9') continue;
      while (a > 0 && t->s[a - 1] >= '0' && t->s[a - 1] <= '9') a--;
      n = 0;
      while (a + n < t->len && ((t->s[a + n] >= '0' && t->s[a + n] <= '9') || t->s[a + n] == '.')) n++;
      const char *x = numbers[rng(sizeof numbers / sizeof *numbers)];
      text_splice(t, a, n, x, strlen(x));
      break;
    }
    break;
  case 6: /* two lines swapped */
    random_line(t, &a, &n);
    random_line(t, &b, &m);
    if (a != b) {
      char *x = malloc(n + 1), *y = malloc(m + 1);
      memcpy(x, t->s + a, n);
      memcpy(y, t->s + b, m);
      if (a > b) {
        text_splice(t, a, n, y, m);
        text_splice(t, b, m, x, n);
      } else {
        text_splice(t, b, m, x, n);
        text_splice(t, a, n, y, m);
      }
      free(x);
      free(y);
    }
    break;
  default: /* a stray keyword line */
    random_line(t, &a, &n);
    {
      const char *k = keywords[rng(sizeof keywords / sizeof *keywords)];
      text_splice(t, a, 0, k, strlen(k));
    }
    break;
  }
}

int main(int argc, char **argv)
{
  PetscErrorCode err;
  int rank;

  err = PetscInitialize(&argc, &argv, NULL, NULL);
  if (err) return 1;
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_SILENT);
  p4est_init(NULL, SC_LP_SILENT);
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  if (argc < 4) {
    if (!rank) fprintf(stderr, "usage: %s SEED MUTATIONS FILE.inp...\n", argv[0]);
    return 2;
  }
  rng_state = strtoull(argv[1], NULL, 10) | 1;
  const long count = strtol(argv[2], NULL, 10);
  for (int fi = 3; fi < argc; fi++) {
    text_t orig = {NULL, 0, 0};
    long read = 0, refused = 0;
    if (!rank && AmrFileRead(argv[fi], 0, &orig.s, &orig.len)) {
      fprintf(stderr, "fuzz: cannot read %s\n", argv[fi]);
      MPI_Abort(PETSC_COMM_WORLD, 2);
    }
    for (long k = 0; k < count; k++) {
      text_t t = {NULL, 0, 0};
      AmrMesh mesh;
      char *why = NULL;
      if (!rank) {
        text_splice(&t, 0, 0, orig.s, orig.len);
        for (unsigned long j = 1 + rng(2); j > 0; j--) mutate(&t);
      }
      err = AmrMeshCreateInp(PETSC_COMM_WORLD, "fuzz.inp", t.s, t.len, &mesh);
      int codes[2] = {(int)err, -(int)err};
      MPI_Allreduce(MPI_IN_PLACE, codes, 2, MPI_INT, MPI_MAX, PETSC_COMM_WORLD);
      if (err) PetscErrorMessage(err, NULL, &why);
      if (!err) {
        /* the connectivity must carry a forest */
        p4est_t *p4est = p4est_new_ext(PETSC_COMM_WORLD, mesh.conn, 0, 1, 1, 0, NULL, NULL);
        p4est_destroy(p4est);
        AmrMeshDestroy(&mesh);
        read++;
      } else refused++;
      const int bad = codes[0] != -codes[1] || (err && (err != PETSC_ERR_USER_INPUT || !why || strncmp(why, "mesh file 'fuzz.inp'", 20) || strchr(why, '\n')));
      if (!CHECK_MSG(!bad, "%s mutation %ld: error %d on rank %d (%d..%d over ranks): %s", argv[fi], k, (int)err, rank, -codes[1], codes[0],
                     why ? why : "") &&
          !rank)
        fwrite(t.s, 1, t.len, stderr);
      free(t.s);
    }
    if (!rank) printf("fuzz: %s: %ld mutations, %ld read, %ld refused with one line\n", argv[fi], count, read, refused);
    /* mutations that never succeed or never fail test nothing */
    if (!rank) CHECK_MSG(read > 0 && refused > 0, "%s: every mutation %s", argv[fi], read ? "read" : "refused");
    free(orig.s);
  }
  const int status = check_finish(PETSC_COMM_WORLD);
  if (!rank) printf("fuzz: %d failures\n", check_failures);
  sc_finalize();
  PetscPopErrorHandler();
  PetscFinalize();
  return status;
}
