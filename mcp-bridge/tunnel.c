#define _GNU_SOURCE
#include "mcp-bridge/tunnel.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/clock.h"
#include "common/log.h"
#include "mcp-bridge/ask.h"
#include "mcp-bridge/hello.h"
#include "mcp-bridge/proxyreq.h"
#include "mcp-bridge/resolve.h"
#include "mcp-bridge/stream.h"

/* An address literal's sockaddr, with the CONNECT's port. */
static void literal_addr(struct name_addr *a, int family, const unsigned char *b, unsigned port)
{
	memset(a, 0, sizeof *a);
	a->family = family;
	if (family == AF_INET) {
		struct sockaddr_in s4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
		memcpy(&s4.sin_addr, b, 4);
		memcpy(a->bytes, b, 4);
		memcpy(&a->sa, &s4, sizeof s4);
		a->len = (socklen_t)sizeof s4;
	} else {
		struct sockaddr_in6 s6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port) };
		memcpy(&s6.sin6_addr, b, 16);
		memcpy(a->bytes, b, 16);
		memcpy(&a->sa, &s6, sizeof s6);
		a->len = (socklen_t)sizeof s6;
	}
}

/* A plain request: its head in origin form, its route one of its own. */
static int plain_request(struct conn *c, const struct proxy_req *q)
{
	struct tunnel *t = c->tun;

	t->plain = 1;
	/* RFC 9110's authority: an IPv6 literal (a v4-mapped one too) in
	 * brackets, the port after them when it is not 80 */
	if (t->port == 80)
		snprintf(t->authority, sizeof t->authority, strchr(t->host, ':') ? "[%s]" : "%s", t->host);
	else
		snprintf(t->authority, sizeof t->authority, strchr(t->host, ':') ? "[%s]:%u" : "%s:%u", t->host,
			 t->port);
	t->http = (struct http_route){ .name = c->route->name,
				       .methods = c->route->proxy->methods & ~(1u << HTTP_CONNECT),
				       .path = "/",
				       .host = t->authority,
				       .any_origin = 1 };
	c->head_len = proxyreq_origin_form(c->head, c->head_len, q);
	http_req_init(&c->req, &t->http);
	return 0;
}

/* The rest of a CONNECT or plain request once its host is allowed (by a
 * rule, or by the person's answer): the tunnel counted, its address judged
 * or its name looked up, its buffers ready. */
static int admit(struct loop *l, struct conn *c, const struct proxy_req *q, int *status, const char **why)
{
	const struct proxy_policy *p = c->route->proxy;
	struct tunnel *t = c->tun;
	size_t head = http_head_end(c->head, c->head_len);
	unsigned char b[16];
	int family = 0;

	*status = 503;
	/* a tunnel from here until it closes (a refusal lingering is none) */
	if (l->n_tunnels >= p->max_tunnels) {
		*why = "too many tunnels ([proxy] max_tunnels)";
		return -1;
	}
	l->n_tunnels++;
	t->counted = 1;
	if (t->literal && allow_literal(t->host, &family, b)) {
		/* an address allowed by its rule, judged as a name's answer is */
		const char *no = resolver_refuses_under(family, b, t->port, p->allow, p->n_allow);
		if (no) {
			snprintf(c->why, sizeof c->why, "the proxy does not connect to a %s address unless a rule of /8 or "
				 "narrower names it", no);
			*status = 403;
			*why = c->why;
			return -1;
		}
		literal_addr(&t->lit, family, b, t->port);
	} else {
		/* an approved name too: its answers judged by the allow rules'
		 * addresses alone (approval widens names, never addresses) */
		c->name_i = resolver_hold(l->res, t->host, t->port, p->allow, p->n_allow, now_ms());
		if (c->name_i < 0) {
			*why = "too many names being looked up at once";
			return -1;
		}
	}
	if (q->plain)
		return plain_request(c, q);
	if (stream_alloc(c) != 0)
		return -1;
	/* bytes sent after the head, before the 200: the hello's beginning */
	if (c->head_len > head) {
		size_t extra = c->head_len - head;
		if (extra > RESP_BUF) {
			*status = 400;
			*why = "too many bytes before the tunnel was established";
			return -1;
		}
		memcpy(c->c2u, c->head + head, extra);
		c->c2u_len = extra;
	}
	c->bytes_in = c->head_len;
	return 0;
}

