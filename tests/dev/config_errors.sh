#!/bin/sh
# config_errors.sh URNIC LIBDIR - a bad value in a URNIC_* variable or in the config
# file fails the device open (README "Configuration"): `urnic devices` exits 1 with a
# message naming the variable (or file:line) and the value, and Debian's ibv_devinfo
# over the drop-in cannot open the device. Good values, 0/1 flags both ways and
# comments in the file still open it. No QP is made: no port is bound (127.0.0.52).
URNIC=$1
LIBDIR=$2
ADDR=127.0.0.52
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0

# run [-u] VAR=VALUE...: `urnic devices` on $ADDR (-u: URNIC_ADDR unset) and the
# empty config file, unless the arguments say otherwise.
run() {
	if [ "$1" = -u ]; then
		shift
		env -u URNIC_ADDR URNIC_CONFIG=$T/empty.conf "$@" "$URNIC" devices 2>&1
	else
		env URNIC_ADDR=$ADDR URNIC_CONFIG=$T/empty.conf "$@" "$URNIC" devices 2>&1
	fi
}

# bad 'REGEX' [-u] VAR=VALUE...: the open fails, a line of stderr matches REGEX.
bad() {
	regex=$1
	shift
	out=$(run "$@")
	rc=$?
	if [ $rc -ne 1 ] || ! printf '%s\n' "$out" | grep -Eq -- "$regex" ||
		! printf '%s\n' "$out" | grep -q "no device opens"; then
		echo "FAIL (rc $rc, want 1 and /$regex/): $*"
		printf '%s\n' "$out" | sed 's/^/    /'
		fails=$((fails + 1))
	else
		echo "ok bad: $*"
	fi
}

# good VAR=VALUE...: the device opens, nothing is said about the configuration.
good() {
	out=$(run "$@")
	rc=$?
	if [ $rc -ne 0 ] || printf '%s\n' "$out" | grep -q "no device opens"; then
		echo "FAIL (rc $rc, want 0): $*"
		printf '%s\n' "$out" | sed 's/^/    /'
		fails=$((fails + 1))
	else
		echo "ok good: $*"
	fi
}

: > "$T/empty.conf"
bad "URNIC_FAULT: bad fault spec 'drop=1%,reordr=5%'" URNIC_FAULT='drop=1%,reordr=5%'
bad "URNIC_LIMITS: no limit named 'max_foo'" URNIC_LIMITS=max_qp=64,max_foo=3
bad "URNIC_LIMITS: 'max_qp' is not name=value" URNIC_LIMITS=max_qp
bad "URNIC_LIMITS: max_qp '0' is not a number in 1\.\.4094" URNIC_LIMITS=max_qp=0
bad "URNIC_LIMITS: max_cq 'x' is not a number" URNIC_LIMITS=max_cq=x
bad "URNIC_LIMITS='' names no limit" URNIC_LIMITS=
bad "URNIC_ADDR='' names no address" URNIC_ADDR=
bad "URNIC_ADDR=' , ' names no address" "URNIC_ADDR= , "
bad "URNIC_ADDR: device address '127.0.0.52' named twice" URNIC_ADDR=$ADDR,$ADDR
bad "URNIC_ADDR: device address '::ffff:7f00:34' named twice" URNIC_ADDR=::ffff:7f00:34,::ffff:7f00:34
bad "URNIC_ADDR: device address 'bogus' is not an IPv4 or IPv6 address" URNIC_ADDR=$ADDR,bogus
# The device's kind before its address (src/dev/kinds.def): iwarp, uet and roce are
# known, anything else is a mistake; a bare address is RoCEv2, and `urnic devices` says
# which kind each device is.
bad "URNIC_ADDR: device 'iwrap:$ADDR': 'iwrap' is not a device kind \(roce, iwarp, uet\)" \
	URNIC_ADDR=iwrap:$ADDR
