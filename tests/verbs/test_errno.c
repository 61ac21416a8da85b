/* SPDX-License-Identifier: MIT */
/*
 * test_errno.c - every verb urnic implements, called with the invalid arguments its
 * rdma-core man page (section 3, rdma-core v44) names, answering as the man page says
 * and, where the page leaves the errno to the provider, as rxe answers (the kernel's
 * drivers/infiniband/sw/rxe and core/uverbs_cmd.c, rdma-core's providers/rxe).
 *
 * Return conventions (the man pages' RETURN VALUE sections): creators return NULL and
 * set errno; ibv_modify_*, ibv_destroy_*, ibv_dealloc_pd, ibv_post_*, ibv_query_port,
 * ibv_query_qp/srq return the errno itself; ibv_query_gid, ibv_query_pkey,
 * ibv_get_cq_event, ibv_get_async_event return -1 with errno set.
 * No traffic: one device (URNIC_ADDR, one address of 127.0.5.0/24), QPs stay local.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_open.h"

/* rdma-core exports them without a public prototype (infiniband/driver.h). */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);
const char *ibv_get_sysfs_path(void);

/* NULL with errno e: a failed creator. */
#define CHECK_NULL_ERRNO(call, e)                                                                  \
	do {                                                                                       \
		errno = 0;                                                                         \
		void *check_p_ = (void *)(call);                                                   \
		if (check_p_ || errno != (e)) {                                                    \
			fprintf(stderr, "%s:%d: %s: got %p errno %d (%s), want NULL %s\n",         \
				__FILE__, __LINE__, #call, check_p_, errno, strerror(errno), #e);  \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

/* -1 with errno e. */
#define CHECK_M1_ERRNO(call, e)                                                                    \
	do {                                                                                       \
		errno = 0;                                                                         \
		int check_r_ = (call);                                                             \
		if (check_r_ != -1 || errno != (e)) {                                              \
			fprintf(stderr, "%s:%d: %s: got %d errno %d (%s), want -1 %s\n", __FILE__, \
				__LINE__, #call, check_r_, errno, strerror(errno), #e);            \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_device_attr dev_attr;
static char buf[65536];

static struct ibv_cq *new_cq(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);

	CHECK(cq);
	return cq;
}

static struct ibv_qp *new_qp(enum ibv_qp_type type, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 2, .max_recv_sge = 2 },
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &init);

	CHECK(qp);
	return qp;
}

static void to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x11111111 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	mask |= qp->qp_type == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS;
	CHECK_EQ(ibv_modify_qp(qp, &a, mask), 0);
}

/* Our own address, the RoCEv2 GID at index 1 (ibv_query_gid). */
static struct ibv_ah_attr self_av(void)
{
	struct ibv_ah_attr av = { .is_global = 1, .port_num = 1 };

	CHECK_EQ(ibv_query_gid(ctx, 1, 1, &av.grh.dgid), 0);
	av.grh.sgid_index = 1;
	av.grh.hop_limit = 64;
	return av;
}

/* What INIT -> RTR and RTR -> RTS require of an RC QP (IBTA 10.3.1 table 91). */
#define RC_RTR_MASK                                                                                \
	(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |            \
	 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)
#define RC_RTS_MASK                                                                                \
	(IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |     \
	 IBV_QP_MAX_QP_RD_ATOMIC)

/* INIT -> RTR towards QP dest_qpn of our own address, valid attributes. */
static struct ibv_qp_attr rtr_attr(uint32_t dest_qpn)
{
	return (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR,
				     .path_mtu = IBV_MTU_1024,
				     .dest_qp_num = dest_qpn,
				     .max_dest_rd_atomic = 1,
				     .min_rnr_timer = 12,
				     .ah_attr = self_av() };
}

/* RTR -> RTS, valid attributes. */
static struct ibv_qp_attr rts_attr(void)
{
	return (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS,
				     .timeout = 14,
				     .retry_cnt = 7,
				     .rnr_retry = 7,
				     .max_rd_atomic = 1 };
}

/* An RC QP in RTS towards QP dest_qpn of our own address. */
static void to_rts(struct ibv_qp *qp, uint32_t dest_qpn)
{
	struct ibv_qp_attr a = rtr_attr(dest_qpn);

	to_init(qp);
	CHECK_EQ(ibv_modify_qp(qp, &a, RC_RTR_MASK), 0);
	a = rts_attr();
	CHECK_EQ(ibv_modify_qp(qp, &a, RC_RTS_MASK), 0);
}

/* ---- device, port, GID, P_Key ---- */

/* ibv_query_port(3): returns the errno; the device has one port, number 1. */
static void query_port_of_a_port_that_does_not_exist_is_einval(void)
{
	struct ibv_port_attr pa;

	CHECK_EQ(ibv_query_port(ctx, 0, &pa), EINVAL);
	CHECK_EQ(ibv_query_port(ctx, 2, &pa), EINVAL);
	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
}

/* ibv_query_gid(3): -1 on error. rdma-core reads an empty slot inside the table as
 * the zero GID (ibv_query_gid_ex ENODATA -> 0); past the table, or another port, is
 * an error (the kernel's GID cache: EINVAL). */
static void query_gid_outside_the_table_fails(void)
{
	union ibv_gid gid;
	struct ibv_port_attr pa;

	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	CHECK_M1_ERRNO(ibv_query_gid(ctx, 1, pa.gid_tbl_len, &gid), EINVAL);
	CHECK_M1_ERRNO(ibv_query_gid(ctx, 1, -1, &gid), EINVAL);
	CHECK_M1_ERRNO(ibv_query_gid(ctx, 2, 0, &gid), EINVAL);
	memset(&gid, 0xa5, sizeof(gid));
	CHECK_EQ(ibv_query_gid(ctx, 1, pa.gid_tbl_len - 1, &gid), 0);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(gid.raw[i], 0);
}

/* ibv_query_gid_ex(3): ENODATA for an empty slot inside the table. */
static void query_gid_ex_of_an_empty_slot_is_enodata(void)
{
	struct ibv_gid_entry e;
	struct ibv_port_attr pa;

	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	CHECK_EQ(ibv_query_gid_ex(ctx, 1, pa.gid_tbl_len - 1, &e, 0), ENODATA);
	CHECK_EQ(ibv_query_gid_ex(ctx, 1, pa.gid_tbl_len, &e, 0), EINVAL);
	CHECK_EQ(ibv_query_gid_ex(ctx, 1, 1, &e, 0), 0);
	CHECK_EQ(e.gid_type, IBV_GID_TYPE_ROCE_V2);
}

/* ibv_query_gid_ex(3): ndev_ifindex is the netdev of the GID, as the kernel's GID
 * table holds one for every RoCE GID; 127.0.5.1 is held by lo (127.0.0.0/8). */
static void query_gid_ex_names_the_interface_holding_the_address(void)
{
	struct ibv_gid_entry e;

	CHECK(if_nametoindex("lo") > 0);
	for (uint32_t i = 0; i < 2; i++) {
		CHECK_EQ(ibv_query_gid_ex(ctx, 1, i, &e, 0), 0);
		CHECK_EQ(e.ndev_ifindex, if_nametoindex("lo"));
	}
}

/* rdma-core's ibv_read_sysfs_file (libibverbs/sysfs.c): the file's text without its
 * newline, and its length (ibv_devinfo prints board_id with one of its own). */
static void read_sysfs_file_answers_board_id_without_a_newline(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	char text[64];

	CHECK(list && list[0]);
	CHECK_EQ(ibv_read_sysfs_file(list[0]->ibdev_path, "board_id", text, sizeof(text)),
		 (int)strlen("URNIC_SOFT_ROCE"));
	CHECK_EQ(strcmp(text, "URNIC_SOFT_ROCE"), 0);
	CHECK_EQ(ibv_read_sysfs_file(list[0]->ibdev_path, "board_id", text, 4), -1);
	CHECK_M1_ERRNO(ibv_read_sysfs_file(list[0]->ibdev_path, "no_such_file", text, sizeof(text)),
		       ENOENT);
	ibv_free_device_list(list);
}

/* rdma-core's ibv_get_sysfs_path: $SYSFS_PATH, else /sys. librdmacm builds paths on it
 * and crashed on NULL. */
static void get_sysfs_path_is_sys(void)
{
	const char *path = ibv_get_sysfs_path();

	CHECK(path);
	CHECK_EQ(strcmp(path, getenv("SYSFS_PATH") ? getenv("SYSFS_PATH") : "/sys"), 0);
}

/* ibv_query_pkey(3): -1 on error; one P_Key, the default 0xffff. */
static void query_pkey_outside_the_table_fails(void)
{
	__be16 pkey;

	CHECK_M1_ERRNO(ibv_query_pkey(ctx, 1, (int)dev_attr.max_pkeys, &pkey), EINVAL);
	CHECK_M1_ERRNO(ibv_query_pkey(ctx, 2, 0, &pkey), EINVAL);
	CHECK_EQ(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	CHECK_EQ(pkey, 0xffff);
}

/* ibv_query_device_ex(3): comp_mask of the input must be 0 (rdma-core: EINVAL). */
static void query_device_ex_with_unknown_input_is_einval(void)
{
	struct ibv_query_device_ex_input in = { .comp_mask = 1 };
	struct ibv_device_attr_ex ax;

	CHECK_EQ(ibv_query_device_ex(ctx, &in, &ax), EINVAL);
	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &ax), 0);
	CHECK_EQ(ax.orig_attr.max_qp_wr, dev_attr.max_qp_wr);
}

/* ibv_get_async_event(3): -1 on error; the example sets async_fd non-blocking, then
 * an empty queue reads as EAGAIN. */
static void get_async_event_without_an_event_is_eagain_when_nonblocking(void)
{
	struct ibv_async_event ev;
	int flags = fcntl(ctx->async_fd, F_GETFL);

	CHECK(fcntl(ctx->async_fd, F_SETFL, flags | O_NONBLOCK) == 0);
	CHECK_M1_ERRNO(ibv_get_async_event(ctx, &ev), EAGAIN);
	CHECK(fcntl(ctx->async_fd, F_SETFL, flags) == 0);
}

/* ---- PD and MR ---- */

/* ibv_reg_mr(3): "If IBV_ACCESS_REMOTE_WRITE or IBV_ACCESS_REMOTE_ATOMIC is set, then
 * IBV_ACCESS_LOCAL_WRITE must be set too" (kernel ib_check_mr_access: EINVAL); access
 * bits the kernel does not know are EINVAL too. */
static void reg_mr_with_remote_write_but_no_local_write_is_einval(void)
{
	struct ibv_mr *mr;

	CHECK_NULL_ERRNO(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_WRITE), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_ATOMIC), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_REMOTE_READ | (1 << 15)),
			 EINVAL);
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	CHECK(mr);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	/* Local read is always on: no flag at all is a valid registration. */
	mr = ibv_reg_mr(pd, buf, sizeof(buf), 0);
	CHECK(mr);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
}

