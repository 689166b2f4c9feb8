/* The option helpers of util/options.h. */
#define _POSIX_C_SOURCE 200809L /* strtok_r, strcasecmp */
#include "util/options.h"
#include "util/fileio.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <pwd.h>
#include <unistd.h>

int AmrParseReal(const char *s, double *v)
{
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return errno == 0 && end != s && *end == 0 && isfinite(*v);
}

int AmrParseInt(const char *s, long *v)
{
  char *end;
  errno = 0;
  *v = strtol(s, &end, 10);
  return errno == 0 && end != s && *end == 0;
}

PetscErrorCode AmrOptionsNeedValue(PetscOptionItems *PetscOptionsObject, const char *name)
{
  const char *value;
  PetscBool given;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsFindPair(PetscOptionsObject->options, PetscOptionsObject->prefix, name, &value, &given));
  PetscCheck(!given || (value && value[0]), PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "option %s: needs a value", name);
  PetscFunctionReturn(0);
}

/* One options file and what it includes; stack holds the files that
 * include it (device, inode), depth of them.  what names the file in the
 * error line; where (appended to the names of its includes) says where a
 * file came from that the command line does not name. */
static int guard_file(const char *what, const char *where, const char *path, struct stat *stack, int depth, char *msg, size_t len)
{
  struct stat sb;
  char *text, *save = NULL, inc_what[2 * PATH_MAX + 128];
  size_t n;
  int bad = 0, err;

  if (stat(path, &sb)) return snprintf(msg, len, "%s: cannot open: %s", what, strerror(errno)), 1;
  if (!S_ISREG(sb.st_mode)) return snprintf(msg, len, "%s: not a regular file", what), 1;
  if (sb.st_size > AMR_OPTIONS_FILE_MAX) return snprintf(msg, len, "%s: %lld bytes, an options file has at most %d", what, (long long)sb.st_size, AMR_OPTIONS_FILE_MAX), 1;
  for (int i = 0; i < depth; i++)
    if (stack[i].st_dev == sb.st_dev && stack[i].st_ino == sb.st_ino) return snprintf(msg, len, "%s: includes itself", what), 1;
  if (depth == AMR_OPTIONS_DEPTH) return snprintf(msg, len, "%s: included more than %d deep", what, AMR_OPTIONS_DEPTH), 1;
  stack[depth] = sb;
  if ((err = AmrFileRead(path, 0, &text, &n))) return snprintf(msg, len, "%s: cannot read: %s", what, AmrFileStrerror(err)), 1;
  /* PETSc reads every token of a line as options, # to the line's end a
   * comment, so an include can be anywhere in a line */
  for (char *line = strtok_r(text, "\n", &save); line && !bad; line = strtok_r(NULL, "\n", &save)) {
    char *hash = strchr(line, '#'), *ts = NULL, *tok;
    if (hash) *hash = '\0';
    for (tok = strtok_r(line, " \t\r", &ts); tok && !bad; tok = strtok_r(NULL, " \t\r", &ts))
      if (!strcmp(tok, "-options_file")) {
        const char *inc = strtok_r(NULL, " \t\r", &ts);
        if (!inc) {
          bad = (snprintf(msg, len, "%s: -options_file without a file name", what), 1);
        } else {
          snprintf(inc_what, sizeof inc_what, "option -options_file %.*s%s", PATH_MAX, inc, where);
          bad = guard_file(inc_what, where, inc, stack, depth + 1, msg, len);
        }
      }
  }
  free(text);
  return bad;
}

/* The files of -options_file in a list of words (the command line, or
 * PETSC_OPTIONS split at blanks: where says which). */
static int guard_words(int argc, char **argv, const char *where, char *msg, size_t len)
{
  struct stat stack[AMR_OPTIONS_DEPTH];
  char what[PATH_MAX + 64];

  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "-options_file")) continue;
    if (i + 1 == argc || !argv[i + 1][0]) return snprintf(msg, len, "option -options_file%s: needs a value", where), 1;
    snprintf(what, sizeof what, "option -options_file %s%s", argv[++i], where);
    if (guard_file(what, where, argv[i], stack, 0, msg, len)) return 1;
  }
  return 0;
}

/* Whether the command line has -skip_petscrc (bare, or with a value that
 * is not false), with which PETSc reads no petscrc file. */
