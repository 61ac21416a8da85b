/* SPDX-License-Identifier: MIT */
/*
 * engine_cost.c - urnic's own work per message, without sockets, threads or the
 * machine's noise: two engines joined by the engine tests' in-process fabric
 * (tests/engine/fabric.h), host 0 sending N messages of SIZE bytes to host 1 over one
 * RC QP pair with path MTU 4096 (perftest's), WINDOW messages posted at a time, every
 * one signaled and polled. -i IDLE connects IDLE more RC QP pairs that carry nothing: what
 * an idle QP costs the passes of a busy one (an MPI job keeps a QP per peer).
 *
 *   engine_cost [-o write|send|read] [-s SIZE] [-n N] [-w WINDOW] [-i IDLE]
 *     defaults: -o write -s 65536 -n 2000 -w 8 -i 0
 *
 * Prints the wall time per message natively (engine and fabric together: the fabric
 * copies every packet, as the kernel would). bench/callgrind.sh runs it under
 * valgrind's callgrind and splits the instructions per message by function: the
 * engine's share is a figure the host's load cannot move.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric.h"

static void usage(void)
{
	fprintf(stderr, "usage: engine_cost [-o write|send|read] [-s SIZE] [-n N] [-w WINDOW] "
			"[-i IDLE]\n");
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
	uint32_t op = URNIC_WR_RDMA_WRITE, size = 65536, n = 2000, window = 8, nidle = 0;
	const char *op_name = "write";
	struct fab_conn c = fab_conn_default();
	struct urnic_cqe cqe[64];
	struct fab_buf la, ra;
	struct fab_pair p;
	struct fab_qp **idle = NULL;
	uint64_t t0, t1;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		char *end;
		unsigned long x;

		if (!v || argv[i][0] != '-' || strlen(argv[i]) != 2)
			usage();
		i++;
		if (argv[i - 1][1] == 'o') {
			op_name = v;
			if (!strcmp(v, "write"))
				op = URNIC_WR_RDMA_WRITE;
			else if (!strcmp(v, "send"))
				op = URNIC_WR_SEND;
			else if (!strcmp(v, "read"))
				op = URNIC_WR_RDMA_READ;
			else
				usage();
			continue;
		}
		x = strtoul(v, &end, 0);
		if (*end || (x == 0 && argv[i - 1][1] != 'i'))
			usage();
		switch (argv[i - 1][1]) {
		case 's':
			if (x > (1ul << 24))
				usage();
			size = (uint32_t)x;
			break;
		case 'n':
			n = (uint32_t)x;
			break;
		case 'w':
			if (x > 64)
				usage();
			window = (uint32_t)x;
			break;
		case 'i':
			if (x > 1000) /* two QPs each, within the engine's table (URNIC_MAX_QP) */
				usage();
			nidle = (uint32_t)x;
			break;
		default:
			usage();
		}
	}

	/* The fabric allocates every packet it carries: keep freed memory mapped, or page
	 * faults (12 per 64 KiB message) would be most of the time measured. */
	mallopt(M_TRIM_THRESHOLD, 1 << 30);
	mallopt(M_MMAP_THRESHOLD, 1 << 30);
	c.mtu = 4096;
	fab_pair_open(&p, &c, 1);
	/* The tests' audit of idle QPs visits every QP after every pass: not measured. */
	fab_engine(p.f, 0)->cfg.audit_idle = false;
	fab_engine(p.f, 1)->cfg.audit_idle = false;
	fab_buf_new(p.f, &la, 0, &p.pd[0], size, FAB_ALL_ACCESS);
	fab_buf_new(p.f, &ra, 1, &p.pd[1], size, FAB_ALL_ACCESS);
	fab_fill(la.p, size, 1);
	if (nidle) {
		idle = calloc(2 * (size_t)nidle, sizeof(*idle));
		CHECK(idle != NULL);
	}
	for (uint32_t i = 0; i < nidle; i++) {
		idle[2 * i] = fab_qp_new(p.f, 0, &p.pd[0], 16, 16, true);
		idle[2 * i + 1] = fab_qp_new(p.f, 1, &p.pd[1], 16, 16, true);
		fab_connect(idle[2 * i], idle[2 * i + 1], &c);
	}

	t0 = now_ns();
	for (uint32_t done = 0; done < n;) {
		uint32_t k = n - done < window ? n - done : window;

		for (uint32_t i = 0; i < k; i++) {
			struct fab_send_wr wr = { .wr_id = done + i, .opcode = op, .num_sge = 1 };
			struct urnic_sge rsge = fab_sge(ra.mr, 0, size);

			wr.sge[0] = fab_sge(la.mr, 0, size);
			wr.remote_addr = ra.mr->iova;
			wr.rkey = ra.mr->key;
			if (op == URNIC_WR_SEND)
				CHECK_EQ(fab_post_recv(p.b, done + i, &rsge, 1), 0);
			CHECK_EQ(fab_post_send(p.a, &wr), 0);
		}
		fab_wait_cqes(p.f, &p.a->scq, cqe, (int)k);
		for (uint32_t i = 0; i < k; i++)
			CHECK_EQ(cqe[i].status, URNIC_WC_SUCCESS);
		if (op == URNIC_WR_SEND)
			fab_wait_cqes(p.f, &p.b->rcq, cqe, (int)k);
		fab_trace_clear(p.f); /* the fabric's record of packets would only grow */
		done += k;
	}
	t1 = now_ns();
	CHECK(op == URNIC_WR_RDMA_READ || memcmp(la.p, ra.p, size) == 0);

	printf("engine_cost: %u %s messages of %u bytes, window %u, %u idle QP pairs: %.0f ns "
	       "per message (engine and in-process fabric), %llu packets host 0 -> 1, %llu back\n",
	       n, op_name, size, window, nidle, (double)(t1 - t0) / n,
	       (unsigned long long)fab_ctr(p.f, 0, URNIC_CTR_tx_packets),
	       (unsigned long long)fab_ctr(p.f, 1, URNIC_CTR_tx_packets));
	for (uint32_t i = 0; i < 2 * nidle; i++)
		fab_qp_free(idle[i]);
	free(idle);
	fab_buf_free(p.f, &la);
	fab_buf_free(p.f, &ra);
	fab_pair_close(&p);
	return 0;
}
