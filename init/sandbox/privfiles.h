/* privfiles: the private files the host hands in, [file NAME] and [mcp].
 * Every source is read and checked (and the mcp.json servers made routes)
 * before any target is written, so a bad source, or a
 * config error found after reading them, leaves nothing behind. */
#ifndef WARD_PRIVFILES_H
#define WARD_PRIVFILES_H

#include <stddef.h>
#include <sys/types.h>

#include "mcp-bridge/mcpjson.h"
#include "init/config/config.h"

struct privfiles {
	char **data; /* [file] sources as read, one per cfg->files (NULL: not read) */
	size_t *len;
	int n;
	int mcp;     /* the agent's copy of mcp.json is in mcp_res.text */
	int mcp_servers; /* its servers through the bridge (the route table takes their routes) */
	int written; /* targets written so far: files in order, then mcp.json */
	struct mcp_result mcp_res;
};

/* Before ward opens anything: every fd:N the config names (sources and
 * @fd:N header values) is open, and none is named twice. Else the
 * number would be one of ward's own by the time it is read. 0, or the
 * exit status after logging why. */
int privfiles_check_fds(const struct ward_config *cfg);

/* Reads every source (each descriptor once, then closed) and rewrites the
 * host's mcp.json: its servers' routes wait in pf->mcp_res for the route
 * table. 0, or the exit status after logging why (2: a config or source
 * problem, 3: out of memory). */
int privfiles_read(struct privfiles *pf, const struct ward_config *cfg);

/* For --check: the host's mcp.json as a start reads it, when it is a
 * path this process can read now (an fd:N, or a file mounted only at run
 * time, is left for the start, with a note); its servers' routes wait in
 * pf->mcp_res, so that the route table, and with it port clashes and
 * --explain, sees them. Nothing is written. 0, or the exit status after
 * logging why. */
int privfiles_check_mcp(struct privfiles *pf, const struct ward_config *cfg);

/* Writes the targets, owned by uid:gid. 0, or 2 after logging why. */
int privfiles_write(struct privfiles *pf, const struct ward_config *cfg, uid_t uid, gid_t gid);

/* Removes the first `written` targets privfiles_write wrote (pf->written:
 * files in order, then mcp.json), when a later step of the start fails:
 * it leaves nothing behind. */
void privfiles_unwrite(const struct ward_config *cfg, int written);

/* Zeroes what was read and frees it; an empty privfiles is accepted. */
void privfiles_free(struct privfiles *pf);

#endif
