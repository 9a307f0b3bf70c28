/* Unit tests for init/report/evidence.c: what the evidence says about PID 1's own
 * lock-down, which the kernel may refuse (the failure is not fatal, so the
 * evidence is where it shows). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

#include "init/config/config.h"
#include "init/report/evidence.h"
#include "seccomp/sysfilter.h"
#include "unit.h"

static json_t *evidence(const struct evidence_src *e)
{
	struct start_notes notes = { 0 };
	char *text = evidence_json(e, getpid(), &notes);
	json_t *j = text ? json_loads(text, 0, NULL) : NULL;

	free(text);
	return j;
}

static int has_degradation(json_t *j, const char *what)
{
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(j, "degradations"), i, v)
		if (strstr(json_string_value(v), what))
			return 1;
	return 0;
}

int main(void)
{
	struct ward_config cfg;
	struct sc_filter init;
	struct evidence_src e;
	char err[256];
	json_t *j;

	config_defaults(&cfg);
	memset(&e, 0, sizeof e);
	e.cfg = &cfg;
	e.fd = -1;
	CHECK(sc_build_init(&cfg.seccomp, 0, &init, err, sizeof err) == 0);
	e.sc_init = &init;

	/* the filter was not loaded: no hash claimed, a degradation instead */
	j = evidence(&e);
	CHECK(j != NULL);
	CHECK(json_object_get(json_object_get(j, "ward_self"), "status") != NULL);
	CHECK(json_object_get(json_object_get(j, "ward_self"), "seccomp_sha256") == NULL);
	CHECK(has_degradation(j, "ward itself: its own seccomp filter is not loaded"));
	CHECK(!has_degradation(j, "kept all its capabilities"));
	json_decref(j);

	/* the runtime: "linux" unless detected; gVisor's notes and the egress
	 * the namespace holds, as the sandbox records them */
	CHECK_STR(json_string_value(json_object_get(j = evidence(&e), "runtime")), "linux");
	json_decref(j);
	{
		struct runtime_info rt;
		memset(&rt, 0, sizeof rt);
		rt.gvisor = 1;
		rt.name = "gVisor";
		snprintf(rt.notes[0], sizeof rt.notes[0], "landlock: gVisor has no Landlock");
		rt.n_notes = 1;
		e.rt = &rt;
		e.egress_no_route = 1;
		j = evidence(&e);
		CHECK_STR(json_string_value(json_object_get(j, "runtime")), "gVisor");
		CHECK(has_degradation(j, "gVisor: landlock: gVisor has no Landlock"));
		CHECK(strstr(json_string_value(json_object_get(json_object_get(j, "egress"), "enforced_by")), "no route") !=
		      NULL);
		json_decref(j);
		e.rt = NULL;
		e.egress_no_route = 0;
	}

	/* loaded, capabilities kept */
	e.self_filter_loaded = 1;
	e.self_caps_kept = 1;
	j = evidence(&e);
	CHECK(j != NULL);
	CHECK(json_string_length(json_object_get(json_object_get(j, "ward_self"), "seccomp_sha256")) == 64);
	CHECK(!has_degradation(j, "not loaded"));
	CHECK(has_degradation(j, "ward itself: it kept all its capabilities"));
	json_decref(j);

	/* a Groups line longer than any fixed line buffer comes out whole */
	if (geteuid() == 0) {
		gid_t groups[300], saved[64];
		int nsaved = getgroups(64, saved);
		const char *g;
		size_t i, words = 0;

		for (i = 0; i < 300; i++)
			groups[i] = (gid_t)(100000 + i);
		CHECK(setgroups(300, groups) == 0);
		j = evidence(&e);
		g = json_string_value(json_object_get(json_object_get(json_object_get(j, "ward_self"), "status"), "Groups"));
		CHECK(g != NULL && strlen(g) > 2000);
		for (i = 0; g && g[i]; i++)
			if ((i == 0 || g[i - 1] == ' ') && g[i] != ' ')
				words++;
		CHECK(words == 300);
		CHECK(g && strstr(g, "100299") != NULL);
		json_decref(j);
		CHECK(nsaved >= 0 && setgroups((size_t)nsaved, saved) == 0);
	} else {
		SKIP(5, "the long Groups line needs root (setgroups)");
	}

	/* the evidence file: a FIFO planted there does not block, a file
	 * others may write (an earlier agent's) is refused */
	{
		char dir[] = "/tmp/ward-ev-XXXXXX", path[64];
		struct evidence_src f;
		CHECK(mkdtemp(dir) != NULL);
		snprintf(path, sizeof path, "%s/e.json", dir);
		memset(&f, 0, sizeof f);
		f.path = path;
		CHECK(mkfifo(path, 0600) == 0 && evidence_open(&f) == -EINVAL && f.fd == -1);
		unlink(path);
		CHECK(close(open(path, O_WRONLY | O_CREAT, 0600)) == 0 && chmod(path, 0666) == 0 &&
		      evidence_open(&f) == -EPERM && f.fd == -1);
		CHECK(chmod(path, 0644) == 0 && evidence_open(&f) == 0 && f.fd >= 0 &&
		      (fcntl(f.fd, F_GETFL) & O_NONBLOCK) == 0);
		if (f.fd >= 0)
			close(f.fd);
		unlink(path);
		rmdir(dir);
	}

	sc_free(&init);
	config_free(&cfg);
	return unit_done("test_evidence");
}
