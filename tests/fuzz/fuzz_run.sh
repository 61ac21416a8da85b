#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz_run.sh FUZZER CORPUS SECONDS ARTIFACTS - a bounded libFuzzer run of one target.
#
# New inputs go to a scratch copy of the corpus (the checked-in one is only read); a
# crash, leak or timeout input is copied to ARTIFACTS/<target>-<kind>-<sha1> and named
# here, with the command that reproduces it. Exit: libFuzzer's (0: nothing found, 1: a
# crash, leak or timeout; libFuzzer's own default for those, 77, is CTest's skip code).
set -u
fuzzer=$1
corpus=$2
seconds=$3
artifacts=$4
name=$(basename "$fuzzer")

scratch=$(mktemp -d "${TMPDIR:-/tmp}/urnic-$name.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
trap 'exit 130' INT TERM HUP
mkdir -p "$scratch/new" "$scratch/found" "$artifacts" || exit 1

"$fuzzer" -max_total_time="$seconds" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
	-error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$scratch/found/" "$scratch/new" "$corpus"
rc=$?
for f in "$scratch"/found/*; do
	[ -f "$f" ] || continue
	dest=$artifacts/$name-$(basename "$f")
	cp "$f" "$dest"
	echo "$name: input that failed: $dest"
	echo "$name: reproduce: $fuzzer $dest"
done
echo "$name: $(ls "$scratch/new" | wc -l) new inputs (not kept; see README.md to keep them)"
exit $rc
