#!/bin/sh
# SPDX-License-Identifier: MIT
# gen-verbs-abi.sh - regenerate the exported ABI of the drop-in verbs libraries.
#
# Reads `objdump -T` / `objdump -p` of the system libibverbs.so.1, libmlx5.so.1 and libefa.so.1
# and writes, for each, a GNU ld version script with every default-version node (same names,
# same parent chain) and symbol, and a C file with one stub per exported function:
#
#   src/verbs/libibverbs.map           src/verbs/abi_stubs.c        (weak: real code overrides)
#   src/verbs/stubprov/libmlx5.map     src/verbs/stubprov/mlx5_stubs.c  (the whole library)
#   src/verbs/stubprov/libefa.map      src/verbs/stubprov/efa_stubs.c   (the whole library)
#
# Prototypes come from the installed headers (run through "$CC -E"), so the compiler checks
# every stub against the header. Symbols no installed header declares (rdma-core's private
# driver ABI, marshall.h, sysfs helpers) take their prototype from the table in policy() below,
# copied from rdma-core v44 libibverbs/driver.h, cmd_ioctl.h and marshall.h.
# Every node and symbol must exist: Debian's binaries are linked with BIND_NOW and name
# their symbol versions in non-weak verneed entries, so one missing one fails the load.
#
# The generated files are checked in; run this after a distro upgrade of rdma-core.
# POSIX sh + awk only (CI machines may not have python).
#
# Usage: tools/gen-verbs-abi.sh [--check]
#   --check   regenerate into a temporary directory and fail if the checked-in files differ.
# Environment: LIBDIR (default /usr/lib/x86_64-linux-gnu), CC (default cc), OBJDUMP (objdump).

set -eu
LC_ALL=C
export LC_ALL

LIBDIR=${LIBDIR:-/usr/lib/x86_64-linux-gnu}
CC=${CC:-cc}
OBJDUMP=${OBJDUMP:-objdump}
SELF=tools/gen-verbs-abi.sh

