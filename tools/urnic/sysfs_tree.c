/* SPDX-License-Identifier: MIT */
/*
 * sysfs_tree.c - the sysfs view `urnic run` mounts (sysfs_tree.h): for each device the
 * files Linux 6.1 writes for rxe (drivers/infiniband/core/sysfs.c: node_type, node_guid,
 * sys_image_guid, fw_ver, ports/N/{state,phys_state,link_layer,rate,lid,...}, gids/N,
 * gid_attrs/{types,ndevs}/N, pkeys/N; rxe's parent) in their formats, and uverbs
 * entries (core/uverbs_main.c). Every value comes from urnic's verbs (ibv_query_device,
 * ibv_query_port, ibv_query_gid_ex, ibv_read_sysfs_file), never derived twice. It is a
 * snapshot taken at launch: a port that goes down later still reads ACTIVE here, while
 * ibv_query_port answers live. Counters (hw_counters) and node_desc are not written.
 */
#include "sysfs_tree.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "mounts.h"

#define IB_CLASS "/sys/class/infiniband"
#define UVERBS_CLASS "/sys/class/infiniband_verbs"
#define UVERBS_DIR "/dev/infiniband"

/* What /dev/infiniband/uverbsN is. Readers (UCX) want a character device they can
 * open; urnic's library never uses it. A user namespace may not mknod one, and a node
 * made on its tmpfs could not be opened (mounted there, tmpfs is nodev), so a node of
 * the host is bound in: /dev/null opens for anyone and does nothing. */
#define UVERBS_NODE "/dev/null"

/* include/uapi/rdma/ib_user_verbs.h IB_USER_VERBS_ABI_VERSION: the class's abi_version. */
#define UVERBS_ABI 6
/* The driver's uverbs ABI, per device: rxe's (rxe.h RXE_UVERBS_ABI_VERSION). */
#define UVERBS_DEV_ABI 2

/* rdma-core exports it without a public prototype (infiniband/driver.h). */
int ibv_read_sysfs_file(const char *dir, const char *file, char *buf, size_t size);

/* A directory being written; err keeps the first failure, after which nothing is done. */
struct tree {
	int err;
};

static int failed(struct tree *t, const char *what, const char *name, int err)
{
	if (!t->err) {
		fprintf(stderr, "urnic run: cannot %s %s: %s\n", what, name, strerror(err));
		t->err = -err;
	}
	return -1;
}

/* Makes directory name in dir and opens it; -1 on failure (or after one). */
static int subdir(struct tree *t, int dir, const char *name)
{
	int fd;

	if (t->err || dir < 0)
		return -1;
	if (mkdirat(dir, name, 0755) < 0 && errno != EEXIST)
		return failed(t, "make", name, errno);
	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? failed(t, "open", name, errno) : fd;
}

static void close_dir(int fd)
{
	if (fd >= 0)
		close(fd);
}

__attribute__((format(printf, 4, 5))) static void put(struct tree *t, int dir, const char *name,
						      const char *fmt, ...)
{
	char text[256];
	va_list ap;
	ssize_t n;
	int len, fd;

	if (t->err || dir < 0)
		return;
	va_start(ap, fmt);
	len = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(text)) {
		failed(t, "write", name, EOVERFLOW);
		return;
	}
	fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
	if (fd < 0) {
		failed(t, "write", name, errno);
		return;
	}
	n = write(fd, text, (size_t)len);
	if (n != len)
		failed(t, "write", name, n < 0 ? errno : EIO);
	close(fd);
}

/* "%04x:%04x:%04x:%04x" of a GUID in network order (sysfs.c node_guid_show). */
static void put_guid(struct tree *t, int dir, const char *name, __be64 guid)
{
	uint8_t b[8];

	memcpy(b, &guid, sizeof(b));
	put(t, dir, name, "%02x%02x:%02x%02x:%02x%02x:%02x%02x\n", b[0], b[1], b[2], b[3], b[4],
	    b[5], b[6], b[7]);
}

