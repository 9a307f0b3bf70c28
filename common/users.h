/* users: resolve the agent's user from the image's /etc/passwd and
 * /etc/group, parsed here with bounds (a static binary has no NSS). */
#ifndef WARD_USERS_H
#define WARD_USERS_H

#include <stddef.h>
#include <sys/types.h>

#define USERS_MAX_GROUPS 64
#define USERS_MAX_FILE (4 << 20)

struct user_ids {
	uid_t uid;
	gid_t gid;
	gid_t groups[USERS_MAX_GROUPS]; /* supplementary, the primary included */
	int ngroups;
	char name[64]; /* empty when given as a number not in passwd */
	char home[256];
};

/* "pi", "1000", "1000:1000". Names are looked up in passwd (primary gid,
 * home) and group (every group listing the name). A bare uid uses the
 * passwd entry's gid if there is one, else gid = uid. Returns 0, or -1
 * with why set. */
int users_resolve(const char *spec, const char *passwd_path, const char *group_path,
		  struct user_ids *out, const char **why);

/* The same on buffers already read (the fuzzable core); group may be NULL. */
int users_resolve_buf(const char *spec, const char *passwd, size_t plen, const char *group,
		      size_t glen, struct user_ids *out, const char **why);

/* The ids this process runs with (ward started without root: the agent's
 * too); its passwd name when there is one, else "". */
void users_self(struct user_ids *out, const char *passwd_path);

/* setgroups(u's groups), skipped when they are already this process's
 * (which needs no CAP_SETGID: a start without root). 0, or -1 with errno. */
int users_setgroups(const struct user_ids *u);

#endif
