/* SPDX-License-Identifier: MIT */
/*
 * config.c - device discovery, configuration and limits, read once per process.
 *
 * Configuration (README "Configuration"): URNIC_ADDR=<ip>[,<ip>...] names the devices'
 * addresses (urnic0, urnic1, ...); else the file $URNIC_CONFIG (default
 * /etc/urnic.conf) with lines `device <ip>`; else one device per IPv4 address of each
 * non-loopback interface that is up, as rxe adds one per netdev, and 127.0.0.1 if there
 * is none. URNIC_SPIN_US sets how long the engine polls before sleeping;
 * URNIC_POST_BATCH=0 makes every post send at once (post_batch.h).
 * URNIC_FAULT (or a `fault <spec>` line in the file) puts the faulty wire of
 * transport/fault.h on the receive path. The limits of limits.def come from
 * `<limit> <n>` lines and URNIC_LIMITS; the verbs count QPs, CQs and SRQs against them
 * (urnic_dev_res_get). URNIC_COUNTERS_MODE lets others read the counters file.
 *
 * Every variable is read with secure_getenv(3): a set-user-ID program, or one given
 * file capabilities (AT_SECURE), must not be steered by its caller's environment to
 * another configuration file, fault injection or a counters file others can read.
 * Context: urnic_dev_list runs build_list once (pthread_once); the rest is read only.
 */
#include "dev/config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

static struct urnic_dev *devices[URNIC_MAX_DEVICES];
static int ndevices;
static pthread_once_t list_once = PTHREAD_ONCE_INIT;

