#!/bin/bash
# SPDX-License-Identifier: MIT
# run.sh - one interop scenario between urnic and the Linux kernel's rxe (Soft-RoCE) or
# siw (SoftiWARP), each side running rdma-core's unmodified tools, and checks of what
# went on the wire.
#
#   run.sh SCENARIO urnic_server|rxe_server      (run.sh -l lists the scenarios)
#   run.sh siw_SCENARIO urnic_server|siw_server  (the iWARP ones: siw0 in the VM, urnic's
#                                                 device URNIC_ADDR=iwarp:10.77.0.1)
#
#   netns "urnic-interop" (host kernel)                      qemu VM (TCG), Debian's kernel
#   urnic: Debian's tool over build/lib's libibverbs.so.1    rdma_rxe: rxe0 on eth0,
#     URNIC_ADDR=10.77.0.1 on br0 ── tap0 ── virtio-net ──── 10.77.0.11, the same tool
#     [nftables loss, input + output]   ^ tcpdump -i tap0 'udp port 4791'
#
# urnic_server: urnic runs the tool's server half and rxe the client; rxe_server: the
# reverse (siw_server for siw_*: siw's the server half). siw_* scenarios are checked as
# iwarp.sh says (sourced below), the rest as follows. Passes when both halves exit 0 with their success line, urnic counts no ICRC
# or header drop and no exhausted retry, tshark dissects every captured frame as RoCEv2
# with no malformed frame or expert warning, pcap_icrc finds every ICRC (both senders')
# correct, and the loss scenario shows both requesters retransmitting (urnic's
# retransmit_pkts, rxe's completer_retry_err). The first GOLDEN_PKTS/2 packets of each
# side are kept in $OUTDIR (and in $URNIC_INTEROP_GOLDEN/interop_SCENARIO_DIR.pcap
# when that is set: that is how tests/golden/interop/ is made).
#
# Environment: LIBDIR (build/lib, required), PCAP_ICRC (the sys_pcap_icrc helper,
# required), OUTDIR [a new temporary directory, removed on success], URNIC_INTEROP_CACHE
# [/var/cache/urnic-interop: the image of build-image.sh], URNIC_INTEROP_NETNS
# [urnic-interop], URNIC_INTEROP_GOLDEN [unset], URNIC_INTEROP_KEEP_CAPTURE [0: the full
# capture.pcap is removed when the test passes], VM_TIMEOUT [180] seconds, TOOL_TIMEOUT
# [120] seconds for each tool (then both sides print their state: URNIC-STUCK), SIW_DEBUG
# [0; 1: siw's debug messages in the VM's log, URNIC-SIW-DEBUG lines]. Root only.
set -u

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CACHE="${URNIC_INTEROP_CACHE:-/var/cache/urnic-interop}"
IMG="$CACHE/out"
NS="${URNIC_INTEROP_NETNS:-urnic-interop}"
HOST_IP=10.77.0.1
VM_IP=10.77.0.11
VM_MAC=52:54:00:77:00:11
PP_PORT=18515
VM_TIMEOUT="${VM_TIMEOUT:-180}"
TOOL_TIMEOUT="${TOOL_TIMEOUT:-120}"

# ---------------------------------------------------------------- scenarios
# scenario NAME: sets TOOL, OPTS (the same on both sides), UENV (urnic's environment on
# top of its address), CM_MATCH (an nftables match narrowing CM_LOSS), MTU (br0, tap0,
# eth0), LOSS
# (percent of non-ACK RoCE packets nftables drops each way), CM_LOSS (percent of CM MADs,
# to QP 1, dropped each way on top of LOSS) and GOLDEN_PKTS. rdmacm-utils' tools (CM=1)
# connect through rdma_cm: CM MADs on QP 1, urnic's from the drop-in librdmacm.so.1;
# CM_PS and CM_PORT are the rdma_cm port space and port urnic's server listens on.
SCENARIOS="rc_pingpong rc_pingpong_s1 rc_pingpong_s65536 rc_pingpong_m1024 rc_pingpong_m4096
	ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat ib_read_lat
	ud_pingpong uc_pingpong rc_pingpong_loss rping rping_loss ucmatose ucmatose_loss udaddy
	udaddy_loss rstream riostream
	siw_rping siw_rping_crc siw_ucmatose siw_reject siw_badstag siw_write_bw siw_read_bw
	siw_send_bw"
