/* who: the bridge's side of "which process made this request?"
 * (common/who.h), asked of PID 1 when a question to the approver is new. */
#ifndef WARD_BRIDGE_WHO_H
#define WARD_BRIDGE_WHO_H

#include "common/who.h"

/* PID 1's answer for the agent's end of client (an accepted connection
 * on loopback), waiting WHO_WAIT_MS at most: 0 with *out (out->pid 0 when
 * PID 1 found none), or -1 (no pair, no answer in time; out->pid 0). */
int who_ask(int fd, int client, struct who_ans *out);

#endif
