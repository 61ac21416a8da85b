/* SPDX-License-Identifier: MIT */
/*
 * config.c - device discovery, configuration and limits, read once per process.
 *
 * Configuration (README "Configuration"): URNIC_ADDR=[<kind>:]<ip>[,...] names the
 * devices' addresses (urnic0, urnic1, ...), each with its protocol before it (kinds.def:
 * `iwarp:`, `uet:`; a bare address is RoCEv2); else the file $URNIC_CONFIG (default
 * /etc/urnic.conf) with lines `device [<kind>:]<ip>`; else one device per IPv4 address of each
 * non-loopback interface that is up, as rxe adds one per netdev, and 127.0.0.1 if there
 * is none. URNIC_SPIN_US sets how long the engine polls before sleeping;
 * URNIC_POST_BATCH=0 makes every post send at once (post_batch.h).
 * URNIC_FAULT (or a `fault <spec>` line in the file) puts the faulty wire of
 * transport/fault.h on the receive path. The limits of limits.def come from
 * `<limit> <n>` lines and URNIC_LIMITS; the verbs count QPs, CQs and SRQs against them
 * (urnic_dev_res_get). URNIC_COUNTERS_MODE lets others read the counters file.
 * URNIC_PCAP (or a `pcap <path>` line) names the capture file of trace.h. URNIC_CONGESTION (or
 * `congestion` lines) turns DCQCN on or off per device (config_cc.c).
 *
 * A bad value anywhere (a variable, or a line of the file) is said on stderr, naming the
 * variable or the line and the value, and makes every device open fail (EINVAL): a
 * misspelt setting that fell back to defaults ran a test or a job on a configuration
 * nobody asked for. The devices the configuration names are still listed.
 *
 * Every variable is read with secure_getenv(3): a set-user-ID program, or one given
 * file capabilities (AT_SECURE), must not be steered by its caller's environment to
 * another configuration file, fault injection or a counters file others can read.
 * Context: urnic_dev_list runs build_list once (pthread_once); the rest is read only.
 */
#include "dev/config.h"
#include "wire/frame.h"
#include "wire/uet.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static struct urnic_dev *devices[URNIC_MAX_DEVICES];
static int ndevices;
static pthread_once_t list_once = PTHREAD_ONCE_INIT;
static bool config_bad; /* a bad value was read: no device opens */
static struct urnic_dev_settings settings = { .ack_hold_us = -1, .iw_hold_us = -1 };

void urnic_config_bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("urnic: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputs(": no device opens\n", stderr);
	va_end(ap);
	config_bad = true;
}

#define bad urnic_config_bad /* for its many uses in this file */

/* A 0/1 variable (README "Configuration"): def when unset. */
static bool env_flag(const char *name, bool def)
{
	const char *v = secure_getenv(name);

	if (!v)
		return def;
	if (strcmp(v, "0") == 0 || strcmp(v, "1") == 0)
		return *v == '1';
	bad("%s='%s' is not 0 or 1", name, v);
	return def;
}

/* A decimal variable in 0..max: def when unset. */
static long env_uint(const char *name, long def, unsigned long max)
{
	const char *v = secure_getenv(name);
	unsigned long n;
	char *end;

	if (!v)
		return def;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (*v < '0' || *v > '9' || *end || errno || n > max) {
		bad("%s='%s' is not a number in 0..%lu", name, v, max);
		return def;
	}
	return (long)n;
}

/* Largest IB MTU that fits a netdev MTU less the headers: RoCEv2's 80 (rxe), UET's IPv6,
 * UDP and largest PDS and SES (wire/uet.h), iWARP's none (siw_query_port). */
static int ib_mtu_for(int netdev_mtu, enum urnic_dev_kind kind)
{
	int uet_room = 40 + 8 + URNIC_UET_PDS_MAX_BYTES + URNIC_UET_SES_MAX_BYTES;
	int room = kind == URNIC_KIND_IWARP ? netdev_mtu
		   : kind == URNIC_KIND_UET ? netdev_mtu - uet_room
					    : netdev_mtu - 80;

	if (room >= 4096)
		return 5;
	if (room >= 2048)
		return 4;
	if (room >= 1024)
		return 3;
	if (room >= 512)
		return 2;
	return 1;
}

