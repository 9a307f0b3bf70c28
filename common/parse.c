#define _GNU_SOURCE
#include "common/parse.h"

#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_DURATION_MS (24ULL * 3600 * 1000)

int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why)
{
	uint64_t v = 0;

	if (!*s) {
		*why = "empty value";
		return -1;
	}
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s)) {
			*why = "not a whole number";
			return -1;
		}
		uint64_t d = (uint64_t)(*s - '0');
		if (v > UINT64_MAX / 10 || (v == UINT64_MAX / 10 && d > UINT64_MAX % 10)) {
			*why = "number too large";
			return -1;
		}
		v = v * 10 + d;
	}
	if (v < min || v > max) {
		*why = "number out of range";
		return -1;
	}
	*out = v;
	return 0;
}

int parse_duration(const char *s, uint64_t *ms, const char **why)
{
	static const struct {
		const char *unit;
		uint64_t ms;
	} units[] = { { "ms", 1 }, { "s", 1000 }, { "", 1000 }, { "m", 60000 }, { "h", 3600000 } };
	uint64_t whole = 0, frac = 0, frac_div = 1;
	const char *p = s;
	size_t i;

	if (!isdigit((unsigned char)*p)) {
		*why = "expected a duration like 250ms, 10s, 2m";
		return -1;
	}
	for (; isdigit((unsigned char)*p); p++) {
		if (whole > MAX_DURATION_MS)
			goto too_long;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p)) {
			*why = "expected digits after '.'";
			return -1;
		}
		for (; isdigit((unsigned char)*p); p++) {
			if (frac_div < 1000000) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				frac_div *= 10;
			}
		}
	}
	for (i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(p, units[i].unit) == 0) {
			uint64_t v;
			if (whole > MAX_DURATION_MS)
				goto too_long;
			v = whole * units[i].ms + frac * units[i].ms / frac_div;
			if (v > MAX_DURATION_MS)
				goto too_long;
			*ms = v;
			return 0;
		}
	}
	*why = "unknown unit (use ms, s, m or h)";
	return -1;
too_long:
	*why = "duration longer than 24h";
	return -1;
}

static int signal_by_abbrev(const char *name)
{
	int sig;

	for (sig = 1; sig < SIGRTMIN; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && strcasecmp(abbrev, name) == 0)
			return sig;
	}
	return 0;
}

int parse_signal(const char *s, int allow_uncatchable, int *sig, const char **why)
{
	const char *name = s;
	uint64_t n;
	int v = 0;

	if (isdigit((unsigned char)*s)) {
		if (parse_uint(s, 1, 64, &n, why) != 0) {
			*why = "signal number must be 1..64";
			return -1;
		}
		v = (int)n;
	} else {
		if (strncasecmp(name, "SIG", 3) == 0)
			name += 3;
		if (strncasecmp(name, "RTMIN", 5) == 0 || strncasecmp(name, "RTMAX", 5) == 0) {
			int max = toupper((unsigned char)name[3]) == 'A';
			const char *off = name + 5;
			n = 0;
			if (*off) {
				if (*off != (max ? '-' : '+') ||
				    parse_uint(off + 1, 0, (uint64_t)(SIGRTMAX - SIGRTMIN), &n, why) != 0) {
					*why = max ? "expected RTMAX or RTMAX-N" : "expected RTMIN or RTMIN+N";
					return -1;
				}
			}
			v = max ? SIGRTMAX - (int)n : SIGRTMIN + (int)n;
		} else {
			v = signal_by_abbrev(name);
		}
		if (v == 0) {
			*why = "unknown signal name";
			return -1;
		}
	}
	if (!allow_uncatchable && (v == SIGKILL || v == SIGSTOP)) {
		*why = "KILL and STOP cannot be caught or rewritten";
		return -1;
	}
	*sig = v;
	return 0;
}

