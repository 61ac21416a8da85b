# SPDX-License-Identifier: MIT
# pp_tool.sh - sourced after common.sh: run pp_pair/pp_run with another of Debian's
# pingpong examples than ibv_rc_pingpong.
#
# pp_pair (common.sh) starts `ibv_rc_pingpong`. ibv_uc_pingpong, ibv_ud_pingpong and
# ibv_srq_pingpong take the same options (-g, -p, -s, -n, -c ...), print the same
# "bytes in ... seconds" lines and exit the same way, so the same harness serves them:
# pp_tool TOOL puts a link named ibv_rc_pingpong to TOOL first in PATH, and resets
# pp_pair's probe of -c (--chk). Call it after sys_setup, before pp_pair.

PP_TOOL_PATH0=$PATH

pp_tool() {
	_bin=$(command -v "$1") || fail "$1 not found (ibverbs-utils)"
	mkdir -p "$SYS_WORK/tool/$1" || fail "mkdir $SYS_WORK/tool/$1"
	ln -sf "$_bin" "$SYS_WORK/tool/$1/ibv_rc_pingpong" || fail "ln $_bin"
	PATH=$SYS_WORK/tool/$1:$PP_TOOL_PATH0
	export PATH
	# shellcheck disable=SC2034 # read by pp_chk_probe in common.sh
	PP_CHK=unknown
}
