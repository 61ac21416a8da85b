#!/bin/sh
# SPDX-License-Identifier: MIT
# uet_wire.sh - the UET headers seen three ways, which must agree: packets laid out by
# hand from the wire layout (uet_vectors.py, written apart from the C codec), the codec
# (src/wire/uet.c, through test_wire_uet) and the Wireshark dissector
# (tools/wireshark/uet.lua, through uet_tshark.sh):
#   1. the hand-laid good packets: tshark shows every listed field as listed, with no
#      expert info, and the codec decodes the same values;
#   2. the hand-laid bad packets, one rule broken in each: tshark flags every one and the
#      codec refuses every one;
#   3. the codec's own packets (every type, flag set and next header, random fields):
#      tshark dissects them all with no expert info.
#   Usage: uet_wire.sh TEST_WIRE_UET WORKDIR
set -eu
[ $# -eq 2 ] || { echo "usage: uet_wire.sh TEST_WIRE_UET WORKDIR" >&2; exit 2; }
T=$1
W=$2
D=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$W"

python3 "$D/uet_vectors.py" "$W/good.pcap" "$W/good.expected"
sh "$D/uet_tshark.sh" "$W/good.pcap" "$W/good.expected"
"$T" --expected "$W/good.pcap" "$W/good.expected"

n=$(python3 "$D/uet_vectors.py" --bad "$W/bad.pcap" | sed -n 's/.*wrote \([0-9]*\) malformed.*/\1/p')
[ -n "$n" ] && [ "$n" -gt 0 ] || { echo "uet_wire: no bad packets written" >&2; exit 1; }
sh "$D/uet_tshark.sh" "$W/bad.pcap" /dev/null --malformed "$n"
"$T" --refuse "$W/bad.pcap"

"$T" --pcap "$W/codec.pcapng" >/dev/null
sh "$D/uet_tshark.sh" "$W/codec.pcapng" /dev/null
