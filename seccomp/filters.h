/* filters: the default seccomp filters, compiled at build time by
 * tools/gen-filters.c into build/filters.c. */
#ifndef WARD_FILTERS_H
#define WARD_FILTERS_H

#include <linux/filter.h>

/* Each filter: its program, its length, the rules it was built from. */
#define WARD_FILTER(name)                                   \
	extern const struct sock_filter ward_filter_##name[]; \
	extern const unsigned short ward_filter_##name##_len; \
	extern const int ward_filter_##name##_rules

WARD_FILTER(agent);
WARD_FILTER(init);
WARD_FILTER(init_vm);
WARD_FILTER(bridge);
WARD_FILTER(bridge_dns);

#endif
