-- SPDX-License-Identifier: MIT
-- uet.lua - a Wireshark dissector for the Ultra Ethernet transport (UE 1.0) on UDP port
-- 4793, which Wireshark 4.0 (Debian 12) does not decode. It lays out the PDS header of
-- every packet type urnic speaks (RUD/ROD requests with and without CC state, RUDI, UUD,
-- ACK, ACK_CC, NACK, CTRL), the SES request or response header its next_hdr names, and
-- the payload after them. Whatever urnic's receiver refuses (src/wire/uet_reason.def: a
-- datagram shorter than its headers, an unknown or unsupported type, a reserved bit or
-- field set, a code out of range) is an expert error, so the filter
-- "_ws.expert.severity >= warning" finds it; a well-formed packet has no expert info.
--   Usage: tshark -X lua_script:uet.lua ...  (fields uet.pds.type, uet.pds.psn,
--   uet.ses.opcode, ...), or copy it to ~/.local/lib/wireshark/plugins/ for Wireshark.
--   tests/wire/uet_tshark.sh checks a capture with it.

local uet = Proto("uet", "Ultra Ethernet Transport (UE 1.0 PDS/SES)")

-- Names (UE 1.0 PDS, header formats; UE 1.0 SES, header formats).
local TYPE = {
	[1] = "TSS", [2] = "RUD_REQ", [3] = "ROD_REQ", [4] = "RUDI_REQ", [5] = "RUDI_RESP",
	[6] = "UUD_REQ", [7] = "ACK", [8] = "ACK_CC", [9] = "ACK_CCX", [10] = "NACK",
	[11] = "CTRL", [12] = "NACK_CCX", [13] = "RUD_CC_REQ", [14] = "ROD_CC_REQ",
}
local NEXT = {
	[0] = "NONE", [1] = "REQ_SMALL", [2] = "REQ_MEDIUM", [3] = "REQ_STD", [4] = "RSP",
	[5] = "RSP_DATA", [6] = "RSP_DATA_SMALL",
}
local CTRL = {
	[0] = "NOP", [1] = "ACK_REQ", [2] = "CLEAR", [3] = "CLEAR_REQ", [4] = "CLOSE",
	[5] = "CLOSE_REQ", [6] = "PROBE", [7] = "CREDIT", [8] = "CREDIT_REQ", [9] = "NEGOTIATION",
}
local ACK_REQ = { [0] = "none", [1] = "clear", [2] = "close", [3] = "invalid" }
local CC_TYPE = { [0] = "NSCC", [1] = "CREDIT" }
local NACK = {
	[0x01] = "TRIMMED", [0x02] = "TRIMMED_LAST_HOP", [0x03] = "TRIMMED_ACK",
	[0x04] = "NO_PDC_AVAIL", [0x05] = "NO_CCC_AVAIL", [0x06] = "NO_BITMAP",
	[0x07] = "NO_PKT_BUF", [0x08] = "NO_GTD_DEL_AVAIL", [0x09] = "NO_SES_MSG_AVAIL",
	[0x0a] = "NO_RESOURCE", [0x0b] = "PSN_OOR_WINDOW", [0x0d] = "ROD_OOO",
	[0x0e] = "INV_DPDCID", [0x0f] = "PDC_HDR_MISMATCH", [0x10] = "CLOSING",
	[0x11] = "CLOSING_IN_ERR", [0x12] = "PKT_NOT_RCVD", [0x13] = "GTD_RESP_UNAVAIL",
	[0x14] = "ACK_WITH_DATA", [0x15] = "INVALID_SYN", [0x16] = "PDC_MODE_MISMATCH",
	[0x17] = "NEW_START_PSN", [0x18] = "RCVD_SES_PROCG", [0x19] = "UNEXP_EVENT",
	[0x1a] = "RCVR_INFER_LOSS", [0xfd] = "EXP_NACK_NORMAL", [0xfe] = "EXP_NACK_ERR",
	[0xff] = "EXP_NACK_FATAL",
}
local SES_OP = {
	[0x00] = "NO_OP", [0x01] = "WRITE", [0x02] = "READ", [0x03] = "ATOMIC",
	[0x04] = "FETCH_ATOMIC", [0x05] = "SEND", [0x06] = "RNDV_SEND", [0x07] = "DGRAM_SEND",
	[0x08] = "DEFER_SEND", [0x09] = "TAGGED_SEND", [0x0a] = "RNDV_TSEND",
	[0x0b] = "DEFER_TSEND", [0x0c] = "DEFER_RTR", [0x0d] = "TSEND_ATOMIC",
	[0x0e] = "TSEND_FETCH_ATOMIC", [0x0f] = "MSG_ERR", [0x10] = "SYNC_WRITE",
	[0x11] = "SYNC_ATOMIC",
}
local RSP_LIST = { [0] = "EXPECTED", [1] = "OVERFLOW" }
local RSP_OP = { [0] = "DEFAULT_RESPONSE", [1] = "RESPONSE", [2] = "RESPONSE_W_DATA",
	[3] = "NO_RESPONSE" }
