/** @file balance.h
 *  The amrdlb balancer: processor graphs, the superstep engine with its MPI
 *  and virtual backends, the method registry, results and metrics.
 *
 *  Depends on MPI only.  Every function that can fail returns an lb_err;
 *  lb_errmsg() gives the one-line explanation of the last failure.
 *
 *  Using it:  lb_graph_create("line:16", &g);  m = lb_method_find("tree");
 *  lb_params_init(&p, m);  lb_balance(g, m, &p, loads, &res);  read res.flow
 *  (net flow per undirected edge) and res.load (final load per rank).
 *
 *  Writing a method: a const lb_method, registered by lb_method_register
 *  (a built-in one: one file in methods/ plus its name in the
 *  LB_METHOD_LIST of registry.c).  The method's step is
 *  written for one rank; the engine calls it for a range of local ranks
 *  (all of them on the virtual backend, the process's own on MPI).
 */
#ifndef AMRDLB_BALANCE_H
#define AMRDLB_BALANCE_H

#include <mpi.h>
#include <stdint.h>

/* ------------------------------------------------------------------ errors */

/** Error codes of the balancer library (never exit or abort). */
typedef enum {
  LB_OK = 0,
  LB_ERR_ARG,         /**< invalid argument or option value */
  LB_ERR_MEM,         /**< allocation failed */
  LB_ERR_FILE,        /**< file missing or malformed */
  LB_ERR_GRAPH,       /**< bad graph spec or graph unsuitable (e.g. disconnected) */
  LB_ERR_LOAD,        /**< negative, non-finite or non-integral load */
  LB_ERR_METHOD,      /**< unknown method */
  LB_ERR_SIZE,        /**< graph size differs from the number of MPI ranks */
  LB_ERR_MPI,         /**< an MPI call failed */
  LB_ERR_UNSUPPORTED  /**< method cannot run on this graph or with this input */
} lb_err;

/** The message of the last error raised in this thread (one line, no newline). */
const char *lb_errmsg(void);

/** Record an error message (printf format) and return code; for library and method code. */
lb_err lb_error(lb_err code, const char *fmt, ...)
#if defined(__GNUC__)
  __attribute__((format(printf, 2, 3)))
#endif
  ;

/* ------------------------------------------------------------------ graphs */

/** How a graph was made; the Ripple trees need the structured kinds. */
typedef enum {
  LB_GRAPH_LINE, LB_GRAPH_RING, LB_GRAPH_MESH2D, LB_GRAPH_MESH3D,
  LB_GRAPH_TORUS3D, LB_GRAPH_HYPERCUBE, LB_GRAPH_TREE, LB_GRAPH_EDGES
} lb_graph_kind;

/** An undirected processor graph in CSR form.  Every process holds the whole
 *  graph.  Directed edge e (0 <= e < 2m) goes from its owner rank r
 *  (xadj[r] <= e < xadj[r+1]) to adj[e]; rev[e] is the opposite direction and
 *  eid[e] the undirected edge.  Undirected edge k joins eu[k] < ev[k]; a
 *  positive flow on k goes from eu[k] to ev[k]. */
typedef struct {
  lb_graph_kind kind;
  int dims[3];          /**< line/ring: N; mesh/torus: A,B(,C) with x fastest; hypercube: D; tree: N,K */
  int n, m;             /**< ranks, undirected edges */
  int max_degree;
  int *xadj, *adj, *rev, *eid, *owner;  /**< owner[e]: rank that owns directed edge e */
  int *eu, *ev;
  char spec[256];
} lb_graph;

/** Build a graph from a spec: line:N ring:N mesh2d:AxB mesh3d:AxBxC
 *  torus3d:AxBxC hypercube:D tree:N:K file:PATH (edge list, # comments). */
lb_err lb_graph_create(const char *spec, lb_graph **g);
/** Build a graph of n ranks from m undirected edges (duplicates merged, self loops refused). */
lb_err lb_graph_create_edges(int n, int m, const int *eu, const int *ev, lb_graph **g);
/** Free a graph and set *g to NULL. */
void lb_graph_destroy(lb_graph **g);

/** Bytes of g and its arrays: what every process of an MPI run holds,
 *  since each holds the whole graph (44 bytes per rank on a line). */
