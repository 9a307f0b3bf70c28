#define _GNU_SOURCE
#include "init/report/denylog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

/* One refusal kind, by what a person would allow. */
struct denial {
	char kind[16];	/* proxy, asked, egress, landlock */
	char what[300]; /* HOST:PORT, ADDR:PORT, the blockers on a path */
	char fix[400];	/* the setting that would allow it */
	unsigned count;
};

#define DENY_MAX 512
#define LINE_MAX_READ 8192

/* c itself when it is printable ASCII from lo on, else '?'. */
static char printable(char c, int lo)
{
	if ((unsigned char)c >= lo && (unsigned char)c < 0x7f)
		return c;
	return '?';
}

/* The value of `key=` in a log line, up to the next blank, into out
 * (printable ASCII only: the agent chose much of what a line holds). */
static int field(const char *line, const char *key, char *out, size_t size)
{
	const char *p = line;
	size_t k = strlen(key), n = 0;

	while ((p = strstr(p, key))) {
		if ((p == line || p[-1] == ' ') && p[k] == '=')
			break;
		p += k;
	}
	if (!p)
		return -1;
	for (p += k + 1; *p && *p != ' ' && n + 1 < size; p++)
		out[n++] = printable(*p, 0x21);
	out[n] = '\0';
	return n ? 0 : -1;
}

/* The text after marker, to the line's end or stop, printable only. */
static void after(const char *line, const char *marker, const char *stop, char *out, size_t size)
{
	const char *p = strstr(line, marker), *e;
	size_t n = 0;

	out[0] = '\0';
	if (!p)
		return;
	p += strlen(marker);
	e = stop ? strstr(p, stop) : NULL;
	for (; *p && *p != '\n' && p != e && n + 1 < size; p++)
		out[n++] = printable(*p, 0x20);
	out[n] = '\0';
}

static void add(struct denial *v, int *n, const char *kind, const char *what, const char *fix)
{
	int i;

	for (i = 0; i < *n; i++)
		if (strcmp(v[i].kind, kind) == 0 && strcmp(v[i].what, what) == 0) {
			v[i].count++;
			return;
		}
	if (*n == DENY_MAX)
		return;
	snprintf(v[*n].kind, sizeof v[0].kind, "%s", kind);
	snprintf(v[*n].what, sizeof v[0].what, "%s", what);
	snprintf(v[*n].fix, sizeof v[0].fix, "%s", fix);
	v[*n].count = 1;
	(*n)++;
}

/* What allows a proxy host: its name (443 left out), or an address rule. */
static void proxy_fix(const char *hostport, char *fix, size_t size)
{
	char host[300];
	const char *colon = strrchr(hostport, ':');
	size_t n = colon ? (size_t)(colon - hostport) : strlen(hostport);
	int literal;

	snprintf(host, sizeof host, "%.*s", (int)(n < sizeof host ? n : sizeof host - 1), hostport);
	literal = host[0] == '[' || strspn(host, "0123456789.") == strlen(host);
	if (colon && strcmp(colon + 1, "443") == 0)
		snprintf(fix, size, "allow = %s in [proxy]%s%s", host, literal ? "" : " (ward-pi --allow ",
			 literal ? "" : host);
	else
		snprintf(fix, size, "allow = %s in [proxy]%s%s", hostport, literal ? "" : " (ward-pi --allow ",
			 literal ? "" : hostport);
	if (!literal)
		strncat(fix, ")", size - strlen(fix) - 1);
}

/* One line of the log: a refusal added, or nothing. */
static void judge(struct denial *v, int *n, const char *line)
{
	char what[300], status[16], answer[32], fix[400], blockers[256];

	if (strstr(line, "bridge: route=proxy ") && field(line, "ask", what, sizeof what) == 0 &&
	    field(line, "answer", answer, sizeof answer) == 0) {
		if (strcmp(answer, "once") != 0 && strcmp(answer, "session") != 0 && strcmp(answer, "always") != 0) {
			proxy_fix(what, fix, sizeof fix);
			add(v, n, "asked", what, fix);
		}
		return;
	}
	if (strstr(line, "bridge: route=proxy ") && field(line, "status", status, sizeof status) == 0 &&
	    strcmp(status, "403") == 0 &&
	    (field(line, "tunnel", what, sizeof what) == 0 || field(line, "http", what, sizeof what) == 0)) {
		/* a refusal an answer already counts is the question's */
		if (strstr(line, "when asked") || strstr(line, "from the person") || strstr(line, "approver"))
			return;
		proxy_fix(what, fix, sizeof fix);
		add(v, n, "proxy", what, fix);
		return;
	}
	if (strstr(line, "egress: refused") && field(line, "dst", what, sizeof what) == 0) {
		add(v, n, "egress", what,
		    "a web host: its name in [proxy] allow (ward-pi --allow NAME), reached through HTTPS_PROXY; a fixed "
		    "address and port: a [route] with protocol = stream");
		return;
	}
	if (strstr(line, "denied by landlock: ")) {
		after(line, "denied by landlock: ", "; a rule", blockers, sizeof blockers);
		after(line, "; a rule that would allow it: ", NULL, fix, sizeof fix);
		add(v, n, "landlock", blockers, fix[0] ? fix : "see ward --explain PATH");
	}
}

int denylog_main(const char *path)
{
	static struct denial v[DENY_MAX];
	static const char *const kinds[] = { "proxy", "asked", "egress", "landlock" };
	static const char *const titles[] = { "the proxy refused (no allow rule names it)",
					      "asked, and not allowed (denied, unanswered, no approver)",
					      "the egress guard refused a connect", "Landlock denied" };
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned long lines = 0;
	int n = 0, k, i, shown = 0;

	if (!f) {
		log_error("--denials %s: %s", path, strerror(errno));
		return 2;
	}
	while ((len = getline(&line, &cap, f)) >= 0) {
		lines++;
		if (len > LINE_MAX_READ)
			continue; /* no line of ward's is this long */
		judge(v, &n, line);
	}
	free(line);
	if (f != stdin)
		fclose(f);
	printf("ward: what was refused, from %lu line(s) of %s\n", lines, strcmp(path, "-") == 0 ? "stdin" : path);
	for (k = 0; k < 4; k++) {
		int any = 0;
		for (i = 0; i < n; i++) {
			if (strcmp(v[i].kind, kinds[k]) != 0)
				continue;
			if (!any)
				printf("\n%s:\n", titles[k]);
			any = shown = 1;
			printf("  %-40s x%-4u %s\n", v[i].what, v[i].count, v[i].fix);
		}
	}
	if (!shown)
		printf("\nnothing was refused\n");
	else
		printf("\nNothing is changed: each line is a setting a person may choose to add.\n");
	return fflush(stdout) == 0 ? 0 : 1;
}
