/* report: what `ward --check` prints: the effective policy, layer by
 * layer, as a table or as JSON, with a warning (and its fix) for every
 * weak setting: a layer off, Landlock degraded by the kernel, write access
 * to / or a system tree, every port open. */
#ifndef WARD_REPORT_H
#define WARD_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "config.h"
#include "sandbox.h"

/* The policy as JSON (caller owns it); "warnings" is a list of strings. */
json_t *report_policy(const struct sandbox *sb, const struct ward_config *cfg);

/* Prints the table (or JSON). Returns the number of warnings, -1 on error. */
int report_print(const struct sandbox *sb, const struct ward_config *cfg, int as_json, FILE *out);

/* A JSON string even for bytes that are not UTF-8 (jansson refuses
 * those): such bytes become '?'. Never NULL but when out of memory. */
json_t *jstr(const char *s);

#endif
