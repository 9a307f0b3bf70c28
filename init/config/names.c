#include "init/config/names.h"

#include <string.h>

const char *const restart_names[3] = { [RESTART_NEVER] = "never", [RESTART_ON_FAILURE] = "on-failure",
				       [RESTART_ALWAYS] = "always" };
const char *const forward_names[2] = { [FORWARD_CHILD] = "child", [FORWARD_GROUP] = "group" };
const char *const ll_mode_names[3] = { [LL_OFF] = "off", [LL_BEST_EFFORT] = "best_effort",
				       [LL_HARD] = "hard_requirement" };
const char *const egress_names[2] = { [EGRESS_LOOPBACK] = "loopback", [EGRESS_PORTS] = "ports" };
const char *const gvisor_names[2] = { [GVISOR_ACCEPT] = "accept", [GVISOR_REFUSE] = "refuse" };
const char *const log_format_names[2] = { [LOG_TEXT] = "text", [LOG_JSON] = "json" };

int name_index(const char *const *names, int n, const char *v)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(v, names[i]) == 0)
			return i;
	return -1;
}
