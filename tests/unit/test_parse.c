/* Unit tests for common/parse.c: every value parser, good and bad input. */
#include <signal.h>
#include <stdlib.h>

#include "common/parse.h"
#include "unit.h"

static uint64_t dur(const char *s)
{
	const char *why = NULL;
	uint64_t ms = 12345678;
	return parse_duration(s, &ms, &why) == 0 ? ms : (uint64_t)-1;
}

static void test_duration(void)
{
	const char *why = NULL;
	uint64_t ms;

	CHECK(dur("250ms") == 250);
	CHECK(dur("10s") == 10000);
	CHECK(dur("10") == 10000); /* bare number: seconds */
	CHECK(dur("0") == 0);
	CHECK(dur("0ms") == 0);
	CHECK(dur("2m") == 120000);
	CHECK(dur("1h") == 3600000);
	CHECK(dur("1.5s") == 1500);
	CHECK(dur("0.25s") == 250);
	CHECK(dur("24h") == 86400000);
	CHECK(dur("25h") == (uint64_t)-1);
	CHECK(dur("99999999999999999999999s") == (uint64_t)-1);
	CHECK(dur("") == (uint64_t)-1);
	CHECK(dur("s") == (uint64_t)-1);
	CHECK(dur("-1s") == (uint64_t)-1);
	CHECK(dur("10x") == (uint64_t)-1);
	CHECK(dur("10 s") == (uint64_t)-1);
	CHECK(dur("1.s") == (uint64_t)-1);
	CHECK(dur("1e3ms") == (uint64_t)-1);
	CHECK(parse_duration("10x", &ms, &why) == -1 && why && strstr(why, "unit"));
	CHECK(parse_duration("25h", &ms, &why) == -1 && why && strstr(why, "24h"));
}

static void test_uint(void)
{
	const char *why;
	uint64_t v;

	CHECK(parse_uint("0", 0, 10, &v, &why) == 0 && v == 0);
	CHECK(parse_uint("10", 0, 10, &v, &why) == 0 && v == 10);
	CHECK(parse_uint("11", 0, 10, &v, &why) == -1);
	CHECK(parse_uint("18446744073709551615", 0, UINT64_MAX, &v, &why) == 0 && v == UINT64_MAX);
	CHECK(parse_uint("18446744073709551616", 0, UINT64_MAX, &v, &why) == -1);
	CHECK(parse_uint("", 0, 10, &v, &why) == -1);
	CHECK(parse_uint("1a", 0, 10, &v, &why) == -1);
	CHECK(parse_uint("+1", 0, 10, &v, &why) == -1);
}

static int sig(const char *s)
{
	const char *why;
	int v = -1;
	return parse_signal(s, 0, &v, &why) == 0 ? v : -1;
}

static void test_signal(void)
{
	const char *why;
	char buf[32];
	int v;

	CHECK(sig("TERM") == SIGTERM);
	CHECK(sig("SIGTERM") == SIGTERM);
	CHECK(sig("term") == SIGTERM);
	CHECK(sig("15") == 15);
	CHECK(sig("HUP") == SIGHUP);
	CHECK(sig("WINCH") == SIGWINCH);
	CHECK(sig("RTMIN") == SIGRTMIN);
	CHECK(sig("RTMIN+3") == SIGRTMIN + 3);
	CHECK(sig("SIGRTMAX-1") == SIGRTMAX - 1);
	CHECK(sig("RTMAX") == SIGRTMAX);
	CHECK(sig("RTMIN-1") == -1);
	CHECK(sig("RTMIN+99") == -1);
	CHECK(sig("64") == 64);
	CHECK(sig("65") == -1);
	CHECK(sig("0") == -1);
	CHECK(sig("KILL") == -1);
	CHECK(sig("STOP") == -1);
	CHECK(sig("NOPE") == -1);
	CHECK(sig("") == -1);
	CHECK(parse_signal("KILL", 1, &v, &why) == 0 && v == SIGKILL);
	CHECK_STR(signal_name(SIGTERM, buf, sizeof buf), "TERM");
	CHECK_STR(signal_name(SIGRTMIN + 2, buf, sizeof buf), "RTMIN+2");
}

static void test_rewrite(void)
{
	const char *why;
	int from, to;

	CHECK(parse_rewrite("INT:TERM", &from, &to, &why) == 0 && from == SIGINT && to == SIGTERM);
	CHECK(parse_rewrite("1:0", &from, &to, &why) == 0 && from == SIGHUP && to == 0);
	CHECK(parse_rewrite("HUP:0", &from, &to, &why) == 0 && to == 0);
	CHECK(parse_rewrite("CHLD:TERM", &from, &to, &why) == -1 && strstr(why, "CHLD"));
	CHECK(parse_rewrite("USR1:CHLD", &from, &to, &why) == 0 && to == SIGCHLD);
	CHECK(parse_rewrite("INT", &from, &to, &why) == -1);
	CHECK(parse_rewrite(":TERM", &from, &to, &why) == -1);
	CHECK(parse_rewrite("INT:", &from, &to, &why) == -1);
	CHECK(parse_rewrite("INT:KILL", &from, &to, &why) == -1);
	CHECK(parse_rewrite("KILL:TERM", &from, &to, &why) == -1);
	CHECK(parse_rewrite("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA:TERM", &from, &to, &why) == -1);
}

