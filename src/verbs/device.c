/* SPDX-License-Identifier: MIT */
/*
 * device.c - ibv_get_device_list, ibv_open_device and the device, port and GID queries.
 *
 * Devices are urnic's configured addresses (src/dev/device.c). Each has one Ethernet
 * port, ACTIVE while its address's interface is up (async.c), with RoCEv2 GIDs only,
 * as the kernel's GID cache holds them for rxe (which declares RoCE v2 alone,
 * RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP): index 1 the address itself (::ffff:a.b.c.d for
 * IPv4), and index 0, the default GID, the same (src/dev/config.c says why); a UET device
 * shows the same, less what it lacks (uet.c), an iWARP one as siw (iwarp.c). The context is a full
 * verbs_context with abi_compat = __VERBS_ABI_IS_EXTENDED and sz = sizeof, as
 * verbs_init_context() in rdma-core does, so the inline wrappers find query_port and
 * query_device_ex.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "verbs/odp.h"
#include "verbs/verbs.h"

#undef ibv_get_device_list
#undef ibv_query_port

static struct urnic_vdevice *vdevs[URNIC_MAX_DEVICES];
static int nvdevs;
static pthread_once_t vdev_once = PTHREAD_ONCE_INIT;

static void make_vdevs(void)
{
	struct urnic_dev **devs;
	int n = urnic_dev_list(&devs);

	for (int i = 0; i < n; i++) {
		struct urnic_vdevice *v = calloc(1, sizeof(*v));

		if (!v)
			break;
		v->dev = devs[i];
		/* iWARP: an RNIC on the iWARP transport, as the kernel reports siw. */
		v->ibdev.node_type = urnic_iw_dev(devs[i]) ? IBV_NODE_RNIC : IBV_NODE_CA;
		v->ibdev.transport_type =
			urnic_iw_dev(devs[i]) ? IBV_TRANSPORT_IWARP : IBV_TRANSPORT_IB;
		snprintf(v->ibdev.name, sizeof(v->ibdev.name), "%s", devs[i]->name);
		snprintf(v->ibdev.dev_name, sizeof(v->ibdev.dev_name), "uverbs%d", i);
		snprintf(v->ibdev.dev_path, sizeof(v->ibdev.dev_path),
			 "/sys/class/infiniband_verbs/uverbs%d", i);
		snprintf(v->ibdev.ibdev_path, sizeof(v->ibdev.ibdev_path),
			 "/sys/class/infiniband/%s", devs[i]->name);
		vdevs[nvdevs++] = v;
	}
}

URNIC_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
	struct ibv_device **list;

	pthread_once(&vdev_once, make_vdevs);
	/* Devices are static: pointers stay valid after ibv_free_device_list and across
	 * calls, as rdma-core keeps them. perftest never frees the list and keeps using
	 * its device; librdmacm compares the pointers of one call with the next. */
	list = calloc((size_t)nvdevs + 1, sizeof(*list));
	if (!list) {
		errno = ENOMEM;
		return NULL;
	}
	for (int i = 0; i < nvdevs; i++)
		list[i] = &vdevs[i]->ibdev;
	if (num_devices)
		*num_devices = nvdevs;
	return list;
}

URNIC_EXPORT void ibv_free_device_list(struct ibv_device **list)
{
	free(list);
}

URNIC_EXPORT const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

static struct urnic_dev *vdev_dev(struct ibv_device *device)
{
	return urnic_container_of(device, struct urnic_vdevice, ibdev)->dev;
}

URNIC_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
	return vdev_dev(device)->guid;
}

URNIC_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	for (int i = 0; i < nvdevs; i++)
		if (&vdevs[i]->ibdev == device)
			return i;
	return -1;
}