/* Four pages: read-write, read-only, no access, and one not mapped (unmapped after
 * the mapping was made, so nothing else is there). */
static uint8_t *four_pages(size_t *page)
{
	uint8_t *m;

	*page = (size_t)sysconf(_SC_PAGESIZE);
	m = mmap(NULL, 4 * *page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED);
	CHECK(mprotect(m + *page, *page, PROT_READ) == 0);
	CHECK(mprotect(m + 2 * *page, *page, PROT_NONE) == 0);
	CHECK(munmap(m + 3 * *page, *page) == 0);
	return m;
}

/* ibv_reg_mr(3) leaves the errno to the kernel, whose pinning (ib_umem_get) refuses
 * what urnic now refuses by reading the process's mappings: an unmapped page or one
 * without read access (PROT_NONE) is EFAULT; so is a read-only one with any right that
 * writes (ib_access_writable: local or remote write, remote atomic, window binding); a
 * range whose end wraps, or of more than UINT_MAX pages or none, is EINVAL. */
static void reg_mr_of_memory_the_kernel_could_not_pin_fails(void)
{
	static const int writes[] = {
		IBV_ACCESS_LOCAL_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		IBV_ACCESS_MW_BIND,
	};
	size_t page;
	uint8_t *m = four_pages(&page), *rw = m, *ro = m + page, *none = m + 2 * page;
	uint8_t *gone = m + 3 * page;
	struct ibv_mr *mr;

	CHECK_NULL_ERRNO(ibv_reg_mr(pd, gone, page, 0), EFAULT);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, gone + 100, 8, IBV_ACCESS_REMOTE_READ), EFAULT);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, none, page, 0), EFAULT);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, none, page, IBV_ACCESS_REMOTE_READ), EFAULT);
	for (unsigned i = 0; i < sizeof(writes) / sizeof(writes[0]); i++) {
		CHECK_NULL_ERRNO(ibv_reg_mr(pd, ro, page, writes[i]), EFAULT);
		CHECK_NULL_ERRNO(ibv_reg_mr(pd, rw, 2 * page, writes[i]), EFAULT);
		CHECK_NULL_ERRNO(ibv_reg_mr(pd, ro + page - 1, 1, writes[i]), EFAULT);
	}
	/* Straddling into the page without access, and into the hole. */
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, ro, 2 * page, IBV_ACCESS_REMOTE_READ), EFAULT);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, rw + page / 2, 3 * page, 0), EFAULT);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, none + page - 1, 2, 0), EFAULT);
	/* Read-only memory for remote reads, and all of the writable page for writes. */
	mr = ibv_reg_mr(pd, ro, page, IBV_ACCESS_REMOTE_READ);
	CHECK(mr);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	mr = ibv_reg_mr(pd, rw, 2 * page, 0);
	CHECK(mr);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	mr = ibv_reg_mr(pd, rw, page,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND);
	CHECK(mr);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	/* The end wraps, or page-aligning it does; past UINT_MAX pages; past what is mapped. */
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, rw, SIZE_MAX, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, rw, (size_t)0 - (uintptr_t)rw, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, (void *)(UINTPTR_MAX - 100), 200, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, (void *)(UINTPTR_MAX - 100), 50, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, rw, (size_t)1 << 50, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, rw, (size_t)1 << 40, 0), EFAULT);
	CHECK_NULL_ERRNO(ibv_reg_mr_iova(pd, gone, page, 0x10000, 0), EFAULT);
	/* No pages at all (a page-aligned address, length 0: the kernel's npages == 0);
	 * length 0 inside a page covers that page, as the kernel pins it. */
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, rw, 0, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, NULL, 0, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_reg_mr(pd, gone + 8, 0, 0), EFAULT);
	mr = ibv_reg_mr(pd, rw + 8, 0, 0);
	CHECK(mr);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK(munmap(m, 3 * page) == 0);
}

