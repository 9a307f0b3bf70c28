/* clock: milliseconds of CLOCK_MONOTONIC, the one clock every deadline of
 * ward's (PID 1's timers, the bridge's timeouts, the log's bounded wait)
 * is measured on. */
#ifndef WARD_CLOCK_H
#define WARD_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

#endif
