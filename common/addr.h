/* addr: a TCP destination as --explain tcp:... and the config's connect
 * lines write it: PORT, IPV4:PORT or [IPV6]:PORT (an IPv4-mapped IPv6
 * address is read as the IPv4 address it maps). Parsed once into a type. */
#ifndef WARD_ADDR_H
#define WARD_ADDR_H

#include <netinet/in.h>
#include <stddef.h>

struct tcp_dest {
	int has_addr;	       /* 0: a port alone */
	int family;	       /* AF_INET or AF_INET6 (after unmapping) */
	struct in6_addr addr6; /* AF_INET6 */
	struct in_addr addr4;  /* AF_INET */
	unsigned port;
};

/* The len bytes at s. 0, or -1 with *why. */
int addr_parse(const char *s, size_t len, struct tcp_dest *d, const char **why);

/* Is the address one of loopback's: 127.0.0.0/8 or ::1? */
int addr_loopback(const struct tcp_dest *d);

/* "10.0.0.5", "fd00::5": the address as text. */
const char *addr_text(const struct tcp_dest *d, char *buf, size_t size);

#endif
