/* SPDX-License-Identifier: MIT */
/*
 * run.c - `urnic run [--addr IP[,IP...]] [--per-rank] [--] PROGRAM [ARGS]`: runs a
 * program over urnic with the view of its devices that tools expect from a kernel
 * driver. Sets LD_LIBRARY_PATH to the directory of urnic's libibverbs.so.1 (the one this
 * tool runs with) and URNIC_ADDR (with --per-rank, the one address of the list that is
 * this MPI rank's), enters a mount namespace of its own (mounts.h), mounts the sysfs
 * view there (sysfs_tree.h) and executes the program in its place. The view is the
 * namespace's alone: the host and its other processes see nothing of it.
 */
#include <ctype.h>
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

/* The variables in which MPI launchers give each process its rank among those of its
 * machine: Open MPI's mpirun, MPICH's Hydra mpiexec, Slurm's srun. */
static const char *const local_rank_vars[] = {
	"OMPI_COMM_WORLD_LOCAL_RANK",
	"MPI_LOCALRANKID",
	"SLURM_LOCALID",
};

/* Replaces the list in URNIC_ADDR with its entry number <local rank>: ranks on one
 * machine each get an address of their own, as ranks on separate hosts have. */
static int pick_rank_addr(void)
{
	const char *list = getenv("URNIC_ADDR"), *var = NULL, *val = NULL, *p;
	unsigned long rank, i = 0;
	char *end, *addr;
	size_t len;
	int ret;

	for (size_t k = 0; k < sizeof(local_rank_vars) / sizeof(local_rank_vars[0]); k++) {
		val = getenv(local_rank_vars[k]);
		if (val && *val) {
			var = local_rank_vars[k];
			break;
		}
	}
	if (!var) {
		fprintf(stderr, "urnic run: --per-rank: none of OMPI_COMM_WORLD_LOCAL_RANK, "
				"MPI_LOCALRANKID, SLURM_LOCALID is set (run it under mpirun, "
				"mpiexec or srun)\n");
		return -EINVAL;
	}
	errno = 0;
	rank = strtoul(val, &end, 10);
	if (errno || *end || !isdigit((unsigned char)*val)) {
		fprintf(stderr, "urnic run: --per-rank: %s=\"%s\" is not a rank\n", var, val);
		return -EINVAL;
	}
	if (!list || !*list) {
		fprintf(stderr, "urnic run: --per-rank needs addresses (--addr IP,IP,... or "
				"URNIC_ADDR)\n");
		return -EINVAL;
	}
	for (p = list; i < rank; p++) {
		if (!*p)
			break;
		if (*p == ',')
			i++;
	}
	len = strcspn(p, ",");
	if (i < rank || !len) {
		fprintf(stderr,
			"urnic run: --per-rank: local rank %lu (%s) has no address in \"%s\"\n",
			rank, var, list);
		return -EINVAL;
	}
	addr = strndup(p, len);
	if (!addr)
		return -ENOMEM;
	ret = setenv("URNIC_ADDR", addr, 1) ? -errno : 0;
	free(addr);
	return ret;
}

static int usage(void)
{
	fprintf(stderr, "usage: urnic run [--addr IP[,IP...]] [--per-rank] [--] PROGRAM [ARGS]\n");
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
	int i, per_rank = 0;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		}
		if (strcmp(argv[i], "--addr") == 0 && i + 1 < argc)
			addr = argv[++i];
		else if (strncmp(argv[i], "--addr=", 7) == 0)
			addr = argv[i] + 7;
		else if (strcmp(argv[i], "--per-rank") == 0)
			per_rank = 1;
		else if (argv[i][0] == '-')
			return usage();
		else
			break;
	}
	if (i >= argc || (addr && !*addr))
		return usage();
	if (per_rank) {
		/* The rank's address out of the list: the list first, as --addr gives it. */
		if ((addr && setenv("URNIC_ADDR", addr, 1)) || pick_rank_addr())
			return URNIC_EXIT_FAIL;
		addr = NULL;
	}
	return urnic_run_exec("run", addr, argv + i);
}
