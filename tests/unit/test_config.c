/* Unit tests for init/config/reader.c and keys.c: every key, every error, with the exact
 * one-line message a user sees. */
#include <fcntl.h>
#include <linux/close_range.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "mcp-bridge/http.h"
#include "init/config/config.h"
#include "common/fds.h"
#include "init/supervise/procs.h"
#include "unit.h"

static char errbuf[2048];

/* Loads text; returns the parser's status and leaves its stderr in errbuf. */
static int load(struct ward_config *cfg, const char *text)
{
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	FILE *cap = tmpfile();
	int saved = dup(2), rc;
	size_t n;

	config_defaults(cfg);
	fflush(stderr);
	dup2(fileno(cap), 2);
	rc = config_load_stream(cfg, in, "t.conf");
	dup2(saved, 2);
	close(saved);
	rewind(cap);
	n = fread(errbuf, 1, sizeof errbuf - 1, cap);
	errbuf[n] = '\0';
	fclose(cap);
	fclose(in);
	return rc;
}

static int ok(const char *text)
{
	struct ward_config cfg;
	int rc = load(&cfg, text);
	config_free(&cfg);
	if (rc != 0)
		fprintf(stderr, "unexpected error: %s", errbuf);
	return rc == 0;
}

/* The error must be exactly one line and begin with want. */
static int err(const char *text, const char *want)
{
	struct ward_config cfg;
	int rc = load(&cfg, text);
	char *nl = strchr(errbuf, '\n');
	int good = rc == -1 && strncmp(errbuf, want, strlen(want)) == 0 && nl && nl[1] == '\0';

	config_free(&cfg);
	if (!good)
		fprintf(stderr, "for %s\n  want: %s...\n  got:  %s\n", text, want, errbuf);
	return good;
}

static void test_defaults(void)
{
	struct ward_config cfg;
	int i, rewrites = 0;

	CHECK(load(&cfg, "") == 0);
	CHECK(cfg.log_format == LOG_TEXT && cfg.log_level == LOG_INFO);
	CHECK(cfg.grace_ms == 10000 && cfg.restart == RESTART_NEVER);
	CHECK(cfg.restart_delay_ms == 250 && cfg.restart_limit == 5);
	CHECK(cfg.forward_to == FORWARD_CHILD && !cfg.has_agent && !cfg.command);
	for (i = 0; i < WARD_NSIG; i++)
		rewrites += cfg.rewrite[i] != -1;
	CHECK(rewrites == 0);
	config_free(&cfg);
	CHECK(ok("; only a comment\n# another\n\n"));
}

static void test_every_key(void)
{
	struct ward_config cfg;
	const char *text =
		"[ward]\nlog_format = json\nlog_level = debug ; inline comment\n"
		"[supervise]\ngrace = 1500ms\nrestart = on-failure\nrestart_delay = 2s\n"
		"restart_limit = 0\nsignal_rewrite = INT:TERM\nsignal_rewrite = HUP:0\n"
		"forward_to = group\n"
		"[agent]\ncommand = /usr/local/bin/pi --mode 'rpc x'\ncwd = /workspace\n"
		"umask = 0077\nenv = PI_OFFLINE=1\nenv = A=b=c\nenv_pass = TERM LANG\nenv_pass = TERM\n"
		"rlimit_nofile = 4096\nrlimit_core = 0\nrlimit_as = 1G:unlimited\n";

	CHECK(load(&cfg, text) == 0);
	CHECK(cfg.log_format == LOG_JSON && cfg.log_level == LOG_DEBUG);
	CHECK(cfg.grace_ms == 1500 && cfg.restart == RESTART_ON_FAILURE);
	CHECK(cfg.restart_delay_ms == 2000 && cfg.restart_limit == 0);
	CHECK(cfg.rewrite[SIGINT] == SIGTERM && cfg.rewrite[SIGHUP] == 0 && cfg.rewrite[SIGUSR1] == -1);
	CHECK(cfg.forward_to == FORWARD_GROUP);
	CHECK(cfg.has_agent && cfg.command);
	CHECK_STR(cfg.command[0], "/usr/local/bin/pi");
	CHECK_STR(cfg.command[2], "rpc x");
	CHECK(cfg.command[3] == NULL);
	CHECK_STR(cfg.cwd, "/workspace");
	CHECK(cfg.umask_set && cfg.umask == 077);
	CHECK(cfg.n_env == 2);
	CHECK_STR(cfg.env[1], "A=b=c");
	CHECK(cfg.n_env_pass == 2);
	CHECK_STR(cfg.env_pass[1], "LANG");
	CHECK(cfg.n_rlimits == 3 && cfg.rlimits[0].resource == RLIMIT_NOFILE && cfg.rlimits[0].soft == 4096);
	CHECK(cfg.rlimits[2].soft == 1ULL << 30 && cfg.rlimits[2].hard == RLIM_INFINITY);
	config_free(&cfg);

	CHECK(ok("[supervise]\nrestart = always\n"));
	CHECK(ok("[supervise]\nrestart = never\n"));
	CHECK(ok("[ward]\nlog_format = text\nlog_level = error\n"));
	CHECK(ok("[ward]\nlog_level = warn\n[ward]\nlog_format = json\n"));
	CHECK(ok("[agent]\nenv_pass =\n"));
	CHECK(load(&cfg, "[agent]\ncommand = node /opt/pi/cli.js\n  --mode rpc\n\t--model 'fake/x y'\nuser = pi\n") == 0);
	CHECK(cfg.command && cfg.command[4] && cfg.command[5] && !cfg.command[6]);
	CHECK_STR(cfg.command[2], "--mode");
	CHECK_STR(cfg.command[5], "fake/x y");
	config_free(&cfg);
	CHECK(err("[agent]\ncommand = a\ncommand = b\n", "ward: t.conf:3: command: set twice"));
	CHECK(ok("\xEF\xBB\xBF[ward]\nlog_level = info\n"));

	CHECK(load(&cfg, "[ward]\nevidence = /run/ward/e.json\n[agent]\nuser = pi\nallow_root = no\n"
			 "[landlock]\nmode = best_effort\nread = /usr \"/a b\"\nread = /etc\nwrite = /w /dev/null\n"
			 "write =\nconnect = 443 8000-8099\nconnect = 7900, 7901\nbind = 0\nbind =\n"
			 "scope = abstract signal\n"
			 "[seccomp]\nmode = default\ndeny = chmod fchmod\ndeny = kill\nallow = ptrace, personality\n") == 0);
	CHECK_STR(cfg.evidence, "/run/ward/e.json");
	CHECK_STR(cfg.user, "pi");
	CHECK(cfg.user_line == 4 && !cfg.allow_root);
	CHECK(cfg.has_landlock && cfg.landlock.mode == LL_BEST_EFFORT);
	CHECK(cfg.landlock.n_read == 3 && cfg.landlock.n_write == 2);
	CHECK_STR(cfg.landlock.read[1], "/a b");
	CHECK_STR(cfg.landlock.write[1], "/dev/null");
	CHECK(cfg.landlock.n_connect == 4 && cfg.landlock.connect[1].lo == 8000 && cfg.landlock.connect[1].hi == 8099);
	CHECK(cfg.landlock.connect[3].lo == 7901 && cfg.landlock.n_bind == 1 && cfg.landlock.bind[0].hi == 0);
	CHECK(cfg.landlock.scopes == (LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL));
	CHECK(cfg.has_seccomp && cfg.seccomp.enabled);
	CHECK(cfg.seccomp.n_deny == 3 && cfg.seccomp.n_allow == 2);
	CHECK_STR(cfg.seccomp.deny[2], "kill");
	CHECK_STR(cfg.seccomp.allow[1], "personality");
	config_free(&cfg);

	/* a present section switches its layer on with its defaults */
	CHECK(load(&cfg, "[agent]\nuser = 1000\n[landlock]\n[seccomp]\n") == 0);
	CHECK(cfg.has_landlock && cfg.landlock.mode == LL_HARD && cfg.landlock.n_read == 0);
	CHECK(cfg.has_seccomp && cfg.seccomp.enabled && cfg.has_agent);
	config_free(&cfg);
}

