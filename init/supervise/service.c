#define _GNU_SOURCE
#include "init/supervise/service.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/log.h"

#define FIRST_DELAY_MS 250
#define MAX_DELAY_MS 10000
#define DELAY_RESET_MS 60000 /* a run this long resets the backoff */

static void set_timerfd(int fd, uint64_t deadline_ms)
{
	struct itimerspec its = { 0 };

	if (deadline_ms) {
		/* an absolute time of 0 would disarm the timer */
		its.it_value.tv_sec = (time_t)(deadline_ms / 1000);
		its.it_value.tv_nsec = (long)(deadline_ms % 1000) * 1000000 + 1;
	}
	(void)timerfd_settime(fd, TFD_TIMER_ABSTIME, &its, NULL);
}

static void end_notes(struct service *s)
{
	if (s->nfd < 0)
		return;
	/* out of the set first: a child forked meanwhile may still hold it */
	(void)epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->nfd, NULL);
	close(s->nfd);
	s->nfd = -1;
}

/* The next try after the current delay, which then doubles (10 s at most). */
static void next_try(struct service *s, uint64_t now)
{
	set_timerfd(s->tfd, now + s->delay);
	s->delay = s->delay * 2 > MAX_DELAY_MS ? MAX_DELAY_MS : s->delay * 2;
}

/* A restarted one that failed or is late: killed; its exit, reaped as
 * any, schedules the next try. */
static void drop_starting(struct service *s)
{
	end_notes(s);
	if (s->pid > 0)
		(void)kill(s->pid, SIGKILL);
}

static void on_notes(void *owner)
{
	struct service *s = owner;
	int r = s->ops->note(s->arg, s->nfd, s->pid);

	if (r == 0)
		return;
	if (r < 0) {
		drop_starting(s);
		return;
	}
	end_notes(s);
	set_timerfd(s->tfd, 0);
	s->ready = s->pid;
}

static void on_timer(void *owner)
{
	struct service *s = owner;
	uint64_t x;

	if (read(s->tfd, &x, sizeof x) < 0 || s->stopping)
		return;
	if (s->nfd >= 0) {
		log_error("%s: pid %d not ready after %llu ms; stopping it", s->ops->name, (int)s->pid,
			  (unsigned long long)s->ready_ms);
		drop_starting(s);
		return;
	}
	if (s->pid > 0)
		return;
	s->started = now_ms();
	s->pid = s->ops->spawn(s->arg, &s->nfd);
	if (s->pid <= 0) {
		s->pid = 0;
		s->nfd = -1;
		log_warn("%s: restart failed; trying again in %llums", s->ops->name, (unsigned long long)s->delay);
		next_try(s, now_ms());
		return;
	}
	if (event_add(s->epfd, &s->on_notes) != 0) {
		log_error("%s: epoll_ctl: %s", s->ops->name, strerror(errno));
		drop_starting(s);
		return;
	}
	set_timerfd(s->tfd, s->started + s->ready_ms);
}

int service_init(struct service *s, const struct service_ops *ops, void *arg, uint64_t ready_ms, int epfd,
		 pid_t pid)
{
	memset(s, 0, sizeof *s);
	s->ops = ops;
	s->arg = arg;
	s->ready_ms = ready_ms;
	s->epfd = epfd;
	s->pid = s->ready = pid;
	s->nfd = -1;
	s->delay = FIRST_DELAY_MS;
	s->started = now_ms(); /* the first one started right before this */
	s->on_timer = (struct event_source){ &s->tfd, on_timer, s };
	s->on_notes = (struct event_source){ &s->nfd, on_notes, s };
	s->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (s->tfd < 0 || event_add(epfd, &s->on_timer) != 0) {
		log_error("%s: cannot set up its timer: %s", ops->name, strerror(errno));
		return -1;
	}
	return 0;
}

void service_exited(struct service *s, int status)
{
	uint64_t now = now_ms();

	s->pid = s->ready = 0;
	end_notes(s);
	if (s->stopping)
		return;
	if (now - s->started >= DELAY_RESET_MS)
		s->delay = FIRST_DELAY_MS;
	s->started = now_ms();
	log_warn("%s died (%s %d); restarting it in %llums", s->ops->name, WIFSIGNALED(status) ? "signal" : "status",
		 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status), (unsigned long long)s->delay);
	next_try(s, now);
}

void service_hold(struct service *s)
{
	s->stopping = 1;
}

/* Waits up to ms for pid, a child, to exit and reaps it: 1 if it did. A
 * pidfd becomes readable the moment it exits (no nap to sleep out: ward
 * ends as soon as its services have); without pidfd_open (before Linux
 * 5.3), 1 ms naps. ward's signals are blocked, so poll is not cut short. */
static int reaped_within(pid_t pid, int ms)
{
	int status, i, fd = (int)syscall(SYS_pidfd_open, pid, 0);

	if (fd >= 0) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		(void)poll(&p, 1, ms);
		close(fd);
		return waitpid(pid, &status, WNOHANG) == pid;
	}
	for (i = 0; i < ms; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return 1;
		usleep(1000);
	}
	return waitpid(pid, &status, WNOHANG) == pid;
}

void service_stop(struct service *s)
{

	s->stopping = 1;
	if (s->nfd >= 0 && s->pid > 0) {
		/* still starting: its signals are blocked until it is ready,
		 * and it serves no one yet */
		(void)kill(s->pid, SIGKILL);
	}
	end_notes(s);
	if (s->pid <= 0)
		return;
	(void)kill(s->pid, SIGTERM);
	if (!reaped_within(s->pid, 1000)) {
		(void)kill(s->pid, SIGKILL);
		/* a frozen or stuck one does not go even then: 2 s, not for ever */
		if (!reaped_within(s->pid, 2000))
			log_error("%s: pid %d survives SIGKILL; leaving it", s->ops->name, (int)s->pid);
	}
	s->pid = 0;
}

int service_fds(const struct service *s, int *fds, int max)
{
	int n = 0;

	if (s->tfd >= 0 && n < max)
		fds[n++] = s->tfd;
	if (s->nfd >= 0 && n < max)
		fds[n++] = s->nfd;
	return n;
}

void service_free(struct service *s)
{
	if (s->tfd >= 0)
		close(s->tfd);
	s->tfd = -1;
	end_notes(s);
}

pid_t service_first_start(const struct service_ops *ops, void *arg, int ready_ms)
{
	struct pollfd p = { .events = POLLIN };
	uint64_t t0 = now_ms(), spent = 0;
	int r = 0;
	pid_t pid = ops->spawn(arg, &p.fd);

	if (pid < 0)
		return -1;
	while (r == 0 && spent < (uint64_t)ready_ms) {
		int n = poll(&p, 1, (int)((uint64_t)ready_ms - spent));

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0)
			r = ops->note(arg, p.fd, pid);
		spent = now_ms() - t0;
	}
	close(p.fd);
	if (r != 1) {
		if (r == 0)
			log_error("%s: not ready after %d ms; stopping it", ops->name, ready_ms);
		kill(pid, SIGKILL); /* reaped by the loop, as any child */
		return -1;
	}
	return pid;
}
