/* SPDX-License-Identifier: MIT */
/*
 * run.c - `urnic run [--addr IP[,IP...]] [--] PROGRAM [ARGS]`: runs a program over
 * urnic with the view of its devices that tools expect from a kernel driver. Sets
 * LD_LIBRARY_PATH to the directory of urnic's libibverbs.so.1 (the one this tool runs
 * with) and URNIC_ADDR, enters a mount namespace of its own (mounts.h), mounts the
 * sysfs view there (sysfs_tree.h) and executes the program in its place. The view is
 * the namespace's alone: the host and its other processes see nothing of it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "mounts.h"
#include "sysfs_tree.h"

/* The directory of the libibverbs.so.1 this tool is linked with (its RUNPATH: build/lib
 * in the build tree, wherever an install puts it): urnic's, which the program must load
 * too, rather than the system's. */
static int lib_dir(char *dir, size_t len)
{
	Dl_info info;
	char *slash;

	if (!dladdr((void *)ibv_open_device, &info) || !info.dli_fname ||
	    !realpath(info.dli_fname, dir))
		return -ENOENT;
	slash = strrchr(dir, '/');
	if (!slash || (size_t)(slash - dir) >= len)
		return -ENOENT;
	*slash = '\0';
	return 0;
}

static int set_library_path(void)
{
	const char *old = getenv("LD_LIBRARY_PATH");
	char dir[PATH_MAX], *path;
	int ret;

	if (lib_dir(dir, sizeof(dir))) {
		fprintf(stderr,
			"urnic run: cannot find the directory of urnic's libibverbs.so.1\n");
		return -ENOENT;
	}
	if (old && *old) {
		if (asprintf(&path, "%s:%s", dir, old) < 0)
			return -ENOMEM;
	} else {
		path = strdup(dir);
		if (!path)
			return -ENOMEM;
	}
	ret = setenv("LD_LIBRARY_PATH", path, 1);
	free(path);
	return ret ? -errno : 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: urnic run [--addr IP[,IP...]] [--] PROGRAM [ARGS]\n");
	return URNIC_EXIT_USAGE;
}

int urnic_run_exec(const char *cmd, const char *addr, char **argv)
{
	/* Before the library first lists its devices (it reads URNIC_ADDR once). */
	if (addr && setenv("URNIC_ADDR", addr, 1))
		return URNIC_EXIT_FAIL;
	if (set_library_path() || urnic_mounts_enter() || urnic_sysfs_tree_mount() ||
	    urnic_mounts_seal())
		return URNIC_EXIT_FAIL;
	execvp(argv[0], argv);
	fprintf(stderr, "urnic %s: cannot run %s: %s\n", cmd, argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126; /* as env(1) and the shells */
}

int urnic_cmd_run(int argc, char **argv)
{
	const char *addr = NULL;
	int i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--addr") == 0 && i + 1 < argc)
			addr = argv[++i];
		else if (strncmp(argv[i], "--addr=", 7) == 0)
			addr = argv[i] + 7;
		else if (argv[i][0] == '-')
			return usage();
		else
			break;
	}
	if (i >= argc || (addr && !*addr))
		return usage();
	return urnic_run_exec("run", addr, argv + i);
}
