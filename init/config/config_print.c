/* config_print: `ward --check --ini`, the effective settings written back
 * in the config file's syntax, every default spelled out, no secret
 * printed. What is not a setting (where a value comes from, a hidden
 * header value's place) is a comment. */
#define _GNU_SOURCE
#include "init/config/config.h"
#include "init/config/names.h"

#include <string.h>

#include "mcp-bridge/http.h"
#include "common/parse.h"

static void print_rlim(FILE *out, rlim_t v)
{
	if (v == RLIM_INFINITY)
		fputs("unlimited", out);
	else
		fprintf(out, "%llu", (unsigned long long)v);
}

/* A word as split_words() reads it back: quoted when it holds a blank, a
 * quote, a backslash, or is empty ('\'' for a quote inside). */
static void print_word(FILE *out, const char *w)
{
	if (*w && !strpbrk(w, " \t'\"\\")) {
		fputs(w, out);
		return;
	}
	fputc('\'', out);
	for (; *w; w++)
		if (*w == '\'')
			fputs("'\\''", out);
		else
			fputc(*w, out);
	fputc('\'', out);
}

/* how many bytes print_word() writes for w */
static size_t word_width(const char *w)
{
	size_t n = strlen(w), quotes = 0;

	if (*w && !strpbrk(w, " \t'\"\\"))
		return n;
	for (; *w; w++)
		quotes += *w == '\'';
	return n + 2 + 3 * quotes;
}

static void print_ports(FILE *out, const char *key, const struct port_range *v, int n)
{
	int i;

	fprintf(out, "%s =", key);
	for (i = 0; i < n; i++) {
		if (v[i].lo == v[i].hi)
			fprintf(out, " %u", v[i].lo);
		else
			fprintf(out, " %u-%u", v[i].lo, v[i].hi);
	}
	fputc('\n', out);
}