/* [landlock] gvisor: accept unless refuse is said */
static void test_gvisor(void)
{
	struct ward_config cfg;

	int rc = load(&cfg, "[agent]\nuser = 1000\n[landlock]\nmode = hard_requirement\nread = /usr\n");

	CHECK(rc == 0 && cfg.gvisor == GVISOR_ACCEPT);
	if (rc)
		fprintf(stderr, "unexpected error: %s", errbuf);
	config_free(&cfg);
	CHECK(load(&cfg, "[agent]\nuser = 1000\n[landlock]\nmode = hard_requirement\nread = /usr\ngvisor = refuse\n") == 0 &&
	      cfg.gvisor == GVISOR_REFUSE);
	config_free(&cfg);
}

static void test_errors(void)
{
	CHECK(err("[ward]\nlog_format = yaml\n", "ward: t.conf:2: log_format: 'yaml': expected text or json"));
	CHECK(err("[landlock]\ngvisor = maybe\n", "ward: t.conf:2: gvisor: 'maybe': expected accept or refuse"));
	CHECK(err("[ward]\nlog_level = loud\n", "ward: t.conf:2: log_level: 'loud': expected error, warn"));
	CHECK(err("[ward]\nevidence = run/x\n", "ward: t.conf:2: evidence: 'run/x': must be an absolute path"));
	CHECK(err("[ward]\nfoo = 1\n", "ward: t.conf:2: foo: unknown key in [ward]"));
	CHECK(err("[supervise]\ngrace = soon\n", "ward: t.conf:2: grace: 'soon': expected a duration"));
	CHECK(err("[supervise]\ngrace = 10x\n", "ward: t.conf:2: grace: '10x': unknown unit"));
	CHECK(err("[supervise]\ngrace =\n", "ward: t.conf:2: grace: empty value"));
	CHECK(err("[supervise]\nrestart = sometimes\n", "ward: t.conf:2: restart: 'sometimes': expected never"));
	CHECK(err("[supervise]\nrestart_delay = 31s\n", "ward: t.conf:2: restart_delay: '31s': at most 30s"));
	CHECK(err("[supervise]\nrestart_limit = -1\n", "ward: t.conf:2: restart_limit: '-1': not a whole number"));
	CHECK(err("[supervise]\nrestart_limit = 10001\n", "ward: t.conf:2: restart_limit: '10001': number out of range"));
	CHECK(err("[supervise]\nsignal_rewrite = INT\n", "ward: t.conf:2: signal_rewrite: 'INT': expected FROM:TO"));
	CHECK(err("[supervise]\nsignal_rewrite = INT:TERM\nsignal_rewrite = INT:HUP\n",
		  "ward: t.conf:3: signal_rewrite: 'INT:HUP': this signal is already rewritten"));
	CHECK(err("[supervise]\nsignal_rewrite = FOO:TERM\n", "ward: t.conf:2: signal_rewrite: 'FOO:TERM': unknown signal name"));
	CHECK(err("[supervise]\nforward_to = everyone\n", "ward: t.conf:2: forward_to: 'everyone': expected child or group"));
	CHECK(err("[supervise]\ngrace = 1s\n\n\ngrace = 2s\n", "ward: t.conf:5: grace: set twice (first on line 2)"));
	CHECK(err("[agent]\ncommand = \"open\n", "ward: t.conf:2: command: '\"open': unterminated quote"));
	CHECK(err("[agent]\ncwd = relative\n", "ward: t.conf:2: cwd: 'relative': must be an absolute path"));
	CHECK(err("[agent]\nuser = pi/x\n", "ward: t.conf:2: user: 'pi/x': expected a user name"));
	CHECK(err("[agent]\nallow_root = maybe\n", "ward: t.conf:2: allow_root: 'maybe': expected yes or no"));
	CHECK(err("[agent]\nuser = a\nuser = b\n", "ward: t.conf:3: user: set twice"));
	CHECK(err("[agent]\numask = 999\n", "ward: t.conf:2: umask: '999': expected an octal mode"));
	CHECK(err("[agent]\nenv = NOEQUALS\n", "ward: t.conf:2: env: 'NOEQUALS': expected NAME=VALUE"));
	CHECK(err("[agent]\nenv = 1A=x\n", "ward: t.conf:2: env: '1A=x': expected NAME=VALUE"));
	CHECK(err("[agent]\nenv = A=1\nenv = A=2\n", "ward: t.conf:3: env: 'A=2': variable already set"));
	CHECK(err("[agent]\nenv_pass = A-B\n", "ward: t.conf:2: env_pass: 'A-B': expected variable names"));
	CHECK(err("[agent]\nrlimit_bogus = 1\n", "ward: t.conf:2: rlimit_bogus: '1': unknown resource"));
	CHECK(err("[agent]\nrlimit_nofile = 1\nrlimit_nofile = 2\n", "ward: t.conf:3: rlimit_nofile: '2': set twice"));
	CHECK(err("[agent]\nrlimit_nofile = lots\n", "ward: t.conf:2: rlimit_nofile: 'lots': expected a number"));
	CHECK(err("[agent]\nfoo = bar\n", "ward: t.conf:2: foo: unknown key in [agent]"));
	CHECK(err("log_level = debug\n", "ward: t.conf:1: log_level: key outside any section"));
	CHECK(err("[nope]\nx = 1\n", "ward: t.conf:1: [nope]: unknown section"));
	CHECK(err("[ward]\n[nope]\n", "ward: t.conf:2: [nope]: unknown section"));
	CHECK(err("[landlock]\n", "ward: t.conf:1: [agent] user: required when [landlock] or [seccomp]"));
	CHECK(err("[ward]\n[seccomp]\nmode = default\n", "ward: t.conf:2: [agent] user: required when"));
	CHECK(ok("[landlock]\nmode = off\n"));
	CHECK(ok("[seccomp]\nmode = off\n"));
	CHECK(ok("[landlock]\n[agent]\nallow_root = yes\n"));
	CHECK(err("[landlock]\nmode = strict\n", "ward: t.conf:2: mode: 'strict': expected hard_requirement"));
	CHECK(err("[landlock]\nread = usr\n", "ward: t.conf:2: read: 'usr': paths must be absolute"));
	CHECK(err("[landlock]\nwrite = '/tmp\n", "ward: t.conf:2: write: ''/tmp': unterminated quote"));
	CHECK(err("[landlock]\nconnect = 70000\n", "ward: t.conf:2: connect: '70000': expected ports"));
	CHECK(err("[landlock]\nbind = 90-80\n", "ward: t.conf:2: bind: '90-80': range runs backwards"));
	CHECK(err("[landlock]\nbind = 8x\n", "ward: t.conf:2: bind: '8x': expected ports"));
	CHECK(err("[landlock]\nscope = network\n", "ward: t.conf:2: scope: 'network': expected abstract"));
	CHECK(err("[seccomp]\nmode = strict\n", "ward: t.conf:2: mode: 'strict': expected default or off"));
	CHECK(err("[seccomp]\ndeny = notasyscall\n", "ward: t.conf:2: deny: 'notasyscall': unknown system call"));
	CHECK(err("[seccomp]\nallow = read\n", "ward: t.conf:2: allow: 'read': not in the default deny list"));
	CHECK(err("[seccomp]\nallow = udp\n", "ward: t.conf:2: allow: 'udp': not in the default deny list"));
	CHECK(ok("[agent]\nuser = 65534\n[seccomp]\ndeny = udp\nallow = newer-syscalls\n"));
	CHECK(err("[seccomp]\nallow = clone3\n", "ward: t.conf:2: allow: 'clone3': cannot be allowed: a filter cannot see its flags"));
	CHECK(err("[mcp]\n", "ward: t.conf:1: [mcp]: source is required"));
	/* no upstream: each server where its URL says; ${NAME} alone names a
	 * daemon's endpoint at run time, unset or none meaning the same */
	{
		struct ward_config c;
		unsetenv("WARD_TEST_UP");
		CHECK(load(&c, "[agent]\nuser = 65534\n[mcp]\nsource = fd:3\ntarget = /t/mcp.json\n"
			  "tls_ca = /t/ca.pem\nloopback = /run/ward/host\n") == 0 &&
		      !c.mcp_has_up && strcmp(c.mcp_tls_ca, "/t/ca.pem") == 0 && strcmp(c.mcp_loopback, "/run/ward/host") == 0);
		config_free(&c);
		CHECK(load(&c, "[agent]\nuser = 65534\n[mcp]\nsource = fd:3\ntarget = /t/mcp.json\nupstream = ${WARD_TEST_UP}\n") == 0 &&
		      !c.mcp_has_up);
		config_free(&c);
		setenv("WARD_TEST_UP", "unix:/run/ward/mcp.sock", 1);
		CHECK(load(&c, "[agent]\nuser = 65534\n[mcp]\nsource = fd:3\ntarget = /t/mcp.json\nupstream = ${WARD_TEST_UP}\n") == 0 &&
		      c.mcp_has_up && strcmp(c.mcp_up.desc, "unix:/run/ward/mcp.sock") == 0);
		config_free(&c);
		CHECK(load(&c, "[agent]\nuser = 65534\n[mcp]\nsource = fd:3\ntarget = /t/mcp.json\nupstream = none\n") == 0 &&
		      !c.mcp_has_up);
		config_free(&c);
		setenv("WARD_TEST_UP", "relative.sock", 1);
		CHECK(err("[mcp]\nupstream = ${WARD_TEST_UP}\n", "ward: t.conf:2: upstream: '${WARD_TEST_UP}': ${WARD_TEST_UP}: expected unix:"));
		unsetenv("WARD_TEST_UP");
	}
	CHECK(err("[mcp]\nloopback = run/ward\n", "ward: t.conf:2: loopback: 'run/ward': expected an absolute"));
	CHECK(err("[mcp]\ntls_ca = ca.pem\n", "ward: t.conf:2: tls_ca: 'ca.pem': expected an absolute"));
	CHECK(err("[mcp]\nsource = fd:1\n", "ward: t.conf:2: source: 'fd:1': expected fd:N with N >= 3"));
	CHECK(err("[mcp]\nsource = rel.json\n", "ward: t.conf:2: source: 'rel.json': expected fd:N or an absolute path"));
	CHECK(err("[mcp]\ntarget = /dir/\n", "ward: t.conf:2: target: '/dir/': expected an absolute, normalised file path"));
	CHECK(err("[mcp]\ntarget = /home/pi//m.json\n", "ward: t.conf:2: target: '/home/pi//m.json': expected an absolute, normalised"));
	/* one file or descriptor, two spellings: the overlap checks see them */
	CHECK(err("[mcp]\nsource = fd:3\ntarget = /t/mcp.json\nupstream = unix:/u\n[file f]\nsource = fd:03\ntarget = /t/f\n",
		  "ward: t.conf:5: [file f]: source is also [mcp] source"));
	CHECK(err("[mcp]\nlisten = 8000\n", "ward: t.conf:2: listen: '8000': expected 127.0.0.1:PORT"));
	CHECK(err("[mcp]\nupstream = tcp:h_1:1\n", "ward: t.conf:2: upstream: 'tcp:h_1:1': the host is neither a numeric IPv4"));
	CHECK(ok("[agent]\nuser = 1000\n[mcp]\nsource = /run/mcp.json\ntarget = /home/pi/.pi/agent/mcp.json\nupstream = vsock:2:5000\nlisten = 127.0.0.1:9000\n"));
	/* secrets for the bridge need an agent that is not root */
	CHECK(err("[mcp]\nsource = /run/mcp.json\ntarget = /home/pi/.pi/agent/mcp.json\nupstream = vsock:2:5000\n",
		  "ward: t.conf:1: [mcp]: needs [agent] user"));
	CHECK(err("[route m]\nlisten = 127.0.0.1:7900\nupstream = unix:/s\npath = /\nheader = X-K: k\n",
		  "ward: t.conf:1: [route m]: header needs [agent] user"));
	CHECK(ok("[route m]\nlisten = 127.0.0.1:7900\nupstream = unix:/s\npath = /\n"));
	{
		/* a header read at start is a source: checked now, as at start */
		static const char *const bad[] = { "@fd:abc", "@fd:2", "@fd:70000", "@", "@rel/k", "Bearer @rel/k",
						   "Bearer @fd:1", "Bearer @" };
		char text[128], want[256];
		size_t i;
		for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			snprintf(text, sizeof text, "[route m]\nheader = A: %s\n", bad[i]);
			snprintf(want, sizeof want, "ward: t.conf:2: header: 'A: %s': expected @fd:N (N >= 3) or "
				 "@/absolute/path as the value or after a prefix", bad[i]);
			CHECK(err(text, want));
		}
	}
	CHECK(err("[route model]\n", "ward: t.conf:1: [route model]: listen is required"));
	CHECK(err("[route m]\nlisten = 127.0.0.1:7900\npath = /v1/\n", "ward: t.conf:1: [route m]: upstream is required"));
	CHECK(err("[route m]\nlisten = 0.0.0.0:7900\n", "ward: t.conf:2: listen: '0.0.0.0:7900': expected 127.0.0.1:PORT"));
	/* by name: resolved by the bridge on use */
	CHECK(ok("[route m]\nlisten = 127.0.0.1:7900\nupstream = tls:api.example.com:443\npath = /v1/\n"));
	CHECK(err("[route m]\nupstream = tls:[::1]:443\n", "ward: t.conf:2: upstream: 'tls:[::1]:443': the host is neither a numeric IPv4 address nor a DNS name"));
	CHECK(err("[route m]\ntls_pin = sha256:abc\n", "ward: t.conf:2: tls_pin: 'sha256:abc': expected sha256: and 64 hex digits"));
	CHECK(err("[route m]\ntls_ca = ca.pem\n", "ward: t.conf:2: tls_ca: 'ca.pem': expected an absolute path"));
	CHECK(err("[route m]\nlisten = 127.0.0.1:7900\nupstream = tcp:127.0.0.1:1\npath = /\ntls_ca = /ca.pem\n",
		  "ward: t.conf:1: [route m]: tls_ca and tls_pin need a tls: upstream"));
	CHECK(ok("[route m]\nlisten = 127.0.0.1:7900\nupstream = tls:127.0.0.1:443\npath = /v1/\nhost = api.example.com\n"
		 "tls_pin = sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n"));
	CHECK(err("[route m]\nupstream = tcp:10.1:80\n", "ward: t.conf:2: upstream: 'tcp:10.1:80': the host is neither"));
	CHECK(err("[route m]\nupstream = unix:rel.sock\n", "ward: t.conf:2: upstream: 'unix:rel.sock': unix: needs an absolute"));
	CHECK(err("[route m]\nupstream = vsock:x:1\n", "ward: t.conf:2: upstream: 'vsock:x:1': expected vsock:CID:PORT"));
	/* numbers are digits only: strtoul alone took a blank or a sign */
	CHECK(err("[route m]\nupstream = tcp:127.0.0.1: 80\n", "ward: t.conf:2: upstream: 'tcp:127.0.0.1: 80': expected tcp:HOST:PORT"));
	CHECK(err("[route m]\nupstream = tcp:127.0.0.1:+80\n", "ward: t.conf:2: upstream: 'tcp:127.0.0.1:+80': expected tcp:HOST:PORT"));
	CHECK(err("[route m]\nupstream = vsock: 2:5000\n", "ward: t.conf:2: upstream: 'vsock: 2:5000': expected vsock:CID:PORT"));
	CHECK(err("[route m]\nupstream = vsock:+2:5000\n", "ward: t.conf:2: upstream: 'vsock:+2:5000': expected vsock:CID:PORT"));
	CHECK(err("[route m]\nupstream = vsock:4294967296:5000\n", "ward: t.conf:2: upstream: 'vsock:4294967296:5000': expected vsock:CID"));
	CHECK(err("[route m]\nupstream = tcp:127.0.0.1:65536\n", "ward: t.conf:2: upstream: 'tcp:127.0.0.1:65536': expected tcp:HOST:PORT"));
	CHECK(ok("[route m]\nlisten = 127.0.0.1:7900\nupstream = vsock:4294967295:65535\npath = /\n"));
	/* host: the TLS server name is taken from it, an IPv6 one in brackets */
	CHECK(ok("[route m]\nlisten = 127.0.0.1:7900\nupstream = tls:127.0.0.1:443\npath = /\nhost = [::1]:443\n"
		 "tls_pin = sha256:0000000000000000000000000000000000000000000000000000000000000000\n"));
	CHECK(ok("[route m]\nlisten = 127.0.0.1:7900\nupstream = tls:127.0.0.1:443\npath = /\nhost = api.example:443\n"));
	CHECK(ok("[route m]\nlisten = 127.0.0.1:7900\nupstream = tls:127.0.0.1:443\npath = /\nhost = [::1]:443\n"));
	CHECK(err("[route m]\nhost = [::1\n", "ward: t.conf:2: host: '[::1': expected HOST, HOST:PORT or [IPV6]:PORT"));
	CHECK(err("[route m]\nhost = ::1\n", "ward: t.conf:2: host: '::1': expected HOST"));
	CHECK(err("[route m]\nhost = h:1:2\n", "ward: t.conf:2: host: 'h:1:2': expected HOST"));
	CHECK(err("[route m]\nhost = h:0\n", "ward: t.conf:2: host: 'h:0': expected HOST"));
	CHECK(err("[route m]\nhost = u@h\n", "ward: t.conf:2: host: 'u@h': expected HOST"));
	CHECK(err("[route m]\nhost = h\x01\n", "ward: t.conf:2: host: 'h\x01': expected HOST"));
	/* an [mcp] server's route is mcp-SERVER: a [route] of that name would share its log lines */
	CHECK(err("[route mcp-x]\nlisten = 127.0.0.1:7900\nupstream = unix:/s\npath = /\n",
		  "ward: t.conf:1: [route mcp-x]: names beginning with mcp- are the [mcp] servers' routes"));
	CHECK(err("[route m]\nmethods = FETCH\n", "ward: t.conf:2: methods: 'FETCH': expected HTTP methods"));
	CHECK(err("[route m]\npath = mcp\n", "ward: t.conf:2: path: 'mcp': expected an origin-form target"));
	/* paths the bridge refuses in every request: such a route could serve nothing */
	CHECK(err("[route m]\npath = /api/../mcp\n", "ward: t.conf:2: path: '/api/../mcp': expected an origin-form target"));
	CHECK(err("[route m]\npath = /a%2fb\n", "ward: t.conf:2: path: '/a%2fb': expected an origin-form target"));
	CHECK(err("[route m]\nheader = NoColon\n", "ward: t.conf:2: header: 'NoColon': expected Name: value"));
	/* headers the bridge frames itself: a configured one would frame the body anew */
	CHECK(err("[route m]\nheader = Content-Length: 0\n",
		  "ward: t.conf:2: header: 'Content-Length: 0': the bridge writes this header itself"));
	CHECK(err("[route m]\nheader = transfer-encoding: chunked\n",
		  "ward: t.conf:2: header: 'transfer-encoding: chunked': the bridge writes this header itself"));
	CHECK(err("[route m]\nheader = Host: h\n", "ward: t.conf:2: header: 'Host: h': the bridge writes this header itself"));
	CHECK(err("[route m]\npath = /a\npath = /b\n", "ward: t.conf:3: path: '/b': set twice in this route"));
	CHECK(err("[route a.b]\nlisten = 127.0.0.1:1\nupstream = unix:/s\npath = /\n", "ward: t.conf:1: [route a.b]: route names are"));
	CHECK(err("[route a]\nlisten = 127.0.0.1:7900\nupstream = unix:/s\npath = /\n[route b]\nlisten = 127.0.0.1:7900\nupstream = unix:/s\npath = /\n",
		  "ward: t.conf:5: [route b]: listen: port 7900 is also route a's"));
	/* the upstream's port as the listen port: the agent could go around the bridge */
	CHECK(err("[route m]\nlisten = 127.0.0.1:7900\nupstream = tcp:10.0.0.5:7900\npath = /\n",
		  "ward: t.conf:1: [route m]: listen port 7900 is the upstream's port too"));
	CHECK(err("[route m]\nlisten = 127.0.0.1:443\nupstream = tls:10.0.0.5:443\npath = /\n",
		  "ward: t.conf:1: [route m]: listen port 443 is the upstream's port too"));
	/* a bind rule over a tcp: upstream's port: the agent could listen there */
	CHECK(err("[landlock]\nbind = 8000-8100\n[route m]\nlisten = 127.0.0.1:7900\nupstream = tcp:127.0.0.1:8080\npath = /\n",
		  "ward: t.conf:3: [route m]: the upstream's port 8080 is in [landlock] bind"));
	CHECK(err("[route m]\nlisten = 127.0.0.1:7900\nupstream = tls:10.0.0.5:443\npath = /\n[landlock]\nbind = 443\n",
		  "ward: t.conf:1: [route m]: the upstream's port 443 is in [landlock] bind"));
	CHECK(err("[agent]\nuser = 1000\n[landlock]\nbind = 9000\n[mcp]\nsource = /s\ntarget = /t\nupstream = tcp:127.0.0.1:9000\n",
		  "ward: t.conf:5: [mcp]: the upstream's port 9000 is in [landlock] bind"));
	CHECK(ok("[route m]\nlisten = 127.0.0.1:7901\nupstream = tcp:10.0.0.5:7900\npath = /\n"));
	CHECK(err("[ward]\nbridge_user = a/b\n", "ward: t.conf:2: bridge_user: 'a/b': expected a user name"));
	CHECK(err("[agent]\npolicy_note = note.md\n", "ward: t.conf:2: policy_note: 'note.md': expected an absolute, normalised file path"));
	CHECK(err("[agent]\npolicy_note = /a/../b.md\n", "ward: t.conf:2: policy_note: '/a/../b.md': expected an absolute"));
	CHECK(ok("[agent]\nuser = 1000\npolicy_note = /var/lib/pi/agent/APPEND_SYSTEM.md\n"));
	{
		/* provider presets (init/config/providers.c) */
		static const char base[] = "[ward]\nbridge_user = 4243\n[agent]\nuser = 1000\nenv = PATH=/bin\n"
					   "[route model]\nlisten = 127.0.0.1:7901\nprovider = ${WT_PROVIDER}\n"
					   "provider_url = ${WT_URL}\n";
		struct ward_config cfg;
		char text[512];
		unsetenv("WT_PROVIDER");
		unsetenv("WT_URL");
		/* unset: no provider, no route, nothing told the agent */
		CHECK(load(&cfg, base) == 0 && cfg.n_routes == 0 && cfg.n_env == 1);
		config_free(&cfg);
		setenv("WT_PROVIDER", "anthropic", 1);
		CHECK(load(&cfg, base) == 0 && cfg.n_routes == 1 && cfg.routes[0].up.kind == UP_TLS);
		CHECK_STR(cfg.routes[0].up.name, "api.anthropic.com");
		CHECK(cfg.routes[0].up.port == 443 && cfg.routes[0].n_headers == 1 && cfg.routes[0].headers[0].env);
		CHECK_STR(cfg.routes[0].path, "/v1/");
		CHECK_STR(hline(&cfg.routes[0].headers[0]), "x-api-key: ${ANTHROPIC_API_KEY}");
		CHECK(cfg.routes[0].methods == ((1u << HTTP_POST) | (1u << HTTP_GET)));
		CHECK(cfg.n_env == 3);
		CHECK_STR(cfg.env[1], "WARD_PROVIDER=anthropic");
		CHECK_STR(cfg.env[2], "WARD_PROVIDER_BASE_URL=http://127.0.0.1:7901");
		config_free(&cfg);
		setenv("WT_PROVIDER", "openai", 1);
		CHECK(load(&cfg, base) == 0 && cfg.n_routes == 1);
		CHECK_STR(hline(&cfg.routes[0].headers[0]), "Authorization: Bearer ${OPENAI_API_KEY}");
		CHECK_STR(cfg.env[2], "WARD_PROVIDER_BASE_URL=http://127.0.0.1:7901/v1");
		config_free(&cfg);
		/* the key's header set by the section takes the key from elsewhere */
		snprintf(text, sizeof text, "%sheader = Authorization: Bearer @/run/secrets/openai\n", base);
		CHECK(load(&cfg, text) == 0 && cfg.n_routes == 1 && cfg.routes[0].n_headers == 1);
		CHECK_STR(cfg.routes[0].headers[0].source, "/run/secrets/openai");
		config_free(&cfg);
		setenv("WT_PROVIDER", "openai-compatible", 1);
		setenv("WT_URL", "https://llm.corp.example:8443/api/v1/", 1);
		CHECK(load(&cfg, base) == 0 && cfg.n_routes == 1 && cfg.routes[0].up.port == 8443);
		CHECK_STR(cfg.routes[0].up.name, "llm.corp.example");
		CHECK_STR(cfg.routes[0].path, "/api/v1/");
		CHECK_STR(cfg.env[2], "WARD_PROVIDER_BASE_URL=http://127.0.0.1:7901/api/v1");
		config_free(&cfg);
		setenv("WT_URL", "http://10.0.0.5:8000", 1);
		CHECK(load(&cfg, base) == 0 && cfg.routes[0].up.kind == UP_TCP && cfg.routes[0].up.port == 8000);
		CHECK_STR(cfg.routes[0].path, "/");
		config_free(&cfg);
		setenv("WT_URL", "ftp://x", 1);
		CHECK(err(base, "ward: t.conf:6: [route model]: provider_url '${WT_URL}': expected https://"));
		setenv("WT_URL", "https://u@x/", 1);
		CHECK(err(base, "ward: t.conf:6: [route model]: provider_url '${WT_URL}': expected https://HOST[:PORT]/PATH: no user"));
		unsetenv("WT_URL");
		CHECK(err(base, "ward: t.conf:6: [route model]: provider = openai-compatible needs provider_url"));
		setenv("WT_PROVIDER", "anthropic", 1);
		setenv("WT_URL", "https://x/", 1);
		CHECK(err(base, "ward: t.conf:6: [route model]: provider_url '${WT_URL}' is for provider = openai-compatible"));
		unsetenv("WT_URL");
		setenv("WT_PROVIDER", "bogus", 1);
		CHECK(err(base, "ward: t.conf:6: [route model]: provider '${WT_PROVIDER} = bogus': expected one of anthropic, openai"));
		setenv("WT_PROVIDER", "anthropic", 1);
		snprintf(text, sizeof text, "%supstream = tcp:127.0.0.1:1\n", base);
		CHECK(err(text, "ward: t.conf:6: [route model]: upstream is the provider's"));
		snprintf(text, sizeof text, "%s[route two]\nlisten = 127.0.0.1:7902\nprovider = openai\n", base);
		CHECK(err(text, "ward: t.conf:10: [route two]: a second provider route"));
		/* the key may not be handed to the agent too */
		snprintf(text, sizeof text, "%s[agent]\nenv_pass = ANTHROPIC_API_KEY\n", base);
		CHECK(err(text, "ward: t.conf:6: [route model]: header x-api-key takes ${ANTHROPIC_API_KEY}, which [agent] env_pass"));
		/* a key given as the provider by mistake is never printed */
		setenv("WT_PROVIDER", "sk-ant-api03-SECRET", 1);
		CHECK(err(base, "ward: t.conf:6: [route model]: provider '${WT_PROVIDER}': expected one of"));
		CHECK(!strstr(errbuf, "SECRET"));
		/* a provider's public name is whole: no search domain, no private answer */
		setenv("WT_PROVIDER", "google", 1);
		CHECK(load(&cfg, base) == 0 && cfg.n_routes == 1 && cfg.routes[0].up.fqdn && cfg.routes[0].up.public_only);
		CHECK_STR(cfg.routes[0].up.name, "generativelanguage.googleapis.com");
		CHECK_STR(cfg.routes[0].up.default_host, "generativelanguage.googleapis.com");
		config_free(&cfg);
		/* openai-compatible: WARD_PROVIDER_KEY, and only when it is set */
		setenv("WT_PROVIDER", "openai-compatible", 1);
		setenv("WT_URL", "https://llm.example/v1", 1);
		unsetenv("WARD_PROVIDER_KEY");
		CHECK(load(&cfg, base) == 0 && cfg.n_routes == 1 && cfg.routes[0].n_headers == 0 && !cfg.routes[0].up.public_only);
		config_free(&cfg);
		setenv("WARD_PROVIDER_KEY", "k", 1);
		CHECK(load(&cfg, base) == 0 && cfg.routes[0].n_headers == 1);
		CHECK_STR(hline(&cfg.routes[0].headers[0]), "Authorization: Bearer ${WARD_PROVIDER_KEY}");
		config_free(&cfg);
		unsetenv("WARD_PROVIDER_KEY");
		setenv("WT_URL", "https://llm.example/v1$(x)", 1);
		CHECK(err(base, "ward: t.conf:6: [route model]: provider_url '${WT_URL}': the path may hold"));
		unsetenv("WT_URL");
		CHECK(err("[route m]\nlisten = 127.0.0.1:7901\nprovider_url = https://x/\n",
			  "ward: t.conf:1: [route m]: provider_url needs provider = openai-compatible"));
		unsetenv("WT_PROVIDER");
	}
	{
		struct ward_config cfg;
		CHECK(load(&cfg, "[ward]\nbridge_user = 4243\n[agent]\nuser = 1000\n[route model]\nlisten = 127.0.0.1:7900\nupstream = tcp:127.0.0.1:8080\n"
				 "methods = POST\npath = /v1/\nheader = Authorization: @/run/secrets/k\nheader = X-A: b\nheader = X-F: @fd:007\n"
				 "header = X-B: Bearer @/run/secrets/b\nheader = X-C: a@b c\n"
				 "[route mcp]\nlisten = 127.0.0.1:7901\nupstream = vsock:2:5000\npath = /mcp?a=1\nhost = h:1\n") == 0);
		CHECK(cfg.n_routes == 2 && cfg.routes[0].port == 7900 && cfg.routes[0].up.kind == UP_TCP);
		CHECK(cfg.routes[0].methods == (1u << HTTP_POST) && cfg.routes[0].n_headers == 5);
		/* a prefix before the secret is kept as the value, the secret's source beside it */
		CHECK_STR(cfg.routes[0].headers[3].value, "Bearer ");
		CHECK_STR(cfg.routes[0].headers[3].source, "/run/secrets/b");
		CHECK_STR(hline(&cfg.routes[0].headers[3]), "X-B: Bearer @/run/secrets/b");
		/* an @ inside a word is no source: a value as written */
		CHECK(!cfg.routes[0].headers[4].source);
		CHECK_STR(cfg.routes[0].headers[4].value, "a@b c");
		CHECK_STR(hline(&cfg.routes[0].headers[0]), "Authorization: @/run/secrets/k");
		CHECK_STR(hline(&cfg.routes[0].headers[2]), "X-F: @fd:7"); /* as ward compares it */
		CHECK_STR(cfg.routes[0].up.default_host, "127.0.0.1:8080");
		CHECK(cfg.routes[1].up.kind == UP_VSOCK && cfg.routes[1].methods == ((1u << HTTP_POST) | (1u << HTTP_GET) | (1u << HTTP_DELETE)));
		CHECK_STR(cfg.routes[1].host, "h:1");
		CHECK_STR(cfg.bridge_user, "4243");
		config_free(&cfg);
	}
	{
		/* ${VAR}: checked now, taken from ward's environment at start */
		struct ward_config cfg;
		CHECK(load(&cfg, "[agent]\nuser = 1000\nenv_pass = HOME\n[route m]\nlisten = 127.0.0.1:7900\n"
				 "upstream = tcp:127.0.0.1:8080\npath = /\nheader = Authorization: Bearer ${WARD_KEY}\n"
				 "header = X-A: $5 ${A}${B}\nheader = X-L: plain\n") == 0);
		CHECK(cfg.routes[0].n_headers == 3 && cfg.routes[0].headers[0].env && cfg.routes[0].headers[1].env &&
		      !cfg.routes[0].headers[2].env && !cfg.routes[0].headers[0].source);
		CHECK_STR(cfg.routes[0].headers[0].value, "Bearer ${WARD_KEY}"); /* as written: the config is unchanged */
		config_free(&cfg);
	}
	CHECK(err("[route m]\nheader = A: ${KEY\n", "ward: t.conf:2: header: 'A: ${KEY': bad ${VAR}"));
	CHECK(err("[route m]\nheader = A: x${}\n", "ward: t.conf:2: header: 'A: x${}': bad ${VAR}"));
	CHECK(err("[route m]\nheader = A: ${K} @/run/k\n", "ward: t.conf:2: header: 'A: ${K} @/run/k': a header takes its secret from one place"));
	CHECK(err("[agent]\nuser = 1000\nenv_pass = HOME WARD_KEY\n[route m]\nlisten = 127.0.0.1:7900\nupstream = tcp:127.0.0.1:8080\n"
		  "path = /\nheader = Authorization: Bearer ${WARD_KEY}\n",
		  "ward: t.conf:4: [route m]: header Authorization takes ${WARD_KEY}, which [agent] env_pass gives the agent too"));
	CHECK(err("[agent]\nuser = 1000\n[file ext]\n", "ward: t.conf:3: [file ext]: source is required"));
	CHECK(err("[agent]\nuser = 1000\n[file ext]\nsource = fd:4\n", "ward: t.conf:3: [file ext]: target is required"));
	CHECK(err("[file ext]\nsource = fd:4\ntarget = /a/ext.mjs\n", "ward: t.conf:1: [file ext]: needs [agent] user"));
	CHECK(err("[file ext]\nsource = fd:2\n", "ward: t.conf:2: source: 'fd:2': expected fd:N with N >= 3"));
	CHECK(err("[file ext]\nsource = rel/path\n", "ward: t.conf:2: source: 'rel/path': expected fd:N or an absolute path"));
	CHECK(err("[file ext]\ntarget = /a/../b\n", "ward: t.conf:2: target: '/a/../b': expected an absolute, normalised"));
	CHECK(err("[file ext]\ntarget = /a/..\n", "ward: t.conf:2: target: '/a/..': expected an absolute, normalised"));
	CHECK(err("[file ext]\ntarget = /a/.\n", "ward: t.conf:2: target: '/a/.': expected an absolute, normalised"));
	CHECK(err("[file ext]\ntarget = /a/\n", "ward: t.conf:2: target: '/a/': expected an absolute, normalised"));
	CHECK(err("[file ext]\nmode = 4755\n", "ward: t.conf:2: mode: '4755': expected an octal mode"));
	CHECK(err("[file ext]\nmode = 0666\n", "ward: t.conf:2: mode: '0666': group or other write access"));
	CHECK(err("[file ext]\nmode = rw\n", "ward: t.conf:2: mode: 'rw': expected an octal mode"));
	CHECK(err("[file ext]\nsource = fd:4\nsource = fd:5\n", "ward: t.conf:3: source: 'fd:5': set twice in this file"));
	CHECK(err("[file ext]\nsource =\n", "ward: t.conf:2: source: empty value"));
	CHECK(err("[file a:b]\nsource = fd:4\ntarget = /x\n", "ward: t.conf:1: [file a:b]: file names are"));
	CHECK(err("[agent]\nuser = 1000\n[file a]\nsource = fd:4\ntarget = /x\n[file b]\nsource = fd:5\ntarget = /x\n",
		  "ward: t.conf:6: [file b]: same target as [file a]"));
	CHECK(err("[agent]\nuser = 1000\n[file a]\nsource = fd:4\ntarget = /x\n[file b]\nsource = fd:4\ntarget = /y\n",
		  "ward: t.conf:6: [file b]: same source as [file a]"));
	CHECK(err("[agent]\nuser = 1000\n[mcp]\nsource = fd:3\ntarget = /x\nupstream = unix:/s\n[file a]\nsource = fd:4\ntarget = /x\n",
		  "ward: t.conf:7: [file a]: target is also [mcp] target"));
	{
		struct ward_config cfg;
		CHECK(load(&cfg, "[agent]\nuser = 1000\n[file ext]\nsource = fd:4\ntarget = /home/pi/ext.mjs\nmode = 0400\n"
				 "[file notes]\nsource = /run/host/notes.md\ntarget = /home/pi/notes.md\n") == 0);
		CHECK(cfg.n_files == 2 && cfg.files[0].mode == 0400 && cfg.files[1].mode == 0600);
		CHECK_STR(cfg.files[0].source, "fd:4");
		CHECK_STR(cfg.files[1].target, "/home/pi/notes.md");
		CHECK_STR(cfg.files[1].name, "notes");
		config_free(&cfg);
	}
	CHECK(err("[route]\n", "ward: t.conf:1: [route]: unknown section"));
	CHECK(err("[ward]\njust words\n", "ward: t.conf:2: syntax: expected 'key = value'"));
	CHECK(err("[ward\n", "ward: t.conf:1: syntax: expected"));
	{
		char text[600];
		memset(text, 'x', sizeof text);
		memcpy(text, "[ward]\nlog_level = ", 19);
		text[sizeof text - 1] = '\0';
		CHECK(err(text, "ward: t.conf:2: line longer than 198 characters"));
	}
	{
		/* 199 characters and a newline: inih would join the next line */
		char text[300];
		memcpy(text, "[agent]\n", 8);
		memset(text + 8, ' ', 199);
		memcpy(text + 8, "cwd = /", 7);
		memcpy(text + 207, "\nuser = pi\n", 12);
		CHECK(err(text, "ward: t.conf:2: line longer than 198 characters"));
		text[8 + 198] = '\n'; /* 198 and a newline: fine */
		memcpy(text + 207, "user = pi\n", 11);
		CHECK(ok(text));
	}
	/* an indented section header is one to inih, unless a key came
	 * before it in its section: it must not pass unnoticed either way */
	CHECK(err("[ward]\n  [seccomp]\n", "ward: t.conf:2: a section header starts its line"));
	CHECK(err("\t[landlock]\n", "ward: t.conf:1: a section header starts its line"));
	CHECK(err("[ward]\nlog_level = info\n\n[agent]\n  [seccomp]\n", "ward: t.conf:5: a section header starts its line"));
	{
		/* after a key, inih continues its value: a shell test in a command */
		struct ward_config cfg;
		CHECK(load(&cfg, "[agent]\ncommand = sh -c 'true;\n  [ -e /x ]'\n") == 0 && cfg.command &&
		      cfg.command[2] && strcmp(cfg.command[2], "true; [ -e /x ]") == 0);
		config_free(&cfg);
	}
	/* an indented first key is a key, not a continuation */
	CHECK(err("[agent]\n  command = a\ncommand = b\n", "ward: t.conf:3: command: set twice (first on line 2)"));
	{
		struct ward_config cfg;
		CHECK(load(&cfg, "[agent]\ncommand = a\n  b\n") == 0 && cfg.command && cfg.command[1] &&
		      strcmp(cfg.command[1], "b") == 0);
		config_free(&cfg);
	}
	/* inih cuts names at 49 characters */
	CHECK(err("[route aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\nlisten = 127.0.0.1:7\n",
		  "ward: t.conf:1: section name longer than 49 characters"));
	CHECK(err("[ward]\nlog_levelllllllllllllllllllllllllllllllllllllllllllllll = info\n",
		  "ward: t.conf:2: key longer than 49 characters"));
	{
		static const char nul[] = "[ward]\nlog_level\0 = info\n";
		struct ward_config cfg;
		FILE *in = fmemopen((void *)nul, sizeof nul - 1, "r");
		FILE *cap = tmpfile();
		int saved = dup(2), rc;
		size_t n;

		config_defaults(&cfg);
		dup2(fileno(cap), 2);
		rc = config_load_stream(&cfg, in, "t.conf");
		dup2(saved, 2);
		close(saved);
		rewind(cap);
		n = fread(errbuf, 1, sizeof errbuf - 1, cap);
		errbuf[n] = '\0';
		fclose(cap);
		fclose(in);
		config_free(&cfg);
		CHECK(rc == -1 && strstr(errbuf, "t.conf:2: NUL byte"));
	}
}

