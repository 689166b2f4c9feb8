/* JSON Lines for the app's and lbbench's reports. */
#include "util/json.h"

#include <math.h>

static void quoted(FILE *f, const char *v)
{
  fputc('"', f);
  for (const char *c = v; *c; c++) {
    if (*c == '"' || *c == '\\') fputc('\\', f);
    if ((unsigned char)*c >= 0x20) fputc(*c, f);
  }
  fputc('"', f);
}

static void number(FILE *f, double v)
{
  if (isfinite(v))
    fprintf(f, "%.17g", v);
  else
    fputs("null", f);
}

/* The comma before every field but the first, and the key. */
static int key(json_line *j, const char *k)
{
  if (!j->f) return 0;
  if (j->nfields++) fputc(',', j->f);
  quoted(j->f, k);
  fputc(':', j->f);
  return 1;
}

void json_begin(json_line *j, FILE *f)
{
  j->f = f;
  j->nfields = 0;
  j->ranks = NULL;
  j->path[0] = '\0';
  if (f) fputc('{', f);
}

void json_end(json_line *j)
{
  if (!j->f) return;
  fputs("}\n", j->f);
  fflush(j->f);
}

void json_object_begin(json_line *j, const char *k, json_line *inner)
{
  inner->f = key(j, k) ? j->f : NULL;
  inner->nfields = 0;
  inner->ranks = j->ranks;
  /* a path cut short here makes its fields' names longer than the side
   * file holds (JSON_RANKS_NAME), which refuses them: never a wrong name */
  if (snprintf(inner->path, sizeof inner->path, "%s%s.", j->path, k) < 0) inner->path[0] = '\0';
  if (inner->f) fputc('{', inner->f);
}

void json_object_end(json_line *inner)
{
  if (inner->f) fputc('}', inner->f);
}

void json_int(json_line *j, const char *k, long long v)
{
  if (key(j, k)) fprintf(j->f, "%lld", v);
}

void json_real(json_line *j, const char *k, double v)
{
  if (key(j, k)) number(j->f, v);
}

void json_bool(json_line *j, const char *k, int v)
{
  if (key(j, k)) fputs(v ? "true" : "false", j->f);
}

void json_null(json_line *j, const char *k)
{
  if (key(j, k)) fputs("null", j->f);
}

void json_str(json_line *j, const char *k, const char *v)
{
  if (key(j, k)) quoted(j->f, v);
}

void json_reals(json_line *j, const char *k, int n, const double *v)
{
  if (!key(j, k)) return;
  fputc('[', j->f);
  for (int i = 0; i < n; i++) {
    if (i) fputc(',', j->f);
    number(j->f, v[i]);
  }
  fputc(']', j->f);
}

void json_ints(json_line *j, const char *k, int n, const long long *v)
{
  if (!key(j, k)) return;
  fputc('[', j->f);
  for (int i = 0; i < n; i++) fprintf(j->f, "%s%lld", i ? "," : "", v[i]);
  fputc(']', j->f);
}

void json_raw(json_line *j, const char *k, const char *json)
{
  if (key(j, k)) fputs(json, j->f);
}
