/* SPDX-License-Identifier: MIT */
/*
 * device.c - device discovery, the engine thread and its sleep/wake protocol, and the
 * counters file. See device.h.
 *
 * Configuration (README "Configuration"): URNIC_ADDR=<ip>[,<ip>...] names the devices'
 * addresses (urnic0, urnic1, ...); else the file $URNIC_CONFIG (default
 * /etc/urnic.conf) with lines `device <ip>`; else one device per IPv4 address of each
 * non-loopback interface that is up, as rxe adds one per netdev, and 127.0.0.1 if there
 * is none. URNIC_SPIN_US sets how long the engine polls before sleeping. URNIC_FAULT
 * (or a `fault <spec>` line in the file) puts the faulty wire of transport/fault.h on
 * the receive path. The limits of limits.def come from `<limit> <n>` lines and
 * URNIC_LIMITS; the verbs count QPs, CQs and SRQs against them (urnic_dev_res_get).
 */
#include "dev/device.h"
#include "dev/spin.h"

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
	const char *spin;

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
	spin = getenv("URNIC_SPIN_US");
	d->spin_ns = spin ? (uint32_t)strtoul(spin, NULL, 10) * 1000u : URNIC_DEFAULT_SPIN_NS;
	pthread_mutex_init(&d->lock, NULL);
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
	const char *path = getenv("URNIC_CONFIG");
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
	const char *env = getenv("URNIC_ADDR");
	const char *fault = getenv("URNIC_FAULT");
	bool have_addr = env && *env;

	if (have_addr)
		add_list(env);
	if (!read_config(!have_addr) && !have_addr)
		host_addresses();
	if (fault)
		set_fault(fault, "URNIC_FAULT");
	if (getenv("URNIC_LIMITS"))
		env_limits(getenv("URNIC_LIMITS"));
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

