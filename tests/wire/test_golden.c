/* SPDX-License-Identifier: MIT */
/*
 * test_golden.c - every RoCEv2 packet Linux rxe put on the wire decodes, re-encodes
 * byte for byte and carries the ICRC we compute (tests/golden/rxe_*.pcap, README there).
 *
 * Covers pkt.h end to end against the kernel: IBTA 9.2-9.3 header layouts, Annex A17.3.3
 * ICRC from captured headers (urnic_icrc_raw) and from a socket's view (urnic_icrc_flow);
 * the same ICRC continued past the BTH by every CRC implementation the CPU runs
 * (crc_copy.h), copying and not, whichever one urnic_crc32() chose.
 * Usage: test_golden GOLDEN_DIR [INTEROP_DIR]. Packet counts per file are those of
 * golden/verify.txt. INTEROP_DIR (golden/interop/) holds the first packets of each
 * tests/interop scenario, urnic and rxe talking to each other in both roles: every packet
 * of both senders must pass the same checks, and each scenario show its opcodes.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "pcap.h"
#include "wire/byteorder.h"
#include "wire/crc_copy.h"
#include "wire/pkt.h"

#define END_OPS (-1)
#define MAX_OPS 8

/* What each capture must contain (golden/README.md). */
struct expect {
	const char *file;
	unsigned packets; /* RoCEv2 packets, as verify.txt counts them */
	int ops[MAX_OPS + 1];
	unsigned bad_icrc_frame; /* the deliberately corrupted frame, or 0 */
};

static const struct expect expects[] = {
	{
		.file = "rxe_cm_rping.pcap",
		.packets = 29,
		.ops = { URNIC_OP_UD_SEND_ONLY, URNIC_OP_RC_SEND_ONLY,
			 URNIC_OP_RC_RDMA_READ_REQUEST, URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY,
			 URNIC_OP_RC_RDMA_WRITE_ONLY, URNIC_OP_RC_ACKNOWLEDGE, END_OPS },
	},
	{
		.file = "rxe_cm_write.pcap",
		.packets = 84,
		.ops = { URNIC_OP_UD_SEND_ONLY, URNIC_OP_RC_SEND_ONLY, URNIC_OP_RC_RDMA_WRITE_ONLY,
			 URNIC_OP_RC_ACKNOWLEDGE, END_OPS },
	},
	{
		.file = "rxe_hostpeer_rc.pcap",
		.packets = 7,
		.ops = { URNIC_OP_RC_SEND_ONLY, URNIC_OP_RC_ACKNOWLEDGE, END_OPS },
		.bad_icrc_frame = 13,
	},
	{
		.file = "rxe_rc_atomic.pcap",
		.packets = 20,
		.ops = { URNIC_OP_RC_COMPARE_SWAP, URNIC_OP_RC_FETCH_ADD,
			 URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, END_OPS },
	},
	{
		.file = "rxe_rc_read.pcap",
		.packets = 30,
		.ops = { URNIC_OP_RC_RDMA_READ_REQUEST, URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST,
			 URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE, URNIC_OP_RC_RDMA_READ_RESPONSE_LAST,
			 URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, END_OPS },
	},
	{
		.file = "rxe_rc_send.pcap",
		.packets = 12,
		.ops = { URNIC_OP_RC_SEND_ONLY, URNIC_OP_RC_ACKNOWLEDGE, END_OPS },
	},
	{
		.file = "rxe_rc_send_bw.pcap",
		.packets = 30,
		.ops = { URNIC_OP_RC_SEND_ONLY, URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE,
			 URNIC_OP_RC_SEND_LAST, URNIC_OP_RC_ACKNOWLEDGE, END_OPS },
	},
	{
		.file = "rxe_rc_send_seg.pcap",
		.packets = 16,
		.ops = { URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE, URNIC_OP_RC_SEND_LAST,
			 URNIC_OP_RC_ACKNOWLEDGE, END_OPS },
	},
	{
		.file = "rxe_rc_write.pcap",
		.packets = 30,
		.ops = { URNIC_OP_RC_RDMA_WRITE_ONLY, URNIC_OP_RC_RDMA_WRITE_FIRST,
			 URNIC_OP_RC_RDMA_WRITE_MIDDLE, URNIC_OP_RC_RDMA_WRITE_LAST,
			 URNIC_OP_RC_ACKNOWLEDGE, END_OPS },
	},
	{
		.file = "rxe_uc_send.pcap",
		.packets = 6,
		.ops = { URNIC_OP_UC_SEND_ONLY, END_OPS },
	},
	{
		.file = "rxe_ud_send.pcap",
		.packets = 6,
		.ops = { URNIC_OP_UD_SEND_ONLY, END_OPS },
	},
};

