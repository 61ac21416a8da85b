/* SPDX-License-Identifier: MIT */
/*
 * counters_file.c - a device's counters file, /dev/shm/urnic.<pid>.<dev> (layout:
 * counters_shm.h): created for this user alone, mapped, written in place by the passes
 * (pipeline.c) and the engine's per-QP slots, removed at stop. Also the counters
 * printed at close (URNIC_PRINT_COUNTERS=1).
 */
#include "dev/counters_file.h"
#include "dev/counters_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

/* Header, device counters, then the engine's per-QP table, written in place. */
static size_t shm_bytes(void)
{
	return sizeof(struct urnic_shm_header) + URNIC_CTR_COUNT * sizeof(uint64_t) +
	       URNIC_MAX_QP * sizeof(struct urnic_qp_counters);
}

/* Opens a new file at path for us alone: never one that was there (O_EXCL), never
 * through a symbolic link (O_NOFOLLOW). /dev/shm is writable by every user and the name
 * is predictable, so another user may have put a file or a link there first. */
static int shm_create(const char *path)
{
	return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* Creates d's counters file, bytes long, with mode; its name in d->shm_path.
 * A file at the name that is ours was left by a killed process of this user that had
 * our pid: it goes. Another user's (or a link of theirs) stays, and ours gets a name
 * beside it that no one can guess, which `urnic counters` finds all the same (it reads
 * every urnic.<pid>.* file). Returns the fd or -errno. */
static int shm_create_counters(struct urnic_dev *d, size_t bytes, mode_t mode)
{
	struct stat st;
	int fd;

	snprintf(d->shm_path, sizeof(d->shm_path), "/dev/shm/" URNIC_SHM_PREFIX "%d.%s",
		 (int)getpid(), d->name);
	fd = shm_create(d->shm_path);
	if (fd < 0 && errno == EEXIST && lstat(d->shm_path, &st) == 0 && st.st_uid == geteuid() &&
	    unlink(d->shm_path) == 0)
		fd = shm_create(d->shm_path);
	if (fd < 0 && errno == EEXIST) {
		char taken[sizeof(d->shm_path)];
		uint64_t r = 0;
		uint32_t uid = lstat(d->shm_path, &st) == 0 ? (uint32_t)st.st_uid : UINT32_MAX;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			r = urnic_dev_now_ns();
		snprintf(taken, sizeof(taken), "%s", d->shm_path);
		snprintf(d->shm_path, sizeof(d->shm_path),
			 "/dev/shm/" URNIC_SHM_PREFIX "%d.%s.%016llx", (int)getpid(), d->name,
			 (unsigned long long)r);
		fprintf(stderr,
			"urnic: %s: %s belongs to another user (uid %d), not used: the counters "
			"file is %s\n",
			d->name, taken, uid == UINT32_MAX ? -1 : (int)uid, d->shm_path);
		fd = shm_create(d->shm_path);
	}
	if (fd < 0)
		return -errno;
	/* Mapped only if it is the file just made: ours, regular, one link, bytes long,
	 * writable by no one else (a truncation by another user would fault the engine). */
	if (fchmod(fd, mode) < 0 || ftruncate(fd, (off_t)bytes) < 0 || fstat(fd, &st) < 0) {
		int ret = -errno;

		close(fd);
		unlink(d->shm_path);
		return ret;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1 ||
	    st.st_size != (off_t)bytes || (st.st_mode & 022)) {
		close(fd);
		unlink(d->shm_path);
		return -EPERM;
	}
	return fd;
}

void urnic_dev_counters_open(struct urnic_dev *d, mode_t mode)
{
	size_t bytes = shm_bytes();
	struct urnic_shm_header *h;
	void *map;
	int fd;

	fd = shm_create_counters(d, bytes, mode);
	if (fd < 0) {
		fprintf(stderr,
			"urnic: %s: no counters file (%s): `urnic counters` does not show "
			"this device\n",
			d->name, strerror(-fd));
		goto no_file;
	}
	map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		goto unlink_file;
	h = map;
	h->pid = (uint32_t)getpid();
	h->ncounters = URNIC_CTR_COUNT;
	h->qp_slots = URNIC_MAX_QP;
	h->qp_slot_bytes = sizeof(struct urnic_qp_counters);
	_Static_assert(sizeof(struct urnic_qp_counters) == 8 + URNIC_CTR_COUNT * sizeof(uint64_t),
		       "counters_shm.h describes a QP slot as 8 bytes and the counters");
	snprintf(h->dev, sizeof(h->dev), "%s", d->name);
	snprintf(h->addr, sizeof(h->addr), "%s", d->addr_str);
	memcpy(h->magic, URNIC_SHM_MAGIC, 8);
	d->shm_counters = (uint64_t *)(h + 1);
	pthread_mutex_lock(&d->lock);
	urnic_engine_set_qp_counters(
		d->eng, (struct urnic_qp_counters *)(d->shm_counters + URNIC_CTR_COUNT));
	h->qp_end = d->eng->qpt.end;
	pthread_mutex_unlock(&d->lock);
	return;
unlink_file:
	unlink(d->shm_path);
no_file:
	d->shm_path[0] = 0;
	d->shm_counters = NULL;
}

void urnic_dev_counters_close(struct urnic_dev *d)
{
	size_t bytes = shm_bytes();

	if (!d->shm_counters)
		return;
	pthread_mutex_lock(&d->lock);
	urnic_engine_set_qp_counters(d->eng, NULL); /* the QPs are gone by now */
	pthread_mutex_unlock(&d->lock);
	munmap((uint8_t *)d->shm_counters - sizeof(struct urnic_shm_header), bytes);
	unlink(d->shm_path);
	d->shm_counters = NULL;
}

void urnic_dev_print_counters(const struct urnic_dev *d, FILE *f)
{
	fprintf(f, "urnic: counters of %s (%s)\n", d->name, d->addr_str);
	for (int i = 0; i < URNIC_CTR_COUNT; i++)
		if (d->eng->stats.counters[i])
			fprintf(f, "  %-24s %llu\n", urnic_counter_names[i],
				(unsigned long long)d->eng->stats.counters[i]);
}
