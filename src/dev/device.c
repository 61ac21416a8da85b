/* SPDX-License-Identifier: MIT */
/*
 * device.c - device discovery, configuration and limits, the counters file, and a
 * device's start and stop. Who runs the NIC pipeline (application threads' passes and
 * the engine thread) is pipeline.c. See device.h.
 *
 * Configuration (README "Configuration"): URNIC_ADDR=<ip>[,<ip>...] names the devices'
 * addresses (urnic0, urnic1, ...); else the file $URNIC_CONFIG (default
 * /etc/urnic.conf) with lines `device <ip>`; else one device per IPv4 address of each
 * non-loopback interface that is up, as rxe adds one per netdev, and 127.0.0.1 if there
 * is none. URNIC_SPIN_US sets how long the engine polls before sleeping;
 * URNIC_POST_BATCH=0 makes every post send at once (pipeline.c, POST_STREAK_NS).
 * URNIC_FAULT (or a `fault <spec>` line in the file) puts the faulty wire of
 * transport/fault.h on the receive path. The limits of limits.def come from
 * `<limit> <n>` lines and URNIC_LIMITS; the verbs count QPs, CQs and SRQs against them
 * (urnic_dev_res_get). URNIC_COUNTERS_MODE lets others read the counters file.
 *
 * Every variable is read with secure_getenv(3): a set-user-ID program, or one given
 * file capabilities (AT_SECURE), must not be steered by its caller's environment to
 * another configuration file, fault injection or a counters file others can read.
 */
#include "dev/device.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <time.h>

#include "dev/counters_shm.h"

static struct urnic_dev *devices[URNIC_MAX_DEVICES];
static int ndevices;
static pthread_once_t list_once = PTHREAD_ONCE_INIT;