void config_print(const struct ward_config *cfg, FILE *out)
{
	char b1[32], b2[32];
	int i;

	fprintf(out, "; effective settings%s%s\n", cfg->path ? " from " : " (no config file)",
		cfg->path ? cfg->path : "");
	fprintf(out, "[ward]\nlog_format = %s\nlog_level = %s\n",
		log_format_names[cfg->log_format], log_level_names[cfg->log_level]);
	if (cfg->evidence)
		fprintf(out, "evidence = %s\n", cfg->evidence);
	if (cfg->log_copy)
		fprintf(out, "log_copy = %s\n", cfg->log_copy);
	if (cfg->bridge_user)
		fprintf(out, "bridge_user = %s\n", cfg->bridge_user);
	else if (cfg->n_routes || cfg->has_mcp)
		fputs("; bridge_user: " BRIDGE_USER_DEFAULT "\n", out);
	fprintf(out, "\n[supervise]\ngrace = %s\nrestart = %s\nrestart_delay = %s\n",
		fmt_duration(cfg->grace_ms, b1, sizeof b1), restart_names[cfg->restart],
		fmt_duration(cfg->restart_delay_ms, b2, sizeof b2));
	fprintf(out, "restart_limit = %u\nforward_to = %s\n", cfg->restart_limit,
		forward_names[cfg->forward_to]);
	for (i = 1; i < WARD_NSIG; i++) {
		if (cfg->rewrite[i] < 0)
			continue;
		fprintf(out, "signal_rewrite = %s:%s\n", signal_name(i, b1, sizeof b1),
			cfg->rewrite[i] ? signal_name(cfg->rewrite[i], b2, sizeof b2) : "0");
	}
	if (cfg->has_agent) {
		fputs("\n[agent]\n", out);
	} else {
		/* the section alone changes the agent's start (environment,
		 * descriptors, signals): not written where the file has none */
		fputs("\n; [agent] absent: the command line's command, ward's environment and descriptors\n", out);
	}
	if (cfg->command) {
		/* continuation lines keep each line within the reader's limit */
		size_t col = strlen("command =");
		fputs("command =", out);
		for (i = 0; cfg->command[i]; i++) {
			size_t w = word_width(cfg->command[i]);
			if (col > strlen("command =") && col + 1 + w > 100) {
				fputs("\n   ", out);
				col = 3;
			}
			fputc(' ', out);
			print_word(out, cfg->command[i]);
			col += 1 + w;
		}
		fputc('\n', out);
	} else {
		fputs("; command: none configured, taken from the command line\n", out);
	}
	if (cfg->cwd)
		fprintf(out, "cwd = %s\n", cfg->cwd);
	else
		fputs("; cwd: the directory ward starts in\n", out);
	if (cfg->umask_set)
		fprintf(out, "umask = %04o\n", cfg->umask);
	else
		fputs("; umask: inherited\n", out);
	if (cfg->has_agent) {
		for (i = 0; i < cfg->n_env; i++)
			fprintf(out, "env = %s\n", cfg->env[i]);
		for (i = 0; i < cfg->n_env_pass; i++)
			fprintf(out, "env_pass = %s\n", cfg->env_pass[i]);
		if (!cfg->n_env && !cfg->n_env_pass)
			fputs("; environment: empty ([agent] is set and lists no env or env_pass)\n", out);
	} else {
		fputs("; environment: ward's own, passed through (no [agent] section)\n", out);
	}
	for (i = 0; i < cfg->n_rlimits; i++) {
		fprintf(out, "rlimit_%s = ", rlimit_name(cfg->rlimits[i].resource));
		print_rlim(out, cfg->rlimits[i].soft);
		fputc(':', out);
		print_rlim(out, cfg->rlimits[i].hard);
		fputc('\n', out);
	}
	for (i = 0; i < cfg->n_writable; i++)
		fprintf(out, "writable = %s\n", cfg->writable[i]);
	if (cfg->policy_note)
		fprintf(out, "policy_note = %s\n", cfg->policy_note);
	if (cfg->policy_note_add)
		fprintf(out, "policy_note_add = %s\n", cfg->policy_note_add);
	if (cfg->refusals)
		fprintf(out, "refusals = %s\n", cfg->refusals);
	if (cfg->user)
		fprintf(out, "user = %s\n", cfg->user);
	else
		fputs("; user: ward's own (no privilege drop)\n", out);
	if (cfg->has_agent)
		fprintf(out, "allow_root = %s\n", cfg->allow_root ? "yes" : "no");

	if (!cfg->has_landlock) {
		fputs("\n; [landlock] absent: the filesystem and network are not confined\n", out);
	} else {
		const struct ll_policy *ll = &cfg->landlock;
		fprintf(out, "\n[landlock]\nmode = %s\n", ll_mode_names[ll->mode]);
		for (i = 0; i < ll->n_read; i++) {
			fputs("read = ", out);
			print_word(out, ll->read[i]);
			fputc('\n', out);
		}
		for (i = 0; i < ll->n_write; i++) {
			fputs("write = ", out);
			print_word(out, ll->write[i]);
			fputc('\n', out);
		}
		print_ports(out, "connect", ll->connect, ll->n_connect);
		print_ports(out, "bind", ll->bind, ll->n_bind);
		if (ll->scopes)
			fprintf(out, "scope =%s%s\n", ll->scopes & LL_SCOPE_ABSTRACT_UNIX ? " abstract" : "",
				ll->scopes & LL_SCOPE_SIGNAL ? " signal" : "");
		else
			fputs("; scope: none\n", out);
		fprintf(out, "egress = %s\n", egress_names[cfg->egress]);
		fprintf(out, "gvisor = %s\n", gvisor_names[cfg->gvisor]);
	}
	if (!cfg->has_seccomp) {
		fputs("\n; [seccomp] absent: no system call filter\n", out);
	} else {
		fprintf(out, "\n[seccomp]\nmode = %s\n", cfg->seccomp.enabled ? "default" : "off");
		for (i = 0; i < cfg->seccomp.n_deny; i++)
			fprintf(out, "deny = %s\n", cfg->seccomp.deny[i]);
		for (i = 0; i < cfg->seccomp.n_allow; i++)
			fprintf(out, "allow = %s\n", cfg->seccomp.allow[i]);
	}
	for (i = 0; i < cfg->n_routes; i++) {
		const struct config_route *r = &cfg->routes[i];
		int m, h;
		fprintf(out, "\n[route %s]\nlisten = 127.0.0.1:%u\nupstream = %s\n", r->name, r->port, r->up.desc);
		if (r->stream) {
			fprintf(out, "protocol = stream\n");
			continue;
		}
		fprintf(out, "methods =");
		for (m = 0; m < 32; m++)
			if (r->methods & (1u << m))
				fprintf(out, " %s", http_method_str((enum http_method)m));
		fprintf(out, "\npath = %s\nhost = %s\n", r->path, r->host ? r->host : r->up.default_host);
		for (h = 0; h < r->n_headers; h++)
			/* never print a secret: only where it comes from */
			fprintf(out, "header = %s: %s%s%s\n", r->headers[h].name,
				r->headers[h].source && r->headers[h].value ? r->headers[h].value : "",
				r->headers[h].source ? "@" : "",
				r->headers[h].source ? r->headers[h].source : "(value hidden)");
		if (tools_any(&r->tools)) {
			char rules[4096];
			tools_describe(&r->tools, rules, sizeof rules);
			/* one key a line, as read back */
			for (char *p = strtok(rules, ";"); p; p = strtok(NULL, ";"))
				fprintf(out, "%s\n", p + strspn(p, " "));
			fprintf(out, "; each tools/call (resources/read, prompts/get) judged whole before it is sent: one "
				     "not allowed is answered here with a JSON-RPC error\n");
		}
	}
	if (cfg->has_mcp) {
		fprintf(out, "\n[mcp]\nsource = %s\ntarget = %s\n", cfg->mcp_source, cfg->mcp_target);
		if (cfg->mcp_has_up)
			fprintf(out, "upstream = %s\n", cfg->mcp_up.desc);
		else
			fprintf(out, "; no upstream: each server where its URL says\n");
		if (cfg->mcp_tls_ca)
			fprintf(out, "tls_ca = %s\n", cfg->mcp_tls_ca);
		if (cfg->mcp_loopback)
			fprintf(out, "loopback = %s\n", cfg->mcp_loopback);
		if (cfg->mcp_auth)
			fprintf(out, "auth = %s\n", cfg->mcp_auth);
		fprintf(out, "listen = 127.0.0.1:%u\nrequired = %s\n", cfg->mcp_port, cfg->mcp_optional ? "no" : "yes");
	} else {
		fputs("\n; [mcp] absent: no MCP config materialisation\n", out);
	}
	if (cfg->proxy.has) {
		char rule[UPSTREAM_NAME_MAX + 32];
		fprintf(out, "\n[proxy]\nlisten = 127.0.0.1:%u\n", cfg->proxy.port);
		if (cfg->proxy.presets[0])
			fprintf(out, "; presets %s: their hosts are among allow\n", cfg->proxy.presets);
		for (i = 0; i < cfg->proxy.n_allow; i++)
			fprintf(out, "allow = %s\n", allow_text(&cfg->proxy.allow[i], rule, sizeof rule));
		fprintf(out, "methods =");
		for (i = 0; i < 32; i++)
			if (cfg->proxy.methods & (1u << i))
				fprintf(out, " %s", http_method_str((enum http_method)i));
		fprintf(out, "\nmax_tunnels = %u\nmax_bytes = %llu\n", cfg->proxy.max_tunnels,
			(unsigned long long)cfg->proxy.max_bytes);
		if (cfg->proxy.has_ask)
			fprintf(out, "ask = %s\nask_timeout = %u\nask_rate = %u\n", cfg->proxy.ask.desc,
				cfg->proxy.ask_timeout_s, cfg->proxy.ask_rate);
		if (cfg->proxy.has_ask && cfg->proxy.ask_store)
			fprintf(out, "ask_store = %s\n", cfg->proxy.ask_store);
	}
	for (i = 0; i < cfg->n_files; i++)
		fprintf(out, "\n[file %s]\nsource = %s\ntarget = %s\nmode = %04o\n", cfg->files[i].name,
			cfg->files[i].source, cfg->files[i].target, cfg->files[i].mode);
}
