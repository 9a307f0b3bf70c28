/* upstream: where a route's requests go: unix:PATH, tcp:IP:PORT,
 * vsock:CID:PORT, tls:IP:PORT (TCP, then TLS: see tls.h). */
#ifndef WARD_UPSTREAM_H
#define WARD_UPSTREAM_H

#include <stddef.h>
#include <sys/socket.h>

enum upstream_kind { UP_UNIX, UP_TCP, UP_VSOCK, UP_TLS };

struct upstream {
	enum upstream_kind kind;
	struct sockaddr_storage addr;
	socklen_t len;
	char desc[128];		/* as written */
	char default_host[96];	/* Host when the route sets none */
};

/* Parses a spec; 0 or -1 with why. */
int upstream_parse(const char *spec, struct upstream *u, const char **why);

/* The name in a Host value (HOST, HOST:PORT, [IPV6] or [IPV6]:PORT): the
 * TLS server name. 0, or -1 if the value is not of that form (an unclosed
 * bracket, a port that is not 1-65535, a second colon outside brackets)
 * or the name does not fit in size. */
int host_server_name(const char *host, char *name, size_t size);

/* A non-blocking connect; returns the fd (connecting or connected) or -1. */
int upstream_connect(const struct upstream *u);

#endif
