# asan_env.sh - sourced by the tools' tests that run Debian's binaries over the
# drop-in: in the sanitizer build (SANITIZE=ON) those unsanitized binaries need the ASan
# runtime first. Sets san, a list of words for env(1), empty otherwise.
san=""
if [ "${SANITIZE:-OFF}" = ON ]; then
	asan=$(gcc -print-file-name=libasan.so)
	san="LD_PRELOAD=$(readlink -f "$asan") ASAN_OPTIONS=detect_leaks=0"
fi
