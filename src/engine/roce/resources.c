/* SPDX-License-Identifier: MIT */
/*
 * resources.c - the RC responder's resources and answers: ACKs and NAKs, coalesced
 * (IBTA 9.7.5.1.1), the responder resources READs, atomics, ATOMIC_WRITE and FLUSH take
 * (9.7.5.1.3), duplicates answered from them (9.7.5.1.2), their execution, and the READ
 * responses and atomic ACKs, sent in PSN order. Checking a request before it gets here is
 * responder.c's.
 */
#include <string.h>

#include "engine/roce/cc.h"
#include "engine/roce/hold.h"
#include "engine/roce/rc.h"
#include "mem/odp.h"
#include "wire/psn.h"

/* READ response packets one QP sends per pass: a long READ (up to max_msg_sz) leaves
 * in turns, other QPs' work and received requests are served between them. */
enum { READ_BUDGET_PKTS = 64 };

/*
 * ACKs are coalesced per receive batch: an ACK names the newest PSN and covers all
 * earlier ones (9.7.5.1.1); in a ping-pong an ACK is held for the application's answer
 * and leaves right behind it (hold.c, urnic_roce_hold_ack). Responses leave in PSN order: while
 * READ responses or an atomic ACK are still owed, a later ACK or sequence/RNR NAK waits behind them
 * (the requester would take it as an implicit NAK of the READ/atomic), and a pending ACK that a
 * newer READ/atomic response will imply is dropped.
 */
void urnic_rc_flush_pending_ack(struct urnic_engine *e, struct urnic_qp *qp)
{
	/* Its PSN is later than every response still owed: it waits for them. */
	if (!qp->resp.ack_pending || qp->resp.replying)
		return;
	qp->resp.ack_pending = false;
	qp->resp.ack_hold_ns = 0;
	urnic_rc_send_ack(e, qp, qp->resp.ack_psn, qp->resp.ack_syndrome);
}

void urnic_rc_send_ack(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn, uint8_t syndrome)
{
	struct urnic_pkt h = { 0 };

	urnic_rc_flush_pending_ack(e, qp);
	h.bth.opcode = URNIC_OP_RC_ACKNOWLEDGE;
	h.bth.psn = psn;
	h.aeth.syndrome = syndrome;
	h.aeth.msn = qp->resp.msn & URNIC_PSN_MASK;
	urnic_tx_commit(e, urnic_roce_emit(e, qp, &h, 0));
	urnic_count(e, URNIC_CTR_ack_sent);
	if ((syndrome & URNIC_AETH_TYPE_MASK) == URNIC_AETH_ACK) {
		qp->resp.acked_psn = psn;
		qp->resp.acked_ns = e->now_ns;
	}
}

void urnic_rc_queue_ack(struct urnic_qp *qp, uint32_t psn)
{
	struct urnic_resp *r = &qp->resp;

	/* A pending NAK names a later PSN and already acknowledges everything before it. */
	if (r->ack_pending && r->ack_syndrome != URNIC_AETH_ACK_UNLIMITED &&
	    urnic_psn_before(psn, r->ack_psn))
		return;
	r->ack_pending = true;
	r->ack_psn = psn;
	r->ack_syndrome = URNIC_AETH_ACK_UNLIMITED;
}

/* A READ or atomic will owe a response with a later PSN than the pending ACK: the ACK
 * goes first, or, if older responses are still owed, the new response implies it. */
static void before_new_response(struct urnic_engine *e, struct urnic_qp *qp)
{
	if (qp->resp.replying) {
		qp->resp.ack_pending = false;
		qp->resp.ack_hold_ns = 0;
	} else
		urnic_rc_flush_pending_ack(e, qp);
}

/* NAK for a class C error (IBTA 9.9.3.1): the QP goes to error. */
void urnic_rc_nak_class_c(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn,
			  enum urnic_nak_code code)
{
	urnic_rc_send_ack(e, qp, psn, (uint8_t)(URNIC_AETH_NAK | code));
	urnic_count(e, code == URNIC_NAK_REM_ACCESS_ERR ? URNIC_CTR_nak_rem_access_sent
		       : code == URNIC_NAK_REM_OP_ERR	? URNIC_CTR_nak_rem_op_sent
							: URNIC_CTR_nak_inv_req_sent);
	urnic_qp_to_error(e, qp);
}

static void pull_release(struct urnic_engine *e, struct urnic_res *res);

