/* SPDX-License-Identifier: MIT */
/*
 * rsocket_data.c - a stream rsocket's QP, buffers and completions, on rdma-core 44's
 * rsockets wire: the receive buffer is granted to the peer half at a time (an SGL
 * update RDMA-written into its target SGL list), data arrive as RDMA WRITE with
 * immediate (op in bits 31-29, length below), receive credits ride on SGL and control
 * messages. Each message takes one posted receive of no SGE; the peer's grant of
 * credits (sseq_comp) keeps our writes within its posted receives. On an iWARP device
 * (RFC 5040 has no immediate data) rsocket.c's RS_OPT_MSG_SEND: the word goes as a
 * 4-byte inline SEND after the write, and each receive has a 4-byte slot behind rbuf.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "cm/rsocket.h"

/* rs_value_to_scale / rs_scale_to_value: the iomap size in 8 bits. */
static int to_scale(int v)
{
	return v <= (1 << 7) ? v : (1 << 7) | (v >> 8);
}

static int from_scale(int v)
{
	return v <= (1 << 7) ? v : (v & ~(1 << 7)) << 8;
}

static void *zalloc(size_t len)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len ? len : 1))
		return NULL;
	memset(p, 0, len);
	return p;
}

static int post_recv(struct urnic_rs *rs)
{
	struct ibv_recv_wr wr = { .wr_id = URNIC_RS_WR_RECV }, *bad;
	struct ibv_sge sge;
	int rc;

	if (rs->msg_send) {
		sge.addr = (uintptr_t)rs->rbuf + rs->rbuf_size +
			   (size_t)rs->rbuf_msg_index * URNIC_RS_MSG_SIZE;
		sge.length = URNIC_RS_MSG_SIZE;
		sge.lkey = rs->rmr->lkey;
		wr.wr_id |= (uint64_t)rs->rbuf_msg_index;
		wr.sg_list = &sge;
		wr.num_sge = 1;
		if (++rs->rbuf_msg_index == rs->rq_size)
			rs->rbuf_msg_index = 0;
	}
	rc = ibv_post_recv(rs->cm_id->qp, &wr, &bad);

	return rc ? urnic_rs_err(rc) : 0;
}

static int init_bufs(struct urnic_rs *rs)
{
	struct ibv_pd *pd = rs->cm_id->qp->pd;
	int w = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	size_t slen = rs->sbuf_size + sizeof(struct urnic_rs_sge) * URNIC_RS_QP_CTRL;
	size_t tlen = sizeof(struct urnic_rs_sge) * URNIC_RS_SGL_SIZE +
		      sizeof(struct urnic_rs_iomap) * rs->target_iomap_size;
	size_t rlen = rs->rbuf_size + (rs->msg_send ? (size_t)rs->rq_size * URNIC_RS_MSG_SIZE : 0);

	rs->rmsg = calloc(rs->rq_size + 1, sizeof(*rs->rmsg));
	rs->sbuf = zalloc(slen);
	rs->target_list = zalloc(tlen);
	rs->rbuf = zalloc(rlen);
	if (!rs->rmsg || !rs->sbuf || !rs->target_list || !rs->rbuf)
		return urnic_rs_err(ENOMEM);
	rs->smr = ibv_reg_mr(pd, rs->sbuf, slen, IBV_ACCESS_LOCAL_WRITE);
	rs->target_mr = ibv_reg_mr(pd, rs->target_list, tlen, w);
	rs->rmr = ibv_reg_mr(pd, rs->rbuf, rlen, w);
	if (!rs->smr || !rs->target_mr || !rs->rmr)
		return -1;
	rs->target_sgl = rs->target_list;
	if (rs->target_iomap_size)
		rs->target_iomap =
			(void *)((struct urnic_rs_sge *)rs->target_list + URNIC_RS_SGL_SIZE);
	rs->ssgl[0].addr = rs->ssgl[1].addr = (uintptr_t)rs->sbuf;
	rs->ssgl[0].lkey = rs->ssgl[1].lkey = rs->smr->lkey;
	rs->sbuf_bytes_avail = rs->sbuf_size;
	rs->rbuf_free_offset = rs->rbuf_size >> 1;
	rs->rbuf_bytes_avail = rs->rbuf_size >> 1;
	rs->sqe_avail = rs->sq_size - rs->ctrl_max_seqno;
	rs->rseq_comp = rs->rq_size >> 1;
	return 0;
}

/* The QP, its one CQ on a completion channel of the rsocket's, the buffers, and every
 * receive posted (rsocket.c's rs_create_ep). */
