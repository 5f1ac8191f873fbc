# SPDX-License-Identifier: MIT
# Sourced by the run and test scripts: gets Multi30k into data/multi30k (scripts/get-data.sh:
# copied from $NMTZOO_MULTI30K or ../shared/data/multi30k beside the project when present, else
# downloaded).
"$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/scripts/get-data.sh"
