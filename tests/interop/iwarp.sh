# shellcheck shell=bash
# SPDX-License-Identifier: MIT
# iwarp.sh - run.sh's iWARP scenarios: urnic's iWARP device (URNIC_ADDR=iwarp:10.77.0.1)
# against Linux's siw (siw0 on the VM's eth0, siw.ko or siw_crc.ko of build-image.sh),
# rdma_cm over TCP on port 18515 (MPA Request/Reply, then FPDUs). Sourced by run.sh.
#
# iw_scenario NAME sets what run.sh's scenario does, for the siw_* names:
#   siw_rping      rping -v -V -C 1000: 1000 pings, each read back and compared (-V)
#   siw_rping_crc  the same with siw_crc.ko, which demands MPA CRC32c (RFC 5044 7.1.2)
#                  as the Initiator: with urnic serving, every FPDU both ways carries a
#                  CRC, checked by mpa_check.py; siw's Responder takes a Request without
#                  C (urnic's) as it is, so with siw serving there is no CRC
#   siw_ucmatose   ucmatose -c 3 -C 10: 3 connections of one listener, 10 Sends each way
#                  (ucmatose's server first: urnic's hold ends at URNIC_IW_HOLD_US, 100 ms)
#   siw_reject     ucmatose's server cannot make the CQs its -C asks for and rejects the
#                  connection (rdma_reject: an MPA Reply with R, RFC 5044 7.1.1); the
#                  client gets RDMA_CM_EVENT_REJECTED. (A server of fewer connections
#                  than its client asks for, -c 1 against -c 2, shows nothing: siw's
#                  client connects one after the other and ucmatose's server, done with
#                  its one, has closed its listener: TCP refuses the second, which siw's
#                  rdma_connect reports at once, with no event.)
#   siw_badstag    rping's exchange with a wrong STag (iw_badstag.c on urnic's side, rping
#                  -C 1 in the VM): the server's RDMA READ names the client's buffer with
#                  its key byte changed, the client's RNIC answers with a Terminate (RFC
#                  5040 7.4.1: RDMAP, Remote Protection Error, Invalid STag) and both QPs
#                  end in error, the READ flushed as siw flushes it: urnic serving, siw
#                  terminates and urnic takes the Terminate; siw serving, the reverse
#   siw_write_bw, siw_read_bw, siw_send_bw
#                  perftest over rdma_cm (-R), 50 messages of 16 KiB
# shellcheck disable=SC2034 # run.sh's variables
iw_scenario() {
	IW=1
	case $1 in
	siw_rping) TOOL=rping CM=1 PINGS=1000 OPTS="-v -V -C 1000 -S 64 -p $PP_PORT" ;;
	siw_rping_crc) TOOL=rping CM=1 PINGS=1000 OPTS="-v -V -C 1000 -S 64 -p $PP_PORT" SIW_CRC=1 ;;
	# ucmatose's server speaks first, siw's client sends no RTR: urnic's Responder holds
	# until its bound (URNIC_IW_HOLD_US), past the moment the VM has read the Reply,
	# which the VM's ACK of it shows 0.2-11 ms after it, once 51 ms on a loaded host
	# (docs/interop.md): 100 ms instead of the default 10
	siw_ucmatose) TOOL=ucmatose CM=1 OPTS="-c 3 -C 10 -p $PP_PORT" UENV=URNIC_IW_HOLD_US=100000 ;;
	# the server's CQs of 4000000 entries are more than either device has (siw 3276800,
	# urnic 2^20 - 1): it cannot set the connection up and rejects it
	siw_reject) TOOL=ucmatose CM=1 REJECT=1 SERVER_OPTS="-c 1 -C 4000000 -p $PP_PORT" \
		CLIENT_OPTS="-c 1 -C 10 -p $PP_PORT" ;;
	siw_badstag) TOOL=rping HOST_TOOL=${IW_BADSTAG:-iw_badstag} CM=1 BADSTAG=1 \
		OPTS="-v -C 1 -S 64 -p $PP_PORT" ;;
	siw_write_bw | siw_read_bw | siw_send_bw) TOOL=ib_${1#siw_} OPTS="-R -F -s 16384 -n 50" ;;
	*) return 1 ;;
	esac
}

