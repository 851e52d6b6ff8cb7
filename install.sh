#!/usr/bin/env bash
# Installs (or upgrades) authd on a Linux machine from this checkout.
#
#   sudo ./install.sh                 # /usr/local/bin/authd, /var/lib/authd, /etc/authd/authd.env
#   sudo ./install.sh --systemd       # ... and a hardened systemd unit, authd.service
#   ./install.sh --prefix ~/.local --data-dir ~/.local/share/authd --config-dir ~/.config/authd
#                                     # without root: everything in places you own
#
# Re-running it upgrades in place: a new binary, migrations applied, data and configuration
# kept. It needs Node.js and npm (Bun is installed from npm as a pinned devDependency).
set -euo pipefail

prefix=/usr/local
data_dir=/var/lib/authd
config_dir=/etc/authd
service_user=authd
systemd=false
restarted=false
systemd_dir=/etc/systemd/system
explicit_paths=0

usage() {
  cat <<'EOF'
Usage: install.sh [options]

Installs authd on this Linux machine from this checkout: the binary, its data directory, its
environment file and, with --systemd, a hardened systemd unit. Run again, it upgrades in place:
a new binary, migrations applied, data and configuration kept. Needs Node.js and npm.

  sudo ./install.sh              /usr/local/bin/authd, /var/lib/authd, /etc/authd/authd.env
  sudo ./install.sh --systemd    ... and the systemd unit authd.service
  ./install.sh --prefix ~/.local --data-dir ~/.local/share/authd --config-dir ~/.config/authd
                                 without root: everything in places you own

Options:
  --prefix DIR        install the binary as DIR/bin/authd (default /usr/local)
  --data-dir DIR      the database and mail files (default /var/lib/authd)
  --config-dir DIR    authd.env, the environment file (default /etc/authd)
  --user NAME         the user authd runs as (default authd, a system user created if
                      missing, also with --prefix; --user root creates none; root only)
  --systemd           write and (re)start the systemd unit authd.service (root only)
  --systemd-dir DIR   where the unit goes (default /etc/systemd/system)
  -h, --help          this help
EOF
}

die() { echo "install.sh: $*" >&2; exit 1; }
say() { echo "==> $*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=${2:?--prefix needs a directory}; explicit_paths=$((explicit_paths + 1)); shift 2 ;;
    --data-dir) data_dir=${2:?--data-dir needs a directory}; explicit_paths=$((explicit_paths + 1)); shift 2 ;;
    --config-dir) config_dir=${2:?--config-dir needs a directory}; explicit_paths=$((explicit_paths + 1)); shift 2 ;;
    --user) service_user=${2:?--user needs a name}; shift 2 ;;
    --systemd) systemd=true; shift ;;
    --systemd-dir) systemd_dir=${2:?--systemd-dir needs a directory}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) printf 'install.sh: unknown option %s\nrun install.sh --help for usage\n' "$1" >&2; exit 2 ;;
  esac
done

[ "$(uname -s)" = Linux ] || die "this installer is for Linux"
cd "$(dirname "$0")"
[ -f package.json ] && [ -f src/main.ts ] || die "run it from an authd checkout"

root=false
[ "$(id -u)" = 0 ] && root=true
if ! $root; then
  # Without root there is no system user and no system unit: only places you own.
  $systemd && die "--systemd needs root (sudo ./install.sh --systemd)"
  if [ "$explicit_paths" -lt 3 ]; then
    die "installing into $prefix, $data_dir and $config_dir needs root: run it with sudo,
  or install for yourself: ./install.sh --prefix ~/.local --data-dir ~/.local/share/authd --config-dir ~/.config/authd"
  fi
  service_user=$(id -un)
fi
command -v node >/dev/null && command -v npm >/dev/null || die "Node.js and npm are needed to build authd (apt-get install nodejs npm)"

say "building dist/authd"
node scripts/bootstrap.mjs
node_modules/.bin/bun run --silent build >/dev/null

if $root && ! id "$service_user" >/dev/null 2>&1; then
  say "creating the system user $service_user"
  useradd --system --home-dir "$data_dir" --no-create-home --shell /usr/sbin/nologin "$service_user"
fi

# The user's own group, which need not bear its name (nobody's is nogroup).
service_group=$(id -gn "$service_user" 2>/dev/null || echo "$service_user")

say "data directory $data_dir (only $service_user may read it)"
mkdir -p "$data_dir"
chmod 700 "$data_dir"
$root && chown "$service_user:" "$data_dir"

env_file="$config_dir/authd.env"
mkdir -p "$config_dir"
if [ -f "$env_file" ]; then
  say "keeping $env_file"
else
  say "writing $env_file"
  cat >"$env_file" <<EOF
