#define _GNU_SOURCE
#include "init/host/mcpcmds.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/source.h"
#include "mcp-bridge/mcpjson.h"

struct out {
	int dir; /* DIR, opened once: each file is made in it, no link followed */
	int n;
};

/* One command, to DIR/NAME (a new file, mode 0600; the same command
 * twice is one file). */
static int write_one(void *ctx, const char *command)
{
	struct out *o = ctx;
	char name[MCP_CMD_VAR_SIZE];
	size_t len = strlen(command), off = 0;
	int fd;

	mcp_command_var(command, name);
	fd = openat(o->dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST)
		return 0;
	if (fd < 0) {
		log_error("--mcp-commands: %s: %s", name, strerror(errno));
		return 2;
	}
	while (off < len) {
		ssize_t w = write(fd, command + off, len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			log_error("--mcp-commands: %s: %s", name, strerror(errno));
			close(fd);
			return 2;
		}
		off += (size_t)w;
	}
	close(fd);
	o->n++;
	return 0;
}

int mcp_commands_main(const char *file, const char *dir)
{
	struct out o = { .dir = -1 };
	char err[512], *text = NULL;
	size_t len = 0;
	int rc;

	if (source_read(file, SOURCE_MAX_FILE, &text, &len, err, sizeof err) != 0) {
		log_error("--mcp-commands: %s", err);
		return 2;
	}
	o.dir = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (o.dir < 0) {
		log_error("--mcp-commands: %s: %s", dir, strerror(errno));
		free(text);
		return 2;
	}
	rc = mcp_commands(text, len, write_one, &o, err, sizeof err);
	if (rc < 0)
		log_error("--mcp-commands: %s: %s", file, err);
	free(text);
	close(o.dir);
	return rc ? 2 : 0;
}
