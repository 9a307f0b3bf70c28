#define _GNU_SOURCE
#include "mcp-bridge/listthin.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A pinned tool as listed (its bytes): its hash against the pin (and the
 * pin's state set by it): whether it stays. Only a pinned tool is read
 * into a tree, to be hashed as tools_hash says. */
static int pin_holds(struct listthin *f, const char *tool, size_t len, const char *name)
{
	unsigned char h[32];
	int k = tools_pin_index(f->r, name), same;
	json_t *t;

	if (k < 0)
		return 1;
	t = json_loadb(tool, len, JSON_REJECT_DUPLICATES, NULL);
	same = t && tools_hash(t, h) == 0 && memcmp(h, f->r->pins[k].hash, 32) == 0;
	json_decref(t);
	if (f->pin_seen)
		f->pin_seen[k] = same ? PIN_OK : PIN_CHANGED;
	if (!same && !(*f->changed)++)
		snprintf(f->changed_name, f->changed_size, "%s", name);
	return same;
}

/* Whether the rules judge lists of this kind: tools always (a tool with
 * no name of its own cannot be allowed by one); the others when rules
 * name any of them. */
static int judged(const struct tool_rules *r, enum js_kind kind)
{
	switch (kind) {
	case JS_TOOLS:
		return 1;
	case JS_RESOURCES:
	case JS_TEMPLATES:
		return r->has_res_allow || r->n_res_deny;
	case JS_PROMPTS:
		return r->has_pr_allow || r->n_pr_deny;
	}
	return 1;
}

/* Whether an entry of a judged list stays: it has the name its kind goes
 * by, the rules allow it, and a pinned tool's hash is its pin's. */
static int stays(struct listthin *f, const char *text, const struct jsonscan *s, enum js_kind kind,
		 const struct js_entry *e)
{
	const char *name;

	if (!e->has_name)
		return 0;
	name = s->names + e->name;
	switch (kind) {
	case JS_TOOLS:
		return tools_allowed(f->r, name) && pin_holds(f, text + e->start, e->end - e->start, name);
	case JS_RESOURCES:
		return tools_resource_allowed(f->r, name);
	case JS_TEMPLATES:
		return tools_template_allowed(f->r, name);
	case JS_PROMPTS:
		return tools_prompt_allowed(f->r, name);
	}
	return 0;
}

int listthin(struct listthin *f, const char *text, size_t len, const struct jsonscan *s, char *o, size_t *olen)
{
	unsigned char *keep = malloc(s->n_entries + 1);
	size_t n = 0, from = 0, i, j, kept;

	if (!keep)
		return -1;
	for (i = 0; i < s->n_lists; i++) {
		const struct js_list *l = &s->lists[i];
		if (!judged(f->r, l->kind))
			continue;
		/* each judged once: a pin's state is set as it is seen */
		for (j = kept = 0; j < l->n; j++)
			kept += keep[j] = (unsigned char)stays(f, text, s, l->kind, &s->entries[l->first + j]);
		if (kept == l->n)
			continue; /* nothing went: the list goes as it came */
		*f->removed += (int)(l->n - kept);
		memcpy(o + n, text + from, l->open + 1 - from); /* up to its '[' */
		n += l->open + 1 - from;
		for (j = kept = 0; j < l->n; j++) {
			const struct js_entry *e = &s->entries[l->first + j];
			if (!keep[j])
				continue;
			if (kept++)
				o[n++] = ',';
			memcpy(o + n, text + e->start, e->end - e->start);
			n += e->end - e->start;
		}
		from = l->close; /* its ']' and on */
	}
	memcpy(o + n, text + from, len - from);
	n += len - from;
	*olen = n;
	free(keep);
	return 0;
}
