#define _GNU_SOURCE
#include "init/report/policynote.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child/privdrop.h"
#include "init/config/config.h"
#include "mcp-bridge/allow.h"
#include "init/supervise/routes.h"
#include "landlock/landlock.h"

/* Tools an agent asks about, found (or not) in its PATH. */
static const char *const tools[] = { "bash", "sh", "git", "rg", "fd", "grep", "sed", "awk", "find", "node", "npm",
				     "npx", "python3", "pip3", "make", "gcc", "g++", "cc", "curl", "wget", "ssh", "jq",
				     "rsync", "tar", "unzip" };

static int on_path(const char *path_env, const char *tool)
{
	const char *p = path_env;

	while (p && *p) {
		size_t n = strcspn(p, ":");
		char file[512];
		if (n && snprintf(file, sizeof file, "%.*s/%s", (int)n, p, tool) < (int)sizeof file &&
		    access(file, X_OK) == 0)
			return 1;
		p += n + (p[n] == ':');
	}
	return 0;
}

#define WRITES (LL_FS_WRITE_FILE | LL_FS_MAKE_REG | LL_FS_MAKE_DIR | LL_FS_REMOVE_FILE)

/* Is dir (n bytes) beneath a path Landlock lets the agent write? */
static int writable_dir(const struct ll_ruleset *ll, const char *dir, size_t n)
{
	int i;

	for (i = 0; ll && i < ll->n_rules; i++) {
		size_t rl = strlen(ll->rules[i].path);
		if ((ll->rules[i].access & WRITES) && rl <= n && strncmp(dir, ll->rules[i].path, rl) == 0 &&
		    (rl == n || dir[rl] == '/' || (rl == 1 && dir[0] == '/')))
			return 1;
	}
	return 0;
}

/* What can be installed from inside: into the directories of PATH the
 * agent may write (its home's npm -g and pip --user), and nothing else. */
static void installs_line(FILE *f, const struct ll_ruleset *ll, const char *path_env)
{
	const char *p = path_env;
	int n = 0;

	while (ll && p && *p) {
		size_t len = strcspn(p, ":");
		if (len && writable_dir(ll, p, len))
			fprintf(f, "%s`%.*s`", n++ ? ", " : " You can install only into the directories of your PATH "
							    "that you may write: ", (int)len, p);
		p += len + (p[len] == ':');
	}
	if (n)
		fprintf(f, " (npm install -g, pip install --user), from what you can reach; the system's own "
			   "directories are read-only.\n");
	else
		fprintf(f, " Nothing can be installed from inside.\n");
}

/* The file the one who starts ward adds to the note (policy_note_add):
 * its text appended to *text (a new string in *text), or nothing when it
 * is not there. At most 16 KiB of text (a line break and a tab the only
 * control characters), a regular file, no symbolic link followed. 0, or
 * -1 with err. */
