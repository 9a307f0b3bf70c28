/* Unit tests for landlock/: the rights table per ABI, the downgrade of
 * best_effort and the refusals of hard_requirement (ruleset creation runs
 * against this kernel, nothing is enforced), port parsing. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "landlock/landlock.h"
#include "unit.h"

static void test_tables(void)
{
	char buf[512];

	CHECK(ll_fs_rights(0) == 0);
	CHECK(ll_fs_rights(1) == 0x1fff);
	CHECK(ll_fs_rights(2) == 0x3fff);
	CHECK(ll_fs_rights(3) == 0x7fff);
	CHECK(ll_fs_rights(4) == 0x7fff);
	CHECK(ll_fs_rights(5) == 0xffff);
	CHECK(ll_fs_rights(7) == 0xffff);
	CHECK(ll_fs_rights(99) == 0xffff);
	CHECK(ll_net_rights(3) == 0);
	CHECK(ll_net_rights(4) == (LL_NET_BIND_TCP | LL_NET_CONNECT_TCP));
	CHECK(ll_scopes(5) == 0);
	CHECK(ll_scopes(6) == (LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL));
	CHECK(ll_restrict_flags(6) == 0);
	CHECK(ll_restrict_flags(7) == (LL_LOG_SAME_EXEC_OFF | LL_LOG_NEW_EXEC_ON));
	CHECK(ll_fs_right_abi(LL_FS_REFER) == 2);
	CHECK(ll_fs_right_abi(LL_FS_TRUNCATE) == 3);
	CHECK(ll_fs_right_abi(LL_FS_IOCTL_DEV) == 5);
	CHECK(ll_fs_right_abi(LL_FS_EXECUTE) == 1);
	CHECK_STR(ll_fs_right_name(LL_FS_TRUNCATE), "truncate");
	CHECK_STR(ll_fs_names(LL_FS_READ_EXEC, buf, sizeof buf), "execute,read_file,read_dir");
	CHECK_STR(ll_fs_names(0, buf, sizeof buf), "");
}

static void test_ports(void)
{
	struct port_range *v = NULL;
	const char *why;
	int n = 0;

	CHECK(ll_parse_ports("443", &v, &n, &why) == 0 && n == 1 && v[0].lo == 443 && v[0].hi == 443);
	CHECK(ll_parse_ports(" 8000-8099, 0 65535", &v, &n, &why) == 0 && n == 4);
	CHECK(v[1].lo == 8000 && v[1].hi == 8099 && v[2].lo == 0 && v[3].hi == 65535);
	CHECK(ll_parse_ports("", &v, &n, &why) == 0 && n == 4);
	CHECK(ll_parse_ports("65536", &v, &n, &why) == -1);
	CHECK(ll_parse_ports("1-", &v, &n, &why) == -1);
	CHECK(ll_parse_ports("-1", &v, &n, &why) == -1);
	CHECK(ll_parse_ports("5-4", &v, &n, &why) == -1 && strstr(why, "backwards"));
	CHECK(ll_parse_ports("http", &v, &n, &why) == -1);
	CHECK(ll_parse_ports("123456", &v, &n, &why) == -1);
	free(v);
}

static int has_note(const struct ll_ruleset *rs, const char *text)
{
	int i;
	for (i = 0; i < rs->n_notes; i++)
		if (strstr(rs->notes[i], text))
			return 1;
	return 0;
}

static void test_build(void)
{
	char *read[] = { "/usr", "/etc/hostname", "/nonexistent-ward-test" };
	char *write[] = { "/tmp" };
	struct port_range connect[] = { { 443, 443 }, { 8000, 8002 } };
	struct ll_policy p = { LL_BEST_EFFORT, read, 3, write, 1, connect, 2, NULL, 0,
			       LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL };
	struct ll_ruleset rs;
	char err[1024];
	int abi = ll_abi();

	if (abi < 7) {
		SKIP(26, "ruleset building: Landlock ABI %d here (0 under valgrind, which does not know "
			 "the landlock syscalls); these need 7", abi);
		return;
	}
	/* the full ABI: nothing degraded but the missing path */
	CHECK(ll_build(&p, abi, &rs, err, sizeof err) == 0);
	CHECK(rs.fd >= 0 && rs.handled_fs == 0xffff && rs.handled_net == 3 && rs.scoped == 3);
	CHECK(rs.n_rules == 3 && rs.n_net_rules == 4);
	CHECK(rs.n_notes == 1 && has_note(&rs, "/nonexistent-ward-test"));
	CHECK(rs.rules[0].access == LL_FS_READ_EXEC && rs.rules[0].is_dir);
	/* a file rule keeps only file rights */
	CHECK(!rs.rules[1].is_dir && rs.rules[1].access == (LL_FS_READ_FILE | LL_FS_EXECUTE));
	CHECK(rs.rules[2].access == 0xffff);
	CHECK(rs.restrict_flags == (LL_LOG_SAME_EXEC_OFF | LL_LOG_NEW_EXEC_ON));
	ll_free(&rs);

	/* as if the kernel spoke ABI 2 (the Debian 6.1 guest) */
	CHECK(ll_build(&p, 2, &rs, err, sizeof err) == 0);
	CHECK(rs.fd >= 0 && rs.handled_fs == 0x3fff && rs.handled_net == 0 && rs.scoped == 0);
	CHECK(has_note(&rs, "truncate is not restricted (needs Landlock ABI 3"));
	CHECK(has_note(&rs, "ioctl_dev is not restricted (needs Landlock ABI 5"));
	CHECK(has_note(&rs, "TCP bind and connect are not restricted"));
	CHECK(has_note(&rs, "scope abstract signal is not enforced"));
	CHECK(has_note(&rs, "not audited"));
	CHECK(rs.rules[2].access == 0x3fff);
	ll_free(&rs);

	/* hard_requirement refuses what it cannot enforce, in one line */
	p.mode = LL_HARD;
	CHECK(ll_build(&p, 2, &rs, err, sizeof err) == -1);
	CHECK(strstr(err, "truncate cannot be restricted (needs ABI 3)") != NULL);
	CHECK(strstr(err, "TCP bind/connect") && strstr(err, "scopes") && strstr(err, "ABI 2"));
	CHECK(strchr(err, '\n') == NULL);
	ll_free(&rs);
	CHECK(ll_build(&p, abi, &rs, err, sizeof err) == -1); /* the missing path */
	CHECK(strstr(err, "/nonexistent-ward-test: No such file or directory") != NULL);
	ll_free(&rs);
	p.n_read = 2;
	CHECK(ll_build(&p, abi, &rs, err, sizeof err) == 0 && rs.n_notes == 0);
	ll_free(&rs);
	CHECK(ll_build(&p, 0, &rs, err, sizeof err) == -1 && strstr(err, "no Landlock"));
	ll_free(&rs);
	p.mode = LL_BEST_EFFORT;
	CHECK(ll_build(&p, 0, &rs, err, sizeof err) == 0 && rs.fd < 0 && has_note(&rs, "no Landlock"));
	ll_free(&rs);
	p.mode = LL_OFF;
	CHECK(ll_build(&p, abi, &rs, err, sizeof err) == 0 && rs.fd < 0 && rs.n_notes == 0);
	ll_free(&rs);
}

