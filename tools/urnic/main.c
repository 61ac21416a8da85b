/* SPDX-License-Identifier: MIT */
/*
 * main.c - `urnic`, the command-line tool: lists the devices a process would see,
 * reads the counters of running processes and runs a program over urnic with a sysfs
 * view of its devices, capturing its packets if asked. Subcommands live one per file.
 */
#include <stdio.h>
#include <string.h>

#include "commands.h"

static const char usage[] =
	"usage: urnic <command> [arguments]\n"
	"\n"
	"commands:\n"
	"  devices                  list the devices this process would see: name, kind\n"
	"                           (roce, iwarp, uet), address, GID (RoCEv2 and UET:\n"
	"                           GID[1], the address; iWARP: the MAC, as siw), port\n"
	"                           state (ACTIVE, or DOWN when no interface that is up\n"
	"                           holds the address) and active MTU\n"
	"  counters [--json] [--qp] [--all] [pid]\n"
	"                           print the counters that are not zero (--all: every one)\n"
	"                           of every device of every running urnic process (or of\n"
	"                           process <pid>) and its network namespace (which one is\n"
	"                           the caller's), read from /dev/shm/urnic.<pid>.<device>;\n"
	"                           --qp adds each QP's share, --json prints one JSON object\n"
	"                           (with every counter and every QP's counters)\n"
	"  run [--addr IP[,IP...]] [--per-rank] [--] PROGRAM [ARGS]\n"
	"                           run PROGRAM over urnic (LD_LIBRARY_PATH to urnic's\n"
	"                           libibverbs.so.1, URNIC_ADDR=IP,...) in a mount namespace\n"
	"                           of its own where /sys/class/infiniband,\n"
	"                           /sys/class/infiniband_verbs and /dev/infiniband show\n"
	"                           urnic's devices, for tools that look there; a user\n"
	"                           namespace when not root; --per-rank: only the address\n"
	"                           of the list whose place is the MPI local rank\n"
	"  trace [--addr IP[,IP...]] [-w FILE] [--] PROGRAM [ARGS]\n"
	"                           run PROGRAM as `run` does, with URNIC_PCAP=FILE (default\n"
	"                           urnic-%p.pcapng; %p: the process id, %d: the device):\n"
	"                           every packet its devices send and receive, as on the\n"
	"                           wire after segmentation, in a pcapng file, the ones\n"
	"                           the device refused commented with their drop counter\n"
	"  help                     this text\n"
	"  --version                urnic's version\n"
	"\n"
	"Devices come from URNIC_ADDR=<ip>[,<ip>...], else from the file $URNIC_CONFIG\n"
	"(default /etc/urnic.conf, lines `device <ip>`), else from the host's addresses.\n"
	"A bad value in a URNIC_* variable or in that file is said on stderr and no device\n"
	"opens (README, \"Configuration\").\n";

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "devices", urnic_cmd_devices },
	{ "counters", urnic_cmd_counters },
	{ "run", urnic_cmd_run },
	{ "trace", urnic_cmd_trace },
};

int main(int argc, char **argv)
{
	if (argc < 2) {
		fputs(usage, stderr);
		return URNIC_EXIT_USAGE;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0) {
		fputs(usage, stdout);
		return URNIC_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
		printf("urnic %s\n", URNIC_VERSION);
		return URNIC_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 2, argv + 2);
	fprintf(stderr, "urnic: unknown command '%s' (try 'urnic help')\n", argv[1]);
	return URNIC_EXIT_USAGE;
}
