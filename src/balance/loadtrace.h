/** @file loadtrace.h
 *  The load trace: the weighted curve the app's balancer saw in every
 *  cycle (amr2d/amr3d -trace_loads FILE), which lbbench replays
 *  (-scenario trace:FILE[:CYCLE]).  src/app/FORMATS.md describes the format byte
 *  by byte; this header is its one definition, shared by the app's writer
 *  and lbbench's reader.
 *
 *  All numbers little-endian.  A file header, then one record per cycle:
 *
 *    file header (LB_TRACE_FILE_BYTES): magic "AMRTRACE", u32 version,
 *      u32 dim, u32 cell bytes (without phase weights), u32 cycle header
 *      bytes, u32 cost slots, u32 run id (the app's run that wrote it, 0:
 *      none recorded)
 *    cycle header (LB_TRACE_CYCLE_BYTES): "CYCL", i32 cycle, i32 ranks P,
 *      i32 weight mode, i32 load types, i32 flags, i64 cells N, i64 record
 *      bytes, i32 phases K (version 2), i32 0, f64 cost[LB_TRACE_MAX_TYPES],
 *      version 2: char phase name[LB_TRACE_MAX_PHASES][LB_TRACE_PHASE_NAME]
 *    per rank: i64 first cell[P], f64 measured time[P], f64 predicted load[P]
 *    per cell, in curve order: f64 weight, u8 load type, f32 centre[dim],
 *      version 2: i32 tree, u8 level, i32 quadrant coordinate[dim] (p4est's
 *      integer position on its tree), f64 weight of each phase[K]
 *
 *  Version 1 lacks the phases and the cells' positions; the reader reads
 *  both (t->version says which), the writer writes version 2.
 */
#ifndef AMRDLB_LOADTRACE_H
#define AMRDLB_LOADTRACE_H

#include <stdint.h>

#include "balance/balance.h"

#define LB_TRACE_MAGIC "AMRTRACE"
#define LB_TRACE_VERSION 2
#define LB_TRACE_MAX_TYPES 8
#define LB_TRACE_MAX_PHASES 12
#define LB_TRACE_PHASE_NAME 16 /**< bytes of a phase name's slot, NUL-padded */
#define LB_TRACE_FILE_BYTES 32
#define LB_TRACE_CYCLE_BYTES_V1 (48 + 8 * LB_TRACE_MAX_TYPES)
#define LB_TRACE_CYCLE_BYTES (LB_TRACE_CYCLE_BYTES_V1 + LB_TRACE_PHASE_NAME * LB_TRACE_MAX_PHASES)
/** Bytes of one cell of a dim-dimensional version 1 trace. */
#define LB_TRACE_CELL_BYTES_V1(dim) (9 + 4 * (dim))
/** Bytes of one cell of a dim-dimensional version 2 trace with K phase weights. */
#define LB_TRACE_CELL_BYTES(dim, K) (14 + 8 * (dim) + 8 * (K))

/** p4est's largest level (P4EST_MAXLEVEL, P8EST_MAXLEVEL): quadrant
 *  coordinates run over [0, 2^LB_TRACE_MAXLEVEL(dim)) on every tree. */
#define LB_TRACE_MAXLEVEL(dim) ((dim) == 2 ? 30 : 19)

/** Cycle flags. */
enum {
  LB_TRACE_BALANCED = 1, /**< the app ran its method on this cycle's curve */
  LB_TRACE_RING = 2      /**< the app's processor graph was the ring (-lb_graph ring) */
};

/** One cycle of a trace. */
typedef struct {
  int version; /**< of the file it was read from (1: no positions, no phases) */
  int dim, cycle, nranks, weights, ntypes, flags;
  int nphases; /**< K: phases with per-cell weights (-lb_weights phases), 0 without */
  char phase_name[LB_TRACE_MAX_PHASES][LB_TRACE_PHASE_NAME]; /**< their names, NUL-terminated */
  int64_t ncells;
  double cost[LB_TRACE_MAX_TYPES]; /**< weight per load type (NaN: no such type) */
  int64_t *first;                  /**< first cell of every rank: the app's split */
  double *time, *predicted;        /**< measured local work (thread CPU s) and predicted load (mean 1) per rank */
  double *w;                       /**< weight of every cell as the balancer used it */
  unsigned char *type;             /**< load type of every cell */
  float *x;                        /**< centre of every cell, dim per cell */
  int32_t *tree;                   /**< tree of every cell (version 2; NULL in version 1) */
  unsigned char *level;            /**< refinement level of every cell (version 2) */
  int32_t *pos;                    /**< p4est quadrant coordinates of every cell on its tree, dim per cell (version 2) */
  double *pw;                      /**< weight of every cell in phase k: pw[k N + i] (NULL without phases) */
} lb_load_trace;

