#define _GNU_SOURCE
#include "init/report/json.h"

#include <http_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *jstr(const char *s)
{
	json_t *j = json_string(s);
	char *copy;
	size_t i;

	if (j || !s)
		return j ? j : json_string("?");
	copy = strdup(s);
	if (!copy)
		return json_string("?");
	for (i = 0; copy[i]; i++)
		if ((unsigned char)copy[i] >= 0x80)
			copy[i] = '?';
	j = json_string(copy);
	free(copy);
	return j ? j : json_string("?");
}

json_t *json_ports(const struct port_range *v, int n)
{
	json_t *a = json_array();
	char buf[16];
	int i;

	for (i = 0; i < n; i++) {
		if (v[i].lo == v[i].hi)
			snprintf(buf, sizeof buf, "%u", v[i].lo);
		else
			snprintf(buf, sizeof buf, "%u-%u", v[i].lo, v[i].hi);
		json_array_append_new(a, json_string(buf));
	}
	return a;
}

json_t *json_proxy(const struct config_proxy *p)
{
	json_t *allow = json_array(), *methods = json_array(), *j;
	char buf[UPSTREAM_NAME_MAX + 32];
	int i;

	for (i = 0; i < p->n_allow; i++)
		json_array_append_new(allow, jstr(allow_text(&p->allow[i], buf, sizeof buf)));
	for (i = 0; i < 32; i++)
		if (p->methods & (1u << i))
			json_array_append_new(methods, jstr(http_method_str((enum http_method)i)));
	snprintf(buf, sizeof buf, "127.0.0.1:%u", p->port);
	j = json_pack("{s:s,s:s,s:s,s:o,s:o,s:s,s:i,s:I,s:s}", "name", "proxy", "listen", buf, "protocol", "proxy",
			 "methods", methods, "allow", allow, "presets", p->presets, "max_tunnels", (int)p->max_tunnels,
			 "max_bytes", (json_int_t)p->max_bytes, "checks",
			 "the host in allow; names resolved by the bridge; loopback, link-local and private answers "
			 "refused unless an address rule of /8 or narrower names them; a CONNECT's TLS server name is "
			 "its host; a plain http:// request (methods past CONNECT) checked and relayed as a route's, "
			 "Host the URL's, one request per connection");
	/* a name no rule allows is asked of the approver outside */
	if (j && p->has_ask)
		json_object_set_new(j, "ask", json_pack("{s:s,s:i,s:i}", "approver", p->ask.desc, "timeout_s",
							 (int)p->ask_timeout_s, "rate_per_minute", (int)p->ask_rate));
	return j;
}
