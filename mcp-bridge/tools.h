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
#define TOOLS_MAX_PINS 256
#define TOOLS_ARGS_SHOWN ((size_t)512) /* audit_args: a call's arguments, at most this much of them in its line */
#define TOOLS_NAME_MAX 128 /* MCP's tool names: 1-128 of A-Z a-z 0-9 _ - . (a rule may end in '*') */

/* pin = TOOL=sha256:HEX: the hash of the tool as it was reviewed (its name,
 * description and input schema: tools_hash). */
struct tool_pin {
	char *name;
	unsigned char hash[32];
};

struct tool_rules {
	char **allow; /* tools = ...: NULL with none set (every tool not denied) */
	int n_allow, has_allow;
	char **deny; /* deny_tools = ... */
	int n_deny;
	struct tool_pin *pins; /* pin = ..., pin_file = ... */
	int n_pins;
	int audit_args; /* audit_args = yes: a call's arguments in its audit line */
	/* resources = URI-PREFIX ..., deny_resources = ...: the resources it
	 * may read or subscribe to (resources/read, resources/subscribe,
	 * resources/unsubscribe), each rule a prefix of their URIs */
	char **res_allow;
	int n_res_allow, has_res_allow;
	char **res_deny;
	int n_res_deny;
	/* prompts = NAME ..., deny_prompts = ...: the prompts it may get
	 * (prompts/get), rules as for tools */
	char **pr_allow;
	int n_pr_allow, has_pr_allow;
	char **pr_deny;
	int n_pr_deny;
};

#define TOOLS_URI_MAX 1024 /* a resources rule: a URI prefix, at most this long */

/* What the bridge saw of each pin this session (an array of n_pins, the
 * bridge's own; the rules stay the config's): a pinned tool may be called
 * only once the server listed it with the pinned hash. */
enum pin_seen { PIN_UNSEEN, PIN_OK, PIN_CHANGED };

/* "echo add files_*" (spaces or commas between) added to *list: 0, or -1
 * with why. */
int tools_parse(const char *v, char ***list, int *n, const char **why);

/* "echo_prompt review*" (prompts): the same as tools_parse, said of prompts. */
int tools_parse_prompts(const char *v, char ***list, int *n, const char **why);

/* "file:///work/ test://static-" (blanks between: a URI may hold a comma)
 * added to *list: 0, or -1 with why. */
int tools_parse_uris(const char *v, char ***list, int *n, const char **why);

/* "NAME=sha256:HEX" added to r's pins: 0, or -1 with why. */
int tools_pin_parse(const char *v, struct tool_rules *r, const char **why);

/* pin_file = PATH: its lines (NAME=sha256:HEX, or ward --mcp-pins's
 * "pin = NAME=sha256:HEX"; blank lines and # comments skipped), read now,
 * added to r's pins: 0, or -1 with why. */
int tools_pin_file(const char *path, struct tool_rules *r, const char **why);

/* The pin of name, or -1. */
int tools_pin_index(const struct tool_rules *r, const char *name);

/* A tool's hash as pinned: SHA-256 of the JSON object of its name,
 * description and inputSchema (those it has), keys sorted at every level,
 * no blanks, strings UTF-8 with only JSON's own escapes (jansson's
 * JSON_COMPACT | JSON_SORT_KEYS). 0, or -1. tool is a json_t *. */
int tools_hash(const void *tool, unsigned char out[32]);

/* Whether r holds any rule (a route with none is not judged): 1 or 0. */
int tools_any(const struct tool_rules *r);

/* Whether the rules let name be called: 1 or 0. */
int tools_allowed(const struct tool_rules *r, const char *name);

/* Whether the rules let the resource at uri be read (it plain, too): 1 or 0. */
int tools_resource_allowed(const struct tool_rules *r, const char *uri);

/* Whether a resource template (its uriTemplate) may stay listed: 1 when
 * some URI it expands to may be read (its text before the first '{' is
 * what every one of them begins with), 0 when none may. */
int tools_template_allowed(const struct tool_rules *r, const char *tmpl);

/* Whether the rules let the prompt name be got: 1 or 0. */
int tools_prompt_allowed(const struct tool_rules *r, const char *name);

/* One rule set as text for --check and messages ("tools = a b*; deny_tools = c"). */
void tools_describe(const struct tool_rules *r, char *buf, size_t size);

enum tools_verdict {
	TOOLS_PASS,   /* nothing refused: send it on */
	TOOLS_REFUSE, /* answered here: status and body (JSON) in the result */
};

#define TOOLS_WANT_MAX 64 /* request ids an answer's end is told by, at most */

struct tools_result {
	enum tools_verdict verdict;
	int status;	     /* HTTP status of the answer: 200 (JSON-RPC errors), 202, 400 */
	char *body;	     /* the answer's JSON (malloc'd), or NULL */
	char tool[TOOLS_NAME_MAX + 1]; /* the (first) tool called, printable, for the audit line; "" if none */
	const char *kind;    /* what tool names: "tool", "resource" (its URI) or "prompt" */
	char id[40];	     /* its request id (a string's text, a number's digits), printable; "" if none */
	int refused_noted;   /* tool names a refused call */
	int lists;	     /* it asks for tools/list: its answer is filtered (toolslist.h) */
	int want_args;	     /* the rules' audit_args (set by tools_judge) */
	char *args;	     /* audit_args: the call's arguments as the audit line shows them (malloc'd), or NULL */
	char **want;	     /* the ids of its requests, compact JSON (malloc'd): their responses end an SSE answer */
	size_t n_want;	     /* (none when the body held more than TOOLS_WANT_MAX: the close ends it) */
	char why[640];	     /* what was refused, for the audit line */
};

/* Judges body (the whole request body, decoded) against r for the route
 * named route; pin_seen: what the bridge saw of r's pins (NULL: nothing
 * yet, so no pinned tool may be called). 0, or -1 (out of memory: refuse with 503). free the body
 * with tools_result_free. */
int tools_judge(const struct tool_rules *r, const char *route, const char *body, size_t len,
		const unsigned char *pin_seen, struct tools_result *out);

/* Frees out's request ids alone (want, n_want). */
void tools_ids_free(struct tools_result *out);
void tools_result_free(struct tools_result *out);

void tools_rules_free(struct tool_rules *r);

#endif
