/* Unit tests for common/users.c: passwd and group parsing without NSS. */
#include "unit.h"
#include "common/users.h"

static const char passwd[] =
	"root:x:0:0:root:/root:/bin/bash\n"
	"# a comment\n"
	"broken line without colons\n"
	"pi:x:1000:1000:Pi agent,,,:/home/pi:/bin/bash\n"
	"bad:x:notanumber:1:b:/b:/bin/sh\n"
	"huge:x:4294967295:1:h:/h:/bin/sh\n"
	"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
	"last:x:2000:2000::/home/last:/bin/sh"; /* no final newline */

static const char group[] =
	"root:x:0:\n"
	"pi:x:1000:\n"
	"dev:x:3000:alice,pi,bob\n"
	"pix:x:3001:pix\n"
	"audio:x:29:pi\n"
	"malformed\n"
	"other:x:3002:bob\n";

static int resolve(const char *spec, struct user_ids *u, const char **why)
{
	return users_resolve_buf(spec, passwd, sizeof passwd - 1, group, sizeof group - 1, u, why);
}

int main(void)
{
	struct user_ids u;
	const char *why;

	CHECK(resolve("pi", &u, &why) == 0);
	CHECK(u.uid == 1000 && u.gid == 1000);
	CHECK_STR(u.name, "pi");
	CHECK_STR(u.home, "/home/pi");
	CHECK(u.ngroups == 3 && u.groups[0] == 1000 && u.groups[1] == 3000 && u.groups[2] == 29);
	CHECK(resolve("root", &u, &why) == 0 && u.uid == 0 && u.ngroups == 1);
	CHECK(resolve("last", &u, &why) == 0 && u.uid == 2000);
	CHECK(resolve("nobody", &u, &why) == 0 && u.uid == 65534 && u.gid == 65534);
	CHECK(resolve("alice", &u, &why) == -1 && strstr(why, "no such user"));
	CHECK(resolve("bad", &u, &why) == -1);
	CHECK(resolve("huge", &u, &why) == -1);
	CHECK(resolve("p", &u, &why) == -1);
	/* numbers */
	CHECK(resolve("1000", &u, &why) == 0 && u.uid == 1000 && u.gid == 1000 && u.ngroups == 3);
	CHECK(resolve("1000:5", &u, &why) == 0 && u.uid == 1000 && u.gid == 5 && u.groups[0] == 5);
	CHECK(resolve("4242", &u, &why) == 0 && u.uid == 4242 && u.gid == 4242 && u.ngroups == 1 && !u.name[0]);
	CHECK(resolve("4242:7", &u, &why) == 0 && u.gid == 7);
	CHECK(resolve("4294967295", &u, &why) == -1);
	CHECK(resolve("12x", &u, &why) == -1);
	CHECK(resolve("1:", &u, &why) == -1);
	CHECK(resolve("pi:1", &u, &why) == -1);
	CHECK(users_resolve_buf("1000", NULL, 0, NULL, 0, &u, &why) == 0 && u.uid == 1000);
	CHECK(users_resolve_buf("pi", NULL, 0, NULL, 0, &u, &why) == -1);
	CHECK(users_resolve("root", "/etc/passwd", "/etc/group", &u, &why) == 0 && u.uid == 0);
	CHECK(users_resolve("pi", "/nonexistent", "/nonexistent", &u, &why) == -1);
	return unit_done("test_users");
}
