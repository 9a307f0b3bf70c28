#define _GNU_SOURCE
#include "init/sandbox/sandbox.h"

#include <cap-ng.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parse.h"
#include "init/sandbox/preflight.h"
#include "init/sandbox/reach.h"
#include "init/report/policynote.h"
#include "init/sandbox/privfiles.h"
#include "init/sandbox/privwrite.h"

static int resolve_user(struct sandbox *sb, const struct ward_config *cfg, int check)
{
	const char *why = NULL;

	if (!cfg->user) {
		/* allow_root = yes without a user: confine ward's own uid */
		sb->confine.user.uid = getuid();
		sb->confine.user.gid = getgid();
		sb->confine.user.groups[0] = getgid();
		sb->confine.user.ngroups = 1;
		snprintf(sb->confine.user.name, sizeof sb->confine.user.name, "%s",
			 getuid() == 0 ? "root" : "");
	} else if (users_resolve(cfg->user, "/etc/passwd", "/etc/group", &sb->confine.user, &why) != 0) {
		log_error("%s:%d: user: '%s': %s", cfg->path, cfg->user_line, cfg->user, why);
		return 2;
	}
	if (sb->confine.user.uid == 0 && !cfg->allow_root) {
		log_error("%s:%d: user: '%s': that is uid 0; set allow_root = yes to run the agent as "
			  "root (without capabilities)", cfg->path, cfg->user_line, cfg->user);
		return 2;
	}
	if (geteuid() != 0) {
		/* Started without root (Kubernetes' restricted pods, OpenShift's
		 * arbitrary uid, docker --user): the agent runs as ward's own
		 * uid, which is all a process without CAP_SETUID can give it.
		 * A config that names another user says what a root start does. */
		struct user_ids named = sb->confine.user;
		users_self(&sb->confine.user, "/etc/passwd");
		sb->unprivileged = 1;
		if (cfg->user && named.uid != sb->confine.user.uid)
			log_warn("ward started as uid %d, not root: the agent runs as uid %d too, not as %s (uid %d) "
				 "as a root start would run it", (int)getuid(), (int)getuid(), cfg->user, (int)named.uid);
		return 0;
	}
	/* A root agent keeps no capability through exec only once the
	 * securebits are locked, which takes CAP_SETPCAP: say so now, not
	 * from the agent's child after the bridge and the files. */
	if (!check && sb->confine.user.uid == 0 && !cap_effective(CAP_SETPCAP)) {
		log_error("cannot run the agent as root: the runtime gave ward no CAP_SETPCAP, which locking "
			  "the securebits takes (else its exec would give root its capabilities back); add it "
			  "or name an unprivileged user");
		return 3;
	}
	/* A runtime may start ward as root yet without the capabilities to
	 * change user (runc's default spec grants neither): say so now. */
	if (!check && sb->confine.user.uid != getuid() &&
	    (!cap_effective(CAP_SETUID) || !cap_effective(CAP_SETGID))) {
		log_error("cannot switch the agent to uid %d: the runtime gave ward no CAP_SETUID/CAP_SETGID "
			  "(add them to the container's capabilities, as docker and podman do)",
			  (int)sb->confine.user.uid);
		return 3;
	}
	return 0;
}

/* [mcp] (whose mcp.json may hold headers) or a route with a header */
static int has_secrets(const struct ward_config *cfg)
{
	int i;

	for (i = 0; i < cfg->n_routes; i++)
		if (cfg->routes[i].n_headers)
			return 1;
	return cfg->has_mcp;
}

void sandbox_init(struct sandbox *sb)
{
	memset(sb, 0, sizeof *sb);
	sb->ll.fd = -1;
	sb->ev.fd = -1;
	sb->bridge.ll.fd = -1;
	guardproc_init(&sb->guard);
}

int sandbox_egress(const struct ward_config *cfg, int confining)
{
	if (!confining || !cfg->has_landlock || cfg->landlock.mode == LL_OFF || cfg->egress != EGRESS_LOOPBACK)
		return 0;
	return cfg->landlock.mode == LL_HARD ? 2 : 1;
}

