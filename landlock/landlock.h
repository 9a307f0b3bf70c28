/* landlock: ABI negotiation, the table of rights per ABI, ruleset building.
 * Raw syscalls; the 6.1 uapi headers know ABI <= 2, so the constants of
 * ABI 3-7 are defined here. */
#ifndef WARD_LANDLOCK_H
#define WARD_LANDLOCK_H

#include <stddef.h>
#include <stdint.h>

#define LL_ABI_KNOWN 7 /* the newest ABI whose rights this build handles */

/* filesystem rights */
#define LL_FS_EXECUTE (1ULL << 0)
#define LL_FS_WRITE_FILE (1ULL << 1)
#define LL_FS_READ_FILE (1ULL << 2)
#define LL_FS_READ_DIR (1ULL << 3)
#define LL_FS_REMOVE_DIR (1ULL << 4)
#define LL_FS_REMOVE_FILE (1ULL << 5)
#define LL_FS_MAKE_CHAR (1ULL << 6)
#define LL_FS_MAKE_DIR (1ULL << 7)
#define LL_FS_MAKE_REG (1ULL << 8)
#define LL_FS_MAKE_SOCK (1ULL << 9)
#define LL_FS_MAKE_FIFO (1ULL << 10)
#define LL_FS_MAKE_BLOCK (1ULL << 11)
#define LL_FS_MAKE_SYM (1ULL << 12)
#define LL_FS_REFER (1ULL << 13)     /* ABI 2 */
#define LL_FS_TRUNCATE (1ULL << 14)  /* ABI 3 */
#define LL_FS_IOCTL_DEV (1ULL << 15) /* ABI 5 */
/* rights that make sense on a file (the rest only on directories) */
#define LL_FS_FILE_RIGHTS \
	(LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)
#define LL_FS_READ_EXEC (LL_FS_READ_FILE | LL_FS_READ_DIR | LL_FS_EXECUTE)

/* network rights, ABI 4 */
#define LL_NET_BIND_TCP (1ULL << 0)
#define LL_NET_CONNECT_TCP (1ULL << 1)

/* scopes, ABI 6 */
#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0)
#define LL_SCOPE_SIGNAL (1ULL << 1)

/* landlock_restrict_self() flags, ABI 7 */
#define LL_LOG_SAME_EXEC_OFF (1U << 0)
#define LL_LOG_NEW_EXEC_ON (1U << 1)

enum ll_mode { LL_OFF, LL_BEST_EFFORT, LL_HARD };

struct port_range {
	uint16_t lo, hi;
};

struct ll_policy {
	enum ll_mode mode;
	char **read; /* read + execute below these */
	int n_read;
	char **write; /* every right below these */
	int n_write;
	struct port_range *connect;
	int n_connect;
	struct port_range *bind;
	int n_bind;
	uint64_t scopes; /* LL_SCOPE_* asked for */
};

struct ll_rule {
	char *path;
	uint64_t access; /* as granted (masked to the ABI and to files) */
	int is_dir;
};

#define LL_MAX_NOTES 24

struct ll_ruleset {
	int fd;	     /* -1: nothing to restrict */
	int abi;     /* what the kernel speaks (0: no Landlock) */
	int use_abi; /* min(abi, LL_ABI_KNOWN) */
	uint64_t handled_fs, handled_net, scoped;
	unsigned restrict_flags;
	struct ll_rule *rules;
	int n_rules;
	int n_net_rules;
	struct port_range *connect, *bind; /* as put in force (copies) */
	int n_connect, n_bind;
	char *notes[LL_MAX_NOTES]; /* every degradation, one line each */
	int n_notes;
};

/* The kernel's Landlock ABI version; 0 if Landlock is unavailable. */
int ll_abi(void);

/* Rights each ABI knows (the downgrade table). */
uint64_t ll_fs_rights(int abi);
uint64_t ll_net_rights(int abi);
uint64_t ll_scopes(int abi);
unsigned ll_restrict_flags(int abi);

/* The ABI a right was introduced in. */
int ll_fs_right_abi(uint64_t right);

/* Names: "read_file", "truncate", ...; writes "a,b,c" into buf. */
const char *ll_fs_names(uint64_t rights, char *buf, size_t size);
const char *ll_fs_right_name(uint64_t right);

/* Builds the ruleset for the policy at the given ABI (pass ll_abi()):
 * opens every rule path now, as the caller's (root) credentials. In
 * hard_requirement mode anything that cannot be enforced is an error:
 * returns -1 with err filled. best_effort records each degradation in
 * out->notes and goes on. */
int ll_build(const struct ll_policy *p, int abi, struct ll_ruleset *out, char *err, size_t errsize);

/* In the child, after NO_NEW_PRIVS: enforce. Returns 0 or -errno. */
int ll_restrict(const struct ll_ruleset *rs);

void ll_free(struct ll_ruleset *rs);

/* Does a rule on rule_path (its inode, as the rule holds it) cover the
 * canonical path real? Landlock looks for rules on the inodes a path
 * walks through, from the object up to the root, a mount's root standing
 * for the directory it hides: compared by inode, not by spelling, as the
 * kernel does (a bind mount of a rule's directory is covered wherever it
 * is mounted). */
int ll_covers(const char *real, const char *rule_path);

/* The rights the ruleset grants at the canonical path: the union of every
 * rule that covers it, as Landlock does. */
uint64_t ll_granted(const struct ll_ruleset *rs, const char *real);

/* "443", "8000-8099", "443 8000-8099" -> ranges (appended). */
int ll_parse_ports(const char *s, struct port_range **v, int *n, const char **why);

#endif