static void fill_device_attr(const struct urnic_dev *d, struct ibv_device_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "urnic %s", "0.1.0");
	a->node_guid = d->guid;
	a->sys_image_guid = d->guid;
	a->max_mr_size = UINT64_MAX;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = 0xffffff; /* as rxe: no IEEE OUI; perftest stays on ibv_post_send */
	a->vendor_part_id = 0;
	a->hw_ver = 0;
	a->max_qp = d->lim.max_qp; /* the configured limits: dev/limits.def */
	a->max_qp_wr = d->lim.max_qp_wr;
	/* Memory windows type 1 and 2B, SEND with invalidate and local invalidate, as
	 * rxe advertises them (rxe_param.h RXE_DEVICE_CAP_FLAGS). */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_SYS_IMAGE_GUID |
			      IBV_DEVICE_PORT_ACTIVE_EVENT | IBV_DEVICE_MEM_WINDOW |
			      IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_MEM_MGT_EXTENSIONS |
			      IBV_DEVICE_XRC; /* IBTA Annex A14: xrc.c */
	a->max_sge = URNIC_MAX_SGE;
	a->max_sge_rd = URNIC_MAX_SGE;
	a->max_cq = d->lim.max_cq;
	a->max_cqe = (int)d->lim.max_cqe;
	a->max_mr = (1 << 16) - 1;
	a->max_mw = (1 << 16) - 1; /* regions and windows share the key table */
	a->max_pd = 1 << 16;
	a->max_srq = d->lim.max_srq;
	a->max_srq_wr = d->lim.max_srq_wr;
	a->max_srq_sge = URNIC_MAX_SGE;
	a->max_ah = 1 << 16; /* a figure: an AH is a copy of an address, not a resource */
	a->max_mcast_grp = URNIC_MAX_MCAST_GRP; /* engine/mcast.h */
	a->max_mcast_qp_attach = URNIC_MAX_MCAST_QP_ATTACH;
	a->max_total_mcast_qp_attach = URNIC_MAX_MCAST_GRP * URNIC_MAX_MCAST_QP_ATTACH;
	a->max_qp_rd_atom = (int)d->lim.max_qp_rd_atom;
	a->max_qp_init_rd_atom = (int)d->lim.max_qp_init_rd_atom;
	a->max_res_rd_atom = a->max_qp_rd_atom * a->max_qp;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	if (urnic_iw_dev(d))
		urnic_iw_device_attr(d, a); /* iwarp.c: as siw's */
	if (urnic_uet_dev(d))
		urnic_uet_device_attr(a); /* uet.c: RoCEv2's, less what UET lacks */
}

URNIC_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *attr)
{
	fill_device_attr(urnic_ctx_dev(context), attr);
	return 0;
}