/* The kernel's %pI6: eight groups of four hex digits, none elided (show_port_gid). */
static void put_gid(struct tree *t, int dir, const char *name, const uint8_t *g)
{
	put(t, dir, name,
	    "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x\n", g[0], g[1],
	    g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13], g[14],
	    g[15]);
}

static const char *node_type_name(enum ibv_node_type type)
{
	switch (type) {
	case IBV_NODE_CA:
		return "CA";
	case IBV_NODE_SWITCH:
		return "switch";
	case IBV_NODE_ROUTER:
		return "router";
	case IBV_NODE_RNIC:
		return "RNIC";
	case IBV_NODE_USNIC:
		return "usNIC";
	case IBV_NODE_USNIC_UDP:
		return "usNIC UDP";
	default:
		return "<unknown>";
	}
}

/* sysfs.c state_show: the IBTA port states by the kernel's names. */
static const char *const state_names[] = {
	"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"
};

/* sysfs.c phys_state_show: PortInfo:PortPhysicalState (IBTA), 1..7. */
static const char *const phys_state_names[] = {
	[1] = "Sleep",	  [2] = "Polling",
	[3] = "Disabled", [4] = "PortConfigurationTraining",
	[5] = "LinkUp",	  [6] = "LinkErrorRecovery",
	[7] = "Phy Test",
};

/* sysfs.c rate_show: deci-Gb/s per lane of each IBTA speed, and its name. */
static const struct {
	uint8_t speed;
	int rate;
	const char *name;
} speeds[] = {
	{ 1, 25, "" },	     { 2, 50, " DDR" },	  { 4, 100, " QDR" },  { 8, 100, " FDR10" },
	{ 16, 140, " FDR" }, { 32, 250, " EDR" }, { 64, 500, " HDR" }, { 128, 1000, " NDR" },
};

/* ib_width_enum_to_int: the lanes of IBTA width 1X, 4X, 8X, 12X, 2X. */
static int width_lanes(uint8_t width)
{
	switch (width) {
	case 1:
		return 1;
	case 2:
		return 4;
	case 4:
		return 8;
	case 8:
		return 12;
	case 16:
		return 2;
	default:
		return -1;
	}
}

static void put_rate(struct tree *t, int dir, const struct ibv_port_attr *pa)
{
	int rate = 25, lanes = width_lanes(pa->active_width);
	const char *name = "";

	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (speeds[i].speed == pa->active_speed) {
			rate = speeds[i].rate;
			name = speeds[i].name;
		}
	if (lanes < 0)
		return; /* the kernel answers EINVAL: no file */
	rate *= lanes;
	put(t, dir, "rate", "%d%s Gb/sec (%dX%s)\n", rate / 10, rate % 10 ? ".5" : "", lanes, name);
}

