/** \file options.h
 * Option helpers every program of the project reads its options with:
 * errors that name the option and the bad value, choices listed by -help. */
#ifndef AMR_UTIL_OPTIONS_H
#define AMR_UTIL_OPTIONS_H

#include <petscsys.h>

/* The program's name in its messages: one source, two executables. */
#ifndef P4_TO_P8
#define AMR_PROGRAM "amr2d"
#else
#define AMR_PROGRAM "amr3d"
#endif

/* Read an option of a value (a number, a string, an array) with PETSc's
 * reader call, inside PetscOptionsBegin/End: the option given with no
 * value or an empty one is an error (PETSc's readers of numbers keep the
 * default then), and a PETSc parsing error, which does not name the
 * option, becomes a user error that does.  A switch is AmrOptionsSwitch. */
#define AMR_OPTION(name, call) \
  do { \
    PetscErrorCode ierr_; \
    PetscCall(AmrOptionsNeedValue(PetscOptionsObject, name)); \
    ierr_ = (call); \
    if (ierr_) { \
      char *why_; \
      PetscCall(PetscErrorMessage(ierr_, NULL, &why_)); \
      SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_USER_INPUT, "option %s: %s", name, why_ ? why_ : "invalid value"); \
    } \
  } while (0)

/** Option name (with the block's prefix), when given, must have a value
 *  that is not empty: "option NAME: needs a value". */
PetscErrorCode AmrOptionsNeedValue(PetscOptionItems *PetscOptionsObject, const char *name);

/** Read the choice option name (between PetscOptionsBegin and
 *  PetscOptionsEnd) among the n names of list, through PetscOptionsEList,
 *  so that -help lists them.  *index is the default on entry (-1: none)
 *  and the choice on return; set (may be NULL) says whether the option was
 *  given.  A value outside the list is a PETSC_ERR_USER_INPUT error
 *  "option NAME VALUE: unknown WHAT (choose from A, B, C)". */
PetscErrorCode AmrOptionsChoice(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, const char *what, int n,
                                const char *const *list, int *index, PetscBool *set);

/** Open ends of AmrOptionsRealIn's interval. */
enum { AMR_OPEN_LO = 1, AMR_OPEN_HI = 2 };

/** Read a real option as text and take the whole text as a finite number
 *  in [lo, hi] (open at the ends open names; hi may be INFINITY).  Read as
 *  text because PETSc's own parser rejects a malformed number without
 *  naming the option: anything else is a PETSC_ERR_USER_INPUT error
 *  "option NAME: 'TEXT' is not WHAT".  *value is the default on entry. */
PetscErrorCode AmrOptionsRealIn(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, double lo, double hi, int open,
                                const char *what, double *value);

/** The same for a decimal integer in [lo, hi]; set (may be NULL) says
 *  whether the option was given. */
PetscErrorCode AmrOptionsIntIn(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, long lo, long hi, const char *what,
                               int *value, PetscBool *set);

/** A switch: a bare -NAME or -NAME true|yes|1 turns it on, -NAME
 *  false|no|0 off; anything else is
 *  "option NAME: 'TEXT' is not true or false". */
PetscErrorCode AmrOptionsSwitch(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, PetscBool *value);

/** Run read(comm, ctx) with PETSc's error printing off; an error's message goes
 *  into msg (len bytes, empty without error) and its code is returned.
 *  For programs and libraries that print the one error line themselves. */
PetscErrorCode AmrOptionsQuietly(MPI_Comm comm, PetscErrorCode (*read)(MPI_Comm comm, void *ctx), void *ctx, char *msg, size_t len);

/** The options files of the command line (-options_file FILE) and those
 *  they include, checked before PETSc reads them (PETSc's reader crashes
 *  on a file that includes itself or on /dev/zero, and ends in a trace
 *  of many lines on a missing one): each must be a regular file of at
 *  most AMR_OPTIONS_FILE_MAX bytes, included at most AMR_OPTIONS_DEPTH
 *  deep and never by itself.  The files PETSc reads of its own accord
 *  go through the same guard: those of -options_file in the environment
 *  variable PETSC_OPTIONS, and, without -skip_petscrc, ~/.petscrc,
 *  ./.petscrc and ./petscrc where they exist and are no folder (which
 *  PETSc reads as empty).  Needs neither PETSc nor
 *  MPI: 0, or 1 with the error line's text "option -options_file FILE:
 *  ..." (or "options file .petscrc (...): ...") in msg. */
#define AMR_OPTIONS_FILE_MAX (1 << 20)
#define AMR_OPTIONS_DEPTH 8
int AmrOptionsFilesGuard(int argc, char **argv, char *msg, size_t len);

/** Before MPI starts: Open MPI 4.1's native MPI-IO writes a collective
 *  write's pieces by read-modify-write of the aggregate region (data
 *  sieving) under locks that do not cover every aggregator's range, and on
 *  16 ranks here rows of the report's side file came back as other bytes
 *  in two runs of three (the checkpoint's ranks file likewise); without
 *  sieving the writes are whole.  Sets OMPI_MCA_fbtl_posix_write_datasieving
 *  to 0 unless the user set it; other MPIs ignore the name.  Called by
 *  AmrInitialize; a program that starts MPI itself calls it first. */
void AmrMpiIoDefaults(void);

/** A program's start: MPI, the guard of its options files (the error
 *  line "PROGRAM: error: ..." printed by rank 0), then PETSc; and its end,
 *  PETSc then MPI.  Nonzero: the program ends with that status.  A bare
 *  -help on the command line prints \a help, then the program's options
 *  before the solvers'; "-help full" adds PETSc's generic options first,
 *  as PETSc's own -help does. */
int AmrInitialize(int *argc, char ***argv, const char *program, const char *help);
int AmrFinalize(void);

/** Every value in the options database, whatever reads it: NaN and
 *  infinities are refused (no option means one), and so are whole
 *  numbers outside the range of an int, before a reader narrows them to
 *  another number (PETSc's wraps 4294967300 to 4).  A collective
 *  PETSC_ERR_USER_INPUT error "option -NAME VALUE: ...". */
PetscErrorCode AmrOptionsCheckValues(MPI_Comm comm);

/** Parse a whole string as a finite double: 1 on success, 0 otherwise
 *  (empty, trailing text, overflow, NaN or infinity).  For values inside
 *  an option's text (a field of a spec such as lognormal:S,L,SEED). */
int AmrParseReal(const char *s, double *v);

/** Parse a whole string as a decimal integer: 1 on success, 0 otherwise. */
int AmrParseInt(const char *s, long *v);

#endif
