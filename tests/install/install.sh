#!/bin/sh
# SPDX-License-Identifier: MIT
# install.sh BUILD tree|run - `cmake --install BUILD --prefix` into a fresh directory,
# then what an installed urnic must do from there (README, "Installing").
#   tree: every file in its place; the drop-in and liburnic.so.1 under their SONAMEs;
#     the CLI's RUNPATH relative to itself, so it still runs once the tree has moved;
#     urnic.pc gives -lurnic and the drop-in directory, and a program built with it
#     finds urnic0 through liburnic.so.1; the manual pages format without a warning.
#   run: `urnic run` from the tree puts the installed drop-in on the library path and
#     Debian's ibv_devinfo lists urnic0 through it, as it does with LD_LIBRARY_PATH
#     set by hand; perftest's stub providers resolve there too.
# Environment: LIBDIR (the build's lib/, for common.sh), INSTALL_LIBDIR (the install's
# library directory, relative), SANITIZE, CC.
BUILD=${1:?usage: install.sh BUILD tree|run}
MODE=${2:?usage: install.sh BUILD tree|run}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/system/common.sh"
sys_setup "$@"
: "${INSTALL_LIBDIR:?INSTALL_LIBDIR not set}"

P=$SYS_WORK/prefix
L=$P/$INSTALL_LIBDIR
cmake --install "$BUILD" --prefix "$P" >"$SYS_WORK/install.log" 2>&1 ||
	fail "cmake --install $BUILD --prefix $P failed"
say "installed into $P"

# SAN_ENV is a list of words without blanks inside them: split on purpose.
# shellcheck disable=SC2086
san() { env $SAN_ENV "$@"; }

soname() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p'; }
runpath() { readelf -d "$1" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p'; }

check_tree() {
	for f in bin/urnic bin/urnic-demo "$INSTALL_LIBDIR/urnic/libibverbs.so.1" \
		"$INSTALL_LIBDIR/urnic/librdmacm.so.1" \
		"$INSTALL_LIBDIR/urnic/libmlx5.so.1" "$INSTALL_LIBDIR/urnic/libefa.so.1" \
		"$INSTALL_LIBDIR/liburnic.so.1" "$INSTALL_LIBDIR/liburnic.so" \
		"$INSTALL_LIBDIR/pkgconfig/urnic.pc" share/man/man1/urnic.1 \
		share/man/man1/urnic-demo.1 share/man/man5/urnic.conf.5 share/man/man7/urnic.7 \
		share/urnic/wireshark/xrceth.lua share/urnic/wireshark/uet.lua \
		share/doc/urnic/README.md \
		share/doc/urnic/copyright; do
		[ -e "$P/$f" ] || fail "$f was not installed"
	done
	# Nothing that would shadow the system's libibverbs in the loader's own search.
	if [ -e "$L/libibverbs.so.1" ] || [ -e "$L/libibverbs.so" ]; then
		fail "a libibverbs in $INSTALL_LIBDIR itself, outside urnic/"
	fi
	[ "$(soname "$L/urnic/libibverbs.so.1")" = libibverbs.so.1 ] ||
		fail "the drop-in's SONAME is $(soname "$L/urnic/libibverbs.so.1")"
	[ "$(soname "$L/liburnic.so.1")" = liburnic.so.1 ] ||
		fail "liburnic.so.1's SONAME is $(soname "$L/liburnic.so.1")"
	rp=$(runpath "$P/bin/urnic")
	[ "$rp" = "\$ORIGIN/../$INSTALL_LIBDIR/urnic" ] || fail "bin/urnic's RUNPATH is '$rp'"
	say "bin/urnic RUNPATH $rp"

	export PKG_CONFIG_PATH="$L/pkgconfig"
	flags=$(pkg-config --cflags --libs urnic) || fail "pkg-config --cflags --libs urnic"
	say "pkg-config --cflags --libs urnic: $flags"
	case " $flags " in *" -L$L -lurnic "*) ;; *) fail "no -L$L -lurnic" ;; esac
	dropin=$(pkg-config --variable=dropindir urnic)
	[ "$dropin" = "$L/urnic" ] || fail "dropindir is '$dropin', not $L/urnic"

	# A program built with urnic.pc: it needs liburnic.so.1 (not libibverbs.so.1) and
	# lists the devices through it.
	cat >"$SYS_WORK/list.c" <<'C'