const char *signal_name(int sig, char *buf, size_t size)
{
	const char *abbrev = sig > 0 && sig < SIGRTMIN ? sigabbrev_np(sig) : NULL;

	if (abbrev)
		snprintf(buf, size, "%s", abbrev);
	else if (sig >= SIGRTMIN && sig <= SIGRTMAX)
		snprintf(buf, size, "RTMIN+%d", sig - SIGRTMIN);
	else
		snprintf(buf, size, "%d", sig);
	return buf;
}

int parse_rewrite(const char *s, int *from, int *to, const char **why)
{
	char left[32];
	const char *colon = strchr(s, ':');
	size_t len;

	if (!colon) {
		*why = "expected FROM:TO, e.g. INT:TERM";
		return -1;
	}
	len = (size_t)(colon - s);
	if (len == 0 || len >= sizeof left) {
		*why = "expected FROM:TO, e.g. INT:TERM";
		return -1;
	}
	memcpy(left, s, len);
	left[len] = '\0';
	if (parse_signal(left, 0, from, why) != 0)
		return -1;
	if (*from == SIGCHLD) {
		*why = "CHLD is ward's own (it reaps), never forwarded: there is nothing to rewrite";
		return -1;
	}
	if (strcmp(colon + 1, "0") == 0) {
		*to = 0;
		return 0;
	}
	return parse_signal(colon + 1, 0, to, why);
}

int parse_umask(const char *s, unsigned *mask, const char **why)
{
	unsigned v = 0;

	if (!*s || strlen(s) > 4) {
		*why = "expected an octal mode like 0077";
		return -1;
	}
	for (; *s; s++) {
		if (*s < '0' || *s > '7') {
			*why = "expected an octal mode like 0077";
			return -1;
		}
		v = v * 8 + (unsigned)(*s - '0');
	}
	if (v > 0777) {
		*why = "umask must be at most 0777";
		return -1;
	}
	*mask = v;
	return 0;
}

