# bench/report.awk - the human table, targets.tsv and summary.json of bench/run.sh.
# Input: results.tsv (key, median, runs) then sweep.tsv (header, one row per size).
# Variables: reps, commit, date, cpus, secs, out, quick, cpu (model), feats (CPU
# features), crc (the CRC path chosen).
BEGIN { FS = "\t" }

FNR == NR { med[$1] = $2; runs[$1] = $3; reps_of[$1] = $4; keys[++nkeys] = $1; next }
FNR == 1 { for (i = 1; i <= NF; i++) col[i] = $i; ncol = NF; next }
{
	nsz++
	for (i = 1; i <= NF; i++) sw[nsz, col[i]] = $i
}

function has(k) { return (k in med) && med[k] != "" }
function num(v) {
	if (v == "" || v == "NaN" || v == "-") return "-"
	v += 0
	if (v >= 100) return sprintf("%.0f", v)
	if (v >= 10) return sprintf("%.1f", v)
	if (v >= 1) return sprintf("%.2f", v)
	return sprintf("%.3g", v)
}
function ratio(a, b) {
	if (a == "" || b == "" || a == "NaN" || b == "NaN" || a == "-" || b == "-" || b + 0 == 0) return ""
	return (a + 0) / (b + 0)
}
# The median over the repetitions that have both figures of a[rep] / b[rep] (or b/a).
function pratio(a, b,    na, nb, va, vb, ra, rb, i, j, n, q, x, k) {
	if (!has(a) || !has(b)) return ""
	na = split(runs[a], va, ","); split(reps_of[a], ra, ",")
	nb = split(runs[b], vb, ","); split(reps_of[b], rb, ",")
	n = 0
	for (i = 1; i <= na; i++)
		for (j = 1; j <= nb; j++)
			if (ra[i] == rb[j] && vb[j] + 0 != 0) q[++n] = (va[i] + 0) / (vb[j] + 0)
	if (!n) return ""
	for (i = 2; i <= n; i++) { x = q[i]; for (k = i - 1; k >= 1 && q[k] > x; k--) q[k + 1] = q[k]; q[k + 1] = x }
	return n % 2 ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
}
function rx(r) { return r == "" ? "-" : (r < 0.1 ? sprintf("%.2g", r) : sprintf("%.2f", r)) }
function runs_of(k) { return has(k) ? "[" runs[k] "]" : "" }
function max2(a, b) { return a == "" ? b : (b == "" ? a : (a + 0 > b + 0 ? a : b)) }
function min2(a, b) { return a == "" ? b : (b == "" ? a : (a + 0 < b + 0 ? a : b)) }
function m(k) { return has(k) ? med[k] : "" }

function line(label, k, unit) {
	printf "  %-58s %9s %-5s %s\n", label, num(m(k)), unit, runs_of(k)
}
# A urnic row: figure, then ratios to ceiling, to UCX and to the best peer.
function urow(label, k, unit, ceil, ucx, best) {
	printf "  %-40s %8s %-5s %8s %8s %9s   %s\n", label, num(m(k)), unit,
		rx(ratio(m(k), ceil)), rx(ratio(m(k), ucx)), rx(ratio(m(k), best)), runs_of(k)
}
function target(name, value, op, goal, what, medratio) {
	status = value == "" ? "NO DATA" : \
		((op == ">=" && value + 0 >= goal) || (op == "<=" && value + 0 <= goal) || \
		 (op == "<" && value + 0 < goal)) ? "MET" : "NOT MET"
	printf "  %-56s %8s %8s  %2s %-4s %s\n", name, value == "" ? "-" : sprintf("%.3g", value),
		medratio == "" ? "-" : sprintf("%.3g", medratio), op, goal, status
	ntg++
	tg_name[ntg] = name; tg_val[ntg] = value; tg_op[ntg] = op; tg_goal[ntg] = goal
	tg_status[ntg] = status; tg_what[ntg] = what
	tg_med[ntg] = medratio
	printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", what, name, value, medratio, op, goal, status > (out "/targets.tsv")
	if (status == "MET") nmet++
}
function jstr(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return "\"" s "\"" }
function jnum(v) { return (v == "" || v == "NaN" || v == "-") ? "null" : sprintf("%.6g", v) }

