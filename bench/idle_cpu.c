/* SPDX-License-Identifier: MIT */
/*
 * idle_cpu.c - what an open, connected but idle device costs: opens the first verbs
 * device, connects two RC queue pairs to each other through it (RTS, over the device's
 * own address), checks one RDMA WRITE arrives, then does nothing for a while and
 * reports the CPU time the whole process (application and engine threads) used, as a
 * percentage of one core:
 *
 *   idle_sleep_cpu_pct 0.02    the application sleeps (nanosleep)
 *   idle_armed_cpu_pct 0.01    the application waits on an armed completion channel
 *
 * usage: idle_cpu [-t seconds] [-x gid_index]
 * Run it over urnic: LD_LIBRARY_PATH=build/lib URNIC_ADDR=127.0.3.20 idle_cpu
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BUF 4096

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

static int die(const char *what)
{
	fprintf(stderr, "idle_cpu: %s failed\n", what);
	return 1;
}

static int connect_qp(struct ibv_qp *qp, uint32_t dqpn, const union ibv_gid *gid, int gidx)
{
	struct ibv_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = dqpn;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = (uint8_t)gidx;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				  IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

int main(int argc, char **argv)
{
	double secs = 5.0, t0, c0, t1, c1;
	int gidx = 1, opt, n;
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_comp_channel *ch;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *qa, *qb;
	union ibv_gid gid;
	struct ibv_wc wc;
	char *buf;

	while ((opt = getopt(argc, argv, "t:x:")) != -1) {
		switch (opt) {
		case 't':
			secs = atof(optarg);
			break;
		case 'x':
			gidx = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-t seconds] [-x gid_index]\n", argv[0]);
			return 2;
		}
	}
	list = ibv_get_device_list(&n);
	if (!list || n < 1)
		return die("ibv_get_device_list");
	ctx = ibv_open_device(list[0]);
	if (!ctx)
		return die("ibv_open_device");
	if (ibv_query_gid(ctx, 1, gidx, &gid))
		return die("ibv_query_gid");
	ch = ibv_create_comp_channel(ctx);
	pd = ibv_alloc_pd(ctx);
	cq = ch && pd ? ibv_create_cq(ctx, 16, NULL, ch, 0) : NULL;
	buf = aligned_alloc(4096, 2 * BUF);
	if (!cq || !buf)
		return die("ibv_create_cq");
	memset(buf, 0, 2 * BUF);
	mr = ibv_reg_mr(pd, buf, 2 * BUF,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr)
		return die("ibv_reg_mr");
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 },
	};
	qa = ibv_create_qp(pd, &ia);
	qb = ibv_create_qp(pd, &ia);
	if (!qa || !qb)
		return die("ibv_create_qp");
	if (connect_qp(qa, qb->qp_num, &gid, gidx) || connect_qp(qb, qa->qp_num, &gid, gidx))
		return die("ibv_modify_qp");

	/* One RDMA WRITE from a's half of the buffer into b's, to show the pair works. */
	memset(buf, 0x42, BUF);
	struct ibv_sge sge = { (uintptr_t)buf, BUF, mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { (uintptr_t)(buf + BUF), mr->rkey },
	}, *bad;
	if (ibv_post_send(qa, &wr, &bad))
		return die("ibv_post_send");
	t0 = now_s();
	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0 && now_s() - t0 < 5)
		;
	if (n != 1 || wc.status != IBV_WC_SUCCESS || memcmp(buf, buf + BUF, BUF))
		return die("the RDMA WRITE");

	/* Idle, application asleep. */
	usleep(200000); /* let every ACK and timer settle */
	t0 = now_s();
	c0 = cpu_s();
	usleep((useconds_t)(secs * 1e6));
	t1 = now_s();
	c1 = cpu_s();
	printf("idle_sleep_cpu_pct %.3f\n", 100.0 * (c1 - c0) / (t1 - t0));

	/* Idle, application blocked on an armed completion channel. */
	if (ibv_req_notify_cq(cq, 0))
		return die("ibv_req_notify_cq");
	t0 = now_s();
	c0 = cpu_s();
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	double left;
	while ((left = secs - (now_s() - t0)) > 0)
		poll(&pfd, 1, (int)(left * 1000) + 1);
	t1 = now_s();
	c1 = cpu_s();
	printf("idle_armed_cpu_pct %.3f\n", 100.0 * (c1 - c0) / (t1 - t0));

	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_destroy_comp_channel(ch);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	free(buf);
	return 0;
}
