/* SPDX-License-Identifier: MIT */
/*
 * rsocket.h - rsockets (rsocket(7)): socket calls over an RC QP per stream, as rdma-core's
 * librdmacm/rsocket.c does them and on the same wire: the connection's private data
 * (struct rs_conn_data), data as RDMA WRITE with immediate into the peer's receive buffer,
 * credits and buffer grants as immediate-only messages. An rsocket's number is the fd of
 * its own rdma_cm event channel (stream) or of its UDP socket (datagram), so that it never
 * names an fd of the application. Context: any application thread; one lock per rsocket.
 */
#ifndef URNIC_CM_RSOCKET_H
#define URNIC_CM_RSOCKET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/rsocket.h>

/* rdma-core 44 rsocket.c's constants: the wire depends on RS_SGL_SIZE and the split
 * of the receive buffer in halves; the rest are its defaults. */
enum {
	URNIC_RS_OLAP_START = 2048,
	URNIC_RS_MAX_TRANSFER = 65536,
	URNIC_RS_SNDLOWAT = 2048,
	URNIC_RS_QP_MIN = 16,
	URNIC_RS_QP_MAX = 0xfffe,
	URNIC_RS_QP_CTRL = 4,
	URNIC_RS_SGL_SIZE = 2,
	URNIC_RS_DEF_INLINE = 64,
	URNIC_RS_DEF_QSIZE = 384,
	URNIC_RS_DEF_MEM = 1 << 17,
};

/* The immediate's top three bits (rsocket.c's RS_OP_*); WRITE is never sent. */
enum urnic_rs_op {
	URNIC_RS_OP_DATA = 0,
	URNIC_RS_OP_WRITE = 2,
	URNIC_RS_OP_SGL = 4,
	URNIC_RS_OP_IOMAP_SGL = 6,
	URNIC_RS_OP_CTRL = 7,
};

enum urnic_rs_ctrl {
	URNIC_RS_CTRL_DISCONNECT = 0,
	URNIC_RS_CTRL_KEEPALIVE = 1,
	URNIC_RS_CTRL_SHUTDOWN = 2,
};

static inline uint32_t urnic_rs_msg(uint32_t op, uint32_t data)
{
	return (op << 29) | data;
}
#define URNIC_RS_MSG_OP(m) ((uint32_t)(m) >> 29)
#define URNIC_RS_MSG_DATA(m) ((uint32_t)(m)&0x1fffffff)
#define URNIC_RS_WR_RECV (1ULL << 63)
/* rsocket.c's RS_WR_ID_FLAG_MSG_SEND: the SEND that carries a write's message word. */
#define URNIC_RS_WR_MSG_SEND (1ULL << 62)
/* RS_MSG_SIZE: a message word as the payload of a SEND, in the sender's byte order. */
enum { URNIC_RS_MSG_SIZE = 4 };

/* rs_sge: the peer's buffer as it travels in private data (big endian there) and in
 * SGL updates (the writer's byte order, RS_CONN_FLAG_NET says which). */
struct urnic_rs_sge {
	uint64_t addr;
	uint32_t key;
	uint32_t length;
};

struct urnic_rs_iomap {
	uint64_t offset;
	struct urnic_rs_sge sge;
};

enum { URNIC_RS_CONN_FLAG_NET = 1, URNIC_RS_CONN_FLAG_IOMAP = 2, URNIC_RS_CONN_DATA_LEN = 40 };

/* The states, ordered as rsocket.c's: passive, opening, connected, closed. */
enum urnic_rs_state {
	URNIC_RS_INIT = 0,
	URNIC_RS_BOUND = 0x1,
	URNIC_RS_LISTENING = 0x2,
	URNIC_RS_OPENING = 0x4,
	URNIC_RS_RESOLVING_ADDR = 0x4 | 0x10,
	URNIC_RS_RESOLVING_ROUTE = 0x4 | 0x20,
	URNIC_RS_CONNECTING = 0x4 | 0x40,
	URNIC_RS_CONNECTED = 0x100,
	URNIC_RS_WRITABLE = 0x200,
	URNIC_RS_READABLE = 0x400,
	URNIC_RS_RDWR = 0x100 | 0x200 | 0x400,
	URNIC_RS_CONNECT_ERROR = 0x800,
	URNIC_RS_DISCONNECTED = 0x1000,
	URNIC_RS_ERROR = 0x2000,
};

struct urnic_rs_rmsg {
	uint32_t op, data;
};

struct urnic_rs_iomr {
	struct urnic_rs_iomr *next;
	uint64_t offset;
	struct ibv_mr *mr;
	int index; /* slot in the peer's iomap, -1 local only */
	bool pending;
};

struct urnic_rs_dgram;

struct urnic_rs {
	int type;
	int cm_domain; /* AF_INET or AF_INET6 */
	int index;
	pthread_mutex_t lock;
	int state;
	int err;
	int fd_flags;
	uint64_t so_opts, tcp_opts, ipv6_opts;
	unsigned int keepalive_time;
	void *route;
	size_t route_len;

	struct rdma_event_channel *ch;
	struct rdma_cm_id *cm_id;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	bool cq_armed;

	uint32_t sbuf_size, rbuf_size;
	uint16_t sq_size, rq_size, sq_inline;
	int target_iomap_size;

	unsigned int ctrl_seqno, ctrl_max_seqno;
	uint16_t sseq_no, sseq_comp, rseq_no, rseq_comp;
	int remote_sge;
	struct urnic_rs_sge remote_sgl, remote_iomap;
	bool swap_sgl;

	struct ibv_mr *target_mr;
	void *target_list;
	volatile struct urnic_rs_sge *target_sgl;
	volatile struct urnic_rs_iomap *target_iomap;
	int target_sge;