/* notes that say the rule for path follows a symlink */
static int symlink_noted(const struct ll_ruleset *rs, const char *path)
{
	char head[160];
	int i, n = 0;

	snprintf(head, sizeof head, "rule for %s follows a symlink", path);
	for (i = 0; i < rs->n_notes; i++)
		n += strncmp(rs->notes[i], head, strlen(head)) == 0;
	return n;
}

/* A rule path through a symlink the agent could replace: noted, whether
 * the symlink is the last component, a component before it, or the last
 * written with a trailing slash. */
static void test_symlink_note(void)
{
	char d[] = "/tmp/ward-ll-XXXXXX", w[64], t[64], tsub[80], link[96], ro[64], link2[96], slash[100], mid[110];
	char *read[4], *write[1];
	struct ll_policy p = { LL_BEST_EFFORT, read, 4, write, 1, NULL, 0, NULL, 0, 0 };
	struct ll_ruleset rs;
	char err[1024];

	if (ll_abi() < 1) {
		SKIP(7, "symlink notes: no Landlock here (valgrind does not know its calls)");
		return;
	}
	if (!mkdtemp(d)) {
		SKIP(7, "symlink notes: cannot make a directory in /tmp");
		return;
	}
	snprintf(w, sizeof w, "%s/w", d);
	snprintf(t, sizeof t, "%s/t", d);
	snprintf(tsub, sizeof tsub, "%s/sub", t);
	snprintf(ro, sizeof ro, "%s/ro", d);
	snprintf(link, sizeof link, "%s/link", w);
	snprintf(link2, sizeof link2, "%s/link", ro);
	snprintf(slash, sizeof slash, "%s/", link);
	snprintf(mid, sizeof mid, "%s/sub", link);
	CHECK(mkdir(w, 0700) == 0 && mkdir(t, 0700) == 0 && mkdir(tsub, 0700) == 0 && mkdir(ro, 0700) == 0);
	CHECK(symlink(t, link) == 0 && symlink(t, link2) == 0);
	write[0] = w;
	read[0] = link;  /* in the agent's write dir: it could point it elsewhere */
	read[1] = link2; /* in a directory the agent may only read */
	read[2] = slash; /* the same symlink, with a trailing slash (lstat follows it) */
	read[3] = mid;   /* through the symlink to a directory beneath its target */
	CHECK(ll_build(&p, ll_abi(), &rs, err, sizeof err) == 0);
	CHECK(symlink_noted(&rs, link) == 1);
	CHECK(symlink_noted(&rs, link2) == 0);
	CHECK(symlink_noted(&rs, slash) == 1);
	CHECK(symlink_noted(&rs, mid) == 1);
	ll_free(&rs);
	unlink(link);
	unlink(link2);
	rmdir(w);
	rmdir(tsub);
	rmdir(t);
	rmdir(ro);
	rmdir(d);
}

