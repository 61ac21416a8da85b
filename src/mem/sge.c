/* SPDX-License-Identifier: MIT */
/*
 * sge.c - walking scatter/gather lists: zero-copy gather for transmit, checked copy
 * for receive. See sge.h.
 */
#include "mem/sge.h"

#include <errno.h>
#include <string.h>

int urnic_sge_gather(const struct urnic_mr_table *t, const struct urnic_pd *pd,
		     const struct urnic_sge *sge, uint32_t nsge, uint32_t off, uint32_t len,
		     uint32_t need, struct urnic_frag *frags, uint32_t max_frags)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < nsge && len > 0; i++) {
		uint32_t take;
		uint8_t *host;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		take = sge[i].length - off;
		if (take > len)
			take = len;
		if (n == max_frags)
			return -EFAULT;
		if (urnic_mr_resolve(t, pd, sge[i].lkey, sge[i].addr + off, take, need, &host) !=
		    URNIC_MR_OK)
			return -EFAULT;
		frags[n++] = (struct urnic_frag){ host, take };
		len -= take;
		off = 0;
	}
	return len ? -EMSGSIZE : (int)n;
}

int urnic_sge_scatter(const struct urnic_mr_table *t, const struct urnic_pd *pd,
		      const struct urnic_sge *sge, uint32_t nsge, uint32_t off, const uint8_t *data,
		      uint32_t len)
{
	struct urnic_frag frags[URNIC_MAX_SGE];
	int n;

	/* Resolve every entry first, then copy: nothing is written unless all of it can
	 * be (validate, then mutate). */
	n = urnic_sge_gather(t, pd, sge, nsge, off, len, URNIC_ACCESS_LOCAL_WRITE, frags,
			     URNIC_MAX_SGE);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		memcpy((void *)frags[i].base, data, frags[i].len);
		data += frags[i].len;
	}
	return 0;
}
