# Sourced by the run and test scripts: gets Multi30k into data/multi30k, copying it from
# $NMTZOO_MULTI30K or ../shared/data/multi30k beside the project when present, else downloading it.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
local_copy="${NMTZOO_MULTI30K:-$root/../shared/data/multi30k}"
if [[ -d "$local_copy" ]]; then
  "$root/scripts/get-data.sh" --from "$local_copy"
else
  "$root/scripts/get-data.sh"
fi
