#!/usr/bin/env bash
# Builds ipcmark's Debian package with cargo-deb and checks it.
#
#   cargo install cargo-deb      # once (a few minutes)
#   packaging/deb.sh             # prints the path of the .deb last
#   sudo apt install ./target/debian/ipcmark_*.deb
#
# DEBFULLNAME and DEBEMAIL, when set, name the package's maintainer.
#
# The release binary writes its own man page and completion scripts into
# target/assets/ (they are generated from its clap definitions and
# registries, so they describe exactly this build); cargo deb packs them with
# the binary and README.md as [package.metadata.deb] in Cargo.toml lists
# them. The script then checks that `dpkg-deb --info` reads the package, that
# `dpkg-deb --contents` lists the binary, the man page and the completions,
# and unpacks it into a throw-away root (`dpkg -x`, nothing is installed) to
# run `ipcmark --version` from there, render the man page with groff and
# complete `ipcmark run pi<Tab>` with the packaged bash script.
#
# For people and release notes, not CI: CI does not need cargo-deb.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() {
  echo "deb.sh: $*" >&2
  exit 1
}

command -v cargo-deb >/dev/null 2>&1 ||
  fail "cargo-deb is not installed: run 'cargo install cargo-deb' first"
for tool in dpkg-deb dpkg groff; do
  command -v "$tool" >/dev/null 2>&1 || fail "$tool is missing (Debian: apt-get install dpkg groff-base)"
done

echo "== cargo build --release --locked"
cargo build --release --locked
bin="${CARGO_TARGET_DIR:-target}/release/ipcmark"

echo "== generating the man page and completions into target/assets/"
assets=target/assets
rm -rf "$assets"
mkdir -p "$assets"
"$bin" man >"$assets/ipcmark.1"
"$bin" completions bash >"$assets/ipcmark.bash"
"$bin" completions zsh >"$assets/_ipcmark"
"$bin" completions fish >"$assets/ipcmark.fish"

echo "== cargo deb --no-build"
# The person who builds the package maintains it, as Debian's own tools
# (dch, debmake) read it from DEBFULLNAME and DEBEMAIL; otherwise
# Cargo.toml's placeholder.
maintainer=()
if [[ -n "${DEBEMAIL:-}" ]]; then
  maintainer=(--maintainer "${DEBFULLNAME:-${DEBEMAIL%@*}} <${DEBEMAIL}>")
fi
deb=$(cargo deb --no-build "${maintainer[@]}" | tail -n 1)
[[ -f "$deb" ]] || fail "cargo deb printed no package path (got '$deb')"

echo "== dpkg-deb --info $deb"
dpkg-deb --info "$deb"

echo "== dpkg-deb --contents $deb"
contents=$(dpkg-deb --contents "$deb")
echo "$contents"
for path in \
  ./usr/bin/ipcmark \
  ./usr/share/man/man1/ipcmark.1.gz \
  ./usr/share/bash-completion/completions/ipcmark \
  ./usr/share/zsh/vendor-completions/_ipcmark \
  ./usr/share/fish/vendor_completions.d/ipcmark.fish \
  ./usr/share/doc/ipcmark/README.md; do
  grep -q " ${path}\$" <<<"$contents" || fail "the package lacks $path"
done

echo "== unpacked into a throw-away root (dpkg -x)"
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root"
version=$("$root/usr/bin/ipcmark" --version)
echo "$version"
grep -Eq '\(commit ([0-9a-f]{40}|[0-9a-f]{64}|unknown)[,;]' <<<"$version" ||
  fail "--version names no commit: $version"
if head=$(git rev-parse HEAD 2>/dev/null); then
  grep -q "commit $head" <<<"$version" || fail "--version does not name HEAD ($head): $version"
fi

warnings=$(zcat "$root/usr/share/man/man1/ipcmark.1.gz" | groff -ww -man -Tutf8 2>&1 >/dev/null)
[[ -z "$warnings" ]] || fail "groff warns about the packaged man page: $warnings"
echo "man page: groff -ww -man -Tutf8 renders it without warnings"

completed=$(bash --norc --noprofile -c '
  source "$1"
  COMP_WORDS=(ipcmark run pi); COMP_CWORD=2
  _ipcmark ipcmark pi run
  echo "${COMPREPLY[*]}"' _ "$root/usr/share/bash-completion/completions/ipcmark")
[[ "$completed" == "pipe pipe-self" ]] || fail "bash completes 'ipcmark run pi' to '$completed'"
echo "bash: ipcmark run pi<Tab> -> $completed"

echo "== done: $deb"
