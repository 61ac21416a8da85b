#!/bin/sh
# SPDX-License-Identifier: MIT
# urnic_run.sh URNIC - `urnic run` shows the drop-in's devices where tools look for them.
#
# Inside `urnic run --addr $SRV_ADDR`: /sys/class/infiniband/urnic0 holds what urnic's
# verbs report, in the kernel's formats (GID 1 ::ffff:<addr>, RoCE v2, its netdev lo;
# the node GUID ibv_devinfo prints), /sys/class/infiniband_verbs names it,
# /dev/infiniband/uverbs0 opens, and Debian's ibv_devinfo -v runs over the drop-in.
# --per-rank picks the address of the MPI local rank. Outside, nothing changed. As
# nobody (when run as root) the same through a user namespace; where user namespaces
# are refused, `urnic run` says so and fails.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
URNIC=${1:?usage: urnic_run.sh URNIC}
. "$(dirname "$0")/common.sh"
sys_setup "$@"

host_view() { ls -d /sys/class/infiniband /sys/class/infiniband_verbs /dev/infiniband 2>&1; }
before=$(host_view)

# SAN_ENV is a list of words without blanks inside them: split on purpose.
# shellcheck disable=SC2086
run() { env $SAN_ENV "$URNIC" run "$@"; }

# Prints name=contents of each file of the view, and what else is checked below (for
# sh -c: expanded there, not here).
# shellcheck disable=SC2016
show='d=/sys/class/infiniband/urnic0; p=$d/ports/1
for f in $d/node_type $d/node_guid $d/board_id $d/parent $p/state $p/phys_state \
	$p/link_layer $p/rate $p/gids/1 $p/gids/2 $p/gid_attrs/types/1 $p/gid_attrs/ndevs/1 \
	/sys/class/infiniband_verbs/abi_version /sys/class/infiniband_verbs/uverbs0/ibdev; do
	printf "%s=%s\n" "${f#/sys/class/}" "$(cat "$f")"
done
printf "net=%s\n" "$(ls $d/device/net)"
[ -e $p/gid_attrs/types/2 ] || echo "types/2 absent"
[ -c /dev/infiniband/uverbs0 ] && : </dev/infiniband/uverbs0 && echo "uverbs0 opens"
echo "uid=$(id -u) LD_LIBRARY_PATH=$LD_LIBRARY_PATH URNIC_ADDR=$URNIC_ADDR"'

log=$SYS_WORK/tree.log
run --addr "$SRV_ADDR" -- sh -c "$show" >"$log" 2>&1 || fail "urnic run exited with status $?"
cat "$log"
has() { grep -qxF -- "$2" "$1" || fail "$(basename "$1"): no line '$2'"; }
# The address's four bytes: split on purpose.
# shellcheck disable=SC2046,SC2183
hex=$(printf '%02x%02x:%02x%02x' $(echo "$SRV_ADDR" | tr . ' '))
has "$log" "infiniband/urnic0/ports/1/gids/1=0000:0000:0000:0000:0000:ffff:$hex"
has "$log" "infiniband/urnic0/ports/1/gids/2=0000:0000:0000:0000:0000:0000:0000:0000"
has "$log" "infiniband/urnic0/ports/1/gid_attrs/types/1=RoCE v2"
has "$log" "infiniband/urnic0/ports/1/gid_attrs/ndevs/1=lo"
has "$log" "types/2 absent"
has "$log" "infiniband/urnic0/ports/1/state=4: ACTIVE"
has "$log" "infiniband/urnic0/ports/1/phys_state=5: LinkUp"
has "$log" "infiniband/urnic0/ports/1/link_layer=Ethernet"
has "$log" "infiniband/urnic0/ports/1/rate=100 Gb/sec (4X EDR)"
has "$log" "infiniband/urnic0/node_type=1: CA"
has "$log" "infiniband/urnic0/board_id=URNIC_SOFT_ROCE"
has "$log" "infiniband/urnic0/parent=lo"
has "$log" "net=lo"
has "$log" "infiniband_verbs/abi_version=6"
has "$log" "infiniband_verbs/uverbs0/ibdev=urnic0"
has "$log" "uverbs0 opens"
lib=$(readlink -f "$LIBDIR")
grep -Eq "^uid=0 LD_LIBRARY_PATH=$lib(:.*)? URNIC_ADDR=$SRV_ADDR\$" "$log" ||
	fail "the program's environment is not LD_LIBRARY_PATH=$lib URNIC_ADDR=$SRV_ADDR"