/* ibv_rereg_mr(3): a new translation, or new rights on the old one, is checked as
 * ibv_reg_mr checks a registration (EFAULT, EINVAL), the device's refusal
 * (IBV_REREG_MR_ERR_CMD); the region stays as it was. */
static void rereg_mr_onto_memory_the_kernel_could_not_pin_fails(void)
{
	size_t page;
	uint8_t *m = four_pages(&page), *rw = m, *ro = m + page, *none = m + 2 * page;
	uint8_t *gone = m + 3 * page;
	struct ibv_mr *mr = ibv_reg_mr(pd, rw, page, IBV_ACCESS_LOCAL_WRITE);
	uint32_t lkey;

	CHECK(mr);
	lkey = mr->lkey;
#define REREG_FAILS(m_, flags, addr, len, access, e)                                               \
	do {                                                                                       \
		errno = 0;                                                                         \
		CHECK_EQ(ibv_rereg_mr(m_, flags, NULL, addr, len, access), IBV_REREG_MR_ERR_CMD);  \
		CHECK_EQ(errno, e);                                                                \
	} while (0)
	REREG_FAILS(mr, IBV_REREG_MR_CHANGE_TRANSLATION, gone, page, 0, EFAULT);
	REREG_FAILS(mr, IBV_REREG_MR_CHANGE_TRANSLATION, none, page, 0, EFAULT);
	REREG_FAILS(mr, IBV_REREG_MR_CHANGE_TRANSLATION, ro, page, 0, EFAULT);
	REREG_FAILS(mr, IBV_REREG_MR_CHANGE_TRANSLATION, rw, 4 * page, 0, EFAULT);
	REREG_FAILS(mr, IBV_REREG_MR_CHANGE_TRANSLATION, rw, SIZE_MAX, 0, EINVAL);
	REREG_FAILS(mr, IBV_REREG_MR_CHANGE_TRANSLATION, rw, (size_t)1 << 50, 0, EINVAL);
	REREG_FAILS(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS, ro, page,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, EFAULT);
	CHECK(mr->addr == rw && mr->length == page && mr->lkey == lkey);
	/* Read-only memory, once registered for reads only, cannot gain a right that
	 * writes; it can move there with reads only. */
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS,
			      NULL, ro, page, IBV_ACCESS_REMOTE_READ),
		 0);
	CHECK(mr->addr == ro && mr->length == page && mr->lkey == lkey);
	REREG_FAILS(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0, IBV_ACCESS_LOCAL_WRITE, EFAULT);
	REREG_FAILS(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, 0,
		    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC, EFAULT);
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, 0), 0);
#undef REREG_FAILS
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK(munmap(m, 3 * page) == 0);
}