END {
	ceil_bw = m("ceil_udp_gso_gbps")
	ceil_pp = m("ceil_udp_pp_us")
	ceil_rtt = ceil_pp == "" ? "" : 2 * ceil_pp
	ceil_mr = m("ceil_udp_gso_small_mpps")
	ucx_bw = m("ucx_put_bw_gbps")
	ucx_lat = m("ucx_put_lat_us")
	ucx_rtt = ucx_lat == "" ? "" : 2 * ucx_lat
	ucx_mr = m("ucx_put_msgrate_mpps")
	best_bw = max2(ucx_bw, m("fi_pp_bw_gbps"))
	best_lat = min2(ucx_lat, m("fi_pp_lat_us"))
	best_rtt = best_lat == "" ? "" : 2 * best_lat

	printf "urnic benchmark (bench/run.sh) %s, %s, %s vCPUs, %s s\n", date, commit, cpus, secs
	printf "CPU: %s (%s); CRC path: %s; memcpy 64 MiB: %s GB/s\n", cpu, feats, crc, m("ceil_memcpy_GBps")
	printf "Every figure is the median of %d run(s) (the runs in brackets), all in this one run.\n", reps
	printf "Load average (1 min) at the start of each repetition: %s (2 vCPUs: other work shares them).\n", runs["loadavg_1min"]
	if (quick) printf "QUICK MODE: few iterations, one run: not for figures.\n"
	printf "\nCeilings: this machine, loopback\n"
	line("raw UDP, GSO 60 KiB in 4 KiB segments + GRO, received", "ceil_udp_gso_gbps", "Gb/s")
	line("  the same again, right after ib_write_bw -s 65536", "ceil_udp_gso_after_gbps", "Gb/s")
	line("  the same as 64 KiB WRITEs, no protocol (roce_shape)", "ref_roce_shape_gbps", "Gb/s")
	line("raw UDP ping-pong 8 B, RTT/2 median: the better of the two below", "ceil_udp_pp_us", "us")
	line("raw UDP ping-pong 8 B, RTT/2 mean: the better of the two below", "ceil_udp_pp_mean_us", "us")
	line("  the median again, right after ib_write_lat -s 8", "ceil_udp_pp_after_us", "us")
	line("  blocking recv, both processes on one CPU: median", "ceil_udp_pp_block_us", "us")
	line("  polling recv (MSG_DONTWAIT), two CPUs: median", "ceil_udp_pp_poll_us", "us")
	line("  (blocking on two CPUs: vCPU wakeups; not a ceiling)", "ceil_udp_pp_xcpu_us", "us")
	line("  (polling, each message a GSO pair + GRO: RC's two packets; reference)", "ceil_udp_pp_gso_us", "us")
	line("  (polling a packet ring instead of recv, two CPUs: URNIC_RING's base; reference)", "ceil_udp_pp_ring_us", "us")
	line("raw UDP, 40 B datagrams in GSO sends of 64 + GRO", "ceil_udp_gso_small_mpps", "Mpps")
	line("raw UDP, 40 B datagrams one by one (sendmmsg/recvmmsg)", "ceil_udp_small_mpps", "Mpps")
	line("memcpy, 64 MiB buffers, one thread", "ceil_memcpy_GBps", "GB/s")
	printf "\nPeers: tcp on loopback\n"
	line("UCX ucx_perftest ucp_put_bw 64 KiB (UCX_TLS=tcp)", "ucx_put_bw_gbps", "Gb/s")
	line("UCX ucp_put_bw 8 B: message rate", "ucx_put_msgrate_mpps", "Mpps")
	line("UCX ucp_put_lat 8 B: median (one way)", "ucx_put_lat_us", "us")
	line("UCX ucp_put_lat 8 B: average", "ucx_put_lat_avg_us", "us")
	line("libfabric fi_pingpong -p tcp -e rdm 8 B: usec/xfer", "fi_pp_lat_us", "us")
	line("libfabric fi_pingpong 64 KiB, one in flight (no bw mode)", "fi_pp_bw_gbps", "Gb/s")

	printf "\nurnic: Debian's perftest over urnic (RC, MTU 4096, 127.0.3.2 <- 127.0.3.3)\n"
	printf "  %-40s %14s %8s %8s %9s\n", "", "figure", "/ceiling", "/UCX", "/best peer"
	printf "  bandwidth: ceiling = raw UDP GSO/GRO, best peer = max(UCX put_bw, fi_pingpong 64 KiB); higher is better\n"
	urow("ib_write_bw -s 65536", "urnic_write_bw_gbps", "Gb/s", ceil_bw, ucx_bw, best_bw)
	urow("ib_send_bw -s 65536", "urnic_send_bw_gbps", "Gb/s", ceil_bw, ucx_bw, best_bw)
	urow("ib_read_bw -s 65536", "urnic_read_bw_gbps", "Gb/s", ceil_bw, ucx_bw, best_bw)
	urow("ib_write_bw -s 65536 -q 4", "urnic_qp4_gbps", "Gb/s", ceil_bw, ucx_bw, best_bw)
	urow("ib_write_bw -s 65536 -q 16", "urnic_qp16_gbps", "Gb/s", ceil_bw, ucx_bw, best_bw)
	urow("ib_write_bw -s 65536 -q 64", "urnic_qp64_gbps", "Gb/s", ceil_bw, ucx_bw, best_bw)
	printf "  message rate: ceiling = raw UDP 40 B datagrams in GSO sends, peer = UCX put_bw 8 B\n"
	urow("ib_write_bw -s 8 -q 4 -l 16", "urnic_msgrate_mpps", "Mpps", ceil_mr, ucx_mr, ucx_mr)
	urow("ib_write_bw -s 8 (1 QP, no post list)", "urnic_msgrate_1qp_mpps", "Mpps", ceil_mr, ucx_mr, ucx_mr)
	printf "  latency: ceiling = raw UDP ping-pong, best peer = min(UCX put_lat, fi_pingpong); lower is better\n"
	urow("ib_write_lat -s 8 (t_typical, RTT/2)", "urnic_write_lat_us", "us", ceil_pp, ucx_lat, best_lat)
	urow("ib_write_lat -s 8, URNIC_RING=1 (t_typical)", "urnic_write_lat_ring_us", "us", ceil_pp, ucx_lat, best_lat)
	urow("ib_write_lat -s 8 (t_avg, RTT/2)", "urnic_write_lat_avg_us", "us", m("ceil_udp_pp_mean_us"), m("ucx_put_lat_avg_us"), min2(m("ucx_put_lat_avg_us"), m("fi_pp_lat_us")))
	urow("ib_send_lat -s 8 (t_typical, RTT/2)", "urnic_send_lat_us", "us", ceil_pp, ucx_lat, best_lat)
	urow("ib_read_lat -s 8 (t_typical, full RTT)", "urnic_read_lat_us", "us", ceil_rtt, ucx_rtt, best_rtt)
	printf "  idle: an open device with two connected RC QPs (RTS), nothing posted\n"
	line("CPU, application sleeping (% of one core)", "idle_sleep_cpu_pct", "%")
	line("CPU, application blocked on an armed completion channel", "idle_armed_cpu_pct", "%")

	printf "\nurnic across message sizes (ib_write_bw -a, ib_write_lat -a t_typical) and the peers\n"
	printf "  %8s | %8s %6s %8s %8s %6s | %8s %8s %8s %6s | %8s\n", "bytes", "urnic", "/ceil",
		"UCX", "fi_pp", "/best", "urnic", "UCX", "fi_pp", "/best", "urnic"
	printf "  %8s | %8s %6s %8s %8s %6s | %8s %8s %8s %6s | %8s\n", "", "Gb/s", "", "Gb/s", "Gb/s", "",
		"us", "us", "us", "", "Mpps"
	for (i = 1; i <= nsz; i++) {
		z = sw[i, "size"]
		if (sw[i, "urnic_write_bw_gbps"] == "NaN" && sw[i, "urnic_write_lat_us"] == "NaN") continue
		b = max2(sw[i, "ucx_put_bw_gbps"] == "NaN" ? "" : sw[i, "ucx_put_bw_gbps"],
			 sw[i, "fi_pp_bw_gbps"] == "NaN" ? "" : sw[i, "fi_pp_bw_gbps"])
		l = min2(sw[i, "ucx_put_lat_us"] == "NaN" ? "" : sw[i, "ucx_put_lat_us"],
			 sw[i, "fi_pp_lat_us"] == "NaN" ? "" : sw[i, "fi_pp_lat_us"])
		printf "  %8d | %8s %6s %8s %8s %6s | %8s %8s %8s %6s | %8s\n", z,
			num(sw[i, "urnic_write_bw_gbps"]), rx(ratio(sw[i, "urnic_write_bw_gbps"], ceil_bw)),
			num(sw[i, "ucx_put_bw_gbps"]), num(sw[i, "fi_pp_bw_gbps"]),
			rx(ratio(sw[i, "urnic_write_bw_gbps"], b)),
			num(sw[i, "urnic_write_lat_us"]), num(sw[i, "ucx_put_lat_us"]),
			num(sw[i, "fi_pp_lat_us"]), rx(ratio(sw[i, "urnic_write_lat_us"], l)),
			num(sw[i, "urnic_write_mpps"])
	}

	printf "\nTargets (issue \"Fast\"). \"paired\": the median of the per-repetition ratios, each\n"
	printf "between figures of the same repetition (decides MET); \"medians\": ratio of the medians above.\n"
	printf "  %-56s %8s %8s\n", "", "paired", "medians"
	printf "" > (out "/targets.tsv")
	target("ib_write_bw -s 65536 / UCX tcp put_bw 64 KiB", pratio("urnic_write_bw_gbps", "ucx_put_bw_gbps"), ">=", 2.5, "bw_vs_ucx", ratio(m("urnic_write_bw_gbps"), ucx_bw))
	# The ceilings of the two targets against them: per repetition, the mean of the
	# figure measured right before urnic's and the one right after (run.sh).
	bw_ceil_k = has("ceil_udp_gso_pair_gbps") ? "ceil_udp_gso_pair_gbps" : "ceil_udp_gso_gbps"
	pp_ceil_k = has("ceil_udp_pp_pair_us") ? "ceil_udp_pp_pair_us" : "ceil_udp_pp_us"
	target("ib_write_bw -s 65536 / raw UDP GSO/GRO ceiling" (bw_ceil_k ~ /pair/ ? " (around it)" : ""), pratio("urnic_write_bw_gbps", bw_ceil_k), ">=", 0.8, "bw_vs_udp", ratio(m("urnic_write_bw_gbps"), m(bw_ceil_k)))
	# Latency is decided on urnic's fastest configuration, receiving from packet rings
	# (URNIC_RING=1), when this run could measure it; the socket figure is printed too.
	lat_k = has("urnic_write_lat_ring_us") ? "urnic_write_lat_ring_us" : "urnic_write_lat_us"
	target("ib_write_lat -s 8 " (has("urnic_write_lat_ring_us") ? "URNIC_RING=1 " : "") "/ raw UDP ping-pong" (pp_ceil_k ~ /pair/ ? " (around it)" : ""), pratio(lat_k, pp_ceil_k), "<=", 1.2, "lat_vs_udp", ratio(m(lat_k), m(pp_ceil_k)))
	if (has("urnic_write_lat_ring_us"))
		printf "  %-56s %8s %8s  (not counted: sockets)\n", "ib_write_lat -s 8, receiving from the socket / same", rx(pratio("urnic_write_lat_us", pp_ceil_k)), rx(ratio(m("urnic_write_lat_us"), m(pp_ceil_k)))
	target("ib_write_lat -s 8 / UCX tcp put_lat 8 B", pratio("urnic_write_lat_us", "ucx_put_lat_us"), "<=", 0.6, "lat_vs_ucx", ratio(m("urnic_write_lat_us"), ucx_lat))
	qp1_k = has("urnic_qp1_pair_gbps") ? "urnic_qp1_pair_gbps" : "urnic_qp1_gbps"
	target("64-QP / 1-QP ib_write_bw -s 65536 (within 10%)" (qp1_k ~ /pair/ ? " (around it)" : ""), pratio("urnic_qp64_gbps", qp1_k), ">=", 0.9, "qp64_vs_qp1", ratio(m("urnic_qp64_gbps"), m(qp1_k)))
	if (qp1_k ~ /pair/)
		printf "  %-56s %8s %8s  (not counted: ~20 s apart)\n", "64-QP / the 1-QP ib_write_bw above", rx(pratio("urnic_qp64_gbps", "urnic_qp1_gbps")), rx(ratio(m("urnic_qp64_gbps"), m("urnic_qp1_gbps")))
	idle = max2(m("idle_sleep_cpu_pct"), m("idle_armed_cpu_pct"))
	target("idle device, QP in RTS: % of a core (worse case)", idle, "<", 1, "idle_cpu", idle)
	printf "  %d of %d targets met\n", nmet, ntg
	printf "  Reference, not a target: the ceiling's stream in RoCE's shape (bench/roce_shape.c: what the\n"
	printf "  wire's shape and ICRC cost before any protocol) / the ceiling %s; ib_write_bw / it %s\n",
		rx(pratio("ref_roce_shape_gbps", "ceil_udp_gso_gbps")), rx(pratio("urnic_write_bw_gbps", "ref_roce_shape_gbps"))
	printf "\nFiles: %s/{report.txt,results.tsv,sweep.tsv,targets.tsv,summary.json,raw/}\n", out

	# summary.json
	js = out "/summary.json"
	printf "{\n  \"date\": %s,\n  \"commit\": %s,\n  \"cpus\": %s,\n  \"reps\": %s,\n  \"seconds\": %s,\n  \"quick\": %s,\n",
		jstr(date), jstr(commit), cpus + 0, reps + 0, secs + 0, quick ? "true" : "false" > js
	printf "  \"cpu\": %s,\n  \"cpu_features\": %s,\n  \"crc_path\": %s,\n", jstr(cpu),
		jstr(feats), jstr(crc) > js
	printf "  \"metrics\": {\n" > js
	for (i = 1; i <= nkeys; i++) {
		k = keys[i]
		n = split(runs[k], rv, ",")
		r = ""
		for (j = 1; j <= n; j++) r = r (j > 1 ? ", " : "") jnum(rv[j])
		printf "    %s: {\"median\": %s, \"runs\": [%s]}%s\n", jstr(k), jnum(med[k]), r,
			i < nkeys ? "," : "" > js
	}
	printf "  },\n  \"targets\": [\n" > js
	for (i = 1; i <= ntg; i++)
		printf "    {\"id\": %s, \"what\": %s, \"value\": %s, \"ratio_of_medians\": %s, \"op\": %s, \"goal\": %s, \"status\": %s}%s\n",
			jstr(tg_what[i]), jstr(tg_name[i]), jnum(tg_val[i]), jnum(tg_med[i]), jstr(tg_op[i]), tg_goal[i],
			jstr(tg_status[i]), i < ntg ? "," : "" > js
	printf "  ],\n  \"sweep\": [\n" > js
	for (i = 1; i <= nsz; i++) {
		r = ""
		for (c = 1; c <= ncol; c++)
			r = r (c > 1 ? ", " : "") jstr(col[c]) ": " jnum(sw[i, col[c]])
		printf "    {%s}%s\n", r, i < nsz ? "," : "" > js
	}
	printf "  ]\n}\n" > js
	close(js)
}
