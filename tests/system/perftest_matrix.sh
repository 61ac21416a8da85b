#!/bin/sh
# SPDX-License-Identifier: MIT
# perftest_matrix.sh - Debian's unmodified perftest over the drop-in, one tool with
# several flag sets in turn; each run must complete and print a plausible result table.
#
#   private namespace, lo:
#     127.0.0.2 (server)  <--- TOOL -x 1 -F -p PORT OPTS ---  127.0.0.3 (client)
#     with --same-addr both on 127.0.0.2, sharing UDP 4791 (transport/share.h)
#
#   perftest_matrix.sh [--same-addr] TOOL RUN...: each RUN is one quoted option list
#   ("defaults" for none). Both sides must exit 0; the client's table must have at
#   least one row, every figure numeric (no nan, no inf) and above zero (the standard
#   deviation of a latency run may be 0.00), as many rows as sizes with -a (2 B to
#   8 MiB, or to the MTU for UD); and no ICRC/header drop, retry or CQ overflow
#   counted on either side. The one exception: perftest's own overflow of t_stdev
#   (see check_table). A table with a zero figure from a run both sides completed, or
#   an "inf" one after perftest's CPU clock calibration failed, is run once more
#   (perftest's own arithmetic under load), and fails the second time.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
if [ "${1:-}" = --same-addr ]; then
	shift
	CLI_ADDR=$SRV_ADDR
fi
TOOL=${1:?usage: perftest_matrix.sh [--same-addr] TOOL RUN...}
shift
command -v "$TOOL" >/dev/null || fail "$TOOL not found (perftest)"
[ $# -gt 0 ] || set -- defaults

# check_table LOG OPTS: the result rows of a client log. perftest prints a header line
# starting "#bytes", then one row per size: size, iterations, figures.
check_table() {
	awk -v all="$(case " $2 " in *" -a "*) echo 1 ;; *) echo 0 ;; esac)" \
		-v ud="$(case " $2 " in *" -c UD "*) echo 1 ;; *) echo 0 ;; esac)" '
	/^ *#bytes/ {
		hdr = 1
		sd = mx = av = 0
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^t_stdev/)
				sd = i
			if ($i ~ /^t_max/)
				mx = i
			if ($i ~ /^t_avg/)
				av = i
		}
		next
	}
	hdr && /^ *[0-9]+ +[0-9]+ / {
		rows++
		last = $1
		for (i = 3; i <= NF; i++) {
			# perftest 4.5 sums (int)(avg - t)^2 for its deviation: one sample
			# 46341 us or more from the average (a 67 ms retransmission timeout
			# of the default -u 14) overflows it into -nan. Not a figure of ours.
			if (i == sd && $i == "-nan" && $mx - $av >= 46341)
				continue
			if ($i !~ /^[0-9]+(\.[0-9]+)?$/) {
				printf "row %d: figure %d is \"%s\"\n", rows, i, $i
				bad = 1
			} else if ($i + 0 == 0 && i != sd) {
				printf "row %d: figure %d is zero\n", rows, i
				bad = 1
			}
		}
		next
	}
	hdr && /^ *-+ *$/ && rows { hdr = 0 }
	END {
		if (!rows) {
			print "no result row"
			exit 1
		}
		if (all && !ud && (rows != 23 || last != 8388608)) {
			printf "-a printed %d rows up to %s B, not 23 up to 8388608\n", rows, last
			bad = 1
		}
		if (all && ud && rows < 8) {
			printf "-a -c UD printed only %d rows\n", rows
			bad = 1
		}
		exit bad
	}' "$1"
}

n=0
for run in "$@"; do
	[ "$run" = defaults ] && run=
	tries=0
	while [ $tries -lt 2 ]; do
		tries=$((tries + 1))
		n=$((n + 1))
		tag=$(echo "run$n $run" | tr -s ' ' '_' | tr -d -- '-' | sed 's/_$//')
		port=$((PP_PORT + 500 * n)) # clear of other slots' ports without a namespace
		slog=$SYS_WORK/$tag.server.log
		clog=$SYS_WORK/$tag.client.log
		# stdout alone holds the table: the counters (stderr) come before its last newline
		# shellcheck disable=SC2086 # the option list is split on purpose
		(ibv "$SRV_ADDR" "$TOOL" -x 1 -F -p "$port" $run) >"$slog" 2>"$slog.err.log" &
		spid=$!
		track $spid
		wait_listen $spid "$port" 15
		case $? in
		1) fail "$TOOL $run: server exited with status $LISTEN_RC before listening" ;;
		2) fail "$TOOL $run: server not listening on TCP $port after 15 s" ;;
		esac
		t0=$(date +%s)
		# shellcheck disable=SC2086
		(ibv "$CLI_ADDR" "$TOOL" -x 1 -F -p "$port" $run "$SRV_ADDR") >"$clog" 2>"$clog.err.log" &
		cpid=$!
		track $cpid
		wait_exit $cpid 150
		crc=$?
		wait_exit $spid 20
		src=$?
		[ $crc -ne 124 ] || fail "$TOOL $run: client still running after 150 s (killed)"
		[ $src -ne 124 ] || fail "$TOOL $run: server still running 20 s after the client"
		[ $crc -eq 0 ] && [ $src -eq 0 ] ||
			fail "$TOOL $run: client exited with status $crc, server with status $src"
		if ! why=$(check_table "$clog" "$run"); then
			# A run both sides completed whose table says 0.00: perftest's own cycle
			# arithmetic (seen once, under the sanitizer build with the machine
			# loaded, every READ answered). Or "inf" after perftest said its CPU
			# clock calibration failed (get_cpu_mhz gives 0 when its samples
			# correlate below r^2 0.9, on a loaded machine). Once more, then it fails.
			again=false
			case $why in
			*"is zero"*) again=true ;;
			*'is "inf"'*) grep -q 'Correlation coefficient' "$clog.err.log" && again=true ;;
			esac
			if $again && [ $tries -lt 2 ]; then
				say "$TOOL $run: $why although both sides completed; running it again"
				continue
			fi
			fail "$TOOL $run: $why"
		fi
		for log in "$slog.err.log" "$clog.err.log"; do
			grep -q -e 'AddressSanitizer' -e 'runtime error:' "$log" &&
				fail "$TOOL $run: sanitizer report in $(basename "$log")"
			for c in drop_bad_icrc drop_bad_header retry_exceeded rnr_retry_exceeded \
				cq_overflow; do
				v=$(counter "$log" $c)
				[ "$v" = 0 ] || fail "$TOOL $run: $c = $v in $(basename "$log")"
			done
		done
		say "$TOOL ${run:-(defaults)} ($SRV_ADDR <- $CLI_ADDR): ok in $(($(date +%s) - t0)) s"
		awk '/^ *#bytes/ { h = 1 } h && /^ *[0-9]+ +[0-9]+ / { if (!r++) print "    " $0; l = $0 }
			END { if (r > 1) print "    " l }' "$clog"
		break
	done
done
say ok
