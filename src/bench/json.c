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
