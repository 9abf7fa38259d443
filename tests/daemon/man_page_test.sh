#!/usr/bin/env bash
# docs/tidemark.1 against the CLI: every command `tidemark --help` lists
# has its own section (.SS), every option of every command is named in the
# page, and groff renders it without a warning.
# Usage: man_page_test.sh TIDEMARK_BINARY MAN_PAGE
set -euo pipefail
tidemark=$1
page=$2
passed=0
failed=0
check() {  # check NAME COMMAND...: one assertion
  local name=$1
  shift
  if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $name" >&2; fi
}

# The page with roff's escaped hyphens as plain ones.
text=$(sed 's/\\-/-/g' "$page")
commands=$("$tidemark" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
check "tidemark --help lists commands" test -n "$commands"
for command in $commands; do
  check "a section for $command" grep -Eq "^\.SS $command( |$)" <<<"$text"
  for option in $("$tidemark" "$command" --help | grep -Eo '^ +(-[a-z],)?--[a-z-]+' | sed 's/.*--/--/'); do
    check "$command's $option is named" grep -q -- "$option" <<<"$text"
  done
done
warnings=$(groff -man -ww -z "$page" 2>&1)
check "groff renders it without warnings${warnings:+: $warnings}" test -z "$warnings"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
