/** @file json.h
 *  The one JSON Lines writer of amrdlb: the app's per-cycle report and
 *  lbbench's per-run reports.  Numbers that JSON cannot hold (NaN,
 *  infinity) are written as null. */
#ifndef AMRDLB_JSON_H
#define AMRDLB_JSON_H

#include <stdio.h>

struct json_ranks; /* util/rankfile.h */

/** One JSON object being written as one line.  With f NULL every call
 *  writes nothing, so that all ranks can run the same code and only the
 *  writing rank has a file. */
typedef struct {
  FILE *f;
  int nfields;              /**< fields written so far, for the commas */
  struct json_ranks *ranks; /**< the per-rank values' side-file row (util/rankfile.h), NULL: none; nested objects share it */
  char path[64];            /**< "outer.key." of a nested object, the prefix of its fields' side-file names */
} json_line;

/** Start an object on f (may be NULL), with no side-file row. */
void json_begin(json_line *j, FILE *f);

/** Close the object, end the line and flush it. */
void json_end(json_line *j);

/** "key":value fields. */
void json_int(json_line *j, const char *key, long long v);
void json_real(json_line *j, const char *key, double v);
void json_bool(json_line *j, const char *key, int v);
void json_null(json_line *j, const char *key);
void json_str(json_line *j, const char *key, const char *v);
void json_reals(json_line *j, const char *key, int n, const double *v);
void json_ints(json_line *j, const char *key, int n, const long long *v);

/** "key":{ ... }: inner receives the nested object's fields until
 *  json_object_end(inner), then j goes on.  On every rank, written or not:
 *  inner's per-rank fields are named "PATH.key." in the side file. */
void json_object_begin(json_line *j, const char *key, json_line *inner);
void json_object_end(json_line *inner);

/** "key":json, where json is a value written already (an array built as
 *  the data arrived). */
void json_raw(json_line *j, const char *key, const char *json);

#endif
