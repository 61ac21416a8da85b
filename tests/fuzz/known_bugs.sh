#!/bin/sh
# SPDX-License-Identifier: MIT
# known_bugs.sh REPLAY DIR TARGET - the crash-* inputs kept in DIR (corpus/pending-TARGET)
# show engine bugs not fixed yet, so each must still break an invariant of the harness (if
# one stopped doing so without a fix, the harness would have lost the check); the others
# there (near misses that steer the fuzzer to those bugs) must pass. A crash input that
# replays clean means its bug is fixed: the test fails and says how to move the directory
# into the corpus, where the replay test and the libFuzzer runs will keep it (README.md).
set -u
replay=$1
dir=$2
target=$3
rc=0
n=0
for f in "$dir"/*; do
	[ -f "$f" ] || continue
	name=$(basename "$f")
	out=$("$replay" -m 0 "$f" 2>&1)
	st=$?
	case $name in
	crash-*) n=$((n + 1)) ;;
	*)
		# Near misses and other inputs kept for after the fix: they must pass.
		if [ $st -ne 0 ]; then
			echo "$name: fails, but only crash-* inputs may:"
			echo "$out"
			rc=1
		fi
		continue
		;;
	esac
	if [ $st -eq 0 ]; then
		echo "fixed: $name replays clean"
		rc=1
	elif echo "$out" | grep -q "fuzz invariant broken"; then
		echo "known bug, still caught: $name:"
		echo "$out" | grep "^fuzz: \|fuzz invariant broken" | head -2 | sed 's/^/    /'
	else
		echo "$name: failed without breaking an invariant:"
		echo "$out"
		rc=1
	fi
done
if [ $n -eq 0 ]; then
	echo "no crash inputs in $dir: move the rest to corpus/$target, remove the directory"
	echo "and re-run cmake"
	exit 1
fi
if [ $rc -ne 0 ]; then
	echo "a fixed bug's inputs (its crash-* and near-* files) belong in corpus/$target: in"
	echo "seeds.c name \"$target\" where they name the pending directory, run fuzz_seeds,"
	echo "and git rm them from $dir"
fi
exit $rc
