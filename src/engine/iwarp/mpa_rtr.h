/* SPDX-License-Identifier: MIT */
/*
 * mpa_rtr.h - RFC 6581 3's ready-to-receive FPDUs of peer-to-peer setup, built as siw's
 * siw_qp_mpa_rts() sends them, recognised on the responder, and the LLP Terminate the
 * initiator sends when IRD/ORD or the RTR model cannot be agreed.
 */
#ifndef URNIC_ENGINE_IWARP_MPA_RTR_H
#define URNIC_ENGINE_IWARP_MPA_RTR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "engine/iwarp/mpa_conn.h"
#include "wire/ddp.h"

/* siw's RTR carries STag 1 ("some HW may treat STag 0 special"), offset 0, no bytes. */
enum { URNIC_MPA_RTR_STAG = 1 };

/* The RTR message's headers (rtr: enum urnic_mpa_rtr other than NONE). */
void urnic_mpa_rtr_hdr(uint8_t rtr, struct urnic_ddp_hdr *h);
/* true when h with payload bytes of payload is the RTR message rtr. */
bool urnic_mpa_rtr_is(uint8_t rtr, const struct urnic_ddp_hdr *h, size_t payload);
/* The RTR FPDU into buf: bytes, or -errno from the codecs. */
ssize_t urnic_mpa_rtr_fpdu(uint8_t rtr, bool crc, uint8_t *buf, size_t cap);
/* An LLP Terminate FPDU (layer, etype and code of t; no copied headers). */
ssize_t urnic_mpa_term_fpdu(enum urnic_iw_term t, bool crc, uint8_t *buf, size_t cap);
/* The responder in WAIT_RTR: gathers the first FPDU and checks it is the agreed RTR;
 * a Read answers with a zero-length Read Response, queued. */
enum urnic_mpa_conn_event urnic_mpa_rtr_input(struct urnic_mpa_conn *c, const uint8_t *buf,
					      size_t len, size_t *used);

#endif
