#ifndef AMRDLB_MESH_CHECKPOINT_IMPL_H
#define AMRDLB_MESH_CHECKPOINT_IMPL_H

/* Private to the checkpoint sets: what writing (checkpoint_write.c) and
 * reading (checkpoint.c) share: the manifest, the files' block checksums
 * and the per-cell layout.  Functions that fail on one rank only return
 * an errno; the collective ones a PetscErrorCode. */

#include "mesh/checkpoint.h"
#include "mesh/p4est_dim.h"

/* Checksums per block rather than per file, so that writers and readers
 * share the work of a large forest file among their ranks: blocks of at
 * least 64 KiB, doubled until a file has at most 1024 of them (a 10 GB
 * forest: 16 MiB blocks, a manifest line of 9 KB). */
#define CKP_MIN_BLOCK ((long long)1 << 16)
#define CKP_MAX_BLOCKS 1024
#define CKP_MAX_FIELDS 32
#define CKP_MAGIC "amrdlb-checkpoint"

typedef struct {
  long long size, block;
  int nblocks;
  uint32_t *crc;
} CkpFile;

typedef struct {
  int version, dim, nfields;
  long long seq, cells, qsize;
  long long fsize[CKP_MAX_FIELDS];
  CkpFile file[2]; /* forest, state */
  long long ranks_size, ranks_parts; /* the ranks file: its bytes, the ranks whose parts it holds */
} CkpManifest;

typedef struct {
  size_t qsize;
  int nfields;
  size_t fsize[CKP_MAX_FIELDS];
  unsigned char *fdata[CKP_MAX_FIELDS];
  unsigned char *qbuf; /* reading: the quadrant data until the forest's data shrinks to it */
} CellLayout;

/* A visit of one cell (AmrCkpEachCell): its index i in curve order, its
 * quadrant in each of the two forests. */
typedef void (*cell_fn)(p4est_locidx_t i, p4est_quadrant_t *qa, p4est_quadrant_t *qb, void *ctx);

/** The names of the set's data files, P.S.forest, P.S.state (the two
 *  the manifest checksums by blocks) and P.S.ranks. */
extern const char *const amr_ckp_file_kinds[3];

/** CRC-32 (IEEE 802.3, zlib's crc32) of n bytes: every checksum of a set. */
uint32_t AmrCkpCrc(const void *p, size_t n);
/** The block size and count of a file of f->size bytes. */
void AmrCkpSetBlocks(CkpFile *f);
/** Frees the manifest's checksums. */
PetscErrorCode AmrCkpManifestFree(CkpManifest *m);
/** P.manifest (seq 0, kind "manifest" or "manifest.new"), P.S.forest, P.S.state. */
PetscErrorCode AmrCkpPath(const char *prefix, long long seq, const char *kind, char *path);
/** Parses manifest text; what a reader must refuse goes into msg (empty:
 *  read), a PETSc error only for a failed allocation. */
PetscErrorCode AmrCkpManifestParse(const char *text, CkpManifest *m, char *msg, size_t msglen);
/** Rank 0's len bytes at buf to every rank. */
PetscErrorCode AmrCkpBcastBytes(MPI_Comm comm, void *buf, size_t len);
/** Writes a file with its data on disk before returning; errno (0: done). */
int AmrCkpWriteSynced(const char *path, const void *buf, size_t len);
/** One rank's errno made collective: "cannot WHAT checkpoint file PATH". */
PetscErrorCode AmrCkpCheckErrno(MPI_Comm comm, int err, const char *what, const char *path);
/** Syncs a file the ranks wrote and checksums its blocks into f, shared
 *  among the ranks. */
PetscErrorCode AmrCkpChecksumFile(MPI_Comm comm, const char *path, CkpFile *f);
/** A file of the set against its manifest entry f (mpath: the manifest;
 *  NULL: f was just written and is read back); collective. */
PetscErrorCode AmrCkpVerifyFile(MPI_Comm comm, const char *path, const char *mpath, const CkpFile *f);
/** A new, empty file at path with room for its bytes (rank 0), and Open
 *  MPI's semaphore of its name removed: a full disk, or a link or device
 *  in its place, is a collective user error naming it; collective. */
PetscErrorCode AmrCkpReserve(MPI_Comm comm, const char *path, long long bytes);
/** This rank's stderr held in a memory file while an MPI-IO writer runs
 *  (OMPIO prints a line of its own for every refused write): the memory
 *  file and in *saved the real stderr, or -1 and -1 when not held. */
int AmrCkpHoldStderr(int *saved);
/** Stderr back; what was held is dropped (drop: the error line says why)
 *  or passed on. */
void AmrCkpReleaseStderr(int mem, int saved, int drop);
/** Removes Open MPI's semaphore for the shared file pointer of the file
 *  at path (rank 0, before and after an MPI-IO writer has it open). */
void AmrCkpDropOmpioSemaphore(const char *path);
/** Writes the ranks file at path: every rank's own part of st and its
 *  index entry, collectively, read back; *size the file's bytes. */
PetscErrorCode AmrCkpStageRanks(MPI_Comm comm, AmrCkpState st, const char *path, long long *size);
/** Reads the ranks file at path of its manifest mpath (size bytes, parts
 *  ranks' parts): checks its size and header, and on as many ranks as
 *  parts reads each rank's own part into st after checking its checksum;
 *  on another rank count no part is read.  Collective. */
PetscErrorCode AmrCkpReadRanks(MPI_Comm comm, const char *path, const char *mpath, long long size, long long parts, AmrCkpState st);
/** Calls fn(i, quadrant of a, quadrant of b, ctx) on the local quadrants of
 *  a and b (the same forest) in curve order. */
void AmrCkpEachCell(p4est_t *a, p4est_t *b, cell_fn fn, void *ctx);
/** Bytes per cell of layout L: its quadrant data and its outside arrays. */
size_t AmrCkpLayoutTotal(const CellLayout *L);

#endif
