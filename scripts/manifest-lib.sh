# Shared by scripts/native-rate.sh and scripts/corpus-native-rate.sh (sourced): reading
# and updating `key: value` manifests (docs/contract.md) and naming a run's outcome.

mf_get() { # manifest key -> value (trimmed), empty if absent
  sed -n "s/^$2:[[:space:]]*//p" "$1" | head -n1 | sed 's/[[:space:]]*$//'
}
mf_set() { # manifest key value: replace the line or append it
  local f="$1" k="$2" v="$3" tmp
  tmp="$(mktemp)"
  if grep -q "^$k:" "$f"; then
    awk -v k="$k" -v v="$v" 'BEGIN{kl=k":"} substr($0,1,length(kl))==kl {print k": "v; next} {print}' "$f" >"$tmp"
  else
    cat "$f" >"$tmp"; printf '%s: %s\n' "$k" "$v" >>"$tmp"
  fi
  cat "$tmp" >"$f"; rm -f "$tmp"
}
# manifest widen runs failures kinds rate desc timeout: writes a measurement's keys
# (native_* or widened_*, and measured_on or widened_measured_on with the load at the end).
mf_record_rates() {
  local f="$1" p=native on=measured_on
  if [ "$2" -eq 1 ]; then p=widened; on=widened_measured_on; fi
  mf_set "$f" "${p}_runs" "$3"
  mf_set "$f" "${p}_failures" "$4"
  mf_set "$f" "${p}_failure_kinds" "$5"
  mf_set "$f" "${p}_failure_rate" "$6"
  mf_set "$f" "$on" "$7, $(cut -d' ' -f1 /proc/loadavg) at end, timeout $8"
}
classify() { # exit status of timeout(1) -> outcome: deadlock (124), signal SIGxxx, exit N
  local st="$1"
  if [ "$st" -eq 124 ]; then echo deadlock
  elif [ "$st" -gt 128 ] && [ "$st" -lt 160 ]; then echo "signal SIG$(kill -l $((st - 128)))"
  else echo "exit $st"
  fi
}
