/* SPDX-License-Identifier: MIT */
/*
 * cm.h - Communication Manager MADs: the messages that set up and tear down connections
 * (IBTA Vol.1 ch. 12), as Linux's cm.c exchanges them over RoCEv2 on QP 1.
 *
 * A CM MAD is a 256-byte MAD (mad.h) of management class 0x07, class version 2, method
 * Send; its AttributeID names the message (cm.def) and its data holds the message's
 * fields. The codec decodes into, and encodes from, one host-order struct per message,
 * the fields table-driven (cm.def); refusals carry a named reason (cm_reason.def).
 * Out of scope: the CM state machine, timers, LAP/APR (refused), RD semantics.
 */
#ifndef URNIC_WIRE_CM_H
#define URNIC_WIRE_CM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire/mad.h"
#include "wire/pkt.h"

enum {
	URNIC_MGMT_CLASS_CM = 0x07, /* ComMgt, IBTA 13.4 */
	URNIC_CM_CLASS_VERSION = 2,
	URNIC_CM_ATTR_LAP = 0x0019, /* load alternate path: refused, unsupported */
	URNIC_CM_ATTR_APR = 0x001a, /* alternate path response: refused, unsupported */
	URNIC_CM_ARI_BYTES = 72,    /* REJ additional rejection information */
	URNIC_CM_SIDR_INFO_BYTES = 72,
};

/* The CM attribute IDs (cm.def): URNIC_CM_ATTR_REQ = 0x0010, ... */
enum urnic_cm_attr {
#define URNIC_CM_MSG(msg, NAME, attr_id) URNIC_CM_ATTR_##NAME = (attr_id),
#define URNIC_CM_FIELD(msg, member, byte, bit, width)
#include "wire/cm.def"
#undef URNIC_CM_FIELD
#undef URNIC_CM_MSG
};

/* REQ Transport Service Type (IBTA 12.6, table 106); 3 means "see Extended Transport
 * Type", whose only defined value is XRC (IBTA Annex A14). */
enum urnic_cm_transport {
	URNIC_CM_TRANSPORT_RC = 0,
	URNIC_CM_TRANSPORT_UC = 1,
	URNIC_CM_TRANSPORT_RD = 2,
	URNIC_CM_TRANSPORT_EXT = 3,
	URNIC_CM_EXT_TRANSPORT_XRC = 1,
};

/* MRA Message MRAed and REJ Message Rejected: which message is answered; 3 reserved. */
enum urnic_cm_msg_code {
	URNIC_CM_MSG_CODE_REQ = 0,
	URNIC_CM_MSG_CODE_REP = 1,
	URNIC_CM_MSG_CODE_OTHER = 2, /* LAP for an MRA */
};

/* Why a MAD or rdma_cm header was refused (cm_reason.def): URNIC_CM_R_OK, ... */
enum urnic_cm_reason {
#define URNIC_CM_REASON(name, text) URNIC_CM_R_##name,
#include "wire/cm_reason.def"
#undef URNIC_CM_REASON
	URNIC_CM_R_COUNT
};

/* Field widths in bits are given where they are not the member's type (cm.def). */

/* A REQ's primary or alternate path (IBTA 12.6, table 106; all zero: no alternate). */
struct urnic_cm_path {
	uint16_t local_lid;
	uint16_t remote_lid;
	uint8_t local_gid[16];
	uint8_t remote_gid[16];
	uint32_t flow_label; /* 20 */
	uint8_t packet_rate; /* 6 */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;		   /* 4 */
	uint8_t subnet_local;	   /* 1 */
	uint8_t local_ack_timeout; /* 5 */
};

struct urnic_cm_req {
	uint32_t local_comm_id;
	uint32_t vendor_id; /* 24 */
	uint64_t service_id;
	uint64_t local_ca_guid;
	uint32_t local_qkey;
	uint32_t local_qpn; /* 24 */
	uint8_t responder_resources;
	uint32_t local_eecn; /* 24 */
	uint8_t initiator_depth;
	uint32_t remote_eecn;		    /* 24 */
	uint8_t remote_cm_response_timeout; /* 5 */
	uint8_t transport_type;		    /* 2, enum urnic_cm_transport */
	uint8_t end_to_end_flow_control;    /* 1 */
	uint32_t starting_psn; /* 24: the PSN the passive side sends from (Linux cm.c) */
	uint8_t local_cm_response_timeout; /* 5 */
	uint8_t retry_count;		   /* 3 */
	uint16_t pkey;
	uint8_t path_mtu;	    /* 4: 1..5 = 256..4096 bytes */
	uint8_t rdc_exists;	    /* 1 */
	uint8_t rnr_retry_count;    /* 3 */
	uint8_t max_cm_retries;	    /* 4 */
	uint8_t srq;		    /* 1 */
	uint8_t ext_transport_type; /* 3 */
	struct urnic_cm_path primary;
	struct urnic_cm_path alternate;
	uint8_t sap_supported; /* 1 */
	uint8_t private_data[92];
};

