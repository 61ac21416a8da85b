/* SPDX-License-Identifier: MIT */
/*
 * park.c - a REQ for a service ID nobody listens on waits up to URNIC_CM_PARK_NS for a
 * listener before it is rejected (IBTA 12.6.5: REJ 'invalid service ID'). Programs that
 * synchronize out of band and then connect at once (perftest -R: the client's REQ
 * follows the handshake while the server is between its handshake and rdma_listen)
 * need the passive side to be as slow to refuse as Linux's rdma_cm, whose REQ goes
 * through two resolution work items first. A REJ that comes a little later is one a
 * slower CM would send; the slots are few, so a flood is rejected at once.
 */
#include "engine/cm/core.h"

bool urnic_cm_park(struct urnic_cm *cm, const struct urnic_cm_mad *m,
		   const struct urnic_cm_addr *from, uint64_t now_ns)
{
	for (uint32_t i = 0; i < URNIC_CM_PARK_SLOTS; i++) {
		struct cm_parked *p = &cm->parked[i];

		if (p->used)
			continue;
		*p = (struct cm_parked){
			.used = true, .until = now_ns + URNIC_CM_PARK_NS, .from = *from, .mad = *m
		};
		if (!cm->next_deadline || p->until < cm->next_deadline)
			cm->next_deadline = p->until;
		cm_count(cm, URNIC_CM_C_req_parked);
		return true;
	}
	return false;
}

void urnic_cm_park_tick(struct urnic_cm *cm, uint64_t now_ns, uint64_t *next)
{
	for (uint32_t i = 0; i < URNIC_CM_PARK_SLOTS; i++) {
		struct cm_parked *p = &cm->parked[i];
		bool heard = p->used && urnic_cm_listener_find(cm, p->mad.msg.req.service_id);

		if (!p->used)
			continue;
		if (!heard && p->until > now_ns) {
			if (!*next || p->until < *next)
				*next = p->until;
			continue;
		}
		if (!cm_room(cm, 1, 1)) {
			*next = now_ns ? now_ns : 1;
			continue;
		}
		p->used = false;
		if (heard) {
			cm_count(cm, URNIC_CM_C_req_unparked);
			urnic_cm_rx_req(cm, &p->mad, &p->from, now_ns);
			continue;
		}
		urnic_cm_issue_rej(cm, &p->mad, &p->from, URNIC_CM_REJ_INVALID_SERVICE_ID,
				   URNIC_CM_MSG_CODE_REQ);
		cm_count(cm, URNIC_CM_C_rej_invalid_service);
	}
}
