#!/usr/bin/env bash
# Sets this machine up for the course's JupyterHub (`make hub`, tests/hub). As root; idempotent: run it again at will,
# it only adds what is missing (and brings the users' tree up to date) and never overwrites a course folder, a
# password or the course world.
#
#   tools/hub_setup.sh [--create] [INSTRUCTOR [STUDENT...]]      (default: instructor student1 student2)
#
# The people must be Linux accounts already: a name that is none (a typo in the list) is refused, naming it, before
# anything changes. --create makes the missing ones instead (`make hub HUB_CREATE_USERS=1`).
#
# It makes (docs/hub.md says what each is for):
#   .venv                          the `hub` extra (JupyterHub, PAM) beside the course's packages
#   hub/node_modules               configurable-http-proxy from npm, exactly as hub/package-lock.json pins it
#   /opt/attention-hub/<id>/       this checkout's users' tree: the Python and the course code the users' servers run
#                                  (tools/hub_users_python.sh); the checkout itself is closed to other users
#   /srv/nbgrader/exchange         nbgrader's exchange: every user writes, the sticky bit keeps them apart
#   the Linux users (--create)     new ones with private homes and random passwords (/var/lib/attention-hub/passwords)
#   /srv/attention-course/data     the course world students read; its test answers and seed stay root's, in
#                                  /var/lib/attention-hub/grader_only
#   ~INSTRUCTOR/attention-course   the instructor's course folder: solutions/, nbgrader_config.py, the release
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd -P)
STATE=/var/lib/attention-hub          # root only: passwords, the world's answers and seed
EXCHANGE=/srv/nbgrader/exchange       # nbgrader's default exchange root (hub/*/nbgrader_config.py point at it)
DATA=/srv/attention-course/data       # the students' COURSE_DATA_DIR on the hub
COURSE_FOLDER=attention-course        # in the instructor's home; hub/jupyterhub_config.py opens it for them

