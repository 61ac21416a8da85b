/* SPDX-License-Identifier: MIT */
/*
 * counters.c - `urnic counters [--json] [--qp] [--all] [pid]`: every counters file under
 * /dev/shm (one per open device of each process, counters_shm.h), in pid and device
 * order, with the network namespace of the process (/proc/<pid>/ns/net: an address
 * means the interface of that namespace) and each live QP's share of the counters (--qp
 * in text; always in JSON). Text shows the counters that are not zero, --all every one;
 * JSON always carries every one.
 * Files whose process is gone are stale (a killed process leaves its file behind)
 * and skipped, with one note on stderr. So are files of other users' processes, which
 * their owners keep private unless they set URNIC_COUNTERS_MODE, and files whose owner
 * is not their process's (another user may put any file in /dev/shm).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "counters_file.h"

struct found {
	struct urnic_ctrfile *files;
	size_t n, cap;
	unsigned int stale;
	unsigned int unreadable; /* other users' files we may not read */
	unsigned int foreign;	 /* owned by another user than their process's */
};

static int add(struct found *f, const struct urnic_ctrfile *c)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 8;
		struct urnic_ctrfile *p = realloc(f->files, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		f->files = p;
		f->cap = cap;
	}
	f->files[f->n++] = *c;
	return 0;
}

static int by_pid_then_dev(const void *a, const void *b)
{
	const struct urnic_ctrfile *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return strcmp(x->dev, y->dev);
}

/* Collects the live counters files of process `only` (0: of every process). */
static int scan(struct found *f, pid_t only)
{
	struct urnic_ctrfile c;
	struct dirent *de;
	DIR *dir;
	int ret = 0;

	dir = opendir("/dev/shm");
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid_t pid = urnic_ctrfile_name_pid(de->d_name);
		char path[300];
		int err;

		if (pid < 0 || (only && pid != only))
			continue;
		snprintf(path, sizeof(path), "/dev/shm/%s", de->d_name);
		err = urnic_ctrfile_read(path, pid, &c);
		if (err == -EACCES && urnic_ctrfile_pid_alive(pid))
			f->unreadable++;
		if (err < 0)
			continue; /* gone since readdir, being created, private or not ours */
		if (!urnic_ctrfile_pid_alive(pid)) {
			f->stale++;
			continue;
		}
		if (!urnic_ctrfile_owner_matches(&c, pid)) {
			f->foreign++;
			continue;
		}
		ret = add(f, &c);
		if (ret)
			break;
	}
	closedir(dir);
	if (f->n)
		qsort(f->files, f->n, sizeof(*f->files), by_pid_then_dev);
	return ret;
}

static const char *counter_name(uint32_t i, char *buf, size_t len)
{
	if (i < URNIC_CTRFILE_COUNT)
		return urnic_ctrfile_names[i];
	snprintf(buf, len, "counter_%u", i); /* kept by a newer library than this tool */
	return buf;
}

static int print_qp_text(const struct urnic_ctrfile_qp *q, void *arg)
{
	(void)arg;
	printf("  QP 0x%06x %s %s\n", q->qpn, urnic_ctrfile_qp_type_name(q->type),
	       urnic_ctrfile_qp_state_name(q->state));
	for (uint32_t i = 0; i < q->ncounters; i++) {
		char buf[32];

		if (q->values[i])
			printf("    %-20s %14llu\n", counter_name(i, buf, sizeof(buf)),
			       (unsigned long long)q->values[i]);
	}
	return 0;
}

/* The network namespace of process pid ("self": ours), as "net:[inode]" in buf; "" when
 * it cannot be read (another user's process, or gone). */
static const char *netns_of(const char *pid, char *buf, size_t len)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%s/ns/net", pid);
	n = readlink(link, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	return buf;
}

/* "net:[4026531840] (this namespace)": where the process's address is. */
static void print_netns(pid_t pid)
{
	char self[64], theirs[64], num[16];

	snprintf(num, sizeof(num), "%d", (int)pid);
	netns_of("self", self, sizeof(self));
	if (!*netns_of(num, theirs, sizeof(theirs)))
		printf("network namespace unknown (not readable)");
	else
		printf("%s (%s)", theirs,
		       strcmp(self, theirs) == 0 ? "this namespace" : "another namespace");
}

static void print_text(const struct found *f, bool qps, bool all)
{
	for (size_t d = 0; d < f->n; d++) {
		const struct urnic_ctrfile *c = &f->files[d];
		bool shown = false;

		printf("%s%s (%s), pid %d, ", d ? "\n" : "", c->dev, c->addr, (int)c->pid);
		print_netns(c->pid);
		putchar('\n');
		for (uint32_t i = 0; i < c->ncounters; i++) {
			char buf[32];

			if (!all && !c->values[i])
				continue;
			printf("  %-22s %14llu  %s\n", counter_name(i, buf, sizeof(buf)),
			       (unsigned long long)c->values[i],
			       i < URNIC_CTRFILE_COUNT ? urnic_ctrfile_descs[i] : "");
			shown = true;
		}
		if (!shown)
			printf("  (every counter is zero)\n");
		if (qps) {
			printf("  per QP (counters that moved):\n");
			urnic_ctrfile_each_qp(c, print_qp_text, NULL);
		}
	}
}

