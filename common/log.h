/* log: one line per event on stderr, "ward: ..." text or JSON lines. */
#ifndef WARD_LOG_H
#define WARD_LOG_H

#include <stddef.h>

enum log_level { LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };
enum log_format { LOG_TEXT, LOG_JSON };

/* As the config and the JSON log lines spell them, by enum log_level. */
extern const char *const log_level_names[4];

/* The logger's settings are written once, before supervision starts, and
 * only read afterwards; they are the only process-wide state ward keeps
 * outside the supervisor's own struct. */
void log_setup(enum log_format format, enum log_level level);

/* Write log lines to a private, non-blocking descriptor of stderr where one
 * can be had (pipes and terminals), so a stalled reader never blocks PID 1.
 * Needs /proc; call after the VM mounts. */
void log_detach_stderr(void);

/* Send log lines to fd instead (tests and fuzzers: /dev/null). */
void log_to_fd(int fd);

/* Writes buf to the log's descriptor without blocking: where it is full,
 * waits for room at most wait_ms in all (0: not at all). 0, or -1 if not
 * all of it was written. For output that must not be cut (--evidence). */
int log_write(const char *buf, size_t len, int wait_ms);

/* The descriptor log lines go to, so close_fds_except() can keep it. */
int log_fd(void);

/* Every line also appended to fd ([ward] log_copy: a regular file, opened
 * O_APPEND), or -1 for none; and that descriptor, to keep. */
void log_copy_to(int fd);
int log_copy_fd(void);

/* While there is a copy, lines above level go to it alone, not to the log's
 * descriptor (a terminal whose screen is the agent's: [proxy] ask = terminal). */
void log_screen_max(enum log_level level);

int log_enabled(enum log_level level);
void logmsg(enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define log_error(...) logmsg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) logmsg(LOG_WARN, __VA_ARGS__)
#define log_info(...) logmsg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) logmsg(LOG_DEBUG, __VA_ARGS__)

#endif
