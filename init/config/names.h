/* names: how the config spells each enumerated setting, one table each.
 * The parser (keys.c), --check's table, JSON and --ini, and the evidence
 * all read these, so a name is written in one place. */
#ifndef WARD_NAMES_H
#define WARD_NAMES_H

#include "init/config/config.h"

extern const char *const restart_names[3];    /* by enum restart_policy */
extern const char *const forward_names[2];    /* by enum forward_target */
extern const char *const ll_mode_names[3];    /* by enum ll_mode */
extern const char *const egress_names[2];     /* by enum egress_mode */
extern const char *const gvisor_names[2];     /* by enum gvisor_landlock */
extern const char *const log_format_names[2]; /* by enum log_format */
/* log level names: log_level_names[] of common/log.h, which writes them */

/* The bridge's user when [ward] bridge_user is not set. */
#define BRIDGE_USER_DEFAULT "65534"

/* The index of v among the n names, or -1. */
int name_index(const char *const *names, int n, const char *v);

#define NAME_INDEX(table, v) name_index((table), (int)(sizeof(table) / sizeof(table)[0]), (v))

#endif
