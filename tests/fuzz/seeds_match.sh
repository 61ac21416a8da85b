#!/bin/sh
# SPDX-License-Identifier: MIT
# seeds_match.sh FUZZ_SEEDS GOLDEN_DIR CORPUS_DIR - the corpus holds exactly what
# fuzz_seeds writes today (other files, such as minimised crash inputs, may be added).
# Regenerate with: FUZZ_SEEDS GOLDEN_DIR CORPUS_DIR
set -u
scratch=$(mktemp -d "${TMPDIR:-/tmp}/urnic-seeds.XXXXXX") || exit 1
trap 'rm -rf "$scratch"' EXIT
"$1" "$2" "$scratch" >/dev/null || exit 1
rc=0
for f in "$scratch"/*/*; do
	rel=${f#"$scratch"/}
	if ! cmp -s "$f" "$3/$rel"; then
		echo "seed $rel is missing or differs from what fuzz_seeds writes"
		rc=1
	fi
done
[ $rc -eq 0 ] && echo "ok: $(ls "$scratch"/*/* | wc -l) seed files match"
[ $rc -eq 0 ] || echo "regenerate: $1 $2 $3"
exit $rc
