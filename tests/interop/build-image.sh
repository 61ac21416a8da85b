#!/bin/bash
# SPDX-License-Identifier: MIT
# build-image.sh - the interop VM: Debian's own kernel (rdma_rxe, Soft-RoCE), siw
# (SoftiWARP) compiled for it, and a busybox initramfs carrying rdma-core's unmodified tools
# (ibverbs-utils, perftest, rdmacm-utils, iproute2's rdma), both providers (librxe,
# libsiw) and the kernel's connection managers (ib_cm, iw_cm, rdma_cm, rdma_ucm).
#
# Built once and reused: the image in $URNIC_INTEROP_CACHE/out is kept while its stamp
# (this script, the kernel release and the versions of the packages copied into it)
# matches; the guest's /init is not part of it (run.sh overlays the current guest/init on
# every boot). Installs what it needs with apt-get (as root; NO_APT=1 refuses instead).
# Adapted from the VM lab (../shared/lab/build-image.sh), without pyverbs. siw is not built
# into Debian's 6.1 kernel ("# CONFIG_RDMA_SIW is not set"): drivers/infiniband/sw/siw is
# compiled out of tree from linux-source-X.Y of the kernel package's own version against
# linux-headers-$KVER, twice: siw.ko as it is, and siw_crc.ko with mpa_crc_required set
# (a compile-time constant in siw_main.c, no module parameter), which makes siw demand
# MPA CRC32c (RFC 5044 7.1.2) of every connection. The modules are unsigned; Debian's
# kernel does not force signatures (it only gets tainted). Both are kept in
# $URNIC_INTEROP_CACHE/siw-VERSION, so a rebuild of the image does not compile them again.
#
# Variables: URNIC_INTEROP_CACHE [/var/cache/urnic-interop], KVER [what linux-image-amd64
# depends on], NO_APT [0], FORCE=1 rebuilds. Output: $URNIC_INTEROP_CACHE/out/{vmlinuz,
# initrd.img,kver,versions.txt,stamp}.
# The guest (guest/init) loads siw.ko or siw_crc.ko only when run.sh asks for siw0.
set -euo pipefail

CACHE="${URNIC_INTEROP_CACHE:-/var/cache/urnic-interop}"
OUT="$CACHE/out"
ARCH_LIB=/usr/lib/x86_64-linux-gnu
HOST_PKGS="busybox-static ibverbs-utils ibverbs-providers perftest libibverbs1 rdmacm-utils
           librdmacm1 iproute2 kmod
           cpio gzip qemu-system-x86 tcpdump tshark nftables gcc make binutils xz-utils"