scenario() {
	TOOL=ibv_rc_pingpong OPTS="" MTU=1500 LOSS=0 CM_LOSS=0 GOLDEN_PKTS=100 CM=0 PINGS=0 UENV= CM_MATCH=
	IW=0 SIW_CRC=0 REJECT=0 BADSTAG=0 HOST_TOOL='' SERVER_OPTS='' CLIENT_OPTS=''
	CM_PS=262 CM_PORT=$PP_PORT # RDMA_PS_TCP
	case $1 in
	rc_pingpong) OPTS="-c" ;; # the defaults: 4096 bytes, 1000 iterations, MTU 1024
	rc_pingpong_s1) OPTS="-c -s 1" ;;
	rc_pingpong_s65536) OPTS="-c -s 65536 -n 100" GOLDEN_PKTS=140 ;; # a whole message each
	rc_pingpong_m1024) OPTS="-c -m 1024" ;;
	rc_pingpong_m4096) OPTS="-c -m 4096 -s 16384 -n 200" MTU=9000 GOLDEN_PKTS=40 ;;
	# 16-packet messages: the first 100 packets hold several, with their ACKs
	ib_write_bw | ib_read_bw | ib_send_bw) TOOL=$1 OPTS="-F -s 16384 -n 50" ;;
	ib_atomic_bw) TOOL=$1 OPTS="-F -n 50" ;; # 50 requests, 50 ATOMIC ACKNOWLEDGEs
	# ib_write_lat's default 2-byte WRITE is "00 NN" (NN the iteration) + 2 pad bytes, which
	# tshark's InfiniBand dissector took for an ethertype header (reserved word 0) and
	# flagged as malformed for some NN, before TS below stopped it guessing payloads; the
	# 8 bytes stay so that the golden vectors do not change.
	ib_write_lat) TOOL=$1 OPTS="-F -s 8 -n 100" ;;
	ib_read_lat) TOOL=$1 OPTS="-F -n 100" ;;
	ud_pingpong) TOOL=ibv_ud_pingpong OPTS="-c -s 1024 -n 500" ;;
	uc_pingpong) TOOL=ibv_uc_pingpong OPTS="-c -n 500" ;;
	rc_pingpong_loss) OPTS="-c -n 300" LOSS=5 GOLDEN_PKTS=150 ;;
	# REQ, REP, RTU; SEND, READ, SEND, SEND, WRITE, SEND a ping (-V: the client compares
	# what came back); DREQ, DREP
	rping) TOOL=rping CM=1 PINGS=100 OPTS="-v -V -C 100 -S 64 -p $PP_PORT" ;;
	# a CM MAD lost in 4 (besides the 5 % of all but ACKs and DREQs): CM retransmissions
	# (REQ and REP again after their response timeout, duplicates answered). 50 pings:
	# each lost packet costs rdma_cm's ACK timeout (about 2 s); 100 took 110 s.
	rping_loss) TOOL=rping CM=1 PINGS=50 OPTS="-v -V -C 50 -S 64 -p $PP_PORT" LOSS=5 \
		CM_LOSS=25 GOLDEN_PKTS=150 ;;
	# 3 connections of one listener, 10 SENDs of 100 bytes each way on each
	ucmatose) TOOL=ucmatose CM=1 OPTS="-c 3 -C 10 -p $PP_PORT" ;;
	# SIDR_REQ/SIDR_REP (the UD QP's number and Q_Key), then UD SENDs; udaddy's port is
	# always 7174, in RDMA_PS_UDP
	udaddy) TOOL=udaddy CM=1 OPTS="-c 3 -C 10" CM_PS=273 CM_PORT=7174 ;;
	# rsockets: the connection data, RDMA WRITEs with immediate into the granted buffer
	# and credit updates of rdma-core's rsocket.c against urnic's, the data verified
	rstream) TOOL=rstream CM=1 OPTS="-T v -S 4096 -C 200 -p $PP_PORT" ;;
	# riowrite: each side's riomap announced in the peer's iomap table (a WRITE with
	# immediate), then RDMA WRITEs straight into the mapping, no message
	riostream) TOOL=riostream CM=1 OPTS="-T v -S 4096 -C 5 -I 10 -p $PP_PORT" ;;
	# the same with loss: 5 % of the SENDs each way (150 per side, so both retransmit)
	# and a CM MAD in 4 (REQ, REP again; a REQ of a connection already set up answered).
	# urnic sends without UDP GSO (UENV): nftables sees a GSO send as one packet, and
	# ucmatose's SENDs left in a few bursts, too few chances of a drop.
	ucmatose_loss) TOOL=ucmatose CM=1 OPTS="-c 3 -C 50 -p $PP_PORT" LOSS=5 CM_LOSS=25 \
		GOLDEN_PKTS=150 UENV=URNIC_NO_GSO=1 ;;
	# 10 SIDR_REQs, half of them lost, sent again after their timeout. Only SIDR_REQs:
	# nobody retransmits UD SENDs, and Linux's CM takes a SIDR_REQ repeated after its
	# SIDR_REP for a new request (cm.c forgets the first once answered), which udaddy's
	# server, done with its listener, never answers: a lost SIDR_REP is fatal on rxe.
	udaddy_loss) TOOL=udaddy CM=1 OPTS="-c 10 -C 10" CM_PS=273 CM_PORT=7174 CM_LOSS=50 \
		CM_MATCH="@th,352,16 == 0x17" ;;
	*) iw_scenario "$1" || return 1 ;;
	esac
	: "${SERVER_OPTS:=$OPTS}" "${CLIENT_OPTS:=$OPTS}"
}
# the siw_* scenarios (iw_scenario) and their checks (iw_verdict)
# shellcheck source=tests/interop/iwarp.sh
. "$HERE/iwarp.sh"

if [ "${1:-}" = -l ]; then
	echo "$SCENARIOS" | tr -s '\t\n' '  '
	exit 0
fi
[ $# = 2 ] || { echo "usage: run.sh SCENARIO urnic_server|rxe_server|siw_server (run.sh -l)" >&2; exit 2; }
SC=$1 DIR=$2
scenario "$SC" || { echo "unknown scenario $SC; run.sh -l lists them" >&2; exit 2; }
PEER=rxe
[ "$IW" = 1 ] && PEER=siw
case $DIR in urnic_server | "${PEER}_server") ;; *) echo "bad direction $DIR for $SC" >&2; exit 2 ;; esac
NAME=interop_${SC}_$DIR

