/* sysfilter_build: pick the precompiled default filter or compile one. */
#include <stdio.h>

#include "seccomp/filters.h"
#include "seccomp/sysfilter.h"

int sc_build_agent(const struct sc_policy *p, struct sc_filter *f, char *err, size_t errsize)
{
	if (p->n_allow || p->n_deny)
		return sc_compile(p, 0, 0, f, err, errsize);
	if (sc_from_bpf(ward_filter_agent, ward_filter_agent_len, ward_filter_agent_rules, f) != 0) {
		snprintf(err, errsize, "seccomp: out of memory");
		return -1;
	}
	return 0;
}

int sc_build_init(const struct sc_policy *p, int vm, struct sc_filter *f, char *err, size_t errsize)
{
	int rc;

	if (p->n_allow)
		return sc_compile(p, 1, vm, f, err, errsize);
	rc = vm ? sc_from_bpf(ward_filter_init_vm, ward_filter_init_vm_len, ward_filter_init_vm_rules, f)
		: sc_from_bpf(ward_filter_init, ward_filter_init_len, ward_filter_init_rules, f);
	if (rc != 0)
		snprintf(err, errsize, "seccomp: out of memory");
	return rc;
}

int sc_build_bridge(struct sc_filter *f, int resolver, char *err, size_t errsize)
{
	if ((resolver ? sc_from_bpf(ward_filter_bridge_dns, ward_filter_bridge_dns_len, ward_filter_bridge_dns_rules, f)
		      : sc_from_bpf(ward_filter_bridge, ward_filter_bridge_len, ward_filter_bridge_rules, f)) != 0) {
		snprintf(err, errsize, "seccomp: out of memory");
		return -1;
	}
	return 0;
}
