#define _GNU_SOURCE
#include "mcp-bridge/upstream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/vm_sockets.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/parse.h"

/* Digits only (parse_uint: strtoul alone took a leading blank or sign). */
static int port_of(const char *s, unsigned *port)
{
	const char *why;
	uint64_t v;

	if (parse_uint(s, 1, 65535, &v, &why) != 0)
		return -1;
	*port = (unsigned)v;
	return 0;
}

int upstream_parse(const char *spec, struct upstream *u, const char **why)
{
	memset(u, 0, sizeof *u);
	snprintf(u->desc, sizeof u->desc, "%s", spec);
	if (strncmp(spec, "unix:", 5) == 0) {
		struct sockaddr_un *a = (struct sockaddr_un *)&u->addr;
		const char *path = spec + 5;
		if (path[0] != '/')
			return *why = "unix: needs an absolute socket path", -1;
		if (strlen(path) >= sizeof a->sun_path)
			return *why = "socket path too long", -1;
		a->sun_family = AF_UNIX;
		memcpy(a->sun_path, path, strlen(path) + 1); /* length checked above */
		u->len = (socklen_t)sizeof *a;
		u->kind = UP_UNIX;
		snprintf(u->default_host, sizeof u->default_host, "localhost");
		return 0;
	}
	if (strncmp(spec, "tcp:", 4) == 0 || strncmp(spec, "tls:", 4) == 0) {
		struct sockaddr_in *a = (struct sockaddr_in *)&u->addr;
		char host[UPSTREAM_NAME_MAX + 2];
		const char *colon = strrchr(spec + 4, ':');
		unsigned port;
		int tls = spec[1] == 'l';
		size_t hl = colon ? (size_t)(colon - (spec + 4)) : 0;

		if (!colon || hl == 0 || hl >= sizeof host || port_of(colon + 1, &port) != 0)
			return *why = tls ? "expected tls:HOST:PORT (an IPv4 address or a DNS name, and a port 1-65535)"
					  : "expected tcp:HOST:PORT (an IPv4 address or a DNS name, and a port 1-65535)", -1;
		memcpy(host, spec + 4, hl);
		host[hl] = '\0';
		if (strcmp(host, "localhost") == 0)
			strcpy(host, "127.0.0.1");
		u->kind = tls ? UP_TLS : UP_TCP;
		u->port = port;
		if (inet_pton(AF_INET, host, &a->sin_addr) == 1) {
			a->sin_family = AF_INET;
			a->sin_port = htons((uint16_t)port);
			u->len = (socklen_t)sizeof *a;
		} else if (upstream_name_ok(host, hl)) {
			/* resolved by the bridge on use (resolve.h); a final dot
			 * says the name is whole: no search domain is tried */
			if (host[hl - 1] == '.') {
				host[--hl] = '\0';
				u->fqdn = 1;
			}
			memcpy(u->name, host, hl + 1);
		} else {
			return *why = "the host is neither a numeric IPv4 address nor a DNS name (letters, digits, '-' "
				      "and dots; IPv6 addresses are not taken)", -1;
		}
		/* the scheme's own port is left out of Host, as clients do */
		if (port == (tls ? 443u : 80u))
			snprintf(u->default_host, sizeof u->default_host, "%s", host);
		else
			snprintf(u->default_host, sizeof u->default_host, "%s:%u", host, port);
		return 0;
	}
	if (strncmp(spec, "vsock:", 6) == 0) {
		struct sockaddr_vm *a = (struct sockaddr_vm *)&u->addr;
		const char *colon = strchr(spec + 6, ':'), *e;
		char num[16];
		uint64_t cid;
		unsigned port;

		if (!colon || colon - (spec + 6) >= (ptrdiff_t)sizeof num)
			return *why = "expected vsock:CID:PORT", -1;
		snprintf(num, sizeof num, "%.*s", (int)(colon - (spec + 6)), spec + 6);
		if (parse_uint(num, 0, 0xffffffffUL, &cid, &e) != 0 || port_of(colon + 1, &port) != 0)
			return *why = "expected vsock:CID:PORT", -1;
		memset(a, 0, sizeof *a);
		a->svm_family = AF_VSOCK;
		a->svm_cid = (unsigned)cid;
		a->svm_port = port;
		u->len = (socklen_t)sizeof *a;
		u->kind = UP_VSOCK;
		snprintf(u->default_host, sizeof u->default_host, "localhost");
		return 0;
	}
	return *why = "expected unix:PATH, tcp:HOST:PORT, tls:HOST:PORT or vsock:CID:PORT", -1;
}

int upstream_unix_absent(const struct upstream *u)
{
	struct stat st;

	return u->kind == UP_UNIX && (stat(((const struct sockaddr_un *)&u->addr)->sun_path, &st) != 0 ||
				      !S_ISSOCK(st.st_mode));
}

int upstream_name_ok(const char *s, size_t n)
{
	size_t i, label = 0;
	int digits_only = 1;

	if (n && s[n - 1] == '.')
		n--; /* the root's empty label */
	if (n == 0 || n > UPSTREAM_NAME_MAX)
		return 0;
	for (i = 0; i <= n; i++) {
		char ch = '.';

		if (i < n)
			ch = s[i];
		if (ch == '.') {
			/* a label ends: 1-63 characters, no '-' at either end */
			if (label == 0 || label > 63 || s[i - label] == '-' || s[i - 1] == '-')
				return 0;
			if (i < n)
				digits_only = 1;
			label = 0;
			continue;
		}
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-'))
			return 0;
		if (ch < '0' || ch > '9')
			digits_only = 0;
		label++;
	}
	/* digits_only now tells of the last label */
	return !digits_only;
}

int host_server_name(const char *host, char *name, size_t size)
{
	size_t n;
	const char *rest;

	if (host[0] == '[') {
		const char *close = strchr(host, ']');
		if (!close || close == host + 1)
			return -1;
		host++;
		n = (size_t)(close - host);
		rest = close + 1;
	} else {
		n = strcspn(host, ":");
		rest = host + n;
	}
	if (n == 0 || n >= size || memchr(host, '[', n) || memchr(host, ']', n))
		return -1;
	if (*rest) {
		unsigned port;
		if (*rest != ':' || port_of(rest + 1, &port) != 0)
			return -1;
	}
	memcpy(name, host, n);
	name[n] = '\0';
	return 0;
}

int upstream_connect(const struct upstream *u)
{
	return upstream_connect_addr((const struct sockaddr *)&u->addr, u->len);
}

int upstream_connect_addr(const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	/* No Nagle: the bridge writes whole buffers, and the TLS handshake's
	 * small records (key exchange, change cipher spec, finished) each
	 * waited for the server's delayed ACK: 40 ms added to every tls:
	 * connection (tests/bench/provider_bench.py) */
	if (sa->sa_family == AF_INET || sa->sa_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (connect(fd, sa, len) != 0 && errno != EINPROGRESS) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}
