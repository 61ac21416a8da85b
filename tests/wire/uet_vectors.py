#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""uet_vectors.py - writes a classic pcap (LINKTYPE_ETHERNET) of hand-laid Ultra Ethernet
transport packets (UE 1.0 PDS and SES headers, laid out byte by byte with struct.pack,
independently of urnic's codec and of tools/wireshark/uet.lua) for uet_tshark.sh to check.

Each packet is Ethernet / IPv4 (valid header checksum) / UDP from an entropy source port
to port 4793 (checksum 0), then a PDS header, the SES header its next_hdr names, payload.

Usage: uet_vectors.py OUT.pcap OUT.expected
    the well-formed packets: at least one of every PDS type urnic speaks, with and without
    SES headers and payload, and OUT.expected, the fields uet.lua must show for each
    ("FRAME FIELD VALUE", decimal; "-" for a field that must be absent).
Usage: uet_vectors.py --bad OUT.pcap
    malformed packets, each breaking exactly one rule of what urnic's receiver refuses
    (a short header, an unsupported type, a reserved bit, a code out of range); prints how
    many it wrote, the N of "uet_tshark.sh OUT.pcap /dev/null --malformed N".
"""
import struct
import sys

UET_PORT = 4793

# PDS types and next headers (UE 1.0 PDS, prologue).
TSS, RUD_REQ, ROD_REQ, RUDI_REQ, RUDI_RESP, UUD_REQ = 1, 2, 3, 4, 5, 6
ACK, ACK_CC, ACK_CCX, NACK, CTRL, NACK_CCX, RUD_CC_REQ, ROD_CC_REQ = 7, 8, 9, 10, 11, 12, 13, 14
NONE, REQ_SMALL, REQ_MEDIUM, REQ_STD, RSP, RSP_DATA, RSP_DATA_SMALL = range(7)
SES_BYTES = {REQ_SMALL: 20, REQ_MEDIUM: 32, REQ_STD: 44, RSP: 12, RSP_DATA: 20,
             RSP_DATA_SMALL: 12}
# CTRL types, SES opcodes, return codes used here.
C_NOP, C_PROBE, C_CREDIT_REQ = 0, 6, 8
WRITE, READ, SEND, DGRAM_SEND, TAGGED_SEND = 0x01, 0x02, 0x05, 0x07, 0x09
RC_OK = 0x01

# The prologue flag bits each type defines, by the name uet.lua gives them; REQ is the
# 2-bit field in 0x06 (clear 1, close 2).
F_REQ = {"retx": 0x10, "ar": 0x08, "syn": 0x04}
F_ACK = {"epsn": 0x40, "m": 0x20, "retx": 0x10, "p": 0x08, "req": 0x06}
F_NAMED = {
    RUD_REQ: F_REQ, ROD_REQ: F_REQ, RUD_CC_REQ: F_REQ, ROD_CC_REQ: F_REQ,
    RUDI_REQ: {"retx": 0x10}, RUDI_RESP: {"m": 0x20, "retx": 0x10}, UUD_REQ: {},
    ACK: F_ACK, ACK_CC: {k: v for k, v in F_ACK.items() if k != "epsn"},
    NACK: {"m": 0x20, "retx": 0x10, "nt": 0x08},
    CTRL: {"isrod": 0x20, "retx": 0x10, "ar": 0x08, "syn": 0x04},
}
ALL_FLAGS = ("retx", "ar", "syn", "m", "p", "epsn", "nt", "isrod", "req")
SYN, AR, RETX, P, EPSN, M, NT, ISROD = 0x04, 0x08, 0x10, 0x08, 0x40, 0x20, 0x08, 0x20
REQ_CLEAR, REQ_CLOSE = 0x02, 0x04
SES_FLAG_BITS = {"dc": 0x20, "ie": 0x10, "rel": 0x08, "hd": 0x04, "eom": 0x02, "som": 0x01}
SOM, EOM, HD = 0x01, 0x02, 0x04


def low_bit(mask):
    return (mask & -mask).bit_length() - 1


class Pkt:
    """A UDP payload being laid out and the fields uet.lua must show for it."""

    def __init__(self, what):
        self.what = what
        self.data = b""
        self.fields = {}

    def put(self, fmt, *vals):
        self.data += struct.pack(">" + fmt, *vals)
        return self

    def f(self, **kv):
        for k, v in kv.items():
            self.fields[k.replace("__", ".")] = v
        return self


def prologue(p, typ, nh, fl):
    p.put("H", typ << 11 | nh << 7 | fl)
    named = F_NAMED.get(typ, {})
    p.f(pds__type=typ, pds__flags=fl)
    if typ == CTRL:
        p.f(pds__ctrl_type=nh, pds__next_hdr="-")
    else:
        p.f(pds__next_hdr=nh, pds__ctrl_type="-")
    for name in ALL_FLAGS:
        mask = named.get(name)
        p.fields["uet.pds.flags." + name] = "-" if mask is None else (fl & mask) >> low_bit(mask)


def pdc_or_syn(p, fl, dpdcid, rsv_pdc, psn_offset, pdc_rsv=0):
    """Bytes 10-11 of a request or CTRL: dpdcid, or with SYN pdc_info | psn_offset."""
    if fl & SYN:
        p.put("H", pdc_rsv << 13 | rsv_pdc << 12 | psn_offset)
        p.f(pds__use_rsv_pdc=rsv_pdc, pds__psn_offset=psn_offset, pds__dpdcid="-")
    else:
        p.put("H", dpdcid)
        p.f(pds__dpdcid=dpdcid, pds__use_rsv_pdc="-", pds__psn_offset="-")


def request(what, typ, nh, fl, cpo, psn, spdcid, dpdcid=0, rsv_pdc=0, psn_offset=0,
            ccc_id=0, credit_target=0, pdc_rsv=0):
    """RUD_REQ / ROD_REQ (12 bytes), RUD_CC_REQ / ROD_CC_REQ (16: req_cc_state)."""
    p = Pkt(what)
    prologue(p, typ, nh, fl)
    p.put("hIH", cpo, psn, spdcid).f(pds__clear_psn_offset=cpo, pds__psn=psn, pds__spdcid=spdcid)
    pdc_or_syn(p, fl, dpdcid, rsv_pdc, psn_offset, pdc_rsv)
    if typ in (RUD_CC_REQ, ROD_CC_REQ):
        p.put("I", ccc_id << 24 | credit_target)
        p.f(pds__ccc_id=ccc_id, pds__credit_target=credit_target)
    else:
        p.f(pds__ccc_id="-", pds__credit_target="-")
    return p


def ack(what, fl, cack, spdcid, dpdcid, nh=NONE, off=0, probe=0, pds_payload=None, typ=ACK):
    """ACK (12 bytes; 16 with EPSN and its payload word): the first 12 of ACK_CC too."""
    p = Pkt(what)
    prologue(p, typ, nh, fl)
    if fl & P:
        p.put("H", probe).f(pds__probe_opaque=probe, pds__ack_psn_offset="-")
    else:
        p.put("h", off).f(pds__ack_psn_offset=off, pds__probe_opaque="-")
    p.put("IHH", cack, spdcid, dpdcid).f(pds__cack_psn=cack, pds__spdcid=spdcid,
                                         pds__dpdcid=dpdcid, pds__psn="-")
    if pds_payload is not None:
        p.put("I", pds_payload).f(pds__payload=pds_payload)
    elif typ == ACK:
        p.f(pds__payload="-", pds__cc_type="-", pds__ack_cc_state="-")
    return p


NSCC_PARTS = (("service_time", 16, 48), ("restore_cwnd", 1, 47), ("rcv_cwnd_pend", 7, 40),
              ("rcvd_bytes", 24, 16), ("ooo_count", 16, 0))
CREDIT_PARTS = (("credit", 24, 40), ("reserved", 24, 16), ("ooo_count", 16, 0))


def ack_cc(what, fl, cack, spdcid, dpdcid, cc_type, mpr, sack_off, bitmap, state, nh=NONE,
           off=0, probe=0, cc_flags=0):
    """ACK_CC (32 bytes): the ACK's 12, cc_type | cc_flags, mpr, sack_psn_offset,
    sack_bitmap, ack_cc_state; state: its parts by name (NSCC_PARTS for cc_type 0,
    CREDIT_PARTS for 1), or for another cc_type the whole 64-bit word."""
    p = ack(what, fl, cack, spdcid, dpdcid, nh, off, probe, typ=ACK_CC)
    parts, prefix = {0: (NSCC_PARTS, "nscc"), 1: (CREDIT_PARTS, "credit")}.get(cc_type, ((), ""))
    word = 0
    for name, bits, shift in parts:
        v = state.get(name, 0)
        assert v < 1 << bits
        word |= v << shift
        p.fields["uet.pds.%s.%s" % (prefix, name)] = v
    if not parts:
        word = state
    p.put("BBhQQ", cc_type << 4 | cc_flags, mpr, sack_off, bitmap, word)
    p.f(pds__cc_type=cc_type, pds__cc_flags=cc_flags, pds__mpr=mpr, pds__sack_psn_offset=sack_off,
        pds__sack_bitmap=bitmap, pds__ack_cc_state=word, pds__payload="-")
    other = {"nscc": "credit", "credit": "nscc"}.get(prefix)
    if other:
        p.fields["uet.pds.%s.ooo_count" % other] = "-"
    return p


def nack(what, fl, code, vendor, psn, spdcid, dpdcid, pds_payload, nh=NONE):
    """NACK (16 bytes); with NT the PSN field is a RUDI packet ID and the PDCs are 0."""
    p = Pkt(what)
    prologue(p, NACK, nh, fl)
    p.put("BBIHHI", code, vendor, psn, spdcid, dpdcid, pds_payload)
    p.f(pds__nack_code=code, pds__vendor_code=vendor, pds__spdcid=spdcid, pds__dpdcid=dpdcid,
        pds__payload=pds_payload)
    if fl & NT:
        p.f(pds__nack_pkt_id=psn, pds__nack_psn="-")
    else:
        p.f(pds__nack_psn=psn, pds__nack_pkt_id="-")
    return p


def ctrl(what, ctrl_type, fl, word, psn, spdcid, dpdcid=0, rsv_pdc=0, psn_offset=0,
         pds_payload=0):
    """CTRL (16 bytes): bytes 2-3 are PROBE's opaque value, else reserved."""
    p = Pkt(what)
    prologue(p, CTRL, ctrl_type, fl)
    p.put("HIH", word, psn, spdcid)
    if ctrl_type == C_PROBE:
        p.f(pds__probe_opaque=word, pds__reserved="-")
    else:
        p.f(pds__reserved=word, pds__probe_opaque="-")
    p.f(pds__psn=psn, pds__spdcid=spdcid)
    pdc_or_syn(p, fl, dpdcid, rsv_pdc, psn_offset)
    p.put("I", pds_payload).f(pds__payload=pds_payload)
    return p


def rudi(what, typ, nh, fl, pkt_id, rsv=0):
    """RUDI_REQ / RUDI_RESP (8 bytes): reserved, packet ID."""
    p = Pkt(what)
    prologue(p, typ, nh, fl)
    p.put("HI", rsv, pkt_id).f(pds__reserved=rsv, pds__pkt_id=pkt_id, pds__spdcid="-")
    return p


def uud(what, nh, fl=0, rsv=0):
    """UUD_REQ (4 bytes): the prologue and two reserved bytes."""
    p = Pkt(what)
    prologue(p, UUD_REQ, nh, fl)
    p.put("H", rsv).f(pds__reserved=rsv, pds__psn="-")
    return p


def ses_req(p, nh, opcode, flags, msg_or_len, ri_gen, job_id, pid, ri, buffer_offset=0,
            initiator=0, mkey=0, header_data=0, request_length=0, version=0, op_rsv=0,
            len_rsv=0, pid_rsv=0, ri_rsv=0):
    """SES request header: REQ_SMALL (20 bytes), REQ_MEDIUM (32), REQ_STD (44)."""
    start = len(p.data)
    p.put("BB", op_rsv << 6 | opcode, version << 6 | flags)
    p.f(ses__opcode=opcode, ses__version=version, ses__flags=flags)
    for name, bit in SES_FLAG_BITS.items():
        p.fields["uet.ses.flags." + name] = 1 if flags & bit else 0
    if nh == REQ_STD:
        p.put("H", msg_or_len).f(ses__msg_id=msg_or_len, ses__request_length_small="-")
    else:
        p.put("H", len_rsv << 14 | msg_or_len)
        p.f(ses__request_length_small=msg_or_len, ses__msg_id="-")
    p.put("IHH", ri_gen << 24 | job_id, pid_rsv << 12 | pid, ri_rsv << 12 | ri)
    p.f(ses__ri_generation=ri_gen, ses__job_id=job_id, ses__pid_on_fep=pid,
        ses__resource_index=ri, ses__rsp__opcode="-")
    if nh == REQ_SMALL:
        p.put("Q", buffer_offset).f(ses__buffer_offset=buffer_offset, ses__initiator="-")
    elif nh == REQ_MEDIUM:
        p.put("QIQ", header_data, initiator, mkey)
        p.f(ses__header_data=header_data, ses__initiator=initiator, ses__memory_key=mkey,
            ses__buffer_offset="-")
    else:
        p.put("QIQQI", buffer_offset, initiator, mkey, header_data, request_length)
        p.f(ses__buffer_offset=buffer_offset, ses__initiator=initiator, ses__memory_key=mkey,
            ses__header_data=header_data, ses__request_length=request_length)
    assert len(p.data) - start == SES_BYTES[nh]
    return p


def ses_rsp(p, nh, rsp_opcode, rc, msg_or_len, ri_gen, job_id, modified_length=0,
            read_msg_id=0, length=0, message_offset=0, orig_req_psn=0, rsp_list=0,
            version=0):
    """SES response header: RSP (12 bytes), RSP_DATA (20), RSP_DATA_SMALL (12)."""
    start = len(p.data)
    p.put("BB", rsp_list << 6 | rsp_opcode, version << 6 | rc)
    p.f(ses__rsp__list=rsp_list, ses__rsp__opcode=rsp_opcode, ses__rsp__version=version,
        ses__rsp__return_code=rc, ses__opcode="-")
    if nh == RSP_DATA_SMALL:
        p.put("H", msg_or_len).f(ses__rsp__payload_length=msg_or_len, ses__rsp__msg_id="-")
    else:
        p.put("H", msg_or_len).f(ses__rsp__msg_id=msg_or_len)
    p.put("I", ri_gen << 24 | job_id).f(ses__rsp__ri_generation=ri_gen, ses__rsp__job_id=job_id)
    if nh == RSP:
        p.put("I", modified_length).f(ses__rsp__modified_length=modified_length,
                                      ses__rsp__payload_length="-")
    elif nh == RSP_DATA:
        p.put("HHII", read_msg_id, length, modified_length, message_offset)
        p.f(ses__rsp__read_msg_id=read_msg_id, ses__rsp__payload_length=length,
            ses__rsp__modified_length=modified_length, ses__rsp__message_offset=message_offset)
    else:
        p.put("I", orig_req_psn).f(ses__rsp__orig_req_psn=orig_req_psn)
    assert len(p.data) - start == SES_BYTES[nh]
    return p


def payload(p, data=b""):
    p.data += data
    p.f(payload_length=len(data))
    if not data:
        p.f(payload="-")
    return p


def no_ses(p):
    return payload(p.f(ses__opcode="-", ses__rsp__opcode="-"))


def good():
    """The well-formed packets, in capture order."""
    pk = []
    # RUD_REQ, AR, with REQ_STD WRITE and 64 bytes of data.
    p = request("RUD_REQ REQ_STD WRITE", RUD_REQ, REQ_STD, AR, -3, 0x12345678, 0x0011, 0x0022)
    ses_req(p, REQ_STD, WRITE, SOM | EOM, 7, 1, 0x000005, 3, 4, buffer_offset=0x10000000,
            initiator=9, mkey=0xdeadbeefcafef00d, request_length=64)
    pk.append(payload(p, bytes(range(64))))
    # The first request of a PDC: SYN, no dpdcid yet, the PSN's offset from the start PSN.
    p = request("RUD_REQ SYN REQ_STD SEND", RUD_REQ, REQ_STD, SYN | AR, 0, 0x00010005, 0x0101,
                rsv_pdc=1, psn_offset=5)
    ses_req(p, REQ_STD, SEND, SOM, 1, 2, 0x00abcd, 1, 2, initiator=77, header_data=0x1122,
            request_length=5000)
    pk.append(payload(p, b"hello, ultra ethernet"))
    # ROD_REQ READ: no payload, a retransmission; every field at its maximum.
    p = request("ROD_REQ REQ_STD READ (maxima)", ROD_REQ, REQ_STD, RETX | AR, 32767, 0xffffffff,
                0xffff, 0xffff)
    ses_req(p, REQ_STD, READ, SOM | EOM | 0x20 | 0x10 | 0x08 | HD, 0xffff, 0xff, 0xffffff, 0xfff,
            0xfff, buffer_offset=0xffffffffffffffff, initiator=0xffffffff,
            mkey=0xffffffffffffffff, header_data=0x8000000000000001, request_length=0xffffffff)
    pk.append(payload(p))
    # RUD_CC_REQ (req_cc_state) with REQ_SMALL.
    p = request("RUD_CC_REQ REQ_SMALL WRITE", RUD_CC_REQ, REQ_SMALL, 0, -32768, 0x00000100, 0x0002,
                0x0003, ccc_id=7, credit_target=0x123456)
    ses_req(p, REQ_SMALL, WRITE, SOM | EOM, 16, 0, 42, 17, 18, buffer_offset=0x2000)
    pk.append(payload(p, b"0123456789abcdef"))
    # ROD_CC_REQ with REQ_MEDIUM (tagged send with header data).
    p = request("ROD_CC_REQ REQ_MEDIUM TAGGED_SEND", ROD_CC_REQ, REQ_MEDIUM, AR, 1, 0x00000200,
                0x0004, 0x0005, ccc_id=255, credit_target=0xffffff)
    ses_req(p, REQ_MEDIUM, TAGGED_SEND, SOM | EOM | HD, 0x3fff, 3, 0x000100, 0, 0,
            initiator=0x01020304, mkey=0x0a0b0c0d0e0f1011, header_data=0xfedcba9876543210)
    pk.append(payload(p, b"\x00" * 8))
    # ACK without SES: a negative offset (the packet acknowledged lies before cack_psn).
    pk.append(no_ses(ack("ACK", 0, 0x12345678, 0x0022, 0x0011, off=-2)))
    # ACK with EPSN (payload word) asking to clear; ECN-marked.
    pk.append(no_ses(ack("ACK EPSN", EPSN | M | REQ_CLEAR, 0x00000100, 0x0003, 0x0002, off=4,
                         pds_payload=0xa5a5a5a5)))
    # ACK answering a probe: probe_opaque in place of the offset.
    pk.append(no_ses(ack("ACK P", P | RETX, 0x00000200, 0x0005, 0x0004, probe=0xbeef)))
    # ACK_CC, NSCC, with a response.
    p = ack_cc("ACK_CC NSCC RSP", 0, 0x00000300, 0x0011, 0x0022, 0, 32, -1, 0x00000000000000ff,
               {"service_time": 0x1234, "restore_cwnd": 1, "rcv_cwnd_pend": 0x55,
                "rcvd_bytes": 0xabcdef, "ooo_count": 3}, nh=RSP, off=0)
    ses_rsp(p, RSP, 1, RC_OK, 7, 1, 5, modified_length=64)
    pk.append(payload(p))
    # ACK_CC, credit-based, asking to close, with a read response's data.
    p = ack_cc("ACK_CC CREDIT RSP_DATA", REQ_CLOSE, 0x00000400, 0x0011, 0x0022, 1, 255, 16,
               0xffffffffffffffff, {"credit": 0xfffffe, "ooo_count": 0xffff}, nh=RSP_DATA, off=3)
    ses_rsp(p, RSP_DATA, 2, RC_OK, 8, 2, 0xabcdef, modified_length=32, read_msg_id=9, length=32,
            message_offset=4096)
    pk.append(payload(p, bytes(range(32))))
    # NACK: trimmed packet, and a RUDI NACK (NT: a packet ID, no PDCs).
    pk.append(no_ses(nack("NACK TRIMMED", RETX, 0x01, 0, 0x12345679, 0x0022, 0x0011, 0)))
    pk.append(no_ses(nack("NACK NT", NT | M, 0x07, 0x5a, 0x00000042, 0, 0, 0xdeadbeef)))
    pk.append(no_ses(nack("NACK EXP_NACK_FATAL", 0, 0xff, 0xff, 0, 0x0001, 0x0002, 1)))
    # CTRL: a probe, and a CREDIT_REQ opening a ROD PDC (SYN).
    pk.append(no_ses(ctrl("CTRL PROBE", C_PROBE, AR, 0x4242, 0x00000500, 0x0011, 0x0022,
                          pds_payload=0x01020304)))
    pk.append(no_ses(ctrl("CTRL CREDIT_REQ SYN", C_CREDIT_REQ, ISROD | SYN, 0, 0x00000600,
                          0x0030, rsv_pdc=0, psn_offset=0xfff, pds_payload=0x00001000)))
    pk.append(no_ses(ctrl("CTRL NOP", C_NOP, 0, 0, 0x00000700, 0x0011, 0x0022)))
    # RUDI request and an ECN-marked response with a small data response.
    p = rudi("RUDI_REQ REQ_STD SEND", RUDI_REQ, REQ_STD, RETX, 0x00000042)
    ses_req(p, REQ_STD, SEND, SOM | EOM, 11, 0, 1, 1, 1, initiator=1, request_length=4)
    pk.append(payload(p, b"ping"))
    p = rudi("RUDI_RESP M RSP_DATA_SMALL", RUDI_RESP, RSP_DATA_SMALL, M, 0x00000043)
    ses_rsp(p, RSP_DATA_SMALL, 2, RC_OK, 4, 0, 1, orig_req_psn=0x00000042)
    pk.append(payload(p, b"pong"))
    # UUD datagram send with a small request header.
    p = uud("UUD_REQ REQ_SMALL DGRAM_SEND", REQ_SMALL)
    ses_req(p, REQ_SMALL, DGRAM_SEND, SOM | EOM, 3, 0, 99, 12, 13, buffer_offset=0)
    pk.append(payload(p, b"udp"))
    return pk


def bad():
    """Malformed packets, each breaking one rule of what urnic's receiver refuses."""
    pk = []

    def add(what, p):
        p.what = what
        pk.append(p)

    def write_req(fl=AR, nh=REQ_STD, typ=RUD_REQ, **ses):
        p = request("", typ, nh, fl, 0, 0x100, 1, 2)
        if nh in (REQ_SMALL, REQ_MEDIUM, REQ_STD):
            kw = dict(buffer_offset=0, initiator=1, request_length=4)
            kw.update(ses)
            msg = kw.pop("msg_or_len", 4 if nh != REQ_STD else 1)
            ses_req(p, nh, kw.pop("opcode", WRITE), SOM | EOM, msg, 0, 1, 1, 1, **kw)
        return payload(p, b"data")

    def rsp_ack(nh=RSP, **kw):
        p = ack("", 0, 0x100, 2, 1, nh=nh)
        args = dict(modified_length=4)
        args.update(kw)
        return payload(ses_rsp(p, nh, args.pop("rsp_opcode", 1), args.pop("rc", RC_OK),
                               args.pop("msg_or_len", 1), 0, 1, **args))

    def cc(cc_type=0, state=None, **kw):
        return no_ses(ack_cc("", 0, 0x100, 2, 1, cc_type, 0, 0, 1,
                             {} if state is None else state, **kw))

    def cut(p, n):
        p.data = p.data[:n]
        return p

    def raw(typ, n):
        p = Pkt("")
        p.put("H", typ << 11).data += bytes(n)
        return p

    add("truncated PDS: RUD_REQ, 10 of 12 bytes", cut(write_req(), 10))
    add("truncated PDS: ACK with EPSN, 12 of 16 bytes", no_ses(ack("", EPSN, 1, 2, 3)))
    add("truncated SES: REQ_STD, 30 of 44 bytes", cut(write_req(), 12 + 30))
    add("type 1 TSS (unsupported)", raw(TSS, 30))
    add("type 9 ACK_CCX (unsupported)", raw(ACK_CCX, 30))
    add("type 12 NACK_CCX (unsupported)", raw(NACK_CCX, 30))
    add("type 20 (unknown)", raw(20, 30))
    add("type 0 (unknown)", raw(0, 30))
    add("request flag 0x40 (reserved)", write_req(fl=AR | 0x40))
    add("request flag 0x01 (reserved)", write_req(fl=AR | 0x01))
    add("ACK REQ field 3", no_ses(ack("", REQ_CLEAR | REQ_CLOSE, 1, 2, 3)))
    add("ACK_CC with EPSN (only ACK has it)",
        no_ses(ack_cc("", EPSN, 0x100, 2, 1, 0, 0, 0, 1, {})))
    add("NACK flag 0x40 (reserved)", no_ses(nack("", 0x40, 0x01, 0, 1, 2, 3, 0)))
    add("ACK_CC cc_type 2", cc(cc_type=2, state=0))
    add("ACK_CC cc_flags 1", cc(cc_flags=1))
    add("CTRL ctrl_type 12", no_ses(ctrl("", 12, 0, 0, 1, 2, 3)))
    add("RUD_REQ next_hdr 9", write_req(nh=9))
    add("RUD_REQ next_hdr NONE", write_req(nh=NONE))
    p = nack("", 0, 0x01, 0, 1, 2, 3, 0, nh=REQ_STD)
    add("NACK with next_hdr REQ_STD", payload(ses_req(p, REQ_STD, WRITE, SOM, 1, 0, 1, 1, 1)))
    p = ack("", 0, 1, 2, 3, nh=REQ_SMALL)
    add("ACK with next_hdr REQ_SMALL", payload(ses_req(p, REQ_SMALL, WRITE, SOM, 4, 0, 1, 1, 1)))
    add("NACK NT with spdcid set", no_ses(nack("", NT, 0x07, 0, 0x42, 5, 0, 0)))
    add("SES version 1", write_req(version=1))
    add("SES opcode 0x20", write_req(opcode=0x20))
    add("SES reserved bits 7..6 of the opcode byte", write_req(op_rsv=1))
    add("SES reserved bits above pid_on_fep", write_req(pid_rsv=0x8))
    add("SES reserved bits above resource_index", write_req(ri_rsv=0x1))
    add("SES reserved bits above REQ_SMALL's length", write_req(nh=REQ_SMALL, len_rsv=2))
    add("response list 2", rsp_ack(rsp_list=2))
    add("response opcode 4", rsp_ack(rsp_opcode=4))
    add("return code 0x30", rsp_ack(rc=0x30))
    add("response version 2", rsp_ack(version=2))
    add("RSP_DATA_SMALL reserved bits above payload_length",
        rsp_ack(nh=RSP_DATA_SMALL, msg_or_len=0x4000 | 4))
    add("NACK code 0x0c (reserved)", no_ses(nack("", 0, 0x0c, 0, 1, 2, 3, 0)))
    add("CREDIT ack_cc_state reserved bits set", cc(cc_type=1, state={"reserved": 1}))
    p = request("", RUD_REQ, REQ_SMALL, SYN, 0, 0x100, 1, psn_offset=1, pdc_rsv=0x4)
    add("SYN request with a pdc_info reserved bit",
        payload(ses_req(p, REQ_SMALL, WRITE, SOM, 4, 0, 1, 1, 1)))
    p = uud("", REQ_SMALL, fl=0x10)
    add("UUD_REQ flag 0x10", payload(ses_req(p, REQ_SMALL, DGRAM_SEND, SOM, 4, 0, 1, 1, 1)))
    add("CTRL NOP bytes 2-3 not zero", no_ses(ctrl("", C_NOP, 0, 0x0100, 1, 2, 3)))
    p = rudi("", RUDI_REQ, REQ_SMALL, 0, 1, rsv=1)
    add("RUDI_REQ bytes 2-3 not zero", payload(ses_req(p, REQ_SMALL, SEND, SOM, 4, 0, 1, 1, 1)))
    return pk


def frame(udp_payload, n):
    """Ethernet / IPv4 / UDP around a UET datagram; the source port is an entropy value."""
    entropy = 0xc000 | ((n * 0x9e37) & 0x3fff)
    udp = struct.pack(">HHHH", entropy, UET_PORT, 8 + len(udp_payload), 0) + udp_payload
    ip = bytearray(struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), n, 0x4000, 64, 17, 0,
                               bytes((192, 0, 2, 1)), bytes((192, 0, 2, 2))))
    s = sum(struct.unpack(">10H", ip))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    ip[10:12] = struct.pack(">H", ~s & 0xffff)
    eth = bytes.fromhex("020000000002" "020000000001" "0800")
    return eth + bytes(ip) + udp