static void test_print(void)
{
	struct ward_config cfg;
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);

	CHECK(load(&cfg, "[supervise]\ngrace = 1500ms\nsignal_rewrite = INT:TERM\n[agent]\ncommand = a b\nenv = X=1\n") == 0);
	config_print(&cfg, out);
	fclose(out);
	CHECK(strstr(buf, "grace = 1500ms\n") != NULL);
	CHECK(strstr(buf, "signal_rewrite = INT:TERM\n") != NULL);
	CHECK(strstr(buf, "command = a b\n") != NULL);
	CHECK(strstr(buf, "env = X=1\n") != NULL);
	CHECK(strstr(buf, "[landlock] absent") != NULL);
	free(buf);
	config_free(&cfg);
}

static void test_procs(void)
{
	CHECK(stat_ppid("123 (sh) S 45 123 123 0") == 45);
	CHECK(stat_ppid("123 (a) b) c) S 7 1") == 7);
	CHECK(stat_ppid("123 (x) S") == -1);
	CHECK(stat_ppid("garbage") == -1);
	CHECK(stat_ppid("1 (x) S -4 0") == -1);
}

/* The fallback for kernels without close_range (before 5.9, or its
 * CLOEXEC flag before 5.11) or filters that refuse it. */
static void test_fd_range(void)
{
	int fds[6], i, open_after = 0, cloexec = 0;

	/* six descriptors in a row, placed where nothing inherited sits (make
	 * -j hands its children the jobserver's pipes low in the table) */
	for (i = 0; i < 6; i++) {
		int fd = open("/dev/null", O_RDONLY);
		fds[i] = dup2(fd, 700 + i);
		close(fd);
	}
	CHECK(fds[0] == 700 && fds[5] == 705);
	/* the middle four marked close-on-exec, then closed; the ends kept */
	CHECK(fd_range_by_proc((unsigned)fds[1], (unsigned)fds[4], CLOSE_RANGE_CLOEXEC) == 0);
	for (i = 0; i < 6; i++)
		cloexec += (fcntl(fds[i], F_GETFD) & FD_CLOEXEC) != 0;
	CHECK(cloexec == 4 && !(fcntl(fds[0], F_GETFD) & FD_CLOEXEC) && !(fcntl(fds[5], F_GETFD) & FD_CLOEXEC));
	CHECK(fd_range_by_proc((unsigned)fds[1], (unsigned)fds[4], 0) == 0);
	for (i = 0; i < 6; i++)
		open_after += fcntl(fds[i], F_GETFD) >= 0;
	CHECK(open_after == 2 && fcntl(fds[0], F_GETFD) >= 0 && fcntl(fds[5], F_GETFD) >= 0);
	/* to the end of the table, as close_fds_except asks */
	CHECK(fd_range_by_proc((unsigned)fds[0], ~0U, 0) == 0);
	CHECK(fcntl(fds[0], F_GETFD) < 0 && fcntl(fds[5], F_GETFD) < 0 && fcntl(2, F_GETFD) >= 0);
}

