/* tools: which MCP tools the agent may call on a route ([route NAME]
 * tools = NAME ..., deny_tools = NAME ...), and the judge of one request
 * body against them.
 *
 * A rule is a tool's exact name or a prefix ending in '*'. A name any
 * deny_tools rule matches is refused; with tools set, a name none of its
 * rules matches is refused too. The judge reads the whole body as a
 * strict parser would (jansson: valid UTF-8, no duplicate key, integers
 * that fit), so what it passes is what any upstream's parser sees:
 *
 *  - a body it cannot read so is refused whole (-32700): a lenient
 *    parser might find a call in it that this one did not;
 *  - each tools/call (a request, or a notification) is judged by its
 *    params.name, which must be a string (-32602 otherwise);
 *  - a batch with any call refused is refused whole: each request of it
 *    gets an error, the refused ones naming their tool;
 *  - anything else passes (initialize, tools/list, other methods).
 *
 * Pure: buffers in, a verdict and an answer out (fuzzed: fuzz_tools). */
#ifndef WARD_TOOLS_H
#define WARD_TOOLS_H

#include <stddef.h>

#define TOOLS_MAX_RULES 128
#define TOOLS_NAME_MAX 128 /* MCP's tool names: 1-128 of A-Z a-z 0-9 _ - . (a rule may end in '*') */

struct tool_rules {
	char **allow; /* tools = ...: NULL with none set (every tool not denied) */
	int n_allow, has_allow;
	char **deny; /* deny_tools = ... */
	int n_deny;
};

/* "echo add files_*" (spaces or commas between) added to *list: 0, or -1
 * with why. */
int tools_parse(const char *v, char ***list, int *n, const char **why);

/* Whether the rules let name be called: 1 or 0. */
int tools_allowed(const struct tool_rules *r, const char *name);

/* One rule set as text for --check and messages ("tools = a b*; deny_tools = c"). */
void tools_describe(const struct tool_rules *r, char *buf, size_t size);

enum tools_verdict {
	TOOLS_PASS,   /* nothing refused: send it on */
	TOOLS_REFUSE, /* answered here: status and body (JSON) in the result */
};

struct tools_result {
	enum tools_verdict verdict;
	int status;	     /* HTTP status of the answer: 200 (JSON-RPC errors), 202, 400 */
	char *body;	     /* the answer's JSON (malloc'd), or NULL */
	char tool[TOOLS_NAME_MAX + 1]; /* the (first) tool called, printable, for the audit line; "" if none */
	char id[40];	     /* its request id (a string's text, a number's digits), printable; "" if none */
	int refused_noted;   /* tool names a refused call */
	int lists;	     /* it asks for tools/list: its answer is filtered (toolslist.h) */
	char why[640];	     /* what was refused, for the audit line */
};

/* Judges body (the whole request body, decoded) against r for the route
 * named route. 0, or -1 (out of memory: refuse with 503). free the body
 * with tools_result_free. */
int tools_judge(const struct tool_rules *r, const char *route, const char *body, size_t len,
		struct tools_result *out);

void tools_result_free(struct tools_result *out);

void tools_rules_free(struct tool_rules *r);

#endif
