/* config: the INI contract of DESIGN.md §8, parsed with inih and validated
 * before anything runs. */
#ifndef WARD_CONFIG_H
#define WARD_CONFIG_H

#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>

#include "landlock/landlock.h"
#include "mcp-bridge/allow.h"
#include "mcp-bridge/cred.h"
#include "mcp-bridge/tools.h"
#include "mcp-bridge/upstream.h"
#include "common/header.h"
#include "common/log.h"
#include "common/parse.h"
#include "seccomp/sysfilter.h"

#define WARD_DEFAULT_CONFIG "/etc/ward/ward.conf"
#define WARD_NSIG 65 /* signals 1..64 */
#define WARD_MAX_RLIMITS 16
#define WARD_MAX_ENV 256

enum restart_policy { RESTART_NEVER, RESTART_ON_FAILURE, RESTART_ALWAYS };
enum forward_target { FORWARD_CHILD, FORWARD_GROUP };
/* [landlock] egress: loopback (the guard binds every inet socket of the
 * agent to lo) or ports (Landlock's port rules only, on any address). */
enum egress_mode { EGRESS_LOOPBACK, EGRESS_PORTS };
/* [landlock] gvisor: under gVisor, which has no Landlock, a
 * hard_requirement is met by gVisor's own kernel standing in for the
 * host's (accept, the default) or not (refuse: ward does not start). */
enum gvisor_landlock { GVISOR_ACCEPT, GVISOR_REFUSE };

/* [route NAME] credential: a subscription's OAuth login, Pi's auth.json
 * (or ward-pi's copy of it), whose access token the bridge sends and
 * refreshes (mcp-bridge/refresh.h). Its token endpoint is the preset's. */
struct config_cred {
	char *path;	     /* absolute, as resolved */
	enum cred_format format; /* Pi's auth.json, or its mcp-auth.json for an MCP server's sign-in */
	const char *entry;   /* its key in the file: the provider's name, or the server's "mcp__NAME|URL" */
	const char *client_id, *token_host, *token_path;
	const char *key_header; /* the preset's key header, which the agent's request loses */
	struct upstream up;  /* tls:TOKEN_HOST.:443, public addresses only */
};

/* [route NAME]: one loopback listener relayed to one upstream. */
struct config_route {
	char *name;
	int line;     /* of the section header */
	unsigned port; /* listen = 127.0.0.1:PORT */
	struct upstream up;
	int has_up;
	int stream; /* protocol = stream: bytes both ways, no HTTP (methods..header unset) */
	int protocol_set;
	unsigned methods; /* http-parser method bits; 0 = POST GET DELETE */
	char *path;
	char *host;
	struct header *headers; /* a value, or a source read at start (@PATH, @fd:N) */
	int n_headers;
	char *tls_ca;  /* PEM bundle for a tls: upstream (default: the image's) */
	char *tls_pin; /* "sha256:HEX" of the upstream's certificate */
	char *provider;	    /* provider = NAME or ${VAR}, as written (providers.h) */
	char *provider_url; /* provider_url = URL or ${VAR}: openai-compatible */
	char *credential;   /* credential = PATH or ${VAR}, as written */
	struct config_cred *cred; /* resolved by providers_apply, or NULL */
	struct tool_rules tools;  /* tools = ..., deny_tools = ...: the MCP tools the agent may call (tools.h) */
};

/* [file NAME]: a private file handed in by the host (fd:N or a path),
 * written once for the agent at target, owned by the agent user. */
struct config_file {
	char *name;
	int line;
	char *source; /* fd:N or an absolute path */
	char *target;
	unsigned mode; /* default 0600 */
	int mode_set;
};

/* [proxy]: the egress proxy in the bridge (init/config/proxy.h). */
#define PROXY_MAX_RULES 256
#define PROXY_MAX_TUNNELS 4096
#define PROXY_DEFAULT_TUNNELS 256
#define PROXY_DEFAULT_BYTES ((uint64_t)1 << 30)
#define PROXY_DEFAULT_ASK_TIMEOUT_S 60
#define PROXY_DEFAULT_ASK_RATE 10
struct config_proxy {
	int has, line;
	unsigned port;		  /* listen = 127.0.0.1:PORT */
	struct allow_rule *allow; /* allow, then the presets' rules, duplicates dropped */
	int n_allow;
	char presets[64];	  /* the presets named, as "github npm" */
	unsigned methods;	  /* 1 << HTTP_CONNECT: tunnels; 1 << HTTP_GET...: plain http:// requests */
	unsigned max_tunnels;	  /* tunnels open at once */
	uint64_t max_bytes;	  /* per tunnel, both ways together; 0: no limit */
	int from_env, literal;	  /* allow/presets lines of a ${VAR}, of words written */
	/* ask = unix:PATH | vsock:CID:PORT: a host no rule allows is asked of
	 * the approver listening there (mcp-bridge/ask.h); unset: refused */
	int has_ask;
	struct upstream ask;
	int ask_terminal;	/* ask = terminal: PID 1 asks at its own terminal (asktty.h) */
	char *ask_store;	/* ask_store = PATH: where `always` answers at the terminal go, or NULL */
	unsigned ask_timeout_s; /* an unanswered question is a refusal after this */
	unsigned ask_rate;	/* new questions per minute, at most */
};

