#define _GNU_SOURCE
#include "init/sandbox/runtime.h"

#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "common/log.h"

void runtime_detect(struct runtime_info *rt)
{
	struct utsname u;

	memset(rt, 0, sizeof *rt);
	rt->name = "linux";
	if (uname(&u) == 0 && strcmp(u.release, "4.4.0") == 0 &&
	    strcmp(u.version, "#1 SMP Sun Jan 10 15:06:54 PST 2016") == 0) {
		rt->gvisor = 1;
		rt->name = "gVisor";
	}
}

/* A route table of /proc/net: the first route whose device is not lo.
 * IPv4's has a header line and the device first; IPv6's has none and the
 * device last. */
static int table(const char *path, int v6, char *dev, size_t size)
{
	FILE *f = fopen(path, "re");
	char line[512], name[64];
	int first = 1, found = 0;

	if (!f) {
		snprintf(dev, size, "%s unreadable", path);
		return -1;
	}
	while (!found && fgets(line, sizeof line, f)) {
		if (!v6 && first) {
			first = 0;
			continue;
		}
		name[0] = '\0';
		if (v6) {
			char *last = strrchr(line, ' ');
			if (last)
				snprintf(name, sizeof name, "%s", last + 1);
		} else {
			sscanf(line, "%63s", name);
		}
		name[strcspn(name, "\r\n")] = '\0';
		if (name[0] && strcmp(name, "lo") != 0) {
			snprintf(dev, size, "%s", name);
			found = 1;
		}
	}
	fclose(f);
	return found;
}

/* An interface that is up, not the loopback, with an address of its own
 * (netlink, through getifaddrs): gVisor's host network shows no routes in
 * /proc/net but its interfaces here. */
static int interface_out(char *dev, size_t size)
{
	struct ifaddrs *all, *i;
	int found = 0;

	if (getifaddrs(&all) != 0) {
		snprintf(dev, size, "the interfaces (getifaddrs: %s)", strerror(errno));
		return -1;
	}
	for (i = all; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6) ||
		    !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		snprintf(dev, size, "%s", i->ifa_name);
		found = 1;
	}
	freeifaddrs(all);
	return found;
}

int runtime_route_out(char *dev, size_t size)
{
	int r = table("/proc/net/route", 0, dev, size);

	if (r != 0)
		return r;
	/* a kernel without IPv6 has no table for it: no route there */
	r = table("/proc/net/ipv6_route", 1, dev, size);
	if (r > 0)
		return r;
	return interface_out(dev, size);
}

void runtime_note(struct runtime_info *rt, const char *fmt, ...)
{
	va_list ap;

	if (rt->n_notes == RUNTIME_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(rt->notes[rt->n_notes], sizeof rt->notes[0], fmt, ap);
	va_end(ap);
	log_warn("%s: %s", rt->name, rt->notes[rt->n_notes]);
	rt->n_notes++;
}