# A run that ends in ibv_rc_pingpong's teardown race or rxe's stall after a rollback
# (vm_unfinished below) exits 3 and is run once more, as tests/system/router.sh does
# for the same race between two urnics.
if [ -z "${INTEROP_ATTEMPT:-}" ]; then
	INTEROP_ATTEMPT=1 bash "${BASH_SOURCE[0]}" "$@"
	rc=$?
	[ $rc = 3 ] || exit $rc
	INTEROP_ATTEMPT=2 exec bash "${BASH_SOURCE[0]}" "$@"
fi

say() { printf '%s: %s\n' "$NAME" "$*"; }
fail() {
	say "FAIL: $*"
	for f in "$OUTDIR"/*.log; do
		[ -f "$f" ] || continue
		printf -- '----- %s\n' "$(basename "$f")"
		tail -n 40 "$f" | tr -d '\r'
	done
	say "logs and capture kept in $OUTDIR"
	KEEP=1
	exit 1
}
[ "$(id -u)" = 0 ] || { say "SKIP: needs root (namespace, tap, nftables)"; exit 77; }
: "${LIBDIR:?LIBDIR not set}" "${PCAP_ICRC:?PCAP_ICRC not set}"
[ -e "$LIBDIR/libibverbs.so.1" ] || { echo "no $LIBDIR/libibverbs.so.1" >&2; exit 1; }
# rdmacm-utils' tools need the drop-in librdmacm.so.1 beside it (src/cm/): without it they
# would load Debian's, which finds no RDMA device in the namespace
if [ "$CM" = 1 ] && [ ! -e "$LIBDIR/librdmacm.so.1" ]; then
	echo "$NAME: FAIL: no $LIBDIR/librdmacm.so.1 (urnic's drop-in librdmacm)" >&2
	exit 1
fi
KEEP=0
if [ -n "${OUTDIR:-}" ]; then
	rm -rf "$OUTDIR"
	mkdir -p "$OUTDIR"
	KEEP=1
else
	OUTDIR=$(mktemp -d "${TMPDIR:-/tmp}/urnic-$NAME.XXXXXX")
fi
for c in qemu-system-x86_64 tcpdump tshark mergecap nft "$TOOL" $([ "$IW" = 1 ] && echo python3); do
	command -v "$c" >/dev/null || fail "$c not found (scripts/deps.sh installs it)"
done
# a scenario whose urnic half is a program of urnic's own tests (HOST_TOOL), the VM's TOOL
[ -z "$HOST_TOOL" ] || [ -x "$HOST_TOOL" ] ||
	fail "urnic's half of $SC, '$HOST_TOOL', is not a program (CTest sets its path)"
if [ ! -f "$IMG/vmlinuz" ] || [ ! -f "$IMG/initrd.img" ]; then
	fail "no VM image in $IMG: run tests/interop/build-image.sh (CTest: interop_image)"
fi

# ---------------------------------------------------------------- cleanup
PIDS=()
nsx() { ip netns exec "$NS" "$@"; }
# Processes left in the namespace by an earlier run of this harness that was killed.
ns_reset() {
	ip netns list | grep -qw "$NS" || return 0
	for p in $(ip netns pids "$NS" 2>/dev/null); do kill -KILL "$p" 2>/dev/null; done
	ip netns del "$NS" 2>/dev/null
	sleep 0.2
}
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		wait "$p" 2>/dev/null
		rm -f /dev/shm/urnic."$p".*
	done
	ns_reset
	[ "$KEEP" = 1 ] || rm -rf "$OUTDIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

T0=$(date +%s.%N)
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# ---------------------------------------------------------------- network
ns_reset
ip netns add "$NS" || fail "ip netns add $NS"
nsx sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
nsx ip link set lo up
nsx ip link add br0 type bridge stp_state 0 forward_delay 0 mcast_snooping 0 ||
	fail "cannot create a bridge"
nsx ip addr add "$HOST_IP/24" dev br0
nsx ip link set br0 mtu "$MTU" up
nsx ip tuntap add dev tap0 mode tap || fail "cannot create tap0 (/dev/net/tun)"
nsx ip link set tap0 mtu "$MTU" master br0 up
if [ "$LOSS" -gt 0 ] || [ "$CM_LOSS" -gt 0 ]; then
	# RoCEv2 packets to and from urnic's address, except ACKNOWLEDGE (BTH opcode 17,
	# the first byte after the UDP header): see docs/interop.md for why. CM MADs (UD
	# SEND ONLY to QP 1: the BTH's destination QP, bits 104-127 after the UDP header's
	# start) are dropped by the first rule of each chain, at CM_LOSS %, and by the
	# second as any other packet. DREQs (attribute 0x15, the MAD's bytes 16-17: bits
	# 352-367) are spared as ACKs are, for the same reason: rping's client sends its DREQ
	# and exits, its ID destroyed, which ends the DREQ's retries (Linux's cm_destroy_id
	# cancels them the same way); one lost DREQ leaves the server waiting for ever.
	# RC SENDs (opcodes 0-5) are dropped one in 20 by count, not by chance, so that each
	# side's requester surely loses a request and retransmits, which the checks below
	# require of both; all other non-ACK packets at LOSS % by chance.
	# DREPs (0x16) are spared too: a process whose DREP is lost has often exited by the
	# time the DREQ comes again, and urnic's CM leaves with the process, where the
	# kernel's answers from TimeWait (docs/differences-from-rxe.md); the peer then
	# retries its DREQ for about a minute before it reports the disconnection.
	nsx nft -f - <<EOF || fail "nftables rules"
table inet urnic_interop_loss {
	chain in {
		type filter hook input priority 0; policy accept;
		udp dport 4791 @th,104,24 == 1 @th,352,16 { 0x15, 0x16 } accept
		udp dport 4791 @th,104,24 == 1 $CM_MATCH numgen random mod 100 < $CM_LOSS counter drop
		udp dport 4791 @th,64,8 < 6 numgen inc mod 20 == 4 counter drop
		udp dport 4791 @th,64,8 > 5 @th,64,8 != 17 numgen random mod 100 < $LOSS counter drop
	}
	chain out {
		type filter hook output priority 0; policy accept;
		udp dport 4791 @th,104,24 == 1 @th,352,16 { 0x15, 0x16 } accept
		udp dport 4791 @th,104,24 == 1 $CM_MATCH numgen random mod 100 < $CM_LOSS counter drop
		udp dport 4791 @th,64,8 < 6 numgen inc mod 20 == 4 counter drop
		udp dport 4791 @th,64,8 > 5 @th,64,8 != 17 numgen random mod 100 < $LOSS counter drop
	}
}
EOF
fi

# ---------------------------------------------------------------- capture
PCAP=$OUTDIR/capture.pcap
# iWARP: all of TCP (nothing else of TCP crosses tap0), the MPA Request included, which
# Wireshark's MPA dissector needs to find the stream (iwarp.sh)
FILTER="udp port 4791"
[ "$IW" = 1 ] && FILTER=tcp
# shellcheck disable=SC2086 # the filter's words
ip netns exec "$NS" tcpdump -Z root --immediate-mode -U -B 65536 -i tap0 -s 0 -w "$PCAP" \
	$FILTER \
	2>"$OUTDIR/tcpdump.log" &
CAP_PID=$!
PIDS+=("$CAP_PID")
for _ in $(seq 100); do
	grep -q "listening on" "$OUTDIR/tcpdump.log" && break
	sleep 0.1
done
grep -q "listening on" "$OUTDIR/tcpdump.log" || fail "tcpdump did not start"

# ---------------------------------------------------------------- VM
if [ "$DIR" = urnic_server ]; then VM_ROLE=client; else VM_ROLE=server; fi
INITRD=$OUTDIR/initrd.img
OV=$OUTDIR/overlay
mkdir -p "$OV"
install -m 0755 "$HERE/guest/init" "$OV/init"
(cd "$OV" && find . | cpio -o -H newc --quiet -R 0:0 | gzip -1) >"$OUTDIR/overlay.cpio.gz"
cat "$IMG/initrd.img" "$OUTDIR/overlay.cpio.gz" >"$INITRD"
rm -rf "$OV" "$OUTDIR/overlay.cpio.gz"
VM_OPTS=$SERVER_OPTS
[ "$VM_ROLE" = client ] && VM_OPTS=$CLIENT_OPTS
CMD64=$(printf '%s %s' "$TOOL" "$VM_OPTS" | base64 -w0)
CMDLINE="console=ttyS0 panic=-1 quiet loglevel=3 mitigations=off urnic.ip=$VM_IP/24"
CMDLINE="$CMDLINE urnic.peer=$HOST_IP urnic.role=$VM_ROLE urnic.mtu=$MTU"
CMDLINE="$CMDLINE urnic.timeout=$TOOL_TIMEOUT urnic.cmd64=$CMD64"
# siw0 instead of rxe0; a rejected client is not run again (guest/init)
[ "$IW" = 1 ] && CMDLINE="$CMDLINE urnic.dev=siw urnic.siw_crc=$SIW_CRC urnic.siw_debug=${SIW_DEBUG:-0}"
[ "$REJECT" = 1 ] && CMDLINE="$CMDLINE urnic.retry=0"
VM_LOG=$OUTDIR/vm.log
ip netns exec "$NS" timeout "$VM_TIMEOUT" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -smp 1 -m 512 \
	-display none -monitor none -serial "file:$VM_LOG" -no-reboot \
	-kernel "$IMG/vmlinuz" -initrd "$INITRD" -append "$CMDLINE" \
	-netdev tap,id=n0,ifname=tap0,script=no,downscript=no \
	-device "virtio-net-pci,netdev=n0,mac=$VM_MAC" >"$OUTDIR/qemu.log" 2>&1 &
VM_PID=$!
PIDS+=("$VM_PID")

# wait_vm PATTERN SECONDS: the pattern is in the VM's console log
wait_vm() {
	local i=0
	until grep -q "$1" "$VM_LOG" 2>/dev/null; do
		kill -0 "$VM_PID" 2>/dev/null || return 1
		i=$((i + 1))
		[ $i -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
}

# ---------------------------------------------------------------- urnic
# The verbs tools get urnic's GID index (-g 1, -x 1); rdma_cm's find the device from the
# addresses: their own (-a/-b as a server, -I/-b as a client) and the server's.
case $TOOL in ib_*) GARGS="-x 1" ;; rping | ucmatose | udaddy | rstream | riostream) GARGS="" ;; *) GARGS="-g 1" ;; esac
# iWARP: one GID, no index to choose (perftest -R finds the device from the address)
[ "$IW" = 1 ] && GARGS=""
UADDR=$HOST_IP
[ "$IW" = 1 ] && UADDR=iwarp:$HOST_IP
case $TOOL in
rping) CM_SERVER="-s -a $HOST_IP" CM_CLIENT="-c -I $HOST_IP -a" ;;
*) CM_SERVER="-b $HOST_IP" CM_CLIENT="-b $HOST_IP -s" ;;
esac
HOST_LOG=$OUTDIR/urnic.log
# urnic_tool [PEER]: the same tool over the drop-in, in the namespace, in the background
# (ip netns exec, env and stdbuf exec: $! is the tool itself). Its stdout is line-buffered:
# urnic's counters, printed on stderr at exit, came in the middle of a line of rping's
# (a block-buffered stdout flushed after them) and were not found.
urnic_tool() {
	local role=() opts=$SERVER_OPTS
	[ $# = 0 ] || opts=$CLIENT_OPTS
	if [ "$CM" = 1 ]; then
		# shellcheck disable=SC2206 # the addresses' options, split on purpose
		if [ $# = 0 ]; then role=($CM_SERVER); else role=($CM_CLIENT "$1"); fi
		set --
	fi
	# shellcheck disable=SC2086 # OPTS is an option list
	ip netns exec "$NS" env LD_LIBRARY_PATH="$LIBDIR" URNIC_ADDR=$UADDR $UENV \
		URNIC_PRINT_COUNTERS=1 stdbuf -oL "${HOST_TOOL:-$TOOL}" $GARGS "${role[@]}" $opts "$@" \
		>"$HOST_LOG" 2>&1 &
	HOST_PID=$!
	PIDS+=("$HOST_PID")
}
# wait_tool: the urnic tool's exit status, or 124 once killed after TOOL_TIMEOUT seconds
wait_tool() {
	local i=0
	while kill -0 "$HOST_PID" 2>/dev/null && [ $i -lt $((TOOL_TIMEOUT * 10)) ]; do
		# a zombie is done: wait reaps it below
		[ "$(sed 's/.*) //' "/proc/$HOST_PID/stat" 2>/dev/null | cut -c1)" = Z ] && break
		sleep 0.1
		i=$((i + 1))
	done
	if [ $i -ge $((TOOL_TIMEOUT * 10)) ]; then
		# What urnic's QPs had done when it stalled (the VM prints rxe's side under
		# URNIC-STUCK): the counters file of the live process (tools/urnic).
		{
			echo "urnic: still running after ${TOOL_TIMEOUT}s; urnic counters --qp $HOST_PID:"
			"$LIBDIR/../bin/urnic" counters --qp "$HOST_PID" 2>&1
		} >>"$HOST_LOG"
		kill -TERM "$HOST_PID" 2>/dev/null
		wait "$HOST_PID" 2>/dev/null
		return 124
	fi
	wait "$HOST_PID"
}

# The VM's half did not finish, in one of two ways that rxe's requester causes: it
# rolls back a packet when its transmit path (slow under TCG) reports a failure,
# although the packet may have left (docs/interop.md). Either is run once more (exit 3);
# a second failure fails the test.
# - ibv_rc_pingpong's teardown race: urnic's half finished, had acknowledged the VM's
#   last message, destroyed its QP and exited; rxe sent that message again and,
#   retry_cnt 7 meaning "forever" to rxe, waits for an ACK nobody is left to send. Any
#   pair of peers can race so at the end of ibv_rc_pingpong, which has no closing
#   handshake. The capture shows it: the VM's last packet re-sends a PSN urnic had
#   acknowledged.
# - rxe's stall after a rollback: rxe's requester (its sq-psn under URNIC-STUCK) is at
#   the PSN of the VM's last packet, which the wire shows sent once and never again, and
#   no timer of rxe's resends it (none is armed when nothing else was outstanding): both
#   halves wait, urnic for the rest of a message it has no reason to acknowledge yet.
# vm_unfinished [MESSAGE]: fails with MESSAGE (the VM's tool did not finish) unless one of
# the two is recognised.
vm_unfinished() {
	local acked last sq sent
	[ $# -gt 0 ] || set -- "the VM's $TOOL did not finish"
	[ "$INTEROP_ATTEMPT" = 1 ] || fail "$1"
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID"
	last=$(tshark -r "$PCAP" -Y "ip.src == $VM_IP && infiniband.bth.opcode != 17" \
		-T fields -e infiniband.bth.psn 2>/dev/null | tail -1)
	if [ "$TOOL" = ibv_rc_pingpong ] && [ "${HOST_RC:-1}" = 0 ] &&
		grep -q 'bytes in .* seconds' "$HOST_LOG"; then
		acked=$(tshark -r "$PCAP" -Y "ip.src == $HOST_IP && infiniband.bth.opcode == 17" \
			-T fields -e infiniband.bth.psn 2>/dev/null | tail -1)
		if [ -n "$acked" ] && [ -n "$last" ] && [ "$last" -le "$acked" ]; then
			say "attempt 1 hit ibv_rc_pingpong's teardown race: the VM re-sent PSN $last" \
				"after urnic had acknowledged up to $acked and exited; running it again"
			exit 3
		fi
	fi
	if grep -q URNIC-STUCK "$VM_LOG"; then
		sq=$(sed -n 's/.* type RC .* sq-psn \([0-9]*\).*/\1/p' "$VM_LOG" | tail -1)
		sent=$(tshark -r "$PCAP" -Y "ip.src == $VM_IP && infiniband.bth.psn == ${last:-0}" \
			2>/dev/null | wc -l)
		if [ -n "$sq" ] && [ "$sq" = "${last:-}" ] && [ "$sent" = 1 ]; then
			say "attempt 1 hit rxe's stall after a rollback: rxe's sq-psn is $sq, the" \
				"PSN of the VM's last packet, sent once; running it again"
			say "rxe's state: $(grep -E 'type RC|URNIC-COUNTERS' "$VM_LOG" | tr -s ' ' | tr '\n' ' ')"
			exit 3
		fi
	fi
	fail "$1"
}