/* ibv_rereg_mr(3): what libibverbs checks first (unknown flags, a translation without
 * address or length, access bits without IBV_REREG_MR_CHANGE_ACCESS) is
 * IBV_REREG_MR_ERR_INPUT; what the device refuses (no flag: the kernel's
 * ib_uverbs_rereg_mr; access as ibv_reg_mr; a PD of another context) is
 * IBV_REREG_MR_ERR_CMD; errno EINVAL either way, the region as it was. */
static void rereg_mr_with_bad_input_fails_as_documented(void)
{
	struct ibv_context *ctx2 = ibv_open_device(ctx->device);
	struct ibv_pd *pd2;
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);

	CHECK(ctx2 && mr);
	pd2 = ibv_alloc_pd(ctx2);
	CHECK(pd2);
#define REREG_FAILS(flags, p, addr, len, access, want)                                             \
	do {                                                                                       \
		errno = 0;                                                                         \
		CHECK_EQ(ibv_rereg_mr(mr, flags, p, addr, len, access), want);                     \
		CHECK_EQ(errno, EINVAL);                                                           \
	} while (0)
	REREG_FAILS(1 << 3, NULL, NULL, 0, 0, IBV_REREG_MR_ERR_INPUT);
	REREG_FAILS(IBV_REREG_MR_CHANGE_TRANSLATION, NULL, NULL, 4096, 0, IBV_REREG_MR_ERR_INPUT);
	REREG_FAILS(IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf, 0, 0, IBV_REREG_MR_ERR_INPUT);
	REREG_FAILS(IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, IBV_ACCESS_LOCAL_WRITE,
		    IBV_REREG_MR_ERR_INPUT);
	REREG_FAILS(0, NULL, NULL, 0, 0, IBV_REREG_MR_ERR_CMD);
	REREG_FAILS(IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, IBV_ACCESS_REMOTE_WRITE,
		    IBV_REREG_MR_ERR_CMD);
	REREG_FAILS(IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0, IBV_REREG_MR_ERR_CMD);
	REREG_FAILS(IBV_REREG_MR_CHANGE_PD, NULL, NULL, 0, 0, IBV_REREG_MR_ERR_CMD);
#undef REREG_FAILS
	CHECK(mr->pd == pd && mr->addr == buf && mr->length == 4096);
	CHECK_EQ(ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_ACCESS,
			      NULL, buf + 4096, 8192,
			      IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
		 0);
	CHECK(mr->addr == buf + 4096 && mr->length == 8192);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
	CHECK_EQ(ibv_dealloc_pd(pd2), 0);
	CHECK_EQ(ibv_close_device(ctx2), 0);
}

/* ibv_alloc_pd(3): "ibv_dealloc_pd() may fail if any other resource is still
 * associated with the PD" (the kernel: EBUSY while its usecnt is held). */
static void dealloc_pd_with_a_live_mr_qp_srq_or_ah_is_ebusy(void)
{
	struct ibv_pd *p = ibv_alloc_pd(ctx);
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_ah_attr av = self_av();
	struct ibv_cq *cq = new_cq();
	struct ibv_pd *saved = pd;
	struct ibv_mr *mr;
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_ah *ah;

	CHECK(p);
	mr = ibv_reg_mr(p, buf, sizeof(buf), 0);
	CHECK(mr);
	CHECK_EQ(ibv_dealloc_pd(p), EBUSY);
	CHECK_EQ(ibv_dereg_mr(mr), 0);

	pd = p;
	qp = new_qp(IBV_QPT_RC, cq, NULL);
	pd = saved;
	CHECK_EQ(ibv_dealloc_pd(p), EBUSY);
	CHECK_EQ(ibv_destroy_qp(qp), 0);

	srq = ibv_create_srq(p, &si);
	CHECK(srq);
	CHECK_EQ(ibv_dealloc_pd(p), EBUSY);
	CHECK_EQ(ibv_destroy_srq(srq), 0);

	ah = ibv_create_ah(p, &av);
	CHECK(ah);
	CHECK_EQ(ibv_dealloc_pd(p), EBUSY);
	CHECK_EQ(ibv_destroy_ah(ah), 0);

	CHECK_EQ(ibv_dealloc_pd(p), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* ---- CQ and completion channel ---- */

/* ibv_create_cq(3): cqe at most max_cqe, comp_vector below num_comp_vectors (rxe
 * rxe_cq_chk_attr and uverbs create_cq: EINVAL; cqe <= 0 likewise). */
static void create_cq_beyond_max_cqe_or_comp_vector_is_einval(void)
{
	struct ibv_cq *cq;

	CHECK_NULL_ERRNO(ibv_create_cq(ctx, dev_attr.max_cqe + 1, NULL, NULL, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_create_cq(ctx, 0, NULL, NULL, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_create_cq(ctx, -1, NULL, NULL, 0), EINVAL);
	CHECK_NULL_ERRNO(ibv_create_cq(ctx, 16, NULL, NULL, ctx->num_comp_vectors), EINVAL);
	CHECK_NULL_ERRNO(ibv_create_cq(ctx, 16, NULL, NULL, -1), EINVAL);
	cq = ibv_create_cq(ctx, dev_attr.max_cqe, NULL, NULL, 0);
	CHECK(cq);
	CHECK(cq->cqe >= dev_attr.max_cqe);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* ibv_resize_cq(3): "0 on success, or the value of errno on failure (which indicates
 * the failure reason)": a size of 0 or beyond max_cqe is EINVAL (rxe_cq_chk_attr) and
 * changes nothing; a valid one becomes cq->cqe, larger or smaller. Fewer than the
 * unpolled completions: tests/engine/test_cq_resize.c. */
static void resize_cq_to_nothing_or_beyond_max_cqe_is_einval(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);

	CHECK(cq);
	CHECK_EQ(ibv_resize_cq(cq, 0), EINVAL);
	CHECK_EQ(ibv_resize_cq(cq, -1), EINVAL);
	CHECK_EQ(ibv_resize_cq(cq, dev_attr.max_cqe + 1), EINVAL);
	CHECK_EQ(cq->cqe, 16);
	CHECK_EQ(ibv_resize_cq(cq, 1000), 0);
	CHECK_EQ(cq->cqe, 1000);
	CHECK_EQ(ibv_resize_cq(cq, 8), 0);
	CHECK_EQ(cq->cqe, 8);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* ibv_create_cq_ex(3): wc_flags the provider cannot report (rxe_create_cq_ex:
 * EOPNOTSUPP; every flag rdma-core 44 defines is offered, a later one is not); cqe as
 * for ibv_create_cq. */
static void create_cq_ex_with_unsupported_fields_fails(void)
{
	struct ibv_cq_init_attr_ex a = { .cqe = 16,
					 .wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK
						     << 1 };
	struct ibv_cq_ex *cq;

	CHECK_NULL_ERRNO(ibv_create_cq_ex(ctx, &a), EOPNOTSUPP);
	a.wc_flags = IBV_WC_STANDARD_FLAGS;
	a.cqe = (uint32_t)dev_attr.max_cqe + 1;
	CHECK_NULL_ERRNO(ibv_create_cq_ex(ctx, &a), EINVAL);
	a.cqe = 16;
	cq = ibv_create_cq_ex(ctx, &a);
	CHECK(cq);
	CHECK_EQ(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)), 0);
}

/* ibv_create_cq(3): "ibv_destroy_cq() fails if any queue pair is still associated
 * with this CQ" (the kernel: EBUSY). */
static void destroy_cq_with_an_attached_qp_is_ebusy(void)
{
	struct ibv_cq *cq = new_cq();
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, cq, NULL);

	CHECK_EQ(ibv_destroy_cq(cq), EBUSY);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* ibv_create_comp_channel(3): "ibv_destroy_comp_channel() fails if any CQs are still
 * associated with this completion event channel" (EBUSY). */
static void destroy_comp_channel_with_a_cq_is_ebusy(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq;

	CHECK(ch);
	cq = ibv_create_cq(ctx, 4, NULL, ch, 0);
	CHECK(cq);
	CHECK_EQ(ibv_destroy_comp_channel(ch), EBUSY);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
}

/* ibv_get_cq_event(3): -1 on error; its non-blocking example: no event is EAGAIN.
 * ibv_req_notify_cq(3): 0 for both arming modes. */
static void get_cq_event_without_an_event_is_eagain_when_nonblocking(void)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(ctx);
	struct ibv_cq *cq, *got;
	void *cq_ctx;

	CHECK(ch);
	cq = ibv_create_cq(ctx, 4, NULL, ch, 0);
	CHECK(cq);
	CHECK(fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) == 0);
	CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	CHECK_EQ(ibv_req_notify_cq(cq, 1), 0);
	CHECK_M1_ERRNO(ibv_get_cq_event(ch, &got, &cq_ctx), EAGAIN);
	ibv_ack_cq_events(cq, 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_destroy_comp_channel(ch), 0);
}