static int netdev_mtu_of(const struct urnic_dev *d)
{
	struct ifaddrs *ifa_list, *ifa;
	int mtu = 1500, fd;

	if (!d->ipv6 && d->addr[0] == 127)
		return 65536; /* the loopback device owns all of 127/8 */
	if (getifaddrs(&ifa_list) < 0)
		return mtu;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	for (ifa = ifa_list; ifa && fd >= 0; ifa = ifa->ifa_next) {
		const void *a;

		if (!ifa->ifa_addr)
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET && !d->ipv6)
			a = &((struct sockaddr_in *)(void *)ifa->ifa_addr)->sin_addr;
		else if (ifa->ifa_addr->sa_family == AF_INET6 && d->ipv6)
			a = &((struct sockaddr_in6 *)(void *)ifa->ifa_addr)->sin6_addr;
		else
			continue;
		if (memcmp(a, d->addr, d->ipv6 ? 16 : 4) == 0) {
			struct ifreq ifr = { 0 };

			snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifa->ifa_name);
			if (ioctl(fd, SIOCGIFMTU, &ifr) == 0)
				mtu = ifr.ifr_mtu;
			break;
		}
	}
	if (fd >= 0)
		close(fd);
	freeifaddrs(ifa_list);
	return mtu;
}

/* Adds a device on addr_str, named in from (a variable, a line of the config file, or
 * the host's addresses, where one address on two interfaces, or more than the devices
 * there can be, is not a mistake). */
static const char *const kind_names[] = {
#define URNIC_KIND(id, name, supported) [URNIC_KIND_##id] = name,
#include "dev/kinds.def"
#undef URNIC_KIND
};
static const bool kind_supported[] = {
#define URNIC_KIND(id, name, supported) [URNIC_KIND_##id] = supported,
#include "dev/kinds.def"
#undef URNIC_KIND
};
_Static_assert(sizeof(kind_names) / sizeof(kind_names[0]) == URNIC_KIND_COUNT, "kinds.def");

const char *urnic_dev_kind_name(enum urnic_dev_kind k)
{
	return (unsigned)k < URNIC_KIND_COUNT ? kind_names[k] : "?";
}

/* The kind spec names before its address (`iwarp:` of `iwarp:127.0.0.2`), none for a
 * bare address. An IPv6 address has colons too, but only hex digits before the first,
 * and every kind's name has a letter past 'f': a run of letters before a colon of a
 * value that is no address is a kind, or a mistake. Returns the kind, or
 * URNIC_KIND_COUNT (said, bad). *ip: where the address starts. */
static enum urnic_dev_kind spec_kind(const char *spec, const char *from, const char **ip)
{
	size_t n = strspn(spec, "abcdefghijklmnopqrstuvwxyz");
	uint8_t a[16];

	*ip = spec;
	if (n == 0 || spec[n] != ':' || inet_pton(AF_INET6, spec, a) == 1)
		return URNIC_KIND_ROCE;
	*ip = spec + n + 1;
	for (int k = 0; k < URNIC_KIND_COUNT; k++) {
		if (strlen(kind_names[k]) != n || strncmp(spec, kind_names[k], n) != 0)
			continue;
		if (!kind_supported[k]) {
			bad("%s: device '%s': kind '%s' is not supported yet", from, spec,
			    kind_names[k]);
			return URNIC_KIND_COUNT;
		}
		return (enum urnic_dev_kind)k;
	}
	bad("%s: device '%s': '%.*s' is not a device kind (roce, iwarp, uet)", from, spec, (int)n,
	    spec);
	return URNIC_KIND_COUNT;
}

/* Parses [<kind>:]<ip> into d (kind, ipv6, addr, addr_str). Returns 0, or -1 (said). */
static int parse_spec(struct urnic_dev *d, const char *spec, const char *from)
{
	const char *ip;

	d->kind = spec_kind(spec, from, &ip);
	if (d->kind == URNIC_KIND_COUNT)
		return -1;
	if (inet_pton(AF_INET, ip, d->addr) == 1) {
		d->ipv6 = false;
	} else if (inet_pton(AF_INET6, ip, d->addr) == 1) {
		d->ipv6 = true;
	} else {
		bad("%s: device address '%s' is not an IPv4 or IPv6 address", from, spec);
		return -1;
	}
	snprintf(d->addr_str, sizeof(d->addr_str), "%s", ip);
	return 0;
}

/* The GID table: RoCEv2's GID 1 is the address (::ffff:a.b.c.d for IPv4); iWARP's one
 * GID is siw's, the interface's MAC in its first six bytes and zeros after
 * (siw_query_gid), urnic's MAC being the one derived from the address. */