double lb_graph_bytes(const lb_graph *g);
/** 1 if the graph is connected, else 0. */
int lb_graph_connected(const lb_graph *g);
/** Number of grid dimensions of a line/ring (1), mesh2d (2), mesh3d or
 *  torus3d (3) graph; 0 for every other kind. */
int lb_graph_grid_dims(const lb_graph *g);
/** Directed edge from u to v, or -1 if u and v are not neighbours. */
int lb_graph_edge(const lb_graph *g, int u, int v);

/** A rooted spanning tree of a graph (BFS). */
typedef struct {
  int n, root;
  int *parent;       /**< parent rank, -1 at the root or outside the tree */
  int *up;           /**< directed edge rank -> parent, -1 at the root */
  int *depth;        /**< hops from the root, -1 if unreachable */
  int *order;        /**< ranks in BFS order (parents before children) */
  int *size;         /**< number of ranks in the subtree */
  int *xchild, *child; /**< children of rank r: child[xchild[r] .. xchild[r+1]) */
  int height;        /**< largest depth */
} lb_tree;

/** BFS spanning tree from root (children in CSR order). Free with lb_tree_free. */
lb_err lb_tree_bfs(const lb_graph *g, int root, lb_tree *t);
/** Free the arrays of a tree. */
void lb_tree_free(lb_tree *t);

/** Melhem et al. 1991's per-source spanning trees (line: the line; mesh2d: the
 *  source's row plus every column; hypercube: binomial trees).  Load that
 *  reaches rank r from neighbour `from` (-1: r is the source) continues to
 *  the children written to kid[] with subtree sizes size[] (at most 2 +
 *  dimension entries; both may be NULL).  Returns the number of children,
 *  or -1 when the graph kind has no such trees. */
int lb_source_tree_children(const lb_graph *g, int r, int from, int *kid, int *size);

/** Recursive bisection hierarchy into connected halves (low/high index
 *  halves on a line).  At level k the set with id s splits into sets 2s and
 *  2s+1 of level k+1 (P1 and P2 of Horton 1993); a set of one rank keeps id
 *  2s.  Ids run to 2^nlevels, beyond n where the halves are uneven. */
typedef struct {
  int n, nlevels;    /**< nlevels: number of bisection phases */
  int *group;        /**< group[k*n + r]: set of rank r at level k, 0 <= k <= nlevels */
} lb_bisection;

/** Build the bisection hierarchy of a connected graph. */
lb_err lb_bisection_build(const lb_graph *g, lb_bisection *b);
/** Free the arrays of a hierarchy. */
void lb_bisection_free(lb_bisection *b);

/** A proper edge colouring: colour[k] of undirected edge k, ncolours colours.
 *  On a line: colour 0 joins (2i, 2i+1), colour 1 joins (2i+1, 2i+2). */
lb_err lb_graph_edge_colouring(const lb_graph *g, int *colour, int *ncolours);

/** Smallest and largest non-zero eigenvalues of the graph Laplacian D - A
 *  of a connected graph: in closed form for line, ring, mesh, torus and
 *  hypercube graphs (Cartesian products of paths and cycles), by Lanczos
 *  with full reorthogonalisation otherwise.  Both are 0 for a single rank. */
lb_err lb_graph_laplacian_bounds(const lb_graph *g, double *lmin, double *lmax);
/** The same, except where Lanczos converges the largest eigenvalue but not
 *  lambda_2 (large irregular graphs: lambda_2 lies in a cluster near 0).
 *  Then *lmin_exact = 0, *lmin is the smallest Ritz value, at least
 *  lambda_2 (lambda_2 estimated), and *lmax the largest Ritz value plus its
 *  residual bound.  That is an interval for Chebyshev acceleration, which
 *  needs *lmax >= lambda_max and only slows down on the part of the
 *  spectrum below *lmin.  Otherwise *lmin_exact = 1 and the values are
 *  those of lb_graph_laplacian_bounds.  lmin_exact may be NULL. */
lb_err lb_graph_laplacian_interval(const lb_graph *g, double *lmin, double *lmax, int *lmin_exact);

/* ------------------------------------------------------------------ runs */