static int skips_petscrc(int argc, char **argv)
{
  static const char *const no[] = {"0", "false", "no", "off"};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-skip_petscrc")) continue;
    if (i + 1 == argc || argv[i + 1][0] == '-') return 1;
    for (size_t k = 0; k < sizeof no / sizeof no[0]; k++)
      if (!strcasecmp(argv[i + 1], no[k])) return 0;
    return 1;
  }
  return 0;
}

int AmrOptionsFilesGuard(int argc, char **argv, char *msg, size_t len)
{
  struct stat stack[AMR_OPTIONS_DEPTH], sb;
  const char *env = getenv("PETSC_OPTIONS"), *home = getenv("HOME");
  const struct passwd *pw = getpwuid(getuid());
  char rc[3][PATH_MAX + 16], what[PATH_MAX + 96], where[PATH_MAX + 96];
  int bad = 0, nrc = 0;

  msg[0] = '\0';
  if (guard_words(argc - 1, argv + 1, "", msg, len)) return 1;
  /* PETSc reads PETSC_OPTIONS as if on the command line */
  if (env && env[0]) {
    char *copy = strdup(env), *words[4096], *save = NULL;
    int n = 0;
    if (!copy) return snprintf(msg, len, "environment variable PETSC_OPTIONS: %s", strerror(ENOMEM)), 1;
    for (char *w = strtok_r(copy, " \t\r\n", &save); w && n < 4096; w = strtok_r(NULL, " \t\r\n", &save)) words[n++] = w;
    bad = guard_words(n, words, " (in the environment variable PETSC_OPTIONS)", msg, len);
    free(copy);
    if (bad) return 1;
  }
  /* and, unless told not to, ~/.petscrc, ./.petscrc and ./petscrc, where
   * they exist: through the same guard, as they crash its reader alike
   * (the home folder as PETSc finds it, from HOME or the user database) */
  if (skips_petscrc(argc, argv)) return 0;
  if (home && home[0]) snprintf(rc[nrc++], sizeof rc[0], "%s/.petscrc", home);
  if (pw && pw->pw_dir && pw->pw_dir[0] && (!home || strcmp(home, pw->pw_dir))) snprintf(rc[nrc++], sizeof rc[0], "%s/.petscrc", pw->pw_dir);
  for (int k = 0; k < nrc + 2 && !bad; k++) {
    const char *path = k < nrc ? rc[k] : k == nrc ? ".petscrc" : "petscrc";
    /* a missing one PETSc passes over, and a folder (its reads fail at
     * once: no options, and a folder named petscrc is no mistake) */
    if (stat(path, &sb) ? errno == ENOENT : S_ISDIR(sb.st_mode)) continue;
    snprintf(what, sizeof what, "options file %.*s (PETSc reads it at start; -skip_petscrc passes it over)", PATH_MAX, path);
    snprintf(where, sizeof where, " (in %.*s, which PETSc reads at start; -skip_petscrc passes it over)", PATH_MAX, path);
    bad = guard_file(what, where, path, stack, 0, msg, len);
  }
  return bad;
}

/* What went wrong first while PETSc started, for one line of our own:
 * its traceback handler wrote 14 lines for a PETSC_OPTIONS_YAML that does
 * not parse.  Once PETSc has started, its traceback again. */
static char start_error[512];
static int started;

static PetscErrorCode start_error_handler(MPI_Comm comm, int line, const char *fun, const char *file, PetscErrorCode n, PetscErrorType p, const char *mess, void *ctx)
{
  if (started) return PetscTraceBackErrorHandler(comm, line, fun, file, n, p, mess, ctx);
  if (p == PETSC_ERROR_INITIAL && !start_error[0]) {
    const char *text = mess && mess[0] ? mess : NULL;
    if (!text) PetscErrorMessage(n, &text, NULL);
    /* the options in YAML come from the environment or -options_file_yaml */
    if (fun && strstr(fun, "YAML")) {
      const char *env = getenv("PETSC_OPTIONS_YAML");
      snprintf(start_error, sizeof start_error, "%s: %s", env && env[0] ? "environment variable PETSC_OPTIONS_YAML" : "option -options_file_yaml", text ? text : "does not parse");
    } else
      snprintf(start_error, sizeof start_error, "PETSc did not start: %s (in %s)", text ? text : "error", fun ? fun : "PetscInitialize");
  }
  return n;
}

