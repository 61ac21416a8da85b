/* SPDX-License-Identifier: MIT */
/*
 * commands.h - the subcommands of the `urnic` tool. Each takes the arguments after its
 * name and returns the process exit status: 0 done, 1 failed, 2 bad usage.
 */
#ifndef URNIC_TOOLS_COMMANDS_H
#define URNIC_TOOLS_COMMANDS_H

enum {
	URNIC_EXIT_OK = 0,
	URNIC_EXIT_FAIL = 1,
	URNIC_EXIT_USAGE = 2,
};

int urnic_cmd_devices(int argc, char **argv);
int urnic_cmd_counters(int argc, char **argv);
int urnic_cmd_run(int argc, char **argv);

#endif
