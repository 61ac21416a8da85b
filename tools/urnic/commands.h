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
int urnic_cmd_trace(int argc, char **argv);

/* What `urnic run` and `urnic trace` share (run.c): argv[0] run as `urnic run` runs
 * it, with URNIC_ADDR=addr unless NULL. Returns only on failure, the exit status; cmd
 * names the command in messages. */
int urnic_run_exec(const char *cmd, const char *addr, char **argv);

#endif
