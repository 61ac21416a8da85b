#!/bin/sh
# SPDX-License-Identifier: MIT
# loss.sh - ibv_rc_pingpong completes, payload validated, when 5% of RoCEv2 packets
# are lost on the path: RC retransmission (PSN sequence NAKs, retry timer) recovers.
#
#   private namespace, lo:
#     127.0.0.2 (server) --UDP 4791--> [nft input: numgen random mod 100 < 5 drop] --> 127.0.0.3
#     127.0.0.3 (client) --UDP 4791--> [same rule, both directions]                --> 127.0.0.2
#   The drop is on the input hook, after the sender's sendmmsg() succeeded, as a lossy
#   wire would (an output-hook drop makes sendmmsg() fail with EPERM instead).
#   Runs -s 4096 -n 500 and -s 65536 -n 200 (MTU 1024); asserts per run that nft dropped
#   packets and the devices retransmitted (retransmit_pkts > 0), besides pp_pair's checks.
#   A run that hits ibv_rc_pingpong's teardown race (a lost final ACK; see pp_pair) is
#   run again, at most four times (CI once met the race three times in a row; 1 run in
#   ~20 meets it here).
#   Needs a private namespace (never touches the host's nftables): skips otherwise.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
# The loss is nftables' on lo: the packets must go through the socket (no lanes).
lanes_off
[ "$URNIC_SYS_NETNS" = private ] ||
	skip "no private network namespace: will not add nftables rules to the host"
command -v nft >/dev/null || fail "nft not found (nftables)"

if ! nft add table inet urnic_loss ||
	! nft add chain inet urnic_loss c '{ type filter hook input priority 0; policy accept; }' ||
	! nft add rule inet urnic_loss c udp dport 4791 \
		numgen random mod 100 '<' 5 counter drop; then
	fail "cannot install the nftables loss rule"
fi

nft_drops() {
	nft list chain inet urnic_loss c |
		awk '/counter packets/ { for (i = 1; i < NF; i++) if ($i == "packets") n = $(i + 1) }
			END { print n + 0 }'
}

sum() { echo $(($(counter "$1" "$3") + $(counter "$2" "$3"))); }

prev=0
races=0
for spec in "4096:-s 4096 -n 500" "65536:-s 65536 -n 200"; do
	tag=loss5_s${spec%%:*}
	attempt=1
	# shellcheck disable=SC2086
	until pp_pair "$tag" 120 ${spec#*:}; do
		# Only ibv_rc_pingpong's teardown race (common.sh, pp_pair) is run again.
		if [ "$PP_RACE" != 1 ] || [ $attempt -ge 5 ]; then
			fail "$PP_WHY"
		fi
		say "$tag: attempt $attempt hit ibv_rc_pingpong's teardown race ($PP_WHY:" \
			"the final ACK was lost after the peer had exited); running it again"
		races=$((races + 1))
		attempt=$((attempt + 1))
	done
	now=$(nft_drops)
	drops=$((now - prev))
	prev=$now
	s=$SYS_WORK/$tag.server.log
	c=$SYS_WORK/$tag.client.log
	say "$tag: nft dropped $drops packets (all attempts); last attempt: sent" \
		"$(sum "$s" "$c" tx_packets), received $(sum "$s" "$c" rx_packets)," \
		"retransmitted $(sum "$s" "$c" retransmit_pkts) (server+client)"
	[ "$drops" -gt 0 ] || fail "$tag: the nftables rule dropped nothing"
	[ "$(sum "$s" "$c" retransmit_pkts)" -gt 0 ] ||
		fail "$tag: $drops packets lost but retransmit_pkts = 0 on both sides"
done
say "ok ($races teardown-race re-runs)"