/** Backends that run the same method code. */
typedef enum {
  LB_BACKEND_VIRTUAL, /**< all ranks of the graph in this process */
  LB_BACKEND_MPI      /**< one graph rank per MPI process of the communicator */
} lb_backend;

/** Why a run stopped. */
typedef enum {
  LB_STOP_NONE,       /**< not stopped (running) */
  LB_STOP_TARGET,     /**< avg/max reached the target */
  LB_STOP_MAX_ITERS,  /**< iteration cap reached */
  LB_STOP_CONVERGED   /**< the method has no more transfers to make */
} lb_stop;

/** Name of a stop reason ("target", "max_iters", "converged", "none"). */
const char *lb_stop_name(lb_stop s);

/** New load appearing at a rank before a superstep (Melhem et al. 1991 superposition). */
typedef struct { int step, rank; double amount; } lb_inject;

/** Default of lb_params.check_interval.  A check is one MPI_Allreduce of a
 *  few doubles; if it costs c neighbour exchanges (near 1 where collectives
 *  are fast, as Lieber et al. 2016 found on Juqueen, up to about log2 P latencies on
 *  a software tree), checking every K iterations adds about c/K to a
 *  one-exchange iteration, and the stop comes up to K - 1 iterations late
 *  ((K - 1)/2 on average).  The sum is smallest near K = sqrt(2 I c) for a
 *  run of I iterations: 10 for Lieber et al. 2016's fast methods (SO, ID: about 50
 *  iterations to 0.999 on its 16x16x8 BOX) at c = 1, and more for longer
 *  runs or dearer collectives.  On that BOX, K = 10 turns 349, 47, 52, 184,
 *  14 iterations (OD, SO, ID, CT, DE) into 350, 50, 60, 190, 20 with 35, 5,
 *  6, 19, 2 checks instead of one per iteration; dimension exchange, whose
 *  iteration is a sweep of one exchange per edge colour, is better served
 *  by K = 1 or 2. */
#define LB_CHECK_INTERVAL 10

/** Largest number of per-method options. */
#define LB_MAX_OPTIONS 8

typedef struct lb_run lb_run;
typedef struct lb_method lb_method;

/** Called on every process after every iteration (collective on MPI); an
 *  error it returns ends the run with that error. */
typedef lb_err (*lb_observer)(lb_run *run, void *ctx);

/** Parameters of one run. */
typedef struct {
  lb_backend backend;
  MPI_Comm comm;          /**< MPI backend: one process per graph rank */
  double target;          /**< stop when avg/max >= target (0: off) */
  int max_iters;          /**< stop after this many iterations (0: off) */
  int check_interval;     /**< LB_LOCAL methods: check the target every this many iterations (>= 1) */
  const double *capacity; /**< n relative capacities (NULL: all equal) for LB_CAPACITY methods: rank r's
                               share of the load is capacity[r] / sum, and the target applies to load / share */
  double opt[LB_MAX_OPTIONS]; /**< values of the method's options, in its table order */
  const lb_inject *inject; int ninject;
  int track_costs;        /**< record Melhem et al. 1991 migration and imbalance costs */
  lb_observer observer; void *observer_ctx;
} lb_params;

/** Units sent straight from one rank to another, neighbours or not (Langer 2014). */
typedef struct {
  int from, to;
  double amount;
} lb_transfer;

/** Result of a run, identical on every process. */
typedef struct {
  int n, m;
  double *load0;          /**< n initial loads (after nothing was moved) */
  double *load;           /**< n final loads */
  double *flow;           /**< m net flows, positive from eu[k] to ev[k] */
  lb_transfer *transfer;  /**< direct transfers, sorted by (from, to); NULL for methods that move load along edges only */
  int ntransfers;         /**< entries of transfer; when > 0 they, not flow, say how units move (flow is then their net across each edge) */
  double injected;        /**< total load injected during the run */
  int iterations;         /**< iterations (phases) in which load moved or, for iterative methods, performed */
  int target_iteration;   /**< first iteration after which avg/max met the target, exact at any check interval (-1: never, or no target) */
  long long rounds, messages, bytes;
  long long collectives;  /**< collectives during the supersteps: the method's reductions, gathers, scans and agreements, and the stop checks */
  double runtime_s;
  double setup_s;         /**< the method's setup (e.g. Chebyshev's eigenvalues), not part of runtime_s */
  lb_stop stop;
  double migration_cost;  /**< Melhem et al. 1991: sum over iterations of the largest edge transfer (c = 1) */
  double imbalance_cost;  /**< Melhem et al. 1991: sum over iterations of max load - average load, load in transit counted at its receiver */
  double spectrum[2];     /**< the Laplacian interval [lambda_min, lambda_max] the method set up with (Chebyshev); NaN: none */
  int spectrum_exact;     /**< 1: both ends converged; 0: lambda_min is the smallest Ritz value (lambda_2 estimated); -1: none */
  double method_bytes_max;  /**< LB_ACCOUNTED methods: the most bytes the method held for one rank at a time (lb_run_account), largest over the ranks; -1: not accounted */
  double method_bytes_mean; /**< the same, mean over the ranks; -1: not accounted */
} lb_result;

