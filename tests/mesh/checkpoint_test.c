/* Checkpoint sets (src/mesh/checkpoint*.c) on a non-uniformly refined forest
 * whose every cell carries data derived from its own coordinates: quadrant
 * data and two outside arrays (8 and 12 bytes per cell), so that a reader
 * on any number of ranks can recompute what each of its cells must hold.
 *
 *   -write            write the set of -prefix (cycle -cycle)
 *   -read             read it and check every cell bit for bit, the forest
 *                     against a rebuilt one, the state, the even partition
 *   -sequence         in one run: write, stage a second set and truncate its
 *                     forest file without committing (a job killed while
 *                     writing), read the first back, then write a third
 *   -kill             write cycle 1, stage cycle 2, truncate its forest
 *                     file and SIGKILL every rank (checkpoint_kill.cmake)
 *   -loop             write cycles 1, 2, ... until killed; then -read
 *                     -cycle -1 takes whatever cycle the set holds
 *   -damage KIND      write, spoil the set, read: must end in one error line
 *                     (the prefix gets -npN, so the 1- and 2-rank runs of a
 *                     case do not share files)
 *
 * Errors print one line "PROGRAM: error: ..." on rank 0, exit status 1. */
#define _POSIX_C_SOURCE 200809L /* truncate */
#include "mesh/checkpoint.h"
#include "util/options.h"
#include "mesh/mesh.h"
#include "check.h"
#include "mesh/p4est_dim.h"
#ifndef P4_TO_P8
#define PROGRAM "checkpoint_test2d"
#else
#define PROGRAM "checkpoint_test3d"
#endif
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Quadrant data: the cell's own identity. */
typedef struct {
  int64_t tree;
  int32_t level, child;
  double centre[3];
} cell_t;

static void centre(p4est_topidx_t t, const p4est_quadrant_t *q, double c[3])
{
  const double h = (double)P4EST_QUADRANT_LEN(q->level) / P4EST_ROOT_LEN;
  c[0] = (double)q->x / P4EST_ROOT_LEN + h / 2 + (double)t;
  c[1] = (double)q->y / P4EST_ROOT_LEN + h / 2;
#ifdef P4_TO_P8
  c[2] = (double)q->z / P4EST_ROOT_LEN + h / 2;
#else
  c[2] = 0.5; /* the plane through the 3D circle's centre */
#endif
}

static void expected(p4est_topidx_t t, const p4est_quadrant_t *q, cell_t *cell, double *a, int32_t b[3])
{
  memset(cell, 0, sizeof *cell);
  cell->tree = t;
  cell->level = q->level;
  cell->child = p4est_quadrant_child_id(q);
  centre(t, q, cell->centre);
  *a = sin(3 * cell->centre[0]) * cos(2 * cell->centre[1]) + exp(cell->centre[2]);
  b[0] = (int32_t)q->x;
  b[1] = (int32_t)q->y;
#ifdef P4_TO_P8
  b[2] = (int32_t)q->z;
#else
  b[2] = -(int32_t)q->level;
#endif
}

static void init_cell(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  double a;
  int32_t b[3];
  (void)p4est;
  expected(t, q, q->p.user_data, &a, b);
}

static int max_level;

/* Graded: finest near a circle through the trees, coarser away from it. */
static int refine_fn(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  double c[3], r;
  (void)p4est;
  centre(t, q, c);
  r = sqrt((c[0] - 0.9) * (c[0] - 0.9) + (c[1] - 0.5) * (c[1] - 0.5) + (c[2] - 0.5) * (c[2] - 0.5));
  return q->level < max_level && fabs(r - 0.4) < 0.6 * (double)P4EST_QUADRANT_LEN(q->level) / P4EST_ROOT_LEN * (max_level - q->level + 1) / 2;
}

