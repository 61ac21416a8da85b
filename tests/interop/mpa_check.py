#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mpa_check.py - the iWARP streams of a capture, framed and checked without Wireshark.

    mpa_check.py [--crc on|off] FILE.pcap

Each TCP connection's two byte streams are put back together from the capture
(retransmitted bytes once, a hole is an error), then read as MPA (RFC 5044) reads them:
the MPA Request (key "MPA ID Req Frame") or Reply ("MPA ID Rep Frame") with its private
data (RFC 5044 7.1, revision 2's IRD/ORD in it: RFC 6581 5), then FPDUs to the end of the
stream (RFC 5044 4: ULPDU_Length, the ULPDU, pad to a multiple of 4, the CRC). No byte may
be left over: a stream that is not a whole number of FPDUs fails. The CRC is in use when
the Reply says C (RFC 5044 7.1.2: the Responder sets it when either side asked), and then
every FPDU's CRC32c (RFC 5044 4.4: over ULPDU_Length, ULPDU and pad; the Castagnoli
polynomial of RFC 3385, sent as Linux's crc32c shash writes it, least significant byte
first) must be right; without it the field must be zero, as both siw and urnic send it.
Each ULPDU must hold a DDP header of version 1 (RFC 5041 4) with RDMAP version 1 (RFC 5040
4), whole: 14 bytes tagged, 18 untagged. Markers (M) are refused: neither side uses them.
--crc says whether the Replies must have negotiated the CRC.