/* Largest IB MTU that fits a netdev MTU with RoCEv2 headers (rxe: netdev MTU - 80). */
static int ib_mtu_for(int netdev_mtu)
{
	int room = netdev_mtu - 80;

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

static void add_device(const char *addr_str)
{
	struct urnic_dev *d;
	uint8_t mac[6];
	uint8_t eui[8];
	const char *spin, *batch;

	if (ndevices == URNIC_MAX_DEVICES)
		return;
	d = calloc(1, sizeof(*d));
	if (!d)
		return;
	if (inet_pton(AF_INET, addr_str, d->addr) == 1) {
		d->ipv6 = false;
		memset(d->gid[1], 0, 10);
		d->gid[1][10] = d->gid[1][11] = 0xff;
		memcpy(d->gid[1] + 12, d->addr, 4);
		mac[0] = 0x02;
		mac[1] = 0x75; /* 'u': locally administered, urnic */
		memcpy(mac + 2, d->addr, 4);
	} else if (inet_pton(AF_INET6, addr_str, d->addr) == 1) {
		d->ipv6 = true;
		memcpy(d->gid[1], d->addr, 16);
		mac[0] = 0x02;
		memcpy(mac + 1, d->addr + 11, 5);
	} else {
		fprintf(stderr, "urnic: ignoring device address '%s': not an IPv4/IPv6 address\n",
			addr_str);
		free(d);
		return;
	}
	/* Modified EUI-64 of a MAC derived from the address (RFC 4291 appendix A), as the
	 * kernel derives rxe's GUID and link-local GID from the netdev's MAC. */
	eui[0] = mac[0] ^ 0x02;
	eui[1] = mac[1];
	eui[2] = mac[2];
	eui[3] = 0xff;
	eui[4] = 0xfe;
	eui[5] = mac[3];
	eui[6] = mac[4];
	eui[7] = mac[5];
	memcpy(&d->guid, eui, 8);
	d->gid[0][0] = 0xfe;
	d->gid[0][1] = 0x80;
	memcpy(d->gid[0] + 8, eui, 8);
	snprintf(d->name, sizeof(d->name), "urnic%d", ndevices);
	snprintf(d->addr_str, sizeof(d->addr_str), "%s", addr_str);
	d->active_mtu = ib_mtu_for(netdev_mtu_of(d));
	spin = secure_getenv("URNIC_SPIN_US");
	d->spin_ns = spin ? (uint32_t)strtoul(spin, NULL, 10) * 1000u : URNIC_DEFAULT_SPIN_NS;
	batch = secure_getenv("URNIC_POST_BATCH");
	d->posts.on = !batch || strcmp(batch, "0") != 0;
	urnic_dev_init(d);
	devices[ndevices++] = d;
}

static void add_list(const char *list)
{
	char buf[1024];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *tok = strtok_r(buf, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save))
		add_device(tok);
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

/* Sets limit key to the decimal value. Returns 0, 1 when key is not a limit, or -1
 * (with a message) when the value is out of range. */
static int set_limit(const char *key, const char *value, const char *from)
{
#define URNIC_LIMIT(name, def, max, desc)                                                          \
	if (strcmp(key, #name) == 0) {                                                             \
		char *end;                                                                         \
		unsigned long long v = strtoull(value, &end, 0);                                   \
                                                                                                   \
		if (end == value || *end || *value == '-' || v < 1 || v > (max)) {                 \
			fprintf(stderr, "urnic: %s: %s %s out of range 1..%u: keeping %u\n", from, \
				key, value, (unsigned)(max), limits.name);                         \
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

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *tok = strtok_r(buf, ", \t\n", &save); tok;
	     tok = strtok_r(NULL, ", \t\n", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			fprintf(stderr, "urnic: URNIC_LIMITS: '%s' is not name=value\n", tok);
			continue;
		}
		*eq = 0;
		if (set_limit(tok, eq + 1, "URNIC_LIMITS") == 1)
			fprintf(stderr, "urnic: URNIC_LIMITS: no limit named '%s'\n", tok);
	}
}

/* Who besides the owner may read a counters file: it shows every QP's number, state and
 * traffic, so by default no one (0600); group or everyone only when asked
 * (URNIC_COUNTERS_MODE=0640 or 0644). Never writable by another user: one who could
 * truncate the file would make the engine's mapping of it fault (SIGBUS, mmap(2)). A
 * bad value fails every device open, with a message, rather than fall back silently. */
static mode_t counters_mode = 0600;
static bool counters_mode_bad;

static void set_counters_mode(const char *v)
{
	unsigned long m;
	char *end;

	errno = 0;
	m = strtoul(v, &end, 8);
	if (*v < '0' || *v > '7' || *end || errno || (m & ~0644ul) || (m & 0600) != 0600) {
		fprintf(stderr,
			"urnic: URNIC_COUNTERS_MODE=%s is not 0600, 0640 or 0644 (octal: the owner "
			"reads and writes, group and others may only read): no device opens\n",
			v);
		counters_mode_bad = true;
		return;
	}
	counters_mode = (mode_t)m;
}

static void set_fault(const char *spec, const char *from)
{
	if (urnic_fault_parse(&fault_conf, spec)) {
		fprintf(stderr, "urnic: %s: bad fault spec '%s': fault injection off\n", from,
			spec);
		fault_on = false;
		return;
	}
	fault_on = urnic_fault_active(&fault_conf);
}

/* The config file: `device <ip>` lines (used when URNIC_ADDR is not set),
 * `fault <spec>` and `<limit> <value>` (limits.def). Returns true if it named a
 * device. */
static bool read_config(bool want_devices)
{
	const char *path = secure_getenv("URNIC_CONFIG");
	char line[512];
	bool named = false;
	FILE *f;

	f = fopen(path ? path : "/etc/urnic.conf", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char word[32], arg[384];

		if (sscanf(line, "%31s %383s", word, arg) != 2 || word[0] == '#')
			continue;
		if (strcmp(word, "device") == 0) {
			named = true;
			if (want_devices)
				add_device(arg);
		} else if (strcmp(word, "fault") == 0) {
			set_fault(arg, "config file");
		} else if (set_limit(word, arg, "config file") == 1) {
			fprintf(stderr, "urnic: config file: unknown setting '%s'\n", word);
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
			add_device(buf);
		}
		freeifaddrs(ifa_list);
	}
	if (ndevices == 0)
		add_device("127.0.0.1");
}

static void build_list(void)
{
	const char *env = secure_getenv("URNIC_ADDR");
	const char *fault = secure_getenv("URNIC_FAULT");
	bool have_addr = env && *env;

	if (have_addr)
		add_list(env);
	if (!read_config(!have_addr) && !have_addr)
		host_addresses();
	if (fault)
		set_fault(fault, "URNIC_FAULT");
	if (secure_getenv("URNIC_LIMITS"))
		env_limits(secure_getenv("URNIC_LIMITS"));
	if (secure_getenv("URNIC_COUNTERS_MODE"))
		set_counters_mode(secure_getenv("URNIC_COUNTERS_MODE"));
	for (int i = 0; i < ndevices; i++)
		devices[i]->lim = limits;
}

int urnic_dev_list(struct urnic_dev ***out)
{
	pthread_once(&list_once, build_list);
	*out = devices;
	return ndevices;
}

const struct urnic_fault_conf *urnic_dev_fault_conf(void)
{
	return fault_on ? &fault_conf : NULL;
}

int urnic_dev_counters_mode(mode_t *mode)
{
	*mode = counters_mode;
	return counters_mode_bad ? -EINVAL : 0;
}
