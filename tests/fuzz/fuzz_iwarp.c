/* SPDX-License-Identifier: MIT */
/*
 * fuzz_iwarp.c - arbitrary bytes as the TCP stream into a connected iWARP QP
 * (engine/iwarp/iw_qp.h, urnic_iw_rx), in splits the input chooses.
 *
 * The QP has receive WQEs posted and two READs and a Send outstanding, so that Sends,
 * Writes, Read Requests, Read Responses and Terminates all reach placement. Its region
 * (key FUZZ_IW_KEY at FUZZ_IW_IOVA, every right) sits between canaries; after every
 * piece a pass runs and the QP's output is taken. Invariants: the canaries around the
 * region are never written; no more bytes are taken than given; the
 * QP is in RTS or in error; everything it sends is well-formed FPDUs, a Terminate
 * only last and at most one, and only after it entered error. A broken one aborts.
 *
 * Input: byte 0: bit 0 CRC negotiated, bits 1-3 IRD - 1, bits 4-7 the largest piece
 * (16 << n bytes); byte 1 seeds the splits; the rest is the stream.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine.h"
#include "engine/iwarp/iw_qp.h"
#include "harness.h"
#include "mem/mr.h"
#include "wire/ddp.h"
#include "wire/fpdu.h"

enum {
	FUZZ_IW_CANARY = 4096,
	FUZZ_IW_LEN = 16384,
	FUZZ_IW_KEY_RAND = 1, /* slot 1, key bits 1: the key is 0x10001 */
	FUZZ_IW_KEY = 0x10001,
	FUZZ_IW_IOVA = 0x100000,
	FUZZ_IW_OUT = 1 << 20,
};

static uint8_t mem[2 * FUZZ_IW_CANARY + FUZZ_IW_LEN];
static uint8_t out[FUZZ_IW_OUT];

static void must(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_iwarp: %s\n", what);
		abort();
	}
}

static void no_flush(struct urnic_engine *e)
{
	e->tx.n = 0;
}

struct rig {
	struct urnic_engine e;
	struct urnic_qp qp;
	struct urnic_cq scq, rcq;
	struct urnic_pd pd;
	struct urnic_mr *mr;
	unsigned terms;
	bool crc;
	bool saw_term_last;
};

static void post_send(struct rig *r, uint32_t opcode, uint32_t off, uint32_t len)
{
	uint32_t prod = atomic_load(&r->qp.sq.prod);
	struct urnic_send_wqe *w = urnic_wq_slot(&r->qp.sq, prod);

	memset(w, 0, sizeof(*w));
	w->wr_id = prod;
	w->opcode = opcode;
	w->flags = URNIC_SEND_SIGNALED;
	w->rkey = FUZZ_IW_KEY;
	w->remote_addr = FUZZ_IW_IOVA;
	w->length = len;
	w->num_sge = 1;
	w->sge[0] = (struct urnic_sge){ FUZZ_IW_IOVA + off, len, r->mr->key };
	atomic_store(&r->qp.sq.prod, prod + 1);
}

static void post_recv(struct rig *r, uint32_t off, uint32_t len)
{
	uint32_t prod = atomic_load(&r->qp.rq.prod);
	struct urnic_recv_wqe *w = urnic_wq_slot(&r->qp.rq, prod);

	memset(w, 0, sizeof(*w));
	w->wr_id = prod;
	w->num_sge = 1;
	w->length = len;
	w->sge[0] = (struct urnic_sge){ FUZZ_IW_IOVA + off, len, r->mr->key };
	atomic_store(&r->qp.rq.prod, prod + 1);
}