def write_pcap(path, pkts):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for n, p in enumerate(pkts, 1):
            data = frame(p.data, n)
            f.write(struct.pack("<IIII", 1700000000 + n, 0, len(data), len(data)) + data)


def main(argv):
    if len(argv) == 3 and argv[1] == "--bad":
        pkts = bad()
        write_pcap(argv[2], pkts)
        print("uet_vectors: wrote %d malformed packets to %s" % (len(pkts), argv[2]))
        return 0
    if len(argv) != 3 or argv[1].startswith("-"):
        print("usage: uet_vectors.py OUT.pcap OUT.expected | --bad OUT.pcap", file=sys.stderr)
        return 2
    pkts = good()
    write_pcap(argv[1], pkts)
    lines = ["# uet_vectors.py: the fields tools/wireshark/uet.lua must show for each frame",
             "# of %s (FRAME FIELD VALUE; '-': absent)." % argv[1].rsplit("/", 1)[-1]]
    count = 0
    for n, p in enumerate(pkts, 1):
        lines.append("")
        lines.append("# %d: %s" % (n, p.what))
        for k, v in p.fields.items():
            name = k if k.startswith("uet.") else "uet." + k
            lines.append("%d %s %s" % (n, name, v))
            count += 1
    with open(argv[2], "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print("uet_vectors: wrote %d packets to %s, %d field checks to %s"
          % (len(pkts), argv[1], count, argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