int urnic_rs_create_ep(struct urnic_rs *rs)
{
	struct rdma_cm_id *id = rs->cm_id;
	struct ibv_qp_init_attr a = { 0 };

	if (rs->sq_size < URNIC_RS_QP_MIN)
		rs->sq_size = URNIC_RS_QP_MIN;
	if (rs->rq_size < URNIC_RS_QP_MIN)
		rs->rq_size = URNIC_RS_QP_MIN;
	if (rs->sbuf_size < URNIC_RS_SNDLOWAT * 2)
		rs->sbuf_size = URNIC_RS_SNDLOWAT * 2;
	if (rs->rbuf_size < URNIC_RS_SNDLOWAT * 2)
		rs->rbuf_size = URNIC_RS_SNDLOWAT * 2;
	rs->msg_send = id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
	rs->cc = ibv_create_comp_channel(id->verbs);
	if (!rs->cc)
		return -1;
	if (fcntl(rs->cc->fd, F_SETFL, fcntl(rs->cc->fd, F_GETFL) | O_NONBLOCK))
		return -1;
	rs->cq = ibv_create_cq(id->verbs, rs->sq_size + rs->rq_size, rs, rs->cc, 0);
	if (!rs->cq)
		return -1;
	a.qp_context = rs;
	a.send_cq = a.recv_cq = rs->cq;
	a.qp_type = IBV_QPT_RC;
	a.sq_sig_all = 1;
	a.cap.max_send_wr = rs->sq_size;
	a.cap.max_recv_wr = rs->rq_size;
	a.cap.max_send_sge = 2;
	a.cap.max_recv_sge = 1;
	a.cap.max_inline_data = rs->sq_inline;
	if (rdma_create_qp(id, NULL, &a))
		return -1;
	rs->sq_inline = a.cap.max_inline_data;
	if (rs->msg_send && rs->sq_inline < URNIC_RS_MSG_SIZE)
		return urnic_rs_err(ENOTSUP); /* the words go inline, as rs_create_ep's */
	if (init_bufs(rs))
		return -1;
	for (int i = 0; i < rs->rq_size; i++)
		if (post_recv(rs))
			return -1;
	return 0;
}

void urnic_rs_free_ep(struct urnic_rs *rs)
{
	if (rs->cm_id && rs->cm_id->qp)
		rdma_destroy_qp(rs->cm_id);
	if (rs->smr)
		ibv_dereg_mr(rs->smr);
	if (rs->rmr)
		ibv_dereg_mr(rs->rmr);
	if (rs->target_mr)
		ibv_dereg_mr(rs->target_mr);
	if (rs->cq)
		ibv_destroy_cq(rs->cq);
	if (rs->cc)
		ibv_destroy_comp_channel(rs->cc);
	free(rs->sbuf);
	free(rs->rbuf);
	free(rs->target_list);
	free(rs->rmsg);
}

static void put_sge(uint8_t *p, uint64_t addr, uint32_t key, uint32_t len)
{
	uint64_t a = htobe64(addr);
	uint32_t k = htobe32(key), l = htobe32(len);

	memcpy(p, &a, 8);
	memcpy(p + 8, &k, 4);
	memcpy(p + 12, &l, 4);
}

static void get_sge(const uint8_t *p, struct urnic_rs_sge *s)
{
	uint64_t a;
	uint32_t k, l;

	memcpy(&a, p, 8);
	memcpy(&k, p + 8, 4);
	memcpy(&l, p + 12, 4);
	s->addr = be64toh(a);
	s->key = be32toh(k);
	s->length = be32toh(l);
}

/* struct rs_conn_data: version 1, flags, credits (be16), 3 reserved, the iomap size
 * scaled, the target SGL list, the first half of the receive buffer. */
void urnic_rs_format_conn(const struct urnic_rs *rs, uint8_t *out)
{
	uint16_t credits = htobe16(rs->rq_size);

	memset(out, 0, URNIC_RS_CONN_DATA_LEN);
	out[0] = 1;
	out[1] = URNIC_RS_CONN_FLAG_IOMAP |
		 (__BYTE_ORDER == __BIG_ENDIAN ? URNIC_RS_CONN_FLAG_NET : 0);
	memcpy(out + 2, &credits, 2);
	out[7] = (uint8_t)to_scale(rs->target_iomap_size);
	put_sge(out + 8, (uintptr_t)rs->target_list, rs->target_mr->rkey, URNIC_RS_SGL_SIZE);
	put_sge(out + 24, (uintptr_t)rs->rbuf, rs->rmr->rkey, rs->rbuf_size >> 1);
}

