/* SPDX-License-Identifier: MIT */
/*
 * test_counters_sweep.c - opening a device removes the counters files
 * (/dev/shm/urnic.<pid>.<device>) that dead processes of this user left, and only those
 * (src/dev/counters_file.c, urnic_dev_counters_sweep): a file whose pid is alive stays
 * though that process is no urnic process (pid reuse); so do one whose pid is gone but
 * whose flock a process holds (a urnic process of another pid namespace), a symbolic
 * link, another user's file (as root) and names that are not a counters file's.
 * The device: URNIC_ADDR (127.0.0.54).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "check.h"

enum { NFILES = 7 };

static char paths[NFILES][128];
static pid_t children[2];

/* Also when a CHECK fails: no file or child is left behind. */
static void clean_up(void)
{
	for (int i = 0; i < 2; i++)
		if (children[i] > 0) {
			kill(children[i], SIGKILL);
			waitpid(children[i], NULL, 0);
		}
	for (int i = 0; i < NFILES; i++)
		if (paths[i][0])
			unlink(paths[i]);
}

/* A pid no process has: a child's, once it is reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(0);
	CHECK_EQ(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* A process that is no urnic process, asleep until killed. */
static pid_t live_pid(void)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

static void make_file(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	CHECK(fd >= 0);
	CHECK_EQ(write(fd, "URNICCT2", 8), 8);
	close(fd);
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int main(void)
{
	pid_t gone = dead_pid(), gone2 = dead_pid(), alive = live_pid(), holder;
	struct ibv_device **list;
	struct ibv_context *ctx;
	int n, lock_ready[2];
	char c;

	children[0] = alive;
	atexit(clean_up);

	snprintf(paths[0], sizeof(paths[0]), "/dev/shm/urnic.%d.urnic0", (int)gone);
	snprintf(paths[1], sizeof(paths[1]), "/dev/shm/urnic.%d.urnic1.00c0ffee00c0ffee",
		 (int)gone);
	snprintf(paths[2], sizeof(paths[2]), "/dev/shm/urnic.%d.urnic0", (int)alive);
	snprintf(paths[3], sizeof(paths[3]), "/dev/shm/urnic.%d.urnic0", (int)gone2);
	snprintf(paths[4], sizeof(paths[4]), "/dev/shm/urnic.%d.link", (int)gone);
	snprintf(paths[5], sizeof(paths[5]), "/dev/shm/urnic.%d.urnic2", (int)gone);
	snprintf(paths[6], sizeof(paths[6]), "/dev/shm/urnic.x%d.urnic0", (int)gone);
	for (int i = 0; i < NFILES; i++)
		unlink(paths[i]);
	make_file(paths[0]);			  /* stale: goes */
	make_file(paths[1]);			  /* stale, the name beside another user's: goes */
	make_file(paths[2]);			  /* its pid alive: stays */
	make_file(paths[3]);			  /* its pid gone, its flock held: stays */
	CHECK_EQ(symlink(paths[2], paths[4]), 0); /* a link: stays */
	make_file(paths[5]);			  /* another user's (as root): stays */
	if (geteuid() == 0)
		CHECK_EQ(chown(paths[5], 65534, 65534), 0);
	make_file(paths[6]); /* not a counters file's name: stays */

	CHECK_EQ(pipe(lock_ready), 0);
	holder = fork();
	CHECK(holder >= 0);
	if (holder == 0) {
		int fd = open(paths[3], O_RDONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		CHECK(fd >= 0);
		CHECK_EQ(flock(fd, LOCK_SH), 0);
		CHECK_EQ(write(lock_ready[1], "k", 1), 1);
		for (;;)
			pause();
	}
	children[1] = holder;
	CHECK_EQ(read(lock_ready[0], &c, 1), 1);

	list = ibv_get_device_list(&n);
	CHECK(list && n == 1);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx);

	CHECK(!exists(paths[0]));
	CHECK(!exists(paths[1]));
	CHECK(exists(paths[2]));
	CHECK(exists(paths[3]));
	CHECK(exists(paths[4]));
	if (geteuid() == 0)
		CHECK(exists(paths[5]));
	else
		CHECK(!exists(paths[5])); /* ours after all */
	CHECK(exists(paths[6]));
	printf("ok sweep\n");

	/* The lock holder gone, its file is stale; the next first open removes it. */
	kill(holder, SIGKILL);
	CHECK_EQ(waitpid(holder, NULL, 0), holder);
	children[1] = 0;
	CHECK_EQ(ibv_close_device(ctx), 0);
	ctx = ibv_open_device(list[0]);
	CHECK(ctx);
	CHECK(!exists(paths[3]));
	CHECK(exists(paths[2]));
	printf("ok sweep_after_unlock\n");

	CHECK_EQ(ibv_close_device(ctx), 0);
	ibv_free_device_list(list);
	return 0;
}