static struct urnic_res *res_alloc(struct urnic_engine *e, struct urnic_qp *qp)
{
	struct urnic_resp *r = &qp->resp;
	struct urnic_res *res = &r->res[r->res_head];

	/* An offer whose PULLED is still to come: the requester has long taken it. */
	pull_release(e, res);
	/* FIFO reuse of max_dest_rd_atomic entries (IBTA 9.7.5.1.3; rxe does the same
	 * and leaves the requester's limit to the requester). */
	if (res->replying)
		r->replying--;
	r->res_head = (r->res_head + 1) & (r->res_count - 1);
	memset(res, 0, sizeof(*res));
	return res;
}

/*
 * A new READ, atomic or A19 request finds the oldest responder resource still sending
 * its first response: the requester cannot have completed that request, so it has more
 * outstanding than the max_dest_rd_atomic it was granted (IBTA 9.7.5.1.3: the requester
 * must not exceed the responder's resources; rxe would overwrite the resource and never
 * finish the older READ, which the requester then retries until it gives up). Refused
 * with NAK Invalid Request, the QP to error, counted; checked before the request
 * changes any state. A resource answering a duplicate is another matter: the requester
 * may have had the first answer in full and moved on, so it is recycled (res_alloc).
 */
bool urnic_rc_res_exhausted(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn)
{
	const struct urnic_res *head = &qp->resp.res[qp->resp.res_head];

	if (!head->replying || head->replayed)
		return false;
	urnic_count(e, URNIC_CTR_refused_rd_atomic);
	urnic_rc_nak_class_c(e, qp, psn, URNIC_NAK_INVALID_REQ);
	return true;
}

static struct urnic_res *res_find(struct urnic_qp *qp, uint32_t psn)
{
	for (uint32_t i = 0; i < qp->resp.res_count; i++) {
		struct urnic_res *res = &qp->resp.res[i];

		if (res->type != URNIC_RES_FREE && urnic_psn_diff(psn, res->first_psn) >= 0 &&
		    urnic_psn_diff(res->last_psn, psn) >= 0)
			return res;
	}
	return NULL;
}

/* The one-packet response of an executed atomic (ATOMIC ACKNOWLEDGE with the original
 * value), ATOMIC_WRITE or FLUSH (READ response ONLY of length zero, IBTA A19.4 and rxe
 * send_read_response_ack()). */
static void send_atomic_ack(struct urnic_engine *e, struct urnic_qp *qp,
			    const struct urnic_res *res)
{
	struct urnic_pkt h = { 0 };

	h.bth.opcode = res->type == URNIC_RES_ATOMIC ? URNIC_OP_RC_ATOMIC_ACKNOWLEDGE
						     : URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY;
	h.bth.psn = res->first_psn;
	h.aeth.syndrome = URNIC_AETH_ACK_UNLIMITED;
	h.aeth.msn = res->msn & URNIC_PSN_MASK;
	h.atmack_orig = res->orig;
	urnic_tx_commit(e, urnic_roce_emit(e, qp, &h, 0));
	urnic_count(e, URNIC_CTR_ack_sent);
}

/* The response of a single-packet resource, now or behind the READ responses still
 * owed (IBTA 9.7.5.1.1: responses leave in PSN order). */
static void answer_res(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_res *res)
{
	if (qp->resp.replying) {
		if (!res->replying)
			qp->resp.replying++;
		res->replying = true;
	} else {
		send_atomic_ack(e, qp, res);
	}
}

static uint8_t res_type_of(uint32_t flags)
{
	if (flags & URNIC_OPF_ATOMIC_WRITE)
		return URNIC_RES_ATOMIC_WRITE;
	if (flags & URNIC_OPF_FLUSH)
		return URNIC_RES_FLUSH;
	return URNIC_RES_ATOMIC;
}

/*
 * Duplicates: SEND/WRITE are re-ACKed without re-execution (C9-105 as rxe cites it),
 * READs are replayed from the saved resource when the new range lies inside it, atomics
 * return the saved original value without executing again.
 */