/** Fill p with defaults for method m (backend virtual, no target, no cap). */
lb_err lb_params_init(lb_params *p, const lb_method *m);

/** Run method m on graph g from the loads load0[0..n) (the same array on
 *  every process).  On the MPI backend the communicator size must be g->n.
 *  Collective on p->comm for the MPI backend.  Free res with lb_result_free. */
lb_err lb_balance(const lb_graph *g, const lb_method *m, const lb_params *p,
                  const double *load0, lb_result *res);
/** Free the arrays of a result. */
void lb_result_free(lb_result *res);

/* ---------------------------------------------- writing a method (engine) */

/** Method property flags. */
enum {
  LB_INTEGRAL   = 1, /**< needs integral loads and keeps them integral */
  LB_CONNECTED  = 2, /**< needs a connected graph */
  LB_TERMINATES = 4, /**< stops by itself (else -lb_target or -lb_max_iters is required) */
  LB_INJECT     = 8, /**< accepts load injected during the run */
  /** Neighbour-only supersteps: the step never fails, and every rank ends
   *  iterations, stops and contributes to reductions at the same supersteps
   *  (functions of the step and of data all ranks have), so the engine needs
   *  no collective except the reductions and the stop check every
   *  check_interval iterations. */
  LB_LOCAL      = 16,
  LB_CAPACITY   = 32, /**< accepts per-rank capacities (lb_params.capacity) */
  LB_DIRECT     = 64, /**< sends units straight between any two ranks (lb_run_transfer) */
  LB_ACCOUNTED  = 128 /**< counts its memory per rank with lb_run_account (lb_result.method_bytes_max) */
};

/* The curve types of lbcurve.h, which the shift hook below takes. */
struct lb_curve_shifter;
struct lb_curve_result;

/** What one step of a shifting method's sequence did (lb_method.shift). */
typedef enum {
  LB_SHIFT_SFC,     /**< first step: chains-on-chains split by the weights */
  LB_SHIFT_SHIFTED, /**< one shift by the measured loads */
  LB_SHIFT_BEST     /**< shifting stopped improving on this curve: the best partition measured */
} lb_curve_shift_action;

/** A per-method option, set from the command line as -lb_NAME. */
typedef struct { const char *name; double def; const char *help; } lb_option;

/** Reduction operators. */
typedef enum { LB_SUM, LB_MAX, LB_MIN } lb_op;

/** A balancing method: a name, its options and three functions. */
struct lb_method {
  const char *name;
  const char *summary;
  unsigned flags;
  const lb_option *options; int noptions;
  /** Allocate per-run state, declare channels and reductions. */
  lb_err (*setup)(lb_run *run, void **state);
  /** One superstep for the local ranks lo..hi-1. */
  lb_err (*step)(lb_run *run, void *state, int lo, int hi);
  /** Free the state. */
  void (*destroy)(void *state);
  /** On a curve (chain mode: the app, lbbench -chain on a trace), a method
   *  with this hook shifts the cuts once per balancing step by the load
   *  each part measured, instead of cutting at the target loads of its
   *  supersteps; NULL for the others.  Collective over comm: this rank's
   *  piece (n, w) of the curve, the current partition cur_counts (nparts
   *  values) and the loads measured on it (nparts values, e.g. each rank's
   *  own work in the last cycle).  seq is the sequence the caller carries
   *  between steps (and checkpoints), started by lb_curve_shifter_init with
   *  the method's first option (its penalty); res receives the new
   *  partition (lb_curve_result_free), action what was done. */
  lb_err (*shift)(struct lb_curve_shifter *seq, MPI_Comm comm, int64_t n, const double *w, const int64_t *cur_counts,
                  const double *measured, struct lb_curve_result *res, lb_curve_shift_action *action);
  /** On a curve of whole tasks (chain mode, and lbbench's task mode), a
   *  method with this hook cuts the curve itself into nparts parts instead
   *  of cutting at the target loads of its supersteps (sfc-exact, hiersfc:
   *  where every load is divisible, as in lb_balance, the equal split is
   *  already their optimum and their supersteps are sfc's).  Collective over
   *  comm, as the lbcurve.h functions: this process's piece (n, w); p
   *  gives the method's options; res receives the partition
   *  (lb_curve_result_free).  NULL for the others. */
  lb_err (*partition)(const lb_params *p, MPI_Comm comm, int64_t n, const double *w, int nparts, struct lb_curve_result *res);
};