/* gVisor has no Landlock. A hard_requirement is met by gVisor's own
 * kernel standing in for the host's, unless [landlock] gvisor = refuse:
 * then ward does not start, and says which setting would let it. The
 * rules are still built (best effort), so --check and the evidence show
 * what they would have been. */
static int gvisor_landlock(struct sandbox *sb, const struct ward_config *cfg, struct ll_policy *pol)
{
	if (!sb->rt.gvisor || ll_abi() != 0 || pol->mode != LL_HARD)
		return 0;
	if (cfg->gvisor == GVISOR_REFUSE) {
		log_error("landlock: gVisor has no Landlock and [landlock] gvisor = refuse: set gvisor = accept to let "
			  "gVisor's own kernel stand in for the host's, or run the image under runc or crun");
		return 3;
	}
	pol->mode = LL_BEST_EFFORT;
	runtime_note(&sb->rt, "landlock: gVisor has no Landlock; its own kernel stands in for the host's "
			      "([landlock] mode = hard_requirement, gvisor = accept): the agent reaches every file of "
			      "the container its user may, and the secrets are kept by their owners and modes");
	return 0;
}

/* gVisor has no seccomp user notification, so no egress guard, and no
 * Landlock, so no port rules: the agent's egress stays held to the
 * sandbox only where its network namespace has no way out (runsc
 * --network=none, docker's --network none); anywhere else ward does not
 * start, and says the flag that fixes it. */
static int gvisor_egress(struct sandbox *sb)
{
	char dev[128];
	int r = runtime_route_out(dev, sizeof dev);

	if (r != 0) {
		log_error("egress: gVisor has no seccomp user notification, so no egress guard, nor Landlock's port "
			  "rules, and this network namespace %s%s: run the container with --network none (docker, "
			  "podman) or runsc --network=none", r > 0 ? "has a route out through " : "cannot be read: ", dev);
		return 3;
	}
	sb->confine.egress = 0;
	sb->ev.egress_no_route = 1;
	runtime_note(&sb->rt, "egress: no guard (gVisor has no seccomp user notification); the network namespace "
			      "has no route but the loopback's, so the agent reaches only the sandbox's own addresses");
	return 0;
}

/* The guard in PID 1, and the agent's file of what it refuses ([agent]
 * refusals): root's, readable by the agent's group (its own where ward
 * runs as the agent's user), so the agent reads it and cannot write it. */
static int prepare_guard(struct sandbox *sb, const struct ward_config *cfg)
{
	const struct user_ids *u = &sb->confine.user;
	char err[512];
	int fd = -1;

	/* a file that cannot be made leaves the refusals to ward's log: the
	 * agent is refused all the same, it only reads no reason */
	if (cfg->refusals) {
		fd = private_file_append(cfg->refusals, 0640, geteuid(), u->gid, u->uid, u->gid, err, sizeof err);
		if (fd < 0)
			log_warn("%s: refusals: %s: the agent's refusals go to ward's log only", cfg->path, err);
	}
	return guardproc_prepare(&sb->guard, u, sb->confine.port_range, fd);
}

/* The guard's sockets kept off the tcp: and tls: upstreams' ports
 * (ephemeral.h). A kernel that cannot: hard_requirement refuses, as for
 * the guard itself; best_effort says so (and the evidence). */
