/* SPDX-License-Identifier: MIT */
/*
 * sge.c - walking scatter/gather lists: zero-copy gather for transmit, checked copy
 * for receive; on-demand entries through the table's odp calls. See sge.h.
 */
#include "mem/sge.h"

#include <errno.h>
#include <string.h>

#include "mem/odp.h"

_Static_assert(URNIC_MAX_SGE <= 32, "a bit per fragment in a 32-bit mask");

/* urnic_sge_gather without reading anything; bit i of *odp set when fragment i lies in
 * an on-demand region (fragments past the 32nd are never on demand: max_frags caps
 * them, URNIC_MAX_SGE). */
static int resolve(const struct urnic_mr_table *t, const struct urnic_pd *pd,
		   const struct urnic_sge *sge, uint32_t nsge, uint32_t off, uint32_t len,
		   uint32_t need, struct urnic_frag *frags, uint32_t max_frags, uint32_t *odp)
{
	uint32_t n = 0;

	*odp = 0;
	for (uint32_t i = 0; i < nsge && len > 0; i++) {
		struct urnic_mr_at at;
		uint32_t take;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		take = sge[i].length - off;
		if (take > len)
			take = len;
		if (n == max_frags || n == 32)
			return -EFAULT;
		if (urnic_mr_resolve(t, pd, sge[i].lkey, sge[i].addr + off, take, need, &at) !=
		    URNIC_MR_OK)
			return -EFAULT;
		if (at.odp)
			*odp |= 1u << n;
		frags[n++] = (struct urnic_frag){ at.host, take };
		len -= take;
		off = 0;
	}
	return len ? -EMSGSIZE : (int)n;
}

int urnic_sge_gather(const struct urnic_mr_table *t, const struct urnic_pd *pd,
		     const struct urnic_sge *sge, uint32_t nsge, uint32_t off, uint32_t len,
		     uint32_t need, struct urnic_frag *frags, uint32_t max_frags, uint8_t *bounce,
		     uint32_t bounce_len)
{
	uint32_t odp, at = 0;
	int n = resolve(t, pd, sge, nsge, off, len, need, frags, max_frags, &odp);

	if (n <= 0 || !odp || !bounce)
		return n;
	if (len > bounce_len)
		return -EMSGSIZE;
	for (int i = 0; i < n; i++) {
		if (odp & (1u << i)) {
			if (urnic_odp_read(t->odp, bounce + at, frags[i].base, frags[i].len))
				return -ENXIO;
			frags[i].base = bounce + at;
		}
		at += (uint32_t)frags[i].len;
	}
	return n;
}

int urnic_sge_host_segs(const struct urnic_mr_table *t, const struct urnic_pd *pd,
			const struct urnic_sge *sge, uint32_t nsge, uint32_t off, uint32_t len,
			uint32_t need, struct urnic_direct_seg *segs)
{
	struct urnic_frag frags[URNIC_MAX_SGE];
	uint32_t odp;
	int n = resolve(t, pd, sge, nsge, off, len, need, frags, URNIC_MAX_SGE, &odp);

	if (n < 0)
		return n;
	if (odp)
		return -ENXIO;
	for (int i = 0; i < n; i++)
		segs[i] = (struct urnic_direct_seg){ (uint64_t)(uintptr_t)frags[i].base,
						     frags[i].len };
	return n;
}

int urnic_sge_scatter(const struct urnic_mr_table *t, const struct urnic_pd *pd,
		      const struct urnic_sge *sge, uint32_t nsge, uint32_t off, const uint8_t *data,
		      uint32_t len)
{
	struct urnic_frag frags[URNIC_MAX_SGE];
	uint32_t odp;
	int n;

	/* Resolve every entry first, then copy: nothing is written unless all of it can
	 * be (validate, then mutate). */
	n = resolve(t, pd, sge, nsge, off, len, URNIC_ACCESS_LOCAL_WRITE, frags, URNIC_MAX_SGE,
		    &odp);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		if (odp & (1u << i)) {
			if (urnic_odp_write(t->odp, (void *)frags[i].base, data, frags[i].len))
				return -ENXIO;
		} else {
			memcpy((void *)frags[i].base, data, frags[i].len);
		}
		data += frags[i].len;
	}
	return 0;
}