/* ll_covers: by inode up the path, not by spelling. */
static void test_covers(void)
{
	char d[] = "/tmp/ward-llc-XXXXXX", a[64], ab[64], sub[96], link[64];

	if (!mkdtemp(d)) {
		SKIP(7, "ll_covers: cannot make a directory in /tmp");
		return;
	}
	snprintf(a, sizeof a, "%s/a", d);
	snprintf(ab, sizeof ab, "%s/ab", d);
	snprintf(sub, sizeof sub, "%s/a/sub", d);
	snprintf(link, sizeof link, "%s/link", d);
	CHECK(mkdir(a, 0700) == 0 && mkdir(ab, 0700) == 0 && mkdir(sub, 0700) == 0 && symlink(a, link) == 0);
	CHECK(ll_covers(sub, a));	  /* beneath */
	CHECK(ll_covers(a, a));		  /* the directory itself */
	CHECK(!ll_covers(ab, a));	  /* "/a" is a prefix of "/ab": not beneath */
	CHECK(!ll_covers(a, sub));	  /* above the rule */
	CHECK(ll_covers(sub, link));	  /* a rule names its directory through a symlink */
	CHECK(ll_covers(sub, "/"));	  /* the root covers all */
	CHECK(!ll_covers(sub, "/nonexistent-ward")); /* a rule on nothing covers nothing */
	unlink(link);
	rmdir(sub);
	rmdir(ab);
	rmdir(a);
	rmdir(d);
}

int main(void)
{
	test_tables();
	test_ports();
	test_build();
	test_symlink_note();
	test_covers();
	return unit_done("test_landlock");
}
