/* materialise: the host's mcp.json -> bridge routes (holding the secrets)
 * and the agent's copy (URLs pointed at the bridge, secrets removed). */
#ifndef WARD_MATERIALISE_H
#define WARD_MATERIALISE_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

struct mcp_route {
	char *name; /* "mcp-<server>" */
	unsigned port;
	char *host; /* the URL's authority: the Host the server checks */
	char *path; /* the URL's exact path?query */
	char **headers; /* "Name: value", ${VAR} resolved from ward's environment */
	int n_headers;
};

struct mcp_result {
	char err[512];
	struct mcp_route *routes;
	int n_routes;
	char *text; /* the agent's copy */
};

/* Reads fd:N (then closes it) or a path, at most 1 MiB. */
int mcp_read_source(const char *source, char **buf, size_t *len, char *err, size_t errsize);

/* Rewrites the JSON (Pi's built-in format and pi-mcp-adapter's: both
 * {"mcpServers":{...}}): each url server gets port first_port + i. stdio
 * servers and keys ward does not know stay as they are. 0, or -1 with
 * r->err. The fuzzable core. */
int mcp_rewrite(const char *text, size_t len, unsigned first_port, struct mcp_result *r);

void mcp_result_free(struct mcp_result *r);

/* Writes the agent's copy to target atomically (temp file + rename), mode
 * 0600, owned by uid:gid, creating missing directories (0700, same owner)
 * and following no symlink on the way. 0 or -1 with err. */
int mcp_write_target(const char *target, const char *text, uid_t uid, gid_t gid, char *err, size_t errsize);

/* The same for a [file NAME]: the bytes as read, with the given mode. */
/* Removes a target written above (a start that failed after it), by the
 * same walk that follows no symlink. 0, or -1. */
int private_file_remove(const char *target);

int private_file_write(const char *target, const char *data, size_t len, unsigned mode, uid_t uid, gid_t gid,
		       char *err, size_t errsize);

#endif
