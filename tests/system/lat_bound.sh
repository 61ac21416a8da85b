#!/bin/sh
# SPDX-License-Identifier: MIT
# lat_bound.sh - ib_write_lat where the answer used to wait for the engine thread: the
# typical latency stays under a bound that the slow path exceeds several times over.
#
#   private namespace, lo:
#     127.0.0.2 (server)  <--- ib_write_lat -s 8 -n 2000 [-c UC] ---  127.0.0.3 (client)
#
# ib_write_lat waits for each WRITE completion on its CQ, then for the peer's WRITE by
# spinning on memory, where no verbs call lets urnic take a packet in; only the engine
# thread can, and it naps without the socket while the application polls
# (pipeline.c, URNIC_APP_NAP_MAX_NS), or must be woken on the other CPU.
#
#   ack-alone  RC, the client at URNIC_ACK_HOLD_US=0: each of its ACKs leaves without
#              the answer, as any held ACK does when the answering application is off
#              the CPU past the hold (hold.c, urnic_roce_hold_ack). The server then has
#              its completion and the answer still to come; its engine thread must be
#              told to watch the socket (pipeline.c, progress: watch_due). Before it
#              was, every round waited out the nap: t_typical 87-547 us, now ~30 us.
#   uc         UC, defaults: nothing acknowledges UC, so each completion came before
#              the answer; the requester now holds it for the answer (uc.c,
#              urnic_uc_comp_held). t_typical 62-88 us before, 6-8 us now.
#
# Passes when one of five runs has t_typical under LIMIT_US (the machine is shared);
# under the sanitizers only the runs themselves and the counters are checked. In
# ack-alone, a run counts only if the server held ACKs: it learns to once it sees its
# application answer within the hold time, which under the sanitizers a run may miss.
#   lat_bound.sh MODE   (environment: LIBDIR, SANITIZE, CC, SLOT)
. "$(dirname "$0")/common.sh"
sys_setup "$@"
command -v ib_write_lat >/dev/null || fail "ib_write_lat not found (perftest)"
MODE=${1:?usage: lat_bound.sh ack-alone|uc}
case $MODE in
ack-alone) LIMIT_US=60 CLI_HOLD=0 UC= ;;
uc) LIMIT_US=40 CLI_HOLD=20 UC="-c UC" ;;
*) fail "unknown mode $MODE" ;;
esac
SLOG=$SYS_WORK/server.log
CLOG=$SYS_WORK/client.log

# one_run: one ib_write_lat pair; its t_typical (microseconds) into $typ.
one_run() {
	PP_PORT=$((PP_PORT + 1))
	# shellcheck disable=SC2086 # UC: no words or one option and its value
	(ibv "$SRV_ADDR" ib_write_lat -x 1 -F -s 8 -n 2000 $UC -p "$PP_PORT") \
		>"$SLOG" 2>"$SLOG.err" &
	_srv=$!
	track $_srv
	wait_listen $_srv "$PP_PORT" 10 || fail "ib_write_lat server not listening"
	# shellcheck disable=SC2086
	(URNIC_ACK_HOLD_US=$CLI_HOLD && export URNIC_ACK_HOLD_US &&
		ibv "$CLI_ADDR" ib_write_lat -x 1 -F -s 8 -n 2000 $UC -p "$PP_PORT" "$SRV_ADDR") \
		>"$CLOG" 2>"$CLOG.err" &
	_cli=$!
	track $_cli
	wait_exit $_cli 60 || fail "ib_write_lat client failed"
	wait_exit $_srv 20 || fail "ib_write_lat server failed"
	# The setup did what it says.
	if [ "$MODE" = uc ]; then
		for _log in "$SLOG.err" "$CLOG.err"; do
			[ "$(counter "$_log" comp_held)" -gt 0 ] ||
				fail "no completion held in $(basename "$_log")"
		done
	else
		[ "$(counter "$CLOG.err" ack_held)" = 0 ] || fail "the client held ACKs"
		# The server holds once it has seen its application answer within the hold
		# time (responder.c); under the sanitizers that may not happen in a run.
		held=$(counter "$SLOG.err" ack_held)
	fi
	for _log in "$SLOG.err" "$CLOG.err"; do
		for _c in drop_bad_icrc drop_bad_header retry_exceeded; do
			[ "$(counter "$_log" $_c)" = 0 ] || fail "$_c in $(basename "$_log")"
		done
	done
	# bytes iterations t_min t_max t_typical t_avg t_stdev 99% 99.9%
	typ=$(awk '$1 == 8 && $2 == 2000 && NF >= 9 { print $5 }' "$CLOG")
}

held=
for attempt in 1 2 3 4 5; do
	one_run
	[ -n "$typ" ] || { cat "$CLOG"; fail "ib_write_lat printed no result line"; }
	if [ "$held" = 0 ]; then
		say "$MODE run $attempt: the server held no ACK (t_typical $typ us); again"
		continue
	fi
	say "$MODE run $attempt: t_typical $typ us (limit $LIMIT_US us)"
	if [ "$SANITIZE" = ON ]; then
		say "sanitizer build: the time is not checked"
		exit 0
	fi
	if awk -v t="$typ" -v l="$LIMIT_US" 'BEGIN { exit !(t + 0 < l + 0) }'; then
		say "ok"
		exit 0
	fi
done
[ "$held" = 0 ] &&
	fail "$MODE: no run both had the server hold ACKs and stayed under $LIMIT_US us (the last held none)"
fail "$MODE: t_typical over $LIMIT_US us in all five runs: the answer waited for the engine thread"