/* Drops argv[i], shifting the rest down. */
static void drop_arg(int *argc, char **argv, int i)
{
  for (int k = i; k < *argc; k++) argv[k] = argv[k + 1];
  (*argc)--;
}

/* Whether the command line asks for the short -help (a bare -help): it
 * is taken out of argv, for PETSc would print its own 60 lines and its
 * devices' options before the program's.  "-help full" becomes PETSc's
 * bare -help (everything, PETSc's first), which reads no "full";
 * "-help intro" stays PETSc's. */
static int take_short_help(int *argc, char **argv)
{
  for (int i = 1; i < *argc; i++) {
    if (strcmp(argv[i], "-help")) continue;
    if (i + 1 < *argc && !strcmp(argv[i + 1], "full")) {
      drop_arg(argc, argv, i + 1);
      return 0;
    }
    if (i + 1 < *argc && argv[i + 1][0] != '-') return 0;
    drop_arg(argc, argv, i);
    return 1;
  }
  return 0;
}

void AmrMpiIoDefaults(void)
{
  setenv("OMPI_MCA_fbtl_posix_write_datasieving", "0", 0);
}

int AmrInitialize(int *argc, char ***argv, const char *program, const char *help)
{
  char msg[2 * PATH_MAX];
  int rank, short_help;

  /* MPI first, so that every rank agrees and one prints */
  AmrMpiIoDefaults();
  if (MPI_Init(argc, argv)) return 1;
  if (AmrOptionsFilesGuard(*argc, *argv, msg, sizeof msg)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!rank) fprintf(stderr, "%s: error: %s\n", program, msg);
    MPI_Finalize();
    return 1;
  }
  short_help = take_short_help(argc, *argv);
  if (PetscPushErrorHandler(start_error_handler, NULL) || PetscInitialize(argc, argv, NULL, help)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!rank) fprintf(stderr, "%s: error: %s\n", program, start_error[0] ? start_error : "PETSc did not start");
    MPI_Finalize();
    return 1;
  }
  started = 1;
  /* with -help back in the database after PETSc's start, the program's
   * options print first, then those of the solvers it sets up */
  if (short_help && ((*PetscHelpPrintf)(PETSC_COMM_WORLD, "%s(-help full: PETSc's own options as well)\n", help) || PetscOptionsSetValue(NULL, "-help", NULL))) return 1;
  return 0;
}

int AmrFinalize(void)
{
  const PetscErrorCode err = PetscFinalize();
  return MPI_Finalize() || err;
}

/* Whether tok, in the text of the whole database, names an option rather
 * than a negative value ("-3", "-inf"). */
static int option_name(const char *tok)
{
  return tok[0] == '-' && isalpha((unsigned char)tok[1]) && strcasecmp(tok, "-inf") && strcasecmp(tok, "-infinity") && strcasecmp(tok, "-nan");
}

PetscErrorCode AmrOptionsCheckValues(MPI_Comm comm)
{
  char *all, *save = NULL, msg[512] = "";
  const char *name = NULL;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsGetAll(NULL, &all));
  for (char *tok = strtok_r(all, " ", &save); tok && !msg[0]; tok = strtok_r(NULL, " ", &save)) {
    const char *digits = tok + (*tok == '-' || *tok == '+');
    char *end;
    double d;
    if (option_name(tok)) {
      name = tok;
      continue;
    }
    if (!name) continue;
    errno = 0;
    d = strtod(tok, &end);
    if (end != tok && !*end && !isfinite(d) && errno != ERANGE) snprintf(msg, sizeof msg, "option %s %s: not a finite number", name, tok);
    if (*digits && strspn(digits, "0123456789") == strlen(digits)) {
      long long i;
      errno = 0;
      i = strtoll(tok, NULL, 10);
      if (errno == ERANGE || i < INT_MIN || i > INT_MAX)
        snprintf(msg, sizeof msg, "option %s %s: a whole number outside %d to %d (write a real as large as that with an exponent, e.g. 5e9)", name, tok,
                 INT_MIN, INT_MAX);
    }
  }
  PetscCall(PetscFree(all));
  PetscCheck(!msg[0], comm, PETSC_ERR_USER_INPUT, "%s", msg);
  PetscFunctionReturn(0);
}