uint64_t urnic_dev_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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
	d->post_batch = !batch || strcmp(batch, "0") != 0;
	pthread_mutex_init(&d->lock, NULL);
	urnic_cq_due_init(&d->cq_due);
	d->wake_fd = -1;
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
#define URNIC_LIMIT(name, def, max, desc)                                              \
	if (strcmp(key, #name) == 0) {                                                  \
		char *end;                                                              \
		unsigned long long v = strtoull(value, &end, 0);                        \
                                                                                        \
		if (end == value || *end || *value == '-' || v < 1 || v > (max)) {      \
			fprintf(stderr, "urnic: %s: %s %s out of range 1..%u: keeping %u\n", \
				from, key, value, (unsigned)(max), limits.name);       \
			return -1;                                                      \
		}                                                                       \
		limits.name = (uint32_t)v;                                              \
		return 0;                                                               \
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
	for (char *tok = strtok_r(buf, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
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

int urnic_dev_res_get(struct urnic_dev *d, enum urnic_dev_res r)
{
	uint32_t max = r == URNIC_RES_QP ? d->lim.max_qp
		     : r == URNIC_RES_CQ ? d->lim.max_cq
					 : d->lim.max_srq;
	uint32_t n = atomic_load(&d->nres[r]);

	do {
		if (n >= max)
			return -ENOMEM;
	} while (!atomic_compare_exchange_weak(&d->nres[r], &n, n + 1));
	return 0;
}

void urnic_dev_res_put(struct urnic_dev *d, enum urnic_dev_res r)
{
	atomic_fetch_sub(&d->nres[r], 1);
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
		fprintf(stderr, "urnic: %s: bad fault spec '%s': fault injection off\n", from, spec);
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

/* ---- counters file ---- */

/* Header, device counters, then the engine's per-QP table, written in place. */
static size_t shm_bytes(void)
{
	return sizeof(struct urnic_shm_header) + URNIC_CTR_COUNT * sizeof(uint64_t) +
	       URNIC_MAX_QP * sizeof(struct urnic_qp_counters);
}

/* Opens a new file at path for us alone: never one that was there (O_EXCL), never
 * through a symbolic link (O_NOFOLLOW). /dev/shm is writable by every user and the name
 * is predictable, so another user may have put a file or a link there first. */
static int shm_create(const char *path)
{
	return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* Creates d's counters file, bytes long, with counters_mode; its name in d->shm_path.
 * A file at the name that is ours was left by a killed process of this user that had
 * our pid: it goes. Another user's (or a link of theirs) stays, and ours gets a name
 * beside it that no one can guess, which `urnic counters` finds all the same (it reads
 * every urnic.<pid>.* file). Returns the fd or -errno. */
static int shm_create_counters(struct urnic_dev *d, size_t bytes)
{
	struct stat st;
	int fd;

	snprintf(d->shm_path, sizeof(d->shm_path), "/dev/shm/" URNIC_SHM_PREFIX "%d.%s",
		 (int)getpid(), d->name);
	fd = shm_create(d->shm_path);
	if (fd < 0 && errno == EEXIST && lstat(d->shm_path, &st) == 0 && st.st_uid == geteuid() &&
	    unlink(d->shm_path) == 0)
		fd = shm_create(d->shm_path);
	if (fd < 0 && errno == EEXIST) {
		char taken[sizeof(d->shm_path)];
		uint64_t r = 0;
		uint32_t uid = lstat(d->shm_path, &st) == 0 ? (uint32_t)st.st_uid : UINT32_MAX;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = urnic_dev_now_ns();
		snprintf(taken, sizeof(taken), "%s", d->shm_path);
		snprintf(d->shm_path, sizeof(d->shm_path),
			 "/dev/shm/" URNIC_SHM_PREFIX "%d.%s.%016llx", (int)getpid(), d->name,
			 (unsigned long long)r);
		fprintf(stderr,
			"urnic: %s: %s belongs to another user (uid %d), not used: the counters "
			"file is %s\n",
			d->name, taken, uid == UINT32_MAX ? -1 : (int)uid, d->shm_path);
		fd = shm_create(d->shm_path);
	}
	if (fd < 0)
		return -errno;
	/* Mapped only if it is the file just made: ours, regular, one link, bytes long,
	 * writable by no one else (a truncation by another user would fault the engine). */
	if (fchmod(fd, counters_mode) < 0 || ftruncate(fd, (off_t)bytes) < 0 ||
	    fstat(fd, &st) < 0) {
		int ret = -errno;

		close(fd);
		unlink(d->shm_path);
		return ret;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    st.st_size != (off_t)bytes || (st.st_mode & 022)) {
		close(fd);
		unlink(d->shm_path);
		return -EPERM;
	}
	return fd;
}

static void shm_open_counters(struct urnic_dev *d)
{
	size_t bytes = shm_bytes();
	struct urnic_shm_header *h;
	void *map;
	int fd;

	fd = shm_create_counters(d, bytes);
	if (fd < 0) {
		fprintf(stderr,
			"urnic: %s: no counters file (%s): `urnic counters` does not show "
			"this device\n",
			d->name, strerror(-fd));
		goto no_file;
	}
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		goto unlink_file;
	h = map;
	h->pid = (uint32_t)getpid();
	h->ncounters = URNIC_CTR_COUNT;
	h->qp_slots = URNIC_MAX_QP;
	h->qp_slot_bytes = sizeof(struct urnic_qp_counters);
	_Static_assert(sizeof(struct urnic_qp_counters) == 8 + URNIC_CTR_COUNT * sizeof(uint64_t),
		       "counters_shm.h describes a QP slot as 8 bytes and the counters");
	snprintf(h->dev, sizeof(h->dev), "%s", d->name);
	snprintf(h->addr, sizeof(h->addr), "%s", d->addr_str);
	memcpy(h->magic, URNIC_SHM_MAGIC, 8);
	d->shm_counters = (uint64_t *)(h + 1);
	pthread_mutex_lock(&d->lock);
	urnic_engine_set_qp_counters(d->eng,
				     (struct urnic_qp_counters *)(d->shm_counters + URNIC_CTR_COUNT));
	h->qp_end = d->eng->qpt.end;
	pthread_mutex_unlock(&d->lock);
	return;
unlink_file:
	unlink(d->shm_path);
no_file:
	d->shm_path[0] = 0;
	d->shm_counters = NULL;
}

static void shm_close_counters(struct urnic_dev *d)
{
	size_t bytes = shm_bytes();

	if (!d->shm_counters)
		return;
	pthread_mutex_lock(&d->lock);
	urnic_engine_set_qp_counters(d->eng, NULL); /* the QPs are gone by now */
	pthread_mutex_unlock(&d->lock);
	munmap((uint8_t *)d->shm_counters - sizeof(struct urnic_shm_header), bytes);
	unlink(d->shm_path);
	d->shm_counters = NULL;
}

void urnic_dev_print_counters(const struct urnic_dev *d, FILE *f)
{
	fprintf(f, "urnic: counters of %s (%s)\n", d->name, d->addr_str);
	for (int i = 0; i < URNIC_CTR_COUNT; i++)
		if (d->eng->stats.counters[i])
			fprintf(f, "  %-24s %llu\n", urnic_counter_names[i],
				(unsigned long long)d->eng->stats.counters[i]);
}

/* The engine state exists from the first open; the port and the thread only from the
 * first QP (start_io), so that opening a device to query it (ibv_devinfo, urnic
 * devices) never takes the address's UDP port 4791 from the process that uses it. */
static int start(struct urnic_dev *d)
{
	const char *hold;
	uint64_t seed = 0;
	int ret;

	if (counters_mode_bad)
		return -EINVAL; /* said when it was read (set_counters_mode) */
	d->eng = calloc(1, sizeof(*d->eng));
	d->udp = calloc(1, sizeof(*d->udp));
	if (!d->eng || !d->udp) {
		ret = -ENOMEM;
		goto free_mem;
	}
	d->udp->fd = -1;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = urnic_dev_now_ns() ^ (uint64_t)getpid() << 32;
	ret = urnic_engine_init(d->eng, d->ipv6, d->addr, urnic_dev_flush_tx, d, seed);
	if (ret)
		goto free_mem;
	d->eng->cfg.icrc_any_ipv4_id = !secure_getenv("URNIC_ICRC_STRICT"); /* engine.h */
	d->eng->cfg.max_msg_bytes = d->lim.max_msg_sz; /* limits.def */
	d->eng->hold.slack_ns = (uint32_t)URNIC_APP_NAP_MAX_NS;
	hold = secure_getenv("URNIC_ACK_HOLD_US");
	if (hold && *hold) {
		unsigned long us = strtoul(hold, NULL, 10);

		d->eng->hold.max_ns = (uint32_t)(us < 1000000ul ? us : 1000000ul) * 1000u;
	}
	return 0;

free_mem:
	free(d->eng);
	free(d->udp);
	d->eng = NULL;
	d->udp = NULL;
	return ret;
}

static int start_io(struct urnic_dev *d)
{
	int ret;

	ret = urnic_udp_open(d->udp, d->ipv6, d->addr, d->addr_str);
	if (ret)
		return ret;
	if (fault_on) {
		uint64_t seed = 0;
		char spec[256];

		if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
			seed = urnic_dev_now_ns();
		ret = urnic_udp_set_fault(d->udp, &fault_conf, seed, d->eng->stats.counters);
		if (ret)
			goto close_udp;
		urnic_fault_format(&d->udp->fault->conf, spec, sizeof(spec));
		fprintf(stderr, "urnic: %s (%s): fault injection %s\n", d->name, d->addr_str, spec);
	}
	/* URNIC_RING=1: receive from packet rings (transport/ring.h), else the socket. */
	if (secure_getenv("URNIC_RING") && strcmp(secure_getenv("URNIC_RING"), "0") != 0) {
		ret = urnic_udp_use_ring(d->udp);
		if (ret)
			fprintf(stderr, "urnic: %s (%s): URNIC_RING: no packet ring (%s): receiving "
				"from the UDP socket\n", d->name, d->addr_str, strerror(-ret));
	}
	pthread_mutex_lock(&d->lock);
	d->eng->cfg.qpn_owner = d->udp->share.slot;
	pthread_mutex_unlock(&d->lock);
	d->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->wake_fd < 0) {
		ret = -errno;
		goto close_udp;
	}
	shm_open_counters(d);
	atomic_store(&d->stop, false);
	ret = -pthread_create(&d->thread, NULL, urnic_dev_engine_thread, d);
	if (ret)
		goto close_shm;
	d->running = true;
	return 0;

close_shm:
	shm_close_counters(d);
	close(d->wake_fd);
	d->wake_fd = -1;
close_udp:
	urnic_udp_close(d->udp);
	return ret;
}

static void stop(struct urnic_dev *d)
{
	uint64_t one = 1;
	const char *print = secure_getenv("URNIC_PRINT_COUNTERS");

	if (d->running) {
		atomic_store(&d->stop, true);
		if (write(d->wake_fd, &one, sizeof(one)) < 0)
			one = 0;
		pthread_join(d->thread, NULL);
		d->running = false;
		if (print && *print == '1')
			urnic_dev_print_counters(d, stderr);
		shm_close_counters(d);
		close(d->wake_fd);
		d->wake_fd = -1;
		urnic_udp_close(d->udp);
	}
	urnic_engine_fini(d->eng);
	free(d->eng);
	free(d->udp);
	d->eng = NULL;
	d->udp = NULL;
}

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;

/* A process that exits without closing its devices (an error path, exit() from a
 * tool) still prints its counters when asked and leaves no counters file behind. */
static void at_exit(void)
{
	const char *print = secure_getenv("URNIC_PRINT_COUNTERS");

	for (int i = 0; i < ndevices; i++) {
		struct urnic_dev *d = devices[i];

		if (!d->running)
			continue;
		if (print && *print == '1')
			urnic_dev_print_counters(d, stderr);
		if (d->shm_path[0])
			unlink(d->shm_path);
	}
}

int urnic_dev_get(struct urnic_dev *d)
{
	int ret = 0;

	static bool exit_hook;

	pthread_mutex_lock(&open_lock);
	if (!exit_hook) {
		atexit(at_exit);
		exit_hook = true;
	}
	if (d->refs == 0)
		ret = start(d);
	if (ret == 0)
		d->refs++;
	pthread_mutex_unlock(&open_lock);
	return ret;
}

int urnic_dev_start_io(struct urnic_dev *d)
{
	int ret = 0;

	pthread_mutex_lock(&open_lock);
	if (!d->running)
		ret = start_io(d);
	pthread_mutex_unlock(&open_lock);
	return ret;
}

void urnic_dev_put(struct urnic_dev *d)
{
	pthread_mutex_lock(&open_lock);
	if (--d->refs == 0)
		stop(d);
	pthread_mutex_unlock(&open_lock);
}
