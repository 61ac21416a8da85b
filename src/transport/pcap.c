/* SPDX-License-Identifier: MIT */
/*
 * pcap.c - the capture file of URNIC_PCAP (pcap.h): records built in a buffer under the
 * file's lock (frame.h's headers, pcapng.h's blocks), written by a thread of the file
 * URNIC_PCAP_FLUSH_MS after the first record since the last write, when the buffer is
 * full, and on urnic_pcap_flush. The engine thread that records never waits for the
 * disk but when the buffer fills.
 */
#include "transport/pcap.h"

#include "wire/frame.h"
#include "wire/pcapng.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

struct urnic_pcap {
	pthread_mutex_t lock;
	pthread_cond_t cv; /* CLOCK_MONOTONIC: the thread's wake-ups */
	pthread_t thread;
	bool stop;
	bool dirty; /* records since the last write: the thread has a write due */
	bool said;  /* a write error was said */
	int fd;
	uint32_t nifs;
	size_t used;
	char *path;
	uint8_t buf[URNIC_PCAP_BUF];
};

/* Writes the buffer; a failed write loses it (said once). Under the lock. */
static void flush_locked(struct urnic_pcap *p)
{
	size_t off = 0;

	while (off < p->used) {
		ssize_t n = write(p->fd, p->buf + off, p->used - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (!p->said)
				fprintf(stderr,
					"urnic: URNIC_PCAP: cannot write %s (%s): records lost\n",
					p->path, n < 0 ? strerror(errno) : "no room");
			p->said = true;
			break;
		}
		off += (size_t)n;
	}
	p->used = 0;
	p->dirty = false;
}

/* The file's thread: the first record after a write is written URNIC_PCAP_FLUSH_MS
 * later, with whatever followed it. */
