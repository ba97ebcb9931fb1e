#!/usr/bin/env bash
# Makes /opt/attention-hub/python: the Python the hub's users run (their servers, kernels, nbgrader), as root.
#
# The users' servers run as the users, so their Python must be one an unprivileged user can execute, and it must
# be the very interpreter .venv was built with (another patch release is not enough: soupsieve 4, which nbconvert
# uses for every HTML page formgrader and feedback render, fails on Debian 12's Python 3.11.2 and works on 3.11.7).
# pyenv puts that interpreter under /root (mode 700), out of the users' reach. So:
#   - if every user can run .venv's interpreter where it is, that one;
#   - else a copy of it (its standard library, not its site-packages) in /opt/attention-hub/cpython-X.Y.Z, told to
#     load its own libpython (patchelf: its RUNPATH named the unreachable original, and the loader would otherwise
#     pick the system's libpython of another patch release without a word).
# The users' Python is then a view of .venv through that interpreter: its site-packages, share/ and etc/ are links
# into .venv, so the users run exactly the packages the grader and the tests run (one install, nothing to keep in
# step), and pip installs into .venv show up here at once.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
VIEW=/opt/attention-hub/python

# as nobody, through a shell: setpriv itself would find the program with root's capabilities still in force
runs_unprivileged() { setpriv --reuid=65534 --regid=65534 --clear-groups -- /bin/sh -c '"$@"' sh "$@" 2>/dev/null; }
read -r version full prefix base < <(.venv/bin/python -c 'import os, sys; v = sys.version_info
print(f"{v[0]}.{v[1]}", f"{v[0]}.{v[1]}.{v[2]}", sys.base_prefix, os.path.realpath(sys._base_executable))')

if ! runs_unprivileged "$base" -c pass; then
    copy=/opt/attention-hub/cpython-$full
    if [ ! -x "$copy/bin/python$version" ]; then
        echo "hub setup: copying Python $full from $prefix to $copy (the users cannot reach it there)"
        command -v patchelf >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq patchelf >/dev/null
        rm -rf "$copy.partial" && mkdir -p "$copy.partial"
        tar -C "$prefix" --exclude="./lib/python$version/site-packages" --exclude="./lib/python$version/test" \
            -cf - ./bin ./lib | tar -C "$copy.partial" -xf -
        for binary in "$copy.partial"/bin/python"$version"; do
            if [ -n "$(patchelf --print-rpath "$binary")" ]; then
                patchelf --set-rpath '$ORIGIN/../lib' "$binary"
            fi
        done
        mkdir -p "$copy.partial/lib/python$version/site-packages"
        chmod -R a+rX "$copy.partial"
        mv "$copy.partial" "$copy"
    fi
    base=$copy/bin/python$version
fi

# a venv by hand: pyvenv.cfg beside bin/ makes `bin/python` take this folder as sys.prefix
mkdir -p "$VIEW/bin" "$VIEW/lib/python$version"
ln -sfn "$base" "$VIEW/bin/python"
ln -sfn "$REPO/.venv/lib/python$version/site-packages" "$VIEW/lib/python$version/site-packages"
ln -sfn "$REPO/.venv/share" "$VIEW/share"  # kernel specs, JupyterLab and nbgrader's lab extensions
ln -sfn "$REPO/.venv/etc" "$VIEW/etc"      # the server extensions' enabling config (nbgrader's)
printf 'home = %s\ninclude-system-site-packages = false\nversion = %s\n' "$(dirname "$base")" "$full" \
    > "$VIEW/pyvenv.cfg"
# .venv's own scripts start .venv's interpreter: these start the view's (nbgrader calls `alembic` by name when it
# makes a gradebook; the instructor types `nbgrader` and `jupyter` in a terminal)
for tool in alembic jupyter nbgrader; do
    printf '#!/bin/sh\nexec "%s/bin/python" -m %s "$@"\n' "$VIEW" "$tool" > "$VIEW/bin/$tool"
    chmod 755 "$VIEW/bin/$tool"
done
chmod -R a+rX "$VIEW"
# (the packages themselves, not what they import: jupyterhub.singleuser alone takes seconds to import)
check='import sys, jupyterhub, course_lib; assert sys.version.split()[0] == "'$full'", sys.version'
runs_unprivileged "$VIEW/bin/python" -c "$check" || {
    echo "hub setup: $VIEW/bin/python cannot run Python $full with the course's packages as an unprivileged user" \
         "(is $REPO readable by every user?)" >&2
    exit 1
}