int policy_note_append(char **text, const char *path, char *err, size_t errsize)
{
	char add[16385], *both;
	struct stat st;
	ssize_t got = 0, r;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	size_t i, tl;

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(err, errsize, "policy_note_add %s: %s", path, fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while ((size_t)got < sizeof add && (r = read(fd, add + got, sizeof add - (size_t)got)) > 0)
		got += r;
	close(fd);
	if ((size_t)got >= sizeof add) {
		snprintf(err, errsize, "policy_note_add %s: over 16 KiB", path);
		return -1;
	}
	for (i = 0; i < (size_t)got; i++)
		if (((unsigned char)add[i] < 0x20 && add[i] != '\n' && add[i] != '\t') || add[i] == 0x7f) {
			snprintf(err, errsize, "policy_note_add %s: a control character at byte %zu", path, i);
			return -1;
		}
	tl = strlen(*text);
	both = malloc(tl + 1 + (size_t)got + 2);
	if (!both) {
		snprintf(err, errsize, "out of memory");
		return -1;
	}
	memcpy(both, *text, tl);
	both[tl] = '\n';
	memcpy(both + tl + 1, add, (size_t)got);
	tl += 1 + (size_t)got;
	if (got && add[got - 1] != '\n')
		both[tl++] = '\n';
	both[tl] = '\0';
	free(*text);
	*text = both;
	return 0;
}

static int has_proxy(const struct route_table *routes)
{
	int i;

	for (i = 0; routes && i < routes->n; i++)
		if (routes->v[i].proxy)
			return 1;
	return 0;
}

/* The first line of a file of the sandbox's cgroup, as the runtime
 * mounted it; "" when it is not there. */
static void cgroup_read(const char *path, char *out, size_t size)
{
	FILE *in = fopen(path, "re");

	out[0] = '\0';
	if (!in)
		return;
	if (!fgets(out, (int)size, in))
		out[0] = '\0';
	fclose(in);
	out[strcspn(out, "\n")] = '\0';
}

/* The limits the runtime set (memory, CPU, processes), read from the
 * cgroup at start (v2's files, else v1's), so that the agent knows them
 * before it meets them. An unlimited one is left out. */
static void limits_line(FILE *f)
{
	char mem[32], pids[32], cpu[64], period[32];
	unsigned long long m = 0, q = 0, per = 0;
	int n = 0;

	cgroup_read("/sys/fs/cgroup/memory.max", mem, sizeof mem);
	if (!mem[0])
		cgroup_read("/sys/fs/cgroup/memory/memory.limit_in_bytes", mem, sizeof mem);
	m = mem[0] >= '0' && mem[0] <= '9' ? strtoull(mem, NULL, 10) : 0;
	if (m >= (1ULL << 60)) /* v1's "no limit" is the largest page-aligned value */
		m = 0;
	cgroup_read("/sys/fs/cgroup/pids.max", pids, sizeof pids);
	if (!pids[0])
		cgroup_read("/sys/fs/cgroup/pids/pids.max", pids, sizeof pids);
	if (!(pids[0] >= '0' && pids[0] <= '9'))
		pids[0] = '\0';
	cgroup_read("/sys/fs/cgroup/cpu.max", cpu, sizeof cpu);
	if (cpu[0]) {
		/* "QUOTA PERIOD", or "max PERIOD" */
		char *end = NULL;
		if (cpu[0] >= '0' && cpu[0] <= '9') {
			q = strtoull(cpu, &end, 10);
			per = end && *end == ' ' ? strtoull(end + 1, NULL, 10) : 0;
		}
	} else {
		cgroup_read("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", cpu, sizeof cpu);
		cgroup_read("/sys/fs/cgroup/cpu/cpu.cfs_period_us", period, sizeof period);
		if (cpu[0] >= '0' && cpu[0] <= '9' && period[0]) /* -1: none */
			q = strtoull(cpu, NULL, 10), per = strtoull(period, NULL, 10);
	}
	if (!m && !pids[0] && !(q && per))
		return;
	fprintf(f, "- Limits of this sandbox (its cgroup, set by the runtime): ");
	if (m)
		fprintf(f, "%s%.1f GiB of memory (a process past it is killed)", n++ ? ", " : "",
			(double)m / (1024.0 * 1024 * 1024));
	if (q && per)
		fprintf(f, "%s%.2g CPUs' time", n++ ? ", " : "", (double)q / (double)per);
	if (pids[0])
		fprintf(f, "%s%s processes and threads", n++ ? ", " : "", pids);
	fprintf(f, ". Keep builds and tests within them (fewer parallel jobs).\n");
}

char *policy_note_text(const struct ward_config *cfg, const struct confine *agent, const struct ll_ruleset *ll,
		       const struct route_table *routes, const char *path_env)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int i, n;
	size_t t;

	if (!f)
		return NULL;
	fprintf(f, "## Your sandbox\n\nWritten by ward, the sandbox's init, when this session started, from the "
		   "rules the kernel now enforces on you. They cannot be changed from inside; an action they "
		   "forbid fails (EACCES, EPERM), and trying another way will fail too.\n\n");
	if (agent && agent->enabled)
		fprintf(f, "- You run as user %s (uid %u), with no capabilities and no way to gain any (no_new_privs): "
			   "no sudo, no setuid programs.\n", agent->user.name[0] ? agent->user.name : "without a name",
			(unsigned)agent->user.uid);
	if (ll && ll->n_rules) {
		fprintf(f, "- Files you may write (and create, delete): ");
		for (i = 0, n = 0; i < ll->n_rules; i++)
			if (ll->rules[i].access & WRITES)
				fprintf(f, "%s`%s`", n++ ? ", " : "", ll->rules[i].path);
		fprintf(f, "%s.\n- Files you may only read: ", n ? "" : "none");
		for (i = 0, n = 0; i < ll->n_rules; i++)
			if (!(ll->rules[i].access & WRITES))
				fprintf(f, "%s`%s`", n++ ? ", " : "", ll->rules[i].path);
		fprintf(f, "%s. Everything else of the filesystem is out of reach, even to read.\n", n ? "" : "none");
	}
	if (routes && routes->n) {
		fprintf(f, "- Network: %swhat you may reach goes through ward's bridge, on these loopback ports:\n",
			agent && agent->egress ? "your own sockets reach nothing outside this machine; " : "");
		for (i = 0; i < routes->n; i++) {
			const struct route *r = &routes->v[i];
			if (r->proxy) {
				int k;
				char rule[300];
				fprintf(f, "  - `http://127.0.0.1:%u` (the proxy; HTTPS_PROXY points at it): https to the "
					   "hosts the person allowed, through CONNECT; you have no DNS, the proxy resolves "
					   "names; plain http is refused. Allowed: ", r->port);
				for (k = 0; k < r->proxy->n_allow && k < 40; k++)
					fprintf(f, "%s`%s`", k ? ", " : "",
						allow_text(&r->proxy->allow[k], rule, sizeof rule));
				if (r->proxy->n_allow > 40)
					fprintf(f, " and %d more", r->proxy->n_allow - 40);
				fprintf(f, "%s. Any other host gets a 403 that says how the person can allow it\n",
					r->proxy->n_allow ? "" : "nothing yet");
			}
			else if (r->stream)
				fprintf(f, "  - `127.0.0.1:%u` (route %s): a byte stream to %s\n", r->port, r->name,
					r->up->name[0] ? r->up->name : "a service outside the sandbox");
			else
				fprintf(f, "  - `http://127.0.0.1:%u%s` (route %s): requests under this path only, to %s; "
					   "the credentials are added by the bridge, you never need them\n",
					r->port, r->path ? r->path : "/", r->name,
					r->up->name[0] ? r->up->name : "a service outside the sandbox");
		}
	} else if (cfg->has_landlock && cfg->landlock.mode != LL_OFF) {
		fprintf(f, "- Network: none beyond this machine's loopback on the ports allowed.\n");
	}
	if (agent && agent->egress)
		fprintf(f, "- A connection of your own to any other address fails at once with ENETUNREACH (\"Network is "
			   "unreachable\")%s%s%s: do not retry it, tell the person what you needed and why.\n",
			cfg->refusals ? "; each one is listed in `" : "", cfg->refusals ? cfg->refusals : "",
			cfg->refusals ? "`, with the setting that would allow it" : "");
	if (ll && ll->n_connect) {
		fprintf(f, "- TCP ports you may connect to (on loopback): ");
		for (i = 0; i < ll->n_connect; i++) {
			if (ll->connect[i].lo == ll->connect[i].hi)
				fprintf(f, "%s%u", i ? ", " : "", ll->connect[i].lo);
			else
				fprintf(f, "%s%u-%u", i ? ", " : "", ll->connect[i].lo, ll->connect[i].hi);
		}
		fprintf(f, "%s\n", has_proxy(routes) ? ". Registries, git remotes and web sites are reachable only "
							  "through the proxy, and only the hosts it allows."
						       : ". Package registries, git remotes and web sites are not reachable: "
							 "say so rather than retry.");
	}
	limits_line(f);
	if (cfg->has_seccomp && cfg->seccomp.enabled)
		fprintf(f, "- System calls for namespaces, mounts, ptrace, kernel modules, BPF and io_uring are "
			   "refused%s.\n", cfg->seccomp.n_deny ? ", with more the config names" : "");
	fprintf(f, "- Tools on your PATH: ");
	for (t = 0, n = 0; t < sizeof tools / sizeof tools[0]; t++)
		if (on_path(path_env, tools[t]))
			fprintf(f, "%s`%s`", n++ ? ", " : "", tools[t]);
	fprintf(f, "%s. Others are not installed.", n ? "" : "none");
	installs_line(f, ll, path_env);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}