/* The peer's half of the connection data; EPROTO for data of no rsocket. */
int urnic_rs_save_conn(struct urnic_rs *rs, const uint8_t *in, size_t len)
{
	struct urnic_rs_sge data;
	uint16_t credits;

	if (!in || len < URNIC_RS_CONN_DATA_LEN || in[0] != 1)
		return urnic_rs_err(EPROTO);
	get_sge(in + 8, &rs->remote_sgl);
	if (!rs->remote_sgl.length)
		return urnic_rs_err(EPROTO);
	rs->remote_sge = 1;
	rs->swap_sgl = !!(in[1] & URNIC_RS_CONN_FLAG_NET) != (__BYTE_ORDER == __BIG_ENDIAN);
	if (in[1] & URNIC_RS_CONN_FLAG_IOMAP) {
		rs->remote_iomap.addr =
			rs->remote_sgl.addr + sizeof(struct urnic_rs_sge) * rs->remote_sgl.length;
		rs->remote_iomap.length = from_scale(in[7]);
		rs->remote_iomap.key = rs->remote_sgl.key;
	}
	get_sge(in + 24, &data);
	rs->target_sgl[0].addr = data.addr;
	rs->target_sgl[0].key = data.key;
	rs->target_sgl[0].length = data.length;
	memcpy(&credits, in + 2, 2);
	rs->sseq_comp = be16toh(credits);
	return 0;
}

/* The word MSG as a SEND of its own (rs_post_msg's RS_OPT_MSG_SEND branch): inline, in
 * host byte order as rsocket.c sends it; WR_ID tells its completion apart. */
static int send_word(struct urnic_rs *rs, uint32_t msg, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)&msg, sizeof(msg), 0 };
	struct ibv_send_wr wr = { 0 }, *bad;
	int rc;

	wr.wr_id = wr_id;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_INLINE;
	rc = ibv_post_send(rs->cm_id->qp, &wr, &bad);
	return rc ? urnic_rs_err(rc) : 0;
}

int urnic_rs_post_msg(struct urnic_rs *rs, uint32_t msg)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	int rc;

	if (rs->msg_send)
		return send_word(rs, msg, msg);
	wr.wr_id = msg;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.imm_data = htobe32(msg);
	rc = ibv_post_send(rs->cm_id->qp, &wr, &bad);
	return rc ? urnic_rs_err(rc) : 0;
}

/* An RDMA WRITE, with WR_DATA as its immediate when IMM (data, SGL and iomap messages)
 * or as its completion's record only (riowrite's direct writes). Under msg_send the
 * word follows as a SEND whose completion counts the entry only (rs_post_write_msg). */
int urnic_rs_post_write(struct urnic_rs *rs, struct ibv_sge *sgl, int nsge, uint32_t wr_data,
			int flags, uint64_t addr, uint32_t rkey, bool imm)
{
	struct ibv_send_wr wr = { 0 }, *bad;
	int rc;

	wr.wr_id = wr_data;
	wr.sg_list = sgl;
	wr.num_sge = nsge;
	wr.opcode = imm && !rs->msg_send ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_RDMA_WRITE;
	wr.send_flags = flags;
	wr.imm_data = htobe32(wr_data);
	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	rc = ibv_post_send(rs->cm_id->qp, &wr, &bad);
	if (rc)
		return urnic_rs_err(rc);
	if (!imm || !rs->msg_send)
		return 0;
	return send_word(rs, wr_data,
			 urnic_rs_msg(URNIC_RS_MSG_OP(wr_data), 0) | URNIC_RS_WR_MSG_SEND);
}

bool urnic_rs_ctrl_avail(struct urnic_rs *rs)
{
	return rs->ctrl_seqno != rs->ctrl_max_seqno;
}

/* rs_2ctrl_avail: room for an SGL update that takes two entries under msg_send. */
static bool ctrl2_avail(struct urnic_rs *rs)
{
	return (int)((rs->ctrl_seqno + 1) - rs->ctrl_max_seqno) < 0;
}

/* The next half of the receive buffer to the peer with our credits, or the credits
 * alone while that half is still being read (rs_send_credits). */
