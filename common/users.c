#define _GNU_SOURCE
#include "common/users.h"

#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/parse.h"

#define MAX_FIELDS 8

/* Splits one line (not NUL-terminated) at ':' into at most MAX_FIELDS
 * pointer/length pairs. Returns the field count. */
static int fields(const char *line, size_t len, const char **f, size_t *fl)
{
	int n = 0;
	size_t start = 0, i;

	for (i = 0; i <= len && n < MAX_FIELDS; i++) {
		if (i == len || line[i] == ':') {
			f[n] = line + start;
			fl[n] = i - start;
			n++;
			start = i + 1;
		}
	}
	return n;
}

static int parse_id(const char *s, size_t len, uint32_t *out)
{
	uint64_t v;

	/* (uid_t)-1 is "no change" to setresuid */
	if (parse_digits(s, len, 10, UINT32_MAX - 1, &v) != 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int eq(const char *s, size_t len, const char *z)
{
	return strlen(z) == len && memcmp(s, z, len) == 0;
}

/* Calls fn on each line; stops when fn returns non-zero (and returns that). */
static int each_line(const char *buf, size_t len, int (*fn)(const char *, size_t, void *), void *arg)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - (buf + pos)) : len - pos;
		int r;

		/* l is 0 for an empty line (cppcheck 2.10 believes otherwise) */
		// cppcheck-suppress knownConditionTrueFalse
		if (l > 0 && buf[pos] != '#' && (r = fn(buf + pos, l, arg)) != 0)
			return r;
		pos += l + 1;
	}
	return 0;
}

struct pw_query {
	const char *name; /* by name, or */
	int by_uid;
	uint32_t uid;
	struct user_ids *out;
};

static int pw_line(const char *line, size_t len, void *arg)
{
	struct pw_query *q = arg;
	const char *f[MAX_FIELDS];
	size_t fl[MAX_FIELDS];
	uint32_t uid = 0, gid = 0;

	if (fields(line, len, f, fl) < 7 || parse_id(f[2], fl[2], &uid) || parse_id(f[3], fl[3], &gid))
		return 0; /* malformed lines are skipped, like getpwnam does */
	if (q->by_uid ? uid != q->uid : !eq(f[0], fl[0], q->name))
		return 0;
	if (fl[0] >= sizeof q->out->name || fl[5] >= sizeof q->out->home)
		return -1;
	q->out->uid = uid;
	q->out->gid = gid;
	memcpy(q->out->name, f[0], fl[0]);
	q->out->name[fl[0]] = '\0';
	memcpy(q->out->home, f[5], fl[5]);
	q->out->home[fl[5]] = '\0';
	return 1;
}

static int add_group(struct user_ids *u, gid_t g)
{
	int i;

	for (i = 0; i < u->ngroups; i++)
		if (u->groups[i] == g)
			return 0;
	if (u->ngroups >= USERS_MAX_GROUPS)
		return -1;
	u->groups[u->ngroups++] = g;
	return 0;
}

static int gr_line(const char *line, size_t len, void *arg)
{
	struct user_ids *u = arg;
	const char *f[MAX_FIELDS];
	size_t fl[MAX_FIELDS], nlen = strlen(u->name), pos = 0;
	uint32_t gid;

	if (fields(line, len, f, fl) < 4 || parse_id(f[2], fl[2], &gid))
		return 0;
	while (pos < fl[3]) {
		const char *m = f[3] + pos;
		const char *c = memchr(m, ',', fl[3] - pos);
		size_t ml = c ? (size_t)(c - m) : fl[3] - pos;

		if (ml == nlen && memcmp(m, u->name, nlen) == 0)
			return add_group(u, gid) ? -1 : 0;
		pos += ml + 1;
	}
	return 0;
}

int users_resolve_buf(const char *spec, const char *passwd, size_t plen, const char *group,
		      size_t glen, struct user_ids *out, const char **why)
{
	struct pw_query q = { 0 };
	const char *colon = strchr(spec, ':');
	uint32_t uid = 0, gid = 0;
	int r;

	memset(out, 0, sizeof *out);
	q.out = out;
	if (spec[0] >= '0' && spec[0] <= '9') {
		if (parse_id(spec, colon ? (size_t)(colon - spec) : strlen(spec), &uid) ||
		    (colon && parse_id(colon + 1, strlen(colon + 1), &gid))) {
			*why = "expected a user name, UID or UID:GID";
			return -1;
		}
		q.by_uid = 1;
		q.uid = uid;
		r = passwd ? each_line(passwd, plen, pw_line, &q) : 0;
		if (r < 0) {
			*why = "the passwd entry is too long";
			return -1;
		}
		if (r == 0) { /* a uid the image does not name */
			out->uid = uid;
			out->gid = uid;
		}
		if (colon)
			out->gid = gid;
	} else {
		if (colon) {
			*why = "expected a user name, UID or UID:GID";
			return -1;
		}
		q.name = spec;
		r = passwd ? each_line(passwd, plen, pw_line, &q) : 0;
		if (r < 0) {
			*why = "the passwd entry is too long";
			return -1;
		}
		if (r == 0) {
			*why = "no such user in /etc/passwd";
			return -1;
		}
	}
	out->groups[0] = out->gid;
	out->ngroups = 1;
	if (out->name[0] && group && each_line(group, glen, gr_line, out) < 0) {
		*why = "member of too many groups";
		return -1;
	}
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > USERS_MAX_FILE) {
		close(fd);
		errno = EFBIG;
		return NULL;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		close(fd);
		return NULL;
	}
	while (got < (size_t)st.st_size && (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

int users_resolve(const char *spec, const char *passwd_path, const char *group_path,
		  struct user_ids *out, const char **why)
{
	size_t plen = 0, glen = 0;
	char *p = slurp(passwd_path, &plen);
	char *g = slurp(group_path, &glen);
	int r;

	if (!p && !(spec[0] >= '0' && spec[0] <= '9')) {
		free(g);
		*why = "cannot read /etc/passwd";
		return -1;
	}
	r = users_resolve_buf(spec, p, plen, g, glen, out, why);
	free(p);
	free(g);
	return r;
}

void users_self(struct user_ids *out, const char *passwd_path)
{
	char spec[16];
	const char *why;
	int n;

	memset(out, 0, sizeof *out);
	out->uid = getuid();
	out->gid = getgid();
	/* as they are: none after setpriv --clear-groups (no CAP_SETGID to
	 * change them anyway) */
	n = getgroups(USERS_MAX_GROUPS, out->groups);
	out->ngroups = n > 0 ? n : 0;
	/* the name and home, when passwd has this uid (OpenShift's arbitrary
	 * uid has none) */
	snprintf(spec, sizeof spec, "%u", (unsigned)out->uid);
	{
		struct user_ids found;
		if (users_resolve(spec, passwd_path, "/etc/group", &found, &why) == 0) {
			memcpy(out->name, found.name, sizeof out->name);
			memcpy(out->home, found.home, sizeof out->home);
		}
	}
}

int users_setgroups(const struct user_ids *u)
{
	gid_t now[USERS_MAX_GROUPS + 1];
	int n = getgroups(USERS_MAX_GROUPS + 1, now), i, j;

	if (n == u->ngroups) {
		for (i = 0; i < n; i++) {
			for (j = 0; j < u->ngroups && now[i] != u->groups[j]; j++)
				;
			if (j == u->ngroups)
				break;
		}
		if (i == n)
			return 0;
	}
	return setgroups((size_t)u->ngroups, u->groups);
}
