#!/bin/sh
# SPDX-License-Identifier: MIT
# pingpong_tool.sh - Debian's unmodified ibv_ud_pingpong, ibv_uc_pingpong or
# ibv_srq_pingpong, server and client, over the drop-in.
#
#   pingpong_tool.sh [--ring] TOOL RUN...: for each RUN (a quoted option list, or "defaults"),
#   one run of `TOOL -g 1 [-c] OPTS` in a private network namespace (common.sh):
#
#     127.0.0.2 (server) <-- RoCEv2: UD datagrams / UC messages / RC on 16 QPs sharing
#     127.0.0.3 (client) -->          one SRQ per side (ibv_srq_pingpong -q N: N QPs)
#
#   Both sides must exit 0, print "bytes in ... seconds", report no invalid data (-c
#   when the tool has it) and count no ICRC/header drops (pp_pair). UD and UC must
#   also send and receive no ACK at all and drop nothing (no Q_Key mismatch, no
#   missing receive WQE, no broken UC message: loopback loses nothing). --ring: both
#   receive from packet rings (URNIC_RING=1, ring_check in common.sh).
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/pp_tool.sh"
sys_setup "$@"
RING=0
if [ "${1:-}" = --ring ]; then
	shift
	RING=1
	ring_on
fi
tool=${1:?usage: pingpong_tool.sh [--ring] TOOL RUN...}
shift
[ $# -gt 0 ] || set -- defaults
pp_tool "$tool"

for run in "$@"; do
	[ "$run" = defaults ] && run=
	tag=$(echo "${tool#ibv_} $run" | tr -s ' ' '_' | sed 's/_$//')
	# shellcheck disable=SC2086 # the option list is split on purpose
	pp_run "$tag" 120 $run
	[ $RING = 0 ] || ring_check "$SYS_WORK/$tag".*.log
	case $tool in
	ibv_ud_pingpong | ibv_uc_pingpong)
		for log in "$SYS_WORK/$tag".*.log; do
			for c in ack_sent ack_rcvd drop_bad_qkey drop_no_rwqe drop_uc_seq \
				drop_uc_invalid drop_ud_too_long drop_recv_too_long drop_qp_error; do
				v=$(counter "$log" $c)
				[ "$v" = 0 ] || fail "$tag: $c = $v in $(basename "$log")"
			done
		done
		;;
	esac
done
say ok