/** The graph of a run. */
const lb_graph *lb_run_graph(const lb_run *run);
/** The parameters of a run. */
const lb_params *lb_run_params(const lb_run *run);
/** Record in the run's result the Laplacian interval a method set up
 *  with, and whether lambda_min converged (lb_graph_laplacian_interval). */
void lb_run_set_spectrum(lb_run *run, double lmin, double lmax, int lmin_exact);
/** Current superstep, from 0. */
int lb_run_step(const lb_run *run);
/** Iterations completed so far. */
int lb_run_iterations(const lb_run *run);
/** Loads, indexed by rank (entries of local ranks are valid). */
double *lb_run_load(lb_run *run);
/** Flow per directed edge as seen by its owner: amount sent from owner[e] to adj[e]. */
double *lb_run_flow(lb_run *run);
/** Load injected at rank r before this superstep (0 if none); already added to the load. */
double lb_run_injected(const lb_run *run, int r);
/** Declare that `amount` of load left the owner of directed edge e in a
 *  message posted this superstep, to be added to adj[e]'s load when it is
 *  read in the next one.  Observers and the Melhem et al. 1991 costs count it at
 *  adj[e] already, as the paper's L_{i,t} does. */
void lb_run_transit(lb_run *run, int e, double amount);

/** Record, from a local rank, that `amount` units go directly from rank
 *  `from` to rank `to` (any two ranks; counted as one message).  For
 *  methods flagged LB_DIRECT; the method updates the loads itself and the
 *  result lists every transfer. */
void lb_run_transfer(lb_run *run, int from, int to, double amount);

/** Count `bytes` (negative: freed) that an LB_ACCOUNTED method holds for
 *  local rank r, or for the whole process when r < 0: what every local rank
 *  holds alike, counted at each of them, as a process of one rank would hold
 *  it.  Rank r's peak, reported in lb_result.method_bytes_max and _mean, is
 *  the process's peak plus r's own.  Per rank only from the first
 *  superstep on (in setup the local ranks are not known yet). */
void lb_run_account(lb_run *run, int r, long long bytes);

/** Declare the channels: messages of up to msg_cap doubles per directed edge
 *  and per step, and a publication of pub_len doubles per rank and step that
 *  every neighbour reads.  Call from setup. */
lb_err lb_run_channels(lb_run *run, int msg_cap, int pub_len);
/** Declare a reduction with ngroups groups (1: global); *slot receives its id.  Call from setup. */
lb_err lb_run_reduction(lb_run *run, lb_op op, int ngroups, int *slot);

/** Post a message of len doubles on directed edge e (owned by a local rank);
 *  returns where to write it.  Read by adj[e] in the next superstep. */
double *lb_msg_post(lb_run *run, int e, int len);
/** Message received on directed edge e (from adj[e] to owner[e]) posted in
 *  the previous superstep; returns its length (0: none) and sets *data. */
int lb_msg_recv(const lb_run *run, int e, const double **data);
/** Publication slots written this superstep, rank r at [r*pub_len]; every
 *  local rank must publish every superstep. */