static void send_credits(struct urnic_rs *rs)
{
	uint32_t msg = urnic_rs_msg(URNIC_RS_OP_SGL, (uint32_t)rs->rseq_no + rs->rq_size);
	struct urnic_rs_sge sge;
	struct ibv_sge ib;
	int flags = 0;

	rs->ctrl_seqno++;
	rs->rseq_comp = rs->rseq_no + (rs->rq_size >> 1);
	if (rs->rbuf_bytes_avail < (int)(rs->rbuf_size >> 1)) {
		urnic_rs_post_msg(rs, msg);
		return;
	}
	if (rs->msg_send)
		rs->ctrl_seqno++; /* the write and the SEND after it */
	sge.addr = (uintptr_t)&rs->rbuf[rs->rbuf_free_offset];
	sge.key = rs->rmr->rkey;
	sge.length = rs->rbuf_size >> 1;
	if (rs->swap_sgl) {
		sge.addr = __builtin_bswap64(sge.addr);
		sge.key = __builtin_bswap32(sge.key);
		sge.length = __builtin_bswap32(sge.length);
	}
	ib.length = sizeof(sge);
	if (rs->sq_inline >= sizeof(sge)) {
		ib.addr = (uintptr_t)&sge;
		ib.lkey = 0;
		flags = IBV_SEND_INLINE;
	} else {
		uint8_t *slot = rs->sbuf + rs->sbuf_size +
				sizeof(sge) * (rs->ctrl_seqno & (URNIC_RS_QP_CTRL - 1));

		memcpy(slot, &sge, sizeof(sge));
		ib.addr = (uintptr_t)slot;
		ib.lkey = rs->smr->lkey;
	}
	urnic_rs_post_write(rs, &ib, 1, msg, flags,
			    rs->remote_sgl.addr + rs->remote_sge * sizeof(struct urnic_rs_sge),
			    rs->remote_sgl.key, true);
	rs->rbuf_bytes_avail -= rs->rbuf_size >> 1;
	rs->rbuf_free_offset += rs->rbuf_size >> 1;
	if (rs->rbuf_free_offset >= (int)rs->rbuf_size)
		rs->rbuf_free_offset = 0;
	if (++rs->remote_sge == (int)rs->remote_sgl.length)
		rs->remote_sge = 0;
}

static void update_credits(struct urnic_rs *rs)
{
	if ((rs->rbuf_bytes_avail >= (int)(rs->rbuf_size >> 1) ||
	     (int16_t)(rs->rseq_no - rs->rseq_comp) >= 0) &&
	    (rs->msg_send ? ctrl2_avail(rs) : urnic_rs_ctrl_avail(rs)) &&
	    (rs->state & URNIC_RS_CONNECTED))
		send_credits(rs);
}

static void recv_msg(struct urnic_rs *rs, uint32_t msg)
{
	switch (URNIC_RS_MSG_OP(msg)) {
	case URNIC_RS_OP_SGL:
		rs->sseq_comp = (uint16_t)URNIC_RS_MSG_DATA(msg);
		break;
	case URNIC_RS_OP_IOMAP_SGL:
	case URNIC_RS_OP_WRITE:
		break; /* the iomap entry is in place already */
	case URNIC_RS_OP_CTRL:
		if (URNIC_RS_MSG_DATA(msg) == URNIC_RS_CTRL_DISCONNECT)
			rs->state = URNIC_RS_DISCONNECTED;
		else if (URNIC_RS_MSG_DATA(msg) == URNIC_RS_CTRL_SHUTDOWN)
			rs->state = (rs->state & URNIC_RS_WRITABLE) ? rs->state & ~URNIC_RS_READABLE
								    : URNIC_RS_DISCONNECTED;
		break;
	default:
		rs->rmsg[rs->rmsg_tail].op = URNIC_RS_MSG_OP(msg);
		rs->rmsg[rs->rmsg_tail].data = URNIC_RS_MSG_DATA(msg);
		if (++rs->rmsg_tail == rs->rq_size + 1)
			rs->rmsg_tail = 0;
	}
}

static void send_done(struct urnic_rs *rs, const struct ibv_wc *wc)
{
	uint32_t msg = (uint32_t)wc->wr_id;

	switch (URNIC_RS_MSG_OP(msg)) {
	case URNIC_RS_OP_SGL:
		rs->ctrl_max_seqno++;
		break;
	case URNIC_RS_OP_CTRL:
		rs->ctrl_max_seqno++;
		if (URNIC_RS_MSG_DATA(msg) == URNIC_RS_CTRL_DISCONNECT)
			rs->state = URNIC_RS_DISCONNECTED;
		break;
	case URNIC_RS_OP_IOMAP_SGL:
		rs->sqe_avail++;
		if (!(wc->wr_id & URNIC_RS_WR_MSG_SEND))
			rs->sbuf_bytes_avail += sizeof(struct urnic_rs_iomap);
		break;
	default:
		rs->sqe_avail++;
		rs->sbuf_bytes_avail += URNIC_RS_MSG_DATA(msg);
	}
	if (wc->status != IBV_WC_SUCCESS && (rs->state & URNIC_RS_CONNECTED)) {
		rs->state = URNIC_RS_ERROR;
		rs->err = EIO;
	}
}

