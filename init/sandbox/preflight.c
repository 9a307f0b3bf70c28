/* preflight: what is checked about the runtime's environment before the
 * agent's first start, so a start that would fail later fails now, with one
 * line naming the setting and the fix. */
#define _GNU_SOURCE
#include "init/sandbox/preflight.h"

#include <cap-ng.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "init/sandbox/asagent.h"

/* A limit above the hard limit the runtime gave can only be set with
 * CAP_SYS_RESOURCE: say so before anything starts, not when the agent
 * execs. */
int preflight_rlimits(const struct ward_config *cfg)
{
	int i;

	for (i = 0; i < cfg->n_rlimits; i++) {
		const struct rlimit_value *rl = &cfg->rlimits[i];
		struct rlimit cur;
		char want[32];

		if (getrlimit(rl->resource, &cur) != 0 || cur.rlim_max == RLIM_INFINITY ||
		    (rl->hard != RLIM_INFINITY && rl->hard <= cur.rlim_max) || cap_effective(CAP_SYS_RESOURCE))
			continue;
		if (rl->hard == RLIM_INFINITY)
			snprintf(want, sizeof want, "unlimited");
		else
			snprintf(want, sizeof want, "%llu", (unsigned long long)rl->hard);
		log_error("rlimit_%s: hard limit %s is above the %llu this runtime gives, and raising it "
			  "needs CAP_SYS_RESOURCE", rlimit_name(rl->resource), want,
			  (unsigned long long)cur.rlim_max);
		return 2;
	}
	return 0;
}

/* [agent] writable: Pi dies when TMPDIR or its agent dir cannot be
 * written. Each directory must exist, be on a writable filesystem with
 * room left (1 MiB, and free inodes), be writable by the agent user, and
 * be under a Landlock write rule: otherwise exit 3 before anything runs. */
#define WRITABLE_MIN_FREE (1024 * 1024ULL)
/* One writable path. Apart from preflight_writable, so that its path
 * buffer is on the stack only when there is a path to check (the compiler
 * probes every page of a frame: a plain init would pay for it in memory). */
static __attribute__((noinline)) int writable_one(const struct confine *agent, const struct ll_ruleset *ll,
						  const struct ward_config *cfg, int check, const char *p)
{
	char real[PATH_MAX];
	struct statvfs v;
	unsigned long long avail;
	int e;

	if (!realpath(p, real) || statvfs(real, &v) != 0) {
		log_error("%s:%d: writable = %s: %s", cfg->path, cfg->writable_line, p, strerror(errno));
		return 3;
	}
	if (v.f_flag & ST_RDONLY) {
		log_error("%s:%d: writable = %s: on a read-only filesystem; mount a volume or a tmpfs "
			  "there (docker --tmpfs %s)", cfg->path, cfg->writable_line, p, real);
		return 3;
	}
	avail = (unsigned long long)v.f_bavail * v.f_frsize;
	if (avail < WRITABLE_MIN_FREE || (v.f_files > 0 && v.f_favail == 0)) {
		log_error("%s:%d: writable = %s: the filesystem is full (%llu KiB, %llu inodes free); "
			  "free space or mount a bigger volume", cfg->path, cfg->writable_line, p, avail / 1024,
			  (unsigned long long)v.f_favail);
		return 3;
	}
	if (ll->fd >= 0 && !(ll_granted(ll, real) & LL_FS_MAKE_REG)) {
		log_error("%s:%d: writable = %s: no [landlock] write rule covers it; add write = %s",
			  cfg->path, cfg->writable_line, p, p);
		return 2;
	}
	if (!check && agent && geteuid() == 0 &&
	    (e = as_agent(&agent->user, try_make_file, real)) != 0) {
		log_error("%s:%d: writable = %s: uid %d cannot create files there (%s); chown it to "
			  "the agent or choose another directory", cfg->path, cfg->writable_line, p,
			  (int)agent->user.uid,
			  e == AS_AGENT_FAILED ? "could not be tried as that user" : strerror(e));
		return 3;
	}
	return 0;
}

int preflight_writable(const struct confine *agent, const struct ll_ruleset *ll, const struct ward_config *cfg,
		       int check)
{
	int i, rc;

	for (i = 0; i < cfg->n_writable; i++)
		if ((rc = writable_one(agent, ll, cfg, check, cfg->writable[i])) != 0)
			return rc;
	return 0;
}
