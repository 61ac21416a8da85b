#!/bin/sh
# SPDX-License-Identifier: MIT
# local_user.sh - what another local user can do to a urnic process: root runs the
# devices (ibv_rc_pingpong servers on 127.0.0.2 in a private network namespace), user
# 65534 the attacks (local_attacker.c, setpriv). /dev/shm is the host's.
#
#   local_user.sh ATTACKER URNIC counters: a device's counters file is its user's alone
#       (mode 0600, owned by root, unreadable by 65534, `urnic counters` reads it for
#       root); a symbolic link 65534 put at its predictable name
#       (/dev/shm/urnic.<pid>.urnic0) is not followed (its target is unchanged), nor is
#       a regular file of 65534's there used or changed: the device says so and takes a
#       name beside it, which `urnic counters` still finds, while the forged file (a
#       counters header claiming the victim's pid) is not shown. URNIC_COUNTERS_MODE=0644
#       lets 65534 read it (and a stale file of root's at the name is replaced);
#       URNIC_COUNTERS_MODE=0666 fails the device open, naming it.
#   local_user.sh ATTACKER URNIC port: UDP port 4791 on the address (then the wildcard
#       address) held by a socket of 65534 with SO_REUSEPORT: creating the QP fails and
#       urnic says whose socket holds the port (uid 65534).
#   local_user.sh ATTACKER URNIC share: 65534 holds the abstract unix names of slot 0
#       and of the join lock of the shared address (transport/share.h). The device says
#       so, takes slot 1, and a packet for a slot-0 QPN is not forwarded to 65534's
#       socket (drop_forward_foreign_owner, 65534 receives nothing); the device still
#       runs a checked round trip with a client on 127.0.0.3.
#   local_user.sh ATTACKER URNIC secure: a program with file capabilities (AT_SECURE)
#       run by 65534 ignores URNIC_ADDR (secure_getenv(3)).
#   local_user.sh ATTACKER URNIC lanes: the shared memory lanes (URNIC_LOCAL,
#       transport/local.h). (a) 65534 listens on the lane name of 127.0.0.2
#       (@urnic.lane.7f000002.0) before the server there starts: the server says it
#       has no lanes, the client's offers reach 65534's listener, which the client
#       finds is not of its user (SO_PEERCRED) and passes nothing to (65534 gets
#       connections but no byte and no descriptor); the checked round trip runs by
#       UDP, no packet through a lane either way. (b) 65534 connects to a running
#       server's lane listener and passes it a sealed memfd laid out as a lane: the
#       server hangs up without taking it (its state word stays "offered"), counts
#       local_refused, and then runs a checked round trip with its own user's client
#       through lanes.
# Needs root and setpriv; skipped (77) where another user cannot be made.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
. "$(dirname "$0")/common.sh"
sys_setup "$@"
ATTACKER=${1:?usage: local_user.sh ATTACKER URNIC counters|port|share|secure|lanes}
URNIC=${2:?usage: local_user.sh ATTACKER URNIC counters|port|share|secure|lanes}
PART=${3:?usage: local_user.sh ATTACKER URNIC counters|port|share|secure|lanes}
W=$SYS_WORK
OTHER=65534
ME=$(id -u)

[ "$ME" = 0 ] || skip "needs root to run the attacker as another user (uid $OTHER)"
command -v setpriv >/dev/null || skip "setpriv (util-linux) not found"
as_other() { setpriv --reuid=$OTHER --regid=$OTHER --clear-groups "$@"; }
# in a subshell, `(as_other_exec ...) &`: then $! is the program's own pid
as_other_exec() { exec setpriv --reuid=$OTHER --regid=$OTHER --clear-groups "$@"; }
as_other true 2>/dev/null || skip "setpriv cannot switch to uid $OTHER here"
command -v ibv_rc_pingpong >/dev/null || fail "ibv_rc_pingpong not found (ibverbs-utils)"

