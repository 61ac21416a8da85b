/* SPDX-License-Identifier: MIT */
/*
 * rsocket_dgram.h - a datagram rsocket's state, as rdma-core 44's ds_* keeps it: a UDP
 * socket (the rsocket's number and its address), a UD QP per local address, a
 * destination per peer address with the AH and QPN learnt from the peer's UDP
 * bootstrap message, and the datagrams received, in order, waiting to be read.
 */
#ifndef URNIC_CM_RSOCKET_DGRAM_H
#define URNIC_CM_RSOCKET_DGRAM_H

#include <netinet/in.h>

#include "cm/rsocket.h"

/* rsocket.c's ds_header (on every UD message) and ds_udp_header (on the UDP socket). */
enum {
	URNIC_DS_HDR4 = 8,
	URNIC_DS_HDR6 = 24,
	URNIC_DS_UDP_HDR4 = 16,
	URNIC_DS_UDP_HDR6 = 28,
	URNIC_DS_UDP_TAG = 0x55555555,
	URNIC_DS_GRH = 40,
	URNIC_DS_QKEY = 0x01234567, /* RDMA_UDP_QKEY */
};

struct urnic_ds_qp {
	struct urnic_ds_qp *next;
	struct rdma_cm_id *id;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	bool armed;
	struct ibv_mr *smr, *rmr;
	uint8_t *rbuf;
	struct sockaddr_storage local; /* the UDP socket's address, the key */
	uint8_t hdr[URNIC_DS_HDR6];
	uint8_t hdr_len;
};

struct urnic_ds_dest {
	struct urnic_ds_dest *next;
	struct sockaddr_storage addr;
	struct urnic_ds_qp *qp;
	struct ibv_ah *ah;
	uint32_t qpn;
};

struct urnic_ds_rmsg {
	struct urnic_ds_qp *qp; /* NULL: a copy of a datagram that came over UDP */
	uint32_t offset, length;
	uint8_t *copy;
};

struct urnic_rs_dgram {
	int udp;
	int epfd;
	bool ready; /* buffers made (the first bind, connect or send) */
	struct urnic_ds_qp *qps;
	struct urnic_ds_dest *dests, *conn;
	uint8_t *sbuf;
	int *free_slots, nfree;
	struct urnic_ds_rmsg *rmsg;
	int head, tail, rqe_avail;
};

/* rsocket_dgram_qp.c */
int urnic_ds_get_dest(struct urnic_rs *rs, const struct sockaddr *addr, socklen_t len,
		      struct urnic_ds_dest **out);
void urnic_ds_free_qp(struct urnic_rs *rs, struct urnic_ds_qp *qp);
int urnic_ds_post_recv(struct urnic_rs *rs, struct urnic_ds_qp *qp, uint32_t offset);
int urnic_ds_make_ah(struct urnic_ds_dest *d, const uint8_t *gid_ip, int family, uint32_t qpn);
socklen_t urnic_ds_addrlen(const struct sockaddr *sa);
bool urnic_ds_same_addr(const struct sockaddr *a, const struct sockaddr *b);

#endif
