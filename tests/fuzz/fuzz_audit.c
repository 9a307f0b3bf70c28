/* libFuzzer target: the audit records ward reads for log_level = debug
 * (Landlock denials). Input: one byte choosing the record type (1423 or
 * 1424), then the record's text; several records share one state, so a
 * domain described by one is the agent's for the next. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "init/report/denials.h"
#include "common/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int quiet;
	static const pid_t agents[2] = { 4242, 4343 };
	struct denials d;
	char rec[1100];
	size_t off = 0;

	if (!quiet) {
		log_setup(LOG_TEXT, LOG_ERROR); /* the reports are warnings: keep the run quiet */
		quiet = 1;
	}
	denials_init(&d);
	while (off < size) {
		const uint8_t *end = memchr(data + off, '\n', size - off);
		size_t len = end ? (size_t)(end - (data + off)) : size - off;
		int type = len && (data[off] & 1) ? 1424 : 1423;
		if (len) {
			len--;
			off++;
		}
		if (len >= sizeof rec)
			len = sizeof rec - 1;
		memcpy(rec, data + off, len);
		rec[len] = '\0';
		denials_record(&d, type, rec, agents, 2);
		off += len + 1;
	}
	return 0;
}
