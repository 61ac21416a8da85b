/* SPDX-License-Identifier: MIT */
/*
 * test_query.c - the device and GID queries as rdma-core's DeviceTest reads them:
 * ibv_query_device_ex(3) fills what libibverbs fills (phys_port_cnt_ex among them),
 * ibv_query_gid_table(3) lists the valid GIDs as ibv_query_gid_ex(3) reports each, and
 * ibv_query_gid, ibv_query_gid_type agree with both (rdma-core builds them on
 * ibv_query_gid_ex: an empty slot is the zero GID of type IB/RoCE v1).
 * No traffic: one device (URNIC_ADDR, 127.0.5.3).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "check.h"
#include "verbs_open.h"

/* rdma-core's enum ibv_gid_type_sysfs (infiniband/driver.h, not installed). */
enum { GID_TYPE_SYSFS_IB_ROCE_V1 = 0, GID_TYPE_SYSFS_ROCE_V2 = 1 };
int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num, unsigned int index,
		       int *type);

static struct ibv_context *ctx;

/* libibverbs' ibv_cmd_query_device_any: phys_port_cnt_ex is the port count (sysfs's,
 * or phys_port_cnt), comp_mask is left 0. */
static void query_device_ex_reports_the_port_count(void)
{
	struct ibv_device_attr_ex ax;

	memset(&ax, 0xa5, sizeof(ax));
	CHECK_EQ(ibv_query_device_ex(ctx, NULL, &ax), 0);
	CHECK_EQ(ax.orig_attr.phys_port_cnt, 1);
	CHECK_EQ(ax.phys_port_cnt_ex, 1);
	CHECK_EQ(ax.comp_mask, 0);
	CHECK_EQ(ax.max_wq_type_rq, 0);
	CHECK_EQ(ax.raw_packet_caps, 0);
}

/* Every valid entry once, in index order, each as ibv_query_gid_ex and ibv_query_gid
 * give it; a table that cannot hold them all, no room, or flags: -EINVAL (the kernel's
 * UVERBS_METHOD_QUERY_GID_TABLE). */
static void query_gid_table_lists_the_valid_entries(void)
{
	struct ibv_gid_entry t[16], one;
	struct ibv_port_attr pa;
	ssize_t n;
	int valid = 0;

	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	for (uint32_t i = 0; i < (uint32_t)pa.gid_tbl_len; i++)
		valid += ibv_query_gid_ex(ctx, 1, i, &one, 0) == 0;
	CHECK_EQ(valid, 2);
	memset(t, 0xa5, sizeof(t));
	n = ibv_query_gid_table(ctx, t, 16, 0);
	CHECK_EQ(n, valid);
	for (ssize_t k = 0; k < n; k++) {
		union ibv_gid gid;

		CHECK_EQ(t[k].gid_index, (uint32_t)k);
		CHECK_EQ(t[k].port_num, 1);
		CHECK_EQ(t[k].gid_type, IBV_GID_TYPE_ROCE_V2);
		CHECK_EQ(ibv_query_gid_ex(ctx, 1, t[k].gid_index, &one, 0), 0);
		CHECK(memcmp(&one, &t[k], sizeof(one)) == 0);
		CHECK_EQ(ibv_query_gid(ctx, 1, (int)t[k].gid_index, &gid), 0);
		CHECK(memcmp(&gid, &t[k].gid, sizeof(gid)) == 0);
	}
	/* GID 1 is the address as an IPv4-mapped IPv6 address (127.0.5.3). */
	CHECK_EQ(t[1].gid.raw[10], 0xff);
	CHECK_EQ(t[1].gid.raw[12], 127);
	CHECK_EQ(ibv_query_gid_table(ctx, t, (size_t)valid, 0), valid);
	CHECK_EQ(ibv_query_gid_table(ctx, t, (size_t)valid - 1, 0), -EINVAL);
	CHECK_EQ(ibv_query_gid_table(ctx, t, 0, 0), -EINVAL);
	CHECK_EQ(ibv_query_gid_table(ctx, t, 16, 1), -EINVAL);
}

/* The entry size is the caller's sizeof: a larger struct gets its tail zeroed. */
static void query_gid_table_honours_the_callers_entry_size(void)
{
	struct big {
		struct ibv_gid_entry e;
		uint64_t more;
	} t[4];
	struct ibv_gid_entry one;

	memset(t, 0xa5, sizeof(t));
	CHECK_EQ(_ibv_query_gid_table(ctx, &t[0].e, 4, 0, sizeof(t[0])), 2);
	for (int k = 0; k < 2; k++) {
		CHECK_EQ(ibv_query_gid_ex(ctx, 1, (uint32_t)k, &one, 0), 0);
		CHECK(memcmp(&one, &t[k].e, sizeof(one)) == 0);
		CHECK_EQ(t[k].more, 0);
	}
	CHECK_EQ(t[2].more, 0xa5a5a5a5a5a5a5a5ull);
	CHECK_EQ(_ibv_query_gid_table(ctx, &t[0].e, 4, 0, 0), -EINVAL);
}

/* rdma-core's ibv_query_gid_type: the type of the entry ibv_query_gid_ex reports, IB/RoCE
 * v1 for an empty slot; past the table -1. */
static void query_gid_type_agrees_with_query_gid_ex(void)
{
	struct ibv_port_attr pa;
	int type;

	CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ(ibv_query_gid_type(ctx, 1, (unsigned int)i, &type), 0);
		CHECK_EQ(type, GID_TYPE_SYSFS_ROCE_V2);
	}
	type = -1;
	CHECK_EQ(ibv_query_gid_type(ctx, 1, (unsigned int)pa.gid_tbl_len - 1, &type), 0);
	CHECK_EQ(type, GID_TYPE_SYSFS_IB_ROCE_V1);
	CHECK_EQ(ibv_query_gid_type(ctx, 1, (unsigned int)pa.gid_tbl_len, &type), -1);
	CHECK_EQ(ibv_query_gid_type(ctx, 2, 0, &type), -1);
}

int main(void)
{
	ctx = verbs_open_first("127.0.5.3");

	RUN(query_device_ex_reports_the_port_count);
	RUN(query_gid_table_lists_the_valid_entries);
	RUN(query_gid_table_honours_the_callers_entry_size);
	RUN(query_gid_type_agrees_with_query_gid_ex);

	CHECK_EQ(ibv_close_device(ctx), 0);
	return 0;
}