# authd's configuration: every AUTHD_* variable is documented in docs/configuration.md.
AUTHD_DATA_DIR=$data_dir
AUTHD_HOST=127.0.0.1
AUTHD_PORT=3000
# Where clients reach authd (its origin may call refresh and logout); https in production.
#AUTHD_PUBLIC_URL=https://auth.example.com
# Serve HTTPS directly (or put a TLS proxy in front and list it below).
#AUTHD_TLS_CERT=/etc/authd/cert.pem
#AUTHD_TLS_KEY=/etc/authd/key.pem
# A reverse proxy on this machine: trust it, or every client shares 127.0.0.1's limits
# (and the proxy's X-Request-Id is not kept).
#AUTHD_TRUSTED_PROXIES=127.0.0.1
# Prometheus metrics on a listener of their own (never the public port).
#AUTHD_METRICS_ADDR=127.0.0.1:9464
#AUTHD_CORS_ORIGINS=https://app.example.com
#AUTHD_SMTP_URL=smtp://user:password@smtp.example.com:587
#AUTHD_MAIL_FROM=Example <auth@example.com>
EOF
  chmod 640 "$env_file"
  $root && chown "root:$service_group" "$env_file"
fi

as_service_user() {
  if $root && [ "$service_user" != root ]; then runuser -u "$service_user" -- "$@"; else "$@"; fi
}

# The new binary goes in beside the old one, and replaces it only once it has read the
# configuration and migrated the database: an upgrade that fails leaves the running version
# as it was. authd reads authd.env itself (--env-file), as systemd's EnvironmentFile does:
# KEY=VALUE lines, not shell, so `AUTHD_MAIL_FROM=Acme <auth@acme.example>` is a value.
# (an authd already there makes this run an upgrade: its advice is a restart, not a first run)
previous_version=""
[ -x "$prefix/bin/authd" ] && previous_version=$("$prefix/bin/authd" --version 2>/dev/null || echo "an unknown version")
say "applying migrations with the new binary"
mkdir -p "$prefix/bin"
install -m 0755 dist/authd "$prefix/bin/authd.new"
if ! migrated=$(as_service_user "$prefix/bin/authd.new" --env-file "$env_file" --data-dir "$data_dir" migrate); then
  rm -f "$prefix/bin/authd.new"
  die "the new version could not migrate (above); $prefix/bin/authd is unchanged"
fi
say "$migrated"

say "installing $prefix/bin/authd"
# A new file renamed over the old one: a running authd keeps its binary until it restarts.
mv -f "$prefix/bin/authd.new" "$prefix/bin/authd"

if $systemd; then
  unit="$systemd_dir/authd.service"
  say "writing $unit"
  mkdir -p "$systemd_dir"
  cat >"$unit" <<EOF
[Unit]
Description=authd authentication service
Documentation=file://$(pwd)/docs/operations.md
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User=$service_user
Group=$service_group
EnvironmentFile=$env_file
ExecStart=$prefix/bin/authd --data-dir $data_dir serve
Restart=on-failure
RestartSec=2
# SIGTERM: authd stops accepting, finishes in-flight requests and mail, then exits 0.
KillSignal=SIGTERM
TimeoutStopSec=30
UMask=0077

# Hardening: authd needs its data directory, the network and nothing else.
NoNewPrivileges=yes
ProtectSystem=strict
ReadWritePaths=$data_dir
ProtectHome=yes
PrivateTmp=yes
PrivateDevices=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectKernelLogs=yes
ProtectControlGroups=yes
ProtectClock=yes
ProtectHostname=yes
RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX
RestrictNamespaces=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
LockPersonality=yes
SystemCallArchitectures=native
SystemCallFilter=@system-service
CapabilityBoundingSet=
# (No MemoryDenyWriteExecute: Bun's JavaScript JIT needs writable code pages.)

[Install]
WantedBy=multi-user.target
EOF
  if [ "$systemd_dir" = /etc/systemd/system ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
    systemctl daemon-reload
    if systemctl is-active --quiet authd; then
      say "restarting authd (upgrade)"
      systemctl restart authd
      restarted=true
    else
      say "enable and start it with: systemctl enable --now authd"
    fi
  else
    say "systemd is not running here: the unit is written, start it where systemd runs"
  fi
fi

version=$("$prefix/bin/authd" --version)
# Commands the operator runs as the service user, who alone may read the data directory.
run_as=""
$root && [ "$service_user" != root ] && run_as="sudo -u $service_user "
authd_command="$run_as$prefix/bin/authd --env-file $env_file"
# (no tenant yet: the database still needs its first run, upgrade or not)
initialised=true
[ "$(as_service_user "$prefix/bin/authd" --env-file "$env_file" --data-dir "$data_dir" --json tenants list 2>/dev/null | tr -d '[:space:]')" = "[]" ] && initialised=false

echo
if [ -n "$previous_version" ]; then
  echo "authd is upgraded from $previous_version to $version; the data and $env_file are kept."
  echo "  binary        $prefix/bin/authd"
  echo "  data          $data_dir"
  echo "  migrations    $migrated"
  if $restarted; then
    echo "authd.service was restarted: it runs $version now."
  elif command -v systemctl >/dev/null && [ -d /run/systemd/system ] && systemctl is-active --quiet authd; then
    echo "authd.service still runs $previous_version: restart it with: systemctl restart authd"
  else
    echo "A running authd keeps $previous_version until it restarts: restart it to run $version."
  fi
else
  echo "authd $version is installed."
  echo "  binary        $prefix/bin/authd"
  echo "  data          $data_dir"
  echo "  configuration $env_file"
fi
if ! $initialised; then
  echo "Next: the first tenant, API key and admin (once):"
  echo "  $authd_command init"
fi
echo "Then check everything with: $authd_command doctor"
