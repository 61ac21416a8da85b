/* SPDX-License-Identifier: MIT */
/*
 * counters_file.h - reading a device's counters file, /dev/shm/urnic.<pid>.<dev>, whose
 * layout is src/dev/counters_shm.h and whose counters are src/stats/counters.def.
 * Used by `urnic counters` and by urnic-demo's summary. Read-only: the engine thread of
 * the owning process is the file's only writer, and a value read may be one update
 * behind. Scanning /dev/shm for files is the caller's business.
 */
#ifndef URNIC_TOOLS_COUNTERS_FILE_H
#define URNIC_TOOLS_COUNTERS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum urnic_ctrfile_counter {
#define URNIC_COUNTER(name, desc) URNIC_CTRFILE_##name,
#include "stats/counters.def"
#undef URNIC_COUNTER
	URNIC_CTRFILE_COUNT
};

enum {
	/* Values kept from one file: a newer library may keep more counters than this
	 * build has names for; those print by index. */
	URNIC_CTRFILE_MAX = 256,
};

extern const char *const urnic_ctrfile_names[URNIC_CTRFILE_COUNT];
extern const char *const urnic_ctrfile_descs[URNIC_CTRFILE_COUNT];

struct urnic_ctrfile {
	char path[300];
	pid_t pid;
	uid_t uid; /* the file's owner */
	char dev[32];
	char addr[64];
	uint32_t ncounters; /* values[] read from the file, at most URNIC_CTRFILE_MAX */
	uint64_t values[URNIC_CTRFILE_MAX];
	uint32_t qp_slots, qp_slot_bytes, qp_end; /* where the per-QP slots are */
};

/* One QP's counters, from the slots after the device's. */
struct urnic_ctrfile_qp {
	uint32_t qpn;
	uint8_t type;  /* enum ibv_qp_type */
	uint8_t state; /* enum ibv_qp_state */
	uint32_t ncounters;
	uint64_t values[URNIC_CTRFILE_MAX];
};

/* Writes "/dev/shm/urnic.<pid>.<dev>" into buf. Returns 0 or -ENAMETOOLONG. */
int urnic_ctrfile_path(char *buf, size_t len, pid_t pid, const char *dev);

/* Parses a /dev/shm entry name "urnic.<pid>.<dev>". Returns the pid, or -1 if the name
 * is not one of a counters file. */
pid_t urnic_ctrfile_name_pid(const char *name);

/* Reads one counters file. Returns 0, -errno from open/read, or -EBADMSG if the file
 * is not (yet) a counters file: short, wrong magic, or a pid other than `pid` (pass 0
 * to accept any). */
int urnic_ctrfile_read(const char *path, pid_t pid, struct urnic_ctrfile *out);

/* Calls each() for every live QP of a file read by urnic_ctrfile_read, in QPN index
 * order. Returns 0 or -errno; stops early with each()'s non-zero answer. */
int urnic_ctrfile_each_qp(const struct urnic_ctrfile *f,
			  int (*each)(const struct urnic_ctrfile_qp *q, void *arg), void *arg);

/* "RC", "UC", "UD", "XRC_SEND", "XRC_RECV" and "RESET" ... "ERR", or "?" */
const char *urnic_ctrfile_qp_type_name(uint8_t type);
const char *urnic_ctrfile_qp_state_name(uint8_t state);

/* True if process `pid` exists: a file whose owner is gone is stale (the library
 * unlinks its file at close, a killed process cannot). */
bool urnic_ctrfile_pid_alive(pid_t pid);

/* True if the file f was read from can be process pid's: both belong to one user (the
 * owner of /proc/<pid>, proc(5)). /dev/shm is open to every user, who may put a file
 * under any name, another user's process's pid included. */
bool urnic_ctrfile_owner_matches(const struct urnic_ctrfile *f, pid_t pid);

/* The sum of every drop_* counter (packets dropped for any reason). */
uint64_t urnic_ctrfile_drops(const struct urnic_ctrfile *f);

#endif
