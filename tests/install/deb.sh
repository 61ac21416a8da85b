#!/bin/sh
# SPDX-License-Identifier: MIT
# deb.sh BUILD - `cpack -G DEB` of BUILD into a fresh directory (not the build's), then
# the package: its files under /usr (the drop-in in lib/<multiarch>/urnic/, nothing
# named libibverbs in the loader's path), Depends computed by dpkg-shlibdeps (libisal2,
# not rdma-core's libibverbs1: the package is its own libibverbs), a shlibs file that
# claims liburnic.so.1 alone, and the unpacked tree running: urnic --version and
# Debian's ibv_devinfo -l over the unpacked drop-in. Nothing is installed on the host:
# `dpkg -i` then `apt-get remove urnic` is the README's check by hand.
# Environment: LIBDIR, INSTALL_LIBDIR, SANITIZE, CC (common.sh, install.sh).
BUILD=${1:?usage: deb.sh BUILD}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
. "$TOP/tests/system/common.sh"
sys_setup "$@"
: "${INSTALL_LIBDIR:?INSTALL_LIBDIR not set}"
for t in cpack dpkg-deb dpkg-shlibdeps; do
	command -v $t >/dev/null 2>&1 || skip "$t not installed (dpkg-dev, cmake)"
done

out=$SYS_WORK/pkg
cpack -G DEB -B "$out" --config "$BUILD/CPackConfig.cmake" >"$SYS_WORK/cpack.log" 2>&1 ||
	fail "cpack -G DEB failed"
deb=$(ls "$out"/urnic_*.deb 2>/dev/null)
[ -f "$deb" ] || fail "no urnic_*.deb in $out"
say "built $(basename "$deb")"

dpkg-deb -c "$deb" | awk '{ print $6 }' | sed 's|^\./||' >"$SYS_WORK/contents.log"
L=usr/$INSTALL_LIBDIR
for f in usr/bin/urnic usr/bin/urnic-demo "$L/urnic/libibverbs.so.1" "$L/urnic/librdmacm.so.1" \
	"$L/urnic/libmlx5.so.1" \
	"$L/urnic/libefa.so.1" "$L/liburnic.so.1" "$L/liburnic.so" "$L/pkgconfig/urnic.pc" \
	usr/share/man/man1/urnic.1 usr/share/man/man5/urnic.conf.5 usr/share/man/man7/urnic.7 \
	usr/share/urnic/wireshark/xrceth.lua usr/share/urnic/wireshark/uet.lua \
	usr/share/doc/urnic/README.md \
	usr/share/doc/urnic/copyright; do
	grep -qxF "$f" "$SYS_WORK/contents.log" || fail "the package has no $f"
done
if grep -v "^$L/urnic/" "$SYS_WORK/contents.log" | grep -q 'libibverbs'; then
	fail "a libibverbs outside $L/urnic/: $(grep libibverbs "$SYS_WORK/contents.log")"
fi
grep -v '^usr/' "$SYS_WORK/contents.log" | grep -qv '^$' &&
	fail "files outside /usr: $(grep -v '^usr/' "$SYS_WORK/contents.log" | head -3)"

dep=$(dpkg-deb -f "$deb" Depends)
say "Depends: $dep"
case $dep in *libisal2*) ;; *) fail "Depends lacks libisal2" ;; esac
case $dep in *libibverbs*) fail "Depends names libibverbs: the package is its own" ;; esac
shlibs=$(dpkg-deb --ctrl-tarfile "$deb" | tar -xO ./shlibs)
[ "$shlibs" = "liburnic 1 urnic (>= $(dpkg-deb -f "$deb" Version))" ] ||
	fail "shlibs is '$shlibs'"

root=$SYS_WORK/root
dpkg-deb -x "$deb" "$root" || fail "dpkg-deb -x failed"
grep -qx "prefix=/usr" "$root/$L/pkgconfig/urnic.pc" || fail "urnic.pc's prefix is not /usr"
# SAN_ENV is a list of words without blanks inside them: split on purpose.
# shellcheck disable=SC2086
v=$(env $SAN_ENV "$root/usr/bin/urnic" --version 2>&1) || fail "unpacked urnic --version: $v"
say "unpacked: $v"
if command -v ibv_devinfo >/dev/null 2>&1; then
	# shellcheck disable=SC2086
	l=$(env LD_LIBRARY_PATH="$root/$L/urnic" URNIC_ADDR="$SRV_ADDR" $SAN_ENV ibv_devinfo -l 2>&1)
	echo "$l" | grep -q "^[[:space:]]*urnic0$" || fail "ibv_devinfo -l over the unpacked drop-in: $l"
	say "ibv_devinfo -l over the unpacked drop-in: urnic0"
fi
say "PASS"
