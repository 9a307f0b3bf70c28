/* filters: the default seccomp filters, compiled at build time by
 * tools/gen-filters.c into build/filters.c. */
#ifndef WARD_FILTERS_H
#define WARD_FILTERS_H

#include <linux/filter.h>

extern const struct sock_filter ward_filter_agent[];
extern const unsigned short ward_filter_agent_len;
extern const int ward_filter_agent_rules;
extern const struct sock_filter ward_filter_init[];
extern const unsigned short ward_filter_init_len;
extern const int ward_filter_init_rules;
extern const struct sock_filter ward_filter_init_vm[];
extern const unsigned short ward_filter_init_vm_len;
extern const int ward_filter_init_vm_rules;

extern const struct sock_filter ward_filter_bridge[];
extern const unsigned short ward_filter_bridge_len;
extern const int ward_filter_bridge_rules;

#endif
