/* SPDX-License-Identifier: MIT */
/*
 * test_cm_golden.c - every CM MAD Linux put on the wire in the rdma_cm captures decodes,
 * re-encodes to its 256 bytes, and says what the rest of the capture shows.
 *
 * tests/golden/rxe_cm_{rping,write}.pcap: rping and ib_write_bw -R over rxe (golden
 * README.md). The MADs are UD SEND_ONLY payloads to QP 1 (cm.h, IBTA 12.6, 13.4.2). Each
 * connection's REQ, REP, RTU, DREQ and DREP must agree with each other (communication IDs,
 * transaction IDs), with the frames that carry them (CA GUIDs from the MACs, the rdma_cm
 * header's addresses from the IP header) and with the RC traffic that follows: its
 * destination QPNs and first PSNs. Usage: test_wire_cm_golden GOLDEN_DIR.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pcap.h"
#include "wire/byteorder.h"
#include "wire/cm.h"
#include "wire/cma.h"

#define MAX_MADS 16
#define MAX_FLOWS 16

struct seen_mad {
	unsigned frame_no;
	uint8_t src_ip[4], dst_ip[4];
	uint8_t src_mac[6];
	struct urnic_cm_mad mad;
};

/* The first RC request from one address to one QPN: where the CM's PSNs show up. */
struct rc_flow {
	uint8_t src_ip[4];
	uint32_t dqpn;
	uint32_t first_psn;
};

struct capture {
	struct seen_mad mads[MAX_MADS];
	unsigned nmads;
	struct rc_flow flows[MAX_FLOWS];
	unsigned nflows;
	unsigned psn_checked, qpn_checked;
};

/* What each capture must hold (golden/MANIFEST.tsv: the commands that ran). */
static const struct cm_expect {
	const char *file;
	const char *attrs; /* the CM messages in frame order */
	uint16_t port;	   /* the server's rdma_cm port: the REQ's service ID */
	unsigned connections;
} expects[] = {
	{ "rxe_cm_rping.pcap", "REQ REP RTU DREQ DREP", 7174, 1 },
	{ "rxe_cm_write.pcap", "REQ REP RTU REQ REP RTU DREQ DREP DREQ DREP", 18515, 2 },
};

static const uint8_t server_ip[4] = { 10, 50, 0, 11 }, client_ip[4] = { 10, 50, 0, 12 };

static void note_rc(struct capture *c, const struct wire_udp *u, const struct urnic_pkt *pkt)
{
	unsigned i;

	if (!(urnic_opcode_info(pkt->bth.opcode)->flags & URNIC_OPF_REQ))
		return;
	for (i = 0; i < c->nflows; i++)
		if (!memcmp(c->flows[i].src_ip, u->ip + 12, 4) && c->flows[i].dqpn == pkt->bth.dqpn)
			return;
	CHECK(c->nflows < MAX_FLOWS);
	memcpy(c->flows[c->nflows].src_ip, u->ip + 12, 4);
	c->flows[c->nflows].dqpn = pkt->bth.dqpn;
	c->flows[c->nflows].first_psn = pkt->bth.psn;
	c->nflows++;
}

/* A GSI MAD: decodes, re-encodes to the same 256 bytes, kept for the checks below. */
static void note_mad(struct capture *c, const struct wire_frame *fr, const struct wire_udp *u,
		     const struct urnic_pkt *pkt)
{
	struct seen_mad *s = &c->mads[c->nmads];
	enum urnic_cm_reason why = URNIC_CM_R_COUNT;
	uint8_t again[URNIC_MAD_BYTES + 8];

	CHECK(c->nmads < MAX_MADS);
	CHECK_EQ(pkt->payload_bytes, URNIC_MAD_BYTES);
	if (urnic_cm_decode_pkt(&s->mad, pkt, &why) != URNIC_MAD_BYTES)
		fprintf(stderr, "frame %u: refused: %s\n", fr->frame_no, urnic_cm_reason_name(why));
	CHECK_EQ(why, URNIC_CM_R_OK);
	memset(again, 0xa5, sizeof(again));
	CHECK_EQ(urnic_cm_encode(&s->mad, again, sizeof(again)), URNIC_MAD_BYTES);
	CHECK(memcmp(again, pkt->payload, URNIC_MAD_BYTES) == 0);
	CHECK_EQ(again[URNIC_MAD_BYTES], 0xa5); /* nothing written past the MAD */
	s->frame_no = fr->frame_no;
	memcpy(s->src_ip, u->ip + 12, 4);
	memcpy(s->dst_ip, u->ip + 16, 4);
	memcpy(s->src_mac, fr->data + 6, 6);
	c->nmads++;
}