static int keep_off_upstreams(struct sandbox *sb, int check)
{
	int rc = ephemeral_prepare(&sb->eph, &sb->routes);

	if (!rc && sb->eph.unreadable) {
		if (sb->confine.egress > 1 && !check) {
			log_error("egress: the ephemeral port range (/proc/sys/net/ipv4/ip_local_port_range) cannot be "
				  "read (%s): the agent's listen() could not be kept off tcp: upstream port %u",
				  strerror(sb->eph.unreadable), sb->eph.kept[0]);
			return 3;
		}
		log_warn("egress: the ephemeral port range cannot be read (%s): %s", strerror(sb->eph.unreadable),
			 check ? "a start reads it again" : "the agent's listen() is not kept off the tcp: upstreams' ports");
		return 0;
	}
	if (rc || !sb->eph.unsupported)
		return rc;
	if (sb->confine.egress > 1) {
		log_error("egress: upstream port %u is in the ephemeral range (%u-%u) and this kernel cannot keep "
			  "the agent's listen() off it (IP_LOCAL_PORT_RANGE needs Linux 6.3): move the upstream to "
			  "a port outside the range, or set [landlock] mode = best_effort", sb->eph.kept[0],
			  sb->eph.ns_lo, sb->eph.ns_hi);
		return 3;
	}
	log_warn("egress: upstream port %u is in the ephemeral range (%u-%u) and this kernel cannot keep the "
		 "agent's listen() off it (Linux 6.3): the agent could take it while the upstream is down",
		 sb->eph.kept[0], sb->eph.ns_lo, sb->eph.ns_hi);
	return 0;
}

/* [agent] policy_note, written as root for the agent (privwrite.h). */
static int write_policy_note(const struct sandbox *sb, const struct ward_config *cfg)
{
	const char *path_env = "/usr/local/bin:/usr/bin:/bin";
	char err[512], *text;
	int i, rc;

	for (i = 0; i < cfg->n_env; i++)
		if (strncmp(cfg->env[i], "PATH=", 5) == 0)
			path_env = cfg->env[i] + 5;
	text = policy_note_text(cfg, sb->confining ? &sb->confine : NULL, sb->confine.ll, &sb->routes, path_env);
	if (!text)
		return 3;
	if (cfg->policy_note_add && policy_note_append(&text, cfg->policy_note_add, err, sizeof err) != 0) {
		log_error("%s: %s", cfg->path, err);
		free(text);
		return 3;
	}
	rc = private_file_write(cfg->policy_note, text, strlen(text), 0600, sb->confining ? sb->confine.user.uid : getuid(),
				sb->confining ? sb->confine.user.gid : getgid(), err, sizeof err);
	free(text);
	if (rc != 0) {
		log_error("%s: policy_note: %s", cfg->path, err);
		return 3;
	}
	return 0;
}

