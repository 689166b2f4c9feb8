/** @file rankfile.h
 *  The per-rank values of a report record.  The record (one JSON line)
 *  carries each per-rank quantity's reductions over the ranks,
 *  "key":{"min":..,"mean":..,"max":..,"argmax":..}, so that its size does
 *  not grow with the number of ranks; every rank's own value goes to one
 *  block of a binary side file beside the report, written collectively
 *  with MPI-IO, each rank its own row.  The block's layout is
 *  src/app/FORMATS.md's "The per-rank side file". */
#ifndef AMRDLB_RANKFILE_H
#define AMRDLB_RANKFILE_H

#include <mpi.h>

#include "util/json.h"

/** Bytes of a block's header, of one entry of its field table, and the
 *  longest field name (NUL-padded in its entry). */
#define JSON_RANKS_HEADER 64
#define JSON_RANKS_ENTRY  64
#define JSON_RANKS_NAME   56

/** This rank's row of the side file's block being built: every per-rank
 *  field's name ("PATH.key" for a field of a nested object), numpy type
 *  ("<f8" or "<i8") and this rank's value. */
struct json_ranks {
  int n, cap;
  char (*name)[JSON_RANKS_NAME];
  const char **type;
  unsigned char (*value)[8];
};

/** The fields keys[0..n-1] of j, each "key":{"min","mean","max","argmax"}
 *  over the ranks of comm from this rank's value mine[i] (collective: one
 *  MPI_MAXLOC reduction and one sum for all n).  A NaN is no value: the
 *  rank is left out, and a field no rank has is null.  argmax is the
 *  lowest rank holding the max.  With j->ranks, the values join the
 *  side file's row.  Returns 0 or an MPI error code. */
int json_rank_reals(json_line *j, MPI_Comm comm, int n, const char *const keys[], const double mine[]);

/** The same for integer values: min and max written as integers. */
int json_rank_ints(json_line *j, MPI_Comm comm, int n, const char *const keys[], const long long mine[]);

/** Open path for the side file (collective) and cut it to keep bytes:
 *  the blocks a restart keeps.  Returns 0 or an MPI error code, the same
 *  on every rank; *fh is MPI_FILE_NULL on error. */
int json_ranks_open(MPI_Comm comm, const char *path, MPI_Offset keep, MPI_File *fh);

/** Write the block of the row b at offset at of fh (collective): rank 0
 *  its header (cycle, run_id, the ranks, the field table) and its row,
 *  every other rank its own row.  *bytes: the block's length.  The row is
 *  emptied for the next record.  Returns 0 or an MPI error code, the same
 *  on every rank. */
int json_ranks_write(struct json_ranks *b, MPI_Comm comm, MPI_File fh, MPI_Offset at, long long cycle, const char *run_id, MPI_Offset *bytes);

/** The length of the block whose header is hdr (JSON_RANKS_HEADER bytes
 *  read from the side file), -1 if hdr is no block's header. */
long long json_ranks_block_bytes(const unsigned char *hdr);

/** Free the row's arrays. */
void json_ranks_free(struct json_ranks *b);

#endif