CREATE=no
if [ "${1:-}" = --create ]; then CREATE=yes; shift; fi
INSTRUCTOR=${1:-instructor}
shift || true
STUDENTS=("$@")
[ ${#STUDENTS[@]} -gt 0 ] || STUDENTS=(student1 student2)

say() { echo "hub setup: $*"; }
[ "$(id -u)" = 0 ] || { echo "hub setup: run as root (it creates users and folders under /srv and /opt)" >&2; exit 1; }
[ -x .venv/bin/python ] || { echo "hub setup: no .venv yet: run make .venv/.installed first" >&2; exit 1; }
for tool in useradd chpasswd setpriv npm node; do
    command -v "$tool" >/dev/null ||
        { echo "hub setup: $tool is missing (Debian packages: passwd, util-linux, nodejs, npm)" >&2; exit 1; }
done
# a name that is no account is a typo until said otherwise: refused before anything changes
missing=()
for user in "$INSTRUCTOR" "${STUDENTS[@]}"; do id -u "$user" >/dev/null 2>&1 || missing+=("$user"); done
if [ ${#missing[@]} -gt 0 ] && [ "$CREATE" = no ]; then
    echo "hub setup: no such account: ${missing[*]} (check the names; to create them: make hub HUB_CREATE_USERS=1," \
         "or tools/hub_setup.sh --create)" >&2
    exit 1
fi
# one setup at a time on this machine (make test's and a test's may overlap)
install -d -m 700 "$STATE"
exec 8>"$STATE/setup.lock"
flock 8

# JupyterHub itself runs as root from .venv, with the `hub` extra: make's .venv has it, an older one may not
if ! .venv/bin/python -c "import jupyterhub, pamela" 2>/dev/null; then
    say "installing the hub extra into .venv"
    .venv/bin/python -m pip install --quiet -e '.[hub]'
fi

# the proxy: npm ci installs exactly the lock file's tree; skipped when that version is in place
want=$(sed -n 's/.*"configurable-http-proxy": "\(.*\)".*/\1/p' hub/package.json)
have=$(hub/node_modules/.bin/configurable-http-proxy --version 2>/dev/null || true)
if [ "$have" != "$want" ]; then
    say "installing configurable-http-proxy $want with npm"
    npm ci --prefix hub --no-audit --no-fund --loglevel=error
fi

bash tools/hub_users_python.sh
# the checkout holds what no student may read (solutions/, tests/, .git): closed to everyone but its owner; the users
# run the course from the tree above, and the grader's sandbox binds what it needs at the same paths
if [ -n "$(find "$REPO" -maxdepth 0 -perm /g+rwx,o+rwx)" ]; then
    chmod go-rwx "$REPO"
    say "closed $REPO to other users (chmod go-rwx): the hub's users run the course from" \
        "$(.venv/bin/python hub/machine.py tree)"
fi
if setpriv --reuid=65534 --regid=65534 --clear-groups -- /bin/sh -c 'test -r "$1"' sh "$REPO/nbgrader_config.py"; then
    echo "hub setup: other users can still read $REPO (an ACL?): they would read solutions/ (remove what grants it)" >&2
    exit 1
fi

# nbgrader's exchange: release, submit and feedback pass through it; nbgrader sets each course folder's own modes
mkdir -p "$EXCHANGE"
chmod 1777 "$EXCHANGE"
chmod 755 "$(dirname "$EXCHANGE")"

# the users: a group of their own each, home folders private (students never read each other's work); an existing
# account is left as it is, with a word if others can read its home
install -d -m 700 "$STATE"
touch "$STATE/passwords" && chmod 600 "$STATE/passwords"
for user in "$INSTRUCTOR" "${STUDENTS[@]}"; do
    if ! id -u "$user" >/dev/null 2>&1; then  # (only with --create: refused above otherwise)
        say "creating user $user"
        useradd --create-home --user-group --shell /bin/bash "$user"
        chmod 700 "$(getent passwd "$user" | cut -d: -f6)"
    fi
    home=$(getent passwd "$user" | cut -d: -f6)
    if [ -n "$(find "$home" -maxdepth 0 -perm /g+r,o+r)" ]; then
        say "warning: others can read $home: other users could read $user's work (chmod 700 $home)"
    fi
    # a password only for an account without one (a new one): an existing account keeps its own
    case "$(getent shadow "$user" | cut -d: -f2)" in "" | '!'* | '*'*) has_password=no ;; *) has_password=yes ;; esac
    if [ "$has_password" = no ] && ! grep -q "^$user " "$STATE/passwords"; then
        password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
        echo "$user:$password" | chpasswd
        echo "$user $password" >> "$STATE/passwords"
    fi
done

# the course world: made once, with a secret seed; students read the data, only root reads the answers
if [ ! -f "$DATA/wiki.txt" ]; then
    say "writing the course world to $DATA"
    install -d -m 700 "$STATE/grader_only"
    .venv/bin/python -c "import secrets; print(secrets.token_hex(16))" > "$STATE/grader_only/world-seed.txt"
    mkdir -p "$DATA"
    .venv/bin/python -m course_lib world --out "$DATA" --answers-out "$STATE/grader_only/birth_test.tsv" \
        --seed "$(cat "$STATE/grader_only/world-seed.txt")" >/dev/null
fi
chmod -R a+rX "$(dirname "$DATA")"

# the instructor's course folder, made once (it is theirs from then on): the authoring source, the config, the
# release, and links that let docs/grading.md's commands run from it unchanged (as root): .venv, data/course-world
home=$(getent passwd "$INSTRUCTOR" | cut -d: -f6)
course="$home/$COURSE_FOLDER"
if [ ! -e "$course" ]; then
    say "making the course folder $course"
    mkdir -p "$course/data"
    cp -r "$REPO/solutions" "$REPO/notebooks" "$REPO/nbgrader_config.py" "$course/"
    ln -s "$REPO/.venv" "$course/.venv"
    ln -s "$DATA" "$course/data/course-world"
    cp -r "$STATE/grader_only" "$course/grader_only"
    chown -R -h "$INSTRUCTOR:" "$course"  # -h: the links themselves, never .venv or the data they point at
    chmod 700 "$course/grader_only"
fi

say "ready: $INSTRUCTOR (instructor), ${STUDENTS[*]} (students); passwords in $STATE/passwords"
