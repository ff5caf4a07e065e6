#!/bin/sh
# Checks a GPU host from outside, as the API sees it:   sh smoke.sh https://gpu-1.inference.example.com ollama|openai
# INFERENCE_API_KEY must be set in the environment. Exits non-zero on the first surprise.
set -eu
url=${1:?base URL}
api=${2:?ollama or openai}
key=${INFERENCE_API_KEY:?set INFERENCE_API_KEY}
if [ "$api" = ollama ]; then list=/api/tags; admin=/api/pull; else list=/v1/models; admin=/metrics; fi
status() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
expect() { [ "$1" = "$2" ] || { echo "FAIL: $3 answered $1, expected $2" >&2; exit 1; }; echo "ok: $3 -> $1"; }
expect "$(status "$url$list")" 401 "no bearer"
expect "$(status -H 'Authorization: Bearer wrong' "$url$list")" 401 "wrong bearer"
expect "$(status -H 'Authorization: Bearer ' "$url$list")" 401 "empty bearer"
expect "$(status -H "Authorization: Bearer $key" "$url$list")" 200 "right bearer"
expect "$(status -X POST -H "Authorization: Bearer $key" -d '{}' "$url$admin")" 404 "model management from outside"
curl -fsS -H "Authorization: Bearer $key" "$url$list" | grep -q platform-chat && echo "ok: platform-chat is served" || { echo "FAIL: platform-chat missing" >&2; exit 1; }
