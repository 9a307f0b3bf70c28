/* listthin: the lists of a JSON-RPC text (read by jsonscan.c) less the
 * entries a route's rules refuse, written as the bytes that came without
 * them. A tool stays when tools_allowed says so and, when it is pinned,
 * its hash (tools_hash, of its own bytes read by jansson) is its pin's; a
 * resource, template or prompt when the rules for its kind allow it (a
 * kind without rules is not judged); an entry without the name its kind
 * goes by never stays in a judged list.
 *
 * Pure but for what it counts and the pins' state it keeps (fuzzed
 * through toolslist.c: fuzz_toolslist, fuzz_jsonscan). */
#ifndef WARD_LISTTHIN_H
#define WARD_LISTTHIN_H

#include <stddef.h>

#include "mcp-bridge/jsonscan.h"
#include "mcp-bridge/tools.h"

/* One answer's judge: its rules, and where what it finds is counted. */
struct listthin {
	const struct tool_rules *r;
	unsigned char *pin_seen; /* r's pins as seen (enum pin_seen), updated; or NULL */
	int *removed;		 /* entries left out, added to */
	int *changed;		 /* of them, pinned tools whose hash differs, added to */
	char *changed_name;	 /* the first of those (changed_size bytes) */
	size_t changed_size;
};

/* text (read into s) with the entries that do not stay left out: the
 * bytes of each list that lost one are its '[', the kept entries as they
 * came joined by ',', its ']'; every other byte is as it came. Written to
 * o (room for len bytes; *olen: how many): 0, or -1 (out of memory). */
int listthin(struct listthin *lt, const char *text, size_t len, const struct jsonscan *s, char *o,
	     size_t *olen);

#endif
