/* SPDX-License-Identifier: MIT */
/*
 * mapping.c - registration checks against the process's mappings (mapping.h).
 *
 * ib_umem_get: an end that wraps, or wraps once page-aligned, is EINVAL, as are no
 * pages and more than UINT_MAX of them; then get_user_pages over every page, with
 * FOLL_WRITE when the rights write (ib_access_writable), fails with EFAULT on a page not
 * mapped, not readable (without FOLL_FORCE, which recent kernels no longer pass), not
 * writable with FOLL_WRITE, or in a VM_IO/VM_PFNMAP area such as [vvar].
 * /proc/self/maps lists the areas in address order with their rights, so one pass over
 * it answers for a range of any size.
 */
#include "verbs/mapping.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

/* One line of /proc/self/maps: "start-end rwxp offset dev inode   path". */
struct area {
	uintptr_t start, end;
	bool read, write, pfn;
};

static const char *hex(const char *p, const char *end, uintptr_t *v)
{
	*v = 0;
	for (; p < end; p++) {
		unsigned d;

		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (*p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else
			break;
		*v = *v << 4 | d;
	}
	return p;
}

static const char *skip_field(const char *p, const char *end)
{
	while (p < end && *p == ' ')
		p++;
	while (p < end && *p != ' ')
		p++;
	return p;
}

static bool parse(const char *p, const char *end, struct area *a)
{
	p = hex(p, end, &a->start);
	if (p >= end || *p != '-')
		return false;
	p = hex(p + 1, end, &a->end);
	if (end - p < 5 || *p != ' ')
		return false;
	a->read = p[1] == 'r';
	a->write = p[2] == 'w';
	p = skip_field(skip_field(skip_field(p + 5, end), end), end); /* offset, dev, inode */
	while (p < end && *p == ' ')
		p++;
	/* The vDSO's data pages are a PFN mapping, which get_user_pages refuses. */
	a->pfn = end - p >= 5 && memcmp(p, "[vvar", 5) == 0;
	return true;
}

/* Walks the areas from lo: 0 once [lo, hi) is covered by areas that allow the access,
 * -EFAULT at a gap or an area that does not. */
static int walk(int fd, uintptr_t lo, uintptr_t hi, bool writable)
{
	char buf[8192];
	size_t have = 0;
	uintptr_t next = lo;

	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof(buf) - have);
		char *p = buf, *nl;

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EFAULT; /* the list ended before hi: unmapped */
		have += (size_t)n;
		while ((nl = memchr(p, '\n', have - (size_t)(p - buf)))) {
			struct area a;

			if (parse(p, nl, &a) && a.end > next) {
				if (a.start > next || !a.read || (writable && !a.write) || a.pfn)
					return -EFAULT;
				next = a.end;
				if (next >= hi)
					return 0;
			}
			p = nl + 1;
		}
		have -= (size_t)(p - buf);
		if (have == sizeof(buf))
			return 0; /* a line longer than any the kernel writes: cannot tell */
		memmove(buf, p, have);
	}
}

int urnic_mapping_check(uintptr_t addr, size_t len, bool writable)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), lo, hi, npages;
	int fd, ret;

	if (len > UINTPTR_MAX - addr || addr + len > UINTPTR_MAX - (page - 1))
		return -EINVAL;
	lo = addr & ~(page - 1);
	hi = (addr + len + page - 1) & ~(page - 1);
	npages = (hi - lo) / page;
	if (npages == 0 || npages > UINT_MAX)
		return -EINVAL;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return lo ? 0 : -EFAULT; /* no /proc (a chroot): only page 0 is known unmapped */
	ret = walk(fd, lo, hi, writable);
	close(fd);
	return ret;
}
