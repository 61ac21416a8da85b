#!/bin/sh
# isolated.sh DEMO [ARG...] - runs urnic-demo where no other process can hold its
# addresses: in a private network namespace with its own loopback, on the default
# 127.0.0.2 (server) and 127.0.0.3 (client); where no namespace can be made (neither
# root nor unprivileged user namespaces, or no `ip` to bring lo up), on the host's
# loopback with addresses no other test uses, 127.0.2.2 and 127.0.2.3.
# Exits with the demo's status.
demo=$1
shift
if command -v ip >/dev/null 2>&1; then
	for ns in "unshare -n" "unshare -rn"; do
		if $ns ip link set lo up 2>/dev/null; then
			exec $ns sh -c 'ip link set lo up && exec "$@"' sh "$demo" "$@"
		fi
	done
fi
exec "$demo" "$@" -a 127.0.2.2,127.0.2.3