# The bridge has a carrier once qemu holds tap0, and urnic's port is Active only then
# (async.c, urnic_port_state): perftest refuses a port that is Down ("Port number 1 state
# is Down"), which a urnic server started before qemu opened tap0 once met in CI.
for _ in $(seq 100); do
	nsx ip link show br0 | grep -q LOWER_UP && break
	sleep 0.1
done
nsx ip link show br0 | grep -q LOWER_UP || fail "br0 has no carrier: qemu did not open tap0"

# listening: urnic's server waits for its peer: the verbs tools on TCP PP_PORT (they
# exchange QPNs over TCP), rdma_cm's on their port, an abstract unix name the drop-in
# librdmacm binds for every process of the address (src/transport/cm_ports.c)
# (iWARP: rdma_cm's and perftest -R's port is a TCP port)
listening() {
	if [ "$CM" = 1 ] && [ "$IW" = 0 ]; then
		nsx ss -Hxa | grep -q "@urnic\.$HOST_IP\.cm\.$CM_PS\.$CM_PORT "
	else
		nsx ss -Hltn "sport = :$PP_PORT" | grep -q .
	fi
}
if [ "$DIR" = urnic_server ]; then
	say "urnic: $TOOL $GARGS $SERVER_OPTS (server, $UADDR); $PEER in the VM: client ($VM_IP)"
	urnic_tool
	for _ in $(seq 100); do
		listening && break
		kill -0 "$HOST_PID" 2>/dev/null || break
		sleep 0.1
	done
	if ! listening; then
		if [ "$CM" != 1 ] || [ "$IW" = 1 ] || ! kill -0 "$HOST_PID" 2>/dev/null; then
			fail "urnic's $TOOL does not listen"
		fi
		# an rdma_cm client retries a REQ the server was not ready for (guest/init)
		say "urnic's $TOOL holds no port name (ss -xa); the VM's client retries until it listens"
	fi
	wait_vm URNIC-READY "$VM_TIMEOUT" || fail "the VM did not come up"
	T_READY=$(secs "$T0")
