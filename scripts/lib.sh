# Shared by scripts/*: each `need_*` installs one missing piece, so every script works on a
# fresh machine (Debian, Rust, node) and costs nothing when the piece is already there.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

need_wasm_target() {
  rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown && return
  say "installing the wasm32-unknown-unknown Rust target"
  rustup target add wasm32-unknown-unknown
}

# The CLI must be exactly the version of the wasm-bindgen crate pinned in Cargo.toml.
wasm_bindgen_version() {
  sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' "$ROOT/Cargo.toml"
}

need_wasm_bindgen() {
  local want; want="$(wasm_bindgen_version)"
  if [ "$(wasm-bindgen --version 2>/dev/null)" = "wasm-bindgen $want" ]; then return; fi
  say "installing wasm-bindgen-cli $want (takes a few minutes once)"
  # No --locked: a version in its lock file is not served by the registry here.
  cargo install wasm-bindgen-cli --version "$want"
}

need_chromium() {
  if [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] && [ -x /usr/bin/chromedriver ]; then return; fi
  say "installing Chromium and ChromeDriver from Debian"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
}

# npm packages pinned by a lock file in folder $1.
need_npm() {
  local dir="$1"
  if [ -d "$dir/node_modules" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then return; fi
  say "installing npm packages in ${dir#"$ROOT"/}"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

# twiggy, for scripts/bench's "what is big in the wasm" tables.
need_twiggy() {
  command -v twiggy >/dev/null && return
  say "installing twiggy (once)"
  cargo install twiggy
}