top=$(cd "$(dirname "$0")/.." && pwd)
check=0
case ${1:-} in
--check) check=1 ;;
"") ;;
*) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gen-verbs-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# Return conventions and fallback prototypes.
#
#   symbol|convention[|return type|parameters]
#
# convention: what a stub returns besides setting errno = EOPNOTSUPP.
#   pos   EOPNOTSUPP            (rdma-core "returns 0 or the value of errno"; default for int)
#   m1    -1                    ("returns -1 and sets errno"; also fd / length returns)
#   neg   -EOPNOTSUPP           (negative errno)
#   zero  0                     (default for unsigned and other integer types)
#   =EXPR EXPR
# Pointers return NULL, bool returns false and void returns nothing without an entry here.
# ssize_t and enum returns have no default: they must be listed.
# Return type and parameters are only used when no installed header declares the symbol.
policy() {
	cat <<'EOF'
# libibverbs, public header: conventions checked against rdma-core v44 sources and man pages.
ibv_query_gid|m1
ibv_query_pkey|m1
ibv_get_pkey_index|m1
ibv_get_cq_event|m1
ibv_get_async_event|m1
ibv_init_ah_from_wc|m1
ibv_rereg_mr|m1
ibv_get_device_index|m1
ibv_rate_to_mult|m1
ibv_rate_to_mbps|m1
ibv_resolve_eth_l2_from_gid|neg
_ibv_query_gid_table|neg
ibv_query_qp_data_in_order|zero
mult_to_ibv_rate|=IBV_RATE_MAX
mbps_to_ibv_rate|=IBV_RATE_MAX
ibv_is_fork_initialized|=IBV_FORK_UNNEEDED
# libibverbs, not in an installed header (rdma-core v44 driver.h, marshall.h, sysfs.h).
ibv_dontfork_range|m1|int|void *base, size_t size
ibv_dofork_range|m1|int|void *base, size_t size
ibv_get_sysfs_path||const char *|void
ibv_read_sysfs_file|m1|int|const char *dir, const char *file, char *buf, size_t size
ibv_copy_ah_attr_from_kern||void|struct ibv_ah_attr *dst, struct ib_uverbs_ah_attr *src
ibv_copy_qp_attr_from_kern||void|struct ibv_qp_attr *dst, struct ib_uverbs_qp_attr *src
ibv_copy_path_rec_from_kern||void|struct ibv_sa_path_rec *dst, struct ib_user_path_rec *src
ibv_copy_path_rec_to_kern||void|struct ib_user_path_rec *dst, struct ibv_sa_path_rec *src
# IBVERBS_PRIVATE_34 (driver ABI): ibv_cmd_* and execute_ioctl return a positive errno.
__ioctl_final_num_attrs|zero|unsigned int|unsigned int num_attrs, struct ibv_command_buffer *link
__verbs_log||void|struct verbs_context *ctx, uint32_t level, const char *fmt, ...
_verbs_init_and_alloc_context||void *|struct ibv_device *device, int cmd_fd, size_t alloc_size, struct verbs_context *context_offset, uint32_t driver_id
execute_ioctl|pos|int|struct ibv_context *context, struct ibv_command_buffer *cmd
ibv_cmd_advise_mr|pos|int|struct ibv_pd *pd, enum ibv_advise_mr_advice advice, uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge
ibv_cmd_alloc_dm|pos|int|struct ibv_context *ctx, const struct ibv_alloc_dm_attr *dm_attr, struct verbs_dm *dm, struct ibv_command_buffer *link
ibv_cmd_alloc_mw|pos|int|struct ibv_pd *pd, enum ibv_mw_type type, struct ibv_mw *mw, struct ibv_alloc_mw *cmd, size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size
ibv_cmd_alloc_pd|pos|int|struct ibv_context *context, struct ibv_pd *pd, struct ibv_alloc_pd *cmd, size_t cmd_size, struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size
ibv_cmd_attach_mcast|pos|int|struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid
ibv_cmd_close_xrcd|pos|int|struct verbs_xrcd *xrcd
ibv_cmd_create_ah|pos|int|struct ibv_pd *pd, struct ibv_ah *ah, struct ibv_ah_attr *attr, struct ib_uverbs_create_ah_resp *resp, size_t resp_size
ibv_cmd_create_counters|pos|int|struct ibv_context *context, struct ibv_counters_init_attr *init_attr, struct verbs_counters *vcounters, struct ibv_command_buffer *link
ibv_cmd_create_cq|pos|int|struct ibv_context *context, int cqe, struct ibv_comp_channel *channel, int comp_vector, struct ibv_cq *cq, struct ibv_create_cq *cmd, size_t cmd_size, struct ib_uverbs_create_cq_resp *resp, size_t resp_size
ibv_cmd_create_cq_ex|pos|int|struct ibv_context *context, const struct ibv_cq_init_attr_ex *cq_attr, struct verbs_cq *cq, struct ibv_create_cq_ex *cmd, size_t cmd_size, struct ib_uverbs_ex_create_cq_resp *resp, size_t resp_size, uint32_t cmd_flags
ibv_cmd_create_flow|pos|int|struct ibv_qp *qp, struct ibv_flow *flow_id, struct ibv_flow_attr *flow_attr, void *ucmd, size_t ucmd_size
ibv_cmd_create_flow_action_esp|pos|int|struct ibv_context *ctx, struct ibv_flow_action_esp_attr *attr, struct verbs_flow_action *flow_action, struct ibv_command_buffer *driver
ibv_cmd_create_qp|pos|int|struct ibv_pd *pd, struct ibv_qp *qp, struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd, size_t cmd_size, struct ib_uverbs_create_qp_resp *resp, size_t resp_size
ibv_cmd_create_qp_ex|pos|int|struct ibv_context *context, struct verbs_qp *qp, struct ibv_qp_init_attr_ex *attr_ex, struct ibv_create_qp *cmd, size_t cmd_size, struct ib_uverbs_create_qp_resp *resp, size_t resp_size
ibv_cmd_create_qp_ex2|pos|int|struct ibv_context *context, struct verbs_qp *qp, struct ibv_qp_init_attr_ex *qp_attr, struct ibv_create_qp_ex *cmd, size_t cmd_size, struct ib_uverbs_ex_create_qp_resp *resp, size_t resp_size
ibv_cmd_create_rwq_ind_table|pos|int|struct ibv_context *context, struct ibv_rwq_ind_table_init_attr *init_attr, struct ibv_rwq_ind_table *rwq_ind_table, struct ib_uverbs_ex_create_rwq_ind_table_resp *resp, size_t resp_size
ibv_cmd_create_srq|pos|int|struct ibv_pd *pd, struct ibv_srq *srq, struct ibv_srq_init_attr *attr, struct ibv_create_srq *cmd, size_t cmd_size, struct ib_uverbs_create_srq_resp *resp, size_t resp_size
ibv_cmd_create_srq_ex|pos|int|struct ibv_context *context, struct verbs_srq *srq, struct ibv_srq_init_attr_ex *attr_ex, struct ibv_create_xsrq *cmd, size_t cmd_size, struct ib_uverbs_create_srq_resp *resp, size_t resp_size
ibv_cmd_create_wq|pos|int|struct ibv_context *context, struct ibv_wq_init_attr *wq_init_attr, struct ibv_wq *wq, struct ibv_create_wq *cmd, size_t cmd_size, struct ib_uverbs_ex_create_wq_resp *resp, size_t resp_size
ibv_cmd_dealloc_mw|pos|int|struct ibv_mw *mw
ibv_cmd_dealloc_pd|pos|int|struct ibv_pd *pd
ibv_cmd_dereg_mr|pos|int|struct verbs_mr *vmr
ibv_cmd_destroy_ah|pos|int|struct ibv_ah *ah
ibv_cmd_destroy_counters|pos|int|struct verbs_counters *vcounters
ibv_cmd_destroy_cq|pos|int|struct ibv_cq *cq
ibv_cmd_destroy_flow|pos|int|struct ibv_flow *flow_id
ibv_cmd_destroy_flow_action|pos|int|struct verbs_flow_action *action
ibv_cmd_destroy_qp|pos|int|struct ibv_qp *qp
ibv_cmd_destroy_rwq_ind_table|pos|int|struct ibv_rwq_ind_table *rwq_ind_table
ibv_cmd_destroy_srq|pos|int|struct ibv_srq *srq
ibv_cmd_destroy_wq|pos|int|struct ibv_wq *wq
ibv_cmd_detach_mcast|pos|int|struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid
ibv_cmd_free_dm|pos|int|struct verbs_dm *dm
ibv_cmd_get_context|pos|int|struct verbs_context *context, struct ibv_get_context *cmd, size_t cmd_size, struct ib_uverbs_get_context_resp *resp, size_t resp_size
ibv_cmd_modify_cq|pos|int|struct ibv_cq *cq, struct ibv_modify_cq_attr *attr, struct ibv_modify_cq *cmd, size_t cmd_size
ibv_cmd_modify_flow_action_esp|pos|int|struct verbs_flow_action *flow_action, struct ibv_flow_action_esp_attr *attr, struct ibv_command_buffer *driver
ibv_cmd_modify_qp|pos|int|struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, struct ibv_modify_qp *cmd, size_t cmd_size
ibv_cmd_modify_qp_ex|pos|int|struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask, struct ibv_modify_qp_ex *cmd, size_t cmd_size, struct ib_uverbs_ex_modify_qp_resp *resp, size_t resp_size
ibv_cmd_modify_srq|pos|int|struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask, struct ibv_modify_srq *cmd, size_t cmd_size
ibv_cmd_modify_wq|pos|int|struct ibv_wq *wq, struct ibv_wq_attr *attr, struct ibv_modify_wq *cmd, size_t cmd_size
ibv_cmd_open_qp|pos|int|struct ibv_context *context, struct verbs_qp *qp, int vqp_sz, struct ibv_qp_open_attr *attr, struct ibv_open_qp *cmd, size_t cmd_size, struct ib_uverbs_create_qp_resp *resp, size_t resp_size
ibv_cmd_open_xrcd|pos|int|struct ibv_context *context, struct verbs_xrcd *xrcd, int vxrcd_size, struct ibv_xrcd_init_attr *attr, struct ibv_open_xrcd *cmd, size_t cmd_size, struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size
ibv_cmd_poll_cq|m1|int|struct ibv_cq *cq, int ne, struct ibv_wc *wc
ibv_cmd_post_recv|pos|int|struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr
ibv_cmd_post_send|pos|int|struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad_wr
ibv_cmd_post_srq_recv|pos|int|struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad_wr
ibv_cmd_query_context|pos|int|struct ibv_context *ctx, struct ibv_command_buffer *driver
ibv_cmd_query_device_any|pos|int|struct ibv_context *context, const struct ibv_query_device_ex_input *input, struct ibv_device_attr_ex *attr, size_t attr_size, struct ib_uverbs_ex_query_device_resp *resp, size_t *resp_size
ibv_cmd_query_mr|pos|int|struct ibv_pd *pd, struct verbs_mr *vmr, uint32_t mr_handle
ibv_cmd_query_port|pos|int|struct ibv_context *context, uint8_t port_num, struct ibv_port_attr *port_attr, struct ibv_query_port *cmd, size_t cmd_size
ibv_cmd_query_qp|pos|int|struct ibv_qp *qp, struct ibv_qp_attr *qp_attr, int attr_mask, struct ibv_qp_init_attr *qp_init_attr, struct ibv_query_qp *cmd, size_t cmd_size
ibv_cmd_query_srq|pos|int|struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, struct ibv_query_srq *cmd, size_t cmd_size
ibv_cmd_read_counters|pos|int|struct verbs_counters *vcounters, uint64_t *counters_value, uint32_t ncounters, uint32_t flags, struct ibv_command_buffer *link
ibv_cmd_reg_dm_mr|pos|int|struct ibv_pd *pd, struct verbs_dm *dm, uint64_t offset, size_t length, unsigned int access, struct verbs_mr *vmr, struct ibv_command_buffer *link
ibv_cmd_reg_dmabuf_mr|pos|int|struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access, struct verbs_mr *vmr
ibv_cmd_reg_mr|pos|int|struct ibv_pd *pd, void *addr, size_t length, uint64_t hca_va, int access, struct verbs_mr *vmr, struct ibv_reg_mr *cmd, size_t cmd_size, struct ib_uverbs_reg_mr_resp *resp, size_t resp_size
ibv_cmd_req_notify_cq|pos|int|struct ibv_cq *cq, int solicited_only
ibv_cmd_rereg_mr|pos|int|struct verbs_mr *vmr, uint32_t flags, void *addr, size_t length, uint64_t hca_va, int access, struct ibv_pd *pd, struct ibv_rereg_mr *cmd, size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp, size_t resp_sz
ibv_cmd_resize_cq|pos|int|struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd, size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp, size_t resp_size
ibv_query_gid_type|m1|int|struct ibv_context *context, uint8_t port_num, unsigned int index, int *type
ibv_read_ibdev_sysfs_file|m1|int|char *buf, size_t size, struct verbs_sysfs_dev *sysfs_dev, const char *fnfmt, ...
verbs_init_cq||void|struct ibv_cq *cq, struct ibv_context *context, struct ibv_comp_channel *channel, void *cq_context
verbs_open_device||struct ibv_context *|struct ibv_device *device, void *private_data
verbs_register_driver_34||void|const struct verbs_device_ops *ops
verbs_set_ops||void|struct verbs_context *vctx, const struct verbs_context_ops *ops
verbs_uninit_context||void|struct verbs_context *context
verbs_allow_disassociate_destroy||bool|
# libmlx5 (mlx5dv.h): everything int returns a positive errno except these.
mlx5dv_devx_get_event|m1
mlx5dv_vfio_get_events_fd|m1
EOF
}

