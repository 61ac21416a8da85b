#!/bin/sh
# SPDX-License-Identifier: MIT
# mpi.sh URNIC EXAMPLE_DIR MPI WHERE - Debian's Open MPI (pml ucx) or MPICH (ch4:ucx)
# runs examples/mpi's mpi_example, two ranks over urnic, its data checked:
#
#   MPI    openmpi | mpich
#   WHERE  2addr: two ranks on one machine, one address each, by README's one-line
#                 recipe (`urnic run --per-rank`, UCX's shared memory off: UCX_TLS=^sm;
#                 Debian's MPICH has no shared memory of its own, ch4:ucx alone)
#          netns: two namespace "machines" joined by a veth pair (mw.sh); mpirun and
#                 mpiexec start the second one's daemon through an agent, as through
#                 ssh, and everything is left at its defaults (no UCX_TLS)
#
# The example must print "all data checked: ok" and exit 0; urnic's counters (each
# rank's device, URNIC_PRINT_COUNTERS=1) must show rank 0 sent, and rank 1 received, at
# least the bytes of the example's bandwidth phase, and each at least one packet per
# ping-pong message: the traffic went over urnic, not shared memory or TCP (on one host,
# 2addr, the bulk's READs are placed directly: the bytes rank 0 sent and wrote and rank
# 1 pulled, at least one tail pulled). Also: with
# -X (a bit flipped before each check) the same run must fail.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
URNIC=${1:?usage: mpi.sh URNIC EXAMPLE_DIR MPI WHERE}
EXDIR=${2:?usage: mpi.sh URNIC EXAMPLE_DIR MPI WHERE}
MPI=${3:?usage: mpi.sh URNIC EXAMPLE_DIR MPI WHERE}
WHERE=${4:?usage: mpi.sh URNIC EXAMPLE_DIR MPI WHERE}
# shellcheck source=../system/common.sh
. "$(dirname "$0")/../system/common.sh"
# shellcheck source=mw.sh
. "$(dirname "$0")/mw.sh"
sys_setup "$@"
case $MPI in
openmpi)
	need mpirun.openmpi openmpi-bin
	# Open MPI refuses root unless told; two ranks need two slots.
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	;;
mpich) need mpiexec.mpich mpich ;;
*) fail "unknown MPI $MPI" ;;
esac
EXAMPLE=$EXDIR/mpi_example.$MPI
[ -x "$EXAMPLE" ] || skip "$EXAMPLE was not built (libopenmpi-dev / libmpich-dev)"
need ucx_info ucx-utils

# The example's sizes: ping-pong round trips, bandwidth windows of W sends of 1 MiB.
N=2000
R=4
W=16
ARGS="-n $N -r $R -w $W -a 65536"
BULK=$(((R + 1) * W * 1048576)) # the warm-up window too

# Each rank's stderr, where urnic prints its counters as the process ends, goes to a
# file of its own rather than through the launcher, which may end before it has
# forwarded a rank's last lines.
TO_FILE=$SYS_WORK/to_file
cat >"$TO_FILE" <<EOF || fail "cannot write $TO_FILE"
#!/bin/sh
exec "\$@" 2>"$SYS_WORK/rank.\$(hostname).\$\$.log"
EOF
chmod +x "$TO_FILE" || fail "chmod $TO_FILE"

# CMD: the launch line, without the example's arguments. SAN_ENV is a list of words
# without blanks (common.sh): split on purpose.
export URNIC_PRINT_COUNTERS=1
case $WHERE in
2addr)
	A=$SRV_ADDR
	B=$CLI_ADDR
	recipe="$TO_FILE env $SAN_ENV $URNIC run --addr $A,$B --per-rank -- $EXAMPLE"
	if [ "$MPI" = openmpi ]; then
		CMD="mpirun.openmpi -np 2 --oversubscribe --mca pml ucx -x UCX_TLS=^sm $recipe"
	else
		CMD="mpiexec.mpich -n 2 -genv UCX_TLS ^sm $recipe"
	fi
	;;
netns)
	mw_hosts_up
	A=$MW_A
	B=$MW_B
	run="$TO_FILE env URNIC_PRINT_COUNTERS=1 $SAN_ENV $URNIC run -- $EXAMPLE"
	# Both "machines" share this one's CPUs: Open MPI would bind each rank to its
	# host's first core, the same core.
	if [ "$MPI" = openmpi ]; then
		CMD="mpirun.openmpi --mca plm_rsh_agent $MW_AGENT --host a:1,b:1 -np 2"
		CMD="$CMD --bind-to none --mca pml ucx $run"
	else
		CMD="mpiexec.mpich -launcher ssh -launcher-exec $MW_AGENT -iface va -hosts a,b"
		CMD="$CMD -n 2 $run"
	fi
	;;
*) fail "unknown WHERE $WHERE" ;;
esac
say "$CMD $ARGS"

# mpi_run TAG EXTRA: the example with ARGS and EXTRA, launched by CMD (on host a for
# netns); its exit status. Log: $SYS_WORK/TAG.log.
mpi_run() {
	rm -f "$SYS_WORK"/rank.*.log
	if [ "$WHERE" = netns ]; then
		(on_host a "$CMD $ARGS $2") >"$SYS_WORK/$1.log" 2>&1 &
	else
		(exec sh -c "$CMD $ARGS $2") >"$SYS_WORK/$1.log" 2>&1 &
	fi
	_pid=$!
	track $_pid
	wait_exit $_pid 40
}

mpi_run run ""
rc=$?
grep -E '^(mpi_example|pingpong|bandwidth|allreduce|all data|FAILED)' "$SYS_WORK/run.log"
[ $rc = 0 ] || fail "the example exited with status $rc"
grep -q '^all data checked: ok$' "$SYS_WORK/run.log" || fail "no 'all data checked: ok' line"
log=$SYS_WORK/counters.txt
cat "$SYS_WORK"/rank.*.log >"$log"
moved "$log" "$A" "$B" "$BULK"
# Between processes of one host the 1 MiB messages' READs are placed directly and split
# (wire/addr.h): rank 0 writes each head into rank 1, rank 1 copies the tail.
[ "$WHERE" != 2addr ] || carried "$log" "$B" read_direct_pulled 1
carried "$log" "$A" tx_packets "$N"
carried "$log" "$B" tx_packets "$N"

# The checks are real: a bit flipped before each check fails the run.
mpi_run spoiled "-X -n 100 -r 1 -a 256"
rc=$?
say "with -X: $(grep -E '^FAILED' "$SYS_WORK/spoiled.log")"
{ [ $rc != 0 ] && grep -q "^FAILED: " "$SYS_WORK/spoiled.log"; } ||
	fail "with -X the example exited with status $rc and no FAILED line"
say ok