int sandbox_prepare(struct sandbox *sb, const struct ward_config *cfg, int vm, int check)
{
	struct privfiles pf;
	char err[1024];
	int rc, i;

	sb->ev.cfg = cfg;
	runtime_detect(&sb->rt);
	sb->ev.rt = &sb->rt;
	if ((rc = preflight_rlimits(cfg)) != 0 || (rc = reach_private(cfg)) != 0)
		return rc;
	if (cfg->cwd) {
		/* else found only by the agent's chdir, after the bridge and the
		 * private files (whether the agent may enter it is its check) */
		struct stat st;
		const char *why = stat(cfg->cwd, &st) != 0 ? strerror(errno)
				  : !S_ISDIR(st.st_mode)	      ? "not a directory"
								      : NULL;
		if (why) {
			log_error("%s: [agent] cwd = %s: %s", cfg->path, cfg->cwd, why);
			return 2;
		}
	}
	sb->confining = cfg->user || ((cfg->has_landlock || cfg->has_seccomp) && cfg->allow_root);
	if (sb->confining) {
		if ((rc = resolve_user(sb, cfg, check)) != 0)
			return rc;
		sb->ev.unprivileged = sb->unprivileged;
		/* without root, the agent is ward's uid: ward (and the bridge
		 * forked from it) not dumpable, so that uid cannot ptrace them
		 * or read their /proc/PID/environ, mem, fd (the kernel makes
		 * those root's) */
		if (sb->unprivileged && !check && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
			log_error("cannot make ward non-dumpable: %s", strerror(errno));
			return 3;
		}
		if (sb->confine.user.uid == 0 && has_secrets(cfg) &&
		    (!cfg->has_landlock || cfg->landlock.mode == LL_OFF || ll_abi() < 1)) {
			/* uid 0 owns root's files, the secrets' among them: only
			 * Landlock keeps a root agent from them */
			log_error("%s: a root agent (allow_root) with the bridge's secrets ([mcp], a route header) "
				  "needs Landlock in force: give the agent a user of its own", cfg->path);
			return 2;
		}
		sb->confine.enabled = 1;
		sb->ev.confine = &sb->confine;
	}
	if (cfg->has_seccomp && cfg->seccomp.enabled) {
		if (sc_build_agent(&cfg->seccomp, &sb->sc, err, sizeof err) != 0 ||
		    sc_build_init(&cfg->seccomp, vm, &sb->sc_init, err, sizeof err) != 0) {
			log_error("%s", err);
			return 3;
		}
		sb->confine.sc = &sb->sc;
		sb->ev.sc = &sb->sc;
		sb->ev.sc_init = &sb->sc_init;
	}
	memset(&pf, 0, sizeof pf);
	rc = 0;
	if (check && (cfg->n_routes || cfg->has_mcp)) {
		/* [mcp]'s routes come from mcp.json, read at run time only */
		struct user_ids bu;
		if ((rc = bridgeproc_user(cfg, sb->confining ? &sb->confine.user : NULL, &bu)) != 0)
			return rc;
		if ((rc = privfiles_check_mcp(&pf, cfg)) != 0)
			goto out;
	}
	if (!check)
		rc = privfiles_read(&pf, cfg);
	/* the route table: [route]s, then mcp.json's servers */
	if (!rc)
		rc = routes_build(&sb->routes, cfg, &pf.mcp_res);
	if (rc)
		goto out;
	if (!check) {
		/* every source read and every route ready before a target is
		 * written (Landlock rules below may name the targets); a step
		 * that fails after the write removes them again */
		rc = bridgeproc_prepare(&sb->bridge, &sb->routes, cfg, sb->confining ? &sb->confine.user : NULL);
		if (!rc)
			rc = privfiles_write(&pf, cfg, sb->confining ? sb->confine.user.uid : getuid(),
					     sb->confining ? sb->confine.user.gid : getgid());
		if (rc)
			goto out;
	}
	if (cfg->has_landlock && cfg->landlock.mode != LL_OFF) {
		/* the agent may connect to the bridge's ports */
		struct ll_policy pol = cfg->landlock;
		struct port_range *ports = calloc((size_t)pol.n_connect + (size_t)sb->routes.n + 1, sizeof *ports);
		if (!ports) {
			rc = 3;
			goto out;
		}
		if (pol.n_connect)
			memcpy(ports, pol.connect, (size_t)pol.n_connect * sizeof *ports);
		for (i = 0; i < sb->routes.n; i++)
			ports[pol.n_connect++] = (struct port_range){ (uint16_t)sb->routes.v[i].port,
								      (uint16_t)sb->routes.v[i].port };
		pol.connect = ports;
		if ((rc = gvisor_landlock(sb, cfg, &pol)) != 0) {
			free(ports);
			goto out;
		}
		if (sb->unprivileged) {
			/* sharing ward's uid, only Landlock's scopes keep the agent
			 * from signalling ward and the bridge (ABI 6) */
			if ((pol.scopes & (LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX)) !=
			    (LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX))
				log_info("landlock: scope = abstract signal added: ward started without root, and the "
					 "agent shares its uid");
			pol.scopes |= LL_SCOPE_SIGNAL | LL_SCOPE_ABSTRACT_UNIX;
			if (pol.mode == LL_HARD && ll_abi() < 6) {
				log_error("landlock: ward started without root (uid %d): the agent shares its uid with "
					  "ward and the bridge, and only Landlock's scopes (ABI 6, Linux 6.12) keep it "
					  "from signalling them; this kernel has ABI %d (hard_requirement). Start ward "
					  "as root, or set [landlock] mode = best_effort", (int)getuid(), ll_abi());
				free(ports);
				rc = 3;
				goto out;
			}
		}
		rc = ll_build(&pol, ll_abi(), &sb->ll, err, sizeof err);
		free(ports);
		if (rc != 0) {
			log_error("landlock: %s", err);
			rc = 3;
			goto out;
		}
		for (i = 0; i < sb->ll.n_notes; i++)
			log_warn("landlock: %s", sb->ll.notes[i]);
		/* log_level = debug: every rule, so a denial can be traced to
		 * the rule that is missing (ward --explain PATH says the same) */
		for (i = 0; !check && i < sb->ll.n_rules; i++) {
			char names[512];
			log_debug("landlock rule: %s: %s", sb->ll.rules[i].path,
				  ll_fs_names(sb->ll.rules[i].access, names, sizeof names));
		}
		if (sb->ll.fd >= 0)
			sb->confine.ll = &sb->ll;
		sb->ev.ll = &sb->ll;
	}
	/* the agent's inet sockets are made by the guard, held to lo */
	sb->confine.egress = sandbox_egress(cfg, sb->confining);
	/* egress = ports too: its port rules are Landlock's, which gVisor lacks */
	if (sb->rt.gvisor && sb->confining && cfg->has_landlock && cfg->landlock.mode != LL_OFF &&
	    (rc = gvisor_egress(sb)) != 0)
		goto out;
	/* the agent's note on its sandbox, from the rules just built (the
	 * egress guard's among them) */
	if (!check && cfg->policy_note && (rc = write_policy_note(sb, cfg)) != 0)
		goto out;
	if (sb->confine.egress && (rc = keep_off_upstreams(sb, check)) != 0)
		goto out;
	sb->confine.port_range = sb->confine.egress ? ephemeral_sockopt(&sb->eph) : 0;
	sb->ev.guard = &sb->guard;
	sb->ev.eph = &sb->eph;
	if ((rc = preflight_writable(sb->confining ? &sb->confine : NULL, &sb->ll, cfg, check)) != 0 ||
	    (rc = reach_private_modes(sb->confining ? &sb->confine : NULL, &sb->ll, cfg, check)) != 0 ||
	    (rc = reach_upstreams(sb->confining ? &sb->confine : NULL, &sb->ll, &sb->routes, cfg, check)) != 0)
		goto out;
	/* after the checks of what the agent must write: their words name a
	 * read-only filesystem better than the refusals file's would */
	if (sb->confine.egress && !check && (rc = prepare_guard(sb, cfg)) != 0)
		goto out;
	sb->ev.path = cfg->evidence;
	if (!check && (rc = evidence_open(&sb->ev)) != 0) {
		log_error("evidence: %s: %s", cfg->evidence,
			  rc == -EINVAL ? "not a regular file"
			  : rc == -EPERM ? "not ward's own file, or writable by others (an earlier agent's?); remove it"
					 : strerror(-rc));
		rc = 3;
	}
out:
	if (rc)
		privfiles_unwrite(cfg, pf.written);
	else
		sb->files_written = pf.written;
	privfiles_free(&pf);
	return rc;
}