local RC = {
	[0x00] = "RC_NULL", [0x01] = "RC_OK", [0x02] = "BAD_GENERATION", [0x03] = "DISABLED",
	[0x04] = "DISABLED_GEN", [0x05] = "NO_MATCH", [0x06] = "UNSUPPORTED_OP",
	[0x07] = "UNSUPPORTED_SIZE", [0x08] = "AT_INVALID", [0x09] = "AT_PERM",
	[0x0a] = "AT_ATS_ERROR", [0x0b] = "AT_NO_TRANS", [0x0c] = "AT_OUT_OF_RANGE",
	[0x0d] = "HOST_POISONED", [0x0e] = "HOST_UNSUCCESS_CMPL", [0x0f] = "AMO_UNSUPPORTED_OP",
	[0x10] = "AMO_UNSUPPORTED_DT", [0x11] = "AMO_UNSUPPORTED_SIZE", [0x12] = "AMO_UNALIGNED",
	[0x13] = "AMO_FP_NAN", [0x14] = "AMO_FP_UNDERFLOW", [0x15] = "AMO_FP_OVERFLOW",
	[0x16] = "AMO_FP_INEXACT", [0x17] = "PERM_VIOLATION", [0x18] = "OP_VIOLATION",
	[0x19] = "BAD_INDEX", [0x1a] = "BAD_PID", [0x1b] = "BAD_JOB_ID", [0x1c] = "BAD_MKEY",
	[0x1d] = "BAD_ADDR", [0x1e] = "CANCELLED", [0x1f] = "UNDELIVERABLE", [0x20] = "UNCOR",
	[0x21] = "UNCOR_TRNSNT", [0x22] = "TOO_LONG", [0x23] = "INITIATOR_ERR", [0x24] = "DROPPED",
}
-- The last codes defined; anything above is reserved.
local CTRL_MAX, SES_OP_MAX, RSP_LIST_MAX, RSP_OP_MAX, RC_MAX = 9, 0x11, 1, 3, 0x24

local u8, u16, u24, u32, u64 = ProtoField.uint8, ProtoField.uint16, ProtoField.uint24,
	ProtoField.uint32, ProtoField.uint64
