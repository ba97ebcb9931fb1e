#!/usr/bin/env bash
# Makes this checkout's users' tree, /opt/attention-hub/<id>/ (<id>: a short id of the checkout's real path, from
# hub/machine.py, which hub/jupyterhub_config.py reads too): what the hub's users run (their servers, kernels,
# nbgrader's validate), as root. It writes nothing outside that folder, so two checkouts' hubs never run each other's
# code, and nothing in it leads into the checkout, which tools/hub_setup.sh closes to other users.
#
#   python/   the users' Python: .venv's interpreter and a copy of its site-packages, share/ and etc/ (hard links where
#             the file system allows, else copies), without the editable install's links into the checkout; a .pth
#             puts course/ on its path instead. So the users run exactly the packages the grader and the tests run.
#   course/   what the users' side needs of the checkout, copied: course_lib/, autograder/ (the grader's code holds no
#             secret), hub/ (the roles' config), student_jupyter/, nbgrader_config.py; never solutions/, tests/, .git
#   checkout  the checkout's path, for whoever cleans /opt/attention-hub up
# python/ and course/ are made afresh (in a .partial folder, then swapped in) whenever what they are made from changed:
# after a pip install into .venv or a change to the course, the setup (make hub) brings them up to date.
#
# The interpreter must be one an unprivileged user can execute, and the very one .venv was built with (another patch
# release is not enough: soupsieve 4, which nbconvert uses for every HTML page formgrader and feedback render, fails
# on Debian 12's Python 3.11.2 and works on 3.11.7). pyenv puts it under /root (mode 700), out of the users' reach. So:
#   - if every user can run .venv's interpreter where it is, that one;
#   - else a copy of it (its standard library, not its site-packages) in the tree's cpython-X.Y.Z/, told to load its
#     own libpython (patchelf: its RUNPATH named the unreachable original, and the loader would otherwise pick the
#     system's libpython of another patch release without a word).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd -P)
TREE=$(.venv/bin/python hub/machine.py tree)

# as nobody, through a shell (setpriv itself would find the program with root's capabilities still in force), in /
# (python -c puts the working folder, here the checkout, first on its path)
runs_unprivileged() {
    setpriv --reuid=65534 --regid=65534 --clear-groups -- /bin/sh -c 'cd / && "$@"' sh "$@" 2>/dev/null
}
read -r version full prefix base < <(.venv/bin/python -c 'import os, sys; v = sys.version_info
print(f"{v[0]}.{v[1]}", f"{v[0]}.{v[1]}.{v[2]}", sys.base_prefix, os.path.realpath(sys._base_executable))')

install -d -m 755 "$(dirname "$TREE")" "$TREE"
echo "$REPO" > "$TREE/checkout"

if ! runs_unprivileged "$base" -c pass; then
    copy=$TREE/cpython-$full
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

# hard links where the file system allows (a second, fast), else a copy; nothing below ever writes into these files
linked_copy() { cp -al "$1" "$2" 2>/dev/null || { rm -rf "$2" && cp -a "$1" "$2"; }; }
# what course/ is copied from, as a stream (its digest tells whether the copy is still the checkout's)
course_files() {
    tar -C "$REPO" --exclude=__pycache__ --exclude='*.pyc' --exclude=node_modules --exclude=student_jupyter/lab \
        --exclude=student_jupyter/migrated -cf - course_lib autograder hub student_jupyter nbgrader_config.py
}
# the part in place when it was made from the same sources (its .fingerprint), else false
unchanged() { [ "$(cat "$1/.fingerprint" 2>/dev/null)" = "$2" ]; }
# a part made in PART.partial goes in place of PART: readable by every user (.venv's files already are, unless it was
# installed under a tight umask), with its fingerprint
put_in_place() {
    find "$1.partial" \( \( -type d ! -perm -o+rx \) -o \( -type f ! -perm -o+r \) \) -exec chmod a+rX {} +
    echo "$2" > "$1.partial/.fingerprint"
    rm -rf "$1.old"
    if [ -e "$1" ]; then mv "$1" "$1.old"; fi
    mv "$1.partial" "$1"
    rm -rf "$1.old"
}

# one build of this tree at a time (make test's setup and a test's may overlap); an unchanged part is left in place,
# so a hub serving from it never sees it swapped
exec 9>"$TREE/.lock"
flock 9
view=$TREE/python
course=$TREE/course
venv_parts=(".venv/lib/python$version/site-packages" .venv/share .venv/etc)
python_print=$({ echo "$base $full $course"; find "${venv_parts[@]}" -printf '%p %s %T@ %m %y\n' | LC_ALL=C sort; } |
               sha256sum | cut -d' ' -f1)
course_print=$(course_files | sha256sum | cut -d' ' -f1)

# python/: a venv by hand (pyvenv.cfg beside bin/ makes `bin/python` take this folder as sys.prefix)
if ! unchanged "$view" "$python_print"; then
    rm -rf "$view.partial" && mkdir -p "$view.partial/bin" "$view.partial/lib/python$version"
    site=$view.partial/lib/python$version/site-packages
    linked_copy ".venv/lib/python$version/site-packages" "$site"
    linked_copy .venv/share "$view.partial/share"  # kernel specs, JupyterLab and nbgrader's lab extensions
    linked_copy .venv/etc "$view.partial/etc"      # the server extensions' enabling config (nbgrader's)
    # the editable install's finder and .pth name the checkout: unlinked here (.venv keeps its own), course/ instead
    rm -f "$site"/__editable__* "$site"/*.egg-link
    { grep -l -F "$REPO" "$site"/*.pth 2>/dev/null || true; } | xargs -r rm -f
    echo "$course" > "$site/attention_course.pth"
    ln -s "$base" "$view.partial/bin/python"
    printf 'home = %s\ninclude-system-site-packages = false\nversion = %s\n' "$(dirname "$base")" "$full" \
        > "$view.partial/pyvenv.cfg"
    # .venv's own scripts start .venv's interpreter: these start the view's (nbgrader calls `alembic` by name when it
    # makes a gradebook; the instructor types `nbgrader` and `jupyter` in a terminal)
    for tool in alembic jupyter nbgrader; do
        printf '#!/bin/sh\nexec "%s/bin/python" -m %s "$@"\n' "$view" "$tool" > "$view.partial/bin/$tool"
        chmod 755 "$view.partial/bin/$tool"
    done
    put_in_place "$view" "$python_print"
fi

# course/: the code and configuration the users' side reads, never what only the grader may read
if ! unchanged "$course" "$course_print"; then
    rm -rf "$course.partial" && mkdir -p "$course.partial"
    course_files | tar -C "$course.partial" -xf -
    put_in_place "$course" "$course_print"
fi

# (the packages themselves, not what they import: jupyterhub.singleuser alone takes seconds to import)
check="import sys, jupyterhub, course_lib, autograder; assert sys.version.split()[0] == '$full', sys.version
assert course_lib.__file__.startswith('$course/') and autograder.__file__.startswith('$course/'), course_lib.__file__"
runs_unprivileged "$view/bin/python" -c "$check" || {
    echo "hub setup: $view/bin/python cannot run Python $full with the course's packages from $course as an" \
         "unprivileged user" >&2
    exit 1
}