static p4est_t *build(MPI_Comm comm, p4est_connectivity_t *conn)
{
  p4est_t *p4est = p4est_new_ext(comm, conn, 0, 2, 1, sizeof(cell_t), init_cell, NULL);
  p4est_refine(p4est, 1, refine_fn, init_cell);
  p4est_balance(p4est, P4EST_CONNECT_FULL, init_cell);
  p4est_partition(p4est, 0, NULL);
  return p4est;
}

/* The two outside arrays of the local cells. */
static PetscErrorCode fill_fields(p4est_t *p4est, double **a, int32_t **b)
{
  p4est_locidx_t i = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(p4est->local_num_quadrants + 1, a));
  PetscCall(PetscMalloc1(3 * (size_t)p4est->local_num_quadrants + 1, b));
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++, i++) {
      cell_t c;
      expected(t, p4est_quadrant_array_index(&tree->quadrants, k), &c, &(*a)[i], &(*b)[3 * i]);
    }
  }
  PetscFunctionReturn(0);
}

static const double sim_time = 0.1 * 3; /* not a short binary fraction */

/* Each rank's own part, of a length that differs from rank to rank: set
 * (write), or counted into check_failures where it is not what was set
 * on as many ranks, or where there is any on another rank count. */
static PetscErrorCode rank_part(AmrCkpState st, PetscBool write)
{
  MPI_Comm comm = PETSC_COMM_WORLD;
  unsigned char blob[64];
  const void *got;
  size_t n, glen;
  int rank, size, parts;
  int64_t v;
  PetscBool has;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  n = (size_t)(5 + 3 * rank) % sizeof blob;
  for (size_t i = 0; i < n; i++) blob[i] = (unsigned char)(rank * 31 + (int)i);
  if (write) {
    PetscCall(AmrCkpStateSetRankInt(st, "rank", 1000 + rank));
    PetscCall(AmrCkpStateSetRankBytes(st, "rank_blob", blob, n));
    PetscFunctionReturn(0);
  }
  PetscCall(AmrCkpStateRankParts(st, &parts));
  PetscCall(AmrCkpStateGetRankInt(st, "rank", &has, &v));
  PetscCall(AmrCkpStateGetRankBytes(st, "rank_blob", &got, &glen));
  if (parts == size) {
    CHECK(has && v == 1000 + rank);
    CHECK(got && glen == n && !memcmp(got, blob, n));
  } else {
    CHECK(!has && !got);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode fill_state(AmrCkpState st, int64_t cycle)
{
  unsigned char blob[1000];

  PetscFunctionBeginUser;
  for (int i = 0; i < (int)sizeof blob; i++) blob[i] = (unsigned char)(i * 7 + 3);
  PetscCall(AmrCkpStateSetInt(st, "cycle", cycle));
  PetscCall(AmrCkpStateSetReal(st, "sim_time", sim_time * (double)cycle));
  PetscCall(AmrCkpStateSetString(st, "problem", "test-problem"));
  PetscCall(AmrCkpStateSetInt(st, "degree", 2));
  PetscCall(AmrCkpStateSetString(st, "options", "-problem test-problem\n-amr_max_level 7\n"));
  PetscCall(AmrCkpStateSetBytes(st, "balancer", blob, sizeof blob));
  PetscCall(AmrCkpStateSetBytes(st, "empty", NULL, 0));
  PetscCall(AmrCkpStateSetInt(st, "cycle", cycle)); /* set twice: replaced, not duplicated */
  PetscCall(rank_part(st, PETSC_TRUE));
  PetscFunctionReturn(0);
}

static PetscErrorCode write_set(MPI_Comm comm, p4est_connectivity_t *conn, const char *prefix, int64_t cycle, PetscBool commit)
{
  p4est_t *p4est = build(comm, conn);
  double *a;
  int32_t *b;
  AmrCkpState st;

  PetscFunctionBeginUser;
  PetscCall(fill_fields(p4est, &a, &b));
  {
    AmrField fields[2] = {{(void **)&a, sizeof(double)}, {(void **)&b, 3 * sizeof(int32_t)}};
    PetscCall(AmrCkpStateCreate(comm, &st));
    PetscCall(fill_state(st, cycle));
    if (commit)
      PetscCall(AmrCheckpointWrite(prefix, p4est, 2, fields, st));
    else
      PetscCall(AmrCheckpointStage(prefix, p4est, 2, fields, st));
  }
  PetscCall(PetscPrintf(comm, "%s: wrote cycle %lld, %lld cells%s\n", PROGRAM, (long long)cycle, (long long)p4est->global_num_quadrants,
                        commit ? "" : " (staged, not committed)"));
  PetscCall(AmrCkpStateDestroy(&st));
  PetscCall(PetscFree(a));
  PetscCall(PetscFree(b));
  p4est_destroy(p4est);
  PetscFunctionReturn(0);
}

/* Read the set and check everything against what write_set wrote. */
static PetscErrorCode read_set(MPI_Comm comm, p4est_connectivity_t *conn, const char *prefix, int64_t cycle, size_t bsize)
{
  p4est_t *p4est, *ref;
  double *a = NULL, t;
  int32_t *b = NULL;
  AmrCkpState st;
  AmrField fields[2] = {{(void **)&a, sizeof(double)}, {(void **)&b, bsize}};
  p4est_locidx_t i = 0;
  long long bad = 0, n[2];
  int64_t c;
  const char *s;
  const void *blob;
  size_t blen;
  unsigned sum[2];

  PetscFunctionBeginUser;
  PetscCall(AmrCheckpointRead(comm, prefix, conn, sizeof(cell_t), 2, fields, &p4est, NULL, &st));
  PetscCall(AmrCkpStateCheckString(st, "problem", "test-problem"));
  PetscCall(AmrCkpStateCheckInt(st, "degree", 2));
  for (p4est_topidx_t tr = p4est->first_local_tree; tr <= p4est->last_local_tree; tr++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, tr);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++, i++) {
      p4est_quadrant_t *q = p4est_quadrant_array_index(&tree->quadrants, k);
      cell_t e;
      double ea;
      int32_t eb[3];
      expected(tr, q, &e, &ea, eb);
      bad += memcmp(q->p.user_data, &e, sizeof e) || memcmp(&a[i], &ea, sizeof ea) || memcmp(&b[3 * i], eb, sizeof eb);
    }
  }
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG_LONG, MPI_SUM, comm));
  CHECK(bad == 0);
  /* the same forest as the writer's, evenly split among this run's ranks */
  ref = build(comm, conn);
  sum[0] = p4est_checksum(p4est);
  sum[1] = p4est_checksum(ref);
  PetscCallMPI(MPI_Bcast(sum, 2, MPI_UNSIGNED, 0, comm));
  CHECK(sum[0] == sum[1]);
  CHECK(p4est->global_num_quadrants == ref->global_num_quadrants);
  CHECK(p4est->connectivity == conn);
  n[0] = -(long long)p4est->local_num_quadrants;
  n[1] = (long long)p4est->local_num_quadrants;
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, n, 2, MPI_LONG_LONG, MPI_MAX, comm));
  CHECK(n[1] + n[0] <= 1);
  PetscCall(AmrCkpStateGetInt(st, "cycle", &c));
  CHECK(cycle < 0 ? c >= 1 : c == cycle);
  if (cycle < 0) cycle = c;
  PetscCall(AmrCkpStateGetReal(st, "sim_time", &t));
  CHECK(t == sim_time * (double)cycle);
  PetscCall(AmrCkpStateGetString(st, "options", &s));
  CHECK(!strcmp(s, "-problem test-problem\n-amr_max_level 7\n"));
  PetscCall(AmrCkpStateGetBytes(st, "balancer", &blob, &blen));
  CHECK(blen == 1000);
  for (size_t k = 0; k < blen; k++) bad += ((const unsigned char *)blob)[k] != (unsigned char)(k * 7 + 3);
  CHECK(bad == 0);
  PetscCall(AmrCkpStateGetBytes(st, "empty", &blob, &blen));
  CHECK(blen == 0);
  PetscCall(rank_part(st, PETSC_FALSE));
  PetscCall(PetscPrintf(comm, "%s: read cycle %lld: %lld cells, %lld with data differing from the writer's, %d checks failed\n", PROGRAM, (long long)c,
                        (long long)p4est->global_num_quadrants, bad, check_failures));
  p4est_destroy(ref);
  p4est_destroy(p4est);
  PetscCall(AmrCkpStateDestroy(&st));
  PetscCall(PetscFree(a));
  PetscCall(PetscFree(b));
  PetscFunctionReturn(0);
}

