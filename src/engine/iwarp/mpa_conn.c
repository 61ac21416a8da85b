/* SPDX-License-Identifier: MIT */
/*
 * mpa_conn.c - the MPA setup state machine (mpa_conn.h): frames gathered byte by byte into
 * a bounded buffer, each checked whole by the wire codec and then against the local
 * policy before any state changes; refusals with a Reply (R set) or an LLP Terminate
 * where siw's siw_cm.c sends one, and a named reason always.
 */
#include <errno.h>
#include <string.h>

#include "engine/iwarp/mpa_conn.h"
#include "engine/iwarp/mpa_rtr.h"

static const char *const reason_names[] = {
#define URNIC_MPA_CONN_REASON(name, text) [URNIC_MPA_CONN_R_##name] = text,
#include "engine/iwarp/mpa_conn_reason.def"
#undef URNIC_MPA_CONN_REASON
};
_Static_assert(sizeof(reason_names) / sizeof(reason_names[0]) == URNIC_MPA_CONN_R_COUNT,
	       "every reason is named");

const char *urnic_mpa_conn_reason_name(enum urnic_mpa_conn_reason r)
{
	return (unsigned)r < URNIC_MPA_CONN_R_COUNT ? reason_names[r] : "unknown";
}

static enum urnic_mpa_conn_event fail(struct urnic_mpa_conn *c, enum urnic_mpa_conn_reason r)
{
	c->state = URNIC_MPA_CONN_FAILED;
	c->reason = r;
	c->refusals[r]++;
	return URNIC_MPA_EV_ERROR;
}

/* Appends an encoded frame; the callers size out for the frames of one connection. */
static int queue_rr(struct urnic_mpa_conn *c, const struct urnic_mpa_rr *rr)
{
	ssize_t n = urnic_mpa_rr_encode(rr, c->out + c->out_len, sizeof(c->out) - c->out_len);

	if (n < 0)
		return (int)n;
	c->out_len += (size_t)n;
	return 0;
}

int urnic_mpa_conn_init(struct urnic_mpa_conn *c, const struct urnic_mpa_cfg *cfg, bool initiator,
			uint64_t now_ns)
{
	struct urnic_mpa_rr req = { 0 };

	if (cfg->ird > URNIC_MPA_IRD_ORD_MAX || cfg->ord > URNIC_MPA_IRD_ORD_MAX)
		return -EINVAL;
	if (!cfg->p2p && (cfg->rtr_write || cfg->rtr_read || cfg->rtr_send))
		return -EINVAL;
	if (cfg->pd_len > URNIC_MPA_ULP_PD_MAX)
		return -EMSGSIZE;
	if (cfg->pd_len && !cfg->pd)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	if (cfg->pd_len)
		memcpy(c->pd, cfg->pd, cfg->pd_len);
	c->cfg.pd = c->pd;
	c->initiator = initiator;
	c->deadline_ns = now_ns + cfg->timeout_ns;
	if (!initiator) {
		c->state = URNIC_MPA_CONN_WAIT_REQ;
		return 0;
	}
	/* RFC 6581 3: revision 2 with the IRD/ORD word; siw's initiator asks for CRC only
	 * with mpa_crc_required. */
	req = (struct urnic_mpa_rr){ .kind = URNIC_MPA_REQ,
				     .crc = cfg->crc_required,
				     .enhanced = true,
				     .revision = 2,
				     .p2p = cfg->p2p,
				     .rtr_send = cfg->rtr_send,
				     .rtr_write = cfg->rtr_write,
				     .rtr_read = cfg->rtr_read,
				     .ird = cfg->ird,
				     .ord = cfg->ord,
				     .pd = c->pd,
				     .pd_len = cfg->pd_len };
	c->state = URNIC_MPA_CONN_WAIT_REP;
	return queue_rr(c, &req);
}

/* siw's reject_conn: a Reply with R set and no private data, then the connection ends. */
static enum urnic_mpa_conn_event refuse(struct urnic_mpa_conn *c, enum urnic_mpa_conn_reason r)
{
	struct urnic_mpa_rr rep = { .kind = URNIC_MPA_REP, .reject = true, .revision = 1 };

	if (c->in[17] == 2) {
		rep.revision = 2;
		rep.enhanced = true;
	}
	rep.crc = c->cfg.crc_required;
	(void)queue_rr(c, &rep);
	return fail(c, r);
}

