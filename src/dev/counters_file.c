/* SPDX-License-Identifier: MIT */
/*
 * counters_file.c - a device's counters file, /dev/shm/urnic.<pid>.<dev> (layout:
 * counters_shm.h): created for this user alone, mapped, written in place by the passes
 * (pipeline.c) and the engine's per-QP slots, removed at stop; the files of processes
 * that died without removing theirs are removed when a device opens. Also the counters
 * printed at close (URNIC_PRINT_COUNTERS=1).
 */
#include "dev/counters_file.h"
#include "dev/counters_shm.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

/* True when name (in the directory dfd, or AT_FDCWD for a path) is a file of this user
 * that no process holds (every urnic process holds a flock on its own files): left by a
 * killed process. It is unlinked then, the very file checked (same inode), so a new
 * process that made its file under the name meanwhile keeps it. A held one belongs to a
 * live process: one of another PID namespace sharing /dev/shm with our pid number, say. */
static bool shm_take_stale(int dfd, const char *name)
{
	struct stat st, now;
	bool gone = false;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    flock(fd, LOCK_EX | LOCK_NB) == 0 &&
	    fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) == 0 && now.st_ino == st.st_ino &&
	    now.st_dev == st.st_dev)
		gone = unlinkat(dfd, name, 0) == 0;
	close(fd);
	return gone;
}

/* Creates d's counters file, bytes long, with mode; its name in d->shm_path.
 * A stale file of ours at the name goes (shm_take_stale). Another user's (or a link of
 * theirs), or one a live process holds, stays, and ours gets a name beside it that no
 * one can guess, which `urnic counters` finds all the same (it reads every
 * urnic.<pid>.* file). Returns the fd or -errno. */
static int shm_create_counters(struct urnic_dev *d, size_t bytes, mode_t mode)
{
	struct stat st;
	int fd;

	snprintf(d->shm_path, sizeof(d->shm_path), "/dev/shm/" URNIC_SHM_PREFIX "%d.%s",
		 (int)getpid(), d->name);
	fd = shm_create(d->shm_path);
	if (fd < 0 && errno == EEXIST) {
		if (shm_take_stale(AT_FDCWD, d->shm_path))
			fd = shm_create(d->shm_path);
		else
			errno = EEXIST; /* as it was: the name is taken */
	}
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
		if (uid == (uint32_t)geteuid())
			fprintf(stderr,
				"urnic: %s: %s is held by another process with this pid (another "
				"PID namespace): the counters file is %s\n",
				d->name, taken, d->shm_path);
		else
			fprintf(stderr,
				"urnic: %s: %s belongs to another user (uid %d), not used: the "
				"counters file is %s\n",
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
	if (map == MAP_FAILED) {
		close(fd);
		goto unlink_file;
	}
	/* Held until the file goes, or the process does: the sign that it is alive. */
	flock(fd, LOCK_SH);
	d->shm_fd = fd;
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
	close(d->shm_fd);
	d->shm_fd = -1;
	d->shm_counters = NULL;
}

/* The pid in a counters file's name, urnic.<pid>.<device>[.<random>], or 0. */
static pid_t name_pid(const char *name)
{
	size_t n = strlen(URNIC_SHM_PREFIX);
	unsigned long pid;
	char *end;

	if (strncmp(name, URNIC_SHM_PREFIX, n) != 0 || name[n] < '1' || name[n] > '9')
		return 0;
	errno = 0;
	pid = strtoul(name + n, &end, 10);
	return *end == '.' && !errno && pid <= 0x7fffffff ? (pid_t)pid : 0;
}

/*
 * A file is stale, and goes, when all of these hold: it is a regular file of this user
 * (another user's stays, and so does a link); no process by its pid exists here
 * (kill(2) ESRCH): a file whose pid is alive stays even when that pid is now another
 * program's (pid reuse), and goes after that one ends; and no process holds its
 * flock, as every urnic process holds its own files' (a process of another pid
 * namespace sharing /dev/shm has a pid that means nothing here). The file unlinked is
 * the one checked (same inode), so a new process that took the pid and made its file
 * meanwhile keeps it.
 */
void urnic_dev_counters_sweep(void)
{
	DIR *dir = opendir("/dev/shm");
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		pid_t pid = name_pid(e->d_name);

		if (!pid || pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		shm_take_stale(dirfd(dir), e->d_name);
	}
	closedir(dir);
}

void urnic_dev_print_counters(const struct urnic_dev *d, FILE *f)
{
	fprintf(f, "urnic: counters of %s (%s)\n", d->name, d->addr_str);
	for (int i = 0; i < URNIC_CTR_COUNT; i++)
		if (d->eng->stats.counters[i])
			fprintf(f, "  %-24s %llu\n", urnic_counter_names[i],
				(unsigned long long)d->eng->stats.counters[i]);
}
