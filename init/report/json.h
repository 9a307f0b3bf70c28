/* json: the two JSON pieces --check and the evidence both write (jansson). */
#ifndef WARD_JSON_H
#define WARD_JSON_H

#include <jansson.h>

#include "landlock/landlock.h"
#include "init/config/config.h"

/* A JSON string even for bytes that are not UTF-8 (jansson refuses
 * those): such bytes become '?'. Never NULL but when out of memory. */
json_t *jstr(const char *s);

/* Port ranges as JSON strings: ["443", "8000-8099"]. */
json_t *json_ports(const struct port_range *v, int n);

/* The egress proxy's route: its rules as [proxy] allow writes them, its
 * limits, and what it checks. */
json_t *json_proxy(const struct config_proxy *p);

#endif