/* The responder's reading of a Request (siw_proc_mpareq). */
static enum urnic_mpa_conn_event on_request(struct urnic_mpa_conn *c, const struct urnic_mpa_rr *rr)
{
	struct urnic_mpa_params p = { 0 };

	if (rr->kind != URNIC_MPA_REQ)
		return fail(c, URNIC_MPA_CONN_R_WRONG_KEY);
	/* mpa_crc_strict: the peer must use CRC exactly when this side requires it. */
	if (c->cfg.crc_strict && rr->crc != c->cfg.crc_required)
		return refuse(c, URNIC_MPA_CONN_R_CRC_POLICY);
	/* RFC 5044 7.1: CRC is used when either side asks for it. */
	p.crc = rr->crc || c->cfg.crc_required;
	p.enhanced = rr->enhanced;
	if (p.enhanced) {
		p.peer_ird = rr->ird;
		p.peer_ord = rr->ord;
		p.p2p = rr->p2p;
	}
	/* siw prefers a zero-length Write, then a Read, and proposes a Write when the
	 * initiator offers neither; a Send is taken only when it is all that is offered. */
	if (p.p2p)
		p.rtr = rr->rtr_write  ? URNIC_MPA_RTR_WRITE
			: rr->rtr_read ? URNIC_MPA_RTR_READ
			: rr->rtr_send ? URNIC_MPA_RTR_SEND
				       : URNIC_MPA_RTR_WRITE;
	c->params = p;
	c->peer = *rr;
	c->peer_pd = rr->pd;
	c->peer_pd_len = rr->pd_len;
	c->state = URNIC_MPA_CONN_REQ_RCVD;
	return URNIC_MPA_EV_REQUEST;
}

/* An LLP Terminate (RFC 6581 3's codes) goes out before the initiator gives up. */
static enum urnic_mpa_conn_event terminate(struct urnic_mpa_conn *c, enum urnic_iw_term t,
					   enum urnic_mpa_conn_reason r)
{
	ssize_t n = urnic_mpa_term_fpdu(t, c->params.crc, c->out + c->out_len,
					sizeof(c->out) - c->out_len);

	if (n > 0)
		c->out_len += (size_t)n;
	return fail(c, r);
}

static uint8_t pick_rtr(const struct urnic_mpa_cfg *cfg, const struct urnic_mpa_rr *rr)
{
	if (cfg->rtr_write && rr->rtr_write)
		return URNIC_MPA_RTR_WRITE;
	if (cfg->rtr_read && rr->rtr_read)
		return URNIC_MPA_RTR_READ;
	if (cfg->rtr_send && rr->rtr_send)
		return URNIC_MPA_RTR_SEND;
	return URNIC_MPA_RTR_NONE;
}

/* The initiator's reading of a Reply (siw_proc_mpareply). */
static enum urnic_mpa_conn_event on_reply(struct urnic_mpa_conn *c, const struct urnic_mpa_rr *rr)
{
	struct urnic_mpa_params p = { .ird = c->cfg.ird, .ord = c->cfg.ord };
	ssize_t n;

	if (rr->kind != URNIC_MPA_REP)
		return fail(c, URNIC_MPA_CONN_R_WRONG_KEY);
	c->peer = *rr;
	c->peer_pd = rr->pd;
	c->peer_pd_len = rr->pd_len;
	if (rr->reject) {
		c->state = URNIC_MPA_CONN_REJECTED;
		c->reason = URNIC_MPA_CONN_R_REJECTED;
		c->refusals[URNIC_MPA_CONN_R_REJECTED]++;
		return URNIC_MPA_EV_REJECTED;
	}
	if ((c->cfg.crc_required && !rr->crc) ||
	    (c->cfg.crc_strict && !c->cfg.crc_required && rr->crc))
		return fail(c, URNIC_MPA_CONN_R_CRC_POLICY);
	p.crc = rr->crc;
	p.enhanced = rr->enhanced;
	c->params = p;
	if (!p.enhanced) /* a revision 1 Reply: plain RFC 5044, no IRD/ORD, no RTR */
		goto connected;
	c->params.peer_ird = rr->ird;
	c->params.peer_ord = rr->ord;
	/* RFC 6581 3 wants the responder's ORD within our IRD and our ORD within its IRD;
	 * siw_proc_mpareply's relaxed IRD negotiation (its default) raises our IRD to the
	 * responder's ORD as far as the device goes and lowers our ORD to its IRD: only an
	 * ORD past the device's IRD is insufficient. */
	if (rr->ord > (c->cfg.ird_max > c->cfg.ird ? c->cfg.ird_max : c->cfg.ird))
		return terminate(c, URNIC_IW_TERM_MPA_INSUFFICIENT_IRD,
				 URNIC_MPA_CONN_R_IRD_INSUFFICIENT);
	c->params.ird = rr->ord;
	c->params.ord = rr->ird;
	/* RFC 6581 3: a Responder without peer-to-peer mode clears P2P in its Reply; no RTR
	 * follows, and this side's ULP sends first (RFC 5044 7.1.2). */
	if (!c->cfg.p2p || !rr->p2p)
		goto connected;
	c->params.p2p = true;
	c->params.rtr = pick_rtr(&c->cfg, rr);
	if (c->params.rtr == URNIC_MPA_RTR_NONE)
		return terminate(c, URNIC_IW_TERM_MPA_NO_MATCHING_RTR,
				 URNIC_MPA_CONN_R_NO_MATCHING_RTR);
	n = urnic_mpa_rtr_fpdu(c->params.rtr, c->params.crc, c->out + c->out_len,
			       sizeof(c->out) - c->out_len);
	if (n < 0)
		return fail(c, URNIC_MPA_CONN_R_RTR_BAD);
	c->out_len += (size_t)n;
connected:
	c->state = URNIC_MPA_CONN_CONNECTED;
	return URNIC_MPA_EV_CONNECTED;
}