static void path_of(const char *prefix, int seq, const char *kind, char *path)
{
  /* a truncated path names no file: the checks using it then fail */
  if ((seq ? snprintf(path, PETSC_MAX_PATH_LEN, "%s.%d.%s", prefix, seq, kind) : snprintf(path, PETSC_MAX_PATH_LEN, "%s.%s", prefix, kind)) >= PETSC_MAX_PATH_LEN)
    path[0] = '\0';
}

static long long file_size(const char *path)
{
  struct stat sb;
  return stat(path, &sb) ? -1 : (long long)sb.st_size;
}

/* Sequence number of the current set of prefix (0: none), so that runs
 * repeated on the same prefix find their files. */
static int current_seq(const char *prefix)
{
  char path[PETSC_MAX_PATH_LEN];
  FILE *f;
  int seq = 0;
  path_of(prefix, 0, "manifest", path);
  f = fopen(path, "r");
  if (f && fscanf(f, "%*s %*d dimension %*d sequence %d", &seq) != 1) seq = 0;
  if (f) fclose(f);
  return seq;
}

/* XOR the byte at offset off (negative: from the end) with mask. */
static void flip_byte(const char *path, long off, int mask)
{
  FILE *f = fopen(path, "r+b");
  int c;
  if (!f) return;
  fseek(f, off, off < 0 ? SEEK_END : SEEK_SET);
  c = fgetc(f);
  fseek(f, -1, SEEK_CUR);
  fputc(c ^ mask, f);
  fclose(f);
}