# iw_verdict: run.sh's verdict for an iWARP scenario (HOST_LOG, OUTDIR/rxe.log: the VM's
# console, PCAP, HOST_RC, VM_RC are set). Passes when:
# - both tools exit 0 with their result line (rping's client: every ping compared; the
#   reject: the client reports RDMA_CM_EVENT_REJECTED, the server "failing connection
#   request", neither stalled);
# - urnic's iWARP CM set connections up (iwcm_established) and counted no MPA failure, no
#   socket the device refused, no connection without its device or listener; the reject
#   shows in iwcm_rejected_out (urnic's server) or iwcm_rejected_in (its client); urnic's
#   server held its first FPDUs (iw_await_first), in siw_ucmatose until the bound
#   (iw_await_first_expired: siw's client never speaks first);
# - tshark (Wireshark's iwarp_mpa, which finds a stream by its MPA Request: the capture
#   holds each connection from its SYN) dissects every TCP segment with payload as MPA,
#   with no malformed frame or expert warning of the iWARP dissectors;
# - mpa_check.py frames every stream as whole FPDUs, checks every DDP/RDMAP header's
#   version and every CRC (or that the CRC field is zero when it is not negotiated).
# badstag_verdict: siw_badstag's own checks (iw_verdict's variables). The side that was
# read from sent the Terminate RFC 5040 7.4.1 prescribes for an invalid STag (layer
# RDMAP 0, error type Remote Protection 1, code Invalid STag 0x00, on the wire as tshark
# dissects it); urnic counted the one it sent or took; the reader's READ was flushed
# (IBV_WC_WR_FLUSH_ERR, as siw_sq_flush completes it: urnic's server prints status 5,
# siw's rping server, which ignores flushed completions, fails waiting for the READ);
# urnic's client, which terminated, had its posted receive flushed, and siw's rping
# client, whose connection urnic's server closed, fails waiting for it.
badstag_verdict() {
	local term sender
	[ "$HOST_RC" != 124 ] || fail "urnic's iw_badstag stalled"
	[ "${VM_RC:-124}" != 124 ] || fail "siw's rping did not finish"
	say "exit status: urnic $HOST_RC, siw ${VM_RC}"
	say "urnic: $(grep '^iw_badstag: [cs]' "$HOST_LOG" | tail -1)"
	say "siw: $(grep -E 'cq completion failed|wait for|DISCONNECT' "$OUTDIR/siw.log" | tr -d '\r' | tr '\n' ';')"
	[ "$HOST_RC" = 0 ] || fail "urnic's iw_badstag did not see what it expects (status $HOST_RC)"
	# rping exits 0 whatever its test returned: its log says how the ping ended
	if [ "$DIR" = urnic_server ]; then
		sender=$VM_IP
		grep -q 'server: RDMA READ .* status 5 ' "$HOST_LOG" ||
			fail "urnic's READ was not flushed (IBV_WC_WR_FLUSH_ERR)"
		[ "$(ctr "$HOST_LOG" iw_term_rcvd)" -gt 0 ] || fail "urnic counted no Terminate received"
		# siw 6.1 writes its control word in its own order (counters.def)
		[ "$(ctr "$HOST_LOG" iw_term_rcvd_siw_order)" -gt 0 ] ||
			fail "urnic did not read siw's Terminate in siw's order"
		grep -q 'wait for RDMA_WRITE_ADV' "$OUTDIR/siw.log" ||
			fail "siw's rping client did not fail waiting for the server"
	else
		sender=$HOST_IP
		[ "$(ctr "$HOST_LOG" iw_term_sent)" -gt 0 ] || fail "urnic counted no Terminate sent"
		grep -q 'client: .* receive status 5 ' "$HOST_LOG" ||
			fail "urnic's client did not have its receive flushed"
		grep -q 'wait for RDMA_READ_COMPLETE' "$OUTDIR/siw.log" ||
			fail "siw's rping server did not fail waiting for its READ"
	fi
	term=$(tshark -2 -n --disable-heuristic rpcrdma_iwarp -r "$PCAP" -Y iwarp_rdma.terminate \
		-T fields -e ip.src -e iwarp_rdma.term_layer -e iwarp_rdma.term_etype \
		-e iwarp_rdma.term_etype_rdma -e iwarp_rdma.term_etype_ddp \
		-e iwarp_rdma.term_errcode_rdma -e iwarp_rdma.term_errcode 2>/dev/null | head -1)
	say "Terminate on the wire (source, layer, error types, codes): ${term:-none}"
	printf '%s\n' "$term" | grep -q "^$sender	" || fail "no Terminate from $sender"
	# urnic's own Terminate is RFC 5040 7.4.1's for an invalid STag: RDMAP (0), Remote
	# Protection Error (1), Invalid STag (0). siw 6.1 sends the same in its own order of
	# the control word, which Wireshark reads otherwise (docs/interop.md): only urnic's
	# is checked here.
	if [ "$DIR" = siw_server ]; then
		# source, layer 0, (etype), RDMAP etype 1, (DDP etype), RDMAP code 0, (code)
		printf '%s\n' "$term" |
			grep -Eq "$(printf '^%s\t0x0*0\t[^\t]*\t0x0*1\t[^\t]*\t0x0*0(\t|$)' "$HOST_IP")" ||
			fail "urnic's Terminate is not RDMAP, Remote Protection Error, Invalid STag"
	fi
}

