#!/usr/bin/env bash
# demo.sh — the main job: train the pizza bot's NLU model from samples/pizza/nlu.yaml on the
# CPU, then hold a scripted conversation with the whole bot (samples/pizza/pipeline.yaml:
# text.stdin -> nlu.bert -> dialog.frames -> text.stdout), printing each turn and reply.
# Run through `bash run.sh demo`, which builds and installs parley first. The model goes to
# models/pizza (reused if it is there: delete it to retrain); the conversation store is a
# fresh temporary SQLite file, so every run starts a new conversation.
set -euo pipefail
cd "$(dirname "$0")/.."
parley=${1:-build/sdk/cli/parley}
model=models/pizza

if [ ! -f "$model/model.safetensors" ]; then
    echo "== training the pizza NLU model from samples/pizza/nlu.yaml"
    start=$(date +%s)
    "$parley" train --data samples/pizza/nlu.yaml --out "$model" --seed 1
    echo "== trained in $(( $(date +%s) - start )) s"
fi

store=$(mktemp -d)/pizza.db
trap 'rm -rf "$(dirname "$store")"' EXIT
echo "== a conversation with samples/pizza/pipeline.yaml (store: $store)"
"$parley" chat samples/pizza/pipeline.yaml --verbose --set "dialog.store=$store" <<'TXT'
hi there
i'd like two large pizzas with mushrooms and extra cheese
what toppings do you have?
deliver it to 48 Oak Avenue please
no
actually make it a medium
yes
thanks, bye
TXT