void urnic_rc_answer_duplicate(struct urnic_engine *e, struct urnic_qp *qp,
			       const struct urnic_pkt *pkt, uint32_t flags)
{
	struct urnic_res *res;

	urnic_count(e, URNIC_CTR_dup_request);
	if (flags & (URNIC_OPF_SEND | URNIC_OPF_WRITE)) {
		/* C9-105: ACK again with the last PSN acknowledged, do not execute. */
		urnic_rc_flush_pending_ack(e, qp);
		urnic_rc_queue_ack(qp, urnic_psn_add(qp->resp.epsn, URNIC_PSN_MASK));
		return;
	}
	res = res_find(qp, pkt->bth.psn);
	if (!res) {
		urnic_count(e, URNIC_CTR_drop_dup_no_resource);
		return;
	}
	if (flags & URNIC_OPF_READ) {
		/* The retried range must lie inside the original one, same R_Key. */
		if (res->type != URNIC_RES_READ || pkt->reth.rkey != res->rkey ||
		    pkt->reth.va < res->va || pkt->reth.len > res->len ||
		    pkt->reth.va - res->va > res->len - pkt->reth.len) {
			urnic_count(e, URNIC_CTR_drop_dup_no_resource);
			return;
		}
		if (!res->replying)
			qp->resp.replying++;
		res->replying = true;
		res->next_psn = pkt->bth.psn;
		res->va = pkt->reth.va;
		res->len = pkt->reth.len;
		res->sent_bytes = 0;
		res->replayed = true;
		res->placed = false; /* the retry may not have come through the lane */
		res->split = false;
		/* Remember whether this replay starts mid-message (MIDDLE/LAST opcodes). */
		res->first_psn_replay = pkt->bth.psn != res->first_psn;
		return;
	}
	/* Atomics, ATOMIC_WRITE, FLUSH: the saved response, not a second execution
	 * (IBTA 9.4.5, oA19-14/15). */
	if (res->type != res_type_of(flags) || res->first_psn != pkt->bth.psn) {
		urnic_count(e, URNIC_CTR_drop_dup_no_resource);
		return;
	}
	res->replayed = true;
	answer_res(e, qp, res);
}

/* Executes a checked READ: reserves its response PSNs in a responder resource, whose
 * responses urnic_rc_responder_progress sends. */
static void read_placed(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_res *res);

void urnic_rc_execute_read(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			   uint32_t gen, uint32_t direct, uint32_t pull_gen)
{
	struct urnic_resp *r = &qp->resp;
	uint32_t psn = pkt->bth.psn;
	uint32_t mtu = qp->attr.path_mtu;
	struct urnic_res *res;
	uint32_t npsn;

	npsn = pkt->reth.len ? (pkt->reth.len + mtu - 1) / mtu : 1;
	before_new_response(e, qp);
	res = res_alloc(e, qp);
	res->type = URNIC_RES_READ;
	res->first_psn = psn;
	res->last_psn = urnic_psn_add(psn, npsn - 1);
	res->va = pkt->reth.va;
	res->rkey = pkt->reth.rkey;
	res->key_gen = gen; /* 0 for a zero-length READ: no packet checks it */
	res->pd = qp->pd;   /* XRC: the named SRQ's, which the next request may change */
	res->len = pkt->reth.len;
	res->next_psn = psn;
	res->placed = direct & URNIC_DIRECT_PLACED;
	res->split = res->placed && (direct & URNIC_DIRECT_SPLIT);
	res->pulling = direct & URNIC_DIRECT_SPLIT;
	res->pull_gen = pull_gen;
	res->replying = true;
	r->replying++;
	r->msn++; /* C9-148: the MSN counts a READ when it is executed */
	res->msn = r->msn;
	r->epsn = urnic_psn_add(res->last_psn, 1);
	/* Placed and nothing older owed: its one response leaves now, so that the next
	 * READ in this receive finds no response owed and may be split too. */
	if (res->placed && r->replying == 1)
		read_placed(e, qp, res);
}

static void pull_release(struct urnic_engine *e, struct urnic_res *res)
{
	if (res->pulling)
		urnic_mr_pull_release(&e->mrs, res->rkey, res->pull_gen);
	res->pulling = false;
}

void urnic_rc_pulled(struct urnic_engine *e, struct urnic_qp *qp, uint32_t psn)
{
	for (uint32_t i = 0; i < qp->resp.res_count; i++) {
		struct urnic_res *res = &qp->resp.res[i];

		if (res->type == URNIC_RES_READ && res->pulling && res->first_psn == psn) {
			pull_release(e, res);
			return;
		}
	}
	urnic_count(e, URNIC_CTR_drop_stale_response);
}

void urnic_rc_release_pulls(struct urnic_engine *e, struct urnic_qp *qp)
{
	for (uint32_t i = 0; i < qp->resp.res_count; i++)
		pull_release(e, &qp->resp.res[i]);
}

