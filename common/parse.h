/* parse: small pure parsers for config values. Each returns 0 on success or
 * -1 with *why set to a short static reason. No allocation unless noted. */
#ifndef WARD_PARSE_H
#define WARD_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

/* Trims nothing: inih has already trimmed values. */

/* "250ms", "10s", "2m", "1h", "1.5s", "0"; a bare number means seconds.
 * Result in milliseconds, at most 24h. */
int parse_duration(const char *s, uint64_t *ms, const char **why);

/* Decimal unsigned integer in [min, max]. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out, const char **why);

/* "TERM", "SIGTERM", "15", "RTMIN+3", "SIGRTMAX-1": 1..64, not KILL or STOP
 * unless allow_uncatchable. */
int parse_signal(const char *s, int allow_uncatchable, int *sig, const char **why);

/* Fills buf with "TERM", "RTMIN+3", ... */
const char *signal_name(int sig, char *buf, size_t size);

/* "INT:TERM"; the target "0" drops the signal. */
int parse_rewrite(const char *s, int *from, int *to, const char **why);

/* "0077": octal, at most 0777. */
int parse_umask(const char *s, unsigned *mask, const char **why);

/* "on"/"yes"/"true"/"1" or "off"/"no"/"false"/"0". */
int parse_bool(const char *s, int *out, const char **why);

/* rlimit_<name>: resource number for "nofile", "nproc", ... */
int rlimit_resource(const char *name, int *resource);
const char *rlimit_name(int resource);

/* A duration as the config writes it: "10s", "250ms". */
const char *fmt_duration(uint64_t ms, char *buf, size_t size);

/* "4096", "4096:8192", "unlimited", "64M:1G" (K, M, G, T suffixes are
 * powers of 1024). soft must not exceed hard. */
int parse_rlimit(const char *s, rlim_t *soft, rlim_t *hard, const char **why);

/* One rlimit_NAME setting: the resource and its two limits. */
struct rlimit_value {
	int resource;
	rlim_t soft, hard;
};

/* The len bytes at s as a decimal number: digits only, at most max_digits
 * of them (no overflow for max_digits <= 19), at most max. 0 or -1. */
int parse_digits(const char *s, size_t len, size_t max_digits, uint64_t max, uint64_t *out);

/* Shell-like word splitting: blanks separate words, '...' is literal,
 * "..." allows \" \\ \$ \`, a backslash outside quotes escapes the next
 * character. Returns a NULL-terminated malloc'd vector (one block; free the
 * vector only) and the word count; no globbing, no expansion. */
int split_words(const char *s, char ***argv, int *argc, const char **why);

#endif