static int query_device_ex(struct ibv_context *context,
			   const struct ibv_query_device_ex_input *input,
			   struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	memset(&ex, 0, sizeof(ex));
	fill_device_attr(urnic_ctx_dev(context), &ex.orig_attr);
	if (urnic_iw_dev(urnic_ctx_dev(context)))
		goto copy; /* siw: none of the extended capabilities below */
	ex.max_dm_size = urnic_ctx_dev(context)->lim.max_dm_size; /* dev/dm.h */
	/* IBTA 1.5 ATOMIC_WRITE and FLUSH to global visibility (as rxe 6.2+; no persistent
	 * placement, see docs/differences-from-rxe.md); not over UET (uet.c). */
	ex.device_cap_flags_ex = ex.orig_attr.device_cap_flags;
	if (!urnic_uet_dev(urnic_ctx_dev(context)))
		ex.device_cap_flags_ex |=
			URNIC_IBV_DEVICE_ATOMIC_WRITE | URNIC_IBV_DEVICE_FLUSH_GLOBAL;
	urnic_odp_query_caps(&ex.odp_caps); /* odp.c */
	/* XRC carries RC's operations; its receives come only from XRC SRQs. */
	ex.xrc_odp_caps =
		ex.odp_caps.per_transport_caps.rc_odp_caps & ~(uint32_t)IBV_ODP_SUPPORT_RECV;
	/* A UET device has RC QPs only. */
	if (urnic_uet_dev(urnic_ctx_dev(context))) {
		ex.xrc_odp_caps = 0;
		ex.odp_caps.per_transport_caps.uc_odp_caps = 0;
		ex.odp_caps.per_transport_caps.ud_odp_caps = 0;
	}
	/* Completion timestamps count the device clock's nanoseconds: a 1 GHz "core". */
	ex.completion_timestamp_mask = UINT64_MAX;
	ex.hca_core_clock = URNIC_DEV_CLOCK_KHZ;
	/* Tag matching on RC (tm.c, queue/tm.h): one SGE per tag, as mlx5; it takes an SRQ,
	 * which a UET device does not have (uet.c). */
	if (urnic_uet_dev(urnic_ctx_dev(context)))
		goto copy;
	ex.tm_caps.max_rndv_hdr_size = URNIC_TM_MAX_RNDV_HDR;
	ex.tm_caps.max_num_tags = URNIC_TM_MAX_TAGS;
	ex.tm_caps.flags = IBV_TM_CAP_RC;
	ex.tm_caps.max_ops = URNIC_TM_MAX_OPS;
	ex.tm_caps.max_sge = URNIC_TM_MAX_SGE;
	/* What libibverbs' ibv_cmd_query_device_any fills without a sysfs port count. */
copy:
	ex.phys_port_cnt_ex = ex.orig_attr.phys_port_cnt;
	/* attr_size is the caller's sizeof (the inline ibv_query_device_ex passes it): a
	 * binary built against older headers has a smaller struct, one built against newer
	 * headers a larger one. Copy what it has room for, zero the rest. */
	if (attr_size > sizeof(ex)) {
		memset(attr, 0, attr_size);
		attr_size = sizeof(ex);
	}
	memcpy(attr, &ex, attr_size);
	return 0;
}

static void fill_port_attr(const struct urnic_dev *d, struct ibv_port_attr *p)
{
	uint8_t phys_state;

	memset(p, 0, sizeof(*p));
	p->state = urnic_port_state(d, &phys_state); /* async.c: the address's interface */
	p->max_mtu = IBV_MTU_4096;
	p->active_mtu = (enum ibv_mtu)d->active_mtu;
	p->gid_tbl_len = URNIC_GID_TABLE_LEN;
	p->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	p->max_msg_sz = d->lim.max_msg_sz; /* dev/limits.def */
	p->pkey_tbl_len = 1;
	p->max_vl_num = 1;
	p->active_width = 2;	    /* 4X */
	p->active_speed = 32;	    /* EDR: a figure for tools to print, not a promise */
	p->phys_state = phys_state; /* 5 LinkUp; down: 2 Polling, 3 Disabled (as rxe) */
	p->link_layer = IBV_LINK_LAYER_ETHERNET;
	if (urnic_iw_dev(d))
		urnic_iw_port_attr(d, p); /* iwarp.c: as siw's */
}

static int query_port(struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *attr,
		      size_t attr_size)
{
	struct ibv_port_attr p;

	if (port_num != 1)
		return EINVAL;
	fill_port_attr(urnic_ctx_dev(context), &p);
	if (attr_size > sizeof(p)) {
		memset(attr, 0, attr_size);
		attr_size = sizeof(p);
	}
	memcpy(attr, &p, attr_size);
	return 0;
}

/* struct _compat_ibv_port_attr: struct ibv_port_attr without port_cap_flags2. */
#define URNIC_COMPAT_PORT_ATTR_BYTES 48
_Static_assert(offsetof(struct ibv_port_attr, port_cap_flags2) <= URNIC_COMPAT_PORT_ATTR_BYTES,
	       "compat port attr");

/* The exported symbol serves binaries built against the 48-byte struct of old
 * headers (struct _compat_ibv_port_attr), exactly as rdma-core's __lib_query_port. */
URNIC_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
				struct _compat_ibv_port_attr *port_attr)
{
	return query_port(context, port_num, (struct ibv_port_attr *)(void *)port_attr,
			  URNIC_COMPAT_PORT_ATTR_BYTES);
}

