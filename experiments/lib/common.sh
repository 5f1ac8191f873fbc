# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# Sourced first by every script in experiments/ and experiments/measure/, so that they find the
# project, read their arguments and report errors the same way:
#
#   root                the project folder, found from this file's place, so a script works
#                       from any working directory
#   script              the script's file name, which starts every message it prints
#   usage               prints the script's leading comment block: its documentation
#   die MESSAGE         prints "script: MESSAGE" on stderr and exits 1 (usage_error: exits 2)
#   parse_args SPEC "$@"
#                       reads the command line. SPEC lists the options: `name:` takes a value
#                       into $name, `name` is a switch that sets $name to 1, `name+` may repeat
#                       and appends `--name VALUE` to the array name_args, ready to pass on. A
#                       dash in an option is an underscore in its variable (--no-python sets
#                       $no_python). A variable set before the call is the option's default;
#                       otherwise a value defaults to empty and a switch to 0. -h/--help prints
#                       usage and exits; an unknown option is an error; -- ends the options.
#                       The other arguments are kept in order in the array args.
#   expect_args MIN [MAX]
#                       exits with a usage error unless args holds MIN to MAX arguments (MAX
#                       defaults to MIN; "any" sets no limit)
#   positive_integer NAME VALUE
#                       exits with a usage error unless VALUE is a positive integer
#   try_lock FILE       takes an exclusive lock on FILE without waiting, held in the caller's
#                       (local) variable lock and inherited by its children; returns 1 if another
#                       process holds it
#   checkpoint_argument sets checkpoint to the optional first argument, by default the quickstart
#                       run's best checkpoint, and exits with a usage error when it is no file
#   start_server LOG COMMAND...
#                       runs an nmtzoo-serve command line in the background, logging to LOG, and
#                       waits until it listens: sets server (its pid) and port
#   json_row FILE TEMPLATE [VALUES...]
#                       prints TEMPLATE (Python's str.format) filled with VALUES ({0}, {1}...) and
#                       the keys of the JSON object in FILE ({requests_per_second:.1f})
#   prepare_workspace   gets Multi30k into data/multi30k (scripts/data-dir.sh), builds build/bin
#                       (scripts/build.sh) unless the script runs another build ($frozen_bin, a
#                       copy of build/bin that must not change under its runs), sets apps to the
#                       folder of the apps to run, and enters root

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
script="$(basename "$0")"

usage() {
  sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
}

die() {
  echo "$script: $*" >&2
  exit 1
}

usage_error() {
  echo "$script: $* (--help describes the arguments)" >&2
  exit 2
}

parse_args() {
  local _spec=" $1 " _word _name _var _arg
  shift
  for _word in $_spec; do
    _name="${_word%[:+]}"
    _var="${_name//-/_}"
    case "$_word" in
      *:) [[ -v "$_var" ]] || printf -v "$_var" '%s' "" ;;
      *+) eval "${_var}_args=()" ;;
      *) [[ -v "$_var" ]] || printf -v "$_var" '%s' 0 ;;
    esac
  done
  args=()
  while (($#)); do
    _arg="$1"
    shift
    case "$_arg" in
      -h | --help) usage; exit 0 ;;
      --) args+=("$@"); break ;;
      --?*)
        _name="${_arg#--}"
        _var="${_name//-/_}"
        if [[ "$_spec" == *" $_name: "* || "$_spec" == *" $_name+ "* ]]; then
          (($#)) || usage_error "$_arg needs a value"
          if [[ "$_spec" == *" $_name: "* ]]; then
            printf -v "$_var" '%s' "$1"
          else
            eval "${_var}_args+=(\"\$_arg\" \"\$1\")"
          fi
          shift
        elif [[ "$_spec" == *" $_name "* ]]; then
          printf -v "$_var" '%s' 1
        else
          usage_error "unknown option '$_arg'"
        fi
        ;;
      *) args+=("$_arg") ;;
    esac
  done
}

expect_args() {
  local count="${#args[@]}" max="${2:-$1}"
  [[ "$max" == any ]] && max="$count"
  ((count >= $1 && count <= max)) && return 0
  if (($1 == max)); then usage_error "expects $1 argument(s), got $count"; fi
  usage_error "expects $1 to $max arguments, got $count"
}

try_lock() {
  exec {lock}> "$1"
  flock -n "$lock" && return 0
  exec {lock}>&-
  return 1
}

positive_integer() {
  [[ "$2" =~ ^[1-9][0-9]*$ ]] || usage_error "$1 expects a positive integer, got '$2'"
}

prepare_workspace() {
  # shellcheck source=../../scripts/data-dir.sh
  source "$root/scripts/data-dir.sh"
  [[ -n "${frozen_bin:-}" ]] || "$root/scripts/build.sh" >/dev/null
  apps="${frozen_bin:-build/bin}"
  cd "$root" || exit 1
}

start_server() {
  local log="$1"
  shift
  "$@" > "$log" 2>&1 &
  server=$!
  for _ in $(seq 300); do grep -q "listening on" "$log" && break; sleep 0.1; done
  port="$(sed -nE 's#.*listening on http://127.0.0.1:([0-9]+)/.*#\1#p' "$log")"
  [[ -n "$port" ]] || die "$1 did not start: $(cat "$log")"
}

json_row() {
  /usr/bin/python3 -c 'import json, sys; print(sys.argv[2].format(*sys.argv[3:], **json.load(open(sys.argv[1]))))' "$@"
}

checkpoint_argument() {
  checkpoint="${args[0]:-runs/multi30k_quickstart/checkpoints/checkpoint_best.pt}"
  [[ -f "$checkpoint" ]] || usage_error "no checkpoint '$checkpoint' (run scripts/run.sh first)"
}
