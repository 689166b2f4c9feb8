#define _POSIX_C_SOURCE 200809L /* clock_gettime */
/* The MPI profiling layer (lbclock.h): every MPI call through which a rank
 * communicates or waits is wrapped here and calls its PMPI_ twin, and the
 * calling thread's CPU and wall time inside it are summed.  Linked as
 * objects into the programs (amrdlb_pmpi), with the wrappers exported
 * (pmpi.list) so that the shared libraries' calls (PETSc, hypre, p4est,
 * libsc) resolve to them too.  Calls that only describe (ranks, types,
 * groups) are not wrapped: they neither wait nor move data.  A nested
 * call (an MPI routine calling another through its public name) counts
 * once. */
#include <mpi.h>
#include <time.h>

/* Reading the thread's CPU clock is a system call (0.36 us here), the wall
 * clock is not (0.03 us), and a waiting rank polls MPI_Iprobe and
 * MPI_Testall a million times in a run: a CPU reading around every call
 * slowed the message progress those polls drive (the mission run took
 * 7.5 s instead of 6.6).  So every call reads the wall clock only, and the
 * CPU clock is read per segment: a run of MPI calls with short gaps between
 * them (under GAP of the program's own work), closed after SEGMENT calls,
 * at a call that took LONG or more (a wait, where a reading costs under 1%
 * of it) and whenever the totals are read.  A segment's CPU time inside
 * MPI is its wall time inside MPI times the share of the wall clock the
 * thread had on the CPU over the segment: exact on a core of its own,
 * and where ranks share cores a segment holds little but MPI. */
#define GAP 50e-6
#define LONG 50e-6
#define SEGMENT 64

typedef struct {
  int depth;
  double entry, last_exit;   /* wall clock at the outermost call's entry, at the last call's exit */
  double seg_wall, seg_cpu;  /* the open segment's start */
  double seg_mpi;            /* wall time inside MPI in it */
  int seg_calls;
  double in_cpu, in_wall;
  long long calls, cpu_reads;
} account;

static _Thread_local account t;
static int enabled = 1; /* lb_pmpi_enable */

static double now(clockid_t id)
{
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Close the open segment at wall time w (a CPU reading now) and open the
 * next there. */
static void segment(double w)
{
  const double cpu = now(CLOCK_THREAD_CPUTIME_ID), span = w - t.seg_wall;
  double share = span > 0 ? (cpu - t.seg_cpu) / span : 1;
  share = share < 0 ? 0 : share > 1 ? 1 : share;
  t.in_cpu += share * t.seg_mpi;
  t.seg_wall = w;
  t.seg_cpu = cpu;
  t.seg_mpi = 0;
  t.seg_calls = 0;
  t.cpu_reads++;
}

static void enter(void)
{
  if (!enabled || t.depth++) return;
  t.entry = now(CLOCK_MONOTONIC);
  /* the program worked since the last call: a new segment starts here */
  if (t.entry - t.last_exit > GAP) segment(t.entry);
}

static void leave(void)
{
  double w, d;
  if (!enabled || --t.depth) return;
  w = now(CLOCK_MONOTONIC);
  d = w - t.entry;
  t.seg_mpi += d;
  t.in_wall += d;
  t.calls++;
  t.last_exit = w;
  if (d > LONG || ++t.seg_calls >= SEGMENT) segment(w);
}

/* The cost of the layer's clock readings, measured once: two wall
 * readings per call, one CPU reading per segment. */
static void reading_costs(double *wall_s, double *cpu_s)
{
  static double wall = -1, cpu;
  if (wall < 0) {
    enum { N = 4000 };
    double a = now(CLOCK_MONOTONIC), b;
    for (int i = 0; i < N; i++) (void)now(CLOCK_MONOTONIC);
    b = now(CLOCK_MONOTONIC);
    wall = (b - a) / N;
    for (int i = 0; i < N; i++) (void)now(CLOCK_THREAD_CPUTIME_ID);
    cpu = (now(CLOCK_MONOTONIC) - b) / N;
  }
  *wall_s = wall;
  *cpu_s = cpu;
}

void lb_pmpi_enable(int on);
void lb_pmpi_enable(int on) { enabled = on; }

void lb_pmpi_totals(double *cpu, double *wall, long long *calls, double *cost_s);
void lb_pmpi_totals(double *cpu, double *wall, long long *calls, double *cost_s)
{
  double rw, rc;
  if (enabled && t.seg_calls) segment(now(CLOCK_MONOTONIC));
  reading_costs(&rw, &rc);
  *cpu = t.in_cpu;
  *wall = t.in_wall;
  *calls = t.calls;
  *cost_s = 2 * rw * (double)t.calls + rc * (double)t.cpu_reads;
}

#define WRAP(name, params, args) \
  int MPI_##name params \
  { \
    enter(); \
    const int r_ = PMPI_##name args; \
    leave(); \
    return r_; \
  }

/* point to point */
WRAP(Send, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c), (b, n, t, d, tag, c))
WRAP(Ssend, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c), (b, n, t, d, tag, c))
WRAP(Rsend, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c), (b, n, t, d, tag, c))
WRAP(Bsend, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c), (b, n, t, d, tag, c))
WRAP(Recv, (void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Status *st), (b, n, t, s, tag, c, st))
WRAP(Sendrecv, (const void *sb, int sn, MPI_Datatype st, int d, int stag, void *rb, int rn, MPI_Datatype rt, int s, int rtag, MPI_Comm c, MPI_Status *status),
     (sb, sn, st, d, stag, rb, rn, rt, s, rtag, c, status))
