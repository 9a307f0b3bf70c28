/* PID 1 as the proxy's approver at its terminal (init/supervise/asktty.c),
 * without a terminal: its relay inactive (nothing is drawn), the bridge a
 * socket pair. Which keys answer (one alone in a read, not in the
 * question's first second), what each answer sends, always's confirmation
 * and its line in ask_store, x, what a question from the bridge must be,
 * settled questions, and a bridge that goes. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/log.h"
#include "init/supervise/asktty.h"
#include "unit.h"

static struct tty_relay tty;
static struct asktty a;
static int bridge = -1;

static void say(const char *line)
{
	char buf[1024];
	int n = snprintf(buf, sizeof buf, "%s\n", line);

	if (write(bridge, buf, (size_t)n) != n)
		perror("write");
	a.src.ready(a.src.owner); /* the socket is readable: the loop would call it */
}

static void key(const char *k, size_t n)
{
	tty.on_key(tty.key_arg, k, n);
}

/* The answers the bridge got since the last call, as one string. */
static const char *answers(void)
{
	static char buf[2048];
	ssize_t n = recv(bridge, buf, sizeof buf - 1, MSG_DONTWAIT);

	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void armed(void)
{
	a.armed_at = 0; /* the question's first second is over */
}

int main(void)
{
	int sp[2], ep = epoll_create1(EPOLL_CLOEXEC), store[2];
	char kept[256] = "";
	ssize_t n;

	log_to_fd(open("/dev/null", O_WRONLY | O_CLOEXEC));
	memset(&tty, 0, sizeof tty); /* inactive: nothing drawn, nothing held */
	tty.in = tty.out = tty.master = tty.slave = tty.logr = tty.log_saved = -1;
	if (ep < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sp) != 0 ||
	    pipe2(store, O_CLOEXEC | O_NONBLOCK) != 0)
		return 1;
	bridge = sp[1];
	asktty_init(&a, &tty, ep, store[1]);
	asktty_attach(&a, sp[0]);

	say("{\"type\":\"hello\",\"protocol\":1,\"timeout_s\":60}");
	say("{\"type\":\"question\",\"id\":1,\"host\":\"docs.python.org\",\"port\":443,\"kind\":\"connect\"}");
	CHECK(a.n == 1);
	/* in the question's first second: no key counts */
	key("o", 1);
	CHECK(a.n == 1 && answers()[0] == '\0');
	armed();
	key("os", 2); /* two keys in one read */
	key("\033[6;6R", 6);
	key("q", 1);
	CHECK(a.n == 1 && answers()[0] == '\0');
	key("w", 1);
	CHECK(a.n == 0);
	CHECK_STR(answers(), "{\"id\":1,\"answer\":\"session\",\"scope\":\"*.python.org\"}\n");

	/* a: always only after y; another key goes back to the question */
	say("{\"type\":\"question\",\"id\":2,\"host\":\"pypi.org\",\"port\":443,\"kind\":\"connect\"}");
	armed();
	key("w", 1); /* pypi.org's parent is one label: no w */
	CHECK(a.n == 1);
	key("a", 1);
	CHECK(a.n == 1 && a.confirming);
	armed();
	key("n", 1);
	CHECK(a.n == 1 && !a.confirming && answers()[0] == '\0');
	armed();
	key("a", 1);
	key("y", 1); /* the confirmation's own first second */
	CHECK(a.n == 1 && a.confirming);
	armed();
	key("y", 1);
	CHECK(a.n == 0);
	CHECK_STR(answers(), "{\"id\":2,\"answer\":\"always\",\"scope\":\"pypi.org\"}\n");
	n = read(store[0], kept, sizeof kept - 1);
	kept[n > 0 ? n : 0] = '\0';
	CHECK_STR(kept, "pypi.org:443\n");

	/* what a question must be: anything else is dropped, never drawn */
	say("{\"type\":\"question\",\"id\":3,\"host\":\"evil\\u001b]0;x\\u0007.test\",\"port\":443,\"kind\":\"connect\"}");
	say("{\"type\":\"question\",\"id\":4,\"host\":\"10.0.0.1\",\"port\":443,\"kind\":\"connect\"}");
	say("{\"type\":\"question\",\"id\":5,\"host\":\"a.test\",\"port\":70000,\"kind\":\"connect\"}");
	say("{\"type\":\"question\",\"id\":0,\"host\":\"a.test\",\"port\":443,\"kind\":\"connect\"}");
	say("{\"type\":\"question\",\"id\":6,\"id\":7,\"host\":\"a.test\",\"port\":443,\"kind\":\"connect\"}");
	say("not json at all");
	CHECK(a.n == 0);

	/* the asking process: the start of its command line, printable ASCII
	 * alone (the agent chose it); a pid that is no process's, dropped */
	say("{\"type\":\"question\",\"id\":13,\"host\":\"who.test\",\"port\":443,\"kind\":\"connect\",\"pid\":42,"
	    "\"command\":\"curl \\u001b]0;pwned\\u0007 \\u00e9 https://who.test/ and a long tail past forty bytes\"}");
	CHECK(a.n == 1 && a.q[0].pid == 42);
	CHECK_STR(a.q[0].cmd, "curl ?]0;pwned? ?? https://who.test/ and");
	say("{\"type\":\"settled\",\"id\":13,\"answer\":\"gone\"}");
	say("{\"type\":\"question\",\"id\":14,\"host\":\"who.test\",\"port\":443,\"kind\":\"connect\",\"pid\":1,"
	    "\"command\":\"init\"}");
	CHECK(a.n == 1 && a.q[0].pid == 0 && a.q[0].cmd[0] == '\0');
	say("{\"type\":\"settled\",\"id\":14,\"answer\":\"gone\"}");
	CHECK(a.n == 0);

	/* queued, one at a time; a settled one leaves the queue */
	say("{\"type\":\"question\",\"id\":8,\"host\":\"one.test\",\"port\":443,\"kind\":\"connect\"}");
	say("{\"type\":\"question\",\"id\":9,\"host\":\"two.test\",\"port\":80,\"kind\":\"http\"}");
	say("{\"type\":\"question\",\"id\":10,\"host\":\"three.test\",\"port\":443,\"kind\":\"connect\"}");
	CHECK(a.n == 3 && a.q[1].http);
	say("{\"type\":\"settled\",\"id\":9,\"answer\":\"timeout\"}");
	CHECK(a.n == 2 && a.q[0].id == 8 && a.q[1].id == 10);
	armed();
	key("d", 1);
	CHECK(a.n == 1 && a.q[0].id == 10);
	CHECK_STR(answers(), "{\"id\":8,\"answer\":\"deny\"}\n");
	/* x: this one and every later one denied, unasked */
	armed();
	key("x", 1);
	say("{\"type\":\"question\",\"id\":11,\"host\":\"four.test\",\"port\":443,\"kind\":\"connect\"}");
	CHECK(a.n == 0 && a.stopped);
	CHECK_STR(answers(), "{\"id\":10,\"answer\":\"deny\"}\n{\"id\":11,\"answer\":\"deny\"}\n");

	/* the bridge goes: its end closed, nothing left */
	a.stopped = 0;
	say("{\"type\":\"question\",\"id\":12,\"host\":\"five.test\",\"port\":443,\"kind\":\"connect\"}");
	CHECK(a.n == 1);
	close(bridge);
	a.src.ready(a.src.owner);
	CHECK(a.n == 0 && a.fd < 0);
	asktty_close(&a);
	close(store[0]);
	close(ep);
	return unit_done("test_asktty");
}
