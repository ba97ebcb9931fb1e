#!/usr/bin/env bash
# Installs the Debian packages the tests and the grader use, when root with apt and any is missing.
# One line per package: the package, then a path (glob allowed) of a file it provides.
# Elsewhere it only says what is missing: the tests that need it then skip and say why.
set -u
PACKAGES="
bubblewrap /usr/bin/bwrap
util-linux /usr/bin/setpriv
postgresql /usr/lib/postgresql/*/bin/initdb
chromium /usr/bin/chromium
nodejs /usr/bin/node
npm /usr/bin/npm
"
missing=()
while read -r package probe; do
    [ -z "$package" ] && continue
    # shellcheck disable=SC2086  # the probe is a glob on purpose
    compgen -G "$probe" >/dev/null || missing+=("$package")
done <<< "$PACKAGES"
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian packages: ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
    echo "note: missing ${missing[*]} and not root with apt: the tests that need them will be skipped"
fi