WRAP(Sendrecv_replace, (void *b, int n, MPI_Datatype t, int d, int stag, int s, int rtag, MPI_Comm c, MPI_Status *st), (b, n, t, d, stag, s, rtag, c, st))
WRAP(Isend, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r), (b, n, t, d, tag, c, r))
WRAP(Issend, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r), (b, n, t, d, tag, c, r))
WRAP(Irsend, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r), (b, n, t, d, tag, c, r))
WRAP(Ibsend, (const void *b, int n, MPI_Datatype t, int d, int tag, MPI_Comm c, MPI_Request *r), (b, n, t, d, tag, c, r))
WRAP(Irecv, (void *b, int n, MPI_Datatype t, int s, int tag, MPI_Comm c, MPI_Request *r), (b, n, t, s, tag, c, r))
WRAP(Probe, (int s, int tag, MPI_Comm c, MPI_Status *st), (s, tag, c, st))
WRAP(Iprobe, (int s, int tag, MPI_Comm c, int *f, MPI_Status *st), (s, tag, c, f, st))
WRAP(Start, (MPI_Request *r), (r))
WRAP(Startall, (int n, MPI_Request r[]), (n, r))

/* completion */
WRAP(Wait, (MPI_Request *r, MPI_Status *st), (r, st))
WRAP(Waitall, (int n, MPI_Request r[], MPI_Status st[]), (n, r, st))
WRAP(Waitany, (int n, MPI_Request r[], int *i, MPI_Status *st), (n, r, i, st))
WRAP(Waitsome, (int n, MPI_Request r[], int *k, int i[], MPI_Status st[]), (n, r, k, i, st))
WRAP(Test, (MPI_Request *r, int *f, MPI_Status *st), (r, f, st))
WRAP(Testall, (int n, MPI_Request r[], int *f, MPI_Status st[]), (n, r, f, st))
WRAP(Testany, (int n, MPI_Request r[], int *i, int *f, MPI_Status *st), (n, r, i, f, st))
WRAP(Testsome, (int n, MPI_Request r[], int *k, int i[], MPI_Status st[]), (n, r, k, i, st))

/* collectives */
WRAP(Barrier, (MPI_Comm c), (c))
WRAP(Ibarrier, (MPI_Comm c, MPI_Request *r), (c, r))
WRAP(Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c))
WRAP(Ibcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *r), (b, n, t, root, c, r))
WRAP(Reduce, (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root, MPI_Comm c), (sb, rb, n, t, op, root, c))
WRAP(Allreduce, (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c), (sb, rb, n, t, op, c))
WRAP(Iallreduce, (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, MPI_Request *r), (sb, rb, n, t, op, c, r))
WRAP(Scan, (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c), (sb, rb, n, t, op, c))
WRAP(Exscan, (const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c), (sb, rb, n, t, op, c))
WRAP(Reduce_scatter, (const void *sb, void *rb, const int rn[], MPI_Datatype t, MPI_Op op, MPI_Comm c), (sb, rb, rn, t, op, c))
WRAP(Reduce_scatter_block, (const void *sb, void *rb, int rn, MPI_Datatype t, MPI_Op op, MPI_Comm c), (sb, rb, rn, t, op, c))
WRAP(Gather, (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, int root, MPI_Comm c), (sb, sn, st, rb, rn, rt, root, c))
WRAP(Gatherv, (const void *sb, int sn, MPI_Datatype st, void *rb, const int rn[], const int dis[], MPI_Datatype rt, int root, MPI_Comm c),
     (sb, sn, st, rb, rn, dis, rt, root, c))
