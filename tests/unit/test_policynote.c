/* The agent's note: what ward-pi adds to it (policy_note_add), read with
 * the care of a file the starter provides; and what it says of installs,
 * from the Landlock rules and PATH. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init/config/config.h"
#include "init/report/policynote.h"
#include "landlock/landlock.h"
#include "unit.h"

static char dir[] = "/tmp/ward-note-XXXXXX";

static void put(const char *name, const char *text, size_t len)
{
	char p[256];
	int fd;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len)
		abort();
	close(fd);
}

/* policy_note_append on dir/name: its result, or NULL (err then says why) */
static char *add(const char *name, char *err, size_t errsize)
{
	char p[256], *text = strdup("ward's note\n");

	snprintf(p, sizeof p, "%s/%s", dir, name);
	err[0] = '\0';
	if (policy_note_append(&text, p, err, errsize) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

static void test_append(void)
{
	char err[512], *t, big[20000], p[256], q[256];

	put("session.md", "## This session\n\n- a fact", 25);
	t = add("session.md", err, sizeof err);
	CHECK_STR(t, "ward's note\n\n## This session\n\n- a fact\n");
	free(t);
	t = add("not-there.md", err, sizeof err);
	CHECK_STR(t, "ward's note\n");
	free(t);
	put("escape.md", "fine\n\x1b]0;title\x07\n", 15);
	CHECK(add("escape.md", err, sizeof err) == NULL && strstr(err, "a control character at byte 5"));
	memset(big, 'a', sizeof big);
	put("big.md", big, sizeof big);
	CHECK(add("big.md", err, sizeof err) == NULL && strstr(err, "over 16 KiB"));
	put("edge.md", big, 16384);
	t = add("edge.md", err, sizeof err);
	CHECK(t && strlen(t) == strlen("ward's note\n") + 1 + 16384 + 1);
	free(t);
	/* no symbolic link followed (the file could point at a secret of root's) */
	snprintf(p, sizeof p, "%s/session.md", dir);
	snprintf(q, sizeof q, "%s/link.md", dir);
	CHECK(symlink(p, q) == 0);
	CHECK(add("link.md", err, sizeof err) == NULL && err[0]);
	/* nor a FIFO, which would hold the start */
	snprintf(q, sizeof q, "%s/fifo.md", dir);
	CHECK(mkfifo(q, 0600) == 0);
	CHECK(add("fifo.md", err, sizeof err) == NULL && strstr(err, "not a regular file"));
	CHECK(add(".", err, sizeof err) == NULL && strstr(err, "not a regular file"));
}

/* The installs line: the PATH directories below a writable rule, else none */
static void test_installs(void)
{
	struct ward_config cfg;
	struct ll_rule rules[] = { { (char *)"/usr", LL_FS_READ_FILE, 1 },
				   { (char *)"/home/pi", LL_FS_WRITE_FILE | LL_FS_MAKE_REG, 1 },
				   { (char *)"/tmp", LL_FS_WRITE_FILE | LL_FS_MAKE_REG, 1 } };
	struct ll_ruleset ll;
	char *t;

	memset(&cfg, 0, sizeof cfg);
	memset(&ll, 0, sizeof ll);
	ll.rules = rules;
	ll.n_rules = 3;
	t = policy_note_text(&cfg, NULL, &ll, NULL, "/home/pi/.local/bin:/home/pix/bin:/usr/bin:/home/pi");
	CHECK(t && strstr(t, "that you may write: `/home/pi/.local/bin`, `/home/pi` (npm install -g"));
	CHECK(t && !strstr(t, "/home/pix/bin`") && !strstr(t, "Nothing can be installed"));
	free(t);
	t = policy_note_text(&cfg, NULL, &ll, NULL, "/usr/local/bin:/usr/bin");
	CHECK(t && strstr(t, "Others are not installed. Nothing can be installed from inside."));
	free(t);
}

int main(void)
{
	if (!mkdtemp(dir))
		return 1;
	test_append();
	test_installs();
	{
		char cmd[300];
		snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "left %s\n", dir);
	}
	return unit_done("test_policynote");
}
