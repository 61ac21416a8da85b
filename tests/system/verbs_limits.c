/* SPDX-License-Identifier: MIT */
/*
 * verbs_limits.c - the configurable device limits (src/dev/limits.def): reported by
 * ibv_query_device and ibv_query_device_ex, enforced by the verbs, with two urnic
 * devices in one process (verbs_prog.sh):
 *
 *   urnic0 QP a (requester) --- RoCEv2 over lo ---> urnic1 QP b (responder)
 *
 * Before the first verbs call it writes a config file (max_qp 6, max_cqe 1000,
 * max_srq_wr 32) and sets URNIC_LIMITS (max_qp=4 and others): the environment wins over
 * the file. Then: a CQ, QP or SRQ beyond max_cq / max_qp / max_srq is ENOMEM and a
 * destroyed one frees its place; sizes beyond max_cqe / max_qp_wr / max_srq_wr are
 * EINVAL; max_dest_rd_atomic beyond max_qp_rd_atom and max_rd_atomic beyond
 * max_qp_init_rd_atom are EINVAL (ibv_modify_qp(3)). Over the wire, a requester allowed
 * 2 outstanding READs against a responder granting 2 gets all 16 READs right; one
 * allowed 2 against a responder granting 1 is refused with NAK Invalid Request as soon
 * as a READ finds the one resource busy (IBTA 9.7.5.1.3; the requester sees
 * IBV_WC_REM_INV_REQ_ERR), and the data that did arrive is right. Prints "ok NAME" per step; exits
 * 1 on the first failure.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_side.h"

#define FAILS_WITH(call, err)                                                                      \
	do {                                                                                       \
		errno = 0;                                                                         \
		CHECK((call) == NULL && errno == (err));                                           \
	} while (0)

enum { READ_LEN = 65536, NREADS = 16 };

/* Each device's end: a CQ for the QPs below, NREADS READs' worth of memory. */
static void side_open_reads(struct side *s, struct ibv_device *dev)
{
	side_open(s, dev, 256, (size_t)READ_LEN * NREADS,
		  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
}

static struct ibv_qp *rc_qp(struct side *s, uint32_t depth)
{
	struct ibv_qp_init_attr ia = { .send_cq = s->cq,
				       .recv_cq = s->cq,
				       .cap = { .max_send_wr = depth,
						.max_recv_wr = 1,
						.max_send_sge = 1,
						.max_recv_sge = 1 },
				       .qp_type = IBV_QPT_RC };

	return ibv_create_qp(s->pd, &ia);
}

static void to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_READ };

	CHECK(ibv_modify_qp(qp, &a,
			    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) ==
	      0);
}

static int to_rtr(struct ibv_qp *qp, const union ibv_gid *gid, uint32_t qpn, uint8_t dest_rd)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_4096,
		.dest_qp_num = qpn,
		.max_dest_rd_atomic = dest_rd,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1,
			     .port_num = 1,
			     .grh = { .sgid_index = 1, .hop_limit = 64 } },
	};

	a.ah_attr.grh.dgid = *gid;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				     IBV_QP_MIN_RNR_TIMER);
}

static int rtr_to_rts(struct ibv_qp *qp, uint8_t init_rd)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS,
				 .timeout = 14,
				 .retry_cnt = 7,
				 .rnr_retry = 7,
				 .max_rd_atomic = init_rd };

	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* RTR then RTS towards (gid, qpn). Returns 0 or the first failure. */
static int to_rts(struct ibv_qp *qp, const union ibv_gid *gid, uint32_t qpn, uint8_t dest_rd,
		  uint8_t init_rd)
{
	int ret = to_rtr(qp, gid, qpn, dest_rd);

	return ret ? ret : rtr_to_rts(qp, init_rd);
}

/* 16 READs of 64 KiB from b's buffer into a's, all posted at once. Returns the number
 * that completed successfully (each checked byte for byte); the others must have
 * completed with an error, not with wrong data. */
static int reads(struct side *sa, struct ibv_qp *a, struct side *sb,
		 enum ibv_wc_status *first_error)
{
	struct ibv_wc wc[NREADS];
	int done = 0, ok = 0;
	time_t t0 = time(NULL);