/* No rule allows the host: 403 saying what would, in words the agent can
 * pass on to the person. */
static int not_allowed(struct conn *c, int family, int *status, const char **why)
{
	struct tunnel *t = c->tun;
	char rule[300];

	/* the rule that would allow it: a port other than 443 is named */
	if (t->port == 443)
		snprintf(rule, sizeof rule, t->literal && family == AF_INET6 ? "[%s]" : "%s", t->host);
	else
		snprintf(rule, sizeof rule, "%s", t->desc);
	snprintf(c->why, sizeof c->why,
		 t->literal ? "%s refused: the address is not in [proxy] allow; an address needs an address "
			      "rule there (allow = %s), which the person outside the sandbox can add"
			    : "%s refused: the host is not in [proxy] allow; the person outside the sandbox can "
			      "allow it (allow = %s in [proxy], or ward-pi --allow %s); do not retry until then",
		 t->desc, rule, rule);
	*status = 403;
	*why = c->why;
	return -1;
}

int tunnel_open(struct loop *l, struct conn *c, int *status, const char **why)
{
	const struct proxy_policy *p = c->route->proxy;
	size_t head = http_head_end(c->head, c->head_len), i;
	struct proxy_req q;
	struct tunnel *t;
	unsigned char b[16];
	int family = 0;

	*status = 503;
	*why = "out of memory";
	t = calloc(1, sizeof *t);
	if (!t)
		return -1;
	c->tun = t;
	c->name_i = -1;
	if (proxyreq_parse(c->head, head, p->methods, &q) != 0) {
		*status = q.status;
		*why = q.why;
		return -1;
	}
	/* one spelling from here on: lower case, no final dot */
	for (i = 0; q.host[i]; i++)
		t->host[i] = (char)tolower((unsigned char)q.host[i]);
	if (i > 1 && t->host[i - 1] == '.')
		t->host[i - 1] = '\0';
	t->port = q.port;
	t->literal = allow_literal(t->host, &family, b);
	snprintf(t->desc, sizeof t->desc, t->literal && family == AF_INET6 ? "[%s]:%u" : "%s:%u", t->host, t->port);
	if (allow_match(p->allow, p->n_allow, t->host, t->port))
		return admit(l, c, &q, status, why);
	/* a name no rule allows: this session's answers, or a question to
	 * the person ([proxy] ask); an address is never asked */
	if (t->literal || !l->ask)
		return not_allowed(c, family, status, why);
	switch (asker_judge(l->ask, t->host, t->port, c->why, sizeof c->why)) {
	case ASK_ALLOWED:
		return admit(l, c, &q, status, why);
	case ASK_DENIED:
		*status = 403;
		*why = c->why;
		return -1;
	case ASK_NEEDED:
		break;
	}
	if (asker_ask(l->ask, t->host, t->port, q.plain ? "http" : "connect", c->cfd, now_ms(), &c->ask_id, c->why,
		      sizeof c->why) != 0) {
		*status = 403;
		*why = c->why;
		return -1;
	}
	return TUNNEL_ASKED;
}

int tunnel_admit(struct loop *l, struct conn *c, int *status, const char **why)
{
	struct proxy_req q;

	/* the head is as it was when parsed first (nothing read since) */
	if (proxyreq_parse(c->head, http_head_end(c->head, c->head_len), c->route->proxy->methods, &q) != 0) {
		*status = q.status;
		*why = q.why;
		return -1;
	}
	return admit(l, c, &q, status, why);
}