bad "URNIC_ADDR: device address 'iwarp:' is not an IPv4 or IPv6 address" URNIC_ADDR=iwarp:
bad "URNIC_ADDR: device address 'iwarp:bogus' is not" URNIC_ADDR=iwarp:bogus
bad "URNIC_ADDR: device address 'IWARP:$ADDR' is not" URNIC_ADDR=IWARP:$ADDR
bad "URNIC_ADDR: device address '$ADDR' named twice" URNIC_ADDR=iwarp:$ADDR,$ADDR
good URNIC_ADDR=iwarp:$ADDR
good URNIC_ADDR=uet:$ADDR
good URNIC_ADDR=roce:$ADDR
good URNIC_ADDR=iwarp:::ffff:7f00:34
good URNIC_ADDR=fe80::1
# kind KIND [-u] VAR=VALUE...: `urnic devices` lists urnic0 as KIND.
kind() {
	want=$1
	shift
	out=$(run "$@" 2>&1)
	if ! printf '%s\n' "$out" | grep -Eq "^urnic0 +$want "; then
		echo "FAIL (want urnic0 of kind $want): $*"
		printf '%s\n' "$out" | sed 's/^/    /'
		fails=$((fails + 1))
	else
		echo "ok kind $want: $*"
	fi
}
kind iwarp URNIC_ADDR=iwarp:$ADDR
kind uet URNIC_ADDR=uet:$ADDR
kind uet URNIC_ADDR=uet:::ffff:7f00:34
kind roce URNIC_ADDR=$ADDR
kind roce URNIC_ADDR=roce:$ADDR
printf 'device iwarp:%s\n' $ADDR > "$T/iwarp.conf"
kind iwarp -u URNIC_CONFIG=$T/iwarp.conf
printf 'device uet:%s\n' $ADDR > "$T/uet.conf"
kind uet -u URNIC_CONFIG=$T/uet.conf
printf 'device uet:%s\n' bogus > "$T/uet-bad.conf"
bad "$T/uet-bad.conf:1: device address 'uet:bogus' is not" -u URNIC_CONFIG=$T/uet-bad.conf
bad "URNIC_SPIN_US='abc' is not a number in 0\.\.1000000" URNIC_SPIN_US=abc
bad "URNIC_SPIN_US='-1'" URNIC_SPIN_US=-1
bad "URNIC_SPIN_US='5x'" URNIC_SPIN_US=5x
bad "URNIC_ACK_HOLD_US='1000001' is not a number in 0\.\.1000000" URNIC_ACK_HOLD_US=1000001
bad "URNIC_ACK_HOLD_US=''" URNIC_ACK_HOLD_US=
bad "URNIC_IW_HOLD_US='10000001' is not a number in 0\.\.10000000" URNIC_IW_HOLD_US=10000001
good URNIC_IW_HOLD_US=0
for v in URNIC_POST_BATCH URNIC_RING URNIC_NO_GSO URNIC_NO_GRO URNIC_ICRC_STRICT \
	URNIC_PRINT_COUNTERS URNIC_STUB_TRACE; do
	bad "$v='yes' is not 0 or 1" $v=yes
	bad "$v='' is not 0 or 1" $v=
	good $v=0
done
for v in URNIC_POST_BATCH URNIC_NO_GSO URNIC_NO_GRO URNIC_ICRC_STRICT URNIC_PRINT_COUNTERS \
	URNIC_STUB_TRACE; do
	good $v=1
done
bad "URNIC_COUNTERS_MODE='0666' is not 0600, 0640 or 0644" URNIC_COUNTERS_MODE=0666
bad "URNIC_CONFIG='$T/missing.conf': cannot read it" URNIC_CONFIG=$T/missing.conf
bad "URNIC_PCAP: '$T/x-%q.pcapng': %q is not %p \(the process id\), %d \(the device\) or %%" \
	URNIC_PCAP=$T/x-%q.pcapng
bad "URNIC_PCAP: '$T/x%': % is not %p" URNIC_PCAP=$T/x%
good URNIC_PCAP=$T/x-%p-%d-%%.pcapng
good URNIC_PCAP=

# Congestion control per device (URNIC_CONGESTION, the file's `congestion` lines).
good URNIC_CONGESTION=dcqcn
good URNIC_CONGESTION=none
good URNIC_CONGESTION=$ADDR=dcqcn
good "URNIC_CONGESTION=dcqcn,$ADDR=none"
good URNIC_CONGESTION=::ffff:7f00:34=dcqcn URNIC_ADDR=::ffff:7f00:34
good URNIC_CONGESTION=dcqcn URNIC_ADDR=iwarp:$ADDR
bad "URNIC_CONGESTION: 'dcqnc': 'dcqnc' is not a congestion control \(dcqcn, none\)" \
	URNIC_CONGESTION=dcqnc
bad "URNIC_CONGESTION: '127.0.0.99=dcqcn': no device has that address" \
	URNIC_CONGESTION=127.0.0.99=dcqcn
bad "URNIC_CONGESTION: 'x=dcqcn': 'x' is not an IPv4 or IPv6 address" URNIC_CONGESTION=x=dcqcn
bad "URNIC_CONGESTION: '$ADDR=dcqcn': urnic0 is an iwarp device: TCP controls its congestion" \
	URNIC_CONGESTION=$ADDR=dcqcn URNIC_ADDR=iwarp:$ADDR
bad "URNIC_CONGESTION: '$ADDR=dcqcn': urnic0 is a uet device: NSCC controls its congestion" \
	URNIC_CONGESTION=$ADDR=dcqcn URNIC_ADDR=uet:$ADDR
good URNIC_CONGESTION=dcqcn URNIC_ADDR=uet:$ADDR
bad "URNIC_CONGESTION: '' names no congestion control" URNIC_CONGESTION=
printf 'congestion %s=dcqcn\n' $ADDR > "$T/cc.conf"
good URNIC_CONFIG=$T/cc.conf
printf 'congestion dcqcm\n' > "$T/cc-bad.conf"
bad "$T/cc-bad.conf:1: 'dcqcm': 'dcqcm' is not a congestion control" URNIC_CONFIG=$T/cc-bad.conf
bad "URNIC_CONGESTON is not a urnic variable \(URNIC_CONGESTION\?\)" URNIC_CONGESTON=dcqcn

