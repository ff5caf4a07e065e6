#!/bin/sh
# ExecStartPre of caddy.service (and run by hand before `docker compose up`): both keys set and
# long enough, so the bearer check can never be satisfied by an empty key.
set -eu
for name in INFERENCE_HOSTNAME INFERENCE_API_KEY INFERENCE_API_KEY_NEXT; do
  eval "value=\${$name:-}"
  [ -n "$value" ] || { echo "$name is not set" >&2; exit 1; }
done
[ "${#INFERENCE_API_KEY}" -ge 32 ] || { echo "INFERENCE_API_KEY must be at least 32 characters" >&2; exit 1; }
[ "${#INFERENCE_API_KEY_NEXT}" -ge 32 ] || { echo "INFERENCE_API_KEY_NEXT must be at least 32 characters" >&2; exit 1; }
echo "inference proxy environment ok"