# default_symbols LIB: "kind version name size" for every defined default-version symbol,
# kind F (function) or O (object). Hidden (compat) versions are printed as "(NODE)" and skipped.
default_symbols() {
	"$OBJDUMP" -T "$1" | awk -F '\t' '
	NF == 2 {
		n = split($1, a, " ")
		sect = a[n]
		flags = ""
		for (i = 2; i < n; i++)
			flags = flags a[i]
		m = split($2, b, " ")
		if (m != 3 || sect == "*UND*" || sect == "*ABS*")
			next
		if (b[2] ~ /^\(/ || b[2] == "Base")
			next
		kind = flags ~ /F/ ? "F" : (flags ~ /O/ ? "O" : "")
		if (kind == "")
			next
		print kind, b[2], b[3], b[1]
	}' | sort -k2,2 -k3,3 | uniq
}

# version_nodes LIB: "node parent" (parent "-" when none) in definition order, base excluded.
version_nodes() {
	"$OBJDUMP" -p "$1" | awk '
	/^Version definitions:/ { on = 1; next }
	on && /^$/ { on = 0 }
	!on { next }
	/^[0-9]/ {
		if ($2 == "0x01")	# VER_FLG_BASE: the file name itself
			next
		if (cur != "")
			print cur, parent
		cur = $4; parent = "-"
		next
	}
	/^[ \t]/ && cur != "" && parent == "-" { parent = $1 }
	END { if (cur != "") print cur, parent }'
}

# prototypes FILE.i: "name<TAB>return type<TAB>parameters" for every file-scope function
# declaration of the preprocessed header FILE.i, then "struct<TAB>tag" for every struct tag it
# names. Bodies of inline functions and structs are skipped; __attribute__ groups are dropped
# from the return type.
prototypes() {
	awk '
	function skipgroup(s, i,   d, c) {
		d = 0
		for (; i <= length(s); i++) {
			c = substr(s, i, 1)
			if (c == "(")
				d++
			else if (c == ")" && --d == 0)
				return i
		}
		return i
	}
	function stripattr(s,   i, j, out) {
		out = ""
		while ((i = index(s, "__attribute__")) > 0) {
			j = skipgroup(s, i)
			out = out substr(s, 1, i - 1)
			s = substr(s, j + 1)
		}
		s = out s
		gsub(/ +/, " ", s)
		sub(/^ /, "", s)
		sub(/ $/, "", s)
		return s
	}
	function decl(s,   i, j, c, pre, name, ret) {
		gsub(/[ \t]+/, " ", s)
		sub(/^ /, "", s)
		for (i = 1; i <= length(s); i++) {
			if (substr(s, i, 1) != "(")
				continue
			pre = substr(s, 1, i - 1)
			sub(/ $/, "", pre)
			if (pre ~ /(__attribute__|__asm__|__typeof__|\()$/) {
				i = skipgroup(s, i)
				continue
			}
			if (!match(pre, /[A-Za-z_][A-Za-z_0-9]*$/))
				return
			name = substr(pre, RSTART)
			ret = stripattr(substr(pre, 1, RSTART - 1))
			sub(/^extern /, "", ret)
			if (ret == "" || ret ~ /^(typedef|static) /)
				return
			j = skipgroup(s, i)
			print name "\t" ret "\t" substr(s, i + 1, j - i - 1)
			return
		}
	}
	{
		buf = buf " " $0
		t = $0
		while (match(t, /struct [A-Za-z_][A-Za-z_0-9]*/)) {
			tag[substr(t, RSTART + 7, RLENGTH - 7)] = 1
			t = substr(t, RSTART + RLENGTH)
		}
	}
	END {
		for (t in tag)
			print "struct\t" t
		depth = 0
		stmt = ""
		for (k = 1; k <= length(buf); k++) {
			c = substr(buf, k, 1)
			if (c == "{") {
				if (depth++ == 0) {
					pre = stmt
					sub(/ +$/, "", pre)
					isfn = pre ~ /\)$/
				}
				continue
			}
			if (c == "}") {
				if (--depth == 0 && isfn)
					stmt = ""
				continue
			}
			if (depth > 0)
				continue
			if (c == ";") {
				decl(stmt)
				stmt = ""
				continue
			}
			stmt = stmt c
		}
	}' "$1"
}

# write_map SYMS NODES OUT DESC
write_map() {
	awk -v desc="$4" -v self="$SELF" '
	FILENAME == ARGV[1] { syms[$2] = syms[$2] " " $3; next }
	{ node[++n] = $1; parent[n] = $2 }
	END {
		printf "/* SPDX-License-Identifier: MIT */\n"
		printf "/*\n * GENERATED by %s from %s.\n", self, desc
		printf " * Do not edit: rerun the script (it also writes the matching stubs).\n *\n"
		printf " * GNU ld version script: every default-version node and symbol of the system\n"
		printf " * library, with the same parent chain.\n */\n"
		for (i = 1; i <= n; i++) {
			v = node[i]
			printf "\n%s {\n", v
			c = split(syms[v], s, " ")
			if (c > 0)
				printf "\tglobal:\n"
			for (j = 1; j <= c; j++)
				printf "\t\t%s;\n", s[j]
			if (i == 1)
				printf "\tlocal:\n\t\t*;\n"
			printf "}%s;\n", parent[i] == "-" ? "" : " " parent[i]
		}
	}' "$1" "$2" > "$3"
}

# write_stubs SYMS NODES PROTOS OUT DESC HEADER WEAK
write_stubs() {
	policy > "$tmp/policy"
	awk -v desc="$5" -v header="$6" -v weak="$7" -v self="$SELF" -v out="$4" '
	function fail(msg) {
		print "gen-verbs-abi: " msg > "/dev/stderr"
		err = 1
	}
	# width(s): columns of s, tabs counted as 8 (only leading tabs occur).
	function width(s) {
		return length(s) + 7 * gsub(/\t/, "\t", s)
	}
	# decl(head, params, tail): "head(params)tail", broken after commas so that no line
	# is longer than 100 columns; continuation lines are indented by one tab.
	function decl(head, params, tail,   line, n, i, a, w) {
		n = split(params, a, ", ")
		if (n == 0) {
			printf "%s()%s\n", head, tail
			return
		}
		line = head "("
		for (i = 1; i <= n; i++) {
			w = a[i] (i < n ? "," : ")" tail)
			if (line ~ /\($/ && width(line w) > 100) {
				printf "%s\n", line
				line = "\t" w
			} else if (line !~ /\($/ && width(line " " w) > 100) {
				printf "%s\n", line
				line = "\t" w
			} else {
				line = line (line ~ /\($/ ? "" : " ") w
			}
		}
		printf "%s\n", line
	}
	function retexpr(name, ret,   c) {
		c = conv[name]
		if (c ~ /^=/)
			return substr(c, 2)
		if (c == "pos")
			return "EOPNOTSUPP"
		if (c == "m1")
			return "-1"
		if (c == "neg")
			return "-EOPNOTSUPP"
		if (c == "zero")
			return "0"
		if (c != "")
			fail(name ": unknown convention " c)
		if (ret ~ /\*$/)
			return "NULL"
		if (ret == "void")
			return ""
		if (ret == "_Bool" || ret == "bool")
			return "false"
		if (ret == "int")
			return "EOPNOTSUPP"
		if (ret ~ /^(unsigned|signed|long|short|char|u?int[0-9]+_t|__be[0-9]+|__u[0-9]+|size_t|uintptr_t)( |$)/)
			return "0"
		fail(name ": no failure value for return type \"" ret "\"; add it to policy()")
		return "0"
	}
	FILENAME == ARGV[1] {
		if ($0 ~ /^#/ || $0 == "")
			next
		split($0, f, "|")
		conv[f[1]] = f[2]
		if (f[3] != "") {
			fret[f[1]] = f[3]
			fpar[f[1]] = f[4]
		}
		next
	}
	FILENAME == ARGV[2] {
		split($0, f, "\t")
		if (f[1] == "struct") {
			known["struct " f[2]] = 1
			next
		}
		if (!(f[1] in hret)) {
			hret[f[1]] = f[2]
			hpar[f[1]] = f[3]
		}
		next
	}
	FILENAME == ARGV[3] { order[++nn] = $1; next }
	{ kind[$3] = $1; ver[$3] = $2; cnt[$2]++; list[$2, cnt[$2]] = $3 }
	END {
		pfx = weak ? "URNIC_STUB_WEAK " : "URNIC_STUB "
		printf "/* SPDX-License-Identifier: MIT */\n"
		printf "/*\n * GENERATED by %s from %s\n * and <%s>.\n", self, desc, header
		printf " * Do not edit: rerun the script (it also writes the matching version script).\n *\n"
		if (weak) {
			printf " * A weak definition of every default-version export, so that the library loads\n"
			printf " * under BIND_NOW binaries; the real implementations in the other files of the\n"
			printf " * library are strong definitions and win at link time (link them as objects,\n"
			printf " * not from a static archive, or the archive members are never pulled in).\n"
		} else {
			printf " * A stub for every default-version export: the whole library. No device is\n"
			printf " * ever of this vendor, so everything fails. It must not link libibverbs.\n"
		}
		printf " * Each stub sets errno = EOPNOTSUPP and returns its convention'"'"'s failure:\n"
		printf " * NULL, -1, a positive or negative errno, false or nothing (see policy() in the\n"
		printf " * script). URNIC_STUB_TRACE=1 in the environment logs each call to stderr.\n */\n"
		printf "/* clang-format off */\n"
		printf "#include <errno.h>\n#include <stdbool.h>\n#include <stddef.h>\n#include <stdint.h>\n"
		printf "#include <stdio.h>\n#include <stdlib.h>\n#include <sys/types.h>\n\n"
		printf "#include <%s>\n\n", header
		printf "#include \"%sexport.h\"\n\n", weak ? "" : "../"
		printf "#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n\n"
		printf "#define %s URNIC_EXPORT%s\n\n", weak ? "URNIC_STUB_WEAK" : "URNIC_STUB", weak ? " __attribute__((weak))" : ""

		# Prototypes for what no installed header declares; their struct types stay incomplete.
		for (i = 1; i <= nn; i++)
			for (j = 1; j <= cnt[order[i]]; j++) {
				s = list[order[i], j]
				if (!(s in hret) && (s in fret)) {
					t = fret[s] " " fpar[s]
					while (match(t, /struct [A-Za-z_0-9]+/)) {
						sn = substr(t, RSTART, RLENGTH)
						if (!(sn in fwd) && !(sn in known)) {
							fwd[sn] = 1
							fwdl[++nf] = sn
						}
						t = substr(t, RSTART + RLENGTH)
					}
				}
			}
		if (nf > 0) {
			printf "/* Private rdma-core types, only used through pointers. */\n"
			for (i = 1; i <= nf; i++)
				printf "%s;\n", fwdl[i]
			printf "\n"
		}
		for (i = 1; i <= nn; i++)
			for (j = 1; j <= cnt[order[i]]; j++) {
				s = list[order[i], j]
				if (!(s in hret) && (s in fret)) {
					if (!hdr++)
						printf "/* Not in an installed header: rdma-core v44 prototypes. */\n"
					if (kind[s] == "O")
						printf "extern %s %s;\n", fret[s], s
					else
						decl(fret[s] (fret[s] ~ /\*$/ ? "" : " ") s, fpar[s], ";")
				}
			}
		if (hdr)
			printf "\n"

		printf "/* Context: any thread. Called first by every stub. */\n"
		printf "static void stub_hit(const char *fn)\n{\n"
		printf "\tconst char *trace = secure_getenv(\"URNIC_STUB_TRACE\");\n\n"
		printf "\tif (trace && *trace == '"'"'1'"'"')\n"
		printf "\t\tfprintf(stderr, \"urnic: %%s() is not implemented\\n\", fn);\n"
		printf "\terrno = EOPNOTSUPP;\n}\n"

		for (i = 1; i <= nn; i++) {
			v = order[i]
			if (cnt[v] > 0)
				printf "\n/* %s */\n", v
			for (j = 1; j <= cnt[v]; j++) {
				s = list[v, j]
				if (s in hret) {
					ret = hret[s]
					par = hpar[s]
				} else if (s in fret) {
					ret = fret[s]
					par = fpar[s]
				} else {
					fail(s ": not declared by <" header ">; add its prototype to policy()")
					continue
				}
				if (kind[s] == "O") {
					printf "%s%s %s;\n", pfx, ret, s
					continue
				}
				r = retexpr(s, ret)
				printf "\n"
				decl(pfx ret (ret ~ /\*$/ ? "" : " ") "(" s ")", par, "")
				printf "{\n\tstub_hit(__func__);\n"
				if (r != "")
					printf "\treturn %s;\n", r
				printf "}\n"
			}
		}
		printf "\n/* clang-format on */\n"
		exit err
	}' "$tmp/policy" "$3" "$2" "$1" > "$4"
}

# gen LIBFILE HEADER MAP STUBS WEAK
gen() {
	lib=$LIBDIR/$1
	[ -r "$lib" ] || { echo "gen-verbs-abi: $lib not found" >&2; exit 1; }
	real=$(basename "$(readlink -f "$lib")")
	desc="$real (objdump -T)"
	base=$tmp/$1
	default_symbols "$lib" > "$base.syms"
	version_nodes "$lib" > "$base.nodes"
	printf '#include <%s>\n' "$2" | "$CC" -E -P -x c - > "$base.i"
	prototypes "$base.i" > "$base.protos"
	out=$tmp/out
	mkdir -p "$out/$(dirname "$3")" "$out/$(dirname "$4")"
	write_map "$base.syms" "$base.nodes" "$out/$3" "$desc"
	write_stubs "$base.syms" "$base.nodes" "$base.protos" "$out/$4" "$desc" "$2" "$5"
	nf=$(awk '$1 == "F"' "$base.syms" | wc -l)
	no=$(awk '$1 == "O"' "$base.syms" | wc -l)
	nn=$(wc -l < "$base.nodes")
	echo "$1: $nn nodes, $nf functions, $no objects -> $3, $4" >&2
	for f in "$3" "$4"; do
		if [ $check = 1 ]; then
			cmp -s "$out/$f" "$top/$f" || { echo "gen-verbs-abi: $f is out of date" >&2; drift=1; }
		else
			mkdir -p "$top/$(dirname "$f")"
			cp "$out/$f" "$top/$f"
		fi
	done
}

drift=0
gen libibverbs.so.1 infiniband/verbs.h src/verbs/libibverbs.map src/verbs/abi_stubs.c 1
gen libmlx5.so.1 infiniband/mlx5dv.h src/verbs/stubprov/libmlx5.map src/verbs/stubprov/mlx5_stubs.c 0
gen libefa.so.1 infiniband/efadv.h src/verbs/stubprov/libefa.map src/verbs/stubprov/efa_stubs.c 0
exit $drift