static void test_umask_bool(void)
{
	const char *why;
	unsigned m;
	int b;

	CHECK(parse_umask("0077", &m, &why) == 0 && m == 077);
	CHECK(parse_umask("022", &m, &why) == 0 && m == 022);
	CHECK(parse_umask("0", &m, &why) == 0 && m == 0);
	CHECK(parse_umask("0777", &m, &why) == 0 && m == 0777);
	CHECK(parse_umask("1777", &m, &why) == -1);
	CHECK(parse_umask("08", &m, &why) == -1);
	CHECK(parse_umask("00777", &m, &why) == -1);
	CHECK(parse_umask("", &m, &why) == -1);
	CHECK(parse_bool("yes", &b, &why) == 0 && b == 1);
	CHECK(parse_bool("Off", &b, &why) == 0 && b == 0);
	CHECK(parse_bool("maybe", &b, &why) == -1);
}

static void test_rlimit(void)
{
	const char *why;
	rlim_t s, h;
	int r;

	CHECK(rlimit_resource("nofile", &r) == 0 && r == RLIMIT_NOFILE);
	CHECK(rlimit_resource("nproc", &r) == 0 && r == RLIMIT_NPROC);
	CHECK(rlimit_resource("bogus", &r) == -1);
	CHECK_STR(rlimit_name(RLIMIT_CORE), "core");
	CHECK(parse_rlimit("4096", &s, &h, &why) == 0 && s == 4096 && h == 4096);
	CHECK(parse_rlimit("1024:4096", &s, &h, &why) == 0 && s == 1024 && h == 4096);
	CHECK(parse_rlimit("64M", &s, &h, &why) == 0 && s == 64ULL << 20);
	CHECK(parse_rlimit("1k:1G", &s, &h, &why) == 0 && s == 1024 && h == 1ULL << 30);
	CHECK(parse_rlimit("unlimited", &s, &h, &why) == 0 && s == RLIM_INFINITY && h == RLIM_INFINITY);
	CHECK(parse_rlimit("10:unlimited", &s, &h, &why) == 0 && s == 10 && h == RLIM_INFINITY);
	CHECK(parse_rlimit("unlimited:10", &s, &h, &why) == -1);
	CHECK(parse_rlimit("20:10", &s, &h, &why) == -1);
	CHECK(parse_rlimit("", &s, &h, &why) == -1);
	CHECK(parse_rlimit(":", &s, &h, &why) == -1);
	CHECK(parse_rlimit("10:", &s, &h, &why) == -1);
	CHECK(parse_rlimit("M", &s, &h, &why) == -1);
	CHECK(parse_rlimit("99999999999T", &s, &h, &why) == -1);
	CHECK(parse_rlimit("-1", &s, &h, &why) == -1);
}

static void check_split(const char *in, int want_argc, const char *const *want)
{
	const char *why;
	char **argv = NULL;
	int argc = -1, i, ok;

	ok = split_words(in, &argv, &argc, &why) == 0 && argc == want_argc;
	for (i = 0; ok && i < argc; i++)
		ok = strcmp(argv[i], want[i]) == 0;
	ok = ok && argv[argc] == NULL;
	if (!ok)
		fprintf(stderr, "split_words(%s) gave %d words\n", in, argc);
	CHECK(ok);
	free(argv);
}

static void test_split(void)
{
	const char *why;
	char **argv;
	int argc;

	check_split("/usr/local/bin/pi --mode rpc", 3, (const char *[]){ "/usr/local/bin/pi", "--mode", "rpc" });
	check_split("  a   b\t c  ", 3, (const char *[]){ "a", "b", "c" });
	check_split("sh -c 'echo $HOME; exit 3'", 3, (const char *[]){ "sh", "-c", "echo $HOME; exit 3" });
	check_split("a\"b c\"d", 1, (const char *[]){ "ab cd" });
	check_split("\"a \\\"q\\\" \\\\ \\n\"", 1, (const char *[]){ "a \"q\" \\ \\n" });
	check_split("a\\ b c", 2, (const char *[]){ "a b", "c" });
	check_split("'' x", 2, (const char *[]){ "", "x" });
	check_split("'it'\\''s'", 1, (const char *[]){ "it's" });
	CHECK(split_words("", &argv, &argc, &why) == -1);
	CHECK(split_words("   ", &argv, &argc, &why) == -1);
	CHECK(split_words("'open", &argv, &argc, &why) == -1 && strstr(why, "unterminated"));
	CHECK(split_words("\"open", &argv, &argc, &why) == -1);
	CHECK(split_words("trailing\\", &argv, &argc, &why) == -1);
}

int main(void)
{
	test_duration();
	test_uint();
	test_signal();
	test_rewrite();
	test_umask_bool();
	test_rlimit();
	test_split();
	return unit_done("test_parse");
}
