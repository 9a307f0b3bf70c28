/* unit.h: a minimal test harness. CHECK records a failure with its line and
 * goes on; unit_done() prints "NAME: N passed, N failed" and the status. */
#ifndef WARD_UNIT_H
#define WARD_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed, unit_skipped;

/* A group of checks that cannot run here: say why, count it as skipped. */
#define SKIP(n, ...)                                          \
	do {                                                  \
		unit_skipped += (n);                          \
		printf("SKIP %d checks: ", (n));             \
		printf(__VA_ARGS__);                          \
		printf("\n");                                \
	} while (0)

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (cond) {                                                            \
			unit_passed++;                                                 \
		} else {                                                               \
			unit_failed++;                                                 \
			fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                      \
	} while (0)

#define CHECK_STR(a, b)                                                                 \
	do {                                                                            \
		const char *a_ = (a), *b_ = (b);                                        \
		if (a_ && b_ && strcmp(a_, b_) == 0) {                                  \
			unit_passed++;                                                  \
		} else {                                                                \
			unit_failed++;                                                  \
			fprintf(stderr, "%s:%d: FAIL: %s == \"%s\", got \"%s\"\n", __FILE__, \
				__LINE__, #a, b_ ? b_ : "(null)", a_ ? a_ : "(null)");       \
		}                                                                       \
	} while (0)

/* A header as the config writes it ("Name: value", "Name: @source"), in
 * one of four rotating buffers, so that checks can compare it whole. */
#ifdef WARD_HEADER_H
static inline const char *hline(const struct header *h)
{
	static char buf[4][8192];
	static int k;
	char *b = buf[k++ % 4];

	snprintf(b, sizeof buf[0], "%s: %s%s%s", h->name, h->source && h->value ? h->value : "", h->source ? "@" : "",
		 h->source ? h->source : h->value);
	return b;
}
#endif

static inline int unit_done(const char *name)
{
	if (unit_skipped)
		printf("%s: %d passed, %d failed, %d skipped\n", name, unit_passed, unit_failed, unit_skipped);
	else
		printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
