#!/bin/sh
# SPDX-License-Identifier: MIT
# hostile.sh SCENARIO ATTACKER TARGET - one hostile-peer scenario (validation.c,
# requests.c, sequence.c or flood.c; attacker.c runs it) against a live urnic device
# (target.c), in a network namespace of its own.
#
#   private network namespace (unshare -n as root, unshare -rn otherwise), lo up:
#
#     127.0.0.2  hostile_target: urnic0 in a verbs app, UDP 4791   (child of the attacker,
#         ^                                                          commands on its stdin,
#         |  RoCEv2 over UDP, port 4791 both ways:                   answers on its stdout,
#         |  hand-made requests/responses in, ACK/NAK/data out       counters in /dev/shm)
#         v
#     127.0.0.3  hostile_attacker: a plain UDP socket on 4791 (no urnic in it)
#     127.0.0.4  its second socket: a source address no QP of the target knows
#
#   Fallback when no namespace can be made: the host's loopback, with 127.0.3.(2*SLOT),
#   127.0.3.(2*SLOT+1) and 127.0.4.SLOT, addresses no other test uses.
#
# Cleanup: the target dies with the attacker (PR_SET_PDEATHSIG), the attacker removes a
# counters file a dead target left in /dev/shm, the namespace goes with its last process;
# `timeout` bounds the whole run. Exit: the attacker's status (0 pass, 1 a check failed).
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 SCENARIO ATTACKER TARGET" >&2
	exit 2
fi
scenario=$1
attacker=$2
target=$3

if [ -z "${URNIC_HOSTILE_NS:-}" ]; then
	if command -v ip >/dev/null 2>&1; then
		for ns in "unshare -n" "unshare -rn"; do
			if $ns ip link set lo up 2>/dev/null; then
				URNIC_HOSTILE_NS=private exec $ns sh "$0" "$@"
			fi
		done
	fi
	URNIC_HOSTILE_NS=host
fi
export URNIC_HOSTILE_NS

if [ "$URNIC_HOSTILE_NS" = private ]; then
	ip link set lo up || { echo "hostile: cannot bring lo up"; exit 1; }
	tgt=127.0.0.2
	me=127.0.0.3
	spoof=127.0.0.4
else
	slot=${SLOT:-1}
	tgt=127.0.3.$((2 * slot))
	me=127.0.3.$((2 * slot + 1))
	spoof=127.0.4.$slot
	echo "hostile: NOTE: no private network namespace; using the host's loopback" \
		"($tgt, $me, $spoof)"
fi

timeout -k 5 50 "$attacker" --target "$target" --target-addr "$tgt" --addr "$me" \
	--spoof-addr "$spoof" "$scenario"
rc=$?
[ $rc -eq 124 ] && echo "hostile: $scenario: timed out after 50 s"
exit $rc
