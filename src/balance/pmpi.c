/* The MPI profiling layer (lbclock.h): every MPI call through which a rank
 * communicates or waits is wrapped here and calls its PMPI_ twin, and the
 * calling thread's CPU and wall time inside it are summed.  Linked as
 * objects into the programs (amrdlb_pmpi), with the wrappers exported so
 * that the shared libraries' calls (PETSc, hypre, p4est, libsc) resolve to
 * them too.  The calls wrapped, and why the others are not, are one list,
 * pmpi.list, from which the build writes the wrappers and the exports.  A
 * nested call (an MPI routine calling another through its public name)
 * counts once. */
#include "balance/lbclock.h"

#include <mpi.h>

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

/* Close the open segment at wall time w (a CPU reading now) and open the
 * next there. */
static void segment(double w)
{
  const double cpu = lb_clock_thread_cpu(), span = w - t.seg_wall;
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
  t.entry = lb_clock_wall();
  /* the program worked since the last call: a new segment starts here */
  if (t.entry - t.last_exit > GAP) segment(t.entry);
}

static void leave(void)
{
  double w, d;
  if (!enabled || --t.depth) return;
  w = lb_clock_wall();
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
    double a = lb_clock_wall(), b;
    for (int i = 0; i < N; i++) (void)lb_clock_wall();
    b = lb_clock_wall();
    wall = (b - a) / N;
    for (int i = 0; i < N; i++) (void)lb_clock_thread_cpu();
    cpu = (lb_clock_wall() - b) / N;
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
  if (enabled && t.seg_calls) segment(lb_clock_wall());
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

/* every call of pmpi.list (pmpi_gen.cmake writes the WRAP lines) */
#include "pmpi_wrappers.h"
