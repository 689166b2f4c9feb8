/** @file json.h
 *  The small JSON writing lbbench's reports share. */
#ifndef AMRDLB_JSON_H
#define AMRDLB_JSON_H

#include <stdio.h>

/** Write "key":"value", with quotes and backslashes escaped and control
 *  characters dropped. */
void json_string(FILE *f, const char *key, const char *v);

/** Open a report line: "{" and the fields every lbbench run has
 *  (method, graph, ranks, backend, scenario), each followed by a comma. */
void json_run_header(FILE *f, const char *method, const char *graph, int ranks, const char *backend, const char *scenario);

#endif