static void scan(const char *dir, const char *name, struct capture *c)
{
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;
	struct urnic_pkt pkt;
	char path[4096];

	memset(c, 0, sizeof(*c));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	CHECK_EQ(wire_pcap_open(&pc, path), 0);
	while (wire_pcap_next(&pc, &fr) == 1) {
		if (!wire_frame_udp(&fr, &u) || u.dport != URNIC_ROCE_UDP_PORT)
			continue;
		CHECK(urnic_pkt_decode(&pkt, u.payload, u.payload_bytes) > 0);
		if (pkt.bth.opcode == URNIC_OP_UD_SEND_ONLY)
			note_mad(c, &fr, &u, &pkt);
		else
			note_rc(c, &u, &pkt);
	}
	wire_pcap_close(&pc);
}

/* The modified EUI-64 Linux derives a RoCE port's GUID from its MAC (addrconf_addr_eui48). */
static uint64_t guid_of_mac(const uint8_t *mac)
{
	const uint8_t g[8] = {
		(uint8_t)(mac[0] ^ 2), mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5]
	};

	return urnic_get_be64(g);
}

/* An IPv4-mapped GID, ::ffff:a.b.c.d: RoCEv2 GID index 1. */
static int gid_is_ip(const uint8_t *gid, const uint8_t *ip)
{
	static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

	return !memcmp(gid, prefix, 12) && !memcmp(gid + 12, ip, 4);
}

/* The PSN the first RC request from src to QPN qpn carried, if any did. */
static void check_psn(struct capture *c, const uint8_t *src, uint32_t qpn, uint32_t psn)
{
	unsigned i;

	for (i = 0; i < c->nflows; i++) {
		if (memcmp(c->flows[i].src_ip, src, 4) || c->flows[i].dqpn != qpn)
			continue;
		CHECK_EQ(c->flows[i].first_psn, psn);
		c->psn_checked++;
	}
}

/* Whether some RC request went from src to QPN qpn. */
static int qpn_used(const struct capture *c, const uint8_t *src, uint32_t qpn)
{
	unsigned i;

	for (i = 0; i < c->nflows; i++)
		if (!memcmp(c->flows[i].src_ip, src, 4) && c->flows[i].dqpn == qpn)
			return 1;
	return 0;
}

static const struct seen_mad *find(const struct capture *c, uint16_t attr, uint32_t local,
				   uint32_t remote)
{
	unsigned i;

	for (i = 0; i < c->nmads; i++) {
		const struct urnic_cm_mad *m = &c->mads[i].mad;

		if (m->hdr.attr_id != attr)
			continue;
		/* The communication IDs sit first in REP, RTU, DREQ and DREP alike. */
		if (m->msg.rtu.local_comm_id == local && m->msg.rtu.remote_comm_id == remote)
			return &c->mads[i];
	}
	return NULL;
}

/* REQ: rdma_cm's service ID and header (cma.c), the client's identity and paths. */
static void check_req(const struct seen_mad *s, const struct cm_expect *e)
{
	const struct urnic_cm_req *req = &s->mad.msg.req;
	struct urnic_cma_hdr h;
	enum urnic_rdma_ps ps;
	uint16_t port;

	CHECK(!memcmp(s->src_ip, client_ip, 4) && !memcmp(s->dst_ip, server_ip, 4));
	CHECK_EQ(req->service_id, urnic_cma_service_id(URNIC_RDMA_PS_TCP, e->port));
	CHECK_EQ(req->service_id, 0x0000000001060000ull | e->port);
	CHECK_EQ(urnic_cma_service_id_decode(req->service_id, &ps, &port, NULL), 0);
	CHECK(ps == URNIC_RDMA_PS_TCP && port == e->port);
	CHECK_EQ(req->transport_type, URNIC_CM_TRANSPORT_RC);
	CHECK_EQ(req->local_qkey, 0); /* RC: no Q_Key */
	CHECK_EQ(req->local_ca_guid, guid_of_mac(s->src_mac));
	CHECK_EQ(req->pkey, URNIC_DEFAULT_PKEY);
	CHECK_EQ(req->path_mtu, 3); /* 1024: the port MTU (golden README) */
	CHECK(gid_is_ip(req->primary.local_gid, client_ip));
	CHECK(gid_is_ip(req->primary.remote_gid, server_ip));
	CHECK_EQ(req->alternate.local_lid, 0); /* no alternate path */

	CHECK_EQ(urnic_cma_hdr_decode(&h, req->private_data, sizeof(req->private_data), NULL),
		 URNIC_CMA_HDR_BYTES);
	CHECK_EQ(h.ip_version, 4);
	CHECK(!memcmp(h.src_addr + 12, client_ip, 4) && !memcmp(h.dst_addr + 12, server_ip, 4));
	CHECK(h.src_port != 0);
}