#include <infiniband/verbs.h>
#include <stdio.h>
int main(void)
{
	int n;
	struct ibv_device **list = ibv_get_device_list(&n);

	for (int i = 0; list && i < n; i++)
		printf("%s\n", ibv_get_device_name(list[i]));
	return list ? 0 : 1;
}
C
	# $flags: split on purpose.
	# shellcheck disable=SC2086
	"$CC" -o "$SYS_WORK/list" "$SYS_WORK/list.c" $flags >"$SYS_WORK/cc.log" 2>&1 ||
		fail "cc list.c $flags failed"
	readelf -d "$SYS_WORK/list" | grep -q 'NEEDED.*\[liburnic\.so\.1\]' ||
		fail "a program linked with -lurnic does not need liburnic.so.1"
	out=$(LD_LIBRARY_PATH=$L URNIC_ADDR=$SRV_ADDR san "$SYS_WORK/list" 2>&1)
	[ "$out" = urnic0 ] || fail "a program linked with -lurnic listed '$out', not urnic0"
	say "a program linked with -lurnic lists urnic0"

	if command -v groff >/dev/null 2>&1; then
		"$TOP/scripts/check-man" "$P"/share/man/man*/* || fail "the installed pages warn"
		MANWIDTH=80 man -l "$P/share/man/man7/urnic.7" | grep -q "drop-in library" ||
			fail "man -l urnic.7 does not show the page"
		say "man pages format without a warning"
	else
		say "groff is not installed: the manual pages are not checked"
	fi

	# The tree moves: RUNPATH is relative to the binary.
	mv "$P" "$P.moved"
	v=$(san "$P.moved/bin/urnic" --version 2>&1) || fail "urnic --version, moved: $v"
	mv "$P.moved" "$P"
	echo "$v" | grep -Eq '^urnic [0-9]+\.[0-9]+\.[0-9]+$' || fail "urnic --version: '$v'"
	say "$v, from the moved tree too"
}

check_run() {
	command -v ibv_devinfo >/dev/null 2>&1 || skip "ibv_devinfo not installed (ibverbs-utils)"
	if [ "$(id -u)" != 0 ] && ! unshare -U true 2>/dev/null; then
		skip "urnic run needs root or unprivileged user namespaces"
	fi
	# shellcheck disable=SC2016
	got=$(san "$P/bin/urnic" run --addr "$SRV_ADDR" -- sh -c 'echo "$LD_LIBRARY_PATH"') ||
		fail "urnic run failed"
	[ "${got%%:*}" = "$(readlink -f "$L/urnic")" ] ||
		fail "urnic run set LD_LIBRARY_PATH=$got, not the installed drop-in $L/urnic"
	san "$P/bin/urnic" run --addr "$SRV_ADDR" -- ibv_devinfo >"$SYS_WORK/run.log" 2>&1 ||
		fail "urnic run -- ibv_devinfo failed"
	grep -q "hca_id:[[:space:]]*urnic0" "$SYS_WORK/run.log" || fail "urnic run: no urnic0"
	say "urnic run --addr $SRV_ADDR -- ibv_devinfo: urnic0, library $got"
	LD_LIBRARY_PATH=$L/urnic URNIC_ADDR=$SRV_ADDR san ibv_devinfo >"$SYS_WORK/ldpath.log" 2>&1 ||
		fail "LD_LIBRARY_PATH=$L/urnic ibv_devinfo failed"
	grep -q "hca_id:[[:space:]]*urnic0" "$SYS_WORK/ldpath.log" || fail "ibv_devinfo: no urnic0"
	say "LD_LIBRARY_PATH=$L/urnic ibv_devinfo: urnic0"
	if pt=$(command -v ib_write_bw); then
		LD_LIBRARY_PATH=$L/urnic ldd "$pt" | grep -q "libmlx5.so.1 => $L/urnic/" ||
			fail "ib_write_bw does not load the installed stub libmlx5.so.1"
		say "ib_write_bw loads the installed stub libmlx5.so.1"
	fi
}

case $MODE in
tree) check_tree ;;
run) check_run ;;
*) fail "unknown mode $MODE" ;;
esac
say "PASS"