static void put_port_attrs(struct tree *t, int dir, const struct ibv_port_attr *pa)
{
	unsigned int state = pa->state, phys = pa->phys_state;

	put(t, dir, "state", "%u: %s\n", state,
	    state < sizeof(state_names) / sizeof(state_names[0]) ? state_names[state] : "UNKNOWN");
	if (phys >= 1 && phys < sizeof(phys_state_names) / sizeof(phys_state_names[0]))
		put(t, dir, "phys_state", "%u: %s\n", phys, phys_state_names[phys]);
	else
		put(t, dir, "phys_state", "%u: <unknown>\n", phys);
	put(t, dir, "link_layer", "%s\n",
	    pa->link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
	put_rate(t, dir, pa);
	put(t, dir, "lid", "0x%x\n", pa->lid);
	put(t, dir, "lid_mask_count", "%u\n", pa->lmc);
	put(t, dir, "sm_lid", "0x%x\n", pa->sm_lid);
	put(t, dir, "sm_sl", "%u\n", pa->sm_sl);
	put(t, dir, "cap_mask", "0x%08x\n", pa->port_cap_flags);
}

/* gids/N for every slot of the table, the zero GID for an empty one (show_port_gid);
 * gid_attrs/types/N and ndevs/N for the valid ones only: the kernel fails reading them
 * for an empty slot, here they are absent. ndev names the first netdev seen. */
static void put_gids(struct tree *t, struct ibv_context *ctx, uint8_t port, int dir,
		     const struct ibv_port_attr *pa, char ndev[IF_NAMESIZE])
{
	int gids = subdir(t, dir, "gids"), attrs = subdir(t, dir, "gid_attrs");
	int types = subdir(t, attrs, "types"), ndevs = subdir(t, attrs, "ndevs");
	static const uint8_t zero[16];

	for (int i = 0; i < pa->gid_tbl_len && !t->err; i++) {
		char name[16], ifname[IF_NAMESIZE];
		struct ibv_gid_entry e;
		int ret = ibv_query_gid_ex(ctx, port, (uint32_t)i, &e, 0);

		snprintf(name, sizeof(name), "%d", i);
		if (ret == ENODATA) {
			put_gid(t, gids, name, zero);
			continue;
		}
		if (ret) {
			failed(t, "query GID", name, ret);
			break;
		}
		put_gid(t, gids, name, e.gid.raw);
		put(t, types, name, "%s\n",
		    e.gid_type == IBV_GID_TYPE_ROCE_V2 ? "RoCE v2" : "IB/RoCE v1");
		if (e.ndev_ifindex && if_indextoname(e.ndev_ifindex, ifname)) {
			put(t, ndevs, name, "%s\n", ifname);
			if (!ndev[0])
				memcpy(ndev, ifname, IF_NAMESIZE);
		}
	}
	close_dir(types);
	close_dir(ndevs);
	close_dir(attrs);
	close_dir(gids);
}

static void put_pkeys(struct tree *t, struct ibv_context *ctx, uint8_t port, int dir, int len)
{
	int pkeys = subdir(t, dir, "pkeys");

	for (int i = 0; i < len && !t->err; i++) {
		char name[16];
		__be16 pkey;

		snprintf(name, sizeof(name), "%d", i);
		if (ibv_query_pkey(ctx, port, i, &pkey))
			failed(t, "query P_Key", name, errno);
		else
			put(t, pkeys, name, "0x%04x\n", ntohs(pkey));
	}
	close_dir(pkeys);
}

/* ports/N of every port; ndev: the netdev of the first port's GIDs. */
static void put_ports(struct tree *t, struct ibv_context *ctx, int dev, uint8_t nports,
		      char ndev[IF_NAMESIZE])
{
	int ports = subdir(t, dev, "ports");

	for (int p = 1; p <= nports && !t->err; p++) {
		struct ibv_port_attr pa;
		char name[8];
		int port;

		snprintf(name, sizeof(name), "%d", p);
		if (ibv_query_port(ctx, (uint8_t)p, &pa)) {
			failed(t, "query port", name, errno);
			break;
		}
		port = subdir(t, ports, name);
		put_port_attrs(t, port, &pa);
		put_gids(t, ctx, (uint8_t)p, port, &pa, ndev);
		put_pkeys(t, ctx, (uint8_t)p, port, pa.pkey_tbl_len);
		close_dir(port);
	}
	close_dir(ports);
}

/* device/net/<netdev> -> the interface's own directory: pyverbs lists device/net/ for
 * the device's interface (tests/base.py get_net_name). Nothing when there is none, as a
 * device without one has no net/ in its parent. */
static void put_parent(struct tree *t, int dev, const char *ndev)
{
	char target[64];
	int device = subdir(t, dev, "device"), net;

	if (ndev[0]) {
		put(t, dev, "parent", "%s\n", ndev); /* rxe_verbs.c parent_show */
		net = subdir(t, device, "net");
		snprintf(target, sizeof(target), "/sys/class/net/%s", ndev);
		if (!t->err && symlinkat(target, net, ndev) < 0)
			failed(t, "link", ndev, errno);
		close_dir(net);
	}
	close_dir(device);
}

static void put_device(struct tree *t, int ib, struct ibv_device *dev, struct ibv_context *ctx)
{
	static const char *const own_files[] = { "board_id", "hca_type" };
	char ndev[IF_NAMESIZE] = "";
	struct ibv_device_attr da;
	int d = subdir(t, ib, dev->name);

	if (ibv_query_device(ctx, &da)) {
		failed(t, "query device", dev->name, errno);
		close_dir(d);
		return;
	}
	put(t, d, "node_type", "%d: %s\n", (int)dev->node_type, node_type_name(dev->node_type));
	put_guid(t, d, "node_guid", da.node_guid);
	put_guid(t, d, "sys_image_guid", da.sys_image_guid);
	put(t, d, "fw_ver", "%s\n", da.fw_ver);
	/* What the library answers for files no driver writes (it reads ours later). */
	for (size_t i = 0; i < sizeof(own_files) / sizeof(own_files[0]); i++) {
		char text[128];

		if (ibv_read_sysfs_file(dev->ibdev_path, own_files[i], text, sizeof(text)) > 0)
			put(t, d, own_files[i], "%s\n", text);
	}
	put_ports(t, ctx, d, da.phys_port_cnt, ndev);
	put_parent(t, d, ndev);
	close_dir(d);
}

/* infiniband_verbs/uverbsN (uverbs_main.c: ibdev, abi_version, dev) and its node. */
static void put_uverbs(struct tree *t, int uv, struct ibv_device *dev, dev_t node)
{
	char path[sizeof(UVERBS_DIR) + sizeof(dev->dev_name) + 1];
	int d = subdir(t, uv, dev->dev_name);
	int ret;

	put(t, d, "ibdev", "%s\n", dev->name);
	put(t, d, "abi_version", "%d\n", UVERBS_DEV_ABI);
	put(t, d, "dev", "%u:%u\n", major(node), minor(node));
	close_dir(d);
	if (t->err)
		return;
	snprintf(path, sizeof(path), "%s/%s", UVERBS_DIR, dev->dev_name);
	ret = urnic_mounts_bind(UVERBS_NODE, path);
	if (ret)
		t->err = ret;
}

static int open_class(struct tree *t, const char *dir)
{
	int ret = urnic_mounts_tmpfs(dir), fd;

	if (ret) {
		t->err = ret;
		return -1;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? failed(t, "open", dir, errno) : fd;
}

int urnic_sysfs_tree_mount(void)
{
	struct tree t = { 0 };
	struct ibv_device **list;
	struct stat node;
	int ib, uv, n;

	if (stat(UVERBS_NODE, &node) < 0 || !S_ISCHR(node.st_mode)) {
		fprintf(stderr, "urnic run: %s is not a character device\n", UVERBS_NODE);
		return -ENODEV;
	}
	list = ibv_get_device_list(&n);
	if (!list) {
		failed(&t, "list", "the devices", errno);
		return t.err;
	}
	ib = open_class(&t, IB_CLASS);
	uv = open_class(&t, UVERBS_CLASS);
	if (!t.err)
		t.err = urnic_mounts_tmpfs(UVERBS_DIR);
	put(&t, uv, "abi_version", "%d\n", UVERBS_ABI);
	for (int i = 0; i < n && !t.err; i++) {
		struct ibv_context *ctx = ibv_open_device(list[i]);

		if (!ctx) {
			failed(&t, "open device", list[i]->name, errno);
			break;
		}
		put_device(&t, ib, list[i], ctx);
		ibv_close_device(ctx);
		put_uverbs(&t, uv, list[i], node.st_rdev);
	}
	close_dir(ib);
	close_dir(uv);
	ibv_free_device_list(list);
	return t.err;
}