# victim NAME PORT [ENV...]: an ibv_rc_pingpong server on SRV_ADDR (its QP made, so its
# device is running) whose pid is known before it starts: it waits on $W/NAME.go until
# `release NAME`. Sets VPID.
victim() {
	_v=$1
	_p=$2
	shift 2
	mkfifo "$W/$_v.go"
	(
		sh -c 'echo $PPID' >"$W/$_v.pid"
		read -r _ <"$W/$_v.go"
		# shellcheck disable=SC2086
		ibv "$SRV_ADDR" env "$@" ibv_rc_pingpong -g 1 -p "$_p" -n 1
	) >"$W/$_v.log" 2>&1 &
	VPID=$!
	track $VPID
	_n=0
	while [ ! -s "$W/$_v.pid" ] && [ $_n -lt 50 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	[ "$(cat "$W/$_v.pid")" = "$VPID" ] || fail "$_v: pid $(cat "$W/$_v.pid"), not $VPID"
}

# release NAME PORT: lets the victim start and waits until its QP exists (it listens)
release() {
	echo go >"$W/$1.go"
	wait_listen "$(cat "$W/$1.pid")" "$2" 10 || fail "$1 is not listening on $2: $(cat "$W/$1.log")"
}

# attacker MODE ARG...: local_attacker's MODE (hold, lane) as uid 65534 until the test
# ends; waits for its "ready". Sets HOLDER.
attacker() {
	# Emptied first: the subshell's redirection may come after the first look below,
	# which would then find the previous holder's "ready".
	: >"$W/holder.log"
	(as_other_exec "$ATTACKER" "$@") >"$W/holder.log" 2>&1 &
	HOLDER=$!
	track $HOLDER
	_n=0
	while ! grep -q ready "$W/holder.log" && [ $_n -lt 50 ]; do
		alive $HOLDER || fail "the attacker could not $*: $(cat "$W/holder.log")"
		sleep 0.1
		_n=$((_n + 1))
	done
	grep -q ready "$W/holder.log" || fail "the attacker is not ready"
}

# hold SPEC...: the attacker holds them until the test ends; waits for it. Sets HOLDER.
hold() {
	attacker hold "$@"
}

# mode_owner FILE: "MODE UID" of FILE, not following a link
mode_owner() { stat -c '%a %u' "$1"; }

counters_part() {
	# (a) and (b): a link and a file of the other user at two victims' names.
	echo precious >"$W/target"
	cp "$W/target" "$W/target.orig"
	victim v1 "$PP_PORT"
	V1=$VPID
	as_other ln -s "$W/target" "/dev/shm/urnic.$V1.urnic0" || fail "ln -s as $OTHER"
	victim v2 $((PP_PORT + 1))
	V2=$VPID
	as_other "$ATTACKER" counters "/dev/shm/urnic.$V2.urnic0" "$V2" ||
		fail "the forged counters file"
	cp "/dev/shm/urnic.$V2.urnic0" "$W/forged.orig"
	release v1 "$PP_PORT"
	release v2 $((PP_PORT + 1))

	cmp -s "$W/target" "$W/target.orig" || fail "v1 wrote through the link into its target"
	[ -L "/dev/shm/urnic.$V1.urnic0" ] || fail "v1 replaced the other user's link"
	cmp -s "/dev/shm/urnic.$V2.urnic0" "$W/forged.orig" || fail "v2 changed the other user's file"
	[ "$(mode_owner "/dev/shm/urnic.$V2.urnic0")" = "644 $OTHER" ] ||
		fail "v2 changed the other user's file's mode or owner: $(mode_owner "/dev/shm/urnic.$V2.urnic0")"
	for v in v1 v2; do
		vp=$(cat "$W/$v.pid")
		grep -q "urnic.$vp.urnic0 belongs to another user (uid $OTHER), not used" "$W/$v.log" ||
			fail "$v does not say that another user holds its name"
		set -- /dev/shm/urnic."$vp".urnic0.*
		if [ $# != 1 ] || [ ! -f "$1" ]; then
			fail "$v has no counters file of its own: $*"
		fi
		[ "$(mode_owner "$1")" = "600 $ME" ] ||
			fail "$v's counters file $1 is $(mode_owner "$1"), not mode 600 of uid $ME"
		! as_other cat "$1" >/dev/null 2>&1 || fail "uid $OTHER can read $1"
		"$URNIC" counters "$vp" >"$W/$v.cli.log" 2>&1 || fail "urnic counters $vp: $(cat "$W/$v.cli.log")"
		grep -q "^urnic0 ($SRV_ADDR), pid $vp" "$W/$v.cli.log" ||
			fail "urnic counters does not show $v's device: $(cat "$W/$v.cli.log")"
		! grep -q 6.6.6.6 "$W/$v.cli.log" || fail "urnic counters shows the forged file"
		! as_other "$URNIC" counters "$vp" >"$W/$v.other.log" 2>&1 ||
			fail "uid $OTHER reads $v's counters: $(cat "$W/$v.other.log")"
		grep -q "not readable" "$W/$v.other.log" ||
			fail "urnic counters does not say the file is private: $(cat "$W/$v.other.log")"
	done
	say "a link and a forged file at the victims' names were left alone; their files are mode 600 of uid $ME"
	stop_pid "$V1"
	stop_pid "$V2"

	# The owner's choice: readable by others, and a mode that is refused. A stale file
	# of the owner's own at the name (a killed process that had the pid) is replaced.
	victim v3 $((PP_PORT + 2)) URNIC_COUNTERS_MODE=0644
	V3=$VPID
	echo stale >"/dev/shm/urnic.$V3.urnic0"
	release v3 $((PP_PORT + 2))
	set -- /dev/shm/urnic."$V3".urnic0
	[ "$(mode_owner "$1")" = "644 $ME" ] || fail "URNIC_COUNTERS_MODE=0644 gave $(mode_owner "$1")"
	[ "$(stat -c %s "$1")" -gt 6 ] || fail "v3 did not replace its user's stale file"
	! grep -q "belongs to another user" "$W/v3.log" || fail "v3 took its own stale file for another user's"
	as_other "$URNIC" counters "$V3" >"$W/v3.other.log" 2>&1 ||
		fail "uid $OTHER cannot read a 0644 counters file: $(cat "$W/v3.other.log")"
	grep -q "^urnic0 ($SRV_ADDR), pid $V3" "$W/v3.other.log" || fail "uid $OTHER: no urnic0 of $V3"
	stop_pid "$V3"
	if (ibv "$SRV_ADDR" env URNIC_COUNTERS_MODE=0666 ibv_devinfo) >"$W/bad.log" 2>&1; then
		fail "URNIC_COUNTERS_MODE=0666: ibv_devinfo exited 0"
	fi
	grep -q "URNIC_COUNTERS_MODE='0666' is not" "$W/bad.log" ||
		fail "URNIC_COUNTERS_MODE=0666 is not named: $(cat "$W/bad.log")"
	say "URNIC_COUNTERS_MODE=0644 lets uid $OTHER read; 0666 fails the open with a message"
}

port_part() {
	# The wildcard address only in a namespace of our own: on the host's it would take
	# port 4791 from every other test.
	wild=0.0.0.0
	if [ "$URNIC_SYS_NETNS" != private ]; then
		wild=
		say "NOTE: no private network namespace: the wildcard address is not tried"
	fi
	for spec in "$SRV_ADDR" $wild; do
		hold "udp:$spec:4791"
		(ibv "$SRV_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT" -n 1) >"$W/port.log" 2>&1 &
		pid=$!
		track $pid
		wait_exit $pid 10
		rc=$?
		if [ $rc = 0 ] || [ $rc = 124 ]; then
			fail "with $spec:4791 held, the server exited $rc"
		fi
		grep -q "UDP port 4791 on $SRV_ADDR is held by another user's socket (uid $OTHER)" \
			"$W/port.log" || fail "$spec:4791 held: no clear message: $(cat "$W/port.log")"
		stop_pid $HOLDER
		say "$spec:4791 held by uid $OTHER: $(grep 'held by' "$W/port.log")"
	done
}

share_part() {
	hold "unix:urnic.$SRV_ADDR.0" "unix:urnic.$SRV_ADDR.join"
	# shellcheck disable=SC2086 # PP_CHK is empty or one word
	(ibv "$SRV_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT" -n 1 $PP_CHK) >"$W/srv.log" 2>&1 &
	srv=$!
	track $srv
	wait_listen $srv "$PP_PORT" 10 || fail "server not listening: $(cat "$W/srv.log")"
	for n in 0 join; do
		grep -q "urnic.$SRV_ADDR.$n is held by another user's socket (uid $OTHER)" "$W/srv.log" ||
			fail "the server does not say that uid $OTHER holds urnic.$SRV_ADDR.$n"
	done
	# A packet for QPN 0x000011: slot 0, the attacker's name.
	"$ATTACKER" send "$SRV_ADDR" 0x000011 || fail "send"
	sleep 0.5
	"$URNIC" counters "$srv" >"$W/cli.log" 2>&1 || fail "urnic counters: $(cat "$W/cli.log")"
	refused=$(awk '$1 == "drop_forward_foreign_owner" { print $2 }' "$W/cli.log")
	[ "${refused:-0}" -ge 1 ] || fail "drop_forward_foreign_owner is ${refused:-absent}"
	# shellcheck disable=SC2086
	(ibv "$CLI_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT" -n 1 $PP_CHK "$SRV_ADDR") \
		>"$W/cli_pp.log" 2>&1 &
	cli=$!
	track $cli
	wait_exit $cli 20 || fail "client exited with status $?"
	wait_exit $srv 10 || fail "server exited with status $?"
	stop_pid $HOLDER
	grep -q "^received 0$" "$W/holder.log" ||
		fail "uid $OTHER's socket got forwarded packets: $(cat "$W/holder.log")"
	say "slot 0 and the lock held by uid $OTHER: said, $refused refused, nothing forwarded to it"
}

secure_part() {
	[ "$SANITIZE" != ON ] || skip "not under the sanitizers (their runtime in a privileged process)"
	command -v setcap >/dev/null || skip "setcap (libcap2-bin) not found"
	chmod 711 "$W"
	cp "$ATTACKER" "$W/attacker-cap"
	cp "$URNIC" "$W/urnic-cap"
	setcap cap_net_raw+ep "$W/attacker-cap" && setcap cap_net_raw+ep "$W/urnic-cap" ||
		skip "setcap failed here"
	[ "$(as_other "$W/attacker-cap" secure)" = 1 ] ||
		skip "file capabilities do not make a process AT_SECURE here (nosuid mount?)"
	as_other env URNIC_ADDR=127.0.0.77 "$W/urnic-cap" devices >"$W/devices.log" 2>&1
	! grep -q 127.0.0.77 "$W/devices.log" ||
		fail "a program with file capabilities took URNIC_ADDR: $(cat "$W/devices.log")"
	say "a program with file capabilities ignores URNIC_ADDR: $(head -n 3 "$W/devices.log" | tr '\n' ' ')"
}

# lane_name ADDR: the abstract name of the lanes to slot 0 of IPv4 ADDR (local.c)
lane_name() {
	# shellcheck disable=SC2046,SC2183 # the four bytes, split on purpose
	printf 'urnic.lane.%02x%02x%02x%02x.0' $(echo "$1" | tr . ' ')
}

# lanes_ctr LOG NAME...: "NAME VALUE" of each counter in LOG
lanes_ctr() {
	_l=$1
	shift
	for _c in "$@"; do printf '%s %s ' "$_c" "$(counter "$_l" "$_c")"; done
}

lanes_part() {
	name=$(lane_name "$SRV_ADDR")
	# (a) The name of the server's lanes held by uid 65534 before the server starts.
	attacker lane "$name"
	# shellcheck disable=SC2086 # PP_CHK is empty or one word
	(ibv "$SRV_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT" -n 20 $PP_CHK) >"$W/a_srv.log" 2>&1 &
	srv=$!
	track $srv
	wait_listen $srv "$PP_PORT" 10 || fail "server not listening: $(cat "$W/a_srv.log")"
	grep -q "URNIC_LOCAL: no shared memory lanes: their name is held by a process of uid $OTHER" \
		"$W/a_srv.log" ||
		fail "the server does not say whose process holds its lanes' name: $(cat "$W/a_srv.log")"
	# shellcheck disable=SC2086
	(ibv "$CLI_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT" -n 20 $PP_CHK "$SRV_ADDR") \
		>"$W/a_cli.log" 2>&1 &
	cli=$!
	track $cli
	wait_exit $cli 20 || fail "(a) client exited with status $?: $(cat "$W/a_cli.log")"
	wait_exit $srv 10 || fail "(a) server exited with status $?: $(cat "$W/a_srv.log")"
	sleep 0.3 # the last connection reaches the attacker's accept
	stop_pid $HOLDER
	for log in a_srv a_cli; do
		grep -q 'bytes in .* seconds' "$W/$log.log" || fail "(a) $log: no round trip"
		! grep -q 'invalid data' "$W/$log.log" || fail "(a) $log: invalid data"
		say "(a) $log: $(lanes_ctr "$W/$log.log" tx_packets tx_sends tx_local rx_local)"
		for c in tx_local rx_local; do
			[ "$(counter "$W/$log.log" $c)" = 0 ] ||
				fail "(a) $log: $c with its lane name held by uid $OTHER"
		done
	done
	got=$(grep '^connections' "$W/holder.log")
	say "(a) uid $OTHER's listener on @$name: $got"
	# shellcheck disable=SC2086 # "connections N bytes B fds F": split on purpose
	set -- $got
	[ $# = 6 ] || fail "(a) the attacker said: $(cat "$W/holder.log")"
	[ "$2" -ge 1 ] || fail "(a) the client never offered a lane to @$name"
	[ "$4" = 0 ] || fail "(a) uid $OTHER received $4 bytes"
	[ "$6" = 0 ] || fail "(a) uid $OTHER received $6 descriptors"

	# (b) A lane offered by uid 65534 to a running server.
	# shellcheck disable=SC2086
	(ibv "$SRV_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT" -n 500 $PP_CHK) >"$W/b_srv.log" 2>&1 &
	srv=$!
	track $srv
	wait_listen $srv "$PP_PORT" 10 || fail "server not listening: $(cat "$W/b_srv.log")"
	as_other "$ATTACKER" offer "$name" >"$W/offer.log" 2>&1 ||
		fail "(b) the attacker's offer: $(cat "$W/offer.log")"
	say "(b) uid $OTHER passed a lane to @$name: $(cat "$W/offer.log")"
	# It may hang up before or after the lane came (passed 0 or 1), never take it.
	grep -Eqx "passed [01] hangup 1 state 1" "$W/offer.log" ||
		fail "(b) the server did not hang up on uid $OTHER's lane untaken"
	# shellcheck disable=SC2086
	(ibv "$CLI_ADDR" ibv_rc_pingpong -g 1 -p "$PP_PORT" -n 500 $PP_CHK "$SRV_ADDR") \
		>"$W/b_cli.log" 2>&1 &
	cli=$!
	track $cli
	wait_exit $cli 20 || fail "(b) client exited with status $?: $(cat "$W/b_cli.log")"
	wait_exit $srv 10 || fail "(b) server exited with status $?: $(cat "$W/b_srv.log")"
	for log in b_srv b_cli; do
		grep -q 'bytes in .* seconds' "$W/$log.log" || fail "(b) $log: no round trip"
		! grep -q 'invalid data' "$W/$log.log" || fail "(b) $log: invalid data"
		say "(b) $log: $(lanes_ctr "$W/$log.log" tx_local rx_local local_refused)"
	done
	# The server took its own user's lane after refusing 65534's: the client's packets
	# came through it. (The server's own lane to the client may be taken only after the
	# round trips ended, on a slow machine: it is not what is tested here.)
	[ "$(counter "$W/b_srv.log" rx_local)" -gt 0 ] ||
		fail "(b) b_srv: no rx_local after the refused lane"
	[ "$(counter "$W/b_cli.log" tx_local)" -gt 0 ] ||
		fail "(b) b_cli: no tx_local after the server refused uid $OTHER's lane"
	# The counters it printed at exit: one lane refused, uid 65534's.
	refused=$(counter "$W/b_srv.log" local_refused)
	[ "$refused" = 1 ] || fail "(b) the server refused $refused lanes, not 1"
	say "(b) the server refused uid $OTHER's lane and took its own user's"
}

pp_chk_probe
case $PART in
counters) counters_part ;;
port) port_part ;;
share) share_part ;;
secure) secure_part ;;
lanes) lanes_part ;;
*) fail "unknown part $PART" ;;
esac
say ok
