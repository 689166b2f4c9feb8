/** @file json.h
 *  The small JSON writing lbbench's reports share. */
#ifndef AMRDLB_JSON_H
#define AMRDLB_JSON_H

#include <stdio.h>

/** Write "key":"value", with quotes and backslashes escaped and control
 *  characters dropped. */
void json_string(FILE *f, const char *key, const char *v);

#endif