struct ward_config {
	char *path; /* NULL: no config file, ward is a plain init */

	/* [ward] */
	enum log_format log_format;
	enum log_level log_level;
	char *evidence; /* write the evidence JSON here, the agent held before its exec */
	char *log_copy; /* every log line also appended here (ward --denials reads it), or NULL */
	char *bridge_user; /* the bridge's own user */
	int bridge_user_line;

	/* [supervise] */
	uint64_t grace_ms;
	enum restart_policy restart;
	uint64_t restart_delay_ms;
	unsigned restart_limit; /* restarts per minute; 0 = no limit */
	int rewrite[WARD_NSIG]; /* by received signal: -1 as is, 0 drop, else new signal */
	enum forward_target forward_to;

	/* [agent] */
	int has_agent;
	char **command; /* NULL-terminated; NULL when not configured */
	char *cwd;
	char *policy_note; /* [agent] policy_note: where the agent's note on its sandbox is written */
	char *refusals;	   /* [agent] refusals: the agent's file of refused destinations (the guard's) */
	char *policy_note_add; /* [agent] policy_note_add: a file of the starter's, added to the note */
	int umask_set;
	unsigned umask;
	/* WARD_MAX_ENV slots each, allocated at the first entry: a config with
	 * none (a plain init's) carries no 4 KiB of NULLs on PID 1's stack */
	char **env; /* NAME=VALUE */
	int n_env;
	char **env_pass; /* NAME */
	int n_env_pass;
	char **agent_vars; /* NAME: env_pass's names from a ${VAR}, the agent's only (moved out of ward's environment) */
	int n_agent_vars;
	struct rlimit_value rlimits[WARD_MAX_RLIMITS];
	int n_rlimits;
	char **writable; /* directories checked writable (and not full) before the agent starts */
	int n_writable, writable_line;
	char *user; /* as written: name, uid or uid:gid */
	int user_line;
	int allow_root;

	/* [landlock] */
	int has_landlock;
	struct ll_policy landlock;
	enum egress_mode egress;
	enum gvisor_landlock gvisor;

	/* [seccomp] */
	int has_seccomp;
	struct sc_policy seccomp;

	/* [mcp] */
	int has_mcp, mcp_line;
	char *mcp_source, *mcp_target;
	struct upstream mcp_up;
	int mcp_has_up;	   /* upstream set (and not to ""): every server to it; else each by its URL */
	char *mcp_tls_ca;  /* the roots of the https servers by URL (NULL: the system's) */
	char *mcp_loopback; /* the directory of the host's loopback relays (PORT.sock), or NULL */
	char *mcp_auth;	    /* the host's mcp-auth.json: servers' OAuth sign-ins the bridge refreshes, or NULL */
	unsigned mcp_port; /* first bridge port for mcp.json servers */
	int mcp_optional;  /* required = no: a missing source file means no MCP */

	/* [route NAME] */
	struct config_route *routes;
	int n_routes;

	/* [file NAME] */
	struct config_file *files;
	int n_files;

	/* [proxy] */
	struct config_proxy proxy;
};

/* The settings of a config that sets nothing; read-only, so a plain
 * init (no config file) supervises with it and writes no config. */
extern const struct ward_config config_default;

void config_defaults(struct ward_config *cfg);

/* What one [route] holds, freed (config_free, and a provider route that
 * is not made). */
void config_route_free(struct config_route *r);

/* Parses FILE into cfg. On error prints one line
 * "ward: FILE:LINE: key: reason" and returns -1. */
int config_load(struct ward_config *cfg, const char *path);

/* Same, from a stream (the name is used in messages). */
int config_load_stream(struct ward_config *cfg, FILE *f, const char *name);

void config_free(struct ward_config *cfg);

/* Prints the effective settings as INI, every default spelled out. */
void config_print(const struct ward_config *cfg, FILE *out);

#endif