log() { echo "[interop-image] $*" >&2; }
die() { echo "[interop-image] ERROR: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (apt-get, namespaces, tap devices)"
mkdir -p "$CACHE/debs" "$OUT" || die "cannot create $CACHE (set URNIC_INTEROP_CACHE)"

# ---------------------------------------------------------------- host packages
missing=""
for p in $HOST_PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	[ "${NO_APT:-0}" = 1 ] && die "missing Debian packages:$missing"
	log "apt-get install$missing"
	# shellcheck disable=SC2086 # a list of package names
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing ||
		{ apt-get update -q && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -q --no-install-recommends $missing; } ||
		die "apt-get install$missing failed"
fi

if [ -z "${KVER:-}" ]; then
	KVER="$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-image-\(.*\)$/\1/p' | head -1)"
fi
[ -n "$KVER" ] || die "cannot tell the kernel release (apt-cache depends linux-image-amd64)"
KPKG="linux-image-$KVER"

# The stamp: what the image is made of. Equal stamp, same image: nothing to do.
stamp() {
	sha256sum "${BASH_SOURCE[0]}" | cut -d' ' -f1
	echo "kernel=$KPKG"
	for p in busybox-static ibverbs-utils ibverbs-providers perftest libibverbs1 rdmacm-utils \
		librdmacm1 iproute2; do
		echo "$p=$(dpkg-query -W -f='${Version}' "$p")"
	done
	echo "siw=linux-source-${KVER%.*-*} of $KPKG, siw.ko and siw_crc.ko"
}
want="$(stamp)"
if [ "${FORCE:-0}" != 1 ] && [ -f "$OUT/vmlinuz" ] && [ -f "$OUT/initrd.img" ] &&
	[ "$(cat "$OUT/stamp" 2>/dev/null)" = "$want" ]; then
	log "image up to date: $OUT ($(cat "$OUT/kver"))"
	exit 0
fi

# ---------------------------------------------------------------- kernel deb
log "kernel package $KPKG"
# shellcheck disable=SC2012 # Debian package file names are plain
deb="$(ls "$CACHE/debs/${KPKG}_"*.deb 2>/dev/null | head -1 || true)"
if [ -z "$deb" ]; then
	# (as root into a root-owned directory: no _apt sandbox user)
	dl() { (cd "$CACHE/debs" && apt-get -q -o APT::Sandbox::User=root download "$KPKG"); }
	dl || { apt-get update -q && dl; } ||
		die "apt-get download $KPKG failed"
	# shellcheck disable=SC2012
	deb="$(ls "$CACHE/debs/${KPKG}_"*.deb | head -1)"
fi
KPKG_VER="$(dpkg-deb -f "$deb" Version)"
KROOT="$CACHE/kroot-$KVER"
if [ ! -f "$KROOT/boot/vmlinuz-$KVER" ]; then
	log "extracting $deb"
	rm -rf "$KROOT"
	mkdir -p "$KROOT"
	dpkg-deb -x "$deb" "$KROOT"
fi
depmod -b "$KROOT" "$KVER"

# ---------------------------------------------------------------- siw
MODDIR="$KROOT/lib/modules/$KVER"
if grep -q '^CONFIG_RDMA_SIW=[my]' "$KROOT/boot/config-$KVER"; then
	die "$KPKG builds siw itself: this script expects to compile it (adapt it)"
fi
SIWDIR="$CACHE/siw-$KPKG_VER"
if [ ! -f "$SIWDIR/siw.ko" ] || [ ! -f "$SIWDIR/siw_crc.ko" ]; then
	KMAJMIN="$(echo "$KVER" | cut -d. -f1,2)"
	need=""
	dpkg-query -W -f='${Status}' "linux-headers-$KVER" 2>/dev/null |
		grep -q "install ok installed" || need="$need linux-headers-$KVER"
	dpkg-query -W -f='${Version}' "linux-source-$KMAJMIN" 2>/dev/null | grep -qx "$KPKG_VER" ||
		need="$need linux-source-$KMAJMIN=$KPKG_VER"
	if [ -n "$need" ]; then
		[ "${NO_APT:-0}" = 1 ] && die "missing Debian packages:$need"
		log "apt-get install$need"
		# shellcheck disable=SC2086 # a list of package names
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $need ||
			die "apt-get install$need failed"
	fi
	SRC="$CACHE/siw-src"
	rm -rf "$SRC" "$SIWDIR"
	mkdir -p "$SRC" "$SIWDIR"
	log "compiling siw from linux-source-$KMAJMIN ($KPKG_VER)"
	tar -xJf "/usr/src/linux-source-$KMAJMIN.tar.xz" -C "$SRC" --strip-components=1 \
		"linux-source-$KMAJMIN/drivers/infiniband/sw/siw" || die "no siw in linux-source-$KMAJMIN"
	cp -r "$SRC/drivers/infiniband/sw/siw" "$SRC/siw_crc"
	sed -i 's/^const bool mpa_crc_required;/const bool mpa_crc_required = true;/' \
		"$SRC/siw_crc/siw_main.c"
	grep -q '^const bool mpa_crc_required = true;' "$SRC/siw_crc/siw_main.c" ||
		die "siw_main.c has no 'const bool mpa_crc_required;' to turn on"
	for d in drivers/infiniband/sw/siw siw_crc; do
		make -s -C "/usr/src/linux-headers-$KVER" M="$SRC/$d" CONFIG_RDMA_SIW=m modules ||
			die "siw ($d) does not compile"
	done
	strip --strip-debug -o "$SIWDIR/siw.ko" "$SRC/drivers/infiniband/sw/siw/siw.ko"
	strip --strip-debug -o "$SIWDIR/siw_crc.ko" "$SRC/siw_crc/siw.ko"
	rm -rf "$SRC"
fi
mkdir -p "$MODDIR/extra"
cp "$SIWDIR/siw.ko" "$MODDIR/extra/siw.ko"
depmod -b "$KROOT" "$KVER"

# ---------------------------------------------------------------- modules
# In insmod order. rdma_rxe needs the crypto "crc32" and siw "crc32c" that modules.dep
# does not list (crypto_alloc_shash by name). rdma_ucm (/dev/infiniband/rdma_cm,
# librdmacm's kernel interface) pulls in rdma_cm, ib_cm and iw_cm; ib_cm answers CM MADs
# on QP 1 once rxe0 exists, iw_cm drives siw0's connections.
WANT_MODS="virtio_pci virtio_net crc32_generic crc32-pclmul crc32c_generic crc32c-intel
           ib_core ib_uverbs ib_cm iw_cm rdma_cm rdma_ucm udp_tunnel ip6_udp_tunnel rdma_rxe
           siw"
ROOT="$CACHE/initramfs-root"
rm -rf "$ROOT"
mkdir -p "$ROOT"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc/libibverbs.d,etc/urnic,proc,sys,dev}
mkdir -p "$ROOT"/{tmp,run,root,var/tmp}
ln -s usr/bin "$ROOT/bin"
ln -s usr/sbin "$ROOT/sbin"
ln -s usr/lib "$ROOT/lib"
ln -s usr/lib64 "$ROOT/lib64"
: >"$ROOT/etc/urnic/modules.list"
for m in $WANT_MODS; do
	modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" | awk '$1=="insmod"{print $2}'
