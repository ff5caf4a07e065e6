#!/bin/sh
# Pulls the pinned models, refuses any whose manifest digest differs from models.lock.json, and
# builds platform-chat / platform-embed from the Modelfiles. Run on the GPU host with the Ollama
# server up:   sh install-models.sh [--llama]     (--llama: build platform-chat from the alternative)
# Needs curl and jq.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lock="$here/../models.lock.json"
base="http://127.0.0.1:11434"
choice=primary
modelfile="$here/Modelfile.chat"
if [ "${1:-}" = "--llama" ]; then choice=alternative; modelfile="$here/Modelfile.chat-llama"; fi

pull_pinned() {
  tag=$1
  want=$2
  ollama pull "$tag"
  got=$(curl -fsS "$base/api/tags" | jq -r --arg t "$tag" '.models[] | select(.name == $t) | .digest')
  if [ "$got" != "$want" ]; then
    echo "REFUSED: $tag has digest '$got', models.lock.json pins '$want'. Not building from it." >&2
    ollama rm "$tag" >/dev/null 2>&1 || true
    exit 1
  fi
  echo "ok: $tag @ $got"
}

pull_pinned "$(jq -r ".chat.$choice.ollama.tag" "$lock")" "$(jq -r ".chat.$choice.ollama.digest" "$lock")"
pull_pinned "$(jq -r '.embedding.primary.ollama.tag' "$lock")" "$(jq -r '.embedding.primary.ollama.digest' "$lock")"

ollama create "$(jq -r '.chat.servedName' "$lock")" -f "$modelfile"
ollama create "$(jq -r '.embedding.servedName' "$lock")" -f "$here/Modelfile.embed"
echo "built platform-chat ($choice) and platform-embed; set INFERENCE_MODEL=platform-chat on the API"