/* ${NAME} in a path list: its value read once, when the file is; unset or
 * empty, no path; not absolute, an error naming the variable only */
static void test_path_from_env(void)
{
	struct ward_config cfg;
	const char *text = "[agent]\nuser = 4242\n[landlock]\nwrite = . ${WT_GITDIR} /tmp\nread = ${WT_UNSET}\n";

	unsetenv("WT_UNSET");
	setenv("WT_GITDIR", "/srv/repo/.git", 1);
	CHECK(load(&cfg, text) == 0);
	CHECK(cfg.landlock.n_write == 3 && strcmp(cfg.landlock.write[1], "/srv/repo/.git") == 0 &&
	      strcmp(cfg.landlock.write[2], "/tmp") == 0 && cfg.landlock.n_read == 0);
	config_free(&cfg);
	setenv("WT_GITDIR", "", 1);
	CHECK(load(&cfg, text) == 0);
	CHECK(cfg.landlock.n_write == 2 && strcmp(cfg.landlock.write[1], "/tmp") == 0);
	config_free(&cfg);
	setenv("WT_GITDIR", "repo/.git", 1);
	CHECK(err(text, "ward: t.conf:4: write: '. ${WT_GITDIR} /tmp': ${WT_GITDIR} holds a path that is not absolute"));
	/* a list, ':'-separated as PATH (ward-pi's --ro and --rw), blanks kept */
	setenv("WT_GITDIR", "/a b:/c::/d/", 1);
	CHECK(load(&cfg, text) == 0);
	CHECK(cfg.landlock.n_write == 5 && strcmp(cfg.landlock.write[1], "/a b") == 0 &&
	      strcmp(cfg.landlock.write[2], "/c") == 0 && strcmp(cfg.landlock.write[3], "/d/") == 0 &&
	      strcmp(cfg.landlock.write[4], "/tmp") == 0);
	config_free(&cfg);
	setenv("WT_GITDIR", "/a:b", 1);
	CHECK(err(text, "ward: t.conf:4: write: '. ${WT_GITDIR} /tmp': ${WT_GITDIR} holds a path that is not absolute"));
	unsetenv("WT_GITDIR");
}

