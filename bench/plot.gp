# bench/plot.gp - bandwidth and latency against message size, urnic and its peers.
# gnuplot -e "sweep='build/bench/sweep.tsv'; outdir='docs'; ceil='32.1'; pp='6.2'; reps='3'" bench/plot.gp
# sweep.tsv columns: size urnic_write_bw_gbps ucx_put_bw_gbps fi_pp_bw_gbps
#                    urnic_write_lat_us ucx_put_lat_us fi_pp_lat_us urnic_write_mpps
set datafile separator "\t"
set datafile missing "NaN"
set terminal pngcairo noenhanced size 960,600 font "sans,11"
set logscale x 2
set xrange [6:1.5*1048576]
set xtics ("8" 8, "64" 64, "512" 512, "4K" 4096, "32K" 32768, "256K" 262144, "1M" 1048576)
set xlabel "message size (bytes)"
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key bottom right box opaque
set style line 1 lc rgb "#c0392b" lw 2.5 pt 7 ps 0.8
set style line 2 lc rgb "#2471a3" lw 2 pt 5 ps 0.8
set style line 3 lc rgb "#239b56" lw 2 pt 9 ps 0.9
set style line 4 lc rgb "#555555" lw 1.5 dt 2

set output outdir."/bench-bandwidth.png"
set title "Bandwidth on loopback, 2 vCPUs (median of ".reps." runs)"
set ylabel "Gb/s of payload (10^9 bit/s)"
set logscale y 10
set yrange [0.005:100]
plot sweep using 1:2 every ::1 with linespoints ls 1 title "urnic: ib_write_bw (perftest, RC)", \
     sweep using 1:3 every ::1 with linespoints ls 2 title "UCX ucp_put_bw, tcp", \
     sweep using 1:4 every ::1 with linespoints ls 3 title "libfabric fi_pingpong, tcp (one message in flight)", \
     (ceil+0 > 0 ? ceil+0 : NaN) with lines ls 4 title sprintf("raw UDP GSO/GRO ceiling (%s Gb/s)", ceil)

set output outdir."/bench-latency.png"
set title "Latency (one way, RTT/2) on loopback, 2 vCPUs (median of ".reps." runs)"
set ylabel "microseconds"
set key top left box opaque
set yrange [1:*]
plot sweep using 1:5 every ::1 with linespoints ls 1 title "urnic: ib_write_lat t_typical (perftest, RC)", \
     sweep using 1:6 every ::1 with linespoints ls 2 title "UCX ucp_put_lat median, tcp", \
     sweep using 1:7 every ::1 with linespoints ls 3 title "libfabric fi_pingpong usec/xfer, tcp", \
     (pp+0 > 0 ? pp+0 : NaN) with lines ls 4 title sprintf("raw UDP 8 B ping-pong RTT/2 (%s us)", pp)