URNIC_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index,
			       union ibv_gid *gid)
{
	const struct urnic_dev *d = urnic_ctx_dev(context);

	if (port_num != 1 || index < 0 || index >= (urnic_iw_dev(d) ? 1 : URNIC_GID_TABLE_LEN)) {
		errno = EINVAL;
		return -1;
	}
	memset(gid, 0, sizeof(*gid));
	if (index < 2)
		memcpy(gid->raw, d->gid[index], 16);
	return 0;
}

/* rdma-core's private enum ibv_gid_type_sysfs (libibverbs/driver.h). */
enum urnic_gid_type_sysfs {
	URNIC_GID_TYPE_SYSFS_IB_ROCE_V1,
	URNIC_GID_TYPE_SYSFS_ROCE_V2,
};

/* As rdma-core's, from the entry ibv_query_gid_ex gives: an empty slot reads as
 * IB/RoCE v1, the type sysfs would show for it. */
URNIC_EXPORT int ibv_query_gid_type(struct ibv_context *context, uint8_t port_num,
				    unsigned int index, int *type)
{
	struct ibv_gid_entry ent;
	int ret = _ibv_query_gid_ex(context, port_num, index, &ent, 0, sizeof(ent));

	if (ret == ENODATA) {
		*type = URNIC_GID_TYPE_SYSFS_IB_ROCE_V1;
		return 0;
	}
	if (ret) {
		errno = ret;
		return -1;
	}
	*type = ent.gid_type == IBV_GID_TYPE_ROCE_V2 ? URNIC_GID_TYPE_SYSFS_ROCE_V2
						     : URNIC_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

URNIC_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num,
				   uint32_t gid_index, struct ibv_gid_entry *entry, uint32_t flags,
				   size_t entry_size)
{
	const struct urnic_dev *d = urnic_ctx_dev(context);
	struct ibv_gid_entry ent = { 0 };

	if (flags || port_num != 1 || gid_index >= URNIC_GID_TABLE_LEN ||
	    entry_size < sizeof(ent) || (urnic_iw_dev(d) && gid_index >= 1))
		return EINVAL;
	if (gid_index >= 2)
		return ENODATA; /* an empty slot, as the kernel's GID table reports it */
	memcpy(ent.gid.raw, d->gid[gid_index], 16);
	ent.gid_index = gid_index;
	ent.port_num = port_num;
	ent.gid_type = IBV_GID_TYPE_ROCE_V2;
	/* The kernel's GID table ties each RoCE GID to the netdev it comes from
	 * (ib_gid_attr.ndev); urnic's is the interface that holds the address. An iWARP
	 * device's one GID (siw_query_gid) is cached as an IB GID without a netdev. */
	ent.ndev_ifindex = urnic_port_ifindex(d);
	if (urnic_iw_dev(d)) {
		ent.gid_type = IBV_GID_TYPE_IB;
		ent.ndev_ifindex = 0;
	}
	memcpy(entry, &ent, sizeof(ent));
	return 0;
}

/*
 * ibv_query_gid_table(3): the valid entries of every port, entry_size bytes apart (the
 * caller's sizeof: a larger struct gets its tail zeroed, a smaller one what fits), as
 * the kernel's UVERBS_METHOD_QUERY_GID_TABLE answers: flags other than 0, no room for
 * one entry, or fewer entries than the table holds: -EINVAL. Each entry is the one
 * ibv_query_gid_ex reports.
 */
