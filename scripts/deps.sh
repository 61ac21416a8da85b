#!/bin/sh
# deps.sh - installs the Debian 12 packages urnic needs to build, test and demo
# (python3-pyverbs: rdma-core's own test suite, tests/system/pyverbs.sh; netcat-openbsd
# and socat: TCP programs run over rsockets, tests/system/rsocket.sh; groff-base and
# man-db: the manual pages' check; dpkg-dev: cpack's package dependencies; the last
# line but one: the interop label's VM, tests/interop, whose kernel package, and the
# linux-headers and linux-source of that kernel siw is compiled from, it installs
# itself; the last: UCX, libfabric and both MPIs, the middleware label, tests/middleware).
# Sourced by scripts/demo and scripts/test. Runs apt-get only when something is missing
# (as root, or through sudo).
URNIC_PACKAGES="build-essential cmake pkg-config libibverbs-dev librdmacm-dev libisal-dev
liburing-dev ibverbs-utils perftest tshark nftables iproute2 util-linux clang clang-format-14
python3-pyverbs groff-base man-db dpkg-dev rdmacm-utils netcat-openbsd socat
qemu-system-x86 busybox-static tcpdump cpio kmod ibverbs-providers xz-utils
ucx-utils libfabric-bin openmpi-bin libopenmpi-dev mpich libmpich-dev"

urnic_install_deps() {
	missing=""
	for p in $URNIC_PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "urnic: installing Debian packages:$missing"
	sudo=""
	[ "$(id -u)" = 0 ] || sudo="sudo"
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q || return 1
	# shellcheck disable=SC2086
	$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		$missing || return 1
}

urnic_build() {
	build="$1"
	shift
	cmake -S "$URNIC_TOP" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null &&
		cmake --build "$build" -j "$(nproc)"
}
