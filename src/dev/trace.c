/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the capture files of URNIC_PCAP (trace.h) and what the engine makes of each
 * received packet: the drop counters are the engine's only verdict on a packet, so a
 * traced device's sink compares them before and after the packet's receive.
 * Context: files are found and added under the process's trace lock; records are
 * written under each file's own (pcap.c).
 */
#include "dev/trace.h"
#include "engine/roce/roce.h"
#include "engine/uet/uet_rc.h"

#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* The process's capture files, by path, each with the devices it has an interface for
 * (a device that starts again keeps its interface), and the process that opened it: a
 * child of fork(2) inherits the table and the records not yet written, which are its
 * parent's to write. */
struct trace_file {
	char path[PATH_MAX];
	pid_t pid;
	struct urnic_pcap *pcap;
	uint32_t nifs;
	struct urnic_pcap_if ifs[URNIC_MAX_DEVICES];
	char if_dev[URNIC_MAX_DEVICES][32];
};

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct trace_file files[URNIC_MAX_DEVICES];
static uint32_t nfiles;

/* Counters whose move marks a received packet refused: every drop_* but the send's
 * drop_tx_failed (a full batch may leave during a receive). */
static bool rx_drop[URNIC_CTR_COUNT];
static pthread_once_t rx_drop_once = PTHREAD_ONCE_INIT;

static void find_rx_drops(void)
{
	for (int c = 0; c < URNIC_CTR_COUNT; c++)
		rx_drop[c] = strncmp(urnic_counter_names[c], "drop_", 5) == 0 &&
			     c != URNIC_CTR_drop_tx_failed;
}

/* tmpl with %p, %d and %% replaced (config.c checked there are no others). */
static int expand(const char *tmpl, const char *dev, char *out, size_t len)
{
	size_t n = 0;

	for (const char *c = tmpl; *c; c++) {
		int w;

		if (*c != '%')
			w = snprintf(out + n, len - n, "%c", *c);
		else if (*++c == 'p')
			w = snprintf(out + n, len - n, "%ld", (long)getpid());
		else if (*c == 'd')
			w = snprintf(out + n, len - n, "%s", dev);
		else
			w = snprintf(out + n, len - n, "%%");
		if (w < 0 || (size_t)w >= len - n)
			return -ENAMETOOLONG;
		n += (size_t)w;
	}
	return 0;
}

/* The file at path, opened if need be. Under the trace lock. */
static int file_at(const char *path, struct trace_file **out)
{
	struct trace_file *f;
	int ret;

	for (uint32_t i = 0; i < nfiles; i++)
		if (files[i].pid == getpid() && strcmp(files[i].path, path) == 0) {
			*out = &files[i];
			return 0;
		}
	if (nfiles == URNIC_MAX_DEVICES)
		return -EMFILE;
	f = &files[nfiles];
	ret = urnic_pcap_open(&f->pcap, path);
	if (ret)
		return ret;
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->pid = getpid();
	f->nifs = 0;
	nfiles++;
	*out = f;
	return 0;
}

/* d's interface in f, added if need be. Under the trace lock. */
static int if_of(struct trace_file *f, const struct urnic_dev *d, const struct urnic_pcap_if **out)
{
	int ret;

	for (uint32_t i = 0; i < f->nifs; i++)
		if (strcmp(f->if_dev[i], d->name) == 0) {
			*out = &f->ifs[i];
			return 0;
		}
	if (f->nifs == URNIC_MAX_DEVICES)
		return -ENOSPC;
	ret = urnic_pcap_add_if(f->pcap, &f->ifs[f->nifs], d->name, d->ipv6, d->addr,
				d->kind == URNIC_KIND_UET ? "UET, UDP 4793" : "RoCEv2, UDP 4791");
	if (ret)
		return ret;
	snprintf(f->if_dev[f->nifs], sizeof(f->if_dev[0]), "%s", d->name);
	*out = &f->ifs[f->nifs++];
	return 0;
}

int urnic_dev_trace_start(struct urnic_dev *d, const char *tmpl)
{
	const struct urnic_pcap_if *i = NULL;
	struct trace_file *f;
	char path[PATH_MAX];
	int ret;

	pthread_once(&rx_drop_once, find_rx_drops);
	ret = expand(tmpl, d->name, path, sizeof(path));
	pthread_mutex_lock(&trace_lock);
	if (!ret)
		ret = file_at(path, &f);
	if (!ret)
		ret = if_of(f, d, &i);
	pthread_mutex_unlock(&trace_lock);
	if (ret) {
		fprintf(stderr, "urnic: %s (%s): URNIC_PCAP='%s': cannot capture to %s (%s)\n",
			d->name, d->addr_str, tmpl, ret == -ENAMETOOLONG ? tmpl : path,
			strerror(-ret));
		return ret;
	}
	d->udp->pcap = i;
	return 0;
}

void urnic_dev_trace_stop(struct urnic_dev *d)
{
	if (!d->udp->pcap)
		return;
	urnic_pcap_flush(d->udp->pcap->file);
	d->udp->pcap = NULL;
}

void urnic_dev_trace_flush_all(void)
{
	pthread_mutex_lock(&trace_lock);
	for (uint32_t i = 0; i < nfiles; i++)
		if (files[i].pid == getpid())
			urnic_pcap_flush(files[i].pcap);
	pthread_mutex_unlock(&trace_lock);
}

/* The names of the drop counters that moved since before, space-separated, into why;
 * false if none did. */
static bool dropped(const uint64_t *now, const uint64_t *before, char *why, size_t len)
{
	size_t n = 0;

	for (int c = 0; c < URNIC_CTR_COUNT; c++) {
		int w;

		if (!rx_drop[c] || now[c] == before[c])
			continue;
		w = snprintf(why + n, len - n, "%s%s", n ? " " : "", urnic_counter_names[c]);
		if (w < 0 || (size_t)w >= len - n)
			break; /* cut: the first names are there */
		n += (size_t)w;
	}
	return n > 0;
}

void urnic_dev_trace_rx(void *ctx, const struct urnic_rx_meta *m, const uint8_t *buf, size_t len)
{
	struct urnic_dev *d = ctx;
	struct urnic_engine *e = d->eng;
	const uint64_t *now = e->stats.counters;
	uint64_t before[URNIC_CTR_COUNT];
	char why[URNIC_PCAP_COMMENT_MAX];
	struct urnic_pcap_dgram g = {
		.src = m->src_ip,
		.dst = m->dst_ip,
		.sport = m->sport,
		.dport = d->udp->port,
		.tos = m->tos,
		.ttl = m->ttl,
		.ip_id = m->ip_id_hint,
	};

	memcpy(before, now, sizeof(before));
	if (d->kind == URNIC_KIND_UET)
		urnic_uet_rx(e, m, buf, len);
	else
		urnic_roce_rx(e, m, buf, len);
	if (dropped(now, before, why, sizeof(why)))
		g.reason = why;
	/* The sender counts its IPv4 IDs (rxe): the ICRC was right for the one recovered
	 * (engine/roce/rx.c, icrc_ok), which is then the ID it had on the wire. */
	if (now[URNIC_CTR_rx_icrc_ipv4_id] != before[URNIC_CTR_rx_icrc_ipv4_id])
		g.ip_id = e->ipid.seen.id;
	urnic_pcap_write(d->udp->pcap, &g, buf, (uint32_t)len, 0);
}