int tunnel_established(struct conn *c)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

	c->status = 200;
	/* a fresh socket's buffer takes it whole */
	if (send(c->cfd, ok, sizeof ok - 1, MSG_NOSIGNAL | MSG_DONTWAIT) != (ssize_t)(sizeof ok - 1)) {
		c->req.why = "client went away before the tunnel was established";
		return -1;
	}
	return 0;
}

int tunnel_hello(struct conn *c)
{
	struct tunnel *t = c->tun;
	const char *why = NULL;
	ssize_t n;
	int r;

	r = hello_server_name((const unsigned char *)c->c2u, c->c2u_len, t->sni, sizeof t->sni, &why);
	if (r == HELLO_MORE && c->c2u_len < RESP_BUF) {
		/* only when what came (with the CONNECT, too) is not all of it */
		n = recv(c->cfd, c->c2u + c->c2u_len, RESP_BUF - c->c2u_len, 0);
		if (n == 0) {
			c->req.why = "client closed before its TLS ClientHello";
			return -1;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			c->req.why = "client reset the connection before its TLS ClientHello";
			return -1;
		}
		if (n > 0) {
			c->c2u_len += (size_t)n;
			c->bytes_in += (uint64_t)n;
		}
		r = hello_server_name((const unsigned char *)c->c2u, c->c2u_len, t->sni, sizeof t->sni, &why);
	}
	if (r == HELLO_MORE && c->c2u_len == RESP_BUF) {
		r = HELLO_BAD;
		why = "a ClientHello longer than the proxy's buffer";
	}
	if (r == HELLO_MORE)
		return 0;
	if (r == HELLO_BAD) {
		c->req.why = why;
		return -1;
	}
	/* an address is connected to without a name: a hello may name none */
	if (t->literal ? t->sni[0] && strcmp(t->sni, t->host) != 0 : strcmp(t->sni, t->host) != 0) {
		snprintf(c->why, sizeof c->why, "the TLS server name (%.200s) is not the CONNECT host: cut before "
			 "anything was forwarded", t->sni[0] ? t->sni : "none");
		c->req.why = c->why;
		return -1;
	}
	return 1;
}

int tunnel_over(const struct conn *c)
{
	const struct proxy_policy *p = c->route->proxy;

	return p->max_bytes && c->bytes_in + c->bytes_out > p->max_bytes;
}

void tunnel_audit(const struct conn *c)
{
	const struct tunnel *t = c->tun;
	char addr[INET6_ADDRSTRLEN] = "-", target[CONN_TARGET_TEXT];

	if (c->addr.family && !inet_ntop(c->addr.family, c->addr.bytes, addr, sizeof addr))
		snprintf(addr, sizeof addr, "?");
	if (t && t->plain) {
		/* a plain request: what was asked of the host, as a route's line */
		log_info("bridge: route=%s http=%s addr=%s method=%s target=%s status=%d in=%llu out=%llu ms=%llu%s%s",
			 c->route->name, t->desc, addr,
			 c->req.headers_done ? http_method_str(c->req.parser.method) : "-",
			 conn_target_text(c, target), c->status, (unsigned long long)c->bytes_in,
			 (unsigned long long)c->bytes_out, (unsigned long long)(now_ms() - c->started),
			 c->req.why ? " reason=" : "", c->req.why ? c->req.why : "");
		return;
	}
	log_info("bridge: route=%s tunnel=%s addr=%s sni=%s status=%d in=%llu out=%llu ms=%llu%s%s", c->route->name,
		 t && t->desc[0] ? t->desc : "-", addr, t && t->sni[0] ? t->sni : "-", c->status,
		 (unsigned long long)c->bytes_in, (unsigned long long)c->bytes_out,
		 (unsigned long long)(now_ms() - c->started), c->req.why ? " reason=" : "",
		 c->req.why ? c->req.why : "");
}

void tunnel_close(struct loop *l, struct conn *c)
{
	if (c->tun && c->name_i >= 0)
		resolver_release(l->res, c->name_i);
	c->name_i = -1;
	if (c->tun && c->tun->counted)
		l->n_tunnels--;
	if (c->tun)
		c->tun->counted = 0;
}