# A misspelt variable name (one or two edits from one of the library's) is an error;
# a script's own URNIC_ variables, far from every name, are not.
bad "URNIC_FAUT is not a urnic variable \(URNIC_FAULT\?\)" URNIC_FAUT=drop=1%
bad "URNIC_NOGSO is not a urnic variable \(URNIC_NO_GSO\?\)" URNIC_NOGSO=1
bad "URNIC_LIMTIS is not a urnic variable \(URNIC_LIMITS\?\)" URNIC_LIMTIS=max_qp=8
bad "URNIC_ADR is not a urnic variable \(URNIC_ADDR\?\)" URNIC_ADR=$ADDR
bad "URNIC_SPIN_MS is not a urnic variable \(URNIC_SPIN_US\?\)" URNIC_SPIN_MS=5
good URNIC_TOP=/src URNIC_SYS_NETNS=private URNIC_HOSTILE_NS=x URNIC_GOLDEN_DIR=/g
# Every other URNIC_ variable the project's own scripts set passes (the library's own
# are src/dev/env_names.c's; this file's misspellings are above).
top=$(cd "$(dirname "$0")/../.." && pwd)
grep -oE '"URNIC_[A-Z0-9_]+"' "$top/src/dev/env_names.c" | tr -d '"' >"$T/ours"
[ -s "$T/ours" ] || { echo "FAIL: no names in src/dev/env_names.c"; exit 1; }
for v in $(grep -rhoE --exclude=config_errors.sh 'URNIC_[A-Z0-9_]+=' "$top/scripts" \
	"$top/tests" "$top/bench" "$top/.ci" | tr -d = | sort -u | grep -vxFf "$T/ours"); do
	good "$v=1"
done

# The config file: every line is checked, and named by file:line.
printf '# a comment\n\nmax_qp 64 # and another\nfault drop=1%%,seed=3\n' > "$T/good.conf"
good URNIC_CONFIG=$T/good.conf
printf 'max_qp 64\nmax_qpp 64\n' > "$T/unknown.conf"
bad "$T/unknown.conf:2: unknown setting 'max_qpp'" URNIC_CONFIG=$T/unknown.conf
printf 'max_cqe\n' > "$T/novalue.conf"
bad "$T/novalue.conf:1: 'max_cqe' is not \`<setting> <value>\`" URNIC_CONFIG=$T/novalue.conf
printf 'max_cqe 64 128\n' > "$T/extra.conf"
bad "$T/extra.conf:1: 'max_cqe 64 128' is not" URNIC_CONFIG=$T/extra.conf
printf 'pcap %s/%%s.pcapng\n' "$T" > "$T/pcap.conf"
bad "$T/pcap.conf:1: '$T/%s.pcapng': %s is not %p" URNIC_CONFIG=$T/pcap.conf
printf 'pcap %s/%%p.pcapng\n' "$T" > "$T/pcap_good.conf"
good URNIC_CONFIG=$T/pcap_good.conf
printf 'fault drop=lots\n' > "$T/fault.conf"
bad "$T/fault.conf:1: bad fault spec 'drop=lots'" URNIC_CONFIG=$T/fault.conf
printf 'max_srq 99999999\n' > "$T/range.conf"
bad "$T/range.conf:1: max_srq '99999999' is not a number in 1\.\." URNIC_CONFIG=$T/range.conf
printf 'device 127.0.0.300\n' > "$T/badaddr.conf"
bad "$T/badaddr.conf:1: device address '127.0.0.300' is not" URNIC_CONFIG=$T/badaddr.conf
bad "$T/badaddr.conf:1: device address '127.0.0.300' is not" -u URNIC_CONFIG=$T/badaddr.conf
printf 'device %s\ndevice %s\n' $ADDR $ADDR > "$T/twice.conf"
bad "$T/twice.conf:2: device address '$ADDR' named twice" -u URNIC_CONFIG=$T/twice.conf

# What an rdma-core program sees: the device is listed and cannot be opened. Not in the
# sanitizer build: Debian's binary cannot load a library built with AddressSanitizer.
if [ "$SANITIZE" != ON ] && command -v ibv_devinfo > /dev/null; then
	out=$(env LD_LIBRARY_PATH=$LIBDIR URNIC_ADDR=$ADDR URNIC_RING=on ibv_devinfo 2>&1)
	if [ $? -eq 0 ] || ! printf '%s\n' "$out" | grep -q "URNIC_RING='on' is not 0 or 1"; then
		echo "FAIL: ibv_devinfo with URNIC_RING=on"
		printf '%s\n' "$out" | sed 's/^/    /'
		fails=$((fails + 1))
	else
		echo "ok ibv_devinfo fails: $(printf '%s\n' "$out" | tail -1)"
	fi
fi
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
