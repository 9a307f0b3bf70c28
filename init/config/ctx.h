/* config/ctx: what the INI reader (config.c) and the keys (keys.c) share
 * while one file is read. Private to init/config/. */
#ifndef WARD_CONFIG_CTX_H
#define WARD_CONFIG_CTX_H

#include <stddef.h>
#include <stdio.h>

#include "init/config/config.h"

/* Sections ward knows. The ones whose layer this build cannot put in force
 * yet are refused rather than silently ignored: a config that asks for
 * confinement must never run unconfined. */
enum section {
	SEC_NONE = -1,
	SEC_WARD,
	SEC_SUPERVISE,
	SEC_AGENT,
	SEC_LANDLOCK,
	SEC_SECCOMP,
	SEC_MCP,
	SEC_ROUTE,
	SEC_FILE,
	SEC_PROXY,
	SEC_UNKNOWN,
};

#define CONFIG_KEY_LINES 80

struct parse_ctx;
typedef int (*setter)(struct parse_ctx *ctx, const char *key, const char *value, const char **why);

struct key_def {
	enum section section;
	const char *key; /* a trailing '_' matches a prefix: "rlimit_" */
	setter set;
	int repeatable;
	int continues; /* an indented line adds to it (command): not "set twice" */
};

struct parse_ctx {
	struct ward_config *cfg;
	FILE *f;
	const char *name;
	int line;
	int err_line; /* 0: no error yet */
	char err[600];
	char why[160]; /* a setter's message that names something (*why points here) */
	int key_line[CONFIG_KEY_LINES]; /* first line each single-valued key was set on */
	const char *section; /* the current one, for [route NAME] */
	enum section sec;    /* its kind */
	int continued;	     /* this line is indented: it continues the value above */
	int key_seen;	     /* a key came since the last section header (inih's prev_name) */
	char *command_text;  /* [agent] command as written, continuation lines joined */
	int command_line;
	int section_line[SEC_UNKNOWN];
};

/* "${NAME}" alone: its value in ward's environment ("" when unset), NAME
 * in from; any other value: itself, from "". keys.c */
const char *config_env_ref(const char *v, char *from, size_t from_size);

/* *list's WARD_MAX_ENV slots, allocated if they are not yet: 0, or -1 out of memory. */
int config_env_slots(char ***list);

/* The agent's environment: NAME=VALUE added, unless [agent] env set
 * NAME (what the config says wins). 0, or -1 (no room, no memory). keys.c */
int config_agent_env(struct ward_config *cfg, const char *name, const char *value);

/* Records the first error ("NAME:LINE: ..."); later ones are dropped. */
void config_fail(struct parse_ctx *ctx, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Finds or creates the route / file NAME (created with the line of its
 * header). NULL when out of memory. */
struct config_route *route_named(struct ward_config *cfg, const char *name, size_t len, int line);
struct config_file *file_named(struct ward_config *cfg, const char *name, size_t len, int line);

/* Every key of every section, with its setter (keys.c). */
extern const struct key_def config_keys[];
extern const size_t config_n_keys;

#endif