static void fill_gids(struct urnic_dev *d, const uint8_t mac[6])
{
	memset(d->gid, 0, sizeof(d->gid));
	if (d->kind == URNIC_KIND_IWARP) {
		memcpy(d->gid[0], mac, 6);
		return;
	}
	if (d->ipv6) {
		memcpy(d->gid[1], d->addr, 16);
	} else {
		d->gid[1][10] = d->gid[1][11] = 0xff;
		memcpy(d->gid[1] + 12, d->addr, 4);
	}
	/* GID 0 is the default that libfabric's verbs provider, perftest and `-g 0` use. On
	 * rxe it is the interface's link-local address, which reaches the device because
	 * the device is the whole interface; a urnic device is one address and receives
	 * nowhere else, so its GID 0 is that address too (docs/differences-from-rxe.md). */
	memcpy(d->gid[0], d->gid[1], 16);
}

static void add_device(const char *spec, const char *from)
{
	struct urnic_dev *d;
	uint8_t mac[6];
	uint8_t eui[8];

	bool host = strcmp(from, "host address") == 0;

	if (ndevices == URNIC_MAX_DEVICES) {
		if (host)
			return;
		bad("%s: device address '%s': more than %d devices", from, spec, URNIC_MAX_DEVICES);
		return;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return;
	if (parse_spec(d, spec, from)) {
		free(d);
		return;
	}
	for (int i = 0; i < ndevices; i++)
		if (devices[i]->ipv6 == d->ipv6 && memcmp(devices[i]->addr, d->addr, 16) == 0) {
			/* One process, one device per address: a second would bind its port. */
			if (!host)
				bad("%s: device address '%s' named twice (%s)", from, d->addr_str,
				    devices[i]->name);
			free(d);
			return;
		}
	/* Modified EUI-64 of a MAC derived from the address (RFC 4291 appendix A), as the
	 * kernel derives rxe's GUID from the netdev's MAC; a capture (URNIC_PCAP) shows the
	 * device with that MAC. */
	urnic_frame_mac(d->ipv6, d->addr, mac);
	eui[0] = mac[0] ^ 0x02;
	eui[1] = mac[1];
	eui[2] = mac[2];
	eui[3] = 0xff;
	eui[4] = 0xfe;
	eui[5] = mac[3];
	eui[6] = mac[4];
	eui[7] = mac[5];
	memcpy(&d->guid, eui, 8);
	fill_gids(d, mac);
	snprintf(d->name, sizeof(d->name), "urnic%d", ndevices);
	d->active_mtu = ib_mtu_for(netdev_mtu_of(d), d->kind);
	d->spin_ns = settings.spin_ns;
	d->posts.on = settings.post_batch;
	urnic_dev_init(d);
	devices[ndevices++] = d;
}

static void add_list(const char *list)
{
	char buf[1024];
	char *save = NULL;
	int n = 0;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", list) >= sizeof(buf)) {
		bad("URNIC_ADDR: longer than %zu characters", sizeof(buf) - 1);
		return;
	}
	for (char *tok = strtok_r(buf, ", \t\n", &save); tok;
	     tok = strtok_r(NULL, ", \t\n", &save), n++)
		add_device(tok, "URNIC_ADDR");
	if (n == 0)
		bad("URNIC_ADDR='%s' names no address", list);
}

/* Settings that are not a device: the faulty wire (transport/fault.h) and the limits
 * (limits.def). Read from the config file, then from the environment, which wins. */
static struct urnic_fault_conf fault_conf;
static bool fault_on;
static struct urnic_limits limits = {
#define URNIC_LIMIT(name, def, max, desc) .name = (def),
#include "dev/limits.def"
#undef URNIC_LIMIT
};

/* Sets limit key to the number value. Returns 0, 1 when key is not a limit, or -1
 * (said, bad) when the value is out of range. */
static int set_limit(const char *key, const char *value, const char *from)
{
#define URNIC_LIMIT(name, def, max, desc)                                                          \
	if (strcmp(key, #name) == 0) {                                                             \
		char *end;                                                                         \
		unsigned long long v = strtoull(value, &end, 0);                                   \
                                                                                                   \
		if (end == value || *end || *value == '-' || v < 1 || v > (max)) {                 \
			bad("%s: %s '%s' is not a number in 1..%u", from, key, value,              \
			    (unsigned)(max));                                                      \
			return -1;                                                                 \
		}                                                                                  \
		limits.name = (uint32_t)v;                                                         \
		return 0;                                                                          \
	}
#include "dev/limits.def"
#undef URNIC_LIMIT
	return 1;
}

/* URNIC_LIMITS=max_qp=64,max_cqe=4096 */
static void env_limits(const char *list)
{
	char buf[1024];
	char *save = NULL;
	int n = 0;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", list) >= sizeof(buf)) {
		bad("URNIC_LIMITS: longer than %zu characters", sizeof(buf) - 1);
		return;
	}
	for (char *tok = strtok_r(buf, ", \t\n", &save); tok;
	     tok = strtok_r(NULL, ", \t\n", &save), n++) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			bad("URNIC_LIMITS: '%s' is not name=value", tok);
			continue;
		}
		*eq = 0;
		if (set_limit(tok, eq + 1, "URNIC_LIMITS") == 1)
			bad("URNIC_LIMITS: no limit named '%s'", tok);
	}
	if (n == 0)
		bad("URNIC_LIMITS='%s' names no limit", list);
}