/** One cell as the writer encodes it. */
typedef struct {
  double w;         /**< weight as the balancer used it */
  int type;         /**< load type */
  double x[3];      /**< centre */
  int32_t tree;     /**< tree */
  int level;        /**< refinement level */
  int32_t pos[3];   /**< p4est quadrant coordinates on the tree */
  const double *pw; /**< nphases weights, one per phase (may be NULL when there are none) */
} lb_trace_cell_data;

/** Name of weight mode k ("count", "timing", "model", "measured", "phases"). */
const char *lb_trace_weight_name(int k);

/** Fill the file header for a dim-dimensional trace written by run `run`. */
void lb_trace_file_header(int dim, uint32_t run, unsigned char out[LB_TRACE_FILE_BYTES]);

/** The run id of a file header (0: none recorded); -1 when h is no trace's
 *  header (no magic), else 0. */
int lb_trace_file_run(const unsigned char h[LB_TRACE_FILE_BYTES], uint32_t *run);

/** Fill a cycle header from t's scalars and phase names (version 2). */
void lb_trace_cycle_header(const lb_load_trace *t, unsigned char out[LB_TRACE_CYCLE_BYTES]);

/** Bytes of a version 2 cycle record of P ranks and N cells of dimension
 *  dim with K phase weights per cell. */
int64_t lb_trace_record_bytes(int dim, int K, int P, int64_t N);

/** Encode the per-rank arrays of a record (24 P bytes). */
void lb_trace_rank_arrays(int P, const int64_t *first, const double *time, const double *predicted, unsigned char *out);

/** Encode one cell of a version 2 record with K phase weights. */
void lb_trace_cell(int dim, int K, const lb_trace_cell_data *c, unsigned char *out);

/** Read cycle `cycle` (-1: the last) of trace file path.  A missing or
 *  unreadable file, a wrong magic or version, a truncated record or a
 *  cycle not in the file is an LB_ERR_FILE error naming the file.  Free
 *  with lb_trace_free. */
lb_err lb_trace_read(const char *path, int cycle, lb_load_trace *t);

/** The cycle numbers of trace file path in file order (*cycles malloc'ed,
 *  *ncycles of them), every record checked as by lb_trace_read. */
lb_err lb_trace_cycles(const char *path, int *ncycles, int **cycles);

/** Bytes that lb_trace_refine(t, k) needs while it runs: the refined
 *  arrays and the recorded ones (INT64_MAX when that overflows), so a
 *  caller can refuse a refinement beyond memory before allocating. */
int64_t lb_trace_refine_bytes(const lb_load_trace *t, int k);

/** Refine every cell of t k times: its 2^(dim k) children in curve order
 *  (p4est's Morton order), each with the parent's load type and centre
 *  (the trace holds no geometry), its level plus k, its quadrant
 *  coordinates, and exactly 2^-(dim k) of its weight and phase weights (a
 *  power of two scales without rounding: the children's exact sum, and
 *  their pairwise sum, is the parent's); the app's split is
 *  refined with the cells.  Load types, centres and phase weights are
 *  refined only where t holds them (a caller that reads none sets them
 *  NULL first, and lb_trace_refine_bytes counts only what t holds).  A trace without positions (version 1) or cells
 *  refined past p4est's largest level is an LB_ERR_ARG error naming
 *  -refine. */
lb_err lb_trace_refine(lb_load_trace *t, int k);

/** The index on p4est's curve of a tree of the quadrant at coordinates pos
 *  (dim values): the bits interleaved, x fastest, at the largest level. */
uint64_t lb_trace_morton(int dim, const int32_t *pos);

/** Free the arrays of a trace cycle. */
void lb_trace_free(lb_load_trace *t);

#endif
