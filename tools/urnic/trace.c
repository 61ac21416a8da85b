/* SPDX-License-Identifier: MIT */
/*
 * trace.c - `urnic trace [--addr IP[,IP...]] [-w FILE] [--] PROGRAM [ARGS]`: `urnic run`
 * with URNIC_PCAP=FILE (default urnic-%p.pcapng), so every packet the program's
 * devices send and receive lands in a pcapng file Wireshark reads (src/dev/trace.h).
 * FILE's %p is the process id of whichever urnic process writes it; the program runs
 * in this process's place, so its own file is named now and said before it starts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"

static int usage(void)
{
	fprintf(stderr, "usage: urnic trace [--addr IP[,IP...]] [-w FILE] [--] PROGRAM [ARGS]\n");
	return URNIC_EXIT_USAGE;
}

/* The file the program's own devices write: path with %p (this process's id, which the
 * program keeps) and %% replaced; %d stays, a device's name. */
static void say_file(const char *path)
{
	fputs("urnic trace: capturing to ", stderr);
	for (const char *c = path; *c; c++) {
		if (c[0] == '%' && c[1] == 'p') {
			fprintf(stderr, "%ld", (long)getpid());
			c++;
		} else if (c[0] == '%' && c[1] == '%') {
			fputc('%', stderr);
			c++;
		} else {
			fputc(*c, stderr);
		}
	}
	fputs(strstr(path, "%d") ? " (%d: each device's name)\n" : "\n", stderr);
}

int urnic_cmd_trace(int argc, char **argv)
{
	const char *addr = NULL, *file = "urnic-%p.pcapng";
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
		else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc)
			file = argv[++i];
		else if (argv[i][0] == '-')
			return usage();
		else
			break;
	}
	if (i >= argc || (addr && !*addr) || !*file)
		return usage();
	if (setenv("URNIC_PCAP", file, 1))
		return URNIC_EXIT_FAIL;
	say_file(file);
	return urnic_run_exec("trace", addr, argv + i);
}
