#!/bin/sh
# SPDX-License-Identifier: MIT
# mpi_ofi.sh URNIC EXAMPLE_DIR RUNS - Debian's Open MPI over libfabric over urnic: the
# cm PML with the ofi MTL on libfabric's verbs;ofi_rxd provider (its defaults: GID
# index 0), two ranks on two addresses (`urnic run --per-rank`), RUNS times in a row.
# Every run must end with status 0 and the example's "all data checked: ok"; a run
# that dies at exit (the library unloaded under its engine thread, SIGSEGV) fails the
# test. urnic's counters show the first run's bytes went over urnic.
# Environment: LIBDIR, SANITIZE, CC, SLOT (common.sh).
URNIC=${1:?usage: mpi_ofi.sh URNIC EXAMPLE_DIR RUNS}
EXDIR=${2:?usage: mpi_ofi.sh URNIC EXAMPLE_DIR RUNS}
RUNS=${3:?usage: mpi_ofi.sh URNIC EXAMPLE_DIR RUNS}
# shellcheck source=../system/common.sh
. "$(dirname "$0")/../system/common.sh"
# shellcheck source=mw.sh
. "$(dirname "$0")/mw.sh"
sys_setup "$@"
need mpirun.openmpi openmpi-bin
need fi_info libfabric-bin
EXAMPLE=$EXDIR/mpi_example.openmpi
[ -x "$EXAMPLE" ] || skip "$EXAMPLE was not built (libopenmpi-dev)"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# Each rank's stderr (urnic's counters at exit) into a file of its own.
TO_FILE=$SYS_WORK/to_file
cat >"$TO_FILE" <<EOF2 || fail "cannot write $TO_FILE"
#!/bin/sh
exec "\$@" 2>"$SYS_WORK/rank.\$\$.log"
EOF2
chmod +x "$TO_FILE" || fail "chmod $TO_FILE"
W=4
ARGS="-n 200 -r 1 -w $W -a 4096"
BULK=$((2 * W * 1048576)) # the warm-up window and one measured
# SAN_ENV: words without blanks, split on purpose.
CMD="mpirun.openmpi -np 2 --oversubscribe --mca pml cm --mca mtl ofi"
CMD="$CMD --mca mtl_ofi_provider_include verbs;ofi_rxd --mca btl self"
CMD="$CMD $TO_FILE env URNIC_PRINT_COUNTERS=1 $SAN_ENV $URNIC run"
CMD="$CMD --addr $SRV_ADDR,$CLI_ADDR --per-rank -- $EXAMPLE $ARGS"
say "$CMD"
i=1
while [ $i -le "$RUNS" ]; do
	rm -f "$SYS_WORK"/rank.*.log
	log=$SYS_WORK/run$i.log
	# CMD: words split on purpose (the provider name has no blank).
	# shellcheck disable=SC2086
	(exec $CMD) >"$log" 2>&1 &
	pid=$!
	track $pid
	wait_exit $pid 60
	rc=$?
	if [ $rc != 0 ] || ! grep -q '^all data checked: ok$' "$log"; then
		tail -n 20 "$log"
		cat "$SYS_WORK"/rank.*.log 2>/dev/null | tail -n 20
		fail "run $i of $RUNS: status $rc"
	fi
	if [ $i = 1 ]; then
		grep -E '^(pingpong|bandwidth|allreduce)' "$log"
		cat "$SYS_WORK"/rank.*.log >"$SYS_WORK/counters.txt"
		carried "$SYS_WORK/counters.txt" "$SRV_ADDR" tx_bytes "$BULK"
		carried "$SYS_WORK/counters.txt" "$CLI_ADDR" rx_bytes "$BULK"
	fi
	i=$((i + 1))
done
say "$RUNS runs of Open MPI over libfabric (verbs;ofi_rxd) ended with status 0"
say ok