WRAP(Scatter, (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, int root, MPI_Comm c), (sb, sn, st, rb, rn, rt, root, c))
WRAP(Scatterv, (const void *sb, const int sn[], const int dis[], MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, int root, MPI_Comm c),
     (sb, sn, dis, st, rb, rn, rt, root, c))
WRAP(Allgather, (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, MPI_Comm c), (sb, sn, st, rb, rn, rt, c))
WRAP(Iallgather, (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, MPI_Comm c, MPI_Request *r), (sb, sn, st, rb, rn, rt, c, r))
WRAP(Allgatherv, (const void *sb, int sn, MPI_Datatype st, void *rb, const int rn[], const int dis[], MPI_Datatype rt, MPI_Comm c),
     (sb, sn, st, rb, rn, dis, rt, c))
WRAP(Iallgatherv, (const void *sb, int sn, MPI_Datatype st, void *rb, const int rn[], const int dis[], MPI_Datatype rt, MPI_Comm c, MPI_Request *r),
     (sb, sn, st, rb, rn, dis, rt, c, r))
WRAP(Alltoall, (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, MPI_Comm c), (sb, sn, st, rb, rn, rt, c))
WRAP(Ialltoall, (const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt, MPI_Comm c, MPI_Request *r), (sb, sn, st, rb, rn, rt, c, r))
WRAP(Alltoallv, (const void *sb, const int sn[], const int sd[], MPI_Datatype st, void *rb, const int rn[], const int rd[], MPI_Datatype rt, MPI_Comm c),
     (sb, sn, sd, st, rb, rn, rd, rt, c))
WRAP(Alltoallw,
     (const void *sb, const int sn[], const int sd[], const MPI_Datatype st[], void *rb, const int rn[], const int rd[], const MPI_Datatype rt[], MPI_Comm c),
     (sb, sn, sd, st, rb, rn, rd, rt, c))
WRAP(Neighbor_alltoallv,
     (const void *sb, const int sn[], const int sd[], MPI_Datatype st, void *rb, const int rn[], const int rd[], MPI_Datatype rt, MPI_Comm c),
     (sb, sn, sd, st, rb, rn, rd, rt, c))
WRAP(Ineighbor_alltoallv,
     (const void *sb, const int sn[], const int sd[], MPI_Datatype st, void *rb, const int rn[], const int rd[], MPI_Datatype rt, MPI_Comm c, MPI_Request *r),
     (sb, sn, sd, st, rb, rn, rd, rt, c, r))

/* communicators: creating one synchronises its ranks */
WRAP(Comm_dup, (MPI_Comm c, MPI_Comm *n), (c, n))
WRAP(Comm_split, (MPI_Comm c, int color, int key, MPI_Comm *n), (c, color, key, n))
WRAP(Comm_split_type, (MPI_Comm c, int type, int key, MPI_Info i, MPI_Comm *n), (c, type, key, i, n))
WRAP(Comm_create, (MPI_Comm c, MPI_Group g, MPI_Comm *n), (c, g, n))

/* one-sided synchronisation */
WRAP(Win_fence, (int a, MPI_Win w), (a, w))
WRAP(Win_wait, (MPI_Win w), (w))
WRAP(Win_complete, (MPI_Win w), (w))

/* MPI-IO (p4est's forest files): the collective ones wait for every rank */
WRAP(File_open, (MPI_Comm c, const char *name, int mode, MPI_Info i, MPI_File *f), (c, name, mode, i, f))
WRAP(File_close, (MPI_File * f), (f))
WRAP(File_set_size, (MPI_File f, MPI_Offset n), (f, n))
WRAP(File_sync, (MPI_File f), (f))
WRAP(File_write_at_all, (MPI_File f, MPI_Offset o, const void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(File_read_at_all, (MPI_File f, MPI_Offset o, void *b, int n, MPI_Datatype t, MPI_Status *st), (f, o, b, n, t, st))
WRAP(File_write_all, (MPI_File f, const void *b, int n, MPI_Datatype t, MPI_Status *st), (f, b, n, t, st))
WRAP(File_read_all, (MPI_File f, void *b, int n, MPI_Datatype t, MPI_Status *st), (f, b, n, t, st))