/* One connection, from its REQ: the other messages that answer it, and the RC traffic. */
static void check_connection(struct capture *c, const struct seen_mad *s, const struct cm_expect *e)
{
	const struct urnic_cm_req *req = &s->mad.msg.req;
	const struct seen_mad *rep, *rtu, *dreq, *drep;
	uint32_t client_qpn = req->local_qpn, server_qpn;
	uint64_t tid = s->mad.hdr.tid;

	check_req(s, e);
	rep = NULL;
	for (unsigned i = 0; i < c->nmads; i++)
		if (c->mads[i].mad.hdr.attr_id == URNIC_CM_ATTR_REP &&
		    c->mads[i].mad.msg.rep.remote_comm_id == req->local_comm_id)
			rep = &c->mads[i];
	CHECK(rep != NULL);
	CHECK(!memcmp(rep->src_ip, server_ip, 4) && rep->mad.hdr.tid == tid);
	CHECK_EQ(rep->mad.msg.rep.local_ca_guid, guid_of_mac(rep->src_mac));
	server_qpn = rep->mad.msg.rep.local_qpn;

	rtu = find(c, URNIC_CM_ATTR_RTU, req->local_comm_id, rep->mad.msg.rep.local_comm_id);
	CHECK(rtu != NULL && rtu->mad.hdr.tid == tid && rtu->frame_no > rep->frame_no);

	/* Either side may disconnect; the DREQ names the peer's QPN, the DREP answers it. */
	dreq = find(c, URNIC_CM_ATTR_DREQ, req->local_comm_id, rep->mad.msg.rep.local_comm_id);
	if (dreq) {
		CHECK_EQ(dreq->mad.msg.dreq.remote_qpn_eecn, server_qpn);
		drep = find(c, URNIC_CM_ATTR_DREP, rep->mad.msg.rep.local_comm_id,
			    req->local_comm_id);
	} else {
		dreq = find(c, URNIC_CM_ATTR_DREQ, rep->mad.msg.rep.local_comm_id,
			    req->local_comm_id);
		CHECK(dreq != NULL);
		CHECK_EQ(dreq->mad.msg.dreq.remote_qpn_eecn, client_qpn);
		drep = find(c, URNIC_CM_ATTR_DREP, req->local_comm_id,
			    rep->mad.msg.rep.local_comm_id);
	}
	CHECK(drep != NULL && drep->mad.hdr.tid == dreq->mad.hdr.tid);

	/* IBTA 12.6 / Linux cm.c: the REQ's starting PSN is where the passive side's send
	 * queue starts, the REP's where the active side's does; each QPN is where the
	 * other side's requests go. */
	CHECK(qpn_used(c, client_ip, server_qpn) || qpn_used(c, server_ip, client_qpn));
	c->qpn_checked++;
	check_psn(c, server_ip, client_qpn, req->starting_psn);
	check_psn(c, client_ip, server_qpn, rep->mad.msg.rep.starting_psn);
	printf("  connection %08x/%08x: client QPN %#x PSN %#x, server QPN %#x PSN %#x\n",
	       req->local_comm_id, rep->mad.msg.rep.local_comm_id, client_qpn, req->starting_psn,
	       server_qpn, rep->mad.msg.rep.starting_psn);
}

static void check_capture(const char *dir, const struct cm_expect *e)
{
	static struct capture c;
	char attrs[256] = "";
	unsigned i, reqs = 0;

	scan(dir, e->file, &c);
	for (i = 0; i < c.nmads; i++) {
		const struct urnic_mad_hdr *h = &c.mads[i].mad.hdr;

		CHECK(urnic_cm_attr_name(h->attr_id) != NULL);
		snprintf(attrs + strlen(attrs), sizeof(attrs) - strlen(attrs), "%s%s", i ? " " : "",
			 urnic_cm_attr_name(h->attr_id));
	}
	printf("%s: %u CM MADs: %s\n", e->file, c.nmads, attrs);
	CHECK(!strcmp(attrs, e->attrs));
	for (i = 0; i < c.nmads; i++) {
		if (c.mads[i].mad.hdr.attr_id != URNIC_CM_ATTR_REQ)
			continue;
		check_connection(&c, &c.mads[i], e);
		reqs++;
	}
	CHECK_EQ(reqs, e->connections);
	CHECK_EQ(c.qpn_checked, e->connections);
	/* Both directions' PSNs were seen at least once in the capture. */
	CHECK(c.psn_checked >= 2);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s GOLDEN_DIR\n", argv[0]);
		return 2;
	}
	for (i = 0; i < sizeof(expects) / sizeof(expects[0]); i++)
		check_capture(argv[1], &expects[i]);
	printf("ok cm_golden\n");
	return 0;
}
