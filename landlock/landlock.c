#define _GNU_SOURCE
#include "landlock/landlock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/parse.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

/* Our own copies of the uapi structs, in their ABI 6+ shape. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;	     /* ABI 6 */
};

struct ll_path_beneath_attr {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

/* the kernel's struct landlock_net_port_attr: filled and passed by address */
struct ll_net_port_attr {
	uint64_t allowed_access; // cppcheck-suppress unusedStructMember
	uint64_t port;		 // cppcheck-suppress unusedStructMember
};

/* The one table of what each ABI added (the kernel sample keeps the same
 * shape). Everything else is derived from it. */
static const struct {
	int abi;
	uint64_t fs, net, scopes;
	unsigned flags;
} abi_adds[] = {
	{ 1, LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_REMOVE_DIR |
		     LL_FS_REMOVE_FILE | LL_FS_MAKE_CHAR | LL_FS_MAKE_DIR | LL_FS_MAKE_REG |
		     LL_FS_MAKE_SOCK | LL_FS_MAKE_FIFO | LL_FS_MAKE_BLOCK | LL_FS_MAKE_SYM,
	  0, 0, 0 },
	{ 2, LL_FS_REFER, 0, 0, 0 },
	{ 3, LL_FS_TRUNCATE, 0, 0, 0 },
	{ 4, 0, LL_NET_BIND_TCP | LL_NET_CONNECT_TCP, 0, 0 },
	{ 5, LL_FS_IOCTL_DEV, 0, 0, 0 },
	{ 6, 0, 0, LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL, 0 },
	{ 7, 0, 0, 0, LL_LOG_SAME_EXEC_OFF | LL_LOG_NEW_EXEC_ON },
};

#define N_ABI ((int)(sizeof abi_adds / sizeof abi_adds[0]))

static const char *const fs_names[] = {
	"execute",   "write_file", "read_file",	 "read_dir",  "remove_dir", "remove_file",
	"make_char", "make_dir",   "make_reg",	 "make_sock", "make_fifo",  "make_block",
	"make_sym",  "refer",	   "truncate",	 "ioctl_dev",
};

/* Everything of one kind the ABIs up to abi added, OR-ed together. */
enum added { ADDED_FS, ADDED_NET, ADDED_SCOPES, ADDED_FLAGS };

static uint64_t added_up_to(int abi, enum added what)
{
	uint64_t r = 0;
	int i;

	for (i = 0; i < N_ABI && abi_adds[i].abi <= abi; i++)
		r |= what == ADDED_FS ? abi_adds[i].fs : what == ADDED_NET ? abi_adds[i].net
				      : what == ADDED_SCOPES ? abi_adds[i].scopes : abi_adds[i].flags;
	return r;
}

uint64_t ll_fs_rights(int abi)
{
	return added_up_to(abi, ADDED_FS);
}

uint64_t ll_net_rights(int abi)
{
	return added_up_to(abi, ADDED_NET);
}

uint64_t ll_scopes(int abi)
{
	return added_up_to(abi, ADDED_SCOPES);
}

unsigned ll_restrict_flags(int abi)
{
	return (unsigned)added_up_to(abi, ADDED_FLAGS);
}

int ll_fs_right_abi(uint64_t right)
{
	int i;
	for (i = 0; i < N_ABI; i++)
		if (abi_adds[i].fs & right)
			return abi_adds[i].abi;
	return 0;
}

const char *ll_fs_right_name(uint64_t right)
{
	int i;
	for (i = 0; i < 16; i++)
		if (right == 1ULL << i)
			return fs_names[i];
	return "?";
}

const char *ll_fs_names(uint64_t rights, char *buf, size_t size)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < 16; i++) {
		if (!(rights & (1ULL << i)))
			continue;
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s", n ? "," : "", fs_names[i]);
	}
	return buf;
}

int ll_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

static void note(struct ll_ruleset *rs, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct ll_ruleset *rs, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (rs->n_notes >= LL_MAX_NOTES) {
		/* one too many: the last slot says that more were left out */
		static const char more[] = "further degradations are not listed (more than fit)";
		if (strcmp(rs->notes[LL_MAX_NOTES - 1], more) != 0) {
			char *m = strdup(more);
			if (m) {
				free(rs->notes[LL_MAX_NOTES - 1]);
				rs->notes[LL_MAX_NOTES - 1] = m;
			}
		}
		return;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) >= 0)
		rs->notes[rs->n_notes++] = s;
	va_end(ap);
}