void urnic_rc_execute_atomic(struct urnic_engine *e, struct urnic_qp *qp,
			     const struct urnic_pkt *pkt, uint8_t *host)
{
	struct urnic_res *res;
	uint64_t *p = (uint64_t *)(void *)host; /* 8-byte aligned: checked by the caller */
	uint64_t orig;

	before_new_response(e, qp);
	res = res_alloc(e, qp);

	if (pkt->bth.opcode == URNIC_OP_RC_COMPARE_SWAP) {
		orig = pkt->atmeth.compare;
		__atomic_compare_exchange_n(p, &orig, pkt->atmeth.swap_add, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		orig = __atomic_fetch_add(p, pkt->atmeth.swap_add, __ATOMIC_SEQ_CST);
	}
	urnic_count(e, URNIC_CTR_atomic_executed);
	qp->resp.msn++;
	res->type = URNIC_RES_ATOMIC;
	res->first_psn = res->last_psn = pkt->bth.psn;
	res->orig = orig;
	res->msn = qp->resp.msn;
	answer_res(e, qp, res);
}

/* ATOMIC_WRITE (A19.4.2; rxe_mr_do_atomic_write): the payload's 8 bytes, as they came,
 * in one store that is ordered after everything placed before it. FLUSH (A19.4.1):
 * everything placed before it becomes visible before the response leaves; user memory
 * has no placement further than that (global visibility). */
void urnic_rc_execute_a19(struct urnic_engine *e, struct urnic_qp *qp, const struct urnic_pkt *pkt,
			  uint8_t *host)
{
	struct urnic_res *res;

	before_new_response(e, qp);
	res = res_alloc(e, qp);
	if (pkt->bth.opcode == URNIC_OP_RC_ATOMIC_WRITE) {
		uint64_t v;

		memcpy(&v, pkt->payload, sizeof(v));
		__atomic_store_n((uint64_t *)(void *)host, v, __ATOMIC_RELEASE);
		res->type = URNIC_RES_ATOMIC_WRITE;
	} else {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		res->type = URNIC_RES_FLUSH;
	}
	qp->resp.msn++;
	res->first_psn = res->last_psn = pkt->bth.psn;
	res->msn = qp->resp.msn;
	answer_res(e, qp, res);
}
/* A READ stops answering: NAK remote access error at the PSN it had got to. */
static void read_refused(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_res *res,
			 enum urnic_counter why)
{
	urnic_count(e, why);
	res->replying = false;
	qp->resp.replying--;
	urnic_rc_nak_class_c(e, qp, res->next_psn, URNIC_NAK_REM_ACCESS_ERR);
}

/* The one response of a READ placed directly (wire/addr.h): the last of the PSNs it
 * reserved, as the last response packet would carry, without payload, and the word
 * that the data is there, which only a lane carries. */
static void read_placed(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_res *res)
{
	struct urnic_pkt h = { 0 };
	struct urnic_txpkt *p;

	h.bth.opcode = res->first_psn == res->last_psn ? URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY
						       : URNIC_OP_RC_RDMA_READ_RESPONSE_LAST;
	h.bth.psn = res->last_psn;
	h.aeth.syndrome = URNIC_AETH_ACK_UNLIMITED;
	h.aeth.msn = res->msn & URNIC_PSN_MASK;
	p = urnic_roce_emit(e, qp, &h, 0);
	p->direct_flags = URNIC_DIRECT_PLACED | (res->split ? URNIC_DIRECT_SPLIT : 0);
	urnic_tx_commit(e, p);
	urnic_count(e, URNIC_CTR_read_resp_sent);
	res->sent_bytes = res->len;
	res->next_psn = urnic_psn_add(res->last_psn, 1);
	res->replying = false;
	qp->resp.replying--;
}

/* Sends the READ response packets of one resource, up to a budget (IBTA 9.7.5.1.3:
 * responses carry the PSNs the READ reserved; AETH on FIRST, LAST and ONLY). */
static uint32_t read_reply(struct urnic_engine *e, struct urnic_qp *qp, struct urnic_res *res,
			   uint32_t budget)
{
	uint32_t mtu = qp->attr.path_mtu;
	uint32_t sent = 0;

	if (res->placed && res->replying) {
		read_placed(e, qp, res);
		return 1;
	}

	while (res->replying && sent < budget) {
		uint32_t rest = res->len - res->sent_bytes;
		uint32_t n = rest < mtu ? rest : mtu;
		bool first = res->sent_bytes == 0 && !res->first_psn_replay;
		bool last = rest <= mtu;
		struct urnic_mr_at at = { 0 };
		struct urnic_pkt h = { 0 };
		struct urnic_txpkt *p;

		if (!urnic_roce_cc_may_respond(e, qp, n))
			break; /* DCQCN: the QP's rate (cc.h) */
		h.bth.opcode = first ? (last ? URNIC_OP_RC_RDMA_READ_RESPONSE_ONLY
					     : URNIC_OP_RC_RDMA_READ_RESPONSE_FIRST)
				     : (last ? URNIC_OP_RC_RDMA_READ_RESPONSE_LAST
					     : URNIC_OP_RC_RDMA_READ_RESPONSE_MIDDLE);
		h.bth.psn = res->next_psn;
		h.aeth.syndrome = URNIC_AETH_ACK_UNLIMITED;
		h.aeth.msn = res->msn & URNIC_PSN_MASK;
		/* The key is looked up again for every packet and must still name the
		 * grant the READ was executed under: if the region was deregistered or
		 * reregistered, or the window revoked, meanwhile, the READ fails with a
		 * remote access error (rxe rechecks the region the same way). */
		if (n && (urnic_mr_resolve_remote(&e->mrs, res->pd, qp->qpn, res->rkey,
						  res->va + res->sent_bytes, n,
						  URNIC_ACCESS_REMOTE_READ, &at) != URNIC_MR_OK ||
			  at.gen != res->key_gen)) {
			read_refused(e, qp, res, URNIC_CTR_read_key_revoked);
			return sent;
		}
		/* On-demand memory is read before the packet is begun (mem/odp.h): memory
		 * not mapped readable ends the READ as a bad key does. */
		if (n && at.odp) {
			if (n > sizeof(e->odp_bounce) ||
			    urnic_odp_read(e->mrs.odp, e->odp_bounce, at.host, n)) {
				read_refused(e, qp, res, URNIC_CTR_odp_fault_remote);
				return sent;
			}
			at.host = e->odp_bounce;
		}
		p = urnic_roce_emit(e, qp, &h, n);
		if (n) {
			p->frags[0] = (struct urnic_frag){ at.host, n };
			p->nfrags = 1;
		}
		urnic_tx_commit(e, p);
		urnic_count(e, URNIC_CTR_read_resp_sent);
		res->sent_bytes += n;
		res->next_psn = urnic_psn_add(res->next_psn, 1);
		sent++;
		if (last) {
			res->replying = false;
			qp->resp.replying--;
		}
	}
	return sent;
}

/* The responses owed, oldest first (resources are used FIFO from res_head), up to
 * READ_BUDGET_PKTS packets. Returns whether it sent any. */
static bool reply_owed(struct urnic_engine *e, struct urnic_qp *qp)
{
	uint32_t budget = READ_BUDGET_PKTS;
	bool did = false;

	for (uint32_t k = 0;
	     k < qp->resp.res_count && qp->resp.replying && budget && qp->state != URNIC_QPS_ERR;
	     k++) {
		uint32_t i = (qp->resp.res_head + k) & (qp->resp.res_count - 1);
		struct urnic_res *res = &qp->resp.res[i];

		if (!res->replying)
			continue;
		if (res->type == URNIC_RES_READ) {
			uint32_t sent = read_reply(e, qp, res, budget);

			budget -= sent;
			if (!sent && qp->cc.paced)
				break; /* the rest waits for the QP's rate too */
		} else {
			res->replying = false;
			qp->resp.replying--;
			send_atomic_ack(e, qp, res);
			budget--;
		}
		did = true;
	}
	return did;
}

bool urnic_rc_reply_owed(struct urnic_engine *e, struct urnic_qp *qp)
{
	reply_owed(e, qp);
	return !qp->resp.replying;
}

bool urnic_rc_responder_progress(struct urnic_engine *e, struct urnic_qp *qp, bool answered)
{
	struct urnic_resp *r = &qp->resp;
	/* The responses owed first, then the queued ACK or NAK, which names a later PSN
	 * than all of them: sent before the READ responses, the requester would take it as
	 * an implicit NAK of the READ. */
	bool did = reply_owed(e, qp);

	if (r->ack_pending && !r->replying && qp->state != URNIC_QPS_ERR &&
	    !urnic_roce_hold_ack(e, qp, answered)) {
		if (answered && r->ack_hold_ns)
			r->ack_hold_misses = 0; /* carried, as hoped */
		urnic_rc_flush_pending_ack(e, qp);
		r->ack_alone_ns = answered ? 0 : e->now_ns;
		did = true;
	}
	return did;
}