static void shm_open_counters(struct urnic_dev *d)
{
	size_t bytes = shm_bytes();
	struct urnic_shm_header *h;
	void *map;
	int fd;

	snprintf(d->shm_path, sizeof(d->shm_path), "/dev/shm/" URNIC_SHM_PREFIX "%d.%s",
		 (int)getpid(), d->name);
	fd = open(d->shm_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		goto no_file;
	if (ftruncate(fd, (off_t)bytes) < 0) {
		close(fd);
		goto unlink_file;
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
	h->qp_end = d->eng->qp_end;
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
		if (d->eng->counters[i])
			fprintf(f, "  %-24s %llu\n", urnic_counter_names[i],
				(unsigned long long)d->eng->counters[i]);
}

/* ---- engine thread ---- */

static void flush_tx(struct urnic_engine *e)
{
	struct urnic_dev *d = e->io;

	urnic_udp_send(d->udp, e);
}

/* How long after an application thread last drove the pipeline (ibv_poll_cq,
 * ibv_post_send) the engine thread leaves the socket to it and sleeps on the doorbell
 * and timers only: two threads racing for each packet on two vCPUs cost more than
 * either alone. ibv_req_notify_cq ends the window at once (urnic_dev_app_idle), and
 * so does the application having nothing left to poll for (no send outstanding, no
 * receive posted: urnic_engine_app_awaits), as when it waits for a peer's RDMA WRITE
 * by spinning on memory: then only the engine thread can take the packet in. A pass
 * that leaves the application so, on an ACK that came without the peer's answer, wakes
 * a napping engine thread to watch the socket (progress(), watch_due). */
#define APP_ACTIVE_NS 50000ull
/* While the application keeps polling, the engine thread naps for APP_ACTIVE_NS, then
 * twice as long each time it finds the application still at it, up to APP_NAP_MAX_NS:
 * each of its wake-ups preempts a polling thread on this two-vCPU machine (a
 * ping-pong round hit by one took 5-10 us longer), and while the application polls
 * there is nothing for it to do. */
#define APP_NAP_MAX_NS 1000000ull
/* After its last work the engine thread polls on for spin_ns (URNIC_SPIN_US, default
 * URNIC_DEFAULT_SPIN_NS; grown to cover a request/response peer's gaps, spin.h) before
 * it sleeps, but only while it owns the socket (no application polling: two spinning
 * threads per process on two vCPUs took the CPU the applications needed) and while the
 * traffic is light, no pass having received or sent more than SPIN_LIGHT_PKTS packets
 * since it last slept. A request/response peer (the READ responder of ib_read_lat, an
 * event-driven ibv_rc_pingpong) then finds it awake instead of paying a wake-up on the
 * other vCPU (~30 us here); a bulk stream keeps
 * the sleeping receiver, whose wake-up lets a large batch gather (polling, it took the
 * packets a few at a time and ib_write_bw halved), and the sleeping sender, whose
 * passes find a few ACKs each (spinning for them, it took a quarter of a vCPU from
 * the peer and the application). */
#define SPIN_LIGHT_PKTS 4
/* The engine thread's passes read the share socket (packets other processes on the
 * address forwarded: share.h) when its sleep was ended by one, else at most this
 * often: forwarding is the fallback for a steering miss, and reading an empty socket
 * in every pass was a quarter of a bulk receiver's system calls. */
#define SHARE_READ_NS 100000ull
/* The engine thread found a doorbell's pass running (no application polling): look
 * again this soon. */
#define BUSY_RETRY_NS 20000ull
/* ... and twice as long each time it finds another one running, up to this. */
#define BUSY_RETRY_MAX_NS 200000ull

/* One pass of the NIC pipeline (without the receive if !rx: a doorbell's). Returns
 * true if it did anything. The caller holds the device lock. */
static bool pass_locked(struct urnic_dev *d, uint64_t *deadline, bool rx)
{
	struct urnic_engine *e = d->eng;
	uint64_t held;
	bool did = false;

	uint64_t rx0 = e->counters[URNIC_CTR_rx_packets], tx0 = e->counters[URNIC_CTR_tx_packets];
	uint64_t rxn, txn;
	uint64_t app = atomic_load_explicit(&d->app_poll_ns, memory_order_relaxed);

	e->now_ns = urnic_dev_now_ns();
	/* ACKs and UC completions may wait for an answer while the application polls
	 * (it armed no CQ since, urnic_dev_app_idle) or did so within the engine thread's
	 * longest nap, and in a doorbell's pass (!rx), run by an application thread that
	 * just posted: it polls for the completion next, unless it armed the CQ, which the
	 * engine checks. A UC requester whose completions were never held never saw its
	 * application poll an empty CQ, so it would never have held one. */
	e->app_polling = !rx || (app && e->now_ns - app < APP_NAP_MAX_NS);
	e->rx_requests = 0;
	e->answers_due = 0;
	if (rx)
		did = urnic_udp_recv(d->udp, e, atomic_exchange(&d->forwarded_due, false)) > 0;
	did |= urnic_engine_pass(e, deadline);
	held = urnic_udp_deadline(d->udp); /* a delayed packet of the faulty wire */
	if (held && (!*deadline || held < *deadline))
		*deadline = held;
	if (e->ntx) {
		flush_tx(e);
		did = true;
	}
	rxn = e->counters[URNIC_CTR_rx_packets] - rx0;
	txn = e->counters[URNIC_CTR_tx_packets] - tx0;
	atomic_store_explicit(&d->last_pass_pkts, (uint32_t)(rxn > txn ? rxn : txn),
			      memory_order_relaxed);
	if (did && d->shm_counters) {
		memcpy(d->shm_counters, e->counters, sizeof(e->counters));
		((struct urnic_shm_header *)d->shm_counters - 1)->qp_end = e->qp_end;
	}
	return did;
}


/* The deadline a sleeping engine thread must be woken for: the earliest retransmission
 * or RNR timer, or a held ACK's (responder.c, rc_ack_held) plus APP_NAP_MAX_NS. A held
 * ACK is a latency optimisation, not a protocol timer: while an application polls, it
 * sends the ACK itself when the hold expires, else the napping engine thread does on
 * waking; waking that thread on every ping-pong round (an eventfd write and a wake-up on
 * the other CPU) would cost what holding the ACK saves. The engine is told the slack
 * (ack_hold_slack_ns) and holds only where the QP's timeout leaves room for it. */
static uint64_t kick_deadline(const struct urnic_engine *e)
{
	uint64_t hard = e->timer_deadline, soft = e->ack_hold_deadline;

	if (soft)
		soft += APP_NAP_MAX_NS;
	return !hard || (soft && soft < hard) ? soft : hard;
}

/*
 * Passes are combined, never waited for. A thread that must have a pass run (the
 * engine thread, a doorbell) leaves a request, pass_wanted, before it tries the lock;
 * whoever holds the lock runs another pass before it leaves if it finds one. So no
 * thread sleeps on the device lock in the data path: an engine thread blocked behind a
 * polling application cost a futex wake per 64 KiB message, ~20 % of the requester's
 * CPU (docs/performance.md). An opportunistic caller (an application polling an empty
 * CQ) only tries the lock. Returns false if this thread ran no pass (another one has the
 * lock and, if `must`, will run the pass asked for). Each pass leaves its timer deadline
 * and urnic_engine_app_awaits() in last_deadline / last_awaits.
 */
static bool pass_combined(struct urnic_dev *d, bool must, bool rx, bool *did, bool *alone)
{
	bool ran = false, locked;

	if (must)
		atomic_store(&d->pass_wanted, true);
	locked = pthread_mutex_trylock(&d->lock) == 0;
	while (locked) {
		struct urnic_engine *e = d->eng;
		uint64_t deadline;
		bool awaits, awaited;

		atomic_store(&d->pass_wanted, false);
		*did |= pass_locked(d, &deadline, rx || ran); /* asked again: someone else */
		atomic_store_explicit(&d->last_deadline, deadline, memory_order_relaxed);
		atomic_store_explicit(&d->last_kick_deadline, kick_deadline(e),
				      memory_order_relaxed);
		awaits = urnic_engine_app_awaits(e);
		awaited = atomic_exchange_explicit(&d->last_awaits, awaits, memory_order_relaxed);
		/* This pass gave the application the last completion it waited for, on a
		 * QP whose peer answers, and no answer came with it: see progress(). */
		if (awaited && !awaits && e->answers_due && !e->rx_requests)
			*alone = true;
		pthread_mutex_unlock(&d->lock);
		ran = true;
		locked = atomic_load(&d->pass_wanted) && pthread_mutex_trylock(&d->lock) == 0;
	}
	return ran;
}

static bool progress(struct urnic_dev *d, bool polling, bool rx)
{
	uint64_t deadline;
	bool did = false, alone = false;

	if (polling)
		atomic_store_explicit(&d->app_poll_ns, urnic_dev_now_ns(), memory_order_relaxed);
	if (!d->running)
		return false;
	if (!pass_combined(d, !polling, rx, &did, &alone))
		return !polling; /* handed to the thread in a pass (pass_wanted) */
	/* The ACK of a ping-pong came alone: the peer held it for its answer longer than
	 * the hold allows (its application was off the CPU), and the answer follows. This
	 * application has its completion and nothing else to poll for; it may well wait
	 * for the answer by spinning on memory (ib_write_lat), where only the engine
	 * thread can take the answer in. A thread napping without the socket (APP_NAP_MAX_NS)
	 * took up to 1 ms to do so (~2 % of ib_write_lat's rounds here); it is told to
	 * watch the socket, and woken if it already sleeps without it. Paired with the
	 * engine thread's store of `blind` and load of `watch_due`, both seq_cst. */
	if (alone) {
		atomic_store(&d->watch_due, true);
		if (atomic_load(&d->blind))
			urnic_dev_kick(d);
	}
	/* A sleeping engine thread must learn of a timer armed here (retransmission
	 * must not depend on the application polling again). */
	deadline = atomic_load_explicit(&d->last_kick_deadline, memory_order_relaxed);
	if (deadline && atomic_load(&d->sleeping)) {
		uint64_t slept_until = atomic_load(&d->sleep_deadline);

		if (slept_until == 0 || deadline < slept_until)
			urnic_dev_kick(d);
	}
	/* A doorbell's pass saw the new work: what it could not send yet waits for ACKs,
	 * which a polling application or the engine thread takes in; no wake-up needed. */
	return did || !polling;
}

bool urnic_dev_progress(struct urnic_dev *d, bool polling)
{
	return progress(d, polling, true);
}

bool urnic_dev_doorbell(struct urnic_dev *d)
{
	return progress(d, false, false);
}

static void *engine_thread(void *arg)
{
	struct urnic_dev *d = arg;
	uint64_t idle_since = urnic_dev_now_ns();
	uint64_t nap = APP_ACTIVE_NS, busy_nap = BUSY_RETRY_NS, share_read_ns = 0;
	bool share_woke = false;
	uint32_t pkts_most = 0; /* the most packets a pass received or sent since the last sleep */
	uint64_t spin = d->spin_ns, slept_at = 0;
	bool light = false;

	while (!atomic_load(&d->stop)) {
		/* The doorbell and the share socket are watched in every sleep (only this
		 * thread's passes read forwarded packets: forwarded_due, SHARE_READ_NS),
		 * the address's and the groups' sockets when the receive is this
		 * thread's job. */
		struct pollfd fds[3 + URNIC_MAX_MCAST_GRP] = {
			{ .fd = d->wake_fd, .events = POLLIN },
			{ .fd = d->udp->share.fd, .events = POLLIN },
			{ .fd = d->udp->fd, .events = POLLIN },
		};
		uint64_t deadline, now, app, wait_ns = 0;
		struct timespec ts;
		nfds_t nfds = 3;
		uint64_t drain;
		bool did = false, alone = false, ran, app_polls, blind;

		/* The joined multicast groups' sockets, after the three. */
		for (int g = 0; g < URNIC_MAX_MCAST_GRP; g++) {
			int gfd = atomic_load_explicit(&d->udp->groups[g].fd, memory_order_relaxed);

			if (gfd >= 0)
				fds[nfds++] = (struct pollfd){ .fd = gfd, .events = POLLIN };
		}
		if (share_woke || urnic_dev_now_ns() - share_read_ns >= SHARE_READ_NS) {
			atomic_store(&d->forwarded_due, true);
			share_read_ns = urnic_dev_now_ns();
			share_woke = false;
		}
		ran = pass_combined(d, true, true, &did, &alone);
		if (did) {
			uint32_t got = atomic_load_explicit(&d->last_pass_pkts, memory_order_relaxed);

			idle_since = urnic_dev_now_ns();
			if (got > pkts_most)
				pkts_most = got;
			continue;
		}
		now = urnic_dev_now_ns();
		app = atomic_load(&d->app_poll_ns);
		app_polls = app && now - app < APP_ACTIVE_NS;
		/* Poll on while the socket is ours and the traffic is light: see SPIN_LIGHT_PKTS.
		 * Not while an application thread holds the pipeline (ran: false): its
		 * passes run ours (pass_wanted), and spinning for the lock took the CPU the
		 * application's sends needed. */
		if (ran && !app_polls && pkts_most <= SPIN_LIGHT_PKTS &&
		    now - idle_since < spin)
			continue;
		light = pkts_most <= SPIN_LIGHT_PKTS;
		pkts_most = 0;
		/* Going to sleep: announce it, then look once more, so that a doorbell
		 * rung between the last pass and now is not missed (the poster checks
		 * `sleeping` after publishing its work, urnic_dev_kick()). */
		atomic_store(&d->sleeping, 1);
		ran = pass_combined(d, true, true, &did, &alone);
		if (did) {
			atomic_store(&d->sleeping, 0);
			idle_since = urnic_dev_now_ns();
			continue;
		}
		if (ran)
			busy_nap = BUSY_RETRY_NS;
		/* Not ran: an application thread is in a pass and runs ours after it. */
		deadline = atomic_load_explicit(&d->last_deadline, memory_order_relaxed);
		now = urnic_dev_now_ns();
		if (deadline)
			wait_ns = deadline > now ? deadline - now : 1;
		/* Without the socket while an application polls it (and awaits something)
		 * or runs a pass, unless an application's pass asked us to watch it
		 * (watch_due, see progress()), before or after we say so here. */
		blind = !ran ||
			(app_polls && atomic_load_explicit(&d->last_awaits, memory_order_relaxed));
		if (blind) {
			atomic_store(&d->blind, true);
			if (atomic_exchange(&d->watch_due, false)) {
				atomic_store(&d->blind, false);
				blind = false;
			}
		}
		if (blind && app_polls) {
			nfds = 2; /* an application is polling: the socket is its job */
			if (!wait_ns || nap < wait_ns)
				wait_ns = nap;
			nap = nap * 2 < APP_NAP_MAX_NS ? nap * 2 : APP_NAP_MAX_NS;
		} else {
			nap = APP_ACTIVE_NS;
			if (blind) { /* a doorbell's pass: look again soon */
				nfds = 2;
				if (!wait_ns || busy_nap < wait_ns)
					wait_ns = busy_nap;
				busy_nap = busy_nap * 2 < BUSY_RETRY_MAX_NS ? busy_nap * 2
									 : BUSY_RETRY_MAX_NS;
			}
		}
		/* Publish when we wake, then look at the deadline once more: a pass that
		 * ran after ours either sees this (and kicks us if it needs us sooner) or
		 * left its deadline for us to see here. */
		atomic_store(&d->sleep_deadline, wait_ns ? now + wait_ns : 0);
		deadline = atomic_load(&d->last_deadline);
		if (deadline && (!wait_ns || deadline < now + wait_ns))
			wait_ns = deadline > now ? deadline - now : 1;
		ts.tv_sec = (time_t)(wait_ns / 1000000000ull);
		ts.tv_nsec = (long)(wait_ns % 1000000000ull);
		slept_at = urnic_dev_now_ns();
		ppoll(fds, nfds, wait_ns ? &ts : NULL, NULL);
		atomic_store(&d->sleeping, 0);
		atomic_store(&d->blind, false);
		/* A packet soon after a spin ran out: spin longer next time (spin.h). */
		spin = urnic_spin_next(spin, d->spin_ns, urnic_dev_now_ns() - slept_at,
				       light && nfds > 2 && (fds[2].revents & POLLIN)
					       ? URNIC_WOKE_PACKET
				       : fds[0].revents & POLLIN ? URNIC_WOKE_DOORBELL
								 : URNIC_WOKE_OTHER);
		share_woke = fds[1].revents & POLLIN;
		if (fds[0].revents & POLLIN) {
			if (read(d->wake_fd, &drain, sizeof(drain)) < 0)
				drain = 0;
		}
		idle_since = urnic_dev_now_ns();
	}
	return NULL;
}

void urnic_dev_app_idle(struct urnic_dev *d)
{
	atomic_store(&d->app_poll_ns, 0);
	urnic_dev_kick(d);
}

/* The engine state exists from the first open; the port and the thread only from the
 * first QP (start_io), so that opening a device to query it (ibv_devinfo, urnic
 * devices) never takes the address's UDP port 4791 from the process that uses it. */
static int start(struct urnic_dev *d)
{
	const char *hold;
	uint64_t seed = 0;
	int ret;

	d->eng = calloc(1, sizeof(*d->eng));
	d->udp = calloc(1, sizeof(*d->udp));
	if (!d->eng || !d->udp) {
		ret = -ENOMEM;
		goto free_mem;
	}
	d->udp->fd = -1;
	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = urnic_dev_now_ns() ^ (uint64_t)getpid() << 32;
	ret = urnic_engine_init(d->eng, d->ipv6, d->addr, flush_tx, d, seed);
	if (ret)
		goto free_mem;
	d->eng->icrc_any_ipv4_id = !getenv("URNIC_ICRC_STRICT"); /* engine.h */
	d->eng->ack_hold_slack_ns = (uint32_t)APP_NAP_MAX_NS;
	hold = getenv("URNIC_ACK_HOLD_US");
	if (hold && *hold) {
		unsigned long us = strtoul(hold, NULL, 10);

		d->eng->ack_hold_max_ns = (uint32_t)(us < 1000000ul ? us : 1000000ul) * 1000u;
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
		ret = urnic_udp_set_fault(d->udp, &fault_conf, seed, d->eng->counters);
		if (ret)
			goto close_udp;
		urnic_fault_format(&d->udp->fault->conf, spec, sizeof(spec));
		fprintf(stderr, "urnic: %s (%s): fault injection %s\n", d->name, d->addr_str, spec);
	}
	pthread_mutex_lock(&d->lock);
	d->eng->qpn_owner = d->udp->share.slot;
	pthread_mutex_unlock(&d->lock);
	d->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->wake_fd < 0) {
		ret = -errno;
		goto close_udp;
	}
	shm_open_counters(d);
	atomic_store(&d->stop, false);
	ret = -pthread_create(&d->thread, NULL, engine_thread, d);
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
	const char *print = getenv("URNIC_PRINT_COUNTERS");

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
	const char *print = getenv("URNIC_PRINT_COUNTERS");

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