/* ---- QP ---- */

/* ibv_create_qp(3): capabilities beyond the device's (rxe_qp_chk_cap: EINVAL); types
 * the device does not offer (rxe_qp_chk_init: EOPNOTSUPP); "max_recv_wr and
 * max_recv_sge are ignored ... if the QP is to be associated with an SRQ". */
static void create_qp_beyond_the_device_caps_is_einval(void)
{
	struct ibv_cq *cq = new_cq();
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp_init_attr bad;
	struct ibv_srq *srq;
	struct ibv_qp *qp;

	bad = init;
	bad.cap.max_send_wr = (uint32_t)dev_attr.max_qp_wr + 1;
	CHECK_NULL_ERRNO(ibv_create_qp(pd, &bad), EINVAL);
	bad = init;
	bad.cap.max_recv_wr = (uint32_t)dev_attr.max_qp_wr + 1;
	CHECK_NULL_ERRNO(ibv_create_qp(pd, &bad), EINVAL);
	bad = init;
	bad.cap.max_send_sge = (uint32_t)dev_attr.max_sge + 1;
	CHECK_NULL_ERRNO(ibv_create_qp(pd, &bad), EINVAL);
	bad = init;
	bad.cap.max_recv_sge = (uint32_t)dev_attr.max_sge + 1;
	CHECK_NULL_ERRNO(ibv_create_qp(pd, &bad), EINVAL);
	bad = init;
	bad.cap.max_inline_data = 1u << 20;
	CHECK_NULL_ERRNO(ibv_create_qp(pd, &bad), EINVAL);
	bad = init;
	bad.qp_type = IBV_QPT_DRIVER;
	CHECK_NULL_ERRNO(ibv_create_qp(pd, &bad), EOPNOTSUPP);

	/* With an SRQ the receive capabilities are ignored, even out of range. */
	srq = ibv_create_srq(pd, &si);
	CHECK(srq);
	bad = init;
	bad.srq = srq;
	bad.cap.max_recv_wr = (uint32_t)dev_attr.max_qp_wr + 1;
	bad.cap.max_recv_sge = (uint32_t)dev_attr.max_sge + 1;
	qp = ibv_create_qp(pd, &bad);
	CHECK(qp);
	CHECK_EQ(ibv_destroy_srq(srq), EBUSY);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);

	/* The granted capabilities are written back, at least what was asked. */
	qp = ibv_create_qp(pd, &init);
	CHECK(qp);
	CHECK(init.cap.max_send_wr >= 1 && init.cap.max_send_sge >= 1);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* ibv_modify_qp(3): invalid transitions and attributes are refused (the kernel's
 * ib_modify_qp_is_ok and rxe_qp_chk_attr: EINVAL), and "If any of the modify
 * attributes or the modify mask are invalid, none of the attributes will be modified
 * (including the QP state)". */
