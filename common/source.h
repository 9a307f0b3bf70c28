/* source: a private input the host hands in, named "fd:N" (a descriptor
 * the runtime passed, N >= 3) or by an absolute path; read once, bounded,
 * then closed. [mcp] source, [file] source and a header's @fd:N / @PATH
 * secret all come through here, as root, in PID 1. */
#ifndef WARD_SOURCE_H
#define WARD_SOURCE_H

#include <stddef.h>

#define SOURCE_MAX_FILE ((size_t)1024 * 1024) /* mcp.json, a [file] */
#define SOURCE_MAX_SECRET ((size_t)8192)      /* a header's secret */

/* "fd:N" (N from 3 to 65535), spelled as ward compares it: the descriptor,
 * or -1 when spec names no descriptor (a path, or a malformed fd:). */
int source_fd(const char *spec);

/* Reads all of spec into *buf (malloc'd, *len bytes): a descriptor is read
 * and closed, a path opened, read and closed. More than max bytes, a read
 * error (a directory; a non-blocking pipe with nothing more for now) or a
 * descriptor ward was not given: -1 with err ("source SPEC: why"), *buf
 * NULL. */
int source_read(const char *spec, size_t max, char **buf, size_t *len, char *err, size_t errsize);

#endif
