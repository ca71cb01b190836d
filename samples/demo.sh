#!/usr/bin/env bash
# demo.sh — the main job: train the pizza bot's NLU model from samples/pizza/nlu.yaml on the
# CPU, then parse a few utterances with it. Run through `bash run.sh demo`, which builds
# parley first; the model goes to models/pizza (reused if it is there: delete it to retrain).
set -euo pipefail
cd "$(dirname "$0")/.."
parley=${1:-build/sdk/cli/parley}
model=models/pizza

if [ ! -f "$model/model.safetensors" ]; then
    echo "== training the pizza NLU model from samples/pizza/nlu.yaml"
    "$parley" train --data samples/pizza/nlu.yaml --out "$model" --seed 1
fi

echo "== parsing utterances with $model"
"$parley" nlu predict --model "$model" <<'TXT'
hi there
i'd like two large pizzas with mushrooms and extra cheese
deliver it to 48 Oak Avenue please
actually make it a medium
what toppings do you have?
cancel my order
thanks, bye
TXT
