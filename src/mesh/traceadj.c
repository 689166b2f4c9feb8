/* The face adjacency of a trace's cells (traceadj.h): every cell's face
 * neighbour of its own size, found across tree faces by p4est's own
 * transform (p4est_quadrant_face_neighbor_extra), then looked up among
 * the cells sorted by tree and curve index: the cell that contains it
 * (same size or coarser), or else the finer cells inside it that touch
 * the shared face (a hanging face). */
#include "mesh/traceadj.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Cell i of t as a p4est quadrant of its tree. */
static void cell_quadrant(const lb_load_trace *t, int64_t i, p4est_quadrant_t *q)
{
  memset(q, 0, sizeof *q);
  q->x = t->pos[i * P4EST_DIM];
  q->y = t->pos[i * P4EST_DIM + 1];
#ifdef P4_TO_P8
  q->z = t->pos[i * P4EST_DIM + 2];
#endif
  q->level = (int8_t)t->level[i];
}

/* The first cell at or after curve position (tree, z). */
static int64_t lower_bound(const lb_load_trace *t, const uint64_t *z, int32_t tree, uint64_t key)
{
  int64_t lo = 0, hi = t->ncells;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (t->tree[mid] < tree || (t->tree[mid] == tree && z[mid] < key)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The coordinates of quadrant r, as the trace stores them. */
static void quadrant_pos(const p4est_quadrant_t *r, int32_t pos[3])
{
  pos[0] = r->x;
  pos[1] = r->y;
  pos[2] = 0;
#ifdef P4_TO_P8
  pos[2] = r->z;
#endif
}

/* Whether the cell j inside quadrant r touches r's face f. */
static int touches(const lb_load_trace *t, int64_t j, const p4est_quadrant_t *r, int f)
{
  int32_t rp[3];
  const int a = f / 2;
  quadrant_pos(r, rp);
  const p4est_qcoord_t x = t->pos[j * P4EST_DIM + a], hj = P4EST_QUADRANT_LEN(t->level[j]), hr = P4EST_QUADRANT_LEN(r->level);
  return f % 2 ? x + hj == rp[a] + hr : x == rp[a];
}

/* Append v to the growing list (*list, *n of *cap).  It grows by a
 * quarter, not doubling: at 131 million cells the list is 2.2 GB (2D) and
 * realloc moves the pages of a block that large rather than copying. */
static PetscErrorCode push(int **list, size_t *n, size_t *cap, int v)
{
  PetscFunctionBeginUser;
  if (*n == *cap) {
    const size_t grown = *cap + *cap / 4 + 1024;
    int *l = realloc(*list, grown * sizeof *l);
    PetscCheck(l, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory for %zu neighbour entries", grown);
    *list = l;
    *cap = grown;
  }
  (*list)[(*n)++] = v;
  PetscFunctionReturn(0);
}

static int cmp_int(const void *a, const void *b)
{
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

PetscErrorCode AmrTraceAdjacency(p4est_connectivity_t *conn, const lb_load_trace *t, int64_t **xadj, int **adj)
{
  const int64_t N = t->ncells;
  const int L = LB_TRACE_MAXLEVEL(P4EST_DIM);
  const uint64_t full = (uint64_t)1 << (P4EST_DIM * L); /* a tree's curve length */
  uint64_t *z;
  size_t n = 0, cap = 0;

  PetscFunctionBeginUser;
  *xadj = NULL;
  *adj = NULL;
  PetscCheck(t->dim == P4EST_DIM, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "trace cycle %d is %dD, the mesh %dD", t->cycle, t->dim, P4EST_DIM);
  PetscCheck(t->pos, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "trace cycle %d has no cell positions (format version %d)", t->cycle, t->version);
  PetscCheck(L == P4EST_MAXLEVEL, PETSC_COMM_SELF, PETSC_ERR_PLIB, "trace level %d, p4est's %d", L, P4EST_MAXLEVEL);
  PetscCheck(N <= INT_MAX, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "trace cycle %d: %lld cells, more than int cell indices hold", t->cycle, (long long)N);
  PetscCall(PetscMalloc1(N + 1, &z));
  *xadj = malloc(((size_t)N + 1) * sizeof **xadj);
  PetscCheck(*xadj, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory for the neighbour rows of %lld cells", (long long)N);
  /* the cells must tile their trees in curve order, as a forest's do */
  for (int64_t i = 0; i < N; i++) {
    z[i] = lb_trace_morton(P4EST_DIM, t->pos + i * P4EST_DIM);
    PetscCheck(t->tree[i] < conn->num_trees, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "trace cycle %d: cell %lld on tree %d, the mesh has %d trees",
               t->cycle, (long long)i, (int)t->tree[i], (int)conn->num_trees);
    const int fresh = i == 0 || t->tree[i] != t->tree[i - 1];
    const uint64_t end = i == 0 ? 0 : z[i - 1] + ((uint64_t)1 << (P4EST_DIM * (L - t->level[i - 1])));
    PetscCheck((fresh && z[i] == 0 && (i == 0 || t->tree[i] > t->tree[i - 1])) || (!fresh && z[i] == end), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT,
               "trace cycle %d: cell %lld does not follow cell %lld on the curve (not a forest on this mesh)", t->cycle, (long long)i, (long long)i - 1);
    /* a forest covers every tree of its mesh, each whole: a mesh with
     * more trees than the recording's is not its mesh */
    PetscCheck(!fresh || t->tree[i] == (i ? t->tree[i - 1] + 1 : 0), PETSC_COMM_SELF, PETSC_ERR_USER_INPUT,
               "trace cycle %d: no cell on tree %d of the mesh's %d", t->cycle, i ? (int)t->tree[i - 1] + 1 : 0, (int)conn->num_trees);
    PetscCheck(!fresh || i == 0 || end == full, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "trace cycle %d: the cells of tree %d do not cover it", t->cycle,
               (int)t->tree[i - 1]);
  }
  PetscCheck(N > 0 && t->tree[N - 1] == conn->num_trees - 1, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "trace cycle %d: cells on %d trees, the mesh has %d",
             t->cycle, N > 0 ? (int)t->tree[N - 1] + 1 : 0, (int)conn->num_trees);
  PetscCheck(z[N - 1] + ((uint64_t)1 << (P4EST_DIM * (L - t->level[N - 1]))) == full, PETSC_COMM_SELF, PETSC_ERR_USER_INPUT,
             "trace cycle %d: the cells of tree %d do not cover it", t->cycle, (int)t->tree[N - 1]);
  for (int64_t i = 0; i < N; i++) {
    p4est_quadrant_t q, r;
    const size_t row = n;
    (*xadj)[i] = (int64_t)n;
    cell_quadrant(t, i, &q);
    for (int f = 0; f < P4EST_FACES; f++) {
      int nface;
      const p4est_topidx_t nt = p4est_quadrant_face_neighbor_extra(&q, t->tree[i], f, &r, &nface, conn);
      if (nt < 0) continue; /* the domain's boundary */
      const int rf = nface % P4EST_FACES;
      int32_t rp[3];
      quadrant_pos(&r, rp);
      const uint64_t key = lb_trace_morton(P4EST_DIM, rp);
      const int64_t k = lower_bound(t, z, (int32_t)nt, key);
      if (k < N && t->tree[k] == nt && z[k] == key && t->level[k] <= r.level) {
        PetscCall(push(adj, &n, &cap, (int)k)); /* the same size, or coarser at the same corner */
      } else if (k < N && t->tree[k] == nt && z[k] == key) {
        /* finer cells inside r: those on the shared face */
        const uint64_t past = key + ((uint64_t)1 << (P4EST_DIM * (L - r.level)));
        for (int64_t j = k; j < N && t->tree[j] == nt && z[j] < past; j++)
          if (touches(t, j, &r, rf)) PetscCall(push(adj, &n, &cap, (int)j));
      } else {
        /* a coarser cell that contains r starts before it */
        PetscCheck(k > 0 && t->tree[k - 1] == nt && z[k - 1] < key && key < z[k - 1] + ((uint64_t)1 << (P4EST_DIM * (L - t->level[k - 1]))),
                   PETSC_COMM_SELF, PETSC_ERR_USER_INPUT, "trace cycle %d: no cell covers the neighbour of cell %lld across its face %d", t->cycle,
                   (long long)i, f);
        PetscCall(push(adj, &n, &cap, (int)(k - 1)));
      }
    }
    /* each once, never the cell itself (a tree that meets itself) */
    if (n > row) qsort(*adj + row, n - row, sizeof **adj, cmp_int);
    size_t m = row;
    for (size_t a = row; a < n; a++)
      if ((*adj)[a] != i && (m == row || (*adj)[m - 1] != (*adj)[a])) (*adj)[m++] = (*adj)[a];
    n = m;
  }
  (*xadj)[N] = (int64_t)n;
  PetscCall(PetscFree(z));
  /* the list's spare quarter back */
  int *fit = realloc(*adj, (n + 1) * sizeof *fit);
  PetscCheck(fit, PETSC_COMM_SELF, PETSC_ERR_MEM, "out of memory for %zu neighbour entries", n + 1);
  *adj = fit;
  PetscFunctionReturn(0);
}