static void *flusher(void *arg)
{
	struct urnic_pcap *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct timespec due;

		if (!p->dirty) {
			pthread_cond_wait(&p->cv, &p->lock);
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &due);
		due.tv_nsec += URNIC_PCAP_FLUSH_MS * 1000000L;
		due.tv_sec += due.tv_nsec / 1000000000L;
		due.tv_nsec %= 1000000000L;
		while (!p->stop && pthread_cond_timedwait(&p->cv, &p->lock, &due) != ETIMEDOUT)
			;
		flush_locked(p);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Room for n more bytes in the buffer, writing it first if need be. Under the lock. */
static uint8_t *room(struct urnic_pcap *p, size_t n)
{
	if (p->used + n > sizeof(p->buf))
		flush_locked(p);
	return p->buf + p->used;
}

/* n bytes were put at room(): the thread writes them in time. Under the lock. */
static void added(struct urnic_pcap *p, size_t n)
{
	p->used += n;
	if (!p->dirty) {
		p->dirty = true;
		pthread_cond_signal(&p->cv);
	}
}

int urnic_pcap_open(struct urnic_pcap **out, const char *path)
{
	struct urnic_pcap *p = calloc(1, sizeof(*p));
	pthread_condattr_t ca;
	int ret;

	if (!p)
		return -ENOMEM;
	p->path = strdup(path);
	if (!p->path) {
		ret = -ENOMEM;
		goto free_p;
	}
	p->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (p->fd < 0) {
		ret = -errno;
		goto free_path;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	p->used = urnic_pcapng_shb(p->buf, "urnic");
	flush_locked(p); /* a file that exists is one Wireshark opens */
	ret = -pthread_create(&p->thread, NULL, flusher, p);
	if (ret)
		goto close_fd;
	pthread_setname_np(p->thread, "urnic:pcap");
	*out = p;
	return 0;

close_fd:
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->lock);
	close(p->fd);
free_path:
	free(p->path);
free_p:
	free(p);
	return ret;
}

int urnic_pcap_add_if(struct urnic_pcap *p, struct urnic_pcap_if *i, const char *name, bool ipv6,
		      const uint8_t *addr, const char *proto)
{
	char a[INET6_ADDRSTRLEN], desc[128];

	inet_ntop(ipv6 ? AF_INET6 : AF_INET, addr, a, sizeof(a));
	snprintf(desc, sizeof(desc), "urnic %s on %s: %s", name, a, proto);
	pthread_mutex_lock(&p->lock);
	if (p->nifs == UINT32_MAX) {
		pthread_mutex_unlock(&p->lock);
		return -ENOSPC;
	}
	added(p, urnic_pcapng_idb(room(p, URNIC_PCAPNG_HDR_BLOCK_MAX), name, desc));
	*i = (struct urnic_pcap_if){ .file = p, .id = p->nifs++, .ipv6 = ipv6 };
	memcpy(i->addr, addr, ipv6 ? 16 : 4);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One frame: hlen header bytes and dlen of payload, under the lock. */
static void put_frame(struct urnic_pcap *p, uint32_t ifid, uint64_t ts, const uint8_t *hdr,
		      uint32_t hlen, const uint8_t *data, uint32_t dlen, uint32_t dir,
		      const char *reason)
{
	size_t n = urnic_pcapng_epb_bytes(hlen + dlen, reason ? strlen(reason) : 0);

	added(p, urnic_pcapng_epb(room(p, n), ifid, ts, hdr, hlen, data, dlen, dir, reason));
}

void urnic_pcap_write(const struct urnic_pcap_if *i, const struct urnic_pcap_dgram *d,
		      const uint8_t *buf, uint32_t len, uint32_t seg)
{
	struct urnic_frame_env env = {
		.ipv6 = i->ipv6,
		.sport = d->sport,
		.dport = d->dport,
		.tos = d->tos,
		.ttl = d->ttl,
	};
	size_t alen = i->ipv6 ? 16 : 4;
	uint64_t ts = wall_ns();
	uint8_t hdr[URNIC_FRAME_HDR_MAX];
	uint32_t off = 0, k = 0;

	memcpy(env.src, d->src, alen);
	memcpy(env.dst, d->dst, alen);
	urnic_frame_mac(i->ipv6, env.src, env.src_mac);
	urnic_frame_mac(i->ipv6, env.dst, env.dst_mac);
	if (!seg || seg >= len)
		seg = len ? len : 1;
	pthread_mutex_lock(&i->file->lock);
	do {
		uint32_t plen = len - off < seg ? len - off : seg;
		int hlen;

		if (plen > URNIC_FRAME_MAX_PAYLOAD)
			plen = URNIC_FRAME_MAX_PAYLOAD;
		env.ip_id = (uint16_t)(d->ip_id + k);
		hlen = urnic_frame_encode(&env, buf + off, plen, hdr);
		put_frame(i->file, i->id, ts, hdr, (uint32_t)hlen, buf + off, plen,
			  d->out ? URNIC_PCAPNG_OUTBOUND : URNIC_PCAPNG_INBOUND, d->reason);
		off += seg;
		k++;
	} while (off < len);
	pthread_mutex_unlock(&i->file->lock);
}

void urnic_pcap_write_frame(const struct urnic_pcap_if *i, const uint8_t *frame, uint32_t len,
			    const char *reason)
{
	pthread_mutex_lock(&i->file->lock);
	put_frame(i->file, i->id, wall_ns(), frame, len, NULL, 0, URNIC_PCAPNG_INBOUND, reason);
	pthread_mutex_unlock(&i->file->lock);
}

void urnic_pcap_flush(struct urnic_pcap *p)
{
	pthread_mutex_lock(&p->lock);
	flush_locked(p);
	pthread_mutex_unlock(&p->lock);
}

void urnic_pcap_close(struct urnic_pcap *p)
{
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->thread, NULL);
	flush_locked(p);
	close(p->fd);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->lock);
	free(p->path);
	free(p);
}
