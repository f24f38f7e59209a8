#!/usr/bin/env bash
# N `streamlit run app.py` replicas on 127.0.0.1 behind Debian's nginx, with session affinity. No root needed.
#
#   deploy/cluster.sh start N PORT   replicas on free loopback ports, nginx on 127.0.0.1:PORT; prints where each logs
#   deploy/cluster.sh stop PORT      stops exactly what `start N PORT` started (its pid files), nothing else
#
# Everything lives in one run directory, ${MPVIZ_CLUSTER_DIR:-${XDG_RUNTIME_DIR:-/tmp}/mpviz-cluster-PORT}:
# replica-I.{pid,port,log}, nginx.{conf,pid}, nginx-{error,access}.log, cookie-secret, streamlit-static/, tmp/.
# Environment: PYTHON (default python3); OMP_NUM_THREADS, torch's threads per replica (default: the machine's cores
# shared out, at least 1, so N replicas do not each size their pools to the whole machine); MPVIZ_HOSTS, the host
# names the app answers to, space-separated (default "localhost 127.0.0.1"; `*.example.org` allowed): nginx's
# server_name (any other Host gets no answer) and the replicas' server.allowedHosts; MPVIZ_CLUSTER_DEBUG=1
# adds an X-Upstream response header naming the replica that served each request (tests only: it tells visitors
# the replicas' addresses).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
HEALTH_TIMEOUT_S=120

usage() {
    echo "usage: $0 start N PORT | stop PORT" >&2
    exit 2
}

run_dir() { echo "${MPVIZ_CLUSTER_DIR:-${XDG_RUNTIME_DIR:-/tmp}/mpviz-cluster-$1}"; }