/* Gathers one MPA frame into c->in: its header first, then as many bytes as PD_Length
 * says, so no byte past the frame is taken. 1: whole frame in *rr; 0: need more. */
static int take_frame(struct urnic_mpa_conn *c, const uint8_t *buf, size_t len, size_t *used,
		      struct urnic_mpa_rr *rr)
{
	enum urnic_iw_reason r;
	size_t need, n, got;

	for (;;) {
		need = URNIC_MPA_HDR_BYTES;
		if (c->in_len >= URNIC_MPA_HDR_BYTES)
			need += (size_t)c->in[18] << 8 | c->in[19];
		if (c->in_len == need)
			break;
		if (*used == len)
			return 0;
		n = need - c->in_len < len - *used ? need - c->in_len : len - *used;
		memcpy(c->in + c->in_len, buf + *used, n);
		c->in_len += n;
		*used += n;
		if (c->in_len != URNIC_MPA_HDR_BYTES)
			continue;
		/* The header alone: refuse markers, revisions and lengths before reading on. */
		r = urnic_mpa_rr_decode(rr, &got, c->in, c->in_len);
		if (r != URNIC_IW_R_OK && r != URNIC_IW_R_MPA_PD_TRUNCATED) {
			c->wire_reason = r;
			return -1;
		}
	}
	r = urnic_mpa_rr_decode(rr, &got, c->in, c->in_len);
	if (r != URNIC_IW_R_OK) {
		c->wire_reason = r;
		return -1;
	}
	return 1;
}

static enum urnic_mpa_conn_event frame_error(struct urnic_mpa_conn *c)
{
	/* siw answers a Request that asks for markers with a reject; others just close. */
	if (c->wire_reason == URNIC_IW_R_MPA_MARKERS)
		return c->initiator ? fail(c, URNIC_MPA_CONN_R_MARKERS)
				    : refuse(c, URNIC_MPA_CONN_R_MARKERS);
	return fail(c, URNIC_MPA_CONN_R_FRAME);
}

enum urnic_mpa_conn_event urnic_mpa_conn_input(struct urnic_mpa_conn *c, const uint8_t *buf,
					       size_t len, size_t *used, uint64_t now_ns)
{
	struct urnic_mpa_rr rr;
	int rc;

	*used = 0;
	if (urnic_mpa_conn_tick(c, now_ns) == URNIC_MPA_EV_ERROR)
		return URNIC_MPA_EV_ERROR;
	switch (c->state) {
	case URNIC_MPA_CONN_WAIT_REQ:
	case URNIC_MPA_CONN_WAIT_REP:
		rc = take_frame(c, buf, len, used, &rr);
		if (rc < 0)
			return frame_error(c);
		if (rc == 0)
			return URNIC_MPA_EV_NONE;
		return c->initiator ? on_reply(c, &rr) : on_request(c, &rr);
	case URNIC_MPA_CONN_REQ_RCVD:
		/* RFC 5044 7.1.2: the initiator sends nothing until it has the Reply. */
		if (len == 0)
			return URNIC_MPA_EV_NONE;
		*used = len;
		return fail(c, URNIC_MPA_CONN_R_EARLY_DATA);
	case URNIC_MPA_CONN_WAIT_RTR:
		return urnic_mpa_rtr_input(c, buf, len, used);
	default:
		return URNIC_MPA_EV_NONE;
	}
}

