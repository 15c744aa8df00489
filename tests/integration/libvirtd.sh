# A private libvirtd for the scale-out tests (sourced): a session-mode daemon
# run as user nobody, with its own configuration, sockets and runtime dirs in
# one private dir, listening on 127.0.0.1 over TCP with no authentication.
# It is a real remote endpoint (the remote driver, streams, a storage driver)
# on this machine, in the test only.
#
#   it_libvirtd_start   starts it; exports IT_LIBVIRTD_URI (qemu+tcp://127.0.0.1:PORT/session),
#                       IT_LIBVIRTD_POOL (a dir nobody owns, for pool=), IT_LIBVIRTD_DIR, IT_LIBVIRTD_PID
#   it_libvirtd_kill    SIGKILL, as a host dying would (its QEMUs are left running, as they would be)
#   it_libvirtd_stop    stops it, kills any QEMU it started and removes the dir; safe to call twice
#
# it_libvirtd_start hooks it_libvirtd_stop into the EXIT trap, before it_state's cleanup when
# that is set, so nothing is left behind however the test ends.
IT_LIBVIRTD_DIR=
IT_LIBVIRTD_PID=

# A TCP port on 127.0.0.1 that nothing listens on.
it_free_port() {
	local port i
	for i in $(seq 1 50); do
		port=$((20000 + RANDOM % 40000))
		(exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || { echo "$port"; return 0; }
	done
	return 1
}

it_libvirtd_start() {
	local d port i
	command -v libvirtd >/dev/null || { echo "it_libvirtd_start: no libvirtd (apt-get install libvirt-daemon)" >&2; return 1; }
	# Short: libvirt puts the agent channel's socket under XDG_CONFIG_HOME, and a unix socket path has 107 bytes.
	d=$(mktemp -d /tmp/vlvd.XXXXXX) || return 1
	IT_LIBVIRTD_DIR=$d
	if declare -F it_state_cleanup >/dev/null; then
		trap 'it_libvirtd_stop; it_state_cleanup' EXIT
	else
		trap it_libvirtd_stop EXIT
	fi
	port=$(it_free_port) || { echo "it_libvirtd_start: no free port" >&2; return 1; }
	mkdir -p "$d"/{c/libvirt,run,cache,data,sock,pool}
	cat >"$d/libvirtd.conf" <<-CONF
		listen_tls = 0
		listen_tcp = 1
		listen_addr = "127.0.0.1"
		tcp_port = "$port"
		auth_tcp = "none"
		unix_sock_dir = "$d/sock"
		log_outputs = "3:file:$d/libvirtd.log"
	CONF
	# No virtlogd runs for this daemon: QEMU's console goes to a file.
	printf 'stdio_handler = "file"\n' >"$d/c/libvirt/qemu.conf"
	chown -R nobody:nogroup "$d"
	chmod 0755 "$d"
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$d" XDG_CONFIG_HOME="$d/c" \
		XDG_RUNTIME_DIR="$d/run" XDG_CACHE_HOME="$d/cache" XDG_DATA_HOME="$d/data" \
		setpriv --reuid=nobody --regid=nogroup --clear-groups \
		libvirtd --listen --config "$d/libvirtd.conf" --pid-file "$d/run/libvirtd.pid" \
		>"$d/libvirtd.out" 2>&1 </dev/null &
	IT_LIBVIRTD_PID=$!
	export IT_LIBVIRTD_URI="qemu+tcp://127.0.0.1:$port/session" IT_LIBVIRTD_POOL="$d/pool" IT_LIBVIRTD_DIR IT_LIBVIRTD_PID
	for i in $(seq 1 150); do
		virsh -c "$IT_LIBVIRTD_URI" version >/dev/null 2>&1 && return 0
		kill -0 "$IT_LIBVIRTD_PID" 2>/dev/null || break
		sleep 0.2
	done
	echo "it_libvirtd_start: libvirtd did not answer at $IT_LIBVIRTD_URI; its log:" >&2
	tail -n 20 "$d/libvirtd.out" "$d/libvirtd.log" >&2 2>/dev/null
	return 1
}

it_libvirtd_kill() {
	[ -n "$IT_LIBVIRTD_PID" ] || return 0
	kill -KILL "$IT_LIBVIRTD_PID" 2>/dev/null
	wait "$IT_LIBVIRTD_PID" 2>/dev/null
	IT_LIBVIRTD_PID=
}

# The QEMUs this daemon started: its pid files, and any process of nobody's naming the private dir.
it_libvirtd_qemu_pids() {
	[ -n "$IT_LIBVIRTD_DIR" ] || return 0
	{
		cat "$IT_LIBVIRTD_DIR"/run/libvirt/qemu/run/*.pid 2>/dev/null && echo
		pgrep -u nobody -f "qemu-system.*$IT_LIBVIRTD_DIR"
	} | grep -E '^[0-9]+$' | sort -u
}

it_libvirtd_stop() {
	local i p
	[ -n "$IT_LIBVIRTD_DIR" ] || return 0
	if [ -n "$IT_LIBVIRTD_PID" ]; then
		kill -TERM "$IT_LIBVIRTD_PID" 2>/dev/null
		for i in $(seq 1 50); do
			kill -0 "$IT_LIBVIRTD_PID" 2>/dev/null || break
			sleep 0.1
		done
		it_libvirtd_kill
	fi
	for p in $(it_libvirtd_qemu_pids); do
		# Only a QEMU of nobody's: a stale pid file must not name someone else's process.
		[ "$(stat -c %U "/proc/$p" 2>/dev/null)" = nobody ] && kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$IT_LIBVIRTD_DIR"
	IT_LIBVIRTD_DIR=
}
