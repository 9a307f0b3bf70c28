/* who: which process of the agent's made a request the bridge holds, for
 * the question an approver is asked ([proxy] ask).
 *
 * The bridge sees a TCP connection on loopback and nothing of who opened
 * it; it runs as a user of its own and may not look into the agent's
 * processes. PID 1 may: it already makes the agent's sockets and reads its
 * memory as the agent's user (init/egress/guard.h). So the bridge sends the
 * connection's two ends over a socket pair of PID 1's (SOCK_SEQPACKET, one
 * message each way), and PID 1 answers with the process that holds the
 * agent's end (init/egress/owner.h): its pid and command line, printable
 * ASCII only, cut to WHO_CMD_MAX - 1 bytes.
 *
 * What it says is the agent's to choose: a process names itself as it
 * likes (argv is its own memory). It tells the person what asked; it
 * decides nothing. */
#ifndef WARD_WHO_H
#define WARD_WHO_H

#include <stddef.h>
#include <stdint.h>

#define WHO_CMD_MAX 256
#define WHO_WAIT_MS 200 /* the bridge's wait for PID 1's answer, at most */

/* bridge -> PID 1 */
struct who_req {
	uint32_t seq;
	uint16_t family;       /* AF_INET or AF_INET6 */
	uint16_t agent_port;   /* the agent's end: its address and port */
	uint16_t proxy_port;   /* the bridge's end */
	uint16_t pad;
	unsigned char agent_addr[16];
	unsigned char proxy_addr[16];
};

/* PID 1 -> bridge */
struct who_ans {
	uint32_t seq;
	int32_t pid; /* 0: not found (gone already, no guard, or not the agent's) */
	char cmd[WHO_CMD_MAX];
};

/* cmd as printable ASCII (NULs between arguments become spaces, anything
 * else outside 0x20-0x7e becomes '?'), trailing spaces dropped, always
 * terminated within size. */
static inline void who_printable(char *cmd, size_t len, size_t size)
{
	size_t i;

	if (!size)
		return;
	if (len >= size)
		len = size - 1;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)cmd[i];
		cmd[i] = c == 0 ? ' ' : (c < 0x20 || c > 0x7e) ? '?' : (char)c;
	}
	while (len && cmd[len - 1] == ' ')
		len--;
	cmd[len] = '\0';
}

#endif
