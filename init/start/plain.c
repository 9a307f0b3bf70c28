/* A plain init: no config file, so nothing is confined and ward is what
 * tini is, a PID 1 that forwards signals and reaps. Its own short path
 * so that it builds nothing it does not use: no config is read (it
 * supervises with config_default, which is read-only data) and no
 * sandbox state exists, and a plain init writes about as much memory as
 * tini (docs/benchmarks.md, the anonymous memory row). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/fds.h"
#include "common/log.h"
#include "init/config/config.h"
#include "init/start/start.h"
#include "init/supervise/supervise.h"

extern char **environ;

int run_plain(char **command, const sigset_t *inherited)
{
	struct supervisor sv;
	int fds[13], nfds, cwd_fd, rc = 1;

	if (!command) {
		log_error("no command: give one after -- or set [agent] command (see ward --help)");
		return EXIT_USAGE;
	}
	if (getpid() != 1 && prctl(PR_SET_CHILD_SUBREAPER, 1) != 0)
		log_warn("cannot become a child subreaper (%s): orphans will not be reaped", strerror(errno));
	log_detach_stderr();
	log_info("no config file: plain init, nothing is confined");
	cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cwd_fd < 0)
		log_warn("cannot open the current directory: %s", strerror(errno));
	/* the first child gets ward's inherited descriptors, signal mask and
	 * ignored signals, as under tini (supervisor_init's defaults) */
	if (supervisor_init(&sv, &config_default, command, environ, inherited, cwd_fd) == 0 &&
	    supervisor_start(&sv) == 0) {
		/* ward keeps nothing it inherited and does not pin any directory */
		nfds = supervisor_fds(&sv, fds, 12);
		fds[nfds++] = log_fd();
		close_fds_except(fds, nfds);
		if (chdir("/") != 0)
			log_warn("chdir /: %s", strerror(errno));
		rc = supervisor_run(&sv);
	}
	supervisor_free(&sv);
	return rc;
}
