/* The time to judge one large tools/list answer (mcp-bridge/toolslist.c),
 * as the bridge does once the whole answer came: parsed with http-parser,
 * read by jansson, the refused tools taken out, written again. A JSON
 * answer and the same tools as one SSE event, each about SIZE bytes (a
 * tool each 512 bytes, half of them refused), RUNS times each; one line of JSON with
 * the milliseconds of each run.
 *
 *   tools-list [SIZE] [RUNS] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp-bridge/toolslist.h"

static double ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The answer: its head and a body of about size bytes. */
static char *answer(size_t size, int sse, size_t *len)
{
	int i, tools = (int)(size / 512);
	size_t cap = size + (size_t)tools * 256 + 65536, n = 0, body_at, each = 512;
	char *b = malloc(cap), *body;

	body = malloc(cap);
	if (!b || !body)
		exit(1);
	n += (size_t)sprintf(body + n, "%s{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[", sse ? "event: message\ndata: " : "");
	for (i = 0; i < tools; i++) {
		char desc[4096];
		size_t d = each - 160; /* the rest of the entry's bytes */
		memset(desc, 'd', d < sizeof desc ? d : sizeof desc - 1);
		desc[d < sizeof desc ? d : sizeof desc - 1] = '\0';
		n += (size_t)sprintf(body + n, "%s{\"name\":\"%s_%d\",\"description\":\"%s\",\"inputSchema\":{\"type\":\"object\","
				     "\"properties\":{\"x\":{\"type\":\"string\"}}}}", i ? "," : "", i % 2 ? "other" : "allowed",
				     i, desc);
	}
	n += (size_t)sprintf(body + n, "]}}%s", sse ? "\n\n" : "");
	body_at = (size_t)sprintf(b, "HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %zu\r\n\r\n",
				  sse ? "text/event-stream" : "application/json", n);
	memcpy(b + body_at, body, n);
	free(body);
	*len = body_at + n;
	return b;
}

int main(int argc, char **argv)
{
	static char *allow[] = { "allowed_*" };
	static const struct tool_rules r = { allow, 1, 1, NULL, 0, NULL, 0, 0, NULL, 0, 0, NULL, 0, NULL, 0, 0, NULL, 0 };
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 10) : 1 << 20, len;
	int runs = argc > 2 ? atoi(argv[2]) : 50, sse, i;

	printf("{");
	for (sse = 0; sse < 2; sse++) {
		char *a = answer(size, sse, &len);
		printf("%s\"%s\":{\"bytes\":%zu,\"ms\":[", sse ? "," : "", sse ? "sse" : "json", len);
		for (i = 0; i < runs; i++) {
			static char *const id[] = { "2" };
			struct toolslist_out o;
			double t0 = ms_now();
			struct toolslist *t = toolslist_new(id, 1, 0);
			if (!t || toolslist_feed(t, &r, "bench", a, len, 0, NULL, &o) != TL_DONE ||
			    o.removed != (int)(size / 512) / 2)
				return 1;
			printf("%s%.3f", i ? "," : "", ms_now() - t0);
			free(o.resp);
			toolslist_free(t);
		}
		printf("]}");
		free(a);
	}
	printf("}\n");
	return 0;
}