else
	say "$PEER in the VM: $TOOL (server, $VM_IP); urnic: $TOOL $GARGS $CLIENT_OPTS (client, $UADDR)"
	wait_vm URNIC-READY "$VM_TIMEOUT" || fail "the VM did not come up"
	T_READY=$(secs "$T0")
	wait_vm URNIC-LISTENING 60 || fail "$PEER's $TOOL does not listen"
	urnic_tool "$VM_IP"
fi
wait_tool
HOST_RC=$?
T_TOOL=$(secs "$T0")
# killed at TOOL_TIMEOUT: the VM's watchdog says what rxe holds, if its tool hangs too
[ "$HOST_RC" = 124 ] && { wait_vm URNIC-STUCK 60; vm_unfinished "urnic's $TOOL stalled"; }
# urnic's half failed: the VM's may wait for it until its own watchdog; that says nothing
# more (an rdma_cm server waits for a connection that is not coming)
if [ "$HOST_RC" != 0 ] && ! wait_vm URNIC-RESULT 15; then
	fail "urnic's $TOOL exited with status $HOST_RC (the VM's still runs)"
fi
wait_vm URNIC-RESULT 60 || vm_unfinished
wait "$VM_PID"
sleep 0.3 # the last frames reach tcpdump
kill -INT "$CAP_PID" 2>/dev/null
wait "$CAP_PID"
T_END=$(secs "$T0")
grep -q '^0 packets dropped by kernel' "$OUTDIR/tcpdump.log" ||
	fail "the capture is incomplete: $(grep 'dropped by kernel' "$OUTDIR/tcpdump.log")"
