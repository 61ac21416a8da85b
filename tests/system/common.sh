# SPDX-License-Identifier: MIT
# common.sh - sourced by every system test: a private network namespace, Debian's
# verbs binaries run over the urnic drop-in, and cleanup of everything a test starts.
#
# The caller sets LIBDIR (the build's lib/ holding libibverbs.so.1), SANITIZE (ON/OFF:
# the library was built with ASan+UBSan, so Debian's binaries need libasan preloaded),
# CC (the compiler that built it) and SLOT (a number unique per test, used only when
# no namespace can be made), then calls sys_setup "$@" before anything else. URNIC_TOOL,
# the urnic tool, is optional: a process killed at a deadline has its counters read
# with it (stall_report).
#
#   private namespace (unshare -n, or unshare -rn as a user):
#     lo up: 127.0.0.2 = server urnic0 <-- RoCEv2, UDP 4791 --> 127.0.0.3 = client urnic0
#   fallback (no namespace allowed): the host's lo, 127.0.1.(2*SLOT+1) and
#     127.0.1.(2*SLOT+2) (127.0.2.x from SLOT 120 on), TCP port 18515+SLOT; nothing on
#     the host is reconfigured.

set -u

SYS_NAME=$(basename "$0" .sh)
SYS_PIDS=
SYS_WORK=

say() { printf '%s: %s\n' "$SYS_NAME" "$*"; }

