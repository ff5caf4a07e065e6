#!/bin/sh
# Waits for the local Ollama server and loads both platform models into GPU memory (keep-alive -1
# keeps them there). Run by ollama.service after start; harmless to run by hand.
set -eu
base="http://127.0.0.1:11434"
i=0
until curl -fsS "$base/api/version" >/dev/null 2>&1; do
  i=$((i + 1))
  [ "$i" -gt 60 ] && { echo "ollama did not start within 60 s" >&2; exit 1; }
  sleep 1
done
curl -fsS "$base/api/chat" -d '{"model":"platform-chat","messages":[],"keep_alive":-1}' >/dev/null
curl -fsS "$base/api/embed" -d '{"model":"platform-embed","input":"warm up","keep_alive":-1}' >/dev/null
echo "platform-chat and platform-embed loaded"