URNIC_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					  struct ibv_gid_entry *entries, size_t max_entries,
					  uint32_t flags, size_t entry_size)
{
	uint8_t *out = (uint8_t *)entries;
	size_t n = 0;

	if (flags || !entry_size || !max_entries)
		return -EINVAL;
	for (uint32_t i = 0; i < URNIC_GID_TABLE_LEN; i++) {
		struct ibv_gid_entry ent;
		int ret = _ibv_query_gid_ex(context, 1, i, &ent, 0, sizeof(ent));

		if (ret == ENODATA)
			continue;
		if (ret)
			return -ret;
		if (n == max_entries)
			return -EINVAL;
		if (entry_size > sizeof(ent)) {
			memcpy(out, &ent, sizeof(ent));
			memset(out + sizeof(ent), 0, entry_size - sizeof(ent));
		} else {
			memcpy(out, &ent, entry_size);
		}
		out += entry_size;
		n++;
	}
	return (ssize_t)n;
}

URNIC_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num, int index,
				__be16 *pkey)
{
	if (port_num != 1 || index != 0) {
		errno = EINVAL;
		return -1;
	}
	*pkey = htons(0xffff); /* IBTA 10.9.1.2: the default P_Key, full member */
	return 0;
}

URNIC_EXPORT int ibv_get_pkey_index(struct ibv_context *context, uint8_t port_num, __be16 pkey)
{
	return port_num == 1 && (ntohs(pkey) & 0x7fff) == 0x7fff ? 0 : -1;
}

static const char *sysfs_path;
static pthread_once_t sysfs_path_once = PTHREAD_ONCE_INIT;

static void find_sysfs_path(void)
{
	const char *env = secure_getenv("SYSFS_PATH");
	char *dup;
	size_t len;

	sysfs_path = "/sys";
	if (!env || !*env)
		return;
	dup = strndup(env, PATH_MAX);
	if (!dup)
		return;
	for (len = strlen(dup); len > 1 && dup[len - 1] == '/'; len--)
		dup[len - 1] = '\0';
	sysfs_path = dup;
}

/* As rdma-core (libibverbs/sysfs.c): $SYSFS_PATH without trailing slashes, else /sys.
 * librdmacm builds its paths on it (class/misc/rdma_cm/abi_version). */
URNIC_EXPORT const char *ibv_get_sysfs_path(void)
{
	pthread_once(&sysfs_path_once, find_sysfs_path);
	return sysfs_path;
}

/* Files of a device's sysfs directory that urnic answers itself when no file is there:
 * it has no kernel driver to write them, and `urnic run` mounts a tree holding these
 * same values (tools/urnic/sysfs_tree.c reads them here). */
static const struct {
	const char *file;
	const char *text;
} own_files[] = {
	{ "board_id", "URNIC_SOFT_ROCE" },
	{ "hca_type", "URNIC" },
};

/* As rdma-core's ibv_read_sysfs_file_at (libibverbs/sysfs.c): the text without its
 * final newline, NUL-terminated, and its length; -1 if it does not fit in size. */
static int sysfs_text(char *buf, ssize_t len, size_t size)
{
	if (len <= 0)
		return (int)len;
	if (buf[len - 1] == '\n')
		buf[--len] = '\0';
	else if ((size_t)len < size)
		buf[len] = '\0';
	else
		return -1;
	return (int)len;
}

URNIC_EXPORT int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t len;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) >= sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = read(fd, buf, size);
		close(fd);
		return sysfs_text(buf, len, size);
	}
	pthread_once(&vdev_once, make_vdevs);
	for (int i = 0; i < nvdevs; i++) {
		if (strcmp(dir, vdevs[i]->ibdev.ibdev_path) != 0)
			continue;
		for (size_t f = 0; f < sizeof(own_files) / sizeof(own_files[0]); f++)
			if (strcmp(file, own_files[f].file) == 0) {
				int n = snprintf(buf, size, "%s", own_files[f].text);

				return n >= 0 && (size_t)n < size ? n : -1;
			}
	}
	errno = ENOENT;
	return -1;
}

/* ---- contexts ---- */