tr -d '\r' <"$VM_LOG" >"$OUTDIR/rxe.log"
rm -f "$VM_LOG" "$INITRD"

# ---------------------------------------------------------------- verdict
VM_RC=$(sed -n 's/.*URNIC-RESULT rc=\([0-9]*\).*/\1/p' "$OUTDIR/rxe.log" | tail -1)
RXE_CTR=$(sed -n 's/^URNIC-COUNTERS//p' "$OUTDIR/rxe.log" | tail -1)
ctr() { awk -v n="$2" '$1 == n && $2 ~ /^[0-9]+$/ { v = $2; f = 1 } END { print f ? v : 0 }' "$1"; }
# shellcheck disable=SC2086 # one name=value per word
rxe_ctr() { printf '%s\n' $RXE_CTR | sed -n "s/^$1=//p" | grep . || echo 0; }
URNIC_CTR=$(awk '/^urnic: counters/ { on = 1; next }
	on && /^  [a-z0-9_]+ +[0-9]+$/ { printf " %s=%s", $1, $2; next } { on = 0 }' "$HOST_LOG")
if [ "$IW" = 1 ]; then
	iw_verdict
	exit 0
fi
say "VM ready after ${T_READY}s, urnic's tool done after ${T_TOOL}s, total ${T_END}s"
say "urnic counters:$URNIC_CTR"
say "rxe hw_counters:$RXE_CTR"
[ "${HOST_RC:-1}" = 0 ] || fail "urnic's $TOOL exited with status $HOST_RC"
[ "${VM_RC:-none}" = 0 ] || fail "rxe's $TOOL exited with status ${VM_RC:-none}"
# The result line: both pingpong halves print it, perftest's client always (the servers
# of ib_read_lat and the like print nothing)
if [ "$DIR" = urnic_server ]; then CLIENT_LOG=$OUTDIR/rxe.log; else CLIENT_LOG=$HOST_LOG; fi
case $TOOL in
ibv_*) ok='bytes in .* seconds' logs="$HOST_LOG $OUTDIR/rxe.log" ;;
# rping's client prints each ping it read back and checked (-V), the last one numbered
# PINGS-1; ucmatose and udaddy end with their status on both sides
rping) ok="^ping data: rdma-ping-$((PINGS - 1)):" logs=$CLIENT_LOG ;;
ucmatose | udaddy) ok='^return status 0' logs="$HOST_LOG $OUTDIR/rxe.log" ;;
rstream) ok='^custom +4k +200 ' logs="$HOST_LOG $OUTDIR/rxe.log" ;; # both sides' rows
riostream) ok='^custom +4k +5 +10 ' logs="$HOST_LOG $OUTDIR/rxe.log" ;;
*) ok='^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' logs=$CLIENT_LOG ;; # perftest's result row
esac
for log in $logs; do
	grep -Eq "$ok" "$log" || fail "no result line in $(basename "$log")"