static void modify_qp_invalid_transition_or_attribute_is_einval(void)
{
	struct ibv_cq *cq = new_cq();
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, cq, NULL);
	struct ibv_qp_attr a, q;
	struct ibv_qp_init_attr qi;
	int init = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS;
	int rtr = RC_RTR_MASK;

	/* RESET -> RTR and RESET -> RTS skip states (IBTA 10.3.1 table 91). */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	a.qp_state = IBV_QPS_RTR;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	/* RESET -> INIT without its required attributes. */
	a.qp_state = IBV_QPS_INIT;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), EINVAL);
	/* ... with an attribute RESET -> INIT does not take (path MTU). */
	a.port_num = 1;
	a.path_mtu = IBV_MTU_1024;
	CHECK_EQ(ibv_modify_qp(qp, &a, init | IBV_QP_PATH_MTU), EINVAL);
	/* ... with a port or P_Key index that does not exist. */
	a.port_num = 2;
	CHECK_EQ(ibv_modify_qp(qp, &a, init), EINVAL);
	a.port_num = 1;
	a.pkey_index = 1;
	CHECK_EQ(ibv_modify_qp(qp, &a, init), EINVAL);
	CHECK_EQ(ibv_query_qp(qp, &q, IBV_QP_STATE, &qi), 0);
	CHECK_EQ(q.qp_state, IBV_QPS_RESET);
	CHECK_EQ(qp->state, IBV_QPS_RESET);

	to_init(qp);
	/* INIT -> RTR without an address vector. */
	a = rtr_attr(0x123);
	CHECK_EQ(ibv_modify_qp(qp, &a, rtr & ~IBV_QP_AV), EINVAL);
	/* ... with a path MTU that is no MTU. */
	a.path_mtu = (enum ibv_mtu)7;
	CHECK_EQ(ibv_modify_qp(qp, &a, rtr), EINVAL);
	/* ... with more responder resources than the device has. */
	a.path_mtu = IBV_MTU_1024;
	a.max_dest_rd_atomic = (uint8_t)(dev_attr.max_qp_rd_atom + 1);
	CHECK_EQ(ibv_modify_qp(qp, &a, rtr), EINVAL);
	/* ... with a DGID on another port (uverbs modify_qp: the AV's port must be valid),
	 * without a GRH (RoCE), or from a source GID index past the table. */
	a.max_dest_rd_atomic = 1;
	a.ah_attr.port_num = 2;
	CHECK_EQ(ibv_modify_qp(qp, &a, rtr), EINVAL);
	a.ah_attr.port_num = 0;
	CHECK_EQ(ibv_modify_qp(qp, &a, rtr), EINVAL);
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 0;
	CHECK_EQ(ibv_modify_qp(qp, &a, rtr), EINVAL);
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.sgid_index = 200;
	CHECK_EQ(ibv_modify_qp(qp, &a, rtr), EINVAL);
	/* None of it took: still INIT, no destination. */
	CHECK_EQ(ibv_query_qp(qp, &q, IBV_QP_STATE | IBV_QP_DEST_QPN, &qi), 0);
	CHECK_EQ(q.qp_state, IBV_QPS_INIT);
	CHECK_EQ(q.dest_qp_num, 0);

	/* RTR -> RTS with a timeout or retry count out of range. */
	a.ah_attr.grh.sgid_index = 1;
	CHECK_EQ(ibv_modify_qp(qp, &a, rtr), 0);
	a = rts_attr();
	a.timeout = 32;
	CHECK_EQ(ibv_modify_qp(qp, &a, RC_RTS_MASK), EINVAL);
	a.timeout = 14;
	a.retry_cnt = 8;
	CHECK_EQ(ibv_modify_qp(qp, &a, RC_RTS_MASK), EINVAL);
	a.retry_cnt = 7;
	a.max_rd_atomic = (uint8_t)(dev_attr.max_qp_init_rd_atom + 1);
	CHECK_EQ(ibv_modify_qp(qp, &a, RC_RTS_MASK), EINVAL);
	CHECK_EQ(qp->state, IBV_QPS_RTR);

	/* Any state may go to ERR and to RESET, but with nothing else in the mask. */
	a.qp_state = IBV_QPS_ERR;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT), EINVAL);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RESET;
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK_EQ(qp->state, IBV_QPS_RESET);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
}

/* ibv_post_send(3): returns the errno and sets *bad_wr to the first WR that failed.
 * rxe's provider (validate_send_wr, post_one_send): more SGEs than max_send_sge, inline
 * data beyond max_inline_data, an opcode the transport lacks: EINVAL; a full send
 * queue: ENOMEM. A QP not yet in RTS: EINVAL (rxe_post_send). */