/* Spoil a freshly written set the way KIND says (rank 0). */
static int damage(const char *prefix, const char *kind)
{
  char forest[PETSC_MAX_PATH_LEN], state[PETSC_MAX_PATH_LEN], ranks[PETSC_MAX_PATH_LEN], manifest[PETSC_MAX_PATH_LEN];
  path_of(prefix, current_seq(prefix), "forest", forest);
  path_of(prefix, current_seq(prefix), "ranks", ranks);
  path_of(prefix, current_seq(prefix), "state", state);
  path_of(prefix, 0, "manifest", manifest);
  if (!strcmp(kind, "missing-manifest")) return unlink(manifest);
  if (!strcmp(kind, "missing-forest")) return unlink(forest);
  if (!strcmp(kind, "missing-state")) return unlink(state);
  if (!strcmp(kind, "missing-ranks")) return unlink(ranks);
  if (!strcmp(kind, "truncated")) return truncate(forest, file_size(forest) / 2);
  if (!strcmp(kind, "corrupted")) {
    flip_byte(forest, file_size(forest) * 2 / 3, 0xff);
    return 0;
  }
  if (!strcmp(kind, "corrupted-state")) {
    flip_byte(state, 20, 0xff);
    return 0;
  }
  if (!strcmp(kind, "corrupted-ranks")) {
    flip_byte(ranks, -3, 0xff); /* inside the last rank's part */
    return 0;
  }
  if (!strcmp(kind, "corrupted-manifest")) {
    flip_byte(manifest, -12, 0xff);
    return 0;
  }
  if (!strcmp(kind, "version")) {
    /* version 2 -> 1: a set of the format before the ranks file */
    flip_byte(manifest, (long)strlen("amrdlb-checkpoint "), '1' ^ '2');
    return 0;
  }
  /* problem, degree, layout, mesh: an intact set read by a caller that
   * expects something else */
  return !(!strcmp(kind, "problem") || !strcmp(kind, "degree") || !strcmp(kind, "layout") || !strcmp(kind, "mesh"));
}

