"""test_bindings.py — the Python package (python/parley) over the built libparley.so.

A tiny model trained through parley.train on tests/nlu/train/tiny/synonyms.yaml (about a
second): its progress reaches the callback in order and a true return stops the run (the
result says so), an exception in the callback comes back out of train; the model parses
through parley.Model, one text or several, the synonym's canonical value beside the span
typed; a pipeline of that model and a dialog (a response with a condition) answers through
parley.Pipeline, turn ids and replies matching, its action answered by Python (reply, slots,
the domain's reply, failures kept); every error is a ParleyError with parley's
own message. The Python example of docs/python.md runs as written in a copy of the
repository's samples with the build's pizza model. Run by meson (tests/python/meson.build) with
PARLEY_LIBRARY, PYTHONPATH, PARLEY_SOURCE_ROOT and PARLEY_PIZZA_MODEL set.
"""
import os
import re
import shutil
import subprocess
import sys

import pytest

import parley

ROOT = os.environ["PARLEY_SOURCE_ROOT"]
TINY = os.path.join(ROOT, "tests", "nlu", "train", "tiny", "synonyms.yaml")
SMALL = dict(layers=2, hidden=64, heads=2, intermediate=128, max_positions=32, epochs=40,
             batch=8, lr=3e-3, augment=4, builtin="off", threads=1)


def test_explain():
    text = parley.explain(TINY, builtin="off", threads=1)
    assert "profile of" in text and "the recipe's values:" in text and "\n  builtin 0\n" in text
    with pytest.raises(ValueError):
        parley.explain(TINY, sparse="maybe")


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("model") / "tiny")
    events = []
    res = parley.train(TINY, out, progress=lambda p: events.append((p.event, p.step)), **SMALL)
    assert res["epochs_done"] == 40 and not res["stopped"]
    assert events[0][0] == "start" and events[-1][0] == "epoch"
    steps = [s for e, s in events if e == "step"]
    assert steps == list(range(1, len(steps) + 1)) and res["steps_done"] == len(steps)
    return out


def test_parse(model):
    with parley.Model(model, device="cpu", threads=1) as nlu:
        r = nlu.parse("weather in NYC")
        assert r.intent == "get_weather" and 0 < r.confidence <= 1
        assert r.ranking[0] == (r.intent, pytest.approx(r.confidence))
        city = [s for s in r.slots if s.slot == "city"]
        assert len(city) == 1 and city[0].value == "NYC" and city[0].canonical == "new york"
        assert r.text.encode()[city[0].start:city[0].end] == b"NYC"
        assert r.tags == ["O", "O", "B-city"]
        many = nlu.parse_many(["hello", "weather in paris"])
        assert [m.intent for m in many] == ["greet", "get_weather"]
        assert [(s.value, s.canonical) for s in many[1].slots] == [("paris", "paris")]
        assert nlu.parse_many([]) == []


def test_errors(model, tmp_path):
    with pytest.raises(parley.ParleyError) as e:
        parley.Model(str(tmp_path / "nowhere"))
    assert e.value.status != 0 and "config.json" in str(e.value)
    assert e.value.name.startswith("PARLEY_ERR_")
    nlu = parley.Model(model, device="cpu", threads=1)
    nlu.close()
    with pytest.raises(parley.ParleyError, match="closed"):
        nlu.parse("hello")
    with pytest.raises(TypeError):
        parley.Model(model).parse(b"bytes")
    with pytest.raises(parley.ParleyError, match="FILE|yaml|nlu"):
        parley.train(str(tmp_path / "missing.yaml"), str(tmp_path / "m"))
    with pytest.raises(TypeError, match="unknown option 'epoch'"):
        parley.train(TINY, str(tmp_path / "m"), epoch=3)


def test_train_stop_and_raise(tmp_path):
    seen = []

    def stop_at_3(p):
        seen.append(p.step)
        return p.event == "step" and p.step == 3

    res = parley.train(TINY, str(tmp_path / "stopped"), progress=stop_at_3, **SMALL)
    assert res["stopped"] and res["steps_done"] == 3 and max(seen) == 3

    def boom(p):
        if p.event == "step":
            raise RuntimeError("from the callback")

    with pytest.raises(RuntimeError, match="from the callback"):
        parley.train(TINY, str(tmp_path / "raised"), progress=boom, **SMALL)


DOMAIN = """
intents: [get_weather, greet]
slots:
  city: { type: text }
responses:
  utter_weather:
    - condition: [{ type: slot, name: city, value: null }]
      text: "Which city?"
    - text: "Sunny in {city}."
  utter_greet: ["Hello!"]
  utter_default: ["Sorry?"]
actions:
  greet_user: { reply: utter_greet }   # said while the application registers none
rules:
  - intent: get_weather
    reply: utter_weather
  - intent: greet
    action: greet_user
"""

GRAPH = """
name: weather
nodes:
  - name: api
    kind: api
    inputs: { reply: dialog.reply }
  - name: nlu
    kind: nlu.bert
    inputs: { text: api.text }
    params: { model: %s, device: cpu, threads: 1, max_queue_delay_us: 500 }
  - name: dialog
    kind: dialog.frames
    inputs: { nlu: nlu.result }
    params: { domain: domain.yaml, store: weather.db }
"""