done
grep -q 'invalid data' "$HOST_LOG" "$OUTDIR/rxe.log" && fail "payload check failed"
if [ "$TOOL" = rping ]; then
	n=$(grep -c '^ping data: rdma-ping-' "$CLIENT_LOG")
	[ "$n" = "$PINGS" ] || fail "rping's client checked $n pings of $PINGS"
	grep -q 'data mismatch' "$HOST_LOG" "$OUTDIR/rxe.log" && fail "rping's data mismatch"
fi
# the connection manager's own (urnic's cm_* counters): nothing it could not decode or
# encode, no impossible transition, no connection given up
for c in cm_drop_decode cm_internal_bad_transition cm_internal_encode cm_unreachable; do
	[ "$(ctr "$HOST_LOG" $c)" = 0 ] || fail "urnic counted $c = $(ctr "$HOST_LOG" $c)"
done
for c in drop_bad_icrc drop_bad_header retry_exceeded rnr_retry_exceeded cq_overflow; do
	[ "$(ctr "$HOST_LOG" $c)" = 0 ] || fail "urnic counted $c = $(ctr "$HOST_LOG" $c)"
done
for c in retry_exceeded_err retry_rnr_exceeded_err; do
	[ "$(rxe_ctr $c)" = 0 ] || fail "rxe counted $c = $(rxe_ctr $c)"
done
if [ "$LOSS" -gt 0 ] || [ "$CM_LOSS" -gt 0 ]; then
	say "nftables: $(nsx nft list table inet urnic_interop_loss | grep -o 'packets [0-9]*' |
		tr '\n' ' ')dropped (input: CM MADs, RC SENDs, others; output: the same)"
fi
if [ "$LOSS" -gt 0 ]; then
	[ "$(ctr "$HOST_LOG" retransmit_pkts)" -gt 0 ] || fail "urnic retransmitted nothing"
	[ "$(rxe_ctr completer_retry_err)" -gt 0 ] || fail "rxe retransmitted nothing"
fi
# URNIC_PRINT_COUNTERS prints at ibv_close_device or exit: none means the checks above
# saw zeros
[ -n "$URNIC_CTR" ] || say "urnic printed no counters: the checks of its counters saw none"

# The wire: tshark, with Wireshark's defaults (not a user's profile), except that it
# does not guess what a RoCE payload carries: its InfiniBand dissector takes payload
# bytes that look like a reserved word and an ethertype for an EoIB/IPoIB header and
# flags the frame malformed (a 2-byte READ response holding 0x81fd: "ISMP"), which
# says nothing about our headers.
export WIRESHARK_CONFIG_DIR=$OUTDIR/wireshark
mkdir -p "$WIRESHARK_CONFIG_DIR"
TS=(tshark -n --disable-heuristic rpcrdma_infiniband --disable-heuristic rpcrdma_iwarp
	-o infiniband.identify_payload:FALSE -r "$PCAP")
