/** \file checkpoint.h
 * Checkpoint sets: a forest with its per-cell data and a state record,
 * written atomically and verified before anything is loaded.
 *
 * A set with prefix P consists of four files in P's directory:
 *   P.manifest   text, written last: format version, dimension, sequence
 *                number, cell count, the per-cell layout, and for the two
 *                data files their size and one CRC-32 per block (64 KiB,
 *                doubled until a file has at most 1024 blocks, so that the
 *                ranks share the checksumming); its last line is the
 *                CRC-32 (zlib's crc32) of the lines before it;
 *   P.S.forest   p4est_save_ext() of the forest (saved as if on one rank,
 *                so any rank count can load it), every cell's quadrant
 *                data followed by its entries of the outside arrays;
 *   P.S.state    the state record's shared table (util/record.h: named
 *                integers, reals, strings and byte blobs), little-endian,
 *                self-describing, written by rank 0;
 *   P.S.ranks    every rank's own part of the state record, written and
 *                read with MPI-IO (each rank its own part and its entry
 *                of the file's index; written independently, read
 *                collectively), each part with its CRC-32 there
 *                (checked by the rank that reads it); the manifest has
 *                the file's size and the number of parts.
 * S is the sequence number, one more than the manifest being replaced.  A
 * new set is written beside the old one and made current by renaming
 * P.manifest.new over P.manifest (one atomic rename), after which the old
 * sequence's files are removed.  A job killed at any point therefore leaves
 * P.manifest naming a complete, checksummed set: the old one until the
 * rename, the new one after it.
 *
 * Compiled once for 2D and once for 3D (P4_TO_P8).  Every error in a
 * checkpoint being read (missing, truncated or corrupted file, another
 * dimension or format version, a layout or state entry the caller does not
 * expect) is a collective PETSC_ERR_USER_INPUT error naming the file, raised
 * before p4est's loader (which aborts on bad files) opens anything.
 */
#ifndef AMRDLB_MESH_CHECKPOINT_H
#define AMRDLB_MESH_CHECKPOINT_H

#include "mesh/migrate.h"
#include "util/record.h"

/** Format version of the checkpoint set (manifest, forest layout, state). */
#define AMR_CHECKPOINT_VERSION 2

/**
 * Write the new checkpoint set of prefix beside the current one, up to
 * and including P.manifest.new, without making it current; collective on
 * p4est->mpicomm.  The forest is saved with its quadrant data and the
 * nfields outside arrays (fields[f].size bytes per local cell in curve
 * order), the shared state record from rank 0, each rank's own part by
 * itself (MPI-IO, P.S.ranks).  A file that cannot be created is
 * a collective user error naming it; p4est_save_ext aborts the job on a
 * write error after that (a full disk), which leaves the current set
 * intact like any other kill.  Memory: a copy of the local quadrants with
 * all their cell data while the forest is saved.  Call
 * AmrCheckpointCommit() next; AmrCheckpointWrite() does both.
 * \param[in] prefix the set's path prefix P
 * \param[in] p4est the forest with its quadrant data
 * \param[in] nfields arrays kept outside the forest
 * \param[in] fields those arrays
 * \param[in] st the state record (rank 0's shared table, every rank's own part)
 */
PetscErrorCode AmrCheckpointStage(const char *prefix, p4est_t *p4est, int nfields, const AmrField *fields, AmrCkpState st);

/** Make the staged set of prefix current (rename P.manifest.new over
 *  P.manifest) and remove the files of the set it replaced; collective.
 *  \param[in] comm the ranks that wrote
 *  \param[in] prefix the set's path prefix P
 */
PetscErrorCode AmrCheckpointCommit(MPI_Comm comm, const char *prefix);

/** AmrCheckpointStage() then AmrCheckpointCommit().
 *  \param[in] prefix the set's path prefix P
 *  \param[in] p4est the forest with its quadrant data
 *  \param[in] nfields arrays kept outside the forest
 *  \param[in] fields those arrays
 *  \param[in] st the state record
 */
PetscErrorCode AmrCheckpointWrite(const char *prefix, p4est_t *p4est, int nfields, const AmrField *fields, AmrCkpState st);

/**
 * Read the current checkpoint set of prefix on comm (any number of ranks):
 * verify the manifest, the dimension, the version, the per-cell layout the
 * caller expects (data_size bytes of quadrant data, nfields arrays of
 * fields[f].size bytes) and every file's size and checksums, then load the
 * forest partitioned evenly by cell count.
 *
 * If conn is given the checkpoint's coarse mesh must equal it, and the
 * forest uses conn; otherwise the loaded connectivity is returned in
 * *conn_out (the caller destroys it after the forest).  fields[f].data
 * receive PetscMalloc'd arrays of the local cells (any previous array is
 * freed); *st the state record: the shared table, and each rank's own part
 * where comm has as many ranks as wrote the checkpoint (on another rank
 * count no rank reads a part and the own tables are empty).  The forest's
 * user_pointer is NULL.
 * \param[in] comm the ranks that read (any number)
 * \param[in] prefix the set's path prefix P
 * \param[in] conn the run's coarse mesh, or NULL
 * \param[in] data_size bytes of quadrant data expected
 * \param[in] nfields arrays expected outside the forest
 * \param[in,out] fields their sizes; their data are replaced
 * \param[out] p4est the forest
 * \param[out] conn_out the loaded connectivity when conn is NULL
 * \param[out] st the state record
 */
PetscErrorCode AmrCheckpointRead(MPI_Comm comm, const char *prefix, p4est_connectivity_t *conn, size_t data_size, int nfields, const AmrField *fields,
                                 p4est_t **p4est, p4est_connectivity_t **conn_out, AmrCkpState *st);

/** Read only the shared state record of the current checkpoint set of
 *  prefix on comm (no rank's part: AmrCkpStateRankParts gives 0), after
 *  verifying its manifest (dimension, version) and the state file's size
 *  and checksums: what a restart needs to know (the options
 *  and the per-cell layout of the run) before it can read the forest.
 *  Errors as AmrCheckpointRead.
 *  \param[in] comm the ranks that read
 *  \param[in] prefix the set's path prefix P
 *  \param[out] st the state record
 */
PetscErrorCode AmrCheckpointReadState(MPI_Comm comm, const char *prefix, AmrCkpState *st);

#endif