/* Who besides the owner may read a counters file: it shows every QP's number, state and
 * traffic, so by default no one (0600); group or everyone only when asked
 * (URNIC_COUNTERS_MODE=0640 or 0644). Never writable by another user: one who could
 * truncate the file would make the engine's mapping of it fault (SIGBUS, mmap(2)). */
static mode_t counters_mode = 0600;

static void set_counters_mode(const char *v)
{
	unsigned long m;
	char *end;

	errno = 0;
	m = strtoul(v, &end, 8);
	if (*v < '0' || *v > '7' || *end || errno || (m & ~0644ul) || (m & 0600) != 0600) {
		bad("URNIC_COUNTERS_MODE='%s' is not 0600, 0640 or 0644 (octal: the owner "
		    "reads and writes, group and others may only read)",
		    v);
		return;
	}
	counters_mode = (mode_t)m;
}

/* The capture's path (trace.h): %p, %d and %% are the only escapes; empty: none. */
static char pcap_path[4096];

static void set_pcap(const char *path, const char *from)
{
	for (const char *c = strchr(path, '%'); c; c = strchr(c + 2, '%'))
		if (c[1] != 'p' && c[1] != 'd' && c[1] != '%') {
			bad("%s: '%s': %%%.1s is not %%p (the process id), %%d (the device) or "
			    "%%%%",
			    from, path, c + 1);
			return;
		}
	if ((size_t)snprintf(pcap_path, sizeof(pcap_path), "%s", path) >= sizeof(pcap_path)) {
		bad("%s: '%.64s...': longer than %zu characters", from, path,
		    sizeof(pcap_path) - 1);
		return;
	}
	settings.pcap = *path ? pcap_path : NULL;
}

static void set_fault(const char *spec, const char *from)
{
	if (urnic_fault_parse(&fault_conf, spec)) {
		bad("%s: bad fault spec '%s'", from, spec);
		fault_on = false;
		return;
	}
	fault_on = urnic_fault_active(&fault_conf);
}

/* The config file: `device [<kind>:]<ip>` lines (used when URNIC_ADDR is not set),
 * `fault <spec>`, `pcap <path>`, `congestion <list>` and `<limit> <value>` (limits.def);
 * blank lines, and `#` to the end of a line, are comments. A line that is none of these
 * is bad, as is a file named by URNIC_CONFIG that cannot be read; /etc/urnic.conf may be absent.
 * Returns true if it named a device. */
static bool read_config(bool want_devices)
{
	const char *env = secure_getenv("URNIC_CONFIG");
	const char *path = env ? env : "/etc/urnic.conf";
	char line[512], from[600];
	bool named = false;
	int lineno = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f) {
		if (env || errno != ENOENT)
			bad("URNIC_CONFIG='%s': cannot read it (%s)", path, strerror(errno));
		return false;
	}
	while (fgets(line, sizeof(line), f)) {
		char word[32], arg[384], extra[2];
		char *hash = strchr(line, '#');
		int n;

		lineno++;
		snprintf(from, sizeof(from), "%s:%d", path, lineno);
		if (!strchr(line, '\n') && !feof(f)) {
			bad("%s: longer than %zu characters", from, sizeof(line) - 2);
			break;
		}
		if (hash)
			*hash = 0;
		n = sscanf(line, "%31s %383s %1s", word, arg, extra);
		if (n <= 0)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (n != 2) {
			bad("%s: '%s' is not `<setting> <value>`", from, line);
			continue;
		}
		if (strcmp(word, "device") == 0) {
			struct urnic_dev probe;

			named = true;
			if (want_devices)
				add_device(arg, from);
			else /* still checked: a bad line is bad though URNIC_ADDR is set */
				parse_spec(&probe, arg, from);
		} else if (strcmp(word, "fault") == 0) {
			set_fault(arg, from);
		} else if (strcmp(word, "pcap") == 0) {
			set_pcap(arg, from);
		} else if (strcmp(word, "congestion") == 0) {
			urnic_config_cc_list(arg, from);
		} else if (set_limit(word, arg, from) == 1) {
			bad("%s: unknown setting '%s'", from, word);
		}
	}
	fclose(f);
	return named && ndevices > 0;
}