/* "A, B, C" of the n names, cut to len bytes. */
static PetscErrorCode join(int n, const char *const *list, char *s, size_t len)
{
  PetscFunctionBeginUser;
  s[0] = 0;
  for (int i = 0; i < n; i++) {
    if (i) PetscCall(PetscStrlcat(s, ", ", len));
    PetscCall(PetscStrlcat(s, list[i], len));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsChoice(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, const char *what, int n,
                                const char *const *list, int *index, PetscBool *set)
{
  char value[256], names[1024];
  PetscInt found = *index;
  PetscBool given, known;

  PetscFunctionBeginUser;
  /* checked before PetscOptionsEList so that the message is ours: PETSc's
   * own names neither the program nor what the value should be */
  PetscCall(PetscOptionsGetString(PetscOptionsObject->options, PetscOptionsObject->prefix, name, value, sizeof value, &given));
  if (given) {
    PetscCall(PetscEListFind(n, list, value, &found, &known));
    PetscCall(join(n, list, names, sizeof names));
    PetscCheck(known, PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "option %s %s: unknown %s (choose from %s)", name, value, what, names);
  }
  PetscCall(PetscOptionsEList(name, help, NULL, list, n, *index >= 0 ? list[*index] : "", &found, NULL));
  *index = (int)found;
  if (set) *set = given;
  PetscFunctionReturn(0);
}

/* Read option name as text (the default printed into it) and take the
 * whole text as a number, an integer when integer is set, in [lo, hi]. */
static PetscErrorCode read_number(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, int integer, double lo, double hi, int open,
                                  const char *what, double *value, PetscBool *set)
{
  char text[64];
  double v = 0;
  long iv = 0;
  int ok;
  PetscBool given;

  PetscFunctionBeginUser;
  snprintf(text, sizeof text, integer ? "%.0f" : "%g", *value);
  PetscCall(PetscOptionsString(name, help, NULL, text, text, sizeof text, &given));
  if (set) *set = given;
  if (!given) PetscFunctionReturn(0);
  ok = integer ? AmrParseInt(text, &iv) : AmrParseReal(text, &v);
  if (integer) v = (double)iv;
  PetscCheck(ok && ((open & AMR_OPEN_LO) ? v > lo : v >= lo) && ((open & AMR_OPEN_HI) ? v < hi : v <= hi), PetscOptionsObject->comm, PETSC_ERR_USER_INPUT,
             "option %s: '%s' is not %s", name, text, what);
  *value = v;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsRealIn(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, double lo, double hi, int open,
                                const char *what, double *value)
{
  PetscFunctionBeginUser;
  PetscCall(read_number(PetscOptionsObject, name, help, 0, lo, hi, open, what, value, NULL));
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsIntIn(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, long lo, long hi, const char *what,
                               int *value, PetscBool *set)
{
  double v = *value;

  PetscFunctionBeginUser;
  PetscCall(read_number(PetscOptionsObject, name, help, 1, (double)lo, (double)hi, 0, what, &v, set));
  *value = (int)v;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsSwitch(PetscOptionItems *PetscOptionsObject, const char *name, const char *help, PetscBool *value)
{
  static const char *const spelling[] = {"0", "false", "no", "1", "true", "yes"};
  char text[64];
  PetscInt i;
  PetscBool set, known;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(text, *value ? "true" : "false", sizeof text));
  PetscCall(PetscOptionsString(name, help, NULL, text, text, sizeof text, &set));
  if (!set) PetscFunctionReturn(0);
  if (!text[0]) {
    *value = PETSC_TRUE; /* a bare -NAME */
    PetscFunctionReturn(0);
  }
  PetscCall(PetscEListFind(6, spelling, text, &i, &known));
  PetscCheck(known, PetscOptionsObject->comm, PETSC_ERR_USER_INPUT, "option %s: '%s' is not true or false", name, text);
  *value = i >= 3 ? PETSC_TRUE : PETSC_FALSE;
  PetscFunctionReturn(0);
}

PetscErrorCode AmrOptionsQuietly(MPI_Comm comm, PetscErrorCode (*read)(MPI_Comm comm, void *ctx), void *ctx, char *msg, size_t len)
{
  PetscErrorCode ierr;
  char *why = NULL;

  msg[0] = 0;
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = read(comm, ctx);
  PetscCall(PetscPopErrorHandler());
  if (!ierr) return 0;
  PetscCall(PetscErrorMessage(ierr, NULL, &why));
  snprintf(msg, len, "%s", why && why[0] ? why : "invalid option");
  return ierr;
}
