#!/usr/bin/env bash
# Every shell script in the repository passes `shellcheck -x` at every
# severity: the files named *.sh or *.bash, those whose first line is a sh,
# bash, dash or ksh shebang (scripts/test, .ci/run, ...), and those whose
# first line is a `# shellcheck shell=` directive (sourced libraries).
# Scripts are found anew on each run, so a new one is checked without
# being listed anywhere. Fails with every finding, one a line
# (file:line:column: level: message [SCnnnn]).
# Usage: shellcheck_test.sh [SOURCE_DIR]   (default: this checkout)
set -euo pipefail
self=$(realpath "$0")
root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
cd "$root"
command -v shellcheck >/dev/null ||
  { echo "shellcheck is not installed (scripts/test installs it: ensure_packages)" >&2; exit 1; }
# Options from the environment would change what is checked.
unset SHELLCHECK_OPTS

# The repository's files: git's tracked and untracked-but-not-ignored ones,
# which leaves out build folders; without git, every file outside .git and
# the top-level build*/ folders.
candidates() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z --cached --others --exclude-standard
  else
    find . \( -path ./.git -o -path './build*' \) -prune -o -type f -printf '%P\0'
  fi
}

shebang='^#![[:space:]]*/([^[:space:]]*/)?(env[[:space:]]+(-S[[:space:]]+)?)?(sh|bash|dash|ksh)([[:space:]]|$)'
scripts=()
while IFS= read -r -d '' file; do
  [ -f "$file" ] || continue  # deleted but not yet committed
  case "$file" in
    *.sh | *.bash) scripts+=("$file"); continue ;;
  esac
  first=
  IFS= read -r first <"$file" 2>/dev/null || true
  if [[ $first =~ $shebang || $first == "# shellcheck shell="* ]]; then
    scripts+=("$file")
  fi
done < <(candidates | sort -z)

# The search itself must work: it finds this script (by name and shebang)
# and scripts/test (by its shebang alone).
self=$(realpath --relative-to="$root" "$self")
for expected in "$self" scripts/test; do
  printf '%s\n' "${scripts[@]}" | grep -qxF "$expected" ||
    { echo "FAIL: the search for shell scripts missed $expected; it found: ${scripts[*]}" >&2; exit 1; }
done

# And shellcheck must report what it is meant to: an unquoted argument to
# a cd whose failure is not handled.
canary=$(mktemp)
trap 'rm -f "$canary"' EXIT
# The canary's $1 is literal text, not this script's argument.
# shellcheck disable=SC2016
printf '#!/bin/sh\ncd $1\n' >"$canary"
canary_findings=$(shellcheck -x --severity=style -f gcc "$canary" || true)
for code in SC2164 SC2086; do
  grep -q "\[$code\]" <<<"$canary_findings" ||
    { echo "FAIL: shellcheck did not report $code on 'cd \$1'; it said: $canary_findings" >&2; exit 1; }
done

echo "shellcheck $(shellcheck --version | sed -n 's/^version: //p') on ${#scripts[@]} scripts:"
printf '  %s\n' "${scripts[@]}"
if findings=$(shellcheck -x --severity=style -f gcc "${scripts[@]}" 2>&1); then
  echo "no findings"
else
  printf '%s\n' "$findings"
  echo "FAIL: $(grep -c ': [a-z]*: .*\[SC[0-9]*\]$' <<<"$findings" || true) shellcheck findings (fix them, or disable one" \
       "with '# shellcheck disable=SCnnnn' and a reason on the line above)"
  exit 1
fi