static void post_send_with_bad_work_requests_fails_with_bad_wr(void)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, cq, NULL);
	struct ibv_qp *uc = new_qp(IBV_QPT_UC, cq, NULL);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge[3];
	struct ibv_send_wr wr, wr2, *bad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
	struct ibv_qp_init_attr qi;
	struct ibv_qp_attr q;
	struct ibv_wc wc[8];

	CHECK(cq && mr);
	for (int i = 0; i < 3; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + 64u * (unsigned)i, 8, mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;

	/* RESET: not ready to send. */
	bad = NULL;
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), EINVAL);
	CHECK(bad == &wr);

	to_rts(qp, 0xabcde);
	CHECK_EQ(ibv_query_qp(qp, &q, IBV_QP_CAP, &qi), 0);
	/* Too many SGEs: the second WR of a list fails, the first is posted. */
	wr2 = wr;
	wr2.num_sge = (int)qi.cap.max_send_sge + 1;
	wr.next = &wr2;
	bad = NULL;
	CHECK_EQ(ibv_post_send(qp, &wr, &bad), EINVAL);
	CHECK(bad == &wr2);
	wr.next = NULL;
	/* Not an error: an inline SEND of no bytes from address 0, as UCX posts an empty
	 * message (MPI_Send of count 0); no byte of the SGE is read (ibv_post_send(3)). */
	{
		struct ibv_sge s = { 0, 0, 0 };
		struct ibv_send_wr w = { .sg_list = &s,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_INLINE };

		bad = NULL;
		CHECK_EQ(ibv_post_send(qp, &w, &bad), 0);
		CHECK(bad == NULL);
	}
	/* Inline data beyond max_inline_data. */
	{
		static char big[1u << 16];
		struct ibv_sge s = { (uintptr_t)big, qi.cap.max_inline_data + 1, 0 };
		struct ibv_send_wr w = { .sg_list = &s,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND,
					 .send_flags = IBV_SEND_INLINE };

		CHECK(s.length <= sizeof(big));
		bad = NULL;
		CHECK_EQ(ibv_post_send(qp, &w, &bad), EINVAL);
		CHECK(bad == &w);
	}
	/* A full send queue (max_send_wr 4): the peer QPN answers nothing, so nothing
	 * posted completes within the retry timeout. */
	{
		struct ibv_send_wr many[8];

		for (int i = 0; i < 8; i++) {
			many[i] = wr;
			many[i].next = i < 7 ? &many[i + 1] : NULL;
		}
		bad = NULL;
		CHECK_EQ(ibv_post_send(qp, many, &bad), ENOMEM);
		CHECK(bad > many && bad <= many + 4);
	}
	/* UC has no RDMA READ or atomics (IBTA 9.8.1). */
	to_init(uc);
	CHECK_EQ(ibv_modify_qp(uc, &a, IBV_QP_STATE), 0);
	wr.opcode = IBV_WR_RDMA_READ;
	bad = NULL;
	CHECK_EQ(ibv_post_send(uc, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	CHECK_EQ(ibv_post_send(uc, &wr, &bad), EINVAL);

	/* Flush what was posted (IBTA 10.3.1: in ERR every WR completes in error). */
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	for (int idle = 0; idle < 50; idle++) {
		int got = ibv_poll_cq(cq, 8, wc);

		CHECK(got >= 0);
		if (got)
			idle = 0;
		else
			usleep(1000);
	}
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_qp(uc), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
}

/* ibv_post_recv(3): errno and *bad_wr; more SGEs than max_recv_sge (rxe post_one_recv:
 * EINVAL), a full receive queue (ENOMEM); "If the QP qp is associated with a shared
 * receive queue, you must use the function ibv_post_srq_recv()" (kernel: EINVAL). */
static void post_recv_with_bad_work_requests_fails_with_bad_wr(void)
{
	struct ibv_cq *cq = new_cq();
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 2, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &si);
	struct ibv_qp *qp = new_qp(IBV_QPT_RC, cq, NULL);
	struct ibv_qp *sqp = new_qp(IBV_QPT_RC, cq, srq);
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	struct ibv_sge sge[3];
	struct ibv_recv_wr wr, many[8], *bad;
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	CHECK(srq && mr);
	for (int i = 0; i < 3; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf + 64u * (unsigned)i, 8, mr->lkey };
	memset(&wr, 0, sizeof(wr));
	wr.sg_list = sge;
	wr.num_sge = 3; /* max_recv_sge is 2 */
	to_init(qp);
	to_init(sqp);
	bad = NULL;
	CHECK_EQ(ibv_post_recv(qp, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	wr.num_sge = 1;
	for (int i = 0; i < 8; i++) {
		many[i] = wr;
		many[i].next = i < 7 ? &many[i + 1] : NULL;
	}
	bad = NULL;
	CHECK_EQ(ibv_post_recv(qp, many, &bad), ENOMEM);
	CHECK(bad == &many[4]); /* max_recv_wr is 4 */
	bad = NULL;
	CHECK_EQ(ibv_post_recv(sqp, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	/* ibv_post_srq_recv(3): the same rules against the SRQ's max_wr and max_sge. */
	bad = NULL;
	CHECK_EQ(ibv_post_srq_recv(srq, many, &bad), ENOMEM);
	CHECK(bad == &many[2]);
	CHECK_EQ(ibv_modify_qp(qp, &a, IBV_QP_STATE), 0);
	CHECK_EQ(ibv_destroy_qp(qp), 0);
	CHECK_EQ(ibv_destroy_qp(sqp), 0);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
	CHECK_EQ(ibv_destroy_cq(cq), 0);
	CHECK_EQ(ibv_dereg_mr(mr), 0);
}

/* ---- SRQ ---- */

/* ibv_create_srq(3): max_wr within max_srq_wr, max_sge within max_srq_sge (rxe
 * rxe_srq_chk_init: EINVAL, also for max_wr 0); "srq_limit ... (irrelevant for
 * ibv_create_srq)"; the granted values are written back, at least those asked. */
static void create_srq_beyond_the_device_caps_is_einval(void)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq_attr sa;
	struct ibv_srq *srq;

	si.attr.max_wr = dev_attr.max_srq_wr + 1;
	CHECK_NULL_ERRNO(ibv_create_srq(pd, &si), EINVAL);
	si.attr.max_wr = 0;
	CHECK_NULL_ERRNO(ibv_create_srq(pd, &si), EINVAL);
	si.attr.max_wr = 4;
	si.attr.max_sge = dev_attr.max_srq_sge + 1;
	CHECK_NULL_ERRNO(ibv_create_srq(pd, &si), EINVAL);

	/* The limit is not looked at, not even out of range; max_sge 0 gets one SGE. */
	si.attr.max_sge = 0;
	si.attr.srq_limit = 100;
	srq = ibv_create_srq(pd, &si);
	CHECK(srq);
	CHECK(si.attr.max_wr >= 4 && si.attr.max_sge >= 1);
	CHECK_EQ(ibv_query_srq(srq, &sa), 0);
	CHECK_EQ(sa.srq_limit, 0);
	CHECK(sa.max_wr >= 4 && sa.max_sge >= 1);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
}

/* ibv_modify_srq(3): a limit above max_wr (rxe_srq_chk_attr: EINVAL); resizing
 * (IBV_SRQ_MAX_WR) without IBV_DEVICE_SRQ_RESIZE: EINVAL. */
static void modify_srq_limit_beyond_max_wr_is_einval(void)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &si);
	struct ibv_srq_attr sa = { 0 };

	CHECK(srq);
	sa.srq_limit = si.attr.max_wr + 1;
	CHECK_EQ(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL);
	if (!(dev_attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE)) {
		sa.max_wr = 16;
		CHECK_EQ(ibv_modify_srq(srq, &sa, IBV_SRQ_MAX_WR), EINVAL);
	}
	sa.srq_limit = 2;
	CHECK_EQ(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	CHECK_EQ(ibv_query_srq(srq, &sa), 0);
	CHECK_EQ(sa.srq_limit, 2);
	CHECK_EQ(ibv_destroy_srq(srq), 0);
}

/* ---- AH ---- */

/* ibv_create_ah(3): on RoCE (IBV_QPF_GRH_REQUIRED) the AH must carry a GRH; the port
 * must exist (uverbs create_ah: EINVAL); the source GID index must be in the table. */
static void create_ah_without_grh_or_on_a_bad_port_is_einval(void)
{
	struct ibv_ah_attr av = self_av();
	struct ibv_ah *ah;

	av.port_num = 2;
	CHECK_NULL_ERRNO(ibv_create_ah(pd, &av), EINVAL);
	av.port_num = 0;
	CHECK_NULL_ERRNO(ibv_create_ah(pd, &av), EINVAL);
	av.port_num = 1;
	av.is_global = 0;
	CHECK_NULL_ERRNO(ibv_create_ah(pd, &av), EINVAL);
	av.is_global = 1;
	av.grh.sgid_index = 200;
	CHECK_NULL_ERRNO(ibv_create_ah(pd, &av), EINVAL);
	av.grh.sgid_index = 1;
	ah = ibv_create_ah(pd, &av);
	CHECK(ah);
	CHECK_EQ(ibv_destroy_ah(ah), 0);
}

/* ibv_init_ah_from_wc(3): -1 on error; a UD completion without a GRH (IBV_WC_GRH
 * clear) leaves an AH without one, which RoCE cannot use. */
static void create_ah_from_wc_without_grh_fails(void)
{
	struct ibv_wc wc = { .wc_flags = 0 };
	struct ibv_grh grh;

	memset(&grh, 0, sizeof(grh));
	CHECK_NULL_ERRNO(ibv_create_ah_from_wc(pd, &wc, &grh, 1), EINVAL);
}

/* ---- strings and rates: no error case, but a value for every valid input ---- */

/* ibv_rate_to_mult(3): -1 ... "returns the multiplier"; IBV_RATE_MAX is no rate. */
static void rate_conversions_refuse_what_is_no_rate(void)
{
	CHECK_EQ(ibv_rate_to_mult(IBV_RATE_MAX), -1);
	CHECK_EQ(ibv_rate_to_mbps(IBV_RATE_MAX), -1);
	CHECK_EQ(mult_to_ibv_rate(3), IBV_RATE_MAX);
	CHECK_EQ(mbps_to_ibv_rate(1), IBV_RATE_MAX);
	CHECK_EQ(ibv_rate_to_mult(IBV_RATE_10_GBPS), 4);
	CHECK(strcmp(ibv_wc_status_str((enum ibv_wc_status)1000), "unknown") == 0);
	CHECK(strcmp(ibv_event_type_str((enum ibv_event_type)1000), "unknown") == 0);
	CHECK(strcmp(ibv_port_state_str((enum ibv_port_state)1000), "unknown") == 0);
	CHECK(strcmp(ibv_node_type_str((enum ibv_node_type)1000), "unknown") == 0);
}

int main(void)
{
	ctx = verbs_open_first("127.0.5.1");
	CHECK_EQ(ibv_query_device(ctx, &dev_attr), 0);
	pd = ibv_alloc_pd(ctx);
	CHECK(pd);

	RUN(query_port_of_a_port_that_does_not_exist_is_einval);
	RUN(query_gid_outside_the_table_fails);
	RUN(query_gid_ex_of_an_empty_slot_is_enodata);
	RUN(query_gid_ex_names_the_interface_holding_the_address);
	RUN(read_sysfs_file_answers_board_id_without_a_newline);
	RUN(get_sysfs_path_is_sys);
	RUN(query_pkey_outside_the_table_fails);
	RUN(query_device_ex_with_unknown_input_is_einval);
	RUN(get_async_event_without_an_event_is_eagain_when_nonblocking);
	RUN(reg_mr_with_remote_write_but_no_local_write_is_einval);
	RUN(rereg_mr_with_bad_input_fails_as_documented);
	RUN(reg_mr_of_memory_the_kernel_could_not_pin_fails);
	RUN(rereg_mr_onto_memory_the_kernel_could_not_pin_fails);
	RUN(dealloc_pd_with_a_live_mr_qp_srq_or_ah_is_ebusy);
	RUN(create_cq_beyond_max_cqe_or_comp_vector_is_einval);
	RUN(resize_cq_to_nothing_or_beyond_max_cqe_is_einval);
	RUN(create_cq_ex_with_unsupported_fields_fails);
	RUN(destroy_cq_with_an_attached_qp_is_ebusy);
	RUN(destroy_comp_channel_with_a_cq_is_ebusy);
	RUN(get_cq_event_without_an_event_is_eagain_when_nonblocking);
	RUN(create_qp_beyond_the_device_caps_is_einval);
	RUN(modify_qp_invalid_transition_or_attribute_is_einval);
	RUN(post_send_with_bad_work_requests_fails_with_bad_wr);
	RUN(post_recv_with_bad_work_requests_fails_with_bad_wr);
	RUN(create_srq_beyond_the_device_caps_is_einval);
	RUN(modify_srq_limit_beyond_max_wr_is_einval);
	RUN(create_ah_without_grh_or_on_a_bad_port_is_einval);
	RUN(create_ah_from_wc_without_grh_fails);
	RUN(rate_conversions_refuse_what_is_no_rate);

	CHECK_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_EQ(ibv_close_device(ctx), 0);
	return 0;
}