	int rbuf_bytes_avail, rbuf_free_offset, rbuf_offset;
	struct ibv_mr *rmr;
	uint8_t *rbuf;
	int sbuf_bytes_avail;
	struct ibv_mr *smr;
	uint8_t *sbuf;
	struct ibv_sge ssgl[2];
	int sqe_avail;
	/* rsocket.c's RS_OPT_MSG_SEND, set on an iWARP device (no immediate data): every
	 * message word is a SEND of its own, received at rbuf + rbuf_size + 4 * slot, and
	 * a write that carries one takes two send queue entries. */
	bool msg_send;
	int rbuf_msg_index;

	int rmsg_head, rmsg_tail;
	struct urnic_rs_rmsg *rmsg;

	struct urnic_rs_iomr *iomaps; /* riomap's, local and remote */
	bool iomap_pending;

	struct urnic_rs_dgram *dg;
};

/* Set while a call of ours runs: librspreload turns every socket(2) of the process into
 * an rsocket, those the library itself makes to find routes among them; rsocket refuses
 * while it is set, so that the preload makes them kernel sockets (rsocket.c). */
extern __thread int urnic_rs_inside;

/* rsocket.c: the number table. */
struct urnic_rs *urnic_rs_get(int index);
int urnic_rs_insert(struct urnic_rs *rs, int index);
void urnic_rs_remove(struct urnic_rs *rs);
struct urnic_rs *urnic_rs_alloc(const struct urnic_rs *from, int type);
void urnic_rs_free(struct urnic_rs *rs);
int urnic_rs_err(int e);

/* rsocket_conn.c */
int urnic_rs_do_connect(struct urnic_rs *rs, bool wait);
int urnic_rs_accept_one(struct urnic_rs *ls, bool wait);
int urnic_rs_cm_fd_ready(struct urnic_rs *rs);

/* rsocket_data.c */
int urnic_rs_create_ep(struct urnic_rs *rs);
void urnic_rs_format_conn(const struct urnic_rs *rs, uint8_t *out);
int urnic_rs_save_conn(struct urnic_rs *rs, const uint8_t *in, size_t len);
void urnic_rs_free_ep(struct urnic_rs *rs);
int urnic_rs_process(struct urnic_rs *rs, bool nonblock, bool (*test)(struct urnic_rs *rs));
bool urnic_rs_can_send(struct urnic_rs *rs);
bool urnic_rs_have_rdata(struct urnic_rs *rs);
bool urnic_rs_conn_have_rdata(struct urnic_rs *rs);
bool urnic_rs_conn_can_send(struct urnic_rs *rs);
bool urnic_rs_all_sends_done(struct urnic_rs *rs);
bool urnic_rs_ctrl_avail(struct urnic_rs *rs);
int urnic_rs_post_msg(struct urnic_rs *rs, uint32_t msg);
/* Send queue entries a write with a message word takes: 2 under msg_send. */
static inline int urnic_rs_msg_wrs(const struct urnic_rs *rs)
{
	return rs->msg_send ? 2 : 1;
}
int urnic_rs_post_write(struct urnic_rs *rs, struct ibv_sge *sgl, int nsge, uint32_t wr_data,
			int flags, uint64_t addr, uint32_t rkey, bool imm);
void urnic_rs_arm(struct urnic_rs *rs);
void urnic_rs_take_cq_event(struct urnic_rs *rs);

/* rsocket_io.c */
int urnic_rs_ready(struct urnic_rs *rs, int flags);
int urnic_rs_stage(struct urnic_rs *rs, const struct iovec **iov, size_t *off, uint32_t len);
void urnic_rs_staged(struct urnic_rs *rs, int nsge, uint32_t len);
bool urnic_rs_nonblocking(const struct urnic_rs *rs, int flags);
int urnic_rs_wait_send(struct urnic_rs *rs, int flags);
/* The next piece of a transfer with left bytes to go: *olen, which doubles up to
 * URNIC_RS_MAX_TRANSFER while more remain (rsocket.c's overlap growth), bounded by
 * the send buffer's free bytes. */
static inline uint32_t urnic_rs_next_xfer(const struct urnic_rs *rs, uint32_t *olen, size_t left)
{
	uint32_t xfer = *olen < left ? *olen : (uint32_t)left;

	if (*olen < left && *olen < URNIC_RS_MAX_TRANSFER)
		*olen <<= 1;
	if (xfer > (uint32_t)rs->sbuf_bytes_avail)
		xfer = rs->sbuf_bytes_avail;
	return xfer;
}

/* rsocket_iomap.c */
int urnic_rs_send_iomaps(struct urnic_rs *rs, int flags);
void urnic_rs_free_iomaps(struct urnic_rs *rs);

/* rsocket_dgram.c */
int urnic_rs_dg_init(struct urnic_rs *rs, int domain);
void urnic_rs_dg_free(struct urnic_rs *rs);
int urnic_rs_dg_bind(struct urnic_rs *rs, const struct sockaddr *a, socklen_t len);
int urnic_rs_dg_connect(struct urnic_rs *rs, const struct sockaddr *a, socklen_t len);
ssize_t urnic_rs_dg_recvfrom(struct urnic_rs *rs, void *buf, size_t len, int flags,
			     struct sockaddr *src, socklen_t *srclen);
ssize_t urnic_rs_dg_sendto(struct urnic_rs *rs, const struct iovec *iov, int iovcnt, int flags,
			   const struct sockaddr *dst, socklen_t dstlen);
int urnic_rs_dg_poll(struct urnic_rs *rs, short events, int *fd);
void urnic_rs_dg_take_events(struct urnic_rs *rs);
int urnic_rs_dg_set_nonblock(struct urnic_rs *rs, bool on);

#endif