# Prints every log of the test, then exits 1: CTest shows it with --output-on-failure.
fail() {
	printf '%s: FAIL: %s\n' "$SYS_NAME" "$*"
	if [ -n "$SYS_WORK" ] && [ -d "$SYS_WORK" ]; then
		for f in "$SYS_WORK"/*.log; do
			[ -f "$f" ] || continue
			printf -- '----- %s\n' "$(basename "$f")"
			tail -n 60 "$f"
		done
	fi
	exit 1
}

skip() {
	printf '%s: SKIP: %s\n' "$SYS_NAME" "$*"
	exit 77
}

# true while the process exists and is not a zombie waiting for us to reap it
alive() {
	[ -r "/proc/$1/stat" ] || return 1
	case $(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1) in
	Z | X | '') return 1 ;;
	esac
	return 0
}

# wait_cm_port PID ADDR PS PORT: PID holds rdma_cm port PORT on ADDR in a port space
# matching the pattern PS (262 RDMA_PS_TCP, 273 RDMA_PS_UDP): the abstract name
# urnic.<address>.cm.<ps>.<port> is bound (transport/cm_ports.h). Waits up to 10 s,
# false at once if PID exits.
wait_cm_port() {
	_t=100
	while [ $_t -gt 0 ]; do
		ss -xa 2>/dev/null | grep -q -e "@urnic\.$2\.cm\.$3\.$4 " && return 0
		alive "$1" || return 1
		sleep 0.1
		_t=$((_t - 1))
	done
	return 1
}

# reap PID: waits for it (it has exited or been killed), removes the counters file a
# killed or crashed urnic process leaves in /dev/shm, and forgets it. Its exit status.
reap() {
	wait "$1"
	_rc=$?
	rm -f /dev/shm/urnic."$1".*
	SYS_PIDS=$(printf ' %s ' "$SYS_PIDS" | sed "s/ $1 / /")
	return $_rc
}

# stop PID: TERM, then KILL after 2 s, then reap
stop_pid() {
	_n=0
	if alive "$1"; then
		kill -TERM "$1" 2>/dev/null
		while alive "$1" && [ $_n -lt 20 ]; do
			sleep 0.1
			_n=$((_n + 1))
		done
		alive "$1" && kill -KILL "$1" 2>/dev/null
	fi
	reap "$1" 2>/dev/null
}

sys_cleanup() {
	for _p in $SYS_PIDS; do
		stop_pid "$_p"
	done
	[ -n "$SYS_WORK" ] && rm -rf "$SYS_WORK"
	SYS_WORK=
}

# track PID: a child this test started; stopped if still running when the test exits
track() { SYS_PIDS="$SYS_PIDS $1"; }

# wait_listen PID PORT SECONDS [NETNS]: waits until something listens on TCP PORT (in
# network namespace NETNS when given) while PID, the server, lives. Returns 0 once it
# listens; 1 if PID exited first (reaped: its exit status is in LISTEN_RC); 2 if nothing
# listens after SECONDS (PID is left running).
wait_listen() {
	_wl_ticks=$(($3 * 10))
	while :; do
		if [ -n "${4:-}" ]; then
			ip netns exec "$4" ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
		else
			ss -Hltn "sport = :$2" 2>/dev/null | grep -q . && return 0
		fi
		if ! alive "$1"; then
			reap "$1"
			LISTEN_RC=$?
			return 1
		fi
		[ $_wl_ticks -gt 0 ] || return 2
		sleep 0.1
		_wl_ticks=$((_wl_ticks - 1))
	done
}

# stall_report: what every process of the test still running does, into a log of its own
# (fail prints the logs): its threads' stacks (gdb, where installed and allowed to
# attach) and its devices' live counters (`urnic counters PID` when URNIC_TOOL names
# the tool). A process killed at a deadline never prints its counters, which it does at
# exit: a stall would leave empty logs (a 64-byte rping in sys_rdmacm, once).
stall_report() {
	[ -n "$SYS_WORK" ] && [ -d "$SYS_WORK" ] || return 0
	for _sp in $SYS_PIDS; do
		alive "$_sp" || continue
		_sr=$SYS_WORK/stalled.$_sp.log
		printf '%s\n' "$(tr '\0' ' ' <"/proc/$_sp/cmdline" 2>/dev/null)" >"$_sr"
		if [ -n "${URNIC_TOOL:-}" ] && [ -x "$URNIC_TOOL" ]; then
			"$URNIC_TOOL" counters "$_sp" 2>&1 | awk '$2 != 0' >>"$_sr"
		fi
		if command -v gdb >/dev/null; then
			timeout 20 gdb -batch -nx -p "$_sp" -ex 'thread apply all bt' 2>&1 |
				grep -e '^Thread ' -e '^#' >>"$_sr"
		fi
	done
}

# wait_exit PID SECONDS: its exit status, or 124 after killing it at the deadline (and
# reporting what the test's processes were doing then: stall_report)
wait_exit() {
	_pid=$1
	_ticks=$(($2 * 10))
	while alive "$_pid"; do
		if [ $_ticks -le 0 ]; then
			stall_report
			stop_pid "$_pid"
			return 124
		fi
		sleep 0.1
		_ticks=$((_ticks - 1))
	done
	reap "$_pid"
}

# Re-runs the calling script inside a private network namespace, once.
sys_setup() {
	: "${LIBDIR:?LIBDIR not set}" "${SANITIZE:=OFF}" "${CC:=cc}" "${SLOT:=1}"
	if [ -z "${URNIC_SYS_NETNS:-}" ]; then
		if unshare -n true 2>/dev/null; then
			URNIC_SYS_NETNS=private exec unshare -n -- sh "$0" "$@"
		elif unshare -r -n true 2>/dev/null; then
			URNIC_SYS_NETNS=private exec unshare -r -n -- sh "$0" "$@"
		fi
		URNIC_SYS_NETNS=host
	fi
	export URNIC_SYS_NETNS
	if [ "$URNIC_SYS_NETNS" = private ]; then
		ip link set lo up || fail "cannot bring lo up in the private namespace"
		SRV_ADDR=127.0.0.2
		CLI_ADDR=127.0.0.3
		PP_PORT=18515
	else
		# 120 slots per /24: 127.0.1.x, then 127.0.2.x, ...
		SRV_ADDR=127.0.$((1 + SLOT / 120)).$((2 * (SLOT % 120) + 1))
		CLI_ADDR=127.0.$((1 + SLOT / 120)).$((2 * (SLOT % 120) + 2))
		PP_PORT=$((18515 + SLOT))
		say "NOTE: unshare -n is not permitted here; using the host's loopback with" \
			"$SRV_ADDR/$CLI_ADDR and TCP port $PP_PORT"
	fi
	[ -e "$LIBDIR/libibverbs.so.1" ] || fail "$LIBDIR/libibverbs.so.1 does not exist"
	SYS_WORK=$(mktemp -d "${TMPDIR:-/tmp}/urnic-$SYS_NAME.XXXXXX") || fail "mktemp"
	trap sys_cleanup EXIT
	trap 'exit 130' INT TERM HUP PIPE

	# A sanitized libibverbs.so.1 in an unsanitized binary: the ASan runtime has to be
	# the first library loaded, so it is preloaded; leak checks would report libc's
	# and the tool's own allocations.
	SAN_ENV=
	if [ "$SANITIZE" = ON ]; then
		ASAN_LIB=
		for _cc in "$CC" gcc; do
			_f=$("$_cc" -print-file-name=libasan.so 2>/dev/null) || continue
			if [ -e "$_f" ]; then
				ASAN_LIB=$(readlink -f "$_f")
				break
			fi
		done
		[ -n "$ASAN_LIB" ] || fail "URNIC_SANITIZE=ON but no libasan.so via $CC or gcc"
		SAN_ENV="LD_PRELOAD=$ASAN_LIB"
		SAN_ENV="$SAN_ENV ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:exitcode=99"
		SAN_ENV="$SAN_ENV UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
	fi
}

# ibv ADDR CMD ARGS...: execs a verbs tool over the drop-in as device urnic0 on ADDR.
# Call it in a subshell, `(ibv ...)` or `(ibv ...) &`: then $! is the tool's own pid.
ibv() {
	_addr=$1
	shift
	# SAN_ENV is a list of words without blanks inside them: split on purpose.
	# shellcheck disable=SC2086
	exec env LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
		URNIC_ADDR="$_addr" URNIC_PRINT_COUNTERS=1 $SAN_ENV "$@"
}

# The counter NAME in a log written with URNIC_PRINT_COUNTERS=1 (0 when not printed).
counter() {
	awk -v n="$2" '$1 == n && $2 ~ /^[0-9]+$/ { v = $2; f = 1 } END { print f ? v : 0 }' "$1"
}

# ring_on: the devices of this test receive from packet rings (URNIC_RING=1,
# src/transport/ring.h); ring_check LOG... then requires, in each log written with
# URNIC_PRINT_COUNTERS=1, that every received packet came from a ring, that none was
# lost to a full ring and that no IPv4 ID had to be recovered from the ICRC (the
# frame gives it).
ring_on() {
	export URNIC_RING=1 URNIC_LOCAL=0
	say "receiving from packet rings (URNIC_RING=1)"
}

# lanes_off: this test's devices send to each other through the UDP socket, not through
# shared memory lanes (URNIC_LOCAL=0, src/transport/local.h): for tests of what the
# socket path does (captures on lo, GSO sends, reuseport steering and forwarding).
lanes_off() {
	export URNIC_LOCAL=0
}
ring_check() {
	for _log in "$@"; do
		! grep -q "no packet ring" "$_log" || { cat "$_log"; fail "no packet ring"; }
		_rx=$(counter "$_log" rx_packets)
		_ring=$(counter "$_log" rx_ring)
		[ "$_ring" -gt 0 ] && [ "$_ring" = "$_rx" ] ||
			fail "$_ring of $_rx packets from the ring in $(basename "$_log")"
		for _c in drop_ring_full rx_icrc_ipv4_id; do
			_v=$(counter "$_log" $_c)
			[ "$_v" = 0 ] || fail "$_c = $_v in $(basename "$_log")"
		done
	done
}

# PP_CHK: -c when this ibv_rc_pingpong validates received buffers (Debian 12's does:
# the client sets the first byte of every page of its buffer and the server checks
# those bytes at the end, printing "invalid data in page N" but still exiting 0).
PP_CHK=unknown
pp_chk_probe() {
	[ "$PP_CHK" = unknown ] || return 0
	PP_CHK=
	if ibv_rc_pingpong --help 2>&1 | grep -q -e '--chk'; then
		PP_CHK=-c
	else
		say "NOTE: this ibv_rc_pingpong has no -c/--chk; payloads are not validated"
	fi
}

# pp_pair TAG SECONDS OPTS...: ibv_rc_pingpong -g 1 [-c] OPTS, server and client, to
# completion. Logs: $SYS_WORK/TAG.server.log, TAG.client.log. Returns 0, or 1 with the
# reason in PP_WHY; PP_RACE=1 when the reason is the teardown race below.
#
# ibv_rc_pingpong has no closing handshake: each side exits once its own sends are
# ACKed and its receives are done. On a lossy path the ACK of one side's LAST message
# can be lost after the other side has already closed its QP; nothing is left to
# answer the retransmissions, so that side fails "transport retry counter exceeded"
# while the other exited 0. Real RNICs do the same; loss.sh re-runs such a run.
pp_pair() {
	_tag=$1
	_secs=$2
	shift 2
	PP_WHY=
	# shellcheck disable=SC2034 # read by the callers
	PP_RACE=0
	_slog=$SYS_WORK/$_tag.server.log
	_clog=$SYS_WORK/$_tag.client.log
	command -v ibv_rc_pingpong >/dev/null || fail "ibv_rc_pingpong not found (ibverbs-utils)"
	pp_chk_probe

	# shellcheck disable=SC2086
	(ibv "$SRV_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT" $PP_CHK "$@") >"$_slog" 2>&1 &
	_spid=$!
	track $_spid
	wait_listen $_spid "$PP_PORT" 10
	case $? in
	1)
		PP_WHY="$_tag: server exited with status $LISTEN_RC before listening on $PP_PORT"
		return 1
		;;
	2)
		stop_pid $_spid
		PP_WHY="$_tag: server not listening on TCP $PP_PORT after 10 s"
		return 1
		;;
	esac

	# shellcheck disable=SC2086
	(ibv "$CLI_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT" $PP_CHK "$@" "$SRV_ADDR") \
		>"$_clog" 2>&1 &
	_cpid=$!
	track $_cpid
	wait_exit $_cpid "$_secs"
	_crc=$?
	wait_exit $_spid 10
	_src=$?
	if [ $_crc -eq 124 ]; then
		PP_WHY="$_tag: client still running after $_secs s (killed)"
	elif [ $_src -eq 124 ]; then
		PP_WHY="$_tag: server still running 10 s after the client exited (killed)"
	elif [ $_crc -ne 0 ] || [ $_src -ne 0 ]; then
		PP_WHY="$_tag: client exited with status $_crc, server with status $_src"
		_ok=$_slog
		_bad=$_clog
		[ $_src -eq 0 ] || { _ok=$_clog; _bad=$_slog; }
		if [ $((_crc + _src)) -eq 1 ] && grep -q 'bytes in .* seconds' "$_ok" &&
			grep -q 'transport retry counter exceeded' "$_bad"; then
			# shellcheck disable=SC2034
			PP_RACE=1
		fi
	fi
	[ -z "$PP_WHY" ] || return 1
	for _log in "$_slog" "$_clog"; do
		_n=$(basename "$_log")
		if ! grep -q 'bytes in .* seconds' "$_log"; then
			PP_WHY="$_tag: no 'bytes in ... seconds' line in $_n"
		elif grep -q 'invalid data' "$_log"; then
			PP_WHY="$_tag: payload validation failed in $_n"
		elif grep -q -e 'AddressSanitizer' -e 'runtime error:' "$_log"; then
			PP_WHY="$_tag: sanitizer report in $_n"
		fi
		# These never happen on a clean loopback path, lossy or not.
		for _c in drop_bad_icrc drop_bad_header retry_exceeded rnr_retry_exceeded \
			cq_overflow; do
			_v=$(counter "$_log" $_c)
			[ "$_v" = 0 ] || PP_WHY="$_tag: $_c = $_v in $_n"
		done
		[ -z "$PP_WHY" ] || return 1
	done
	_recov=
	for _c in retransmit_pkts retry_timeout nak_seq_sent dup_request drop_socket_overflow; do
		_v="$(counter "$_slog" $_c)+$(counter "$_clog" $_c)"
		[ "$_v" = 0+0 ] || _recov="$_recov $_c $_v"
	done
	say "$_tag: ok ($(grep -h 'iters in' "$_clog"))"
	[ -z "$_recov" ] || say "$_tag: recovery counters (server+client):$_recov"
}

# pp_run TAG SECONDS OPTS...: pp_pair, failing the test on any problem
pp_run() {
	pp_pair "$@" || fail "$PP_WHY"
}

# cap_start PCAP FILTER: tshark captures FILTER on lo into PCAP (classic pcap) from now
# until cap_stop, which fails the test if the capture dropped anything. Wireshark's
# defaults are used, not the user's profile (decode-as, disabled protocols, ...).
# CAP_TSHARK: tshark reading a capture as the tests dissect it: payloads are not guessed
# at (tests/interop/run.sh says why); Wireshark 4.0's Mellanox EoIB heuristic throws on
# the empty payload of a zero-length UD SEND, a valid packet (BTH, DETH, ICRC);
# xrceth.lua lays out the XRC headers Wireshark 4.0 does not (fields xrceth.srq, ...).
cap_start() {
	WIRESHARK_CONFIG_DIR=$SYS_WORK/wireshark
	export WIRESHARK_CONFIG_DIR
	mkdir -p "$WIRESHARK_CONFIG_DIR" || fail "mkdir $WIRESHARK_CONFIG_DIR"
	command -v tshark >/dev/null || fail "tshark not found"
	command -v bash >/dev/null || fail "bash not found (its /dev/udp sends the probes)"
	# Probes to the discard port tell when the capture is live: dumpcap's "Capture
	# started" comes before packets are really being captured (the first ones were
	# seen missing).
	_probe="udp dst port 9 and dst host 127.0.0.1"
	CAP_LOG=$SYS_WORK/tshark-capture.log
	tshark -n -q -i lo -B 64 -f "($2) or ($_probe)" -F pcap -w "$1" >"$CAP_LOG" 2>&1 &
	CAP_PID=$!
	track $CAP_PID
	_ticks=200
	until [ "$(stat -c %s "$1" 2>/dev/null || echo 0)" -gt 24 ]; do # 24: pcap header
		alive $CAP_PID || fail "tshark exited before capturing"
		[ $_ticks -gt 0 ] || fail "tshark did not capture a probe within 20 s"
		bash -c 'echo urnic-probe >/dev/udp/127.0.0.1/9' 2>/dev/null
		sleep 0.1
		_ticks=$((_ticks - 1))
	done
}
cap_stop() {
	sleep 0.5 # let the last frames reach dumpcap before it is told to stop
	kill -INT $CAP_PID
	wait_exit $CAP_PID 20 || fail "tshark exited with status $? when stopped"
	grep -E 'packets (captured|dropped)' "$CAP_LOG"
	grep -Eq '[1-9][0-9]* packets dropped' "$CAP_LOG" && fail "the capture dropped packets"
}
CAP_TSHARK="tshark -n -X lua_script:$(cd "$(dirname "$0")" && pwd)/xrceth.lua --disable-heuristic rpcrdma_infiniband --disable-heuristic rpcrdma_iwarp --disable-heuristic mellanox_eoib -o infiniband.identify_payload:FALSE"