static PetscErrorCode run(MPI_Comm comm)
{
  char prefix[PETSC_MAX_PATH_LEN] = "", mesh_spec[64] = "builtin:brick:2x1", dmg[32] = "", path[PETSC_MAX_PATH_LEN];
  PetscBool do_write, do_read, do_seq, do_kill, do_loop, do_damage;
  PetscInt cycle = 7, level = P4EST_DIM == 2 ? 7 : 5;
  AmrMesh mesh;
  int rank, size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
#ifdef P4_TO_P8
  PetscCall(PetscStrncpy(mesh_spec, "builtin:brick:2x1x1", sizeof mesh_spec));
#endif
  PetscCall(PetscOptionsGetString(NULL, NULL, "-prefix", prefix, sizeof prefix, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-mesh", mesh_spec, sizeof mesh_spec, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-cycle", &cycle, NULL));
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-max_level", &level, NULL));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-write", &do_write));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-read", &do_read));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-sequence", &do_seq));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-kill", &do_kill));
  PetscCall(PetscOptionsHasName(NULL, NULL, "-loop", &do_loop));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-damage", dmg, sizeof dmg, &do_damage));
  PetscCheck(prefix[0], comm, PETSC_ERR_USER_INPUT, "option -prefix: give the checkpoint's path prefix");
  max_level = (int)level;
  PetscCall(AmrMeshCreate(comm, mesh_spec, &mesh));

  if (do_write) PetscCall(write_set(comm, mesh.conn, prefix, cycle, PETSC_TRUE));
  if (do_read) PetscCall(read_set(comm, mesh.conn, prefix, cycle, 3 * sizeof(int32_t)));
  if (do_write && !rank) {
    for (int k = 0; k < 3; k++) {
      static const char *const kinds[] = {"manifest", "forest", "state"};
      path_of(prefix, k ? current_seq(prefix) : 0, kinds[k], path);
      printf("%s: %s %lld bytes\n", PROGRAM, path, file_size(path));
    }
  }
  for (int64_t k = 1; do_loop; k++) PetscCall(write_set(comm, mesh.conn, prefix, k, PETSC_TRUE));
  if (do_seq || do_kill) {
    char staged[PETSC_MAX_PATH_LEN];
    int s0 = 0;
    if (!rank) s0 = current_seq(prefix);
    PetscCallMPI(MPI_Bcast(&s0, 1, MPI_INT, 0, comm));
    PetscCall(write_set(comm, mesh.conn, prefix, 1, PETSC_TRUE));
    if (do_seq) PetscCall(read_set(comm, mesh.conn, prefix, 1, 3 * sizeof(int32_t)));
    PetscCall(write_set(comm, mesh.conn, prefix, 2, PETSC_FALSE));
    path_of(prefix, s0 + 2, "forest", staged);
    if (!rank) CHECK(truncate(staged, file_size(staged) / 2) == 0);
    PetscCallMPI(MPI_Barrier(comm));
    /* the job dies before its commit: every rank, as a scheduler kills it */
    if (do_kill) raise(SIGKILL);
    PetscCall(read_set(comm, mesh.conn, prefix, 1, 3 * sizeof(int32_t)));
    PetscCall(write_set(comm, mesh.conn, prefix, 3, PETSC_TRUE));
    PetscCall(read_set(comm, mesh.conn, prefix, 3, 3 * sizeof(int32_t)));
    /* the commit removed the replaced set and left nothing staged */
    path_of(prefix, s0 + 1, "forest", path);
    CHECK(file_size(path) < 0);
    path_of(prefix, 0, "manifest.new", path);
    CHECK(file_size(path) < 0);
    path_of(prefix, s0 + 2, "forest", path);
    CHECK(file_size(path) > 0);
  }
  if (do_damage) {
    char p[PETSC_MAX_PATH_LEN];
    int err = 0;
    PetscCall(PetscSNPrintf(p, sizeof p, "%s-np%d", prefix, size));
    PetscCall(write_set(comm, mesh.conn, p, 1, PETSC_TRUE));
    if (!rank) err = damage(p, dmg);
    PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
    PetscCheck(!err, comm, PETSC_ERR_ARG_WRONG, "option -damage %s: unknown kind or failed", dmg);
    if (!strcmp(dmg, "problem")) {
      AmrCkpState st;
      p4est_t *p4est;
      double *a = NULL;
      int32_t *b = NULL;
      AmrField fields[2] = {{(void **)&a, sizeof(double)}, {(void **)&b, 3 * sizeof(int32_t)}};
      PetscCall(AmrCheckpointRead(comm, p, mesh.conn, sizeof(cell_t), 2, fields, &p4est, NULL, &st));
      PetscCall(AmrCkpStateCheckString(st, "problem", "other-problem"));
    } else if (!strcmp(dmg, "degree")) {
      AmrCkpState st;
      p4est_t *p4est;
      double *a = NULL;
      int32_t *b = NULL;
      AmrField fields[2] = {{(void **)&a, sizeof(double)}, {(void **)&b, 3 * sizeof(int32_t)}};
      PetscCall(AmrCheckpointRead(comm, p, mesh.conn, sizeof(cell_t), 2, fields, &p4est, NULL, &st));
      PetscCall(AmrCkpStateCheckInt(st, "degree", 3));
    } else if (!strcmp(dmg, "mesh")) {
      AmrMesh other;
      PetscCall(AmrMeshCreate(comm, P4EST_DIM == 2 ? "builtin:brick:1x2" : "builtin:brick:1x2x1", &other));
      PetscCall(read_set(comm, other.conn, p, 1, 3 * sizeof(int32_t)));
    } else {
      PetscCall(read_set(comm, mesh.conn, p, 1, !strcmp(dmg, "layout") ? 4 * sizeof(int32_t) : 3 * sizeof(int32_t)));
    }
    SETERRQ(comm, PETSC_ERR_PLIB, "the damaged checkpoint '%s' (%s) was read without an error", p, dmg);
  }
  PetscCall(AmrMeshDestroy(&mesh));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscErrorCode err;
  int rank, status = 0;

  AmrMpiIoDefaults(); /* the ranks file's collective writes, as the programs make them */
  if (PetscInitialize(&argc, &argv, NULL, NULL)) return 1;
  PetscPushErrorHandler(PetscReturnErrorHandler, NULL);
  sc_init(PETSC_COMM_WORLD, 0, 0, NULL, SC_LP_ERROR);
  p4est_init(NULL, SC_LP_ERROR);
  MPI_Comm_rank(PETSC_COMM_WORLD, &rank);
  err = run(PETSC_COMM_WORLD);
  if (err) {
    char *why = NULL;
    PetscErrorMessage(err, NULL, &why);
    if (err != PETSC_ERR_USER_INPUT || !rank) fprintf(stderr, "%s: error: %s\n", PROGRAM, why ? why : "internal error");
    if (err != PETSC_ERR_USER_INPUT) MPI_Abort(PETSC_COMM_WORLD, 2);
    status = 1;
  } else if (check_failures) {
    fprintf(stderr, "%s: [rank %d] %d checks failed\n", PROGRAM, rank, check_failures);
    status = 1;
  }
  /* aborts on p4est memory a successful run left behind */
  if (!status) sc_finalize();
  PetscPopErrorHandler();
  PetscFinalize();
  return status;
}