void sandbox_unwrite(struct sandbox *sb, const struct ward_config *cfg)
{
	privfiles_unwrite(cfg, sb->files_written);
	sb->files_written = 0;
}

void sandbox_print(const struct sandbox *sb, const struct ward_config *cfg, FILE *out)
{
	int i;

	fputs("\n; in force on this machine\n", out);
	if (sb->confining)
		fprintf(out, "; agent user: uid %d gid %d (%s), %d group(s)\n", (int)sb->confine.user.uid,
			(int)sb->confine.user.gid, sb->confine.user.name[0] ? sb->confine.user.name : "no passwd entry",
			sb->confine.user.ngroups);
	if (cfg->has_landlock && cfg->landlock.mode != LL_OFF) {
		char names[512];
		fprintf(out, "; landlock: kernel ABI %d, %d path rule(s), %d port rule(s)\n", sb->ll.abi,
			sb->ll.n_rules, sb->ll.n_net_rules);
		fprintf(out, "; landlock handles: %s%s\n", ll_fs_names(sb->ll.handled_fs, names, sizeof names),
			sb->ll.handled_net ? ",bind_tcp,connect_tcp" : "");
		for (i = 0; i < sb->ll.n_notes; i++)
			fprintf(out, "; warning: landlock: %s\n", sb->ll.notes[i]);
	}
	if (sb->sc.prog)
		fprintf(out, "; seccomp: %d rules, %u BPF instructions\n", sb->sc.n_rules, sb->sc.len);
}