# --per-rank: the program gets the one address of the list at the place of its MPI
# local rank, from Open MPI's variable or from MPICH Hydra's.
for pick in OMPI_COMM_WORLD_LOCAL_RANK=1:$CLI_ADDR MPI_LOCALRANKID=0:$SRV_ADDR; do
	# shellcheck disable=SC2016 # expanded by the program's shell
	got=$(env -u OMPI_COMM_WORLD_LOCAL_RANK -u MPI_LOCALRANKID "${pick%%:*}" \
		$SAN_ENV "$URNIC" run --addr "$SRV_ADDR,$CLI_ADDR" --per-rank -- \
		sh -c 'echo "$URNIC_ADDR"') || fail "urnic run --per-rank exited with status $?"
	[ "$got" = "${pick#*:}" ] ||
		fail "urnic run --per-rank with ${pick%%:*}: URNIC_ADDR=$got, not ${pick#*:}"
done
say "--per-rank: each local rank its address"

# URNIC_ADDR from the environment; ibv_devinfo reads board_id from the view.
vlog=$SYS_WORK/ibv_devinfo_v.log
URNIC_ADDR=$SRV_ADDR run -- ibv_devinfo -v >"$vlog" 2>&1 ||
	fail "urnic run -- ibv_devinfo -v exited with status $?"
grep -E 'node_guid|board_id|phys_port_cnt|GID' "$vlog"
grep -Eq "^[[:space:]]+GID\[[[:space:]]*1\]:[[:space:]]+::ffff:$SRV_ADDR, RoCE v2\$" "$vlog" ||
	fail "ibv_devinfo -v: GID[1] is not '::ffff:$SRV_ADDR, RoCE v2'"
grep -A1 'board_id:' "$vlog" | tail -n 1 | grep -q 'phys_port_cnt:' ||
	fail "ibv_devinfo -v: board_id is not followed by phys_port_cnt"
guid=$(awk '$1 == "node_guid:" { print $2 }' "$vlog")
has "$log" "infiniband/urnic0/node_guid=$guid"

[ "$(host_view)" = "$before" ] || fail "the host's view changed: $(host_view)"

# Not root: a user namespace of its own (when this host lets nobody make one).
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$URNIC"; then
	ulog=$SYS_WORK/nobody.log
	# shellcheck disable=SC2086
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		env $SAN_ENV "$URNIC" run --addr "$SRV_ADDR" -- sh -c "$show" >"$ulog" 2>&1
	rc=$?
	cat "$ulog"
	if grep -q 'cannot create a user namespace' "$ulog"; then
		say "NOTE: this host refuses user namespaces to nobody; not checked as a user"
	else
		[ $rc = 0 ] || fail "urnic run as nobody exited with status $rc"
		has "$ulog" "infiniband/urnic0/ports/1/gid_attrs/ndevs/1=lo"
		has "$ulog" "uverbs0 opens"
		grep -q '^uid=65534 ' "$ulog" || fail "the program does not run as nobody"
	fi
fi

# No user namespace allowed and no privilege: a message and status 1. A user namespace
# of the test's own, limited to none inside, with every capability dropped.
if unshare -U -r true 2>/dev/null; then
	nlog=$SYS_WORK/no_userns.log
	# shellcheck disable=SC2086
	unshare -U -r sh -c 'echo 0 >/proc/sys/user/max_user_namespaces &&
		exec setpriv --bounding-set=-all --inh-caps=-all "$@"' sh \
		env $SAN_ENV "$URNIC" run -- true >"$nlog" 2>&1
	rc=$?
	cat "$nlog"
	[ $rc = 1 ] || fail "urnic run without user namespaces exited with status $rc, not 1"
	grep -q '^urnic run: cannot create a user namespace' "$nlog" ||
		fail "urnic run without user namespaces does not say why it failed"
else
	say "NOTE: no user namespace for the test itself; the refusal is not checked"
fi
say ok
