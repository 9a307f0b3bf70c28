/* connect_lat: N loopback TCP connections, one after another; each one's
 * socket() and connect() timed apart, printed as nanoseconds, one line
 * each ("socket_ns connect_ns"). Run bare, under ward with egress = ports
 * and under ward with egress = loopback (the guard makes each socket and
 * checks each connect's address), by tests/bench/egress_bench.py.
 *
 *   connect_lat PORT N [ADDRESS]: with ADDRESS (one the guard refuses),
 *   each connect must fail with ENETUNREACH; connect_ns is the time to
 *   that error. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static long long ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int n, i;

	if (argc != 3 && argc != 4)
		return 2;
	a.sin_port = htons((unsigned short)atoi(argv[1]));
	n = atoi(argv[2]);
	inet_pton(AF_INET, argc == 4 ? argv[3] : "127.0.0.1", &a.sin_addr);
	for (i = 0; i < n; i++) {
		long long t0 = ns(), t1, t2;
		int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		t1 = ns();
		if (s < 0 || (argc == 3 && connect(s, (struct sockaddr *)&a, sizeof a) != 0)) {
			perror("connect");
			return 1;
		}
		if (argc == 4 && (connect(s, (struct sockaddr *)&a, sizeof a) == 0 || errno != ENETUNREACH)) {
			perror("refused connect: not ENETUNREACH");
			return 1;
		}
		t2 = ns();
		printf("%lld %lld\n", t1 - t0, t2 - t1);
		close(s);
	}
	return 0;
}