enum urnic_mpa_conn_event urnic_mpa_conn_tick(struct urnic_mpa_conn *c, uint64_t now_ns)
{
	bool waiting = c->state == URNIC_MPA_CONN_WAIT_REQ || c->state == URNIC_MPA_CONN_WAIT_REP ||
		       c->state == URNIC_MPA_CONN_WAIT_RTR;

	if (!waiting || now_ns < c->deadline_ns)
		return URNIC_MPA_EV_NONE;
	return fail(c, URNIC_MPA_CONN_R_TIMEOUT);
}

enum urnic_mpa_conn_event urnic_mpa_conn_closed(struct urnic_mpa_conn *c)
{
	if (c->state >= URNIC_MPA_CONN_CONNECTED)
		return URNIC_MPA_EV_NONE;
	return fail(c, URNIC_MPA_CONN_R_CLOSED);
}

int urnic_mpa_conn_accept(struct urnic_mpa_conn *c, uint16_t ird, uint16_t ord, const uint8_t *pd,
			  uint16_t pd_len, enum urnic_mpa_conn_event *ev, uint64_t now_ns)
{
	const struct urnic_mpa_params *p = &c->params;
	struct urnic_mpa_rr rep = { .kind = URNIC_MPA_REP,
				    .crc = p->crc,
				    .enhanced = p->enhanced,
				    .revision = c->peer.revision,
				    .p2p = p->p2p,
				    .ird = ird,
				    .ord = ord,
				    .pd = pd,
				    .pd_len = pd_len };
	int rc;

	if (c->state != URNIC_MPA_CONN_REQ_RCVD)
		return -EALREADY;
	if (ird > URNIC_MPA_IRD_ORD_MAX || ord > URNIC_MPA_IRD_ORD_MAX || (pd_len && !pd))
		return -EINVAL;
	if (pd_len > (p->enhanced ? URNIC_MPA_ULP_PD_MAX : URNIC_MPA_PD_MAX))
		return -EMSGSIZE;
	/* siw_accept without relaxed IRD negotiation: our ORD may not exceed the peer's IRD. */
	if (p->enhanced && ord > p->peer_ird)
		return -EINVAL;
	rep.rtr_write = p->rtr == URNIC_MPA_RTR_WRITE;
	rep.rtr_read = p->rtr == URNIC_MPA_RTR_READ;
	rep.rtr_send = p->rtr == URNIC_MPA_RTR_SEND;
	rc = queue_rr(c, &rep);
	if (rc)
		return rc;
	c->params.ird = ird;
	c->params.ord = ord;
	if (p->p2p) {
		c->state = URNIC_MPA_CONN_WAIT_RTR;
		c->deadline_ns = now_ns + c->cfg.timeout_ns;
		*ev = URNIC_MPA_EV_NONE;
		return 0;
	}
	c->state = URNIC_MPA_CONN_CONNECTED;
	*ev = URNIC_MPA_EV_CONNECTED;
	return 0;
}

int urnic_mpa_conn_reject(struct urnic_mpa_conn *c, const uint8_t *pd, uint16_t pd_len)
{
	struct urnic_mpa_rr rep = { .kind = URNIC_MPA_REP,
				    .reject = true,
				    .crc = c->params.crc,
				    .enhanced = c->params.enhanced,
				    .revision = c->peer.revision,
				    .pd = pd,
				    .pd_len = pd_len };
	int rc;

	if (c->state != URNIC_MPA_CONN_REQ_RCVD)
		return -EALREADY;
	if (pd_len && !pd)
		return -EINVAL;
	if (pd_len > (rep.enhanced ? URNIC_MPA_ULP_PD_MAX : URNIC_MPA_PD_MAX))
		return -EMSGSIZE;
	rc = queue_rr(c, &rep);
	if (rc)
		return rc;
	c->state = URNIC_MPA_CONN_REJECTED;
	c->reason = URNIC_MPA_CONN_R_REJECTED;
	return 0;
}

size_t urnic_mpa_conn_output(struct urnic_mpa_conn *c, uint8_t *buf, size_t cap)
{
	size_t n = c->out_len < cap ? c->out_len : cap;

	memcpy(buf, c->out, n);
	memmove(c->out, c->out + n, c->out_len - n);
	c->out_len -= n;
	return n;
}
