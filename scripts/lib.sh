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
  # chromium-l10n: Chrome's UI in other languages (without it every --lang is en-US), which
  # tests/e2e/languages.test.mjs needs.
  if [ -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ] && [ -x /usr/bin/chromedriver ] \
     && { [ -n "${CHROMIUM_PATH:-}" ] || [ -e /usr/lib/chromium/locales/de.pak ]; }; then return; fi
  say "installing Chromium, its languages and ChromeDriver from Debian"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-l10n chromium-driver >/dev/null
}

# npm packages pinned by a lock file in folder $1.
need_npm() {
  local dir="$1"
  if [ -d "$dir/node_modules" ] && [ "$dir/node_modules/.package-lock.json" -nt "$dir/package-lock.json" ]; then return; fi
  say "installing npm packages in ${dir#"$ROOT"/}"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
}

# The real web applications of the e2e suite (tests/real-apps/requirements.txt), in a venv in
# the gitignored .cache/real-apps/venv: installed when missing or when the pinned list changed
# (the venv keeps a copy of the list it was made from). Needs CPython 3 with venv and pip.
need_real_apps() {
  local venv="$ROOT/.cache/real-apps/venv" req="$ROOT/tests/real-apps/requirements.txt"
  if [ -x "$venv/bin/python" ] && cmp -s "$req" "$venv/requirements.txt"; then return; fi
  say "installing the real web applications of the e2e suite (Django, Trac, Wagtail) in ${venv#"$ROOT"/}"
  rm -rf "$venv"
  # Debian's own python3 keeps venv (with pip) in a package of its own.
  if ! "${PYTHON:-python3}" -c 'import ensurepip, venv' 2>/dev/null; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
  fi
  "${PYTHON:-python3}" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
  cp "$req" "$venv/requirements.txt"
}

# wasm-opt on $1, written to $2, with the passes every shipped module gets (extra flags after).
# Debian's binaryen (v108) emits wasm that fails at run time; the npm build is current.
# --low-memory-unused lets it fold constant offsets into loads and stores: rustc's wasm layout
# puts the stack first, growing down from 1 MiB to 0, so the lowest 1 KiB is reached only by a
# stack about to overflow (−3.5 KB gzip on tandem_bg.wasm).
optimise_wasm() {
  local in="$1" out="$2"; shift 2
  "$ROOT/scripts/node_modules/.bin/wasm-opt" -Oz --low-memory-unused --enable-bulk-memory \
    --enable-nontrapping-float-to-int --enable-sign-ext --enable-mutable-globals \
    --enable-reference-types --enable-multivalue "$@" -o "$out" "$in"
}

# twiggy, for scripts/bench's "what is big in the wasm" tables.
need_twiggy() {
  command -v twiggy >/dev/null && return
  say "installing twiggy (once)"
  # Pinned: the size budget reads its tables, so every machine gets the same output format.
  cargo install twiggy --version 0.8.0 --locked
}

# Whether the machine has a nightly Rust toolchain (cargo fuzz needs one). None can be
# downloaded here (only the package registries are reachable), so a missing nightly is said
# and the caller skips or stops; shipped code never needs it.
have_nightly() {
  rustup toolchain list 2>/dev/null | grep -q '^nightly' && return
  say "no nightly Rust toolchain on this machine: the fuzz targets cannot run (rustup toolchain install nightly, where the network allows)"
  return 1
}

# cargo-fuzz, from crates.io (once).
need_cargo_fuzz() {
  cargo fuzz --version >/dev/null 2>&1 && return
  say "installing cargo-fuzz (once)"
  cargo install cargo-fuzz
}
