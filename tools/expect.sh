#!/bin/sh
# expect.sh CODE REGEX CMD [ARG...] - runs CMD, shows what it printed (stdout and
# stderr), and passes only if CMD exited with status CODE and printed a line matching
# the extended regular expression REGEX. For CTest, whose PASS_REGULAR_EXPRESSION
# ignores the exit status.
code=$1
regex=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne "$code" ]; then
	echo "expect.sh: '$*' exited with $rc, expected $code" >&2
	exit 1
fi
if ! printf '%s\n' "$out" | grep -Eq -- "$regex"; then
	echo "expect.sh: no line of the output matches /$regex/" >&2
	exit 1
fi
exit 0