int parse_bool(const char *s, int *out, const char **why)
{
	static const char *const yes[] = { "yes", "on", "true", "1" };
	static const char *const no[] = { "no", "off", "false", "0" };
	size_t i;

	for (i = 0; i < 4; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	*why = "expected yes or no";
	return -1;
}

static const struct {
	const char *name;
	int resource;
} rlimits[] = {
	{ "as", RLIMIT_AS },		 { "core", RLIMIT_CORE },	  { "cpu", RLIMIT_CPU },
	{ "data", RLIMIT_DATA },	 { "fsize", RLIMIT_FSIZE },	  { "locks", RLIMIT_LOCKS },
	{ "memlock", RLIMIT_MEMLOCK },	 { "msgqueue", RLIMIT_MSGQUEUE }, { "nice", RLIMIT_NICE },
	{ "nofile", RLIMIT_NOFILE },	 { "nproc", RLIMIT_NPROC },	  { "rss", RLIMIT_RSS },
	{ "rtprio", RLIMIT_RTPRIO },	 { "rttime", RLIMIT_RTTIME },	  { "sigpending", RLIMIT_SIGPENDING },
	{ "stack", RLIMIT_STACK },
};

int rlimit_resource(const char *name, int *resource)
{
	size_t i;

	for (i = 0; i < sizeof rlimits / sizeof rlimits[0]; i++) {
		if (strcmp(rlimits[i].name, name) == 0) {
			*resource = rlimits[i].resource;
			return 0;
		}
	}
	return -1;
}

const char *rlimit_name(int resource)
{
	size_t i;

	for (i = 0; i < sizeof rlimits / sizeof rlimits[0]; i++)
		if (rlimits[i].resource == resource)
			return rlimits[i].name;
	return "?";
}

static int parse_rlim_value(const char *s, size_t len, rlim_t *out, const char **why)
{
	static const char suffixes[] = "KMGT";
	char buf[32];
	uint64_t v, mult = 1;
	const char *sfx;

	if (len == 0 || len >= sizeof buf) {
		*why = "expected a number, a size like 64M, or unlimited";
		return -1;
	}
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (strcmp(buf, "unlimited") == 0 || strcmp(buf, "infinity") == 0) {
		*out = RLIM_INFINITY;
		return 0;
	}
	sfx = strchr(suffixes, toupper((unsigned char)buf[len - 1]));
	if (sfx) {
		mult = 1ULL << (10 * (1 + (sfx - suffixes)));
		buf[len - 1] = '\0';
	}
	if (parse_uint(buf, 0, UINT64_MAX / mult, &v, why) != 0) {
		*why = "expected a number, a size like 64M, or unlimited";
		return -1;
	}
	*out = (rlim_t)(v * mult);
	if (*out == RLIM_INFINITY) {
		*why = "number too large";
		return -1;
	}
	return 0;
}

int parse_rlimit(const char *s, rlim_t *soft, rlim_t *hard, const char **why)
{
	const char *colon = strchr(s, ':');

	if (parse_rlim_value(s, colon ? (size_t)(colon - s) : strlen(s), soft, why) != 0)
		return -1;
	if (!colon) {
		*hard = *soft;
		return 0;
	}
	if (parse_rlim_value(colon + 1, strlen(colon + 1), hard, why) != 0)
		return -1;
	if (*hard != RLIM_INFINITY && (*soft == RLIM_INFINITY || *soft > *hard)) {
		*why = "soft limit exceeds hard limit";
		return -1;
	}
	return 0;
}

/* Splits in two passes over the same state machine: the first counts words
 * and bytes, the second fills one allocation holding vector and strings. */
static int split_pass(const char *s, char **argv, char *out, int *words, size_t *bytes,
		      const char **why)
{
	enum { BLANK, WORD, SINGLE, DOUBLE } st = BLANK;
	size_t nb = 0;
	int nw = 0;

	for (;; s++) {
		char c = *s;
		int emit = 0;

		if (c == '\0') {
			if (st == SINGLE || st == DOUBLE) {
				*why = "unterminated quote";
				return -1;
			}
			break;
		}
		switch (st) {
		case BLANK:
		case WORD:
			if (c == ' ' || c == '\t') {
				if (st == WORD) {
					if (out)
						out[nb] = '\0';
					nb++;
					nw++;
				}
				st = BLANK;
				continue;
			}
			if (st == BLANK && argv)
				argv[nw] = out + nb;
			st = WORD;
			if (c == '\'') {
				st = SINGLE;
			} else if (c == '"') {
				st = DOUBLE;
			} else if (c == '\\') {
				if (s[1] == '\0') {
					*why = "trailing backslash";
					return -1;
				}
				c = *++s;
				emit = 1;
			} else {
				emit = 1;
			}
			break;
		case SINGLE:
			if (c == '\'')
				st = WORD;
			else
				emit = 1;
			break;
		case DOUBLE:
			if (c == '"') {
				st = WORD;
			} else if (c == '\\' && s[1] && strchr("\"\\$`", s[1])) {
				c = *++s;
				emit = 1;
			} else {
				emit = 1;
			}
			break;
		}
		if (emit) {
			if (out)
				out[nb] = c;
			nb++;
		}
	}
	if (st == WORD) {
		if (out)
			out[nb] = '\0';
		nb++;
		nw++;
	}
	*words = nw;
	*bytes = nb;
	return 0;
}

int split_words(const char *s, char ***argvp, int *argc, const char **why)
{
	char **argv;
	size_t bytes;
	int words;

	if (split_pass(s, NULL, NULL, &words, &bytes, why) != 0)
		return -1;
	if (words == 0) {
		*why = "empty command";
		return -1;
	}
	argv = malloc(sizeof(char *) * (size_t)(words + 1) + bytes);
	if (!argv) {
		*why = "out of memory";
		return -1;
	}
	split_pass(s, argv, (char *)(argv + words + 1), &words, &bytes, why);
	argv[words] = NULL;
	*argvp = argv;
	*argc = words;
	return 0;
}

const char *fmt_duration(uint64_t ms, char *buf, size_t size)
{
	if (ms % 1000 == 0)
		snprintf(buf, size, "%llus", (unsigned long long)(ms / 1000));
	else
		snprintf(buf, size, "%llums", (unsigned long long)ms);
	return buf;
}

int parse_digits(const char *s, size_t len, size_t max_digits, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0 || len > max_digits)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}
