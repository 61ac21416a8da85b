/* SPDX-License-Identifier: MIT */
/*
 * mounts.c - the mount namespace of `urnic run` (mounts.h). A user namespace lets a
 * process without privilege mount (user_namespaces(7)). A directory the host lacks
 * (/dev/infiniband, or /sys/class/infiniband where no RDMA driver is loaded) is added as
 * bubblewrap builds a root: its parent is covered by a tmpfs into which every entry of
 * the parent is bound back. Entries are the parent's at launch; what the host adds to
 * it later does not appear in the namespace.
 */
#include "mounts.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

enum { MAX_TMPFS = 8 };

/* The tmpfs mounted so far, for urnic_mounts_seal and to know a parent is ours. */
static char tmpfs_dirs[MAX_TMPFS][PATH_MAX];
static int ntmpfs;

static int fail(const char *what, const char *path, int err)
{
	fprintf(stderr, "urnic run: %s %s: %s\n", what, path, strerror(err));
	return -err;
}

static int write_proc(const char *file, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, err;

	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	err = errno;
	close(fd);
	return n == (ssize_t)len ? 0 : -err;
}

/* A user namespace in which the caller keeps its uid and gid: a process may map its own
 * ids, the gid only once setgroups is denied (user_namespaces(7)). Its mount namespace
 * comes with it. */
static int enter_user_ns(void)
{
	unsigned int uid = (unsigned int)geteuid(), gid = (unsigned int)getegid();
	char map[64];
	int ret;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		int err = errno;

		fprintf(stderr,
			"urnic run: cannot create a user namespace: %s\n"
			"urnic run: this host does not let unprivileged users create them "
			"(sysctl kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0, "
			"or a container's seccomp policy); allow them, or run as root\n",
			strerror(err));
		return -err;
	}
	ret = write_proc("/proc/self/setgroups", "deny");
	if (ret && ret != -ENOENT)
		return fail("cannot write", "/proc/self/setgroups", -ret);
	snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
	ret = write_proc("/proc/self/uid_map", map);
	if (ret)
		return fail("cannot write", "/proc/self/uid_map", -ret);
	snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
	ret = write_proc("/proc/self/gid_map", map);
	if (ret)
		return fail("cannot write", "/proc/self/gid_map", -ret);
	return 0;
}

int urnic_mounts_enter(void)
{
	int ret;

	/* Root needs no user namespace; a root without CAP_SYS_ADMIN (EPERM) tries one. */
	if (geteuid() != 0 || unshare(CLONE_NEWNS) < 0) {
		ret = enter_user_ns();
		if (ret)
			return ret;
	}
	/* A mount under a shared one would propagate to the host's namespace
	 * (mount_namespaces(7)): make every mount private first. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return fail("cannot make private the mounts under", "/", errno);
	return 0;
}

static bool is_ours(const char *dir)
{
	for (int i = 0; i < ntmpfs; i++)
		if (strcmp(tmpfs_dirs[i], dir) == 0)
			return true;
	return false;
}

static int add_tmpfs(const char *dir, mode_t mode)
{
	char opts[32];

	if (ntmpfs == MAX_TMPFS)
		return fail("too many mounts for", dir, ENOSPC);
	snprintf(opts, sizeof(opts), "mode=%04o", (unsigned int)(mode & 07777));
	if (mount("urnic", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
		return fail("cannot mount a tmpfs on", dir, errno);
	snprintf(tmpfs_dirs[ntmpfs++], PATH_MAX, "%s", dir);
	return 0;
}

/* Entry name of the covered directory fd (dir's former contents) back into dir: a
 * symbolic link copied, anything else bound (with its submounts: /dev/shm, /dev/pts). */
static int bind_back(int fd, const char *dir, const char *name)
{
	char src[64 + NAME_MAX], dst[PATH_MAX], target[PATH_MAX];
	struct stat st;
	ssize_t n;

	if ((size_t)snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= sizeof(dst))
		return fail("cannot bind back", name, ENAMETOOLONG);
	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno; /* gone since the directory was read */
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(fd, name, target, sizeof(target) - 1);
		if (n < 0)
			return fail("cannot read the link", dst, errno);
		target[n] = '\0';
		return symlink(target, dst) < 0 ? fail("cannot copy the link", dst, errno) : 0;
	}
	if (S_ISDIR(st.st_mode)) {
		if (mkdir(dst, st.st_mode & 07777) < 0)
			return fail("cannot make", dst, errno);
	} else {
		int f = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

		if (f < 0)
			return fail("cannot make", dst, errno);
		close(f);
	}
	snprintf(src, sizeof(src), "/proc/self/fd/%d/%s", fd, name);
	if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
		return fail("cannot bind back", dst, errno);
	return 0;
}

/* Covers dir with a tmpfs holding what dir held. An entry that cannot be brought back
 * is said and left out: the rest of the host's directory stays usable. */
static int shadow(const char *dir)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd, ret;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail("cannot open", dir, errno);
	if (fstat(fd, &st) < 0) {
		ret = fail("cannot stat", dir, errno);
		close(fd);
		return ret;
	}
	ret = add_tmpfs(dir, st.st_mode);
	if (ret) {
		close(fd);
		return ret;
	}
	/* fd still opens the covered directory: read it, and bind from it. */
	d = fdopendir(fd);
	if (!d) {
		ret = fail("cannot read", dir, errno);
		close(fd);
		return ret;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			bind_back(fd, dir, e->d_name);
	closedir(d);
	return 0;
}

int urnic_mounts_tmpfs(const char *dir)
{
	char parent[PATH_MAX];
	struct stat st;
	char *slash;
	int ret;

	if (stat(dir, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return fail("cannot mount on", dir, ENOTDIR);
		return add_tmpfs(dir, 0755);
	}
	if (errno != ENOENT)
		return fail("cannot stat", dir, errno);
	snprintf(parent, sizeof(parent), "%s", dir);
	slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return fail("cannot add", dir, EINVAL);
	*slash = '\0';
	/* Never write into the host's filesystems: into a tmpfs of ours only. */
	if (!is_ours(parent)) {
		ret = shadow(parent);
		if (ret)
			return ret;
	}
	if (mkdir(dir, 0755) < 0)
		return fail("cannot make", dir, errno);
	return add_tmpfs(dir, 0755);
}

int urnic_mounts_bind(const char *dev, const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

	if (fd < 0)
		return fail("cannot make", path, errno);
	close(fd);
	if (mount(dev, path, NULL, MS_BIND, NULL) < 0)
		return fail("cannot bind a device node onto", path, errno);
	return 0;
}

int urnic_mounts_seal(void)
{
	for (int i = 0; i < ntmpfs; i++)
		if (mount(NULL, tmpfs_dirs[i], NULL,
			  MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  NULL) < 0)
			return fail("cannot make read-only", tmpfs_dirs[i], errno);
	return 0;
}
