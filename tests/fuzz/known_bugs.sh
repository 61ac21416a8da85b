#!/bin/sh
# SPDX-License-Identifier: MIT
# known_bugs.sh REPLAY DIR TARGET - the inputs kept in DIR (corpus/pending-TARGET) show
# engine bugs not fixed yet, so each must still break an invariant of the harness (if one
# stopped doing so without a fix, the harness would have lost the check). An input that
# replays clean means its bug is fixed: the test fails and says how to move it into the
# corpus, where the replay test and the libFuzzer runs will keep it (README.md).
set -u
replay=$1
dir=$2
target=$3
rc=0
n=0
for f in "$dir"/*; do
	[ -f "$f" ] || continue
	n=$((n + 1))
	name=$(basename "$f")
	out=$("$replay" -m 0 "$f" 2>&1)
	if [ $? -eq 0 ]; then
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
	echo "no inputs in $dir: remove the directory and re-run cmake"
	exit 1
fi
if [ $rc -ne 0 ]; then
	echo "a fixed bug's input belongs in corpus/$target: in seeds.c name \"$target\" where"
	echo "it names the pending directory, run fuzz_seeds, and git rm $dir/<input>"
fi
exit $rc