struct urnic_cm_mra {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_mraed;	 /* 2, enum urnic_cm_msg_code */
	uint8_t service_timeout; /* 5 */
	uint8_t private_data[222];
};

struct urnic_cm_rej {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t message_rejected; /* 2, enum urnic_cm_msg_code */
	uint8_t ari_length;	  /* 7: bytes of ari[] that count, at most 72 */
	uint16_t reason;	  /* IBTA 12.6, table 109 */
	uint8_t ari[URNIC_CM_ARI_BYTES];
	uint8_t private_data[148];
};

struct urnic_cm_rep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t local_qkey;
	uint32_t local_qpn; /* 24 */
	uint8_t vendor_id_h;
	uint32_t local_eecn; /* 24 */
	uint8_t vendor_id_m;
	uint32_t starting_psn; /* 24: the PSN the active side sends from */
	uint8_t vendor_id_l;
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t target_ack_delay;	 /* 5 */
	uint8_t failover_accepted;	 /* 2 */
	uint8_t end_to_end_flow_control; /* 1 */
	uint8_t rnr_retry_count;	 /* 3 */
	uint8_t srq;			 /* 1 */
	uint64_t local_ca_guid;
	uint8_t private_data[196];
};

struct urnic_cm_rtu {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[224];
};

struct urnic_cm_dreq {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn_eecn; /* 24 */
	uint8_t private_data[220];
};

struct urnic_cm_drep {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint8_t private_data[224];
};

struct urnic_cm_sidr_req {
	uint32_t request_id;
	uint16_t pkey;
	uint64_t service_id;
	uint8_t private_data[216];
};

struct urnic_cm_sidr_rep {
	uint32_t request_id;
	uint8_t status;
	uint8_t add_info_length; /* at most 72 */
	uint16_t vendor_id_h;
	uint32_t qpn; /* 24 */
	uint8_t vendor_id_l;
	uint64_t service_id;
	uint32_t qkey;
	uint8_t add_info[URNIC_CM_SIDR_INFO_BYTES];
	uint8_t private_data[136];
};

/* One CM MAD: the header, and the message hdr.attr_id names. */
struct urnic_cm_mad {
	struct urnic_mad_hdr hdr;
	union {
		struct urnic_cm_req req;
		struct urnic_cm_mra mra;
		struct urnic_cm_rej rej;
		struct urnic_cm_rep rep;
		struct urnic_cm_rtu rtu;
		struct urnic_cm_dreq dreq;
		struct urnic_cm_drep drep;
		struct urnic_cm_sidr_req sidr_req;
		struct urnic_cm_sidr_rep sidr_rep;
	} msg;
};

/*
 * Decode the 256 bytes at buf. Checks, in order: exactly URNIC_MAD_BYTES; base version
 * 1, class CM, class version 2, method Send; a CM message (LAP/APR refused); every
 * reserved bit zero; field values (transport type, path MTU, message codes, information
 * lengths). Returns URNIC_MAD_BYTES with *mad filled, or -EBADMSG with *mad untouched.
 * *why (may be NULL) says which rule refused, URNIC_CM_R_OK on success.
 */
ssize_t urnic_cm_decode(struct urnic_cm_mad *mad, const uint8_t *buf, size_t len,
			enum urnic_cm_reason *why);

/* A decoded RoCEv2 packet's payload: first checks it is a UD SEND_ONLY to QP 1 under the
 * GSI Q_Key with no pad (URNIC_CM_R_NOT_GSI), then urnic_cm_decode(). */
ssize_t urnic_cm_decode_pkt(struct urnic_cm_mad *mad, const struct urnic_pkt *pkt,
			    enum urnic_cm_reason *why);

/* The rules urnic_cm_decode applies to header and values, applied to a struct: what
 * urnic_cm_encode accepts. A value wider than its field is URNIC_CM_R_FIELD_WIDTH. */
enum urnic_cm_reason urnic_cm_check(const struct urnic_cm_mad *mad);

/* Encode into buf: URNIC_MAD_BYTES, -ENOBUFS (cap too small) or -EINVAL (a MAD
 * urnic_cm_check refuses). Reserved bits are written as zero. */
ssize_t urnic_cm_encode(const struct urnic_cm_mad *mad, uint8_t *buf, size_t cap);

/* Zeroes *mad and sets the header of a CM message: versions, class, method, attr_id, tid. */
void urnic_cm_mad_init(struct urnic_cm_mad *mad, enum urnic_cm_attr attr_id, uint64_t tid);

/* "REQ", "MRA", ... or NULL for an attribute ID that is no CM message. */
const char *urnic_cm_attr_name(uint16_t attr_id);
/* The text of a reason (cm_reason.def); "?" out of range. */
const char *urnic_cm_reason_name(enum urnic_cm_reason r);

#endif