URNIC_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct urnic_dev *d = vdev_dev(device);
	struct urnic_vcontext *c;
	struct ibv_context *ctx;
	int fds[2];
	int ret;

	c = calloc(1, sizeof(*c));
	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	ret = urnic_dev_get(d);
	if (ret) {
		free(c);
		errno = -ret;
		return NULL;
	}
	c->dev = d;
	pthread_mutex_init(&c->async_lock, NULL);
	urnic_dev_events_set(d, &urnic_verbs_events);
	ctx = &c->vctx.context;
	ctx->device = device;
	/* A memfd that a dup of names the context again (ibv_import_device, import.c). */
	ret = urnic_import_open(c);
	if (ret || pipe2(fds, O_CLOEXEC) < 0) {
		ret = ret ? ret : errno;
		urnic_import_close(c);
		urnic_dev_put(d);
		urnic_async_fini(c);
		free(c);
		errno = ret;
		return NULL;
	}
	/* Events must never block the engine; the reader's mode is the application's. */
	fcntl(fds[1], F_SETFL, O_NONBLOCK);
	ctx->async_fd = fds[0];
	c->async_write_fd = fds[1];
	ctx->num_comp_vectors = 1;
	pthread_mutex_init(&ctx->mutex, NULL);
	ctx->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->ops._compat_query_device = (void *)ibv_query_device;
	ctx->ops._compat_query_port = (void *)ibv_query_port;
	ctx->ops.poll_cq = urnic_poll_cq;
	ctx->ops.req_notify_cq = urnic_req_notify_cq;
	ctx->ops.post_send = urnic_post_send;
	ctx->ops.post_recv = urnic_post_recv;
	ctx->ops.post_srq_recv = urnic_post_srq_recv;
	ctx->ops.alloc_mw = urnic_alloc_mw;
	ctx->ops.bind_mw = urnic_bind_mw;
	ctx->ops.dealloc_mw = urnic_dealloc_mw;
	c->vctx.sz = sizeof(c->vctx);
	c->vctx.query_port = query_port;
	c->vctx.query_device_ex = query_device_ex;
	c->vctx.create_cq_ex = urnic_create_cq_ex;
	c->vctx.create_qp_ex = urnic_create_qp_ex;
	c->vctx.ibv_create_flow = urnic_create_flow;
	c->vctx.ibv_destroy_flow = urnic_destroy_flow;
	c->vctx.create_wq = urnic_create_wq;
	c->vctx.modify_wq = urnic_modify_wq;
	c->vctx.destroy_wq = urnic_destroy_wq;
	c->vctx.create_rwq_ind_table = urnic_create_rwq_ind_table;
	c->vctx.destroy_rwq_ind_table = urnic_destroy_rwq_ind_table;
	c->vctx.create_srq_ex = urnic_create_srq_ex;
	c->vctx.post_srq_ops = urnic_post_srq_ops;
	c->vctx.alloc_dm = urnic_alloc_dm;
	c->vctx.free_dm = urnic_free_dm;
	c->vctx.reg_dm_mr = urnic_reg_dm_mr;
	c->vctx.advise_mr = urnic_advise_mr;
	c->vctx.query_rt_values = urnic_query_rt_values;
	c->vctx.alloc_td = urnic_alloc_td;
	c->vctx.dealloc_td = urnic_dealloc_td;
	c->vctx.alloc_parent_domain = urnic_alloc_parent_domain;
	c->vctx.open_xrcd = urnic_open_xrcd;
	c->vctx.close_xrcd = urnic_close_xrcd;
	c->vctx.get_srq_num = urnic_get_srq_num;
	c->vctx.open_qp = urnic_open_qp;
	urnic_async_watch(ctx);
	return ctx;
}

URNIC_EXPORT int ibv_close_device(struct ibv_context *context)
{
	struct urnic_vcontext *c = urnic_container_of(context, struct urnic_vcontext, vctx.context);

	urnic_async_unwatch(context); /* before its pipe closes: no port event after */
	urnic_import_close(c);
	close(context->async_fd);
	close(c->async_write_fd);
	pthread_mutex_destroy(&context->mutex);
	urnic_dev_put(c->dev);
	urnic_async_fini(c);
	free(c);
	return 0;
}