double *lb_pub_out(lb_run *run);
/** Publications of the previous superstep, rank q at [q*pub_len] (valid for neighbours of local ranks). */
const double *lb_pub_in(const lb_run *run);
/** Contribute v of one rank to a reduction (for group g); the result is read
 *  next superstep.  In an LB_LOCAL method, every rank contributes to a
 *  reduction in the same supersteps, and only those cost a collective. */
void lb_reduce(lb_run *run, int slot, int g, double v);
/** Result of a reduction over the contributions of the previous superstep. */
double lb_reduced(const lb_run *run, int slot, int g);
/** Mark this superstep as the end of an iteration (phase). Call once per step from any local rank. */
void lb_run_end_iteration(lb_run *run, int moved);
/** Stop the run after this superstep; every local rank may call it. */
void lb_run_stop(lb_run *run, lb_stop why);
/** Gather the loads of all ranks into all[0..n), load in transit counted at
 *  its receiver (collective on MPI; one in lb_result.collectives). */
lb_err lb_run_gather_loads(lb_run *run, double *all);
/** Prefix sums of the loads (load in transit at its receiver) without
 *  gathering them (three collectives: the quantum's and the scan's two,
 *  counted in lb_result.collectives): (*prefix)[i] is the sum over the ranks
 *  before local rank lo + i, for i = 0..hi - lo (so (*prefix)[hi - lo]
 *  is the sum through rank hi - 1), and *total the sum over all ranks.
 *  The sums are exact sums of the loads rounded to a common quantum,
 *  2^-61 of the largest load over the rank count, so that every process
 *  count gives the same bits; the array is the run's, valid until the
 *  next call. */
lb_err lb_run_scan_loads(lb_run *run, const double **prefix, double *total);
/** Whether any rank's flag is set (one collective, counted): the step sets *flag over
 *  its local ranks, and every process gets the answer for all. */
lb_err lb_run_any(lb_run *run, int *flag);

/* ------------------------------------------------------------------ registry */

/** Register the method m under name, as PETSc's PCRegister adds a PC
 *  type: it is then found by lb_method_find, listed by lb_method_get and
 *  offered by the programs' -lb_method.  name must be m->name (the name
 *  reports print), new to the registry; m is kept, not copied, so it must
 *  outlive its use (a static const table, as the built-in methods are).
 *  The built-in methods are registered through this call on the registry's
 *  first use.  LB_ERR_ARG, with lb_errmsg() saying why, on a name taken,
 *  missing or unlike m->name, or a table without a step. */
lb_err lb_method_register(const char *name, const lb_method *m);
/** The method registered under name, or NULL with lb_errmsg() naming the
 *  registered ones. */
const lb_method *lb_method_find(const char *name);
/** Number of registered methods. */
int lb_method_count(void);
/** The i-th registered method (0 <= i < lb_method_count()). */
const lb_method *lb_method_get(int i);

/* ------------------------------------------------------------------ metrics */

/** Quality of a result (Horton 1993, Lieber et al. 2016, Niemoeller et al. 2020 definitions). */
typedef struct {
  double max_over_avg;   /**< max load / average load */
  double imbalance_pct;  /**< I% = 100 (max - avg) N / (max (N - 1)) (Niemoeller et al. 2020) */
  double l2_imbalance;   /**< || load - avg ||_2 (Horton 1993 Table 5) */
  double transfer_tot;   /**< sum |flow| / total load (Lieber et al. 2016) */
  double transfer_max;   /**< max |flow| / average load (Lieber et al. 2016) */
  double migrated_units; /**< sum over ranks of max(0, initial - final): load that changed owner */
  double unit_hops;      /**< units times the hand-overs that carried them: sum of |flow| (a unit relayed over k edges counts k), or of the direct transfers */
} lb_metrics;

/** Compute the metrics of a result. */
lb_err lb_metrics_compute(const lb_result *res, lb_metrics *mt);
/** Metrics of a bare load vector (only the load-based fields are set). */
void lb_metrics_loads(int n, const double *load, lb_metrics *mt);

/** Sort x[0..n) ascending (the order statistics behind medians and
 *  trimmed means of measured times). */
void lb_sort_values(int n, double *x);
/** Quantile q in [0, 1] of sorted x[0..n), n > 0, by linear interpolation
 *  between order statistics (q = 0.5: the median; for even n the mean of
 *  the middle two). */
double lb_quantile_sorted(const double *x, int n, double q);

#endif