/* ${NAME} in env_pass: the names in that variable (ward-pi's --env), read
 * once; unset, none; a bad name is an error naming the variable; a route's
 * secret among them is refused as any */
static void test_pass_from_env(void)
{
	struct ward_config cfg;
	const char *text = "[agent]\nuser = 4242\nenv_pass = TERM ${WT_NAMES} LANG\n";
	char both[512];

	unsetenv("WT_NAMES");
	CHECK(load(&cfg, text) == 0 && cfg.n_env_pass == 2);
	config_free(&cfg);
	setenv("WT_NAMES", " FOO  BAR_2 TERM ", 1);
	CHECK(load(&cfg, text) == 0 && cfg.n_env_pass == 4);
	CHECK_STR(cfg.env_pass[1], "FOO");
	CHECK_STR(cfg.env_pass[2], "BAR_2");
	CHECK_STR(cfg.env_pass[3], "LANG");
	config_free(&cfg);
	/* their values are the agent's and leave ward's environment (c-ares in
	 * the bridge would read LOCALDOMAIN, RES_OPTIONS) */
	setenv("WT_NAMES", "LOCALDOMAIN", 1);
	setenv("LOCALDOMAIN", "evil.example", 1);
	CHECK(load(&cfg, text) == 0);
	CHECK(getenv("LOCALDOMAIN") == NULL);
	CHECK(cfg.n_env == 1 && strcmp(cfg.env[0], "LOCALDOMAIN=evil.example") == 0);
	config_free(&cfg);
	setenv("WT_NAMES", "FOO=1", 1);
	CHECK(err(text, "ward: t.conf:3: env_pass: 'TERM ${WT_NAMES} LANG': ${WT_NAMES}: expected variable names"));
	CHECK(!strstr(errbuf, "FOO=1"));
	setenv("WT_NAMES", "ANTHROPIC_API_KEY", 1);
	setenv("ANTHROPIC_API_KEY", "sk-test", 1);
	snprintf(both, sizeof both, "%s[route model]\nlisten = 127.0.0.1:7901\nprovider = anthropic\n", text);
	CHECK(err(both, "ward: t.conf:4: [route model]: header x-api-key takes ${ANTHROPIC_API_KEY}, which [agent] env_pass"));
	unsetenv("ANTHROPIC_API_KEY");
	unsetenv("WT_NAMES");
}

int main(void)
{
	test_gvisor();
	test_defaults();
	test_path_from_env();
	test_pass_from_env();
	test_every_key();
	test_errors();
	test_print();
	test_procs();
	test_fd_range();
	return unit_done("test_config");
}