/* The word a SEND put in its receive's slot (rs_poll_cq). */
static uint32_t word_at(const struct urnic_rs *rs, uint64_t wr_id)
{
	uint32_t slot = (uint32_t)wr_id % (uint32_t)rs->rq_size, msg;

	memcpy(&msg, rs->rbuf + rs->rbuf_size + (size_t)slot * URNIC_RS_MSG_SIZE, sizeof(msg));
	return msg;
}

/* Every completion waiting, then the receives they used posted again (rs_poll_cq). */
static int poll_cq(struct urnic_rs *rs)
{
	struct ibv_wc wc;
	int n, rcnt = 0, rc = 0;

	while ((n = ibv_poll_cq(rs->cq, 1, &wc)) > 0) {
		if (!(wc.wr_id & URNIC_RS_WR_RECV)) {
			send_done(rs, &wc);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS)
			continue;
		rcnt++;
		if (wc.wc_flags & IBV_WC_WITH_IMM)
			recv_msg(rs, be32toh(wc.imm_data));
		else if (rs->msg_send)
			recv_msg(rs, word_at(rs, wc.wr_id));
		if (rs->state == URNIC_RS_DISCONNECTED)
			break;
	}
	if (rs->state & URNIC_RS_CONNECTED) {
		while (!rc && rcnt--)
			rc = post_recv(rs);
		if (rc) {
			rs->state = URNIC_RS_ERROR;
			rs->err = errno;
		}
	}
	return rc;
}

void urnic_rs_arm(struct urnic_rs *rs)
{
	if (!rs->cq_armed && rs->cq) {
		ibv_req_notify_cq(rs->cq, 0);
		rs->cq_armed = true;
	}
}

/* Consumes the completion channel's event, if any, so that the CQ can be armed again. */
void urnic_rs_take_cq_event(struct urnic_rs *rs)
{
	struct ibv_cq *cq;
	void *ctx;

	if (rs->cc && !ibv_get_cq_event(rs->cc, &cq, &ctx)) {
		ibv_ack_cq_events(cq, 1);
		rs->cq_armed = false;
	}
}

/* Processes completions until TEST holds: 0, or -1 with EWOULDBLOCK when NONBLOCK and
 * it does not, or the error of a failed repost. Waits with rs->lock released. */
int urnic_rs_process(struct urnic_rs *rs, bool nonblock, bool (*test)(struct urnic_rs *rs))
{
	int rc;

	for (;;) {
		update_credits(rs);
		rc = poll_cq(rs);
		update_credits(rs);
		if (test(rs))
			return 0;
		if (rc)
			return rc;
		if (nonblock)
			return urnic_rs_err(EWOULDBLOCK);
		if (!rs->cq_armed) {
			urnic_rs_arm(rs);
			continue; /* poll once more: a completion may have come before the arm */
		}
		{
			struct pollfd p = { .fd = rs->cc->fd, .events = POLLIN };

			pthread_mutex_unlock(&rs->lock);
			poll(&p, 1, 100);
			pthread_mutex_lock(&rs->lock);
		}
		urnic_rs_take_cq_event(rs);
	}
}

bool urnic_rs_can_send(struct urnic_rs *rs)
{
	return rs->sqe_avail >= urnic_rs_msg_wrs(rs) && rs->sbuf_bytes_avail >= URNIC_RS_SNDLOWAT &&
	       rs->sseq_no != rs->sseq_comp && rs->target_sgl[rs->target_sge].length != 0;
}

bool urnic_rs_conn_can_send(struct urnic_rs *rs)
{
	return urnic_rs_can_send(rs) || !(rs->state & URNIC_RS_WRITABLE);
}

bool urnic_rs_have_rdata(struct urnic_rs *rs)
{
	return rs->rmsg_head != rs->rmsg_tail;
}

bool urnic_rs_conn_have_rdata(struct urnic_rs *rs)
{
	return urnic_rs_have_rdata(rs) || !(rs->state & URNIC_RS_READABLE);
}

bool urnic_rs_all_sends_done(struct urnic_rs *rs)
{
	return (int)(rs->ctrl_max_seqno - rs->ctrl_seqno) + rs->sqe_avail == rs->sq_size ||
	       !(rs->state & URNIC_RS_CONNECTED);
}