/* A JSON string: the file's device and address are the only text read from outside. */
static void json_string(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			printf("\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			printf("\\u%04x", ch);
		else
			putchar(ch);
	}
	putchar('"');
}

static int print_qp_json(const struct urnic_ctrfile_qp *q, void *arg)
{
	bool *first = arg;

	printf("%s\n    {\"qpn\": %u, \"type\": \"%s\", \"state\": \"%s\", \"counters\": {",
	       *first ? "" : ",", q->qpn, urnic_ctrfile_qp_type_name(q->type),
	       urnic_ctrfile_qp_state_name(q->state));
	for (uint32_t i = 0; i < q->ncounters; i++) {
		char buf[32];

		printf("%s\"%s\": %llu", i ? ", " : "", counter_name(i, buf, sizeof(buf)),
		       (unsigned long long)q->values[i]);
	}
	printf("}}");
	*first = false;
	return 0;
}

static void print_json(const struct found *f)
{
	bool first;

	printf("{\"devices\": [");
	for (size_t d = 0; d < f->n; d++) {
		const struct urnic_ctrfile *c = &f->files[d];

		char self[64], theirs[64], num[16];

		snprintf(num, sizeof(num), "%d", (int)c->pid);
		netns_of("self", self, sizeof(self));
		netns_of(num, theirs, sizeof(theirs));
		printf("%s\n  {\"pid\": %d, \"device\": ", d ? "," : "", (int)c->pid);
		json_string(c->dev);
		printf(", \"address\": ");
		json_string(c->addr);
		printf(", \"netns\": ");
		json_string(theirs);
		printf(", \"netns_is_callers\": %s", strcmp(self, theirs) == 0 ? "true" : "false");
		printf(", \"counters\": {");
		for (uint32_t i = 0; i < c->ncounters; i++) {
			char buf[32];

			printf("%s\n    \"%s\": %llu", i ? "," : "",
			       counter_name(i, buf, sizeof(buf)), (unsigned long long)c->values[i]);
		}
		printf("\n  }, \"qps\": [");
		first = true;
		urnic_ctrfile_each_qp(c, print_qp_json, &first);
		printf("%s]}", first ? "" : "\n  ");
	}
	printf("%s]}\n", f->n ? "\n" : "");
}

static int parse_pid(const char *s, pid_t *pid)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v == 0 || v > 0x7fffffffu)
		return -EINVAL;
	*pid = (pid_t)v;
	return 0;
}

int urnic_cmd_counters(int argc, char **argv)
{
	struct found f = { 0 };
	bool json = false, qps = false, all = false;
	pid_t pid = 0;
	int ret;

	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(argv[i], "--qp") == 0) {
			qps = true;
		} else if (strcmp(argv[i], "--all") == 0) {
			all = true;
		} else if (pid == 0 && parse_pid(argv[i], &pid) == 0) {
			continue;
		} else {
			fprintf(stderr,
				"urnic: counters: unexpected argument '%s'\n"
				"usage: urnic counters [--json] [--qp] [--all] [pid]\n",
				argv[i]);
			return URNIC_EXIT_USAGE;
		}
	}
	if (pid && !urnic_ctrfile_pid_alive(pid)) {
		fprintf(stderr, "urnic: no process %d\n", (int)pid);
		return URNIC_EXIT_FAIL;
	}
	ret = scan(&f, pid);
	if (ret) {
		fprintf(stderr, "urnic: cannot read /dev/shm: %s\n", strerror(-ret));
		free(f.files);
		return URNIC_EXIT_FAIL;
	}
	if (f.stale)
		fprintf(stderr, "urnic: skipped %u stale counters file%s of exited processes\n",
			f.stale, f.stale == 1 ? "" : "s");
	if (f.unreadable)
		fprintf(stderr,
			"urnic: %u counters file%s of other users' processes not readable (private "
			"unless their owner sets URNIC_COUNTERS_MODE)\n",
			f.unreadable, f.unreadable == 1 ? "" : "s");
	if (f.foreign)
		fprintf(stderr,
			"urnic: skipped %u counters file%s owned by another user than their "
			"process's\n",
			f.foreign, f.foreign == 1 ? "" : "s");
	if (pid && f.n == 0 && !json) {
		fprintf(stderr, "urnic: process %d has no urnic device open\n", (int)pid);
	} else if (json) {
		print_json(&f);
	} else if (f.n == 0) {
		printf("no running process has a urnic device open\n");
	} else {
		print_text(&f, qps, all);
	}
	ret = pid && f.n == 0 ? URNIC_EXIT_FAIL : URNIC_EXIT_OK;
	free(f.files);
	return ret;
}
