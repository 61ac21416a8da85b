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
#include <unistd.h>

#include "dev/counters_shm.h"

const char *const urnic_ctrfile_names[URNIC_CTRFILE_COUNT] = {
#define URNIC_COUNTER(name, desc) [URNIC_CTRFILE_##name] = #name,
#include "engine/counters.def"
#undef URNIC_COUNTER
};

const char *const urnic_ctrfile_descs[URNIC_CTRFILE_COUNT] = {
#define URNIC_COUNTER(name, desc) [URNIC_CTRFILE_##name] = desc,
#include "engine/counters.def"
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
	size_t want;
	ssize_t n;
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
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
	out->pid = (pid_t)h.pid;
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

bool urnic_ctrfile_pid_alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

uint64_t urnic_ctrfile_drops(const struct urnic_ctrfile *f)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < f->ncounters && i < URNIC_CTRFILE_COUNT; i++)
		if (strncmp(urnic_ctrfile_names[i], "drop_", 5) == 0)
			sum += f->values[i];
	return sum;
}
