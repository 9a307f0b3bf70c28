/* jsonscan: one JSON-RPC text (a message or a batch) read once, strictly,
 * with yajl's event parser: where each message's id is, and where the
 * entries of the lists a route's rules thin (result.tools, resources,
 * resourceTemplates, prompts) begin and end, with the name each entry
 * goes by. toolslist.c judges the entries and writes the text again by
 * leaving the refused ones out of the bytes that came: nothing else is
 * parsed into a tree or written again, so a 1 MiB tools/list costs one
 * pass of yajl and one of the strict text check.
 *
 * Strict as jansson with JSON_REJECT_DUPLICATES is, where a client could
 * read the text otherwise than the judge: one value and nothing after it,
 * no comments, no member twice in an object (any object, at any depth),
 * UTF-8 that is valid (no overlong forms, no surrogates, nothing past
 * U+10FFFF), no \u escape of half a surrogate pair, and no \u0000 (a
 * client in C would cut a member's name there: "name\u0000" is not
 * "name" to the judge).
 *
 * Pure: bytes in, offsets out (fuzzed: fuzz_jsonscan, against jansson). */
#ifndef WARD_JSONSCAN_H
#define WARD_JSONSCAN_H

#include <stddef.h>

enum js_kind { JS_TOOLS, JS_RESOURCES, JS_TEMPLATES, JS_PROMPTS };

/* One entry of a list: its bytes [start, end) in the text; the string its
 * kind goes by (tools and prompts: name; resources: uri; templates:
 * uriTemplate) decoded, NUL-terminated, at names + name (has_name 0: the
 * entry is no object, or has no such string member). */
struct js_entry {
	size_t start, end;
	size_t name, name_len;
	int has_name;
};

/* A list of a response's result: its '[' and ']' offsets, its entries
 * (first, n: in jsonscan's entries). */
struct js_list {
	enum js_kind kind;
	size_t open, close;
	size_t first, n;
};

/* A message (the text, or an object of the batch it is): whether it is a
 * response (has an id and a result or an error) and its id's bytes. */
struct js_msg {
	int response;
	size_t id_start, id_end;
};

struct jsonscan {
	struct js_msg *msgs;
	size_t n_msgs, msgs_cap;
	struct js_list *lists;
	size_t n_lists, lists_cap;
	struct js_entry *entries;
	size_t n_entries, entries_cap;
	char *names; /* the entries' names, each NUL-terminated */
	size_t names_len, names_cap;
};

enum js_result { JS_OK = 0, JS_INVALID = -1, JS_NOMEM = -2 };

/* text read into s (zeroed first; jsonscan_free after, whatever it gave). */
enum js_result jsonscan_read(struct jsonscan *s, const char *text, size_t len);
void jsonscan_free(struct jsonscan *s);

/* Whether text is valid UTF-8 in which no \u escape is half of a
 * surrogate pair or a NUL: 1 or 0. Its strings are found by their quotes, so text
 * must be JSON yajl read. */
int jsonscan_strict_text(const char *text, size_t len);

#endif