local DEC, HEX = base.DEC, base.HEX
local F = {
	-- PDS prologue: type (5 bits), next_hdr or ctrl_type (4), flags (7).
	type = u16("uet.pds.type", "Type", DEC, TYPE, 0xf800),
	next_hdr = u16("uet.pds.next_hdr", "Next Header", DEC, NEXT, 0x0780),
	ctrl_type = u16("uet.pds.ctrl_type", "Control Type", DEC, CTRL, 0x0780),
	flags = u16("uet.pds.flags", "Flags", HEX, nil, 0x007f),
	f_epsn = u16("uet.pds.flags.epsn", "EPSN (payload word follows)", DEC, nil, 0x0040),
	f_m = u16("uet.pds.flags.m", "M (ECN-marked)", DEC, nil, 0x0020),
	f_isrod = u16("uet.pds.flags.isrod", "ISROD (ROD PDC)", DEC, nil, 0x0020),
	f_retx = u16("uet.pds.flags.retx", "RETX (retransmission)", DEC, nil, 0x0010),
	f_ar = u16("uet.pds.flags.ar", "AR (ACK requested)", DEC, nil, 0x0008),
	f_p = u16("uet.pds.flags.p", "P (probe response)", DEC, nil, 0x0008),
	f_nt = u16("uet.pds.flags.nt", "NT (RUDI NACK)", DEC, nil, 0x0008),
	f_syn = u16("uet.pds.flags.syn", "SYN (PDC establishment)", DEC, nil, 0x0004),
	f_req = u16("uet.pds.flags.req", "REQ (clear/close request)", DEC, ACK_REQ, 0x0006),
	-- PDS requests, CTRL
	clear_psn_offset = ProtoField.int16("uet.pds.clear_psn_offset", "Clear PSN Offset", DEC),
	psn = u32("uet.pds.psn", "PSN", HEX),
	spdcid = u16("uet.pds.spdcid", "Source PDC ID", HEX),
	dpdcid = u16("uet.pds.dpdcid", "Destination PDC ID", HEX),
	use_rsv_pdc = u16("uet.pds.use_rsv_pdc", "Use Reserved PDC", DEC, nil, 0x1000),
	psn_offset = u16("uet.pds.psn_offset", "PSN Offset (from the start PSN)", DEC, nil, 0x0fff),
	ccc_id = u8("uet.pds.ccc_id", "CCC ID", DEC),
	credit_target = u24("uet.pds.credit_target", "Credit Target", DEC),
	reserved = u16("uet.pds.reserved", "Reserved", HEX),
	-- ACK, ACK_CC
	ack_psn_offset = ProtoField.int16("uet.pds.ack_psn_offset", "ACK PSN Offset", DEC),
	probe_opaque = u16("uet.pds.probe_opaque", "Probe Opaque", HEX),
	cack_psn = u32("uet.pds.cack_psn", "Cumulative ACK PSN", HEX),
	cc_type = u8("uet.pds.cc_type", "CC Type", DEC, CC_TYPE, 0xf0),
	cc_flags = u8("uet.pds.cc_flags", "CC Flags", HEX, nil, 0x0f),
	mpr = u8("uet.pds.mpr", "Maximum PSN Range", DEC),
	sack_psn_offset = ProtoField.int16("uet.pds.sack_psn_offset", "SACK PSN Offset", DEC),
	sack_bitmap = u64("uet.pds.sack_bitmap", "SACK Bitmap", HEX),
	ack_cc_state = u64("uet.pds.ack_cc_state", "ACK CC State", HEX),
	service_time = u16("uet.pds.nscc.service_time", "Service Time", DEC),
	restore_cwnd = u8("uet.pds.nscc.restore_cwnd", "Restore CWND", DEC, nil, 0x80),
	rcv_cwnd_pend = u8("uet.pds.nscc.rcv_cwnd_pend", "Receiver CWND Pending", DEC, nil, 0x7f),
	rcvd_bytes = u24("uet.pds.nscc.rcvd_bytes", "Received Bytes", DEC),
	nscc_ooo = u16("uet.pds.nscc.ooo_count", "Out-of-order Count", DEC),
	credit = u24("uet.pds.credit.credit", "Credit", DEC),
	credit_rsv = u24("uet.pds.credit.reserved", "Reserved", HEX),
	credit_ooo = u16("uet.pds.credit.ooo_count", "Out-of-order Count", DEC),
	-- NACK
	nack_code = u8("uet.pds.nack_code", "NACK Code", HEX, NACK),
	vendor_code = u8("uet.pds.vendor_code", "Vendor Code", HEX),
	nack_psn = u32("uet.pds.nack_psn", "NACK PSN", HEX),
	nack_pkt_id = u32("uet.pds.nack_pkt_id", "NACK Packet ID", HEX),
	-- NACK, CTRL, ACK with EPSN
	pds_payload = u32("uet.pds.payload", "Payload Word", HEX),
	-- RUDI
	pkt_id = u32("uet.pds.pkt_id", "Packet ID", HEX),
	-- SES requests
	opcode = u8("uet.ses.opcode", "Opcode", HEX, SES_OP, 0x3f),
	version = u8("uet.ses.version", "Version", DEC, nil, 0xc0),
	ses_flags = u8("uet.ses.flags", "Flags", HEX, nil, 0x3f),
	s_dc = u8("uet.ses.flags.dc", "DC (delivery complete)", DEC, nil, 0x20),
	s_ie = u8("uet.ses.flags.ie", "IE (initiator error)", DEC, nil, 0x10),
	s_rel = u8("uet.ses.flags.rel", "REL (relative addressing)", DEC, nil, 0x08),
	s_hd = u8("uet.ses.flags.hd", "HD (header data present)", DEC, nil, 0x04),
	s_eom = u8("uet.ses.flags.eom", "EOM (end of message)", DEC, nil, 0x02),
	s_som = u8("uet.ses.flags.som", "SOM (start of message)", DEC, nil, 0x01),
	msg_id = u16("uet.ses.msg_id", "Message ID", DEC),
	req_len14 = u16("uet.ses.request_length_small", "Request Length", DEC, nil, 0x3fff),
	ri_generation = u8("uet.ses.ri_generation", "RI Generation", DEC),
	job_id = u24("uet.ses.job_id", "Job ID", DEC),
	pid_on_fep = u16("uet.ses.pid_on_fep", "PID on FEP", DEC, nil, 0x0fff),
	resource_index = u16("uet.ses.resource_index", "Resource Index", DEC, nil, 0x0fff),
	buffer_offset = u64("uet.ses.buffer_offset", "Buffer Offset", HEX),
	initiator = u32("uet.ses.initiator", "Initiator", DEC),
	memory_key = u64("uet.ses.memory_key", "Memory Key / Match Bits", HEX),
	header_data = u64("uet.ses.header_data", "Header Data", HEX),
	request_length = u32("uet.ses.request_length", "Request Length", DEC),
	-- SES responses
	list = u8("uet.ses.rsp.list", "List", DEC, RSP_LIST, 0xc0),
	rsp_opcode = u8("uet.ses.rsp.opcode", "Opcode", DEC, RSP_OP, 0x3f),
	rsp_version = u8("uet.ses.rsp.version", "Version", DEC, nil, 0xc0),
	return_code = u8("uet.ses.rsp.return_code", "Return Code", HEX, RC, 0x3f),
	rsp_msg_id = u16("uet.ses.rsp.msg_id", "Message ID", DEC),
	rsp_len14 = u16("uet.ses.rsp.payload_length", "Payload Length", DEC, nil, 0x3fff),
	rsp_ri_generation = u8("uet.ses.rsp.ri_generation", "RI Generation", DEC),
	rsp_job_id = u24("uet.ses.rsp.job_id", "Job ID", DEC),
	modified_length = u32("uet.ses.rsp.modified_length", "Modified Length", DEC),
	read_msg_id = u16("uet.ses.rsp.read_msg_id", "Read Message ID", DEC),
	message_offset = u32("uet.ses.rsp.message_offset", "Message Offset", DEC),
	orig_req_psn = u32("uet.ses.rsp.orig_req_psn", "Original Request PSN", HEX),
	-- after the headers
	payload = ProtoField.bytes("uet.payload", "Payload"),
	payload_length = ProtoField.uint32("uet.payload_length", "Payload Length", DEC),
}
local fields = {}
for _, f in pairs(F) do
	fields[#fields + 1] = f
end
uet.fields = fields

-- One expert per reason urnic's receiver drops a packet for (src/wire/uet_reason.def).
local function malformed(abbr, text)
	return ProtoExpert.new(abbr, text, expert.group.MALFORMED, expert.severity.ERROR)
end
local function protocol(abbr, text)
	return ProtoExpert.new(abbr, text, expert.group.PROTOCOL, expert.severity.ERROR)
end
local E = {
	truncated = malformed("uet.truncated", "Datagram shorter than its PDS header"),
	ses_truncated = malformed("uet.ses.truncated", "Datagram shorter than its SES header"),
	type = protocol("uet.type.unknown", "Unknown PDS type"),
	unsupported = protocol("uet.type.unsupported", "PDS type urnic does not support"),
	reserved = protocol("uet.reserved.set", "Reserved PDS bit or field set"),
	next_hdr = protocol("uet.next_hdr.bad", "Next header unknown or not allowed for the type"),
	ctrl_type = protocol("uet.ctrl_type.bad", "Unknown control type"),
	ack_req = protocol("uet.ack_req.bad", "ACK asks to clear and to close"),
	cc_type = protocol("uet.cc_type.bad", "Unknown ACK_CC congestion control type"),
	nack_code = protocol("uet.nack_code.reserved", "Reserved NACK code"),
	ses_version = protocol("uet.ses.version.bad", "SES version not 0"),
	ses_reserved = protocol("uet.ses.reserved.set", "Reserved SES bit set"),
	ses_opcode = protocol("uet.ses.opcode.bad", "Unknown SES opcode"),
	ses_list = protocol("uet.ses.list.bad", "Reserved SES response list"),
	return_code = protocol("uet.ses.return_code.bad", "Reserved SES return code"),
}
local experts = {}
for _, e in pairs(E) do
	experts[#experts + 1] = e
end
uet.experts = experts

-- The length of each SES header (the PDS prologue's next_hdr); NONE and 7..15 have none.
local SES_BYTES = { [1] = 20, [2] = 32, [3] = 44, [4] = 12, [5] = 20, [6] = 12 }

-- Which next headers a type may carry (UE 1.0 PDS, next header): a request carries a
-- request or response header, an ACK none or a response, a NACK none. CTRL has none: its
-- next_hdr slot holds the control type.
local function set(...)
	local s = {}
	for _, v in ipairs({ ... }) do
		s[v] = true
	end
	return s
end
local CARRY_SES = set(1, 2, 3, 4, 5, 6)
local CARRY_RSP = set(0, 4, 5, 6)
local CARRY_NONE = set(0)

-- v & m for non-negative integers: Wireshark 4.0's Lua 5.2 has no bitwise operators.
local function band(v, m)
	local r, b = 0, 1
	while v > 0 and m > 0 do
		if v % 2 == 1 and m % 2 == 1 then
			r = r + b
		end
		v, m, b = math.floor(v / 2), math.floor(m / 2), b * 2
	end
	return r
end

-- c, the packet being dissected: its Info column words (say adds one), whether anything
-- was flagged (err: an expert error on item) and whether a header was cut short.
local function err(c, item, e, text)
	item:add_proto_expert_info(e, text)
	c.bad = true
end
local function say(c, fmt, ...)
	c.info[#c.info + 1] = string.format(fmt, ...)
end

-- A header being laid out: its tree, where it starts in tvb, and how many of its bytes
-- the datagram holds (fewer than its length when truncated: only the fields that fit are
-- shown). rsv is the expert for its reserved bits (PDS or SES).
local function header(tree, tvb, base, want, rsv)
	return { tree = tree, tvb = tvb, base = base, have = math.min(want, tvb:len() - base),
		rsv = rsv }
end

-- The header's bytes [off, off + len), or nil if the datagram ends before them.
local function bytes(h, off, len)
	if off + len > h.have then
		return nil
	end
	return h.tvb(h.base + off, len)
end

-- Adds field f over the header's bytes [off, off + len) (to tree, or the header's tree);
-- returns the item and the range, or nothing if the datagram ends before them.
local function add(h, f, off, len, tree)
	local r = bytes(h, off, len)
	if not r then
		return nil
	end
	return (tree or h.tree):add(f, r), r
end

-- Lays out a list of { field, offset, length, rsv = n, of = what }: the top n bits of
-- those bytes (what) are reserved and must be zero.
local function lay(c, h, list)
	for _, l in ipairs(list) do
		local item, r = add(h, l[1], l[2], l[3])
		if r and l.rsv and r:bitfield(0, l.rsv) ~= 0 then
			err(c, item, h.rsv, string.format("Reserved %s set (0x%x)", l.of,
				r:bitfield(0, l.rsv)))
		end
	end
end

-- A 16-bit field that must be zero (CTRL's bytes 2-3 unless PROBE, RUDI's and UUD's).
local function reserved16(c, h, off)
	local item, r = add(h, F.reserved, off, 2)
	if r and r:uint() ~= 0 then
		err(c, item, E.reserved, string.format("Reserved bytes %d-%d not zero (0x%04x)",
			off, off + 1, r:uint()))
	end
end

-- The header's bytes [off, off + len) as an unsigned number, or nil.
local function uint(h, off, len)
	local r = bytes(h, off, len)
	return r and r:uint()
end

-- Bytes 10-11 of a request or CTRL: the destination PDC ID, or with SYN (the target has
-- no PDC yet) pdc_info (3 reserved bits, use_rsv_pdc) and the PSN's 12-bit offset from
-- the PDC's start PSN (UE 1.0 PDS, RUD/ROD request).
local function dpdcid_or_syn(c, h, syn)
	if not syn then
		add(h, F.dpdcid, 10, 2)
		return
	end
	lay(c, h, { { F.use_rsv_pdc, 10, 2, rsv = 3, of = "pdc_info bits 15..13" },
		{ F.psn_offset, 10, 2 } })
end

-- The PSN of a request or CTRL for the Info column, and whether it opens a PDC.
local function say_psn(c, h, fl)
	local psn = uint(h, 4, 4)
	if psn then
		say(c, "PSN=0x%08x", psn)
	end
	if band(fl, 0x04) ~= 0 then
		say(c, "SYN")
	end
end

-- The PDS header bodies after the 2-byte prologue, by type. fl: the prologue's flags.

-- RUD_REQ, ROD_REQ (12 bytes) and with CC state RUD_CC_REQ, ROD_CC_REQ (16).
local function pds_request(c, h, fl, t)
	lay(c, h, { { F.clear_psn_offset, 2, 2 }, { F.psn, 4, 4 }, { F.spdcid, 8, 2 } })
	dpdcid_or_syn(c, h, band(fl, 0x04) ~= 0)
	if t.cc then
		lay(c, h, { { F.ccc_id, 12, 1 }, { F.credit_target, 13, 3 } })
	end
	say_psn(c, h, fl)
end

-- NSCC's ACK CC state (UE 1.0 CMS, NSCC): service time, restore_cwnd, the receiver's
-- pending window, bytes received, out-of-order count.
local NSCC_STATE = {
	{ F.service_time, 24, 2 }, { F.restore_cwnd, 26, 1 }, { F.rcv_cwnd_pend, 26, 1 },
	{ F.rcvd_bytes, 27, 3 }, { F.nscc_ooo, 30, 2 },
}
-- Receiver-credit CC's (UE 1.0 CMS, RCCC): credit, 24 reserved bits, out-of-order count.
local CREDIT_STATE = { { F.credit, 24, 3 }, { F.credit_rsv, 27, 3 }, { F.credit_ooo, 30, 2 } }

-- ACK_CC's 20 bytes after the ACK layout (UE 1.0 PDS, ACK_CC).
local function ack_cc(c, h)
	local item, r = add(h, F.cc_type, 12, 1)
	add(h, F.cc_flags, 12, 1)
	lay(c, h, { { F.mpr, 13, 1 }, { F.sack_psn_offset, 14, 2 }, { F.sack_bitmap, 16, 8 } })
	local state = add(h, F.ack_cc_state, 24, 8)
	if not r then
		return
	end
	local cc, ccf = r:bitfield(0, 4), r:bitfield(4, 4)
	if ccf ~= 0 then
		err(c, item, E.reserved, string.format("Reserved cc_flags set (0x%x)", ccf))
	end
	local parts = ({ [0] = NSCC_STATE, [1] = CREDIT_STATE })[cc]
	if not parts then
		err(c, item, E.cc_type, string.format("Unknown cc_type %d", cc))
	elseif state then
		for _, p in ipairs(parts) do
			add(h, p[1], p[2], p[3], state)
		end
		local rsv = uint(h, 27, 3)
		if cc == 1 and rsv ~= 0 then
			err(c, state, E.reserved, string.format("Reserved bits 39..16 of the "
				.. "CREDIT ACK CC state set (0x%06x)", rsv))
		end
	end
	local off, bitmap = bytes(h, 14, 2), bytes(h, 16, 8)
	say(c, "%s", CC_TYPE[cc] or "cc_type " .. cc)
	if off and bitmap then
		say(c, "SACK off=%d bitmap=0x%s", off:int(), bitmap:uint64():tohex())
	end
end

-- ACK (12 bytes, 16 with EPSN) and ACK_CC (32): UE 1.0 PDS, ACK.
local function pds_ack(c, h, fl, t)
	add(h, band(fl, 0x08) ~= 0 and F.probe_opaque or F.ack_psn_offset, 2, 2)
	lay(c, h, { { F.cack_psn, 4, 4 }, { F.spdcid, 8, 2 }, { F.dpdcid, 10, 2 } })
	if t.epsn and band(fl, 0x40) ~= 0 then
		add(h, F.pds_payload, 12, 4)
	end
	local cack, word = uint(h, 4, 4), bytes(h, 2, 2)
	if cack then
		say(c, "CACK=0x%08x", cack)
	end
	if word and band(fl, 0x08) ~= 0 then
		say(c, "probe=0x%04x", word:uint())
	elseif word then
		say(c, "off=%d", word:int())
	end
	if band(fl, 0x06) == 0x06 then
		-- REQ 3 would ask to clear and to close at once.
		err(c, h.tree, E.ack_req, "ACK REQ field is 3 (clear and close)")
	end
	if t.cc then
		ack_cc(c, h)
	end
end

-- NACK (16 bytes): UE 1.0 PDS, NACK. With NT (a RUDI NACK) the PSN field holds the
-- packet ID and there are no PDCs.
local function pds_nack(c, h, fl)
	local nt = band(fl, 0x08) ~= 0
	local item, r = add(h, F.nack_code, 2, 1)
	lay(c, h, { { F.vendor_code, 3, 1 }, { nt and F.nack_pkt_id or F.nack_psn, 4, 4 },
		{ F.spdcid, 8, 2 }, { F.dpdcid, 10, 2 }, { F.pds_payload, 12, 4 } })
	if r then
		local code = r:uint()
		if not NACK[code] then
			err(c, item, E.nack_code, string.format("Reserved NACK code 0x%02x", code))
		end
		say(c, "%s", NACK[code] or string.format("code 0x%02x", code))
	end
	local spdcid, dpdcid, psn = uint(h, 8, 2), uint(h, 10, 2), uint(h, 4, 4)
	if nt and ((spdcid or 0) ~= 0 or (dpdcid or 0) ~= 0) then
		err(c, h.tree, E.reserved, "RUDI NACK (NT) with a non-zero PDC ID")
	end
	if psn then
		say(c, "%s=0x%08x", nt and "PKT_ID" or "PSN", psn)
	end
end

-- CTRL (16 bytes): UE 1.0 PDS, control packets. Bytes 2-3 are PROBE's opaque value,
-- reserved for every other control type.
local function pds_ctrl(c, h, fl, t, ctrl)
	if ctrl == 6 then
		add(h, F.probe_opaque, 2, 2)
	else
		reserved16(c, h, 2)
	end
	lay(c, h, { { F.psn, 4, 4 }, { F.spdcid, 8, 2 } })
	dpdcid_or_syn(c, h, band(fl, 0x04) ~= 0)
	add(h, F.pds_payload, 12, 4)
	say_psn(c, h, fl)
end

-- RUDI_REQ, RUDI_RESP (8 bytes): no PDC, a packet ID instead of a PSN.
local function pds_rudi(c, h)
	reserved16(c, h, 2)
	add(h, F.pkt_id, 4, 4)
	local id = uint(h, 4, 4)
	if id then
		say(c, "PKT_ID=0x%08x", id)
	end
end

-- UUD_REQ (4 bytes): the prologue and two reserved bytes.
local function pds_uud(c, h)
	reserved16(c, h, 2)
end

-- Per type: PDS header length, the flag bits it defines (the rest are reserved) and
-- their fields, the next headers it may carry, and its body (UE 1.0 PDS, prologue).
-- Types missing here are unknown (0, 15..31) or unsupported (1 TSS, 9 ACK_CCX, 12 NACK_CCX).
local REQ_FLAGS = { F.f_retx, F.f_ar, F.f_syn }
local TYPES = {
	[2] = { bytes = 12, flags = 0x1c, named = REQ_FLAGS, carry = CARRY_SES,
		body = pds_request },
	[3] = { bytes = 12, flags = 0x1c, named = REQ_FLAGS, carry = CARRY_SES,
		body = pds_request },
	[4] = { bytes = 8, flags = 0x10, named = { F.f_retx }, carry = CARRY_SES,
		body = pds_rudi },
	[5] = { bytes = 8, flags = 0x30, named = { F.f_m, F.f_retx }, carry = CARRY_SES,
		body = pds_rudi },
	[6] = { bytes = 4, flags = 0x00, named = {}, carry = CARRY_SES,
		body = pds_uud },
	-- EPSN only on ACK: 4 more bytes, a payload word.
	[7] = { bytes = 12, flags = 0x7e, named = { F.f_epsn, F.f_m, F.f_retx, F.f_p, F.f_req },
		carry = CARRY_RSP, body = pds_ack, epsn = true },
	[8] = { bytes = 32, flags = 0x3e, named = { F.f_m, F.f_retx, F.f_p, F.f_req },
		carry = CARRY_RSP, body = pds_ack, cc = true },
	[10] = { bytes = 16, flags = 0x38, named = { F.f_m, F.f_retx, F.f_nt }, carry = CARRY_NONE,
		body = pds_nack },
	[11] = { bytes = 16, flags = 0x3c, named = { F.f_isrod, F.f_retx, F.f_ar, F.f_syn },
		body = pds_ctrl },
	[13] = { bytes = 16, flags = 0x1c, named = REQ_FLAGS, carry = CARRY_SES,
		body = pds_request, cc = true },
	[14] = { bytes = 16, flags = 0x1c, named = REQ_FLAGS, carry = CARRY_SES,
		body = pds_request, cc = true },
}
local UNSUPPORTED = set(1, 9, 12)

-- SES request headers (UE 1.0 SES, standard and optimized requests): a common 12
-- bytes, where REQ_SMALL and REQ_MEDIUM have a 14-bit length instead of the message ID,
-- then each one's own fields.
local SES_REQ_MIDDLE = {
	{ F.ri_generation, 4, 1 }, { F.job_id, 5, 3 },
	{ F.pid_on_fep, 8, 2, rsv = 4, of = "bits above pid_on_fep" },
	{ F.resource_index, 10, 2, rsv = 4, of = "bits above resource_index" },
}
local SES_REQ_TAIL = {
	[1] = { { F.buffer_offset, 12, 8 } },
	-- The medium header's first word is header data, or the buffer offset (WRITE, READ).
	[2] = { { F.header_data, 12, 8 }, { F.initiator, 20, 4 }, { F.memory_key, 24, 8 } },
	[3] = { { F.buffer_offset, 12, 8 }, { F.initiator, 20, 4 }, { F.memory_key, 24, 8 },
		{ F.header_data, 32, 8 }, { F.request_length, 40, 4 } },
}
local SES_FLAGS = { F.s_dc, F.s_ie, F.s_rel, F.s_hd, F.s_eom, F.s_som }

local function ses_request(c, h, nh)
	local item, r = add(h, F.opcode, 0, 1)
	if r then
		local op = r:bitfield(2, 6)
		if r:bitfield(0, 2) ~= 0 then
			err(c, item, E.ses_reserved,
				"Reserved bits 7..6 of the SES opcode byte set")
		end
		if op > SES_OP_MAX then
			err(c, item, E.ses_opcode, string.format("Unknown SES opcode 0x%02x", op))
		end
		say(c, "SES %s", SES_OP[op] or string.format("opcode 0x%02x", op))
	end
	item, r = add(h, F.version, 1, 1)
	if r and r:bitfield(0, 2) ~= 0 then
		err(c, item, E.ses_version, string.format("SES version %d", r:bitfield(0, 2)))
	end
	local flags = add(h, F.ses_flags, 1, 1)
	for _, f in ipairs(SES_FLAGS) do
		add(h, f, 1, 1, flags)
	end
	lay(c, h, { nh == 3 and { F.msg_id, 2, 2 }
		or { F.req_len14, 2, 2, rsv = 2, of = "bits above request_length" } })
	lay(c, h, SES_REQ_MIDDLE)
	lay(c, h, SES_REQ_TAIL[nh])
end

-- SES response headers (UE 1.0 SES, responses): list, opcode, version, return
-- code, message ID (RSP_DATA_SMALL: a 14-bit payload length), ri_generation, job_id,
-- then each one's own fields.
local SES_RSP_TAIL = {
	[4] = { { F.modified_length, 8, 4 } },
	[5] = { { F.read_msg_id, 8, 2 },
		{ F.rsp_len14, 10, 2, rsv = 2, of = "bits above payload_length" },
		{ F.modified_length, 12, 4 }, { F.message_offset, 16, 4 } },
	[6] = { { F.orig_req_psn, 8, 4 } },
}

local function ses_response(c, h, nh)
	local item, r = add(h, F.list, 0, 1)
	add(h, F.rsp_opcode, 0, 1)
	if r then
		local list, op = r:bitfield(0, 2), r:bitfield(2, 6)
		if list > RSP_LIST_MAX then
			err(c, item, E.ses_list, string.format("Reserved response list %d", list))
		end
		if op > RSP_OP_MAX then
			err(c, item, E.ses_opcode, string.format("Unknown response opcode %d", op))
		end
		say(c, "SES %s", RSP_OP[op] or "opcode " .. op)
	end
	item, r = add(h, F.rsp_version, 1, 1)
	add(h, F.return_code, 1, 1)
	if r then
		local ver, rc = r:bitfield(0, 2), r:bitfield(2, 6)
		if ver ~= 0 then
			err(c, item, E.ses_version, string.format("SES version %d", ver))
		end
		if rc > RC_MAX then
			err(c, item, E.return_code,
				string.format("Reserved return code 0x%02x", rc))
		end
		say(c, "%s", RC[rc] or string.format("rc 0x%02x", rc))
	end
	lay(c, h, { nh == 6 and { F.rsp_len14, 2, 2, rsv = 2, of = "bits above payload_length" }
		or { F.rsp_msg_id, 2, 2 },
		{ F.rsp_ri_generation, 4, 1 }, { F.rsp_job_id, 5, 3 } })
	lay(c, h, SES_RSP_TAIL[nh])
end

-- A header's subtree over the bytes the datagram holds of it; a truncated one is
-- flagged with expert e. Returns the header, or nil when not even one byte is there.
local function subtree(c, root, tvb, off, want, label, e, rsv)
	local have = tvb:len() - off
	if have < want then
		local where = have > 0 and root:add(tvb(off), label) or root
		err(c, where, e, string.format("%s truncated: %d of %d bytes", label,
			math.max(have, 0), want))
		c.short = true
		if have <= 0 then
			return nil
		end
		return header(where, tvb, off, want, rsv), false
	end
	return header(root:add(tvb(off, want), label), tvb, off, want, rsv), true
end

-- The prologue: type, next_hdr (CTRL: ctrl_type), and the flags with the bits the type
-- defines; reserved flag bits, a ctrl_type over 9 and a next header the type may not
-- carry are flagged.
local function prologue(c, h, t, ty, nh, fl)
	add(h, F.type, 0, 2)
	local item = add(h, ty == 11 and F.ctrl_type or F.next_hdr, 0, 2)
	local fitem = add(h, F.flags, 0, 2)
	if not t then
		return
	end
	for _, f in ipairs(t.named) do
		add(h, f, 0, 2, fitem)
	end
	local rsv = band(fl, 0x7f - t.flags)
	if rsv ~= 0 then
		err(c, fitem, E.reserved, string.format("Reserved flag bits 0x%02x set for %s",
			rsv, TYPE[ty]))
	end
	if ty == 11 and nh > CTRL_MAX then
		err(c, item, E.ctrl_type, string.format("Unknown control type %d", nh))
	elseif ty ~= 11 and not t.carry[nh] then
		err(c, item, E.next_hdr, string.format("%s may not carry next header %d (%s)",
			TYPE[ty], nh, NEXT[nh] or "reserved"))
	end
end

-- The Info column: the words said, then whether the packet is malformed.
local function finish(pinfo, c)
	if c.short then
		say(c, "[truncated]")
	elseif c.bad then
		say(c, "[malformed]")
	end
	pinfo.cols.info = table.concat(c.info, " ")
end

function uet.dissector(tvb, pinfo, tree)
	pinfo.cols.protocol = "UET"
	local c = { info = {}, bad = false }
	local root = tree:add(uet, tvb())
	local len = tvb:len()
	if len < 2 then
		err(c, root, E.truncated, string.format("%d bytes: no PDS prologue", len))
		say(c, "UET")
		c.short = true
		finish(pinfo, c)
		return len
	end
	local p = tvb(0, 2)
	local ty, nh, fl = p:bitfield(0, 5), p:bitfield(5, 4), p:bitfield(9, 7)
	local t = TYPES[ty]
	local name = TYPE[ty] or "type " .. ty
	say(c, "%s", ty == 11 and "CTRL " .. (CTRL[nh] or "ctrl_type " .. nh) or name)
	root:append_text(", " .. name)

	if not t then
		-- Nothing past the prologue can be laid out.
		local pt = root:add(p, "PDS prologue (" .. name .. ")")
		local h = header(pt, tvb, 0, 2, E.reserved)
		prologue(c, h, nil, ty, nh, fl)
		if UNSUPPORTED[ty] then
			err(c, pt, E.unsupported,
				string.format("PDS type %d (%s) not supported", ty, name))
		else
			err(c, pt, E.type, string.format("Unknown PDS type %d", ty))
		end
		finish(pinfo, c)
		return len
	end

	local want = t.bytes + ((t.epsn and band(fl, 0x40) ~= 0) and 4 or 0)
	local h, whole = subtree(c, root, tvb, 0, want, "PDS header (" .. name .. ")",
		E.truncated, E.reserved)
	prologue(c, h, t, ty, nh, fl)
	t.body(c, h, fl, t, nh)
	if not whole then
		finish(pinfo, c)
		return len
	end
	local off = want
	-- The SES header next_hdr names, also when the type may not carry it (flagged).
	local sb = ty ~= 11 and SES_BYTES[nh]
	if sb then
		local s
		s, whole = subtree(c, root, tvb, off, sb, "SES header (" .. NEXT[nh] .. ")",
			E.ses_truncated, E.ses_reserved)
		if s then
			(nh <= 3 and ses_request or ses_response)(c, s, nh)
		end
		if not whole then
			finish(pinfo, c)
			return len
		end
		off = off + sb
	end
	if off < len then
		root:add(F.payload, tvb(off))
		root:add(F.payload_length, tvb(off), len - off):set_generated()
	else
		root:add(F.payload_length, len - off):set_generated()
	end
	finish(pinfo, c)
	return len
end

DissectorTable.get("udp.port"):add(4793, uet)
