/* SPDX-License-Identifier: MIT */
/*
 * config_cc.c - congestion control per device, for config.c: URNIC_CONGESTION and the
 * config file's `congestion` lines.
 */
#include "dev/config.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

/*
 * Congestion control per device (URNIC_CONGESTION, the file's `congestion` lines): a list of
 * [<address>=]<dcqcn|none>, applied in order once the devices are known (the file's, then
 * the variable's), so that `dcqcn,127.0.0.3=none` turns it on everywhere but one. An
 * address must be a device's; iWARP devices have TCP's congestion control: a bare
 * setting passes them by, one naming an iWARP device's address is bad.
 */
enum { MAX_CC_RULES = 2 * URNIC_MAX_DEVICES };
static struct cc_rule {
	bool any; /* no address: every RoCE device */
	bool ipv6;
	uint8_t addr[16];
	bool dcqcn;
	char from[96], text[96];
} cc_rules[MAX_CC_RULES];
static int ncc_rules;

void urnic_config_cc_list(const char *list, const char *from)
{
	char buf[512];
	char *save = NULL;
	int n = 0;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", list) >= sizeof(buf)) {
		urnic_config_bad("%s: longer than %zu characters", from, sizeof(buf) - 1);
		return;
	}
	for (char *tok = strtok_r(buf, ", \t\n", &save); tok;
	     tok = strtok_r(NULL, ", \t\n", &save), n++) {
		char *eq = strrchr(tok, '=');
		const char *algo = eq ? eq + 1 : tok;
		struct cc_rule r = { .any = !eq };

		if (strcmp(algo, "dcqcn") == 0) {
			r.dcqcn = true;
		} else if (strcmp(algo, "none") != 0) {
			urnic_config_bad("%s: '%s': '%s' is not a congestion control (dcqcn, none)",
					 from, tok, algo);
			continue;
		}
		if (eq) {
			*eq = 0;
			if (inet_pton(AF_INET, tok, r.addr) == 1) {
				r.ipv6 = false;
			} else if (inet_pton(AF_INET6, tok, r.addr) == 1) {
				r.ipv6 = true;
			} else {
				urnic_config_bad("%s: '%s=%s': '%s' is not an IPv4 or IPv6 address",
						 from, tok, algo, tok);
				continue;
			}
			*eq = '=';
		}
		if (ncc_rules == MAX_CC_RULES) {
			urnic_config_bad("%s: more than %d congestion control settings", from,
					 MAX_CC_RULES);
			return;
		}
		snprintf(r.from, sizeof(r.from), "%s", from);
		snprintf(r.text, sizeof(r.text), "%s", tok);
		cc_rules[ncc_rules++] = r;
	}
	if (n == 0)
		urnic_config_bad("%s: '%s' names no congestion control", from, list);
}

void urnic_config_cc_apply(struct urnic_dev *const *devices, int ndevices)
{
	for (int k = 0; k < ncc_rules; k++) {
		const struct cc_rule *r = &cc_rules[k];
		bool found = r->any;

		for (int i = 0; i < ndevices; i++) {
			struct urnic_dev *d = devices[i];

			if (!r->any && (d->ipv6 != r->ipv6 || memcmp(d->addr, r->addr, 16) != 0))
				continue;
			found = true;
			if (d->kind == URNIC_KIND_UET && !r->dcqcn) {
				d->nscc_off = true; /* `none`: its QPs send as the window allows */
				continue;
			}
			if (d->kind != URNIC_KIND_ROCE) {
				/* UET's window is NSCC's (cc/nscc.h), iWARP's TCP's. */
				if (!r->any && r->dcqcn)
					urnic_config_bad(
						"%s: '%s': %s is %s device: %s controls its "
						"congestion",
						r->from, r->text, d->name,
						d->kind == URNIC_KIND_UET ? "a uet" : "an iwarp",
						d->kind == URNIC_KIND_UET ? "NSCC" : "TCP");
				continue;
			}
			d->dcqcn = r->dcqcn;
		}
		if (!found)
			urnic_config_bad("%s: '%s': no device has that address", r->from, r->text);
	}
}