	for (int i = 0; i < NREADS * READ_LEN; i++)
		sb->buf[i] = (uint8_t)(i * 7 + i / 4096);
	memset(sa->buf, 0, (size_t)NREADS * READ_LEN);
	for (int i = 0; i < NREADS; i++) {
		struct ibv_sge sge = { (uintptr_t)sa->buf + (size_t)i * READ_LEN, READ_LEN,
				       sa->mr->lkey };
		struct ibv_send_wr wr = { .wr_id = (uint64_t)i,
					  .sg_list = &sge,
					  .num_sge = 1,
					  .opcode = IBV_WR_RDMA_READ,
					  .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		wr.wr.rdma.remote_addr = (uintptr_t)sb->buf + (size_t)i * READ_LEN;
		wr.wr.rdma.rkey = sb->mr->rkey;
		CHECK(ibv_post_send(a, &wr, &bad) == 0);
	}
	while (done < NREADS) {
		int n = ibv_poll_cq(sa->cq, NREADS, wc);

		CHECK(n >= 0);
		for (int k = 0; k < n; k++, done++) {
			size_t off = (size_t)wc[k].wr_id * READ_LEN;

			if (wc[k].status != IBV_WC_SUCCESS) {
				if (*first_error == IBV_WC_SUCCESS)
					*first_error = wc[k].status;
				printf("  READ %d: %s\n", (int)wc[k].wr_id,
				       ibv_wc_status_str(wc[k].status));
				continue;
			}
			CHECK(memcmp(sa->buf + off, sb->buf + off, READ_LEN) == 0);
			ok++;
		}
		CHECK(time(NULL) - t0 < 30);
	}
	return ok;
}

int main(void)
{
	char path[] = "/tmp/urnic-limits.XXXXXX";
	struct ibv_device **list;
	struct ibv_device_attr da;
	struct ibv_device_attr_ex dx;
	struct ibv_cq *cqs[4];
	struct ibv_qp *qps[5];
	struct ibv_srq *srqs[3];
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 33, .max_sge = 1 } };
	struct side s0, s1;
	struct ibv_qp *a, *b;
	int fd, n, ok;
	enum ibv_wc_status first_error = IBV_WC_SUCCESS;
	FILE *f;

	fd = mkstemp(path);
	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	CHECK(f);
	fprintf(f, "# urnic limits test\nmax_qp 6\nmax_cqe 1000\nmax_srq_wr 32\n");
	fclose(f);
	setenv("URNIC_CONFIG", path, 1);
	setenv("URNIC_LIMITS",
	       "max_qp=4,max_cq=3,max_qp_wr=64,max_srq=2,max_qp_rd_atom=4,"
	       "max_qp_init_rd_atom=2",
	       1);
	list = ibv_get_device_list(&n);
	unlink(path);
	CHECK(list && n >= 2);

	side_open_reads(&s0, list[0]);
	CHECK(ibv_query_device(s0.ctx, &da) == 0);
	CHECK(da.max_qp == 4);				  /* URNIC_LIMITS wins over the file's 6 */
	CHECK(da.max_cqe == 1000 && da.max_srq_wr == 32); /* from the file */
	CHECK(da.max_cq == 3 && da.max_qp_wr == 64 && da.max_srq == 2);
	CHECK(da.max_qp_rd_atom == 4 && da.max_qp_init_rd_atom == 2 && da.max_res_rd_atom == 16);
	CHECK(ibv_query_device_ex(s0.ctx, NULL, &dx) == 0);
	CHECK(dx.orig_attr.max_qp == 4 && dx.orig_attr.max_qp_rd_atom == 4);
	printf("ok limits reported (env over config file)\n");

	/* CQs: s0 holds one already. */
	FAILS_WITH(ibv_create_cq(s0.ctx, 1001, NULL, NULL, 0), EINVAL);
	cqs[0] = ibv_create_cq(s0.ctx, 1000, NULL, NULL, 0);
	cqs[1] = ibv_create_cq(s0.ctx, 1, NULL, NULL, 0);
	CHECK(cqs[0] && cqs[1]);
	FAILS_WITH(ibv_create_cq(s0.ctx, 1, NULL, NULL, 0), ENOMEM);
	CHECK(ibv_destroy_cq(cqs[1]) == 0);
	cqs[1] = ibv_create_cq(s0.ctx, 1, NULL, NULL, 0);
	CHECK(cqs[1]);
	CHECK(ibv_destroy_cq(cqs[0]) == 0 && ibv_destroy_cq(cqs[1]) == 0);
	printf("ok max_cq (ENOMEM) and max_cqe (EINVAL) enforced\n");

	/* QPs. */
	{
		struct ibv_qp_init_attr ia = { .send_cq = s0.cq,
					       .recv_cq = s0.cq,
					       .cap = { .max_send_wr = 65,
							.max_recv_wr = 1,
							.max_send_sge = 1,
							.max_recv_sge = 1 },
					       .qp_type = IBV_QPT_RC };

		FAILS_WITH(ibv_create_qp(s0.pd, &ia), EINVAL);
		ia.cap.max_send_wr = 64;
		ia.cap.max_recv_wr = 65;
		FAILS_WITH(ibv_create_qp(s0.pd, &ia), EINVAL);
	}
	for (int i = 0; i < 4; i++) {
		qps[i] = rc_qp(&s0, 64);
		CHECK(qps[i]);
	}
	FAILS_WITH(rc_qp(&s0, 1), ENOMEM);
	CHECK(ibv_destroy_qp(qps[3]) == 0);
	qps[3] = rc_qp(&s0, 1);
	CHECK(qps[3]);
	printf("ok max_qp (ENOMEM) and max_qp_wr (EINVAL) enforced\n");

	/* Responder and initiator depth. */
	to_init(qps[0]);
	CHECK(to_rtr(qps[0], &s0.gid, qps[1]->qp_num, 5) == EINVAL);
	CHECK(to_rtr(qps[0], &s0.gid, qps[1]->qp_num, 4) == 0);
	CHECK(rtr_to_rts(qps[0], 3) == EINVAL);
	CHECK(rtr_to_rts(qps[0], 2) == 0);
	printf("ok max_qp_rd_atom and max_qp_init_rd_atom (EINVAL) enforced\n");
	for (int i = 0; i < 4; i++)
		CHECK(ibv_destroy_qp(qps[i]) == 0);

	/* SRQs. */
	FAILS_WITH(ibv_create_srq(s0.pd, &si), EINVAL);
	si.attr.max_wr = 32;
	srqs[0] = ibv_create_srq(s0.pd, &si);
	srqs[1] = ibv_create_srq(s0.pd, &si);
	CHECK(srqs[0] && srqs[1]);
	FAILS_WITH(ibv_create_srq(s0.pd, &si), ENOMEM);
	CHECK(ibv_destroy_srq(srqs[0]) == 0);
	srqs[0] = ibv_create_srq(s0.pd, &si);
	CHECK(srqs[0]);
	CHECK(ibv_destroy_srq(srqs[0]) == 0 && ibv_destroy_srq(srqs[1]) == 0);
	printf("ok max_srq (ENOMEM) and max_srq_wr (EINVAL) enforced\n");

	/* READs over the wire, within and beyond the responder's resources. */
	side_open_reads(&s1, list[1]);
	a = rc_qp(&s0, NREADS);
	b = rc_qp(&s1, 1);
	CHECK(a && b);
	to_init(a);
	to_init(b);
	CHECK(to_rts(a, &s1.gid, b->qp_num, 1, 2) == 0);
	CHECK(to_rts(b, &s0.gid, a->qp_num, 2, 1) == 0);
	CHECK(reads(&s0, a, &s1, &first_error) == NREADS);
	printf("ok %d READs, requester depth 2 = responder resources 2\n", NREADS);
	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0);

	a = rc_qp(&s0, NREADS);
	b = rc_qp(&s1, 1);
	CHECK(a && b);
	to_init(a);
	to_init(b);
	CHECK(to_rts(a, &s1.gid, b->qp_num, 1, 2) == 0);
	CHECK(to_rts(b, &s0.gid, a->qp_num, 1, 1) == 0);
	first_error = IBV_WC_SUCCESS;
	ok = reads(&s0, a, &s1, &first_error);
	/* IBTA 9.7.5.1.3: a READ that finds the responder's one resource still busy is
	 * refused with NAK Invalid Request (counted as refused_rd_atomic) and the
	 * requester's READ fails so; if each READ's response was out before the next
	 * arrived (timing), all complete. Nothing else: no retry storm, no other error. */
	CHECK(ok == NREADS || first_error == IBV_WC_REM_INV_REQ_ERR);
	printf("ok requester depth 2 > responder resources 1: %d of %d READs completed, "
	       "all their data right, the rest refused (%s)\n",
	       ok, NREADS, ibv_wc_status_str(first_error));
	CHECK(ibv_destroy_qp(a) == 0 && ibv_destroy_qp(b) == 0);

	side_close(&s0);
	side_close(&s1);
	ibv_free_device_list(list);
	printf("ok\n");
	return 0;
}
