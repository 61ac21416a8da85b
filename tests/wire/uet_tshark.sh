#!/bin/sh
# SPDX-License-Identifier: MIT
# uet_tshark.sh - checks a capture of UET datagrams (UDP port 4793) against what
# tools/wireshark/uet.lua makes of them, in one tshark run (-T fields):
#   - every frame is dissected as uet (every frame of PCAP is a UET datagram);
#   - no frame has expert info of severity warning or more, nor is malformed, nor
#     made uet.lua fail (a Lua error, which Wireshark also reports as an expert error);
#   - each line "FRAME FIELD VALUE" of EXPECTED holds (FRAME from 1, FIELD a uet.*
#     abbreviation, VALUE decimal, negative for the signed fields; "-": the field is
#     absent from that frame; a VALUE that is not a number is compared as tshark prints
#     it, e.g. the hex of uet.payload). '#' lines and empty lines are ignored. Every
#     mismatch is printed.
#   With --malformed N instead (the capture of bad packets, uet_vectors.py --bad): the
#   capture has N frames and every one of them carries an expert error (a Lua error in
#   uet.lua is still a failure, not a flag); EXPECTED's lines are still checked.
# Exit: 0 all as expected (one summary line), 1 a check failed, 2 usage or tshark error.
#   Usage: uet_tshark.sh PCAP EXPECTED [--malformed N]
set -euf

usage() {
	echo "usage: uet_tshark.sh PCAP EXPECTED [--malformed N]" >&2
	exit 2
}
[ $# -eq 2 ] || [ $# -eq 4 ] || usage
PCAP=$1
EXPECTED=$2
MALFORMED=
if [ $# -eq 4 ]; then
	[ "$3" = --malformed ] || usage
	case $4 in '' | *[!0-9]*) usage ;; esac
	MALFORMED=$4
fi
LUA=$(dirname "$0")/../../tools/wireshark/uet.lua
for f in "$PCAP" "$EXPECTED" "$LUA"; do
	[ -r "$f" ] || { echo "uet_tshark: cannot read $f" >&2; exit 2; }
done
command -v tshark >/dev/null || { echo "uet_tshark: tshark not found" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The fields: what every frame is checked for, then each FIELD EXPECTED names once.
set -- -e frame.number -e frame.protocols -e _ws.expert.severity -e _ws.expert.message \
	-e _ws.malformed -e _ws.lua.error -e _ws.col.Info
for f in $(awk '!/^[[:space:]]*(#|$)/ { print $2 }' "$EXPECTED" | sort -u); do
	set -- "$@" -e "$f"
done
# Occurrences of a field in one frame are joined with '|' (no field value has one).
if ! tshark -n -r "$PCAP" -X "lua_script:$LUA" -T fields -E header=y -E separator=/t \
	-E occurrence=a -E aggregator='|' "$@" >"$tmp/fields" 2>"$tmp/err"; then
	grep -v '^Running as user' "$tmp/err" >&2 || :
	echo "uet_tshark: tshark failed on $PCAP (an unknown field in $EXPECTED, or uet.lua" \
		"did not load)" >&2
	exit 2
fi
# Anything else tshark says (a Lua error while loading uet.lua, ...) is shown.
grep -v '^Running as user' "$tmp/err" >&2 || :

python3 - "$tmp/fields" "$EXPECTED" "$MALFORMED" <<'EOF'
import sys

fields_path, expected_path, malformed = sys.argv[1], sys.argv[2], sys.argv[3]
PI_WARN, PI_ERROR = 0x00600000, 0x00800000  # Wireshark's expert severities

with open(fields_path, encoding="utf-8", errors="replace") as f:
    rows = [line.rstrip("\n").split("\t") for line in f]
head, rows = rows[0], rows[1:]
frames = {}
for r in rows:
    r += [""] * (len(head) - len(r))
    frames[int(r[0])] = dict(zip(head, r))


def number(s):
    """A value as tshark prints it (decimal, or 0x... for the hex fields) as an int."""
    s = s.strip()
    try:
        neg = s.startswith("-")
        digits = s[1:] if neg else s
        v = int(digits, 16) if digits[:2].lower() == "0x" else int(digits, 10)
        return -v if neg else v
    except ValueError:
        return None


problems = []
flagged = 0
notes = 0
for n in sorted(frames):
    fr = frames[n]
    info = fr["_ws.col.Info"]
    if "uet" not in fr["frame.protocols"].split(":"):
        problems.append("frame %d: not dissected as uet (protocols %s)"
                        % (n, fr["frame.protocols"]))
    sev = [number(s) or 0 for s in fr["_ws.expert.severity"].split("|") if s]
    msgs = fr["_ws.expert.message"].replace("|", "; ")
    if fr["_ws.lua.error"]:
        problems.append("frame %d: uet.lua failed: %s" % (n, msgs))
    elif malformed:
        if max(sev, default=0) >= PI_ERROR or fr["_ws.malformed"]:
            flagged += 1
        else:
            problems.append("frame %d: not flagged malformed (no expert error): %s" % (n, info))
    elif max(sev, default=0) >= PI_WARN or fr["_ws.malformed"]:
        problems.append("frame %d: expert info: %s (%s)" % (n, msgs or "malformed", info))
    elif sev:
        notes += 1
if malformed and len(frames) != int(malformed):
    problems.append("%d frames in the capture, expected %s" % (len(frames), malformed))

checked = 0
with open(expected_path, encoding="utf-8") as f:
    for ln, line in enumerate(f, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 3 or not parts[0].isdigit():
            problems.append("%s:%d: not FRAME FIELD VALUE: %s" % (expected_path, ln, line))
            continue
        n, field, want = int(parts[0]), parts[1], parts[2]
        checked += 1
        if n not in frames:
            problems.append("frame %d: %s: no such frame (%s:%d)" % (n, field, expected_path, ln))
            continue
        got = frames[n][field]
        if want == "-":
            if got:
                problems.append("frame %d: %s: expected absent, got %s" % (n, field, got))
            continue
        if not got:
            problems.append("frame %d: %s: expected %s, got nothing (absent)" % (n, field, want))
            continue
        if number(want) is None:
            ok = got == want
        else:
            ok = "|" not in got and number(got) == number(want)
        if not ok:
            g = number(got) if "|" not in got else None
            shown = got if g is None or str(g) == got else "%d (%s)" % (g, got)
            problems.append("frame %d: %s: expected %s, got %s" % (n, field, want, shown))

for p in problems:
    print("uet_tshark: " + p, file=sys.stderr)
if problems:
    print("uet_tshark: FAILED: %d problem%s in %d frames"
          % (len(problems), "" if len(problems) == 1 else "s", len(frames)), file=sys.stderr)
    sys.exit(1)
if malformed:
    tail = "all %d flagged malformed (expert error)" % flagged
else:
    tail = "no expert info" if not notes else "no expert warning or error"
print("uet_tshark: %d frames dissected, %d fields as expected, %s" % (len(frames), checked, tail))
EOF