is_port() { [[ "$1" =~ ^[0-9]+$ ]] && ((10#$1 >= 1 && 10#$1 <= 65535)); }

# A pid file's process, only if it is still the program we started there (pids get reused).
live_pid() {
    local pid_file="$1" expect="$2" pid
    [[ -f "$pid_file" ]] || return 1
    pid="$(<"$pid_file")"
    [[ "$pid" =~ ^[0-9]+$ ]] || return 1
    [[ -r "/proc/$pid/cmdline" ]] || return 1
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$expect" || return 1
    echo "$pid"
}

free_ports() {  # N distinct free loopback ports (held open together while chosen, so they differ)
    "$PYTHON" - "$1" <<'EOF'
import socket, sys
socks = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
}

wait_healthy() {  # URL, pid to watch (0: none), log to show on failure
    local url="$1" pid="$2" log="$3"
    "$PYTHON" - "$url" "$pid" "$HEALTH_TIMEOUT_S" <<'EOF' || { echo "not healthy: $url; last lines of $log:" >&2; tail -n 30 "$log" >&2; return 1; }
import os, sys, time, urllib.request
url, pid, deadline = sys.argv[1], int(sys.argv[2]), time.monotonic() + float(sys.argv[3])
while time.monotonic() < deadline:
    if pid and not os.path.exists(f"/proc/{pid}"):
        sys.exit(f"process {pid} exited")
    try:
        if urllib.request.urlopen(url, timeout=2).read() == b"ok":
            sys.exit(0)
    except OSError:
        pass
    time.sleep(0.3)
sys.exit(f"timed out after {sys.argv[3]} s")
EOF
}

# Whether any process of group $1 still runs (a zombie, dead but not yet reaped, does not count).
group_alive() {
    local f line state pgrp
    for f in /proc/[0-9]*/stat; do
        read -r line 2>/dev/null <"$f" || continue
        read -r state _ pgrp _ <<<"${line##*) }"
        [[ "$pgrp" == "$1" && "$state" != Z ]] && return 0
    done
    return 1
}

# Ends a process group we started (its leader's pid is its id): TERM, up to 15 s, then KILL.
end_group() {
    local pgid="$1" name="$2"
    kill -TERM -- "-$pgid" 2>/dev/null || true
    for _ in $(seq 150); do
        group_alive "$pgid" || { echo "stopped $name (pid $pgid)"; return 0; }
        sleep 0.1
    done
    kill -KILL -- "-$pgid" 2>/dev/null || true
    echo "killed $name (pid $pgid) after 15 s"
}

stop() {
    local port="$1" dir pid f name
    dir="$(run_dir "$port")"
    [[ -d "$dir" ]] || { echo "no cluster on port $port ($dir does not exist)"; return 0; }
    if pid="$(live_pid "$dir/nginx.pid" nginx)"; then
        end_group "$pid" "nginx on 127.0.0.1:$port"  # first: no new requests reach a stopping replica
    fi
    for f in "$dir"/replica-*.pid; do
        [[ -e "$f" ]] || continue
        name="$(basename "$f" .pid)"
        if pid="$(live_pid "$f" streamlit)"; then
            end_group "$pid" "$name on 127.0.0.1:$(cat "$dir/$name.port" 2>/dev/null || echo '?')"
        elif pid="$(<"$f")" && [[ "$pid" =~ ^[0-9]+$ ]] && group_alive "$pid"; then
            end_group "$pid" "what $name left running after it died"  # e.g. a policy probe child
        else
            echo "$name was not running"
        fi
    done
    rm -f "$dir"/*.pid "$dir/cookie-secret"
    echo "logs kept in $dir"
}

start() {
    local n="$1" port="$2" dir secret threads ports i p pid static upstream="" user_line="" debug_headers="" conf
    [[ "$n" =~ ^[0-9]+$ ]] && ((n >= 1 && n <= 16)) || { echo "N must be 1..16, got '$n'" >&2; exit 2; }
    command -v nginx >/dev/null || { echo "nginx not found: apt-get install -y nginx" >&2; exit 1; }
    dir="$(run_dir "$port")"
    if live_pid "$dir/nginx.pid" nginx >/dev/null; then
        echo "a cluster already runs on port $port ($dir): $0 stop $port" >&2
        exit 1
    fi
    "$PYTHON" -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))' "$port" 2>/dev/null || { echo "127.0.0.1:$port is in use" >&2; exit 1; }
    mkdir -p "$dir/tmp"
    chmod 755 "$dir"
    rm -f "$dir"/*.pid "$dir"/replica-*.port
    trap 'echo "start failed: stopping what was started" >&2; stop "$port" >&2' ERR

    # One cookie secret per cluster, shared by every replica (signed cookies must verify on each of them).
    secret="$("$PYTHON" -c 'import secrets; print(secrets.token_hex(32))')"
    (umask 077 && echo "$secret" >"$dir/cookie-secret")

    if [[ "$(id -u)" == 0 ]]; then  # root: nginx's workers drop to nobody, who must own the temp dirs
        user_line="user nobody nogroup;"
        chown -R nobody:nogroup "$dir/tmp"
    fi
    if [[ "${MPVIZ_CLUSTER_DEBUG:-}" == 1 ]]; then
        debug_headers='        add_header X-Upstream $upstream_addr always;  # MPVIZ_CLUSTER_DEBUG=1 only'
    fi
    # nginx serves Streamlit's static assets itself, from a copy (its workers may not read the replicas' venv).
    static="$("$PYTHON" -c 'import os, streamlit; print(os.path.join(os.path.dirname(streamlit.__file__), "static"))')"
    rm -rf "$dir/streamlit-static"
    cp -r "$static" "$dir/streamlit-static"
    chmod -R a+rX "$dir/streamlit-static"
    if [[ -n "$user_line" ]] && ! setpriv --reuid=nobody --regid=nogroup --clear-groups \
        test -r "$dir/streamlit-static/index.html"; then
        echo "nginx's workers (user nobody) cannot read $dir: put the run directory where others may enter" \
            "(MPVIZ_CLUSTER_DIR=/tmp/...)" >&2
        false
    fi

    hosts="${MPVIZ_HOSTS:-localhost 127.0.0.1}"
    [[ "$hosts" =~ ^[A-Za-z0-9.*\ -]+$ ]] || { echo "MPVIZ_HOSTS must be host names separated by spaces" >&2; false; }

    threads=$(($(nproc) / n))
    ((threads >= 1)) || threads=1
    read -r -a ports <<<"$(free_ports "$n")"
    for ((i = 0; i < n; i++)); do
        p="${ports[$i]}"
        # setsid: each replica leads its own process group, so `stop` ends it and anything it spawned.
        (cd "$ROOT" && STREAMLIT_SERVER_COOKIE_SECRET="$secret" STREAMLIT_LOGGER_ENABLE_RICH=false \
            STREAMLIT_SERVER_ALLOWED_HOSTS="$hosts" \
            OMP_NUM_THREADS="${OMP_NUM_THREADS:-$threads}" \
            exec setsid "$PYTHON" -m streamlit run app.py --server.address 127.0.0.1 --server.port "$p" \
            --server.headless true </dev/null >"$dir/replica-$i.log" 2>&1) &
        echo "$!" >"$dir/replica-$i.pid"
        echo "$p" >"$dir/replica-$i.port"
        upstream+="        server 127.0.0.1:$p max_fails=1 fail_timeout=10s;"$'\n'
    done
    for ((i = 0; i < n; i++)); do
        wait_healthy "http://127.0.0.1:${ports[$i]}/_stcore/health" "$(<"$dir/replica-$i.pid")" "$dir/replica-$i.log"
    done

    conf="$(<"$ROOT/deploy/nginx.conf.template")"
    conf="${conf//@STATIC_DIR@/$dir/streamlit-static}"
    conf="${conf//@RUN_DIR@/$dir}"
    conf="${conf//@LISTEN@/127.0.0.1:$port}"
    conf="${conf//@SERVER_NAMES@/$hosts}"
    conf="${conf//@UPSTREAM_SERVERS@/${upstream%$'\n'}}"
    conf="${conf//@USER_LINE@/$user_line}"
    conf="${conf//@DEBUG_HEADERS@/$debug_headers}"
    echo "$conf" >"$dir/nginx.conf"
    nginx -t -q -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log"
    (exec setsid nginx -p "$dir" -c "$dir/nginx.conf" -e "$dir/nginx-error.log" -g "daemon off;" \
        </dev/null >>"$dir/nginx-error.log" 2>&1) &
    pid="$!"
    wait_healthy "http://127.0.0.1:$port/_stcore/health" "$pid" "$dir/nginx-error.log"
    [[ "$(live_pid "$dir/nginx.pid" nginx)" == "$pid" ]] || { echo "nginx.pid is not the nginx we started" >&2; false; }
    trap - ERR

    echo "mpviz cluster: http://127.0.0.1:$port/ (nginx pid $pid, $n replica(s))"
    for ((i = 0; i < n; i++)); do
        echo "  replica-$i: 127.0.0.1:${ports[$i]} pid $(<"$dir/replica-$i.pid") log $dir/replica-$i.log"
    done
    echo "  nginx: config $dir/nginx.conf, logs $dir/nginx-error.log $dir/nginx-access.log"
    echo "stop with: $0 stop $port"
}

case "${1:-}" in
start)
    [[ $# == 3 ]] && is_port "$3" || usage
    start "$2" "$3"
    ;;
stop)
    [[ $# == 2 ]] && is_port "$2" || usage
    stop "$2"
    ;;
*) usage ;;
esac
