/* connects: the guard's answer to a connect(), and to a sendto() or
 * sendmsg() with MSG_FASTOPEN (a connect in a send), so that a refused
 * destination fails at once. The address is read from the caller's memory
 * (peek.h), and so may be changed by another of its threads after it was
 * read: a verdict built on it may only ever be stricter than the kernel's
 * own. A destination read as leaving the sandbox is answered ENETUNREACH
 * (the call never happens); anything else, and anything that cannot be
 * read or judged, goes on in the kernel as it was asked
 * (SECCOMP_USER_NOTIF_FLAG_CONTINUE), where the socket's hold on lo stops
 * whatever the address has become.
 *
 * ENETUNREACH rather than ECONNREFUSED: it is what the kernel itself says
 * for an IPv6 destination under the guard and in a namespace with no
 * route, it is true (there is no network out, not a closed port), and
 * clients give up on it at once where they retry ECONNREFUSED (npm's
 * fetch retries ECONNREFUSED, ECONNRESET and timeouts with a back-off,
 * not ENETUNREACH); every client that tries a name's next address on one
 * does on the other. */
#ifndef WARD_CONNECTS_H
#define WARD_CONNECTS_H

#include <stddef.h>
#include <stdint.h>

struct guard;
struct seccomp_notif;

enum judged {
	JUDGED_PASS,	/* not an inet destination, loopback, or the any address: the kernel's */
	JUDGED_ROUTE,	/* another inet address: local only if the namespace routes it here */
};

struct dest {
	int family;		/* AF_INET (a v4-mapped address too) or AF_INET6 */
	unsigned char addr[16]; /* network order */
	unsigned port;
};

/* The fuzzable core: a sockaddr of len bytes, as read from the caller. */
enum judged connects_judge(const void *sa, size_t len, struct dest *d);

/* One notification of connect, sendto or sendmsg, already received:
 * answered. 0, or -errno when no answer could be given. */
int guard_answer_connect(struct guard *g, int listener, const struct seccomp_notif *req, uint64_t now);

#endif
