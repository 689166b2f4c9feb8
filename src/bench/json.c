/* JSON string fields for lbbench's one-line-per-run reports. */
#include "json.h"

void json_string(FILE *f, const char *key, const char *v)
{
  fprintf(f, "\"%s\":\"", key);
  for (const char *c = v; *c; c++) {
    if (*c == '"' || *c == '\\') fputc('\\', f);
    if ((unsigned char)*c >= 0x20) fputc(*c, f);
  }
  fputs("\",", f);
}

void json_run_header(FILE *f, const char *method, const char *graph, int ranks, const char *backend, const char *scenario)
{
  fputc('{', f);
  json_string(f, "method", method);
  json_string(f, "graph", graph);
  fprintf(f, "\"ranks\":%d,", ranks);
  json_string(f, "backend", backend);
  json_string(f, "scenario", scenario);
}