/* /proc/sys/kernel/yama/ptrace_scope, or -1 (no Yama) */
static int yama_scope(void)
{
	char c = 0;
	int fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c >= '0' && c <= '3' ? c - '0' : -1;
}

void sandbox_lock_pid1(struct sandbox *sb, const struct ward_config *cfg, int vm)
{
	int rc;

	if (!sb->confining && !sb->bridge.active)
		return;
	/* What supervision still needs: signalling the agent's tree (another
	 * uid) and, for restarts, what the child needs to drop to the agent
	 * user again. */
	static const int keep[] = { CAP_KILL,	      CAP_SETUID,   CAP_SETGID,	    CAP_SETPCAP,
				    CAP_SYS_RESOURCE, CAP_SYS_BOOT, CAP_AUDIT_READ, CAP_SYS_PTRACE };
	/* the kernel delivers audit records only to readers that keep
	 * CAP_AUDIT_READ (log_level = debug, denials reported) */
	int want[8] = { 1, 0, 0, 0, 0, vm, sb->keep_audit_read, 0 }, k;

	/* restarting the agent or the bridge means dropping to a user again;
	 * the guard makes the agent's sockets and reads its addresses as the
	 * agent's user (fsuid, fsgid) */
	if (cfg->restart != RESTART_NEVER || sb->bridge.active || sb->guard.active)
		want[1] = want[2] = want[3] = 1;
	/* only agent restarts set rlimits, and may raise them */
	want[4] = cfg->restart != RESTART_NEVER && cfg->n_rlimits;
	/* Yama's scope 2 lets only CAP_SYS_PTRACE read another's memory, an
	 * ancestor's read too: the guard's check of a connect's address
	 * (init/egress/peek.h) needs it there, and only there */
	want[7] = sb->guard.active && yama_scope() == 2;
	capng_clear(CAPNG_SELECT_CAPS);
	/* keep only what the runtime gave: asking for more makes capset fail */
	for (k = 0; k < 8; k++)
		if (want[k] && cap_effective(keep[k]))
			capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, keep[k]);
	/* CAPS only: PID 1 never execs, so its bounding set gives nothing, and
	 * without CAP_SETPCAP libcap-ng would complain through syslog(3). */
	/* a failure is not fatal (the agent's confinement does not depend on
	 * it) but the evidence lists it under degradations */
	if (capng_apply(CAPNG_SELECT_CAPS) != 0) {
		log_warn("cannot drop ward's own capabilities");
		sb->ev.self_caps_kept = 1;
	}
	if (sb->sc_init.prog) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
			log_warn("cannot set no_new_privs on ward itself: %s", strerror(errno));
		else if ((rc = sc_load(&sb->sc_init)) != 0)
			log_warn("cannot load ward's own seccomp filter: %s", strerror(-rc));
		else
			sb->ev.self_filter_loaded = 1;
	}
}

void sandbox_free(struct sandbox *sb)
{
	bridgeproc_free(&sb->bridge);
	guardproc_free(&sb->guard);
	routes_free(&sb->routes);
	if (sb->ev.fd >= 0)
		close(sb->ev.fd);
	ll_free(&sb->ll);
	sc_free(&sb->sc);
	sc_free(&sb->sc_init);
	sandbox_init(sb);
}
