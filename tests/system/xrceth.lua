-- SPDX-License-Identifier: MIT
-- xrceth.lua - a Wireshark post-dissector for XRC packets (IBTA Annex A14), which
-- Wireshark 4.0 (Debian 12) names by opcode but does not lay out: it shows everything
-- after the BTH as vendor data. This decodes, for the XRC opcodes (transport 0b101,
-- 160-183), the XRCETH of every request (a reserved byte, then the 24-bit XRC SRQ
-- number) and the headers after it or after a response's BTH, by the RC opcode in the
-- low five bits (IBTA 9.2, table 38): RETH, AtomicETH, ImmDt, IETH, AETH, AtomicAckETH.
-- A non-zero reserved byte or a packet shorter than its headers is an expert error, so
-- the tests' "_ws.expert.severity >= warning" filter counts it as malformed.
--   Usage: tshark -X lua_script:xrceth.lua ...  (fields xrceth.srq, xrc.reth.va, ...)

local xrc = Proto("xrc", "InfiniBand XRC headers (IBTA Annex A14)")
local F = {
	resv = ProtoField.uint8("xrceth.reserved", "Reserved", base.HEX),
	srq = ProtoField.uint24("xrceth.srq", "XRC SRQ", base.HEX),
	va = ProtoField.uint64("xrc.reth.va", "Virtual Address", base.HEX),
	rkey = ProtoField.uint32("xrc.reth.rkey", "Remote Key", base.HEX),
	dmalen = ProtoField.uint32("xrc.reth.dma_length", "DMA Length", base.DEC),
	swap = ProtoField.uint64("xrc.atomiceth.swap_or_add", "Swap (Or Add) Data", base.HEX),
	cmp = ProtoField.uint64("xrc.atomiceth.compare", "Compare Data", base.HEX),
	imm = ProtoField.uint32("xrc.immdt", "Immediate Data", base.HEX),
	ieth = ProtoField.uint32("xrc.ieth.rkey", "Invalidate RKey", base.HEX),
	syndrome = ProtoField.uint8("xrc.aeth.syndrome", "Syndrome", base.HEX),
	msn = ProtoField.uint24("xrc.aeth.msn", "Message Sequence Number", base.DEC),
	orig = ProtoField.uint64("xrc.atomicacketh.original", "Original Remote Data", base.HEX),
	payload = ProtoField.bytes("xrc.payload", "Payload"),
}
xrc.fields = { F.resv, F.srq, F.va, F.rkey, F.dmalen, F.swap, F.cmp, F.imm, F.ieth,
	F.syndrome, F.msn, F.orig, F.payload }

local e_resv = ProtoExpert.new("xrceth.reserved.nonzero", "XRCETH reserved byte is not zero",
	expert.group.MALFORMED, expert.severity.ERROR)
local e_short = ProtoExpert.new("xrc.short", "Packet shorter than its XRC headers",
	expert.group.MALFORMED, expert.severity.ERROR)
xrc.experts = { e_resv, e_short }

local f_opcode = Field.new("infiniband.bth.opcode")

-- The headers after the BTH of each RC opcode (the low five bits), in order; "X" is
-- the XRCETH, which every request has and no response (13-18) has.
local layout = {
	[0] = "X", [1] = "X", [2] = "X", [3] = "XI", [4] = "X", [5] = "XI",
	[6] = "XR", [7] = "X", [8] = "X", [9] = "XI", [10] = "XR", [11] = "XRI", [12] = "XR",
	[13] = "A", [14] = "", [15] = "A", [16] = "A", [17] = "A", [18] = "AK",
	[19] = "XT", [20] = "XT", [22] = "XV", [23] = "XV",
}
local size = { X = 4, R = 16, T = 28, I = 4, V = 4, A = 4, K = 8 }

function xrc.dissector(tvb, pinfo, tree)
	local op = f_opcode()
	if not op or op.value < 160 or op.value > 183 then
		return
	end
	local hdrs = layout[op.value % 32]
	if not hdrs then
		return
	end
	local off = op.offset + 12 -- after the BTH
	local stop = tvb:len() - 4 -- the ICRC
	local t = tree:add(xrc, tvb(off, math.max(0, math.min(stop - off, 64))))
	for i = 1, #hdrs do
		local h = hdrs:sub(i, i)
		if off + size[h] > stop then
			t:add_proto_expert_info(e_short)
			return
		end
		local r = tvb(off, size[h])
		if h == "X" then
			local x = t:add(r, "XRCETH")
			x:add(F.resv, r(0, 1))
			x:add(F.srq, r(1, 3))
			if r(0, 1):uint() ~= 0 then
				x:add_proto_expert_info(e_resv)
			end
		elseif h == "R" then
			local x = t:add(r, "RETH")
			x:add(F.va, r(0, 8))
			x:add(F.rkey, r(8, 4))
			x:add(F.dmalen, r(12, 4))
		elseif h == "T" then
			local x = t:add(r, "AtomicETH")
			x:add(F.va, r(0, 8))
			x:add(F.rkey, r(8, 4))
			x:add(F.swap, r(12, 8))
			x:add(F.cmp, r(20, 8))
		elseif h == "I" then
			t:add(F.imm, r)
		elseif h == "V" then
			t:add(F.ieth, r)
		elseif h == "A" then
			local x = t:add(r, "AETH")
			x:add(F.syndrome, r(0, 1))
			x:add(F.msn, r(1, 3))
		elseif h == "K" then
			t:add(F.orig, r)
		end
		off = off + size[h]
	end
	if stop > off then
		t:add(F.payload, tvb(off, stop - off))
	end
end

register_postdissector(xrc)