Prints one line per direction and a total; exits 1 on any error, 2 on bad usage.
"""
import struct
import sys

REQ_KEY = b"MPA ID Req Frame"
REP_KEY = b"MPA ID Rep Frame"
RDMAP_OPS = {0: "Write", 1: "ReadReq", 2: "ReadResp", 3: "Send", 4: "SendInv",
             5: "SendSE", 6: "SendSEInv", 7: "Terminate"}


def crc32c_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = crc32c_table()


def crc32c(data):
    c = 0xFFFFFFFF
    t = TABLE
    for b in data:
        c = t[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def segments(path):
    """(src, sport, dst, dport, seq, flags, payload) of each TCP/IPv4 segment."""
    with open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic in (0xA1B2C3D4, 0xA1B23C4D):
        end = "<"
    elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
        end = ">"
    else:
        raise ValueError("not a pcap file (pcapng is not read)")
    linktype = struct.unpack(end + "I", data[20:24])[0]
    if linktype != 1:
        raise ValueError("link type %d, not Ethernet" % linktype)
    off = 24
    while off + 16 <= len(data):
        incl = struct.unpack(end + "I", data[off + 8:off + 12])[0]
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(frame) < 14 + 20 or frame[12:14] != b"\x08\x00":
            continue
        ip = frame[14:]
        ihl = (ip[0] & 0x0F) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        if ip[9] != 6:
            continue
        tcp = ip[ihl:total]
        doff = (tcp[12] >> 4) * 4
        sport, dport, seq = struct.unpack(">HHI", tcp[:8])
        yield (ip[12:16], sport, ip[16:20], dport, seq, tcp[13], tcp[doff:])


def streams(path):
    """{(src, sport, dst, dport): bytes} from each direction's last SYN on.

    A SYN with another sequence number on the same addresses and ports is a new
    connection, and the stream starts again: perftest's client, refused (an RST) before
    its server listened, connects again from the same port."""
    isn, parts, errors = {}, {}, []
    for src, sport, dst, dport, seq, flags, payload in segments(path):
        key = (src, sport, dst, dport)
        if flags & 0x02:  # SYN: the stream's first byte is seq + 1
            if isn.get(key) != (seq + 1) & 0xFFFFFFFF:
                parts.pop(key, None)
            isn[key] = (seq + 1) & 0xFFFFFFFF
        if payload:
            parts.setdefault(key, []).append((seq, payload))
    out = {}
    for key, segs in parts.items():
        if key not in isn:
            errors.append("%s: no SYN captured" % name(key))
            continue
        base = isn[key]
        buf = bytearray()
        for seq, payload in sorted(segs, key=lambda s: (s[0] - base) & 0xFFFFFFFF):
            rel = (seq - base) & 0xFFFFFFFF
            if rel > len(buf):
                errors.append("%s: %d bytes missing at %d" % (name(key), rel - len(buf),
                                                            len(buf)))
                break
            buf += payload[len(buf) - rel:]
        out[key] = bytes(buf)
    return out, errors


def name(key):
    src, sport, dst, dport = key
    a = ".".join(str(b) for b in src)
    b = ".".join(str(x) for x in dst)
    return "%s:%d>%s:%d" % (a, sport, b, dport)


def mpa_frame(data, want_key):
    """(flags, rev, private data length, header length) of the Request/Reply."""
    if len(data) < 20 or data[:16] != want_key:
        return None
    flags, rev, pdlen = data[16], data[17], struct.unpack(">H", data[18:20])[0]
    return flags, rev, pdlen, 20 + pdlen


def fpdus(data, off, crc_on, tally):
    """Walks the FPDUs from off; returns the errors."""
    errors = []
    while off < len(data):
        if off + 2 > len(data):
            return errors + ["%d bytes after the last FPDU" % (len(data) - off)]
        ulen = struct.unpack(">H", data[off:off + 2])[0]
        body = 2 + ulen
        pad = -body % 4
        end = off + body + pad + 4
        if end > len(data):
            return errors + ["FPDU at %d: %d bytes, the stream ends after %d" % (
                off, end - off, len(data) - off)]
        crc = data[end - 4:end]
        if crc_on:
            want = struct.pack("<I", crc32c(data[off:end - 4]))
            if crc != want:
                errors.append("FPDU at %d: CRC %s, computed %s" % (off, crc.hex(), want.hex()))
            tally["crc_good" if crc == want else "crc_bad"] += 1
        elif crc != b"\0\0\0\0":
            errors.append("FPDU at %d: CRC field %s without CRC negotiated" % (off, crc.hex()))
        ulpdu = data[off + 2:off + 2 + ulen]
        tagged = ulen >= 1 and ulpdu[0] & 0x80
        hlen = 14 if tagged else 18
        if ulen < hlen:
            errors.append("FPDU at %d: ULPDU of %d bytes, no whole DDP header" % (off, ulen))
        elif ulpdu[0] & 0x03 != 1 or ulpdu[1] >> 6 != 1:
            errors.append("FPDU at %d: DDP version %d, RDMAP version %d" % (
                off, ulpdu[0] & 0x03, ulpdu[1] >> 6))
        else:
            op = RDMAP_OPS.get(ulpdu[1] & 0x0F, "opcode%d" % (ulpdu[1] & 0x0F))
            tally["ops"][op] = tally["ops"].get(op, 0) + 1
        tally["fpdus"] += 1
        off = end
    return errors


def main(argv):
    want_crc = None
    if len(argv) == 4 and argv[1] == "--crc" and argv[2] in ("on", "off"):
        want_crc = argv[2] == "on"
        argv = [argv[0], argv[3]]
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    data, errors = streams(argv[1])
    total = {"fpdus": 0, "crc_good": 0, "crc_bad": 0, "ops": {}}
    nconn = 0
    for key in sorted(data):
        rkey = (key[2], key[3], key[0], key[1])
        req = mpa_frame(data[key], REQ_KEY)
        rep = mpa_frame(data[key], REP_KEY)
        if req is None and rep is None:
            errors.append("%s: neither an MPA Request nor a Reply first" % name(key))
            continue
        frame = req or rep
        if frame[0] & 0x80:
            errors.append("%s: markers (M) asked for" % name(key))
            continue
        reply = rep if rep else mpa_frame(data.get(rkey, b""), REP_KEY)
        if reply is None:
            if len(data[key]) > frame[3]:
                errors.append("%s: FPDUs without a Reply" % name(key))
            print("%s: %s, no Reply" % (name(key), "Request" if req else "Reply"))
            continue
        crc_on = bool(reply[0] & 0x40)
        rejected = bool(reply[0] & 0x20)
        if rep and want_crc is not None and crc_on != want_crc:
            errors.append("%s: Reply with C=%d" % (name(key), crc_on))
        nconn += 1 if rep else 0
        tally = {"fpdus": 0, "crc_good": 0, "crc_bad": 0, "ops": {}}
        errs = fpdus(data[key], frame[3], crc_on, tally)
        errors += ["%s: %s" % (name(key), e) for e in errs[:10]]
        print("%s: %s rev %d C=%d%s, %d FPDUs (%s)%s" % (
            name(key), "Request" if req else "Reply", frame[1], crc_on,
            " R (rejected)" if rejected and rep else "", tally["fpdus"],
            " ".join("%s=%d" % kv for kv in sorted(tally["ops"].items())),
            ", CRC good %d bad %d" % (tally["crc_good"], tally["crc_bad"]) if crc_on else ""))
        for k in ("fpdus", "crc_good", "crc_bad"):
            total[k] += tally[k]
    for e in errors:
        print("mpa_check: ERROR " + e)
    print("mpa_check: %d connections, %d FPDUs, CRC good %d bad %d, %d errors" % (
        nconn, total["fpdus"], total["crc_good"], total["crc_bad"], len(errors)))
    return 1 if errors or nconn == 0 else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