iw_verdict() {
	local c ok clog=$HOST_LOG slog=$OUTDIR/siw.log n
	mv "$OUTDIR/rxe.log" "$OUTDIR/siw.log"
	[ "$DIR" = urnic_server ] && clog=$OUTDIR/siw.log slog=$HOST_LOG
	say "VM ready after ${T_READY}s, urnic's tool done after ${T_TOOL}s, total ${T_END}s"
	say "urnic counters:$URNIC_CTR"
	say "siw: $(grep -E '^link siw0|transport:' "$OUTDIR/siw.log" | tr -s ' \t' ' ' | tr '\n' ';')"
	if [ "$BADSTAG" = 1 ]; then
		badstag_verdict
	elif [ "$REJECT" = 1 ]; then
		[ "$HOST_RC" != 124 ] || fail "urnic's $TOOL stalled"
		[ "${VM_RC:-124}" != 124 ] || fail "siw's $TOOL did not finish"
		say "exit status: urnic $HOST_RC, siw ${VM_RC}"
		grep -q 'RDMA_CM_EVENT_REJECTED' "$clog" ||
			fail "the client ($(basename "$clog")) reports no RDMA_CM_EVENT_REJECTED"
		grep -q 'failing connection request' "$slog" ||
			fail "the server ($(basename "$slog")) rejected nothing"
		say "client: $(grep -m1 'RDMA_CM_EVENT_REJECTED' "$clog" | tr -d '\r')"
		if [ "$DIR" = urnic_server ]; then c=iwcm_rejected_out; else c=iwcm_rejected_in; fi
		[ "$(ctr "$HOST_LOG" $c)" -gt 0 ] || fail "urnic counted no $c"
	else
		[ "${HOST_RC:-1}" = 0 ] || fail "urnic's $TOOL exited with status $HOST_RC"
		[ "${VM_RC:-none}" = 0 ] || fail "siw's $TOOL exited with status ${VM_RC:-none}"
		case $TOOL in
		rping) ok="^ping data: rdma-ping-$((PINGS - 1)):" ;;
		ucmatose) ok='^return status 0' ;;
		*) ok='^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+' ;; # perftest's result row
		esac
		grep -Eq "$ok" "$clog" || fail "no result line in $(basename "$clog")"
		[ "$TOOL" = ucmatose ] && { grep -Eq "$ok" "$slog" || fail "no result line in $(basename "$slog")"; }
		if [ "$TOOL" = rping ]; then
			n=$(grep -c '^ping data: rdma-ping-' "$clog")
			[ "$n" = "$PINGS" ] || fail "rping's client checked $n pings of $PINGS"
		fi
		grep -qE 'data mismatch|invalid data' "$HOST_LOG" "$OUTDIR/siw.log" &&
			fail "payload check failed"
		c=iwcm_mpa_failed
		[ "$(ctr "$HOST_LOG" $c)" = 0 ] || fail "urnic counted $c = $(ctr "$HOST_LOG" $c)"
		# urnic's server is the MPA Responder: it held its FPDUs (RFC 5044 7.1.2) until
		# siw's first or the hold's bound (iw_qp.h); ucmatose's server speaks first to a
		# siw client that sends no RTR and waits, so there the bound ended the holds
		if [ "$DIR" = urnic_server ]; then
			[ "$(ctr "$HOST_LOG" iw_await_first)" -gt 0 ] || fail "urnic's Responder held nothing"
			if [ "$TOOL" = ucmatose ] && [ "$(ctr "$HOST_LOG" iw_await_first_expired)" = 0 ]; then
				fail "urnic's holds did not end at their bound (iw_await_first_expired 0)"
			fi
		fi
	fi
	[ "$REJECT" = 1 ] || [ "$(ctr "$HOST_LOG" iwcm_established)" -gt 0 ] ||
		fail "urnic counted no iwcm_established"
	for c in iwcm_attach_failed iwcm_no_device iwcm_no_listener retry_exceeded cq_overflow; do
		[ "$(ctr "$HOST_LOG" $c)" = 0 ] || fail "urnic counted $c = $(ctr "$HOST_LOG" $c)"
	done

	# The wire, with Wireshark's defaults but for RPC-over-RDMA's heuristic, which takes
	# rdma_cm tools' Sends for RPCoRDMA and flags them malformed.
	export WIRESHARK_CONFIG_DIR=$OUTDIR/wireshark
	mkdir -p "$WIRESHARK_CONFIG_DIR"
	# A TCP retransmission (the host's or the VM's TCP, slow under TCG) is not dissected
	# again: its bytes were, in the first copy (mpa_check.py reads each byte once too). An
	# FPDU longer than a segment (siw's Read Responses) is dissected in its last segment,
	# the others are "reassembled in" it (known in the second pass: -2).
	local TS=(tshark -2 -n --disable-heuristic rpcrdma_iwarp -r "$PCAP") segs mpa bad retx
	local first='tcp.len > 0 && !tcp.analysis.retransmission &&
		!tcp.analysis.fast_retransmission && !tcp.analysis.spurious_retransmission'
	segs=$("${TS[@]}" -Y "$first" 2>/dev/null | wc -l)
	retx=$("${TS[@]}" -Y "tcp.len > 0 && !($first)" 2>/dev/null | wc -l)
	mpa=$("${TS[@]}" -Y "$first && (iwarp_mpa || tcp.reassembled_in)" 2>/dev/null | wc -l)
	"${TS[@]}" -Y "$first && !iwarp_mpa && !tcp.reassembled_in" >"$OUTDIR/not-mpa.txt" 2>/dev/null
	# the expert infos of the iWARP dissectors (TCP's own, such as a reset or the
	# warning of a D-SACK, the VM's answer to a segment it had, say nothing of MPA)
	"${TS[@]}" -Y '_ws.malformed || (_ws.expert.severity >= warning &&
		(iwarp_mpa || iwarp_ddp || iwarp_rdma) && !tcp.analysis.flags &&
		!tcp.options.sack.dsack)' -T fields \
		-e frame.number -e ip.src -e _ws.expert.message >"$OUTDIR/malformed.txt" 2>/dev/null
	bad=$(wc -l <"$OUTDIR/malformed.txt")
	"${TS[@]}" -Y 'iwarp_mpa.req || iwarp_mpa.rep' -T fields -e ip.src -e _ws.col.Info \
		-e iwarp_mpa.crc_flag -e iwarp_mpa.rej_flag -e iwarp_mpa.rev \
		>"$OUTDIR/mpa-frames.txt" 2>/dev/null
	"${TS[@]}" -Y iwarp_rdma -T fields -e ip.src -e iwarp_rdma.opcode 2>/dev/null |
		awk -F'\t' '{ n = split($2, o, ","); for (i = 1; i <= n; i++) c[$1 " op " o[i]]++ }
		END { for (k in c) printf " %s x%d", k, c[k] }' >"$OUTDIR/opcodes.txt"
	say "capture: $segs TCP segments with payload (and $retx retransmitted), $mpa of them MPA (or part of an FPDU), $bad malformed or" \
		"with iWARP warnings; RDMAP opcodes by sender:$(cat "$OUTDIR/opcodes.txt")"
	say "MPA frames: $(awk -F'\t' '{ printf "%s %s C=%s R=%s rev %s; ", $1, $2, $3, $4, $5 }' \
		"$OUTDIR/mpa-frames.txt")"
	[ "$segs" -gt 0 ] || fail "nothing captured"
	[ "$mpa" = "$segs" ] || { head "$OUTDIR/not-mpa.txt"; fail "$((segs - mpa)) TCP segments are not MPA"; }
	[ "$bad" = 0 ] || { head "$OUTDIR/malformed.txt"; fail "$bad malformed frames or warnings"; }
	if ! grep -q "^$HOST_IP" "$OUTDIR/mpa-frames.txt" || ! grep -q "^$VM_IP" "$OUTDIR/mpa-frames.txt"; then
		fail "not both sides' MPA frames on the wire"
	fi
	if [ "$REJECT" = 1 ]; then
		grep -q "^$(if [ "$DIR" = urnic_server ]; then echo "$HOST_IP"; else echo "$VM_IP"; fi).*	1	" \
			"$OUTDIR/mpa-frames.txt" || fail "no MPA Reply with R from the server"
	fi
	# siw_crc.ko asks for the CRC as an Initiator (C in its Request: urnic's Reply must
	# have C); as a Responder it only answers a Request's C (siw_proc_mpareq sets C when
	# the Request has it), and urnic's Initiator asks for none: no CRC then
	local crc=off good
	if [ "$SIW_CRC" = 1 ] && [ "$DIR" = urnic_server ]; then
		crc=on
		# Wireshark checks the CRC of each FPDU it dissected ("Good CRC32")
		"${TS[@]}" -Y iwarp_mpa.crc_check -V 2>/dev/null | grep 'CRC check:' >"$OUTDIR/crc.txt"
		good=$(grep -c 'Good CRC32' "$OUTDIR/crc.txt")
		say "tshark: $good FPDUs with a good CRC32c, $(($(wc -l <"$OUTDIR/crc.txt") - good)) bad"
		if [ "$good" = 0 ] || [ "$good" != "$(wc -l <"$OUTDIR/crc.txt")" ]; then
			fail "tshark finds CRCs that are not good (crc.txt)"
		fi
	fi
	python3 "$HERE/mpa_check.py" --crc $crc "$PCAP" >"$OUTDIR/mpa-check.txt" 2>&1 ||
		{ tail -n 15 "$OUTDIR/mpa-check.txt"; fail "mpa_check.py: the streams are not MPA as RFC 5044 frames it"; }
	sed "s/^/$NAME: /" "$OUTDIR/mpa-check.txt"
	[ "${URNIC_INTEROP_KEEP_CAPTURE:-0}" = 1 ] || rm -f "$PCAP"
	say ok
}
