/* SPDX-License-Identifier: MIT */
/*
 * counters_file.c - reading /dev/shm/urnic.<pid>.<dev>. See counters_file.h.
 *
 * The writer (src/dev/device.c) fills the header and sets the magic last, so a file
 * without the magic is one being created: it reads as -EBADMSG, like a foreign file.
 */
#include "counters_file.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dev/counters_shm.h"

const char *const urnic_ctrfile_names[URNIC_CTRFILE_COUNT] = {
#define URNIC_COUNTER(name, desc) [URNIC_CTRFILE_##name] = #name,
#include "stats/counters.def"
#undef URNIC_COUNTER
};

const char *const urnic_ctrfile_descs[URNIC_CTRFILE_COUNT] = {
#define URNIC_COUNTER(name, desc) [URNIC_CTRFILE_##name] = desc,
#include "stats/counters.def"
#undef URNIC_COUNTER
};

int urnic_ctrfile_path(char *buf, size_t len, pid_t pid, const char *dev)
{
	int n = snprintf(buf, len, "/dev/shm/" URNIC_SHM_PREFIX "%d.%s", (int)pid, dev);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

pid_t urnic_ctrfile_name_pid(const char *name)
{
	size_t plen = strlen(URNIC_SHM_PREFIX);
	unsigned long pid;
	char *end;

	if (strncmp(name, URNIC_SHM_PREFIX, plen) != 0 || name[plen] < '0' || name[plen] > '9')
		return -1;
	errno = 0;
	pid = strtoul(name + plen, &end, 10);
	if (errno || *end != '.' || end[1] == 0 || pid == 0 || pid > 0x7fffffffu)
		return -1;
	return (pid_t)pid;
}

static void copy_field(char *dst, size_t dst_len, const char *src, size_t src_len)
{
	size_t n = strnlen(src, src_len);

	if (n >= dst_len)
		n = dst_len - 1;
	memcpy(dst, src, n);
	dst[n] = 0;
}

int urnic_ctrfile_read(const char *path, pid_t pid, struct urnic_ctrfile *out)
{
	struct urnic_shm_header h;
	struct stat st;
	size_t want;
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	/* Only a regular file: a FIFO or device planted under the name would block or
	 * answer anything. */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		ret = -EBADMSG;
		goto close_file;
	}
	n = pread(fd, &h, sizeof(h), 0);
	if (n < 0) {
		ret = -errno;
		goto close_file;
	}
	if ((size_t)n < sizeof(h) || memcmp(h.magic, URNIC_SHM_MAGIC, sizeof(h.magic)) != 0 ||
	    (pid && h.pid != (uint32_t)pid)) {
		ret = -EBADMSG;
		goto close_file;
	}
	memset(out, 0, sizeof(*out));
	copy_field(out->path, sizeof(out->path), path, strlen(path));
	out->pid = (pid_t)h.pid;
	out->uid = st.st_uid;
	out->qp_slots = h.qp_slots;
	out->qp_slot_bytes = h.qp_slot_bytes;
	out->qp_end = h.qp_end < h.qp_slots ? h.qp_end : h.qp_slots;
	copy_field(out->dev, sizeof(out->dev), h.dev, sizeof(h.dev));
	copy_field(out->addr, sizeof(out->addr), h.addr, sizeof(h.addr));
	out->ncounters = h.ncounters < URNIC_CTRFILE_MAX ? h.ncounters : URNIC_CTRFILE_MAX;
	want = out->ncounters * sizeof(uint64_t);
	n = pread(fd, out->values, want, sizeof(h));
	if (n < 0)
		ret = -errno;
	else if ((size_t)n < want)
		ret = -EBADMSG; /* shorter than its header says */
close_file:
	close(fd);
	return ret;
}

int urnic_ctrfile_each_qp(const struct urnic_ctrfile *f,
			  int (*each)(const struct urnic_ctrfile_qp *q, void *arg), void *arg)
{
	off_t base = (off_t)(sizeof(struct urnic_shm_header) + f->ncounters * sizeof(uint64_t));
	uint8_t slot[8 + URNIC_CTRFILE_MAX * sizeof(uint64_t)];
	struct urnic_ctrfile_qp q;
	int fd, ret = 0;

	/* A slot holds 8 bytes of identity and one counter per device counter. */
	if (f->qp_slot_bytes != 8 + f->ncounters * sizeof(uint64_t) ||
	    f->qp_slot_bytes > sizeof(slot))
		return -EBADMSG;
	fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	for (uint32_t i = 0; i < f->qp_end && ret == 0; i++) {
		ssize_t n = pread(fd, slot, f->qp_slot_bytes, base + (off_t)i * f->qp_slot_bytes);

		if (n < 0) {
			ret = -errno;
			break;
		}
		if ((size_t)n < f->qp_slot_bytes) {
			ret = -EBADMSG;
			break;
		}
		memcpy(&q.qpn, slot, 4);
		if (q.qpn == 0)
			continue;
		q.type = slot[4];
		q.state = slot[5];
		q.ncounters = f->ncounters;
		memcpy(q.values, slot + 8, f->ncounters * sizeof(uint64_t));
		ret = each(&q, arg);
	}
	close(fd);
	return ret;
}

const char *urnic_ctrfile_qp_type_name(uint8_t type)
{
	/* enum ibv_qp_type: XRC send and receive QPs are 9 and 10 (IBTA Annex A14). */
	static const char *const names[] = {
		[2] = "RC", [3] = "UC", [4] = "UD", [9] = "XRC_SEND", [10] = "XRC_RECV",
	};

	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "?";
}

const char *urnic_ctrfile_qp_state_name(uint8_t state)
{
	/* enum ibv_qp_state, as URNIC_QP_STATES in src/engine/qp.h */
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "SQD", "SQE", "ERR" };

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

bool urnic_ctrfile_pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

bool urnic_ctrfile_owner_matches(const struct urnic_ctrfile *f, pid_t pid)
{
	char proc[32];
	struct stat st;

	snprintf(proc, sizeof(proc), "/proc/%d", (int)pid);
	return stat(proc, &st) == 0 && st.st_uid == f->uid;
}

uint64_t urnic_ctrfile_drops(const struct urnic_ctrfile *f)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < f->ncounters && i < URNIC_CTRFILE_COUNT; i++)
		if (strncmp(urnic_ctrfile_names[i], "drop_", 5) == 0)
			sum += f->values[i];
	return sum;
}