/* Appends to err (one line, "; " between problems). */
static void problem(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void problem(char *err, size_t size, const char *fmt, ...)
{
	size_t n = strlen(err);
	va_list ap;

	if (n && n + 2 < size) {
		memcpy(err + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(err + n, n < size ? size - n : 0, fmt, ap);
	va_end(ap);
}

static int add_path(struct ll_ruleset *rs, const char *path, uint64_t want, int hard, char *err,
		    size_t errsize)
{
	struct ll_path_beneath_attr attr;
	struct stat st;
	struct ll_rule *nr;
	char cwd[4096];
	int fd;

	/* "." is the start directory, recorded under its absolute name */
	if (strcmp(path, ".") == 0 && getcwd(cwd, sizeof cwd))
		path = cwd;
	fd = open(path, O_PATH | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (hard) {
			problem(err, errsize, "%s: %s", path, strerror(e));
			return -1;
		}
		note(rs, "rule for %s left out: %s", path, strerror(e));
		return 0;
	}
	attr.allowed_access = want & rs->handled_fs;
	attr.parent_fd = fd;
	if (!S_ISDIR(st.st_mode))
		attr.allowed_access &= LL_FS_FILE_RIGHTS;
	if (syscall(__NR_landlock_add_rule, rs->fd, LL_RULE_PATH_BENEATH, &attr, 0) != 0) {
		int e = errno;
		close(fd);
		problem(err, errsize, "landlock_add_rule %s: %s", path, strerror(e));
		return -1;
	}
	close(fd);
	nr = realloc(rs->rules, (size_t)(rs->n_rules + 1) * sizeof *nr);
	if (!nr) {
		problem(err, errsize, "out of memory");
		return -1;
	}
	rs->rules = nr;
	nr[rs->n_rules].path = strdup(path);
	nr[rs->n_rules].access = attr.allowed_access;
	nr[rs->n_rules].is_dir = S_ISDIR(st.st_mode);
	rs->n_rules++;
	return 0;
}

static int add_ports(struct ll_ruleset *rs, const struct port_range *v, int n, uint64_t right,
		     char *err, size_t errsize)
{
	int i;

	for (i = 0; i < n; i++) {
		unsigned port;
		for (port = v[i].lo; port <= v[i].hi; port++) {
			struct ll_net_port_attr attr = { right, port };
			if (syscall(__NR_landlock_add_rule, rs->fd, LL_RULE_NET_PORT, &attr, 0) != 0) {
				problem(err, errsize, "landlock_add_rule port %u: %s", port, strerror(errno));
				return -1;
			}
			rs->n_net_rules++;
		}
	}
	return 0;
}

static size_t attr_size(int abi)
{
	if (abi >= 6)
		return sizeof(struct ll_ruleset_attr);
	if (abi >= 4)
		return 2 * sizeof(uint64_t);
	return sizeof(uint64_t);
}

/* A rule path through a symlink grants what it points to at each start.
 * Where the agent may replace that symlink (its directory lets it remove a
 * file and make a symlink), a later start of the same filesystem would
 * grant whatever the agent pointed it at: say so. Every component is
 * looked at, not only the last: /ws/sub/cache with sub a symlink is led
 * astray as well, and so is a rule written with a trailing slash. */
static void symlink_notes(struct ll_ruleset *rs)
{
	const uint64_t replace = LL_FS_REMOVE_FILE | LL_FS_MAKE_SYM;
	char prefix[PATH_MAX], dir[PATH_MAX], real[PATH_MAX], target[PATH_MAX];
	struct stat st;
	int i;

	for (i = 0; i < rs->n_rules; i++) {
		const char *path = rs->rules[i].path;
		size_t n = strlen(path), end = 1;
		if (path[0] != '/' || n >= sizeof prefix)
			continue;
		while (end < n) {
			/* prefix: the path up to the end of the next component */
			while (end < n && path[end] == '/')
				end++;
			while (end < n && path[end] != '/')
				end++;
			memcpy(prefix, path, end);
			prefix[end] = '\0';
			if (lstat(prefix, &st) != 0)
				break;
			if (!S_ISLNK(st.st_mode))
				continue;
			snprintf(dir, sizeof dir, "%s", prefix);
			*strrchr(dir, '/') = '\0';
			if (!realpath(dir[0] ? dir : "/", real) || (ll_granted(rs, real) & replace) != replace)
				continue;
			if (!realpath(path, target))
				snprintf(target, sizeof target, "?");
			note(rs, "rule for %s follows a symlink%s%s (now to %s) in a directory the agent may change: "
				 "name the target instead", path, end < n ? " at " : "", end < n ? prefix : "", target);
			break;
		}
	}
}

int ll_build(const struct ll_policy *p, int abi, struct ll_ruleset *rs, char *err, size_t errsize)
{
	struct ll_ruleset_attr attr = { 0, 0, 0 };
	int hard = p->mode == LL_HARD, i;
	uint64_t missing;


	memset(rs, 0, sizeof *rs);
	rs->fd = -1;
	rs->abi = abi;
	err[0] = '\0';
	if (p->mode == LL_OFF)
		return 0;
	if (abi == 0) {
		if (hard) {
			problem(err, errsize, "the kernel has no Landlock (mode = hard_requirement)");
			return -1;
		}
		note(rs, "the kernel has no Landlock: filesystem and network are not confined");
		return 0;
	}
	rs->use_abi = abi < LL_ABI_KNOWN ? abi : LL_ABI_KNOWN;
	if (abi > LL_ABI_KNOWN)
		note(rs, "kernel Landlock ABI %d is newer than this build knows (%d): rights added "
			 "since are not handled", abi, LL_ABI_KNOWN);

	rs->handled_fs = ll_fs_rights(rs->use_abi);
	rs->handled_net = ll_net_rights(rs->use_abi);
	rs->scoped = p->scopes & ll_scopes(rs->use_abi);
	rs->restrict_flags = ll_restrict_flags(rs->use_abi);

	/* Everything a Landlock of ABI LL_ABI_KNOWN would restrict for this
	 * policy and this kernel cannot: each is a degradation. */
	missing = ll_fs_rights(LL_ABI_KNOWN) & ~rs->handled_fs;
	for (i = 0; i < 16; i++) {
		uint64_t r = 1ULL << i;
		if (!(missing & r))
			continue;
		if (hard)
			problem(err, errsize, "%s cannot be restricted (needs ABI %d)", ll_fs_right_name(r),
				ll_fs_right_abi(r));
		else
			note(rs, "%s is not restricted (needs Landlock ABI %d, kernel has %d)",
			     ll_fs_right_name(r), ll_fs_right_abi(r), abi);
	}
	if (!rs->handled_net) {
		if (hard)
			problem(err, errsize, "TCP bind/connect cannot be restricted (needs ABI 4)");
		else
			note(rs, "TCP bind and connect are not restricted (needs Landlock ABI 4, kernel has %d)",
			     abi);
	}
	if (p->scopes & ~rs->scoped) {
		if (hard)
			problem(err, errsize, "scopes cannot be enforced (needs ABI 6)");
		else
			note(rs, "scope %s%s is not enforced (needs Landlock ABI 6, kernel has %d)",
			     p->scopes & ~rs->scoped & LL_SCOPE_ABSTRACT_UNIX ? "abstract " : "",
			     p->scopes & ~rs->scoped & LL_SCOPE_SIGNAL ? "signal" : "", abi);
	}
	if (!rs->restrict_flags)
		note(rs, "denials after exec are not audited (needs Landlock ABI 7, kernel has %d)", abi);
	if (err[0]) {
		size_t n = strlen(err);
		snprintf(err + n, n < errsize ? errsize - n : 0,
			 " (kernel Landlock ABI %d, mode = hard_requirement)", abi);
		return -1;
	}

	attr.handled_access_fs = rs->handled_fs;
	attr.handled_access_net = rs->handled_net;
	attr.scoped = rs->scoped;
	rs->fd = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size(rs->use_abi), 0);
	if (rs->fd < 0) {
		problem(err, errsize, "landlock_create_ruleset: %s", strerror(errno));
		return -1;
	}
	(void)fcntl(rs->fd, F_SETFD, FD_CLOEXEC);
	for (i = 0; i < p->n_read; i++)
		if (add_path(rs, p->read[i], LL_FS_READ_EXEC, hard, err, errsize) != 0)
			return -1;
	for (i = 0; i < p->n_write; i++)
		if (add_path(rs, p->write[i], rs->handled_fs, hard, err, errsize) != 0)
			return -1;
	symlink_notes(rs);
	if (rs->handled_net) {
		if (add_ports(rs, p->connect, p->n_connect, LL_NET_CONNECT_TCP, err, errsize) != 0 ||
		    add_ports(rs, p->bind, p->n_bind, LL_NET_BIND_TCP, err, errsize) != 0)
			return -1;
		rs->connect = calloc((size_t)p->n_connect + 1, sizeof *rs->connect);
		rs->bind = calloc((size_t)p->n_bind + 1, sizeof *rs->bind);
		if (!rs->connect || !rs->bind) {
			problem(err, errsize, "out of memory");
			return -1;
		}
		if (p->n_connect)
			memcpy(rs->connect, p->connect, (size_t)p->n_connect * sizeof *rs->connect);
		if (p->n_bind)
			memcpy(rs->bind, p->bind, (size_t)p->n_bind * sizeof *rs->bind);
		rs->n_connect = p->n_connect;
		rs->n_bind = p->n_bind;
	}
	return 0;
}

int ll_restrict(const struct ll_ruleset *rs)
{
	if (rs->fd < 0)
		return 0;
	if (syscall(__NR_landlock_restrict_self, rs->fd, rs->restrict_flags) != 0)
		return -errno;
	return 0;
}

void ll_free(struct ll_ruleset *rs)
{
	int i;

	if (rs->fd >= 0)
		close(rs->fd);
	for (i = 0; i < rs->n_rules; i++)
		free(rs->rules[i].path);
	free(rs->rules);
	for (i = 0; i < rs->n_notes; i++)
		free(rs->notes[i]);
	free(rs->connect);
	free(rs->bind);
	memset(rs, 0, sizeof *rs);
	rs->fd = -1;
}

static int parse_port(const char *s, size_t len, unsigned *out)
{
	uint64_t v;

	if (parse_digits(s, len, 5, 65535, &v) != 0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

int ll_parse_ports(const char *s, struct port_range **v, int *n, const char **why)
{
	while (*s) {
		const char *end, *dash;
		unsigned lo, hi;
		struct port_range *nv;

		while (*s == ' ' || *s == '\t' || *s == ',')
			s++;
		if (!*s)
			break;
		end = s + strcspn(s, " \t,");
		dash = memchr(s, '-', (size_t)(end - s));
		if (dash) {
			if (parse_port(s, (size_t)(dash - s), &lo) || parse_port(dash + 1, (size_t)(end - dash - 1), &hi)) {
				*why = "expected ports like 443 or 8000-8099 (0..65535)";
				return -1;
			}
			if (lo > hi) {
				*why = "range runs backwards";
				return -1;
			}
		} else {
			if (parse_port(s, (size_t)(end - s), &lo)) {
				*why = "expected ports like 443 or 8000-8099 (0..65535)";
				return -1;
			}
			hi = lo;
		}
		nv = realloc(*v, (size_t)(*n + 1) * sizeof **v);
		if (!nv) {
			*why = "out of memory";
			return -1;
		}
		*v = nv;
		nv[*n].lo = (uint16_t)lo;
		nv[*n].hi = (uint16_t)hi;
		(*n)++;
		s = end;
	}
	return 0;
}

int ll_covers(const char *real, const char *rule_path)
{
	char p[PATH_MAX];
	struct stat rule, st;
	char *slash;

	if (stat(rule_path, &rule) != 0)
		return 0;
	snprintf(p, sizeof p, "%s", real);
	for (;;) {
		if (stat(p, &st) == 0 && st.st_dev == rule.st_dev && st.st_ino == rule.st_ino)
			return 1;
		slash = strrchr(p, '/');
		if (!slash || p[1] == '\0')
			return 0;
		slash[slash == p] = '\0'; /* "/a" -> "/", "/a/b" -> "/a" */
	}
}

uint64_t ll_granted(const struct ll_ruleset *rs, const char *real)
{
	uint64_t granted = 0;
	int i;

	for (i = 0; i < rs->n_rules; i++)
		if (ll_covers(real, rs->rules[i].path))
			granted |= rs->rules[i].access;
	return granted;
}
