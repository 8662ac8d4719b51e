# What tools/bootstrap_env.sh says while it works (sourced by it; bash).
#
# Each step says when it starts and how long it took; while a long command runs, its telling
# lines (pip's Collecting, Downloading, Installing; make's [ NN%] build steps) are shown with
# the step's seconds so far: on a terminal one line redrawn in place, to a file or a pipe (a CI
# log) the first at once, then one plain line at most every BOOTSTRAP_PROGRESS_PERIOD seconds
# (default 10).

log() { printf '[bootstrap] %s\n' "$*" >&2; }

# The lines of a command's output worth showing while it runs.
telling_line() {
  case $1 in
    Collecting\ * | Downloading\ * | Installing\ * | Building\ * | Obtaining\ * \
      | Successfully\ * | Preparing\ * | '['*'%]'*) return 0 ;;
    *) return 1 ;;
  esac
}

# show_progress NAME LOG: reads a command's output on stdin, keeps all of it in the file LOG
# (for a failure's report) and shows its telling lines as progress of step NAME.
show_progress() {
  local name=$1 output_log=$2 line start=$SECONDS
  local period=${BOOTSTRAP_PROGRESS_PERIOD:-10} redrawn=false
  local shown=$((SECONDS - period))  # the first telling line is shown at once
  : > "$output_log"
  while IFS= read -r line; do
    printf '%s\n' "$line" >> "$output_log"
    telling_line "$line" || continue
    if [[ -t 2 ]]; then
      # One line, cut to the terminal's width so that it never wraps.
      printf '\r\033[K%.*s' "$(( ${COLUMNS:-80} - 1 ))" \
        "[bootstrap] $name, $((SECONDS - start)) s: $line" >&2
      redrawn=true
    elif (( SECONDS - shown >= period )); then
      shown=$SECONDS
      log "$name, $((SECONDS - start)) s: $line"
    fi
  done
  if $redrawn; then
    printf '\r\033[K' >&2
  fi
}