done | awk '!seen[$0]++' | while read -r ko; do
	rel="${ko#"$KROOT"/}"
	mkdir -p "$ROOT/$(dirname "$rel")"
	cp "$ko" "$ROOT/$rel"
	echo "/$rel" >>"$ROOT/etc/urnic/modules.list"
done
for m in rdma_rxe ib_cm rdma_cm rdma_ucm siw crc32c_generic; do
	grep -q "/$m.ko" "$ROOT/etc/urnic/modules.list" || die "no $m module in $KPKG"
done
cp "$SIWDIR/siw_crc.ko" "$ROOT/lib/modules/$KVER/extra/siw_crc.ko"

# ---------------------------------------------------------------- userspace
cp /bin/busybox "$ROOT/usr/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$ROOT/usr/bin/$a" ] || ln -s busybox "$ROOT/usr/bin/$a"
done
BINS="/usr/bin/rdma /usr/bin/ibv_devices /usr/bin/ibv_devinfo /usr/bin/ibv_rc_pingpong
      /usr/bin/ibv_uc_pingpong /usr/bin/ibv_ud_pingpong /usr/bin/ibv_srq_pingpong
      /usr/bin/ib_write_bw /usr/bin/ib_write_lat /usr/bin/ib_read_bw /usr/bin/ib_read_lat
      /usr/bin/ib_send_bw /usr/bin/ib_send_lat /usr/bin/ib_atomic_bw /usr/bin/ib_atomic_lat
      /usr/bin/rping /usr/bin/ucmatose /usr/bin/udaddy /usr/bin/rstream
      /usr/bin/riostream"
PROVIDERS="$ARCH_LIB/libibverbs/librxe-rdmav34.so $ARCH_LIB/libibverbs/libsiw-rdmav34.so"
for f in $BINS; do
	[ -x "$f" ] || die "missing binary $f"
	rm -f "$ROOT$f" # a busybox applet of the same name
	cp -L "$f" "$ROOT$f"
done
mkdir -p "$ROOT$ARCH_LIB/libibverbs"
for f in $PROVIDERS; do cp -L "$f" "$ROOT$f"; done
cp /etc/libibverbs.d/rxe.driver /etc/libibverbs.d/siw.driver "$ROOT/etc/libibverbs.d/"
# every shared library of the ELF files above (ldd lists them all: Debian's
# librdmacm.so.1 comes with rdmacm-utils' tools)
for f in $BINS $PROVIDERS; do
	ldd "$f" | awk '/=>/ && $3 ~ /^\//{print $3} /^\t\/.*ld-linux/{print $1}'
done | sort -u | while read -r lib; do
	[ -e "$ROOT$lib" ] && continue
	mkdir -p "$ROOT$(dirname "$lib")"
	cp -L "$lib" "$ROOT$lib"
done
# glibc dlopen()s libgcc_s for pthread_cancel (perftest)
cp -L "$ARCH_LIB/libgcc_s.so.1" "$ROOT$ARCH_LIB/"
echo "root:x:0:0:root:/root:/bin/sh" >"$ROOT/etc/passwd"
echo "root:x:0:" >"$ROOT/etc/group"
printf '127.0.0.1 localhost\n' >"$ROOT/etc/hosts"
echo "$KVER" >"$ROOT/etc/urnic/kver"
{
	echo "kernel_package=$KPKG $KPKG_VER"
	echo "siw=out-of-tree build of drivers/infiniband/sw/siw from linux-source $KPKG_VER" \
		"(siw.ko; siw_crc.ko: mpa_crc_required = true)"
	for p in ibverbs-utils ibverbs-providers perftest rdmacm-utils librdmacm1 iproute2 \
		busybox-static; do
		echo "$p=$(dpkg-query -W -f='${Version}' "$p")"
	done
} >"$OUT/versions.txt"
cp "$OUT/versions.txt" "$ROOT/etc/urnic/versions.txt"

# ---------------------------------------------------------------- pack
(cd "$ROOT" && find . -print0 | sort -z | cpio --null -o -H newc --quiet -R 0:0) |
	gzip -1 >"$OUT/initrd.img.tmp"
mv "$OUT/initrd.img.tmp" "$OUT/initrd.img"
cp "$KROOT/boot/vmlinuz-$KVER" "$OUT/vmlinuz"
echo "$KVER" >"$OUT/kver"
echo "$want" >"$OUT/stamp"
rm -rf "$ROOT" "$KROOT" # 400 MB; the package stays in debs/ for a rebuild
log "done: $OUT/vmlinuz $OUT/initrd.img ($(du -h "$OUT/initrd.img" | cut -f1))"
cat "$OUT/versions.txt" >&2