frames=$("${TS[@]}" -Y 'udp.port == 4791' 2>/dev/null | wc -l)
ib=$("${TS[@]}" -Y 'infiniband.bth.opcode' 2>/dev/null | wc -l)
from_urnic=$("${TS[@]}" -Y "infiniband && ip.src == $HOST_IP" 2>/dev/null | wc -l)
from_rxe=$("${TS[@]}" -Y "infiniband && ip.src == $VM_IP" 2>/dev/null | wc -l)
"${TS[@]}" -Y '_ws.malformed || _ws.expert.severity >= warning' >"$OUTDIR/malformed.txt" 2>/dev/null
bad=$(wc -l <"$OUTDIR/malformed.txt")
"${TS[@]}" -T fields -e infiniband.bth.opcode 2>/dev/null | sort -n | uniq -c |
	awk '{ printf " %s x %s", $1, $2 }' >"$OUTDIR/opcodes.txt"
say "capture: $frames RoCEv2 frames ($from_urnic from urnic, $from_rxe from rxe)," \
	"$ib with a BTH, $bad malformed or with warnings; opcodes:$(cat "$OUTDIR/opcodes.txt")"
[ "$frames" -gt 0 ] || fail "nothing captured"
[ "$ib" = "$frames" ] || fail "only $ib of $frames frames dissect as RoCEv2 with a BTH"
[ "$bad" = 0 ] || { head "$OUTDIR/malformed.txt"; fail "$bad malformed frames or warnings"; }
if [ "$from_urnic" = 0 ] || [ "$from_rxe" = 0 ]; then fail "not both sides on the wire"; fi
# CM MADs: every packet to QP 1 is a MAD of the CM class (0x07) whose attribute is a CM
# message (IBTA 16.7: 0x10 REQ ... 0x18 SIDR_REP), and those tshark 4.0 takes apart (REQ,
# REJ, REP, RTU, DREQ, DREP) show their fields: a message it could not read would lack
# them (and be malformed, checked above).
if [ "$CM" = 1 ]; then
	"${TS[@]}" -Y 'infiniband.bth.destqp == 1' -T fields -e ip.src -e infiniband.mad.mgmtclass \
		-e infiniband.mad.attributeid -e infiniband.cm.req.localqpn \
		-e infiniband.cm.rej.reason -e infiniband.cm.rep.localqpn \
		-e infiniband.cm.rtu.localcommid -e infiniband.cm.dreq.localcommid \
		-e infiniband.cm.drsp.localcommid 2>/dev/null >"$OUTDIR/cm.txt"
	awk -F'\t' 'BEGIN { split("0x0010 0x0012 0x0013 0x0014 0x0015 0x0016", a, " ")
		for (i = 1; i <= 6; i++) col[a[i]] = i + 3
		split("REQ MRA REJ REP RTU DREQ DREP SIDR_REQ SIDR_REP", nm, " ")
		for (i = 1; i <= 9; i++) name[sprintf("0x%04x", 15 + i)] = nm[i] }
	{ ok = $2 == "0x07" && ($3 in name) && (!($3 in col) || $col[$3] != "")
	  if (!ok) { bad++; print "bad CM MAD from " $1 ": class " $2 " attribute " $3 > "/dev/stderr" }
	  n[$1 " " (($3 in name) ? name[$3] : $3)]++ }
	END { for (k in n) printf "%s x%d\n", k, n[k]; exit bad > 0 }' "$OUTDIR/cm.txt" \
		>"$OUTDIR/cm-summary.txt" 2>"$OUTDIR/cm-bad.txt"
	cm_rc=$?
	say "CM MADs: $(sort "$OUTDIR/cm-summary.txt" | tr '\n' ',' | sed 's/,$//')"
	[ "$cm_rc" = 0 ] || { cat "$OUTDIR/cm-bad.txt"; fail "CM MADs tshark does not read as CM"; }
	for ip in $HOST_IP $VM_IP; do
		grep -q "^$ip " "$OUTDIR/cm-summary.txt" || fail "no CM MAD from $ip"
	done
fi
"$PCAP_ICRC" "$PCAP" >"$OUTDIR/icrc.txt" 2>&1 || { cat "$OUTDIR/icrc.txt"; fail "bad ICRC"; }
say "$(tail -1 "$OUTDIR/icrc.txt")"

# The regression vector: the first GOLDEN_PKTS/2 packets of each sender, in capture order
# (a bandwidth client's first packets alone can hold no answer at all).
for ip in $HOST_IP $VM_IP; do
	tcpdump -r "$PCAP" -c $((GOLDEN_PKTS / 2)) -w "$OUTDIR/from-$ip.pcap" "src host $ip" \
		2>/dev/null || fail "cannot cut the capture"
done
mergecap -F pcap -w "$OUTDIR/$NAME.pcap" "$OUTDIR/from-$HOST_IP.pcap" "$OUTDIR/from-$VM_IP.pcap" ||
	fail "cannot merge the cut captures"
rm -f "$OUTDIR/from-$HOST_IP.pcap" "$OUTDIR/from-$VM_IP.pcap"
if [ -n "${URNIC_INTEROP_GOLDEN:-}" ]; then
	cp "$OUTDIR/$NAME.pcap" "$URNIC_INTEROP_GOLDEN/$NAME.pcap" || fail "cannot store the pcap"
	say "stored $URNIC_INTEROP_GOLDEN/$NAME.pcap"
fi
# the whole capture is kept only when the test fails, or when asked
[ "${URNIC_INTEROP_KEEP_CAPTURE:-0}" = 1 ] || rm -f "$PCAP"
say ok