static void host_addresses(void)
{
	struct ifaddrs *ifa_list, *ifa;

	if (getifaddrs(&ifa_list) == 0) {
		for (ifa = ifa_list; ifa; ifa = ifa->ifa_next) {
			char buf[INET_ADDRSTRLEN];

			if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET ||
			    (ifa->ifa_flags & IFF_LOOPBACK) || !(ifa->ifa_flags & IFF_UP))
				continue;
			inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)ifa->ifa_addr)->sin_addr,
				  buf, sizeof(buf));
			add_device(buf, "host address");
		}
		freeifaddrs(ifa_list);
	}
	if (ndevices == 0)
		add_device("127.0.0.1", "host address");
}

/* The variables that are not lists (README "Configuration"), before any device is
 * added: each device takes its copy. */
static void read_settings(void)
{
	long spin = env_uint("URNIC_SPIN_US", URNIC_DEFAULT_SPIN_NS / 1000, 1000000);

	settings.spin_ns = (uint32_t)spin * 1000u;
	settings.post_batch = env_flag("URNIC_POST_BATCH", true);
	settings.ack_hold_us = env_uint("URNIC_ACK_HOLD_US", -1, 1000000);
	settings.iw_hold_us = env_uint("URNIC_IW_HOLD_US", -1, 10000000);
	settings.ring = env_flag("URNIC_RING", false);
	settings.local = env_flag("URNIC_LOCAL", true);
	settings.local_direct = env_flag("URNIC_LOCAL_DIRECT", true);
	settings.gso = !env_flag("URNIC_NO_GSO", false);
	settings.gro = !env_flag("URNIC_NO_GRO", false);
	settings.icrc_strict = env_flag("URNIC_ICRC_STRICT", false);
	settings.print_counters = env_flag("URNIC_PRINT_COUNTERS", false);
	settings.stub_trace = env_flag("URNIC_STUB_TRACE", false);
}

/* A URNIC_ variable that misspells one of ours is a bad setting (env_names.c). */
static void check_names(void)
{
	extern char **environ;

	for (char **e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t len = eq ? (size_t)(eq - *e) : strlen(*e);
		const char *near;

		if (strncmp(*e, "URNIC_", 6) != 0)
			continue;
		near = urnic_env_misspelt(*e, len);
		if (near)
			bad("%.*s is not a urnic variable (%s?)", (int)len, *e, near);
	}
}

static void build_list(void)
{
	const char *env = secure_getenv("URNIC_ADDR");
	const char *fault = secure_getenv("URNIC_FAULT");

	read_settings();
	if (getauxval(AT_SECURE) == 0) /* else no variable is read at all */
		check_names();
	if (env)
		add_list(env);
	if (!read_config(!env) && !env)
		host_addresses();
	if (fault)
		set_fault(fault, "URNIC_FAULT");
	if (secure_getenv("URNIC_PCAP"))
		set_pcap(secure_getenv("URNIC_PCAP"), "URNIC_PCAP");
	if (secure_getenv("URNIC_LIMITS"))
		env_limits(secure_getenv("URNIC_LIMITS"));
	if (secure_getenv("URNIC_COUNTERS_MODE"))
		set_counters_mode(secure_getenv("URNIC_COUNTERS_MODE"));
	if (secure_getenv("URNIC_CONGESTION"))
		urnic_config_cc_list(secure_getenv("URNIC_CONGESTION"), "URNIC_CONGESTION");
	urnic_config_cc_apply(devices, ndevices);
	for (int i = 0; i < ndevices; i++)
		devices[i]->lim = limits;
}

int urnic_dev_list(struct urnic_dev ***out)
{
	pthread_once(&list_once, build_list);
	*out = devices;
	return ndevices;
}

int urnic_dev_config_check(void)
{
	pthread_once(&list_once, build_list);
	return config_bad ? -EINVAL : 0;
}

const struct urnic_dev_settings *urnic_dev_settings(void)
{
	pthread_once(&list_once, build_list);
	return &settings;
}

const struct urnic_fault_conf *urnic_dev_fault_conf(void)
{
	return fault_on ? &fault_conf : NULL;
}

mode_t urnic_dev_counters_mode(void)
{
	return counters_mode;
}
