#!/bin/sh
# pair.sh - one of Debian's unmodified rdma_cm programs (rdmacm-utils) between two
# processes, each with its own urnic device (two hosts on lo), over the drop-in
# librdmacm.so.1 and libibverbs.so.1 of LIBDIR: the server starts, the client connects,
# both must exit 0. Usage: pair.sh LIBDIR SERVER_ADDR CLIENT_ADDR rping|ucmatose|udaddy|
# rdma_server. Exit 77 (skipped) when the program is not installed.
set -u
lib=$1 srv=$2 cli=$3 tool=$4
case $tool in
rping) s="rping -s -a $srv -v -C 10" c="rping -c -a $srv -v -C 10" ;;
ucmatose) s="ucmatose -b $srv" c="ucmatose -s $srv" ;;
udaddy) s="udaddy -b $srv" c="udaddy -s $srv" ;;
rdma_server) s="rdma_server -s $srv" c="rdma_client -s $srv"; tool=rdma_client ;;
*) echo "pair.sh: unknown program $tool" >&2; exit 2 ;;
esac
command -v "$tool" >/dev/null || { echo "pair.sh: $tool not installed"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
LD_LIBRARY_PATH=$lib URNIC_ADDR=$srv timeout 30 $s >"$out/server" 2>&1 &
spid=$!
sleep 1
LD_LIBRARY_PATH=$lib URNIC_ADDR=$cli timeout 25 $c >"$out/client" 2>&1
crc=$?
wait $spid
src=$?
echo "--- server ($s): exit $src"
cat "$out/server"
echo "--- client ($c): exit $crc"
cat "$out/client"
[ $src = 0 ] && [ $crc = 0 ]
