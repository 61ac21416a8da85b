#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mpa_check_test.py - mpa_check.py on captures made here, so that its verdicts are known.

CRC32c's check value (RFC 3385's polynomial: "123456789" gives 0xe3069283), then one
connection written as pcap (SYN each way, the MPA Request and Reply, FPDUs): it must pass
as made, and fail with a CRC changed, a byte after the last FPDU, a CRC field that is not
zero when the Reply did not negotiate CRC, a DDP version of 2, a hole in the stream, and
a Reply whose C differs from --crc; a connection from the port of an attempt refused just
before (a SYN answered by an RST) must pass. Exits 1 on the first verdict that is not the
expected one.
"""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import mpa_check  # noqa: E402

A, B = bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])
APORT, BPORT = 40000, 18515


def frame(src, sport, dst, dport, seq, flags, payload):
    tcp = struct.pack(">HHIIBBHHH", sport, dport, seq, 0, 5 << 4, flags, 65535, 0, 0)
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(payload), 0, 0, 64, 6,
                     0, src, dst)
    return b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + tcp + payload


def pcap(frames):
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1)
    for f in frames:
        out += struct.pack("<IIII", 0, 0, len(f), len(f)) + f
    return out


def mpa_rr(key, flags, pdata):
    return key + bytes([flags, 2]) + struct.pack(">H", len(pdata)) + pdata


def fpdu(ulpdu, crc_on, crc_xor=0):
    body = struct.pack(">H", len(ulpdu)) + ulpdu
    body += b"\0" * (-len(body) % 4)
    crc = mpa_check.crc32c(body) ^ crc_xor if crc_on else crc_xor
    return body + struct.pack("<I", crc)


def send(msn, data, dv=1):
    # untagged (T=0), last (L=1), DDP version dv; RDMAP version 1, Send (3); QN 0
    return bytes([0x40 | dv, 0x43]) + b"\0" * 4 + struct.pack(">III", 0, msn, 0) + data


def capture(crc_on=True, reply_c=None, a_fpdus=None, b_fpdus=None, tail=b"", hole=False,
            refused=False):
    """The initiator A's stream and the responder B's, as segments of one pcap; refused:
    after a first SYN from the same port that B answered with an RST."""
    c = 0x40 if (crc_on if reply_c is None else reply_c) else 0
    a = [mpa_rr(mpa_check.REQ_KEY, c | 0x10, b"\0\1\0\1")]
    a += a_fpdus if a_fpdus is not None else [fpdu(send(1, b"ping"), crc_on)]
    b = [mpa_rr(mpa_check.REP_KEY, c | 0x10, b"\0\1\0\1")]
    b += b_fpdus if b_fpdus is not None else [fpdu(send(1, b"pong!"), crc_on)]
    a[-1] += tail
    frames = [frame(A, APORT, B, BPORT, 999, 0x02, b""),
              frame(B, BPORT, A, APORT, 4999, 0x12, b"")]
    if refused:
        frames = [frame(A, APORT, B, BPORT, 123456, 0x02, b""),
                  frame(B, BPORT, A, APORT, 0, 0x14, b"")] + frames
    for src, sport, dst, dport, seq, segs in ((A, APORT, B, BPORT, 1000, a),
                                              (B, BPORT, A, APORT, 5000, b)):
        for i, s in enumerate(segs):
            if hole and src == A and i == 1:
                seq += len(s)
                continue
            frames.append(frame(src, sport, dst, dport, seq, 0x18, s))
            seq += len(s)
    return pcap(frames)


def verdict(data, crc):
    with tempfile.NamedTemporaryFile(suffix=".pcap") as f:
        f.write(data)
        f.flush()
        r = subprocess.run([sys.executable, os.path.join(HERE, "mpa_check.py"), "--crc",
                            crc, f.name], capture_output=True, text=True, check=False)
    return r.returncode, r.stdout


def main():
    if mpa_check.crc32c(b"123456789") != 0xE3069283:
        print("FAIL: crc32c('123456789') = %#x" % mpa_check.crc32c(b"123456789"))
        return 1
    cases = [
        ("good, CRC on", capture(), "on", 0),
        ("good, CRC off", capture(crc_on=False), "off", 0),
        ("two FPDUs in one segment", capture(a_fpdus=[
            fpdu(send(1, b"a"), True) + fpdu(send(2, b"bcdefg"), True)]), "on", 0),
        ("CRC changed", capture(b_fpdus=[fpdu(send(1, b"pong!"), True, 1)]), "on", 1),
        ("byte after the last FPDU", capture(tail=b"\0"), "on", 1),
        ("CRC field set without CRC", capture(crc_on=False, a_fpdus=[
            fpdu(send(1, b"ping"), False, 0x1234)]), "off", 1),
        ("DDP version 2", capture(a_fpdus=[fpdu(send(1, b"ping", dv=2), True)]), "on", 1),
        ("a hole in the stream", capture(hole=True, a_fpdus=[
            fpdu(send(1, b"a"), True), fpdu(send(2, b"b"), True)]), "on", 1),
        ("Reply without C, --crc on", capture(crc_on=False), "on", 1),
        ("refused first, then connected from the same port", capture(refused=True), "on", 0),
        ("refused first, then a hole", capture(refused=True, hole=True, a_fpdus=[
            fpdu(send(1, b"a"), True), fpdu(send(2, b"b"), True)]), "on", 1),
    ]
    for name, data, crc, want in cases:
        rc, out = verdict(data, crc)
        if rc != want:
            print("FAIL: %s: mpa_check.py exited %d, expected %d\n%s" % (name, rc, want, out))
            return 1
        print("ok: %s (exit %d)" % (name, rc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
