#define _GNU_SOURCE
#include "init/supervise/procs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct proc {
	pid_t pid, ppid;
	signed char mark; /* 0 unknown, 1 descendant, -1 not */
};

pid_t stat_ppid(const char *line)
{
	/* "pid (comm) S ppid ...": comm may hold anything, so look for the last ')' */
	const char *p = strrchr(line, ')');
	long ppid;
	char *end;

	if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
		return -1;
	errno = 0;
	ppid = strtol(p + 4, &end, 10);
	if (errno || end == p + 4 || ppid < 0)
		return -1;
	return (pid_t)ppid;
}

static int read_ppid(int dirfd, const char *name, pid_t *ppid)
{
	char path[64], buf[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof path, "%s/stat", name);
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*ppid = stat_ppid(buf);
	return *ppid < 0 ? -1 : 0;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static struct proc *find(struct proc *v, size_t n, pid_t pid)
{
	struct proc key = { pid, 0, 0 };
	return bsearch(&key, v, n, sizeof *v, cmp_pid);
}

static int is_kept(pid_t pid, const pid_t *keep, int n_keep)
{
	int i;
	for (i = 0; i < n_keep; i++)
		if (keep[i] == pid)
			return 1;
	return 0;
}

/* Marks v[i] by walking up its parent chain; every node on the way gets
 * the answer too, so the whole table costs O(n log n). */
static int classify(struct proc *v, size_t n, struct proc *p, pid_t root, const pid_t *keep,
		    int n_keep)
{
	struct proc *chain[4096];
	int depth = 0, mark = -1, i;

	while (p && p->mark == 0 && depth < (int)(sizeof chain / sizeof chain[0])) {
		chain[depth++] = p;
		if (is_kept(p->pid, keep, n_keep)) {
			mark = -1;
			p = NULL;
			break;
		}
		if (p->ppid == root) {
			mark = 1;
			p = NULL;
			break;
		}
		p = find(v, n, p->ppid);
	}
	if (p)
		mark = p->mark ? p->mark : -1;
	for (i = 0; i < depth; i++)
		chain[i]->mark = (signed char)mark;
	return mark;
}

int signal_descendants(pid_t root, int sig, const pid_t *keep, int n_keep)
{
	struct proc *v = NULL;
	size_t n = 0, cap = 0, i;
	struct dirent *de;
	int dfd, count = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return -1;
	dfd = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		pid_t pid, ppid;
		char *end;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)strtol(de->d_name, &end, 10);
		if (*end || pid == root || read_ppid(dfd, de->d_name, &ppid) != 0)
			continue;
		if (n == cap) {
			struct proc *nv;
			cap = cap ? cap * 2 : 256;
			nv = realloc(v, cap * sizeof *v);
			if (!nv)
				break;
			v = nv;
		}
		v[n].pid = pid;
		v[n].ppid = ppid;
		v[n].mark = 0;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_pid);
	for (i = 0; i < n; i++) {
		if (classify(v, n, &v[i], root, keep, n_keep) == 1 && kill(v[i].pid, sig) == 0)
			count++;
	}
	free(v);
	return count;
}