def test_pipeline(model, tmp_path):
    (tmp_path / "domain.yaml").write_text(DOMAIN)
    (tmp_path / "graph.yaml").write_text(GRAPH % model)
    with parley.Pipeline(str(tmp_path / "graph.yaml")) as bot:
        hello = bot.submit("ann", "hello")
        weather = bot.submit("bob", "what is the weather")
        replies = {r.id: r for r in (bot.poll(30), bot.poll(30))}
        assert replies[hello].reply == "Hello!" and replies[hello].user == "ann"
        assert replies[weather].reply == "Which city?" and replies[weather].error == ""
        # The synonym's canonical value reaches the dialog's slot.
        r = bot.ask("bob", "weather in the big apple", timeout=30)
        assert r.reply == "Sunny in new york." and r.slots == {"city": "new york"}
        assert r.intent == "get_weather" and r.latency_ms > 0
        assert bot.poll(0) is None
        with pytest.raises(parley.ParleyError) as e:
            bot.submit("", "hello")
        assert e.value.status == 1 and "user" in str(e.value)
    with pytest.raises(parley.ParleyError, match="closed"):
        bot.submit("ann", "hello")
    (tmp_path / "bad.yaml").write_text(GRAPH.replace("kind: api", "kind: apii") % model)
    with pytest.raises(parley.ParleyError, match=r"bad\.yaml:\d+:\d+: .*apii"):
        parley.Pipeline(str(tmp_path / "bad.yaml"))


def test_docs_example(tmp_path):
    """The ```python block of docs/python.md that imports parley (the page's other block is a
    fragment), run in a copy of samples/ with the build's pizza model as models/pizza (what
    the README trains)."""
    page = open(os.path.join(ROOT, "docs", "python.md")).read()
    blocks = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "import parley" in b]
    assert len(blocks) == 1 and len(blocks[0].strip().splitlines()) <= 22
    shutil.copytree(os.path.join(ROOT, "samples"), tmp_path / "samples")
    shutil.copytree(os.environ["PARLEY_PIZZA_MODEL"], tmp_path / "models" / "pizza")
    env = dict(os.environ, PARLEY_ENCODER="none")
    p = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    lines = p.stdout.splitlines()
    assert lines[0].startswith("order_pizza") and "('size', 'big', 'large')" in lines[0], p.stdout
    assert any("epoch 1 of" in l for l in lines), p.stdout
    assert os.path.exists(tmp_path / "models" / "pizza2" / "model.safetensors")


def test_readme_example(tmp_path):
    """The README's ```python block (its newcomer's path, "Embed it"), with the build's pizza
    model as models/pizza (what run.sh demo trains)."""
    readme = open(os.path.join(ROOT, "README.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(blocks) == 1 and "import parley" in blocks[0]
    shutil.copytree(os.environ["PARLEY_PIZZA_MODEL"], tmp_path / "models" / "pizza")
    p = subprocess.run([sys.executable, "-c", blocks[0]], cwd=tmp_path, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.startswith("order_pizza") and "('size', 'large')" in p.stdout, p.stdout


def test_actions(model, tmp_path):
    (tmp_path / "domain.yaml").write_text(DOMAIN)
    (tmp_path / "graph.yaml").write_text(GRAPH % model)
    seen = []

    def greet(a):
        seen.append((a.action, a.user, a.intent, a.turn, a.slots))
        return {"reply": "Hello %s from Python, {city} it is." % a.user, "slots": {"city": "oslo"}}

    with parley.Pipeline(str(tmp_path / "graph.yaml")) as bot:
        bot.register_action("greet_user", greet)
        r = bot.ask("cy", "hello", timeout=30)
        assert r.reply == "Hello cy from Python, oslo it is." and r.slots == {"city": "oslo"}
        assert seen == [("greet_user", "cy", "greet", 1, {})]
        assert bot.ask("cy", "what is the weather", timeout=30).reply == "Sunny in oslo."
        # A slot the domain lacks: parley's own error fails the turn, and is kept.
        bot.register_action("greet_user", lambda a: {"slots": {"nope": "x"}})
        r = bot.ask("dee", "hello", timeout=30)
        assert r.status != 0 and "greet_user" in r.error and r.reply == ""
        name, err = bot.action_errors[-1]
        assert name == "greet_user" and isinstance(err, parley.ParleyError) and "nope" in str(err)

        def boom(a):
            raise ValueError("from the action")

        bot.register_action("greet_user", boom)
        r = bot.ask("eve", "hello", timeout=30)
        assert r.status != 0 and isinstance(bot.action_errors[-1][1], ValueError)
        bot.register_action("greet_user", lambda a: None)   # the domain's reply
        assert bot.ask("fay", "hello", timeout=30).reply == "Hello!"
        with pytest.raises(parley.ParleyError) as e:
            bot.register_action("not_declared", greet)
        assert "not_declared" in str(e.value)