static void rig_open(struct rig *r, uint8_t ctl)
{
	static const uint8_t ip[4] = { 10, 0, 0, 2 };
	struct urnic_qp_attr a = { .port_num = 1, .access = 0xf };
	struct urnic_iw_conn_params p = {
		.crc = ctl & 1,
		.mss = 1460,
		.ird = (uint16_t)(1 + ((ctl >> 1) & 7)),
		.ord = 4,
	};

	memset(r, 0, sizeof(*r));
	must(urnic_engine_init(&r->e, false, ip, no_flush, NULL, 1) == 0, "engine init");
	r->e.cfg.iwarp = true;
	r->crc = p.crc;
	must(urnic_wq_init(&r->qp.sq, 16, sizeof(struct urnic_send_wqe)) == 0, "sq");
	must(urnic_wq_init(&r->qp.rq, 16, sizeof(struct urnic_recv_wqe)) == 0, "rq");
	must(urnic_cq_init(&r->scq, 64) == 0 && urnic_cq_init(&r->rcq, 64) == 0, "cq");
	r->pd.handle = 1;
	r->qp.type = URNIC_QPT_RC;
	r->qp.pd = &r->pd;
	r->qp.send_cq = &r->scq;
	r->qp.recv_cq = &r->rcq;
	must(urnic_engine_qp_add(&r->e, &r->qp) == 0, "qp add");
	urnic_engine_qp_apply(&r->e, &r->qp, &a, URNIC_QPS_INIT,
			      URNIC_QP_STATE | URNIC_QP_PORT | URNIC_QP_ACCESS_FLAGS, 0);
	must(urnic_mr_register(&r->e.mrs, &r->pd, mem + FUZZ_IW_CANARY, FUZZ_IW_IOVA, FUZZ_IW_LEN,
			       0xf, FUZZ_IW_KEY_RAND, &r->mr) == 0 &&
		     r->mr->key == FUZZ_IW_KEY,
	     "region");
	must(urnic_iw_qp_connect(&r->e, &r->qp, &p, 0) == 0, "connect");
	for (uint32_t i = 0; i < 4; i++)
		post_recv(r, i * 512, 256);
	post_send(r, URNIC_WR_RDMA_READ, 8192, 512);
	post_send(r, URNIC_WR_RDMA_READ, 9216, 100);
	post_send(r, URNIC_WR_SEND, 12288, 64);
}

static void rig_close(struct rig *r)
{
	urnic_engine_qp_remove(&r->e, &r->qp, 0);
	urnic_mr_deregister(&r->e.mrs, r->mr);
	urnic_wq_fini(&r->qp.sq);
	urnic_wq_fini(&r->qp.rq);
	urnic_cq_fini(&r->scq);
	urnic_cq_fini(&r->rcq);
	urnic_engine_fini(&r->e);
}

/* What the QP sent must be whole FPDUs; a Terminate only last, once. */
static void check_output(struct rig *r, size_t n)
{
	size_t off = 0;

	while (off < n) {
		struct urnic_fpdu f;
		struct urnic_ddp_hdr h;
		size_t hb;

		must(!r->saw_term_last, "FPDU after a Terminate");
		must(urnic_fpdu_decode(&f, out + off, n - off, r->crc ? URNIC_FPDU_CRC : 0) ==
			     URNIC_IW_R_OK,
		     "output FPDU decodes");
		must(urnic_ddp_decode(&h, &hb, f.ulpdu, f.ulpdu_len) == URNIC_IW_R_OK,
		     "output DDP header decodes");
		if (h.opcode == URNIC_RDMAP_TERMINATE) {
			r->terms++;
			r->saw_term_last = true;
			must(r->qp.state == URNIC_QPS_ERR, "Terminate from a QP not in error");
		}
		off += f.bytes;
	}
	must(off == n, "output ends on an FPDU boundary");
}

static void drain(struct rig *r)
{
	uint64_t deadline;
	struct iovec iov[2];
	unsigned k;
	size_t n = 0;

	urnic_engine_pass(&r->e, 1, &deadline);
	k = urnic_iw_tx_peek(&r->qp, iov, 2);
	for (unsigned i = 0; i < k; i++) {
		must(n + iov[i].iov_len <= sizeof(out), "output fits");
		memcpy(out + n, iov[i].iov_base, iov[i].iov_len);
		n += iov[i].iov_len;
	}
	urnic_iw_tx_done(&r->e, &r->qp, n);
	check_output(r, n);
	must(!urnic_iw_tx_pending(&r->qp), "everything offered was taken");
}

static bool canaries_ok(void)
{
	for (size_t i = 0; i < FUZZ_IW_CANARY; i++)
		if (mem[i] != 0xc5 || mem[FUZZ_IW_CANARY + FUZZ_IW_LEN + i] != 0xc5)
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rig r;
	uint32_t x;
	size_t pos = 2, max;

	if (size < 2)
		return 0;
	memset(mem, 0xc5, sizeof(mem));
	rig_open(&r, data[0]);
	max = (size_t)16 << (data[0] >> 4);
	x = data[1] | 0x100u;
	drain(&r);
	while (pos < size) {
		size_t k, took;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		k = 1 + x % max;
		if (k > size - pos)
			k = size - pos;
		took = urnic_iw_rx(&r.e, &r.qp, data + pos, k, 1);
		must(took <= k, "took more than given");
		must(r.qp.state == URNIC_QPS_RTS || r.qp.state == URNIC_QPS_ERR, "QP state");
		drain(&r);
		must(canaries_ok(), "a canary was written");
		pos += k;
	}
	must(r.terms <= 1, "one Terminate at most");
	must(r.e.stats.counters[URNIC_CTR_iw_term_sent] == r.terms, "Terminates counted");
	rig_close(&r);
	return 0;
}