#define NEXPECTS (sizeof(expects) / sizeof(expects[0]))

/* tests/interop/run.sh's scenarios: the opcodes their first packets carry, whichever side
 * is the server (golden/interop/interop_SCENARIO_{urnic,rxe}_server.pcap). */
struct interop_expect {
	const char *scenario;
	unsigned min_payload; /* some packet carries at least this much (the MTU) */
	int ops[MAX_OPS + 1];
};

static const struct interop_expect interop_expects[] = {
	{ "rc_pingpong",
	  1024,
	  { URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE, URNIC_OP_RC_SEND_LAST,
	    URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "rc_pingpong_s1", 1, { URNIC_OP_RC_SEND_ONLY, URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "rc_pingpong_s65536",
	  1024,
	  { URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE, URNIC_OP_RC_SEND_LAST,
	    URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "rc_pingpong_m1024",
	  1024,
	  { URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE, URNIC_OP_RC_SEND_LAST,
	    URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "rc_pingpong_m4096",
	  4096,
	  { URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE, URNIC_OP_RC_SEND_LAST,
	    URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "rc_pingpong_loss",
	  1024,
	  { URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE, URNIC_OP_RC_SEND_LAST,
	    URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "ib_write_bw",
	  1024,
	  { URNIC_OP_RC_RDMA_WRITE_FIRST, URNIC_OP_RC_RDMA_WRITE_MIDDLE,
	    URNIC_OP_RC_RDMA_WRITE_LAST, URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "ib_read_bw",
	  1024,
	  { URNIC_OP_RC_RDMA_READ_REQUEST, URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST,
	    URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE, URNIC_OP_RC_RDMA_READ_RESPONSE_LAST, END_OPS } },
	{ "ib_send_bw",
	  1024,
	  { URNIC_OP_RC_SEND_FIRST, URNIC_OP_RC_SEND_MIDDLE, URNIC_OP_RC_SEND_LAST,
	    URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "ib_atomic_bw",
	  0, /* AtomicETH and AtomicAckETH are headers: no payload */
	  { URNIC_OP_RC_FETCH_ADD, URNIC_OP_RC_ATOMIC_ACKNOWLEDGE, END_OPS } },
	{ "ib_write_lat", 2, { URNIC_OP_RC_RDMA_WRITE_ONLY, END_OPS } },
	{ "ib_read_lat",
	  2,
	  { URNIC_OP_RC_RDMA_READ_REQUEST, URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, END_OPS } },
	{ "ud_pingpong", 1024, { URNIC_OP_UD_SEND_ONLY, END_OPS } },
	{ "uc_pingpong",
	  1024,
	  { URNIC_OP_UC_SEND_FIRST, URNIC_OP_UC_SEND_MIDDLE, URNIC_OP_UC_SEND_LAST, END_OPS } },
	/* rdma_cm: CM MADs (256 bytes, UD SEND ONLY to QP 1) set the connection up; rping's
	 * SEND, READ and WRITE of 64 bytes follow */
	{ "rping",
	  256,
	  { URNIC_OP_UD_SEND_ONLY, URNIC_OP_RC_SEND_ONLY, URNIC_OP_RC_RDMA_READ_REQUEST,
	    URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, URNIC_OP_RC_RDMA_WRITE_ONLY,
	    URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "rping_loss",
	  256,
	  { URNIC_OP_UD_SEND_ONLY, URNIC_OP_RC_SEND_ONLY, URNIC_OP_RC_RDMA_READ_REQUEST,
	    URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY, URNIC_OP_RC_RDMA_WRITE_ONLY,
	    URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	{ "ucmatose",
	  256,
	  { URNIC_OP_UD_SEND_ONLY, URNIC_OP_RC_SEND_ONLY, URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	/* SIDR_REQ/SIDR_REP, then UD SENDs between the resolved QPs */
	{ "udaddy", 256, { URNIC_OP_UD_SEND_ONLY, END_OPS } },
	/* rsockets: CM MADs carry the connection data; data go as RDMA WRITE with immediate
	 * into the granted buffer (2 KiB transfers: FIRST and LAST), credits and small
	 * messages as WRITE ONLY with immediate */
	{ "rstream",
	  1024,
	  { URNIC_OP_UD_SEND_ONLY, URNIC_OP_RC_RDMA_WRITE_FIRST,
	    URNIC_OP_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, URNIC_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE,
	    URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
	/* riowrite: the iomap entries and sync messages as WRITE ONLY with immediate, then
	 * plain RDMA WRITEs into the peer's mapping */
	{ "riostream",
	  1024,
	  { URNIC_OP_UD_SEND_ONLY, URNIC_OP_RC_RDMA_WRITE_FIRST, URNIC_OP_RC_RDMA_WRITE_LAST,
	    URNIC_OP_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, URNIC_OP_RC_ACKNOWLEDGE, END_OPS } },
};

#define NINTEROP (sizeof(interop_expects) / sizeof(interop_expects[0]))
#define MIN_TOTAL_PACKETS 270 /* sum of the counts above */
#define GSI_QPN 1
#define GSI_QKEY 0x80010000u
#define UD_PINGPONG_QKEY 0x11111111u
#define AETH_NAK_PSN_SEQ (URNIC_AETH_NAK | URNIC_NAK_PSN_SEQ_ERR)

struct file_stats {
	unsigned packets;
	unsigned icrc_ok;
	unsigned icrc_bad;
	unsigned bad_frame;
	unsigned flow_checked;
	unsigned flow_no_df;
	unsigned ipv6;
	unsigned op[256];
	unsigned ackreq[256];
	unsigned ud_qkey_pingpong; /* UD SEND_ONLY with Q_Key 0x11111111 */
	unsigned ud_gsi;	   /* UD SEND_ONLY to QP 1 with the GSI Q_Key */
	unsigned nak_psn_seq;	   /* ACKNOWLEDGE with AETH 0x60 */
	unsigned payload_bytes;
	unsigned max_payload;
	uint8_t src[2][4]; /* the first two IPv4 senders */
	unsigned from[2];  /* their packets */
	unsigned from_other;
};

static const struct expect *find_expect(const char *name)
{
	size_t i;

	for (i = 0; i < NEXPECTS; i++)
		if (!strcmp(expects[i].file, name))
			return &expects[i];
	return NULL;
}

/* Packets long enough past the BTH for the vector loops, and implementations run. */
static unsigned wide_packets, impl_runs;

/*
 * The ICRC through the BTH (urnic_icrc_raw over the BTH alone), continued over the rest
 * by each implementation's copy and CRC-only functions, must be the ICRC computed whole;
 * the copy must equal the payload.
 */
static void icrc_by_every_impl(const struct wire_udp *u, size_t covered, uint32_t icrc)
{
	static uint8_t copy[4096];
	const uint8_t *rest = u->payload + URNIC_BTH_BYTES;
	size_t n = covered - URNIC_BTH_BYTES;
	uint32_t head = urnic_icrc_raw(u->ip, u->ip_bytes, u->udp, u->payload, URNIC_BTH_BYTES);

	CHECK(covered >= URNIC_BTH_BYTES && n <= sizeof(copy));
	for (int i = 0; i < URNIC_CRC_COPY_IMPLS; i++) {
		urnic_crc32_copy_fn *fn = urnic_crc32_copy_get((enum urnic_crc_copy_impl)i);
		urnic_crc32_fn *crc = urnic_crc32_get((enum urnic_crc_copy_impl)i);

		if (!fn)
			continue;
		memset(copy, 0, n);
		CHECK_EQ(fn(head, copy, rest, n), icrc);
		CHECK(memcmp(copy, rest, n) == 0);
		CHECK_EQ(crc(head, rest, n), icrc);
		impl_runs++;
	}
	wide_packets += n >= 256;
}

/* One RoCEv2 packet: decode, ICRC both ways and by every implementation, re-encode. */
static void check_packet(const char *name, unsigned frame_no, const struct wire_udp *u,
			 struct file_stats *st)
{
	const uint8_t *p = u->payload;
	size_t len = u->payload_bytes, covered;
	uint8_t hdr[256];
	struct urnic_pkt pkt;
	uint32_t want, got;
	ssize_t n, m;

	n = urnic_pkt_decode(&pkt, p, len);
	if (n < 0)
		fprintf(stderr, "%s frame %u: decode failed (%zd), opcode 0x%02x\n", name, frame_no,
			n, len ? p[0] : 0);
	CHECK(n > 0);
	CHECK_EQ(n, urnic_opcode_info(pkt.bth.opcode)->hdr_bytes);
	CHECK(pkt.payload == p + n);
	CHECK_EQ(pkt.payload_bytes, len - (size_t)n - pkt.bth.pad - URNIC_ICRC_BYTES);
	st->payload_bytes += pkt.payload_bytes;
	if (pkt.payload_bytes > st->max_payload)
		st->max_payload = (unsigned)pkt.payload_bytes;
	if (!u->ipv6) {
		unsigned s;

		for (s = 0; s < 2; s++) {
			if (!st->from[s])
				memcpy(st->src[s], u->ip + 12, 4);
			if (!memcmp(st->src[s], u->ip + 12, 4)) {
				st->from[s]++;
				break;
			}
		}
		st->from_other += s == 2;
	}

	/* encode(decode(bytes)) == bytes */
	memset(hdr, 0xa5, sizeof(hdr));
	m = urnic_pkt_encode_hdr(&pkt, hdr, sizeof(hdr));
	CHECK_EQ(m, n);
	CHECK(memcmp(hdr, p, (size_t)n) == 0);

	covered = len - URNIC_ICRC_BYTES;
	want = urnic_get_le32(p + covered);
	got = urnic_icrc_raw(u->ip, u->ip_bytes, u->udp, p, covered);
	if (got == want) {
		st->icrc_ok++;
	} else {
		printf("  %s frame %u: ICRC on wire %08x, computed %08x\n", name, frame_no, want,
		       got);
		st->icrc_bad++;
		st->bad_frame = frame_no;
	}
	icrc_by_every_impl(u, covered, got);

	if (u->ipv6) {
		st->ipv6++;
	} else if (urnic_get_be16(u->ip + 6) & 0x4000) {
		/* The socket sender's view: only addresses, ports and the IP ID. */
		struct urnic_icrc_flow flow = {
			.ipv6 = false,
			.ip_id = urnic_get_be16(u->ip + 4),
			.sport = u->sport,
			.dport = u->dport,
		};
		struct urnic_frag frag = { .base = p, .len = covered };

		memcpy(flow.src, u->ip + 12, 4);
		memcpy(flow.dst, u->ip + 16, 4);
		CHECK_EQ(u->ip_bytes, 20);
		CHECK_EQ(urnic_icrc_flow(&flow, &frag, 1, covered), got);
		st->flow_checked++;
	} else {
		st->flow_no_df++;
	}

	st->packets++;
	st->op[pkt.bth.opcode]++;
	st->ackreq[pkt.bth.opcode] += pkt.bth.ackreq;
	if (pkt.bth.opcode == URNIC_OP_UD_SEND_ONLY) {
		if (pkt.deth.qkey == UD_PINGPONG_QKEY)
			st->ud_qkey_pingpong++;
		if (pkt.bth.dqpn == GSI_QPN && pkt.deth.qkey == GSI_QKEY)
			st->ud_gsi++;
	}
	if (pkt.bth.opcode == URNIC_OP_RC_ACKNOWLEDGE && pkt.aeth.syndrome == AETH_NAK_PSN_SEQ)
		st->nak_psn_seq++;
}

static void print_stats(const char *name, const struct file_stats *st)
{
	unsigned op;

	printf("%s: %u RoCEv2 packets, %u payload bytes; ICRC ok %u, bad %u; flow ICRC %u, "
	       "no DF %u, IPv6 %u\n",
	       name, st->packets, st->payload_bytes, st->icrc_ok, st->icrc_bad, st->flow_checked,
	       st->flow_no_df, st->ipv6);
	for (op = 0; op < 256; op++)
		if (st->op[op])
			printf("    %4u x 0x%02x %-34s (AckReq %u)\n", st->op[op], op,
			       urnic_opcode_table[op].name, st->ackreq[op]);
}

static void check_expect(const char *name, const struct expect *e, const struct file_stats *st)
{
	const int *op;

	CHECK_EQ(st->packets, e->packets);
	for (op = e->ops; *op != END_OPS; op++) {
		if (!st->op[*op])
			fprintf(stderr, "%s: no %s\n", name, urnic_opcode_table[*op].name);
		CHECK(st->op[*op] > 0);
	}
	if (e->bad_icrc_frame) {
		/* golden/README.md: frame 13 of the host-peer run is corrupted on purpose. */
		CHECK_EQ(st->icrc_bad, 1);
		CHECK_EQ(st->bad_frame, e->bad_icrc_frame);
	} else {
		CHECK_EQ(st->icrc_bad, 0);
	}
	if (!strcmp(name, "rxe_ud_send.pcap"))
		CHECK_EQ(st->ud_qkey_pingpong, st->op[URNIC_OP_UD_SEND_ONLY]);
	if (!strcmp(name, "rxe_cm_rping.pcap") || !strcmp(name, "rxe_cm_write.pcap"))
		CHECK(st->ud_gsi > 0 && st->ud_gsi == st->op[URNIC_OP_UD_SEND_ONLY]);
	if (!strcmp(name, "rxe_hostpeer_rc.pcap"))
		CHECK_EQ(st->nak_psn_seq, 1);
	if (!strcmp(name, "rxe_rc_send_seg.pcap")) {
		/* reference 2.9: AckReq on the last packet of a message only. */
		CHECK_EQ(st->ackreq[URNIC_OP_RC_SEND_FIRST], 0);
		CHECK_EQ(st->ackreq[URNIC_OP_RC_SEND_MIDDLE], 0);
		CHECK_EQ(st->ackreq[URNIC_OP_RC_SEND_LAST], st->op[URNIC_OP_RC_SEND_LAST]);
	}
}

/* Every RoCEv2 packet of DIR/NAME through check_packet(); the tallies in *st. */
static void scan_file(const char *dir, const char *name, struct file_stats *st)
{
	struct wire_pcap pc;
	struct wire_frame fr;
	struct wire_udp u;
	char path[4096];
	int rc;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	rc = wire_pcap_open(&pc, path);
	if (rc)
		fprintf(stderr, "%s: cannot read (%d)\n", path, rc);
	CHECK_EQ(rc, 0);
	while ((rc = wire_pcap_next(&pc, &fr)) == 1) {
		if (!wire_frame_udp(&fr, &u) || u.dport != URNIC_ROCE_UDP_PORT)
			continue;
		check_packet(name, fr.frame_no, &u, st);
	}
	CHECK_EQ(rc, 0);
	wire_pcap_close(&pc);
	print_stats(name, st);
}

static unsigned check_file(const char *dir, const char *name)
{
	const struct expect *e = find_expect(name);
	static struct file_stats st;

	scan_file(dir, name, &st);
	CHECK(st.packets > 0);
	CHECK(st.flow_checked > 0);
	if (!e)
		fprintf(stderr, "%s: not in the expectations table; add it\n", name);
	CHECK(e != NULL);
	check_expect(name, e, &st);
	return st.packets;
}

static int is_rxe_pcap(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return !strncmp(d->d_name, "rxe_", 4) && n > 5 && !strcmp(d->d_name + n - 5, ".pcap");
}

/* interop_SCENARIO_{urnic,rxe}_server.pcap: both senders on the wire, every ICRC right
 * (rxe's counted IP IDs and urnic's GSO segments alike), the scenario's opcodes. */
static unsigned check_interop_file(const char *dir, const char *name, unsigned *seen)
{
	static struct file_stats st;
	const struct interop_expect *e = NULL;
	char scenario[128];
	const char *role;
	size_t i, len;
	const int *op;

	role = strstr(name, "_urnic_server.pcap");
	if (!role)
		role = strstr(name, "_rxe_server.pcap");
	CHECK(role != NULL && !strncmp(name, "interop_", 8));
	len = (size_t)(role - name) - 8;
	CHECK(len < sizeof(scenario));
	memcpy(scenario, name + 8, len);
	scenario[len] = 0;
	for (i = 0; i < NINTEROP; i++)
		if (!strcmp(interop_expects[i].scenario, scenario))
			e = &interop_expects[i];
	if (!e)
		fprintf(stderr, "%s: scenario %s is not in interop_expects; add it\n", name,
			scenario);
	CHECK(e != NULL);
	seen[e - interop_expects]++;

	scan_file(dir, name, &st);
	CHECK(st.packets > 0);
	CHECK_EQ(st.icrc_bad, 0);
	CHECK_EQ(st.ipv6, 0);
	CHECK_EQ(st.flow_no_df, 0); /* both senders set DF */
	CHECK_EQ(st.flow_checked, st.packets);
	/* urnic (10.77.0.1) and rxe (10.77.0.11) both sent, nobody else */
	CHECK(st.from[0] > 0 && st.from[1] > 0);
	CHECK_EQ(st.from_other, 0);
	CHECK(st.max_payload >= e->min_payload);
	for (op = e->ops; *op != END_OPS; op++) {
		if (!st.op[*op])
			fprintf(stderr, "%s: no %s\n", name, urnic_opcode_table[*op].name);
		CHECK(st.op[*op] > 0);
	}
	return st.packets;
}

static int is_interop_pcap(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return !strncmp(d->d_name, "interop_", 8) && n > 5 && !strcmp(d->d_name + n - 5, ".pcap");
}

static void check_interop_dir(const char *dir)
{
	unsigned seen[NINTEROP] = { 0 }, total = 0;
	struct dirent **names;
	size_t i;
	int n, k;

	n = scandir(dir, &names, is_interop_pcap, alphasort);
	if (n < 0)
		perror(dir);
	CHECK(n >= 0);
	for (k = 0; k < n; k++) {
		total += check_interop_file(dir, names[k]->d_name, seen);
		free(names[k]);
	}
	free(names);
	/* every scenario, in both roles: none silently missing */
	for (i = 0; i < NINTEROP; i++) {
		if (seen[i] != 2)
			fprintf(stderr,
				"%s: %u captures of %s, want 2 (urnic_server, rxe_server)\n", dir,
				seen[i], interop_expects[i].scenario);
		CHECK_EQ(seen[i], 2);
	}
	printf("interop: %u RoCEv2 packets in %d files\n", total, n);
}

int main(int argc, char **argv)
{
	struct dirent **names;
	unsigned total = 0;
	int i, n;

	if (argc != 2 && argc != 3) {
		fprintf(stderr, "usage: %s GOLDEN_DIR [INTEROP_DIR]\n", argv[0]);
		return 2;
	}
	n = scandir(argv[1], &names, is_rxe_pcap, alphasort);
	if (n < 0)
		perror(argv[1]);
	CHECK(n >= 0);
	/* Every expected capture is there, none is silently missing. */
	CHECK_EQ((size_t)n, NEXPECTS);
	for (i = 0; i < n; i++) {
		total += check_file(argv[1], names[i]->d_name);
		free(names[i]);
	}
	free(names);
	printf("total: %u RoCEv2 packets in %d files\n", total, n);
	CHECK(total >= MIN_TOTAL_PACKETS);
	printf("ICRC by every CRC implementation: %u runs, %u packets of 256 bytes or more "
	       "past the BTH\n",
	       impl_runs, wide_packets);
	CHECK(wide_packets > 0);
	if (argc == 3)
		check_interop_dir(argv[2]);
	printf("ok golden\n");
	return 0;
}
