"""parley — the parley library (libparley.so) from Python, through ctypes.

What a program needs to embed parley without writing C: parse utterances with a model
(Model), run a bot's whole pipeline (Pipeline: open, submit, poll, close) with its domain's
actions written in Python (Pipeline.register_action), train a model
with a progress callback that can stop the run (train), and parley's errors as exceptions
(ParleyError, carrying parley's own message). Nothing is compiled at install: the module
loads the shared library at import, from $PARLEY_LIBRARY (a path), else where the system's
loader finds libparley.so (`meson install` puts it there).

Threading is the C API's (parley/nlu.h, parley/pipeline.h, parley/train.h): a Model may be
used from several threads; a Pipeline's submit and poll from any thread; one training run
at a time per process. The library runs without the GIL held, so other Python threads go on
during a parse, a poll or a training step.
"""
import ctypes
import ctypes.util
import os

__all__ = ["ParleyError", "Model", "Pipeline", "train", "version", "Result", "Slot", "Reply",
           "ActionCall"]

_c_str = ctypes.c_char_p
_size = ctypes.c_size_t


def _load():
    path = os.environ.get("PARLEY_LIBRARY") or ctypes.util.find_library("parley")
    try:
        return ctypes.CDLL(path or "libparley.so.0")
    except OSError as e:
        raise ImportError("parley: cannot load libparley (%s); set PARLEY_LIBRARY to its path"
                          % e) from None


_lib = _load()


class ParleyError(Exception):
    """A parley call failed: `status` is its parley_status code, `name` the code's name
    ("PARLEY_ERR_CONFIG: ..."), the message parley's detail (parley_errmsg)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.name = _lib.parley_status_str(status).decode()


def _check(status):
    if status != 0:
        msg = _lib.parley_errmsg()
        raise ParleyError(status, msg.decode("utf-8", "replace") if msg else "")


def _text(b):
    return b.decode("utf-8") if b is not None else None


def _bytes(s, what):
    if not isinstance(s, (str, os.PathLike)):
        raise TypeError("%s must be a string, not %s" % (what, type(s).__name__))
    return os.fsencode(s) if isinstance(s, os.PathLike) else s.encode("utf-8")


# ---- the C structs, field for field as the public headers declare them ------------------

class _NluParams(ctypes.Structure):
    _fields_ = [("threads", ctypes.c_int), ("top_k", ctypes.c_int), ("device", _c_str),
                ("precision", _c_str)]


class _NluIntent(ctypes.Structure):
    _fields_ = [("label", _c_str), ("prob", ctypes.c_float)]


class _NluSlot(ctypes.Structure):
    _fields_ = [("slot", _c_str), ("value", _c_str), ("start", _size), ("end", _size),
                ("word_start", ctypes.c_int), ("word_end", ctypes.c_int), ("canonical", _c_str)]


class _NluResult(ctypes.Structure):
    _fields_ = [("text", _c_str), ("intent", _c_str), ("confidence", ctypes.c_float),
                ("n_top", ctypes.c_int), ("top", ctypes.POINTER(_NluIntent)),
                ("n_slots", ctypes.c_int), ("slots", ctypes.POINTER(_NluSlot)),
                ("n_words", ctypes.c_int), ("tags", ctypes.POINTER(_c_str)),
                ("word_start", ctypes.POINTER(_size)), ("word_end", ctypes.POINTER(_size)),
                ("n_pieces", ctypes.c_int), ("truncated", ctypes.c_int)]


class _Slot(ctypes.Structure):  # parley_slot: a reply's slots and an action's
    _fields_ = [("name", _c_str), ("value", _c_str)]


class _Reply(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("error", _c_str), ("user", _c_str),
                ("id", ctypes.c_uint64), ("turn", ctypes.c_uint64), ("session", _c_str),
                ("text", _c_str), ("reply", _c_str), ("intent", _c_str),
                ("confidence", ctypes.c_float), ("n_slots", _size),
                ("slots", ctypes.POINTER(_Slot)), ("latency_ms", ctypes.c_double),
                ("nlu_ms", ctypes.c_double), ("nlu_batch", ctypes.c_int),
                ("dialog_ms", ctypes.c_double)]


class _PipelineParams(ctypes.Structure):
    _fields_ = [("on_reply", ctypes.c_void_p), ("user_data", ctypes.c_void_p),
                ("queue_size", _size), ("overrides", ctypes.POINTER(_c_str)),
                ("on_event", ctypes.c_void_p), ("text_io", ctypes.c_int)]


class _ActionCtx(ctypes.Structure):
    _fields_ = [("action", _c_str), ("user_id", _c_str), ("session_id", _c_str),
                ("turn_id", ctypes.c_uint64), ("text", _c_str), ("intent", _c_str),
                ("confidence", ctypes.c_float), ("form", _c_str), ("n_slots", _size),
                ("slots", ctypes.POINTER(_Slot))]


_ActionFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_ActionCtx), ctypes.c_void_p,
                             ctypes.c_void_p)


class _Shape(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int) for n in ("layers", "hidden", "heads", "intermediate",
                                            "max_positions")]


class _Scores(ctypes.Structure):
    _fields_ = [(n, ctypes.c_double) for n in ("intent_accuracy", "slot_f1",
                                               "sentence_accuracy")]


class _Progress(ctypes.Structure):
    _fields_ = ([("event", ctypes.c_int), ("pretraining", ctypes.c_int), ("epoch", ctypes.c_int),
                 ("epochs", ctypes.c_int), ("step", ctypes.c_long), ("steps", ctypes.c_long),
                 ("loss", ctypes.c_float), ("lr", ctypes.c_float),
                 ("examples_per_s", ctypes.c_double), ("eta_s", ctypes.c_double),
                 ("has_dev", ctypes.c_int), ("dev", _Scores), ("best", ctypes.c_int),
                 ("has_mlm", ctypes.c_int), ("mlm_loss", ctypes.c_double),
                 ("mlm_accuracy", ctypes.c_double)]
                + [(n, ctypes.c_int) for n in (
                    "n_train", "n_dev", "n_intents", "n_tags", "vocab_size", "n_truncated",
                    "n_augmented", "n_background", "n_builtin", "n_lowercase", "vocab_learned",
                    "heads_replaced")]
                + [("shape", _Shape), ("n_params", _size), ("sparse_sentence", ctypes.c_int),
                   ("sparse_word", ctypes.c_int), ("device", _c_str), ("chosen", _c_str)])


_ProgressFn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(_Progress), ctypes.c_void_p)


class _TrainParams(ctypes.Structure):
    _fields_ = [("data", _c_str), ("dev", _c_str), ("out", _c_str), ("init", _c_str),
                ("vocab", _c_str), ("vocab_size", ctypes.c_int), ("shape", _Shape),
                ("pretrain_epochs", ctypes.c_int), ("epochs", ctypes.c_int),
                ("batch", ctypes.c_int), ("augment", ctypes.c_int), ("lr", ctypes.c_float),
                ("warmup_fraction", ctypes.c_float), ("warmup_steps", ctypes.c_long),
                ("weight_decay", ctypes.c_float), ("dropout", ctypes.c_float),
                ("word_dropout", ctypes.c_float), ("slot_weight", ctypes.c_float),
                ("clip", ctypes.c_float), ("seed", ctypes.c_uint64), ("threads", ctypes.c_int),
                ("device", _c_str), ("precision", _c_str), ("sparse", ctypes.c_int),
                ("sparse_lr", ctypes.c_float), ("intent_encoder", ctypes.c_int),
                ("background", ctypes.c_int), ("builtin", ctypes.c_int), ("resume", ctypes.c_int),
                ("progress", _ProgressFn), ("user_data", ctypes.c_void_p)]


class _TrainResult(ctypes.Structure):
    _fields_ = [("epochs_done", ctypes.c_int), ("steps_done", ctypes.c_long),
                ("stopped", ctypes.c_int), ("stopped_pretraining", ctypes.c_int),
                ("wall_s", ctypes.c_double), ("examples_per_s", ctypes.c_double),
                ("has_dev", ctypes.c_int), ("best_epoch", ctypes.c_int), ("best", _Scores)]


def _declare(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = argtypes


_status = ctypes.c_int
_declare("parley_status_str", _c_str, ctypes.c_int)
_declare("parley_errmsg", _c_str)
_declare("parley_version", _c_str)
_declare("parley_nlu_params_default", _NluParams)
_declare("parley_nlu_open", _status, _c_str, ctypes.POINTER(_NluParams), ctypes.POINTER(ctypes.c_void_p))
_declare("parley_nlu_close", None, ctypes.c_void_p)
_declare("parley_nlu_parse_batch", _status, ctypes.c_void_p, ctypes.POINTER(_c_str), _size,
         ctypes.POINTER(ctypes.POINTER(_NluResult)))
_declare("parley_nlu_result_free", None, ctypes.POINTER(_NluResult))
_declare("parley_pipeline_params_default", _PipelineParams)
_declare("parley_pipeline_open", _status, _c_str, ctypes.POINTER(_PipelineParams),
         ctypes.POINTER(ctypes.c_void_p))
_declare("parley_pipeline_submit_flags", _status, ctypes.c_void_p, _c_str, _c_str, ctypes.c_uint,
         ctypes.POINTER(ctypes.c_uint64))
_declare("parley_pipeline_poll", _status, ctypes.c_void_p, ctypes.c_int,
         ctypes.POINTER(ctypes.POINTER(_Reply)))
_declare("parley_reply_free", None, ctypes.POINTER(_Reply))
_declare("parley_pipeline_close", None, ctypes.c_void_p)
_declare("parley_pipeline_register_action", _status, ctypes.c_void_p, _c_str, _ActionFn,
         ctypes.c_void_p)
_declare("parley_action_reply", _status, ctypes.c_void_p, _c_str)
_declare("parley_action_set_slot", _status, ctypes.c_void_p, _c_str, _c_str)
_declare("parley_train_params_default", _TrainParams)
_declare("parley_train_run", _status, ctypes.POINTER(_TrainParams), ctypes.POINTER(_TrainResult))
_declare("parley_train_explain", _status, ctypes.POINTER(_TrainParams),
         ctypes.POINTER(ctypes.c_void_p))
_declare("parley_train_explain_free", None, ctypes.c_void_p)

_INVALID_ARG, _NOT_FOUND = 1, 6


def version():
    """The library's version string."""
    return _text(_lib.parley_version())


class _Handle:
    """An object of the library behind an opaque handle, freed by close() (or a `with`
    block's end, or when it is collected); a closed one refuses every call."""

    _h = None

    def _handle(self):
        if self._h is None:
            raise ParleyError(1, "the %s is closed" % type(self).__name__.lower())
        return self._h

    def close(self):
        if self._h is not None:
            self._close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # At interpreter exit the module's globals may be gone before the object.
        if _lib is not None:
            self.close()


# ---- parsing ------------------------------------------------------------------------------

class Slot:
    """A slot value found in a text: `slot` its name, `value` the text as typed
    (text[start:end] in bytes of UTF-8), `canonical` what it stands for (a synonym's
    canonical value from the training data, else the same as value)."""

    __slots__ = ("slot", "value", "canonical", "start", "end")

    def __init__(self, slot, value, canonical, start, end):
        self.slot, self.value, self.canonical, self.start, self.end = (slot, value, canonical,
                                                                       start, end)

    def __repr__(self):
        return "Slot(%r, %r, canonical=%r)" % (self.slot, self.value, self.canonical)


class Result:
    """One parsed text: `intent` and its `confidence`, `ranking` [(intent, probability)]
    best first, `slots` [Slot] in text order, `tags` one BIO tag per word."""

    __slots__ = ("text", "intent", "confidence", "ranking", "slots", "tags")

    def __init__(self, r):
        self.text = _text(r.text)
        self.intent = _text(r.intent)
        self.confidence = r.confidence
        self.ranking = [(_text(r.top[i].label), r.top[i].prob) for i in range(r.n_top)]
        self.slots = [Slot(_text(s.slot), _text(s.value), _text(s.canonical), s.start, s.end)
                      for s in (r.slots[i] for i in range(r.n_slots))]
        self.tags = [_text(r.tags[i]) for i in range(r.n_words)]

    def __repr__(self):
        return "Result(%r, %r, %.4f, %r)" % (self.text, self.intent, self.confidence, self.slots)


class Model(_Handle):
    """A model directory opened for parsing (parley_nlu_open). device: "auto", "cpu" or
    "cuda:N"; threads: CPU threads for one call's math (0: all cores); top_k: intents kept
    in Result.ranking (0: 5). Close it, or use it in a `with` block."""

    _close = staticmethod(lambda h: _lib.parley_nlu_close(h))

    def __init__(self, path, device="auto", threads=0, top_k=0):
        p = _lib.parley_nlu_params_default()
        p.device = device.encode()
        p.threads = threads
        p.top_k = top_k
        h = ctypes.c_void_p()
        _check(_lib.parley_nlu_open(_bytes(path, "path"), ctypes.byref(p), ctypes.byref(h)))
        self._h = h

    def parse(self, text):
        """The Result of one text."""
        return self.parse_many([text])[0]

    def parse_many(self, texts):
        """The Results of several texts, parsed in one pass through the model."""
        texts = [_bytes(t, "a text") for t in texts]
        h = self._handle()
        n = len(texts)
        arr = (_c_str * max(n, 1))(*texts)
        out = (ctypes.POINTER(_NluResult) * max(n, 1))()
        _check(_lib.parley_nlu_parse_batch(h, arr, n, out))
        try:
            return [Result(out[i].contents) for i in range(n)]
        finally:
            for i in range(n):
                _lib.parley_nlu_result_free(out[i])



# ---- pipelines --------------------------------------------------------------------------

def _slots(s):
    """{name: value} of the parley_slot array of a reply or an action's context."""
    return {_text(s.slots[i].name): _text(s.slots[i].value) for i in range(s.n_slots)}


class Reply:
    """One finished turn: `reply` the answer ("" without a dialog), `intent`, `confidence`,
    `slots` {name: value} (the user's slots after the turn), `user`, `id` (what submit
    returned), `session`, `text`, `latency_ms`; `error` says why a failed turn failed ("" when
    it did not)."""

    __slots__ = ("id", "user", "text", "reply", "intent", "confidence", "slots", "session",
                 "error", "status", "latency_ms")

    def __init__(self, r):
        self.id, self.status, self.latency_ms = r.id, r.status, r.latency_ms
        self.user, self.text, self.reply = _text(r.user), _text(r.text), _text(r.reply)
        self.intent, self.confidence = _text(r.intent), r.confidence
        self.session, self.error = _text(r.session), _text(r.error)
        self.slots = _slots(r)

    def __repr__(self):
        return "Reply(%r, %r, %r)" % (self.user, self.reply, self.slots)


class ActionCall:
    """What a registered action sees (parley_action_ctx): `action`, `user`, `session`,
    `turn`, `text`, `intent`, `confidence`, `form` (the form that just completed, or None)
    and `slots` {name: value} (the user's slots that have a value)."""

    __slots__ = ("action", "user", "session", "turn", "text", "intent", "confidence", "form",
                 "slots")

    def __init__(self, c):
        self.action, self.user, self.session = _text(c.action), _text(c.user_id), _text(
            c.session_id)
        self.turn, self.text, self.intent = c.turn_id, _text(c.text), _text(c.intent)
        self.confidence, self.form = c.confidence, _text(c.form)
        self.slots = _slots(c)


class Pipeline(_Handle):
    """A bot's graph running inside this process (parley_pipeline_open): submit() a user's
    turn, poll() for the replies in the order they finish, close() when done (it waits for
    every turn submitted). overrides: ["TARGET.PARAM=VALUE", ...] as `parley run --set`;
    text_io: drive a graph made for the terminal (text.stdin / text.stdout), as `parley
    chat` does."""

    _close = staticmethod(lambda h: _lib.parley_pipeline_close(h))

    def __init__(self, graph, overrides=(), text_io=False, queue_size=0):
        p = _lib.parley_pipeline_params_default()
        self._over = [_bytes(o, "an override") for o in overrides]
        arr = (_c_str * (len(self._over) + 1))(*self._over, None)
        p.overrides = arr
        p.text_io = 1 if text_io else 0
        p.queue_size = queue_size
        h = ctypes.c_void_p()
        _check(_lib.parley_pipeline_open(_bytes(graph, "graph"), ctypes.byref(p),
                                         ctypes.byref(h)))
        self._h = h
        self._actions = {}
        self.action_errors = []

    def register_action(self, name, fn):
        """Registers fn as the domain's action `name` (declared under actions:). The dialog
        calls fn(ActionCall) on its worker threads (for different users at once, never twice
        at once for one user) and takes its answer: None (the domain's reply for it), a reply
        text ({slot} filled in), or {"reply": text, "slots": {name: value, or None to clear}}.
        An exception fails the turn (its Reply.error names the action) and is kept in
        action_errors as (name, exception)."""

        def call(ctx, out, _user):
            try:
                answer = fn(ActionCall(ctx.contents))
                if isinstance(answer, str):
                    answer = {"reply": answer}
                for slot, value in (answer or {}).get("slots", {}).items():
                    _check(_lib.parley_action_set_slot(
                        out, _bytes(slot, "a slot name"),
                        None if value is None else _bytes(str(value), "a slot value")))
                if (answer or {}).get("reply") is not None:
                    _check(_lib.parley_action_reply(out, _bytes(answer["reply"], "a reply")))
                return 0
            except BaseException as e:  # the turn fails; the application reads why here
                self.action_errors.append((name, e))
                return e.status if isinstance(e, ParleyError) else _INVALID_ARG

        callback = _ActionFn(call)
        _check(_lib.parley_pipeline_register_action(self._handle(), _bytes(name, "name"),
                                                    callback, None))
        self._actions[name] = callback  # the library calls it until close

    def submit(self, user, text, new_session=False):
        """Submits `text` as the next turn of `user`; returns the turn's id (its Reply.id).
        new_session: the dialog starts the user's session anew (as `parley chat`'s
        /restart). Blocks while the graph is full."""
        turn = ctypes.c_uint64()
        _check(_lib.parley_pipeline_submit_flags(self._handle(), _bytes(user, "user"),
                                                 _bytes(text, "text"), 1 if new_session else 0,
                                                 ctypes.byref(turn)))
        return turn.value

    def poll(self, timeout=None):
        """The oldest finished turn's Reply, waiting up to `timeout` seconds (None: for
        ever, 0: not at all); None when none came in time."""
        ms = -1 if timeout is None else int(timeout * 1000)
        out = ctypes.POINTER(_Reply)()
        st = _lib.parley_pipeline_poll(self._handle(), ms, ctypes.byref(out))
        if st == _NOT_FOUND:
            return None
        _check(st)
        try:
            return Reply(out.contents)
        finally:
            _lib.parley_reply_free(out)

    def ask(self, user, text, timeout=None):
        """submit() then the Reply of that turn (replies of other turns polled meanwhile are
        dropped: for one conversation at a time)."""
        turn = self.submit(user, text)
        while True:
            r = self.poll(timeout)
            if r is None:
                raise ParleyError(_NOT_FOUND, "no reply to turn %d in time" % turn)
            if r.id == turn:
                return r



# ---- training ---------------------------------------------------------------------------

class Progress:
    """What a training run reports to its callback: `event` ("start", "step" or "epoch"),
    `epoch`/`epochs`, `step`/`steps`, `loss`, `lr`, `pretraining` (its masked-LM
    pretraining's events), `dev` (intent_accuracy, slot_f1, sentence_accuracy) after an
    epoch with a dev set, else None, `n_train` (at the start)."""

    __slots__ = ("event", "epoch", "epochs", "step", "steps", "loss", "lr", "pretraining",
                 "dev", "n_train")

    def __init__(self, p):
        self.event = ("start", "step", "epoch")[p.event]
        self.epoch, self.epochs, self.step, self.steps = p.epoch, p.epochs, p.step, p.steps
        self.loss, self.lr, self.pretraining = p.loss, p.lr, bool(p.pretraining)
        self.dev = ((p.dev.intent_accuracy, p.dev.slot_f1, p.dev.sentence_accuracy)
                    if p.has_dev else None)
        self.n_train = p.n_train


_SHAPE = ("layers", "hidden", "heads", "intermediate", "max_positions")
# parley_switch: the auto/on/off options (parley/train.h), as "on", "off" or None (auto).
_SWITCH = {"sparse", "intent_encoder", "builtin"}
_SWITCH_VALUES = {None: 0, "on": 1, "off": 2}


def _train_params(who, data, out, options):
    """parley_train_params with data, out (None: not set) and options set, and the bytes they
    point to, which must outlive the call."""
    p = _lib.parley_train_params_default()
    keep = [_bytes(data, "data")] + ([_bytes(out, "out")] if out is not None else [])
    p.data = keep[0]
    if out is not None:
        p.out = keep[1]
    names = {f[0] for f in _TrainParams._fields_} - {"data", "out", "progress", "user_data"}
    for k, v in options.items():
        if k in _SHAPE:
            setattr(p.shape, k, v)
        elif k in _SWITCH:
            if v not in _SWITCH_VALUES:
                raise ValueError("%s: %s is \"on\", \"off\" or None, not %r" % (who, k, v))
            setattr(p, k, _SWITCH_VALUES[v])
        elif k in names:
            if isinstance(v, (str, os.PathLike)):
                keep.append(_bytes(v, k))
                v = keep[-1]
            setattr(p, k, v)
        else:
            raise TypeError("%s: unknown option %r" % (who, k))
    return p, keep


def explain(data, **options):
    """What train(data, ..., **options) would do with `data` and why, without training
    (parley_train_explain, `parley train --explain`): the data's profile, the recipe decided
    from it with the reason of each choice, and the rules, as text."""
    p, _keep = _train_params("explain", data, None, options)
    text = ctypes.c_void_p()
    _check(_lib.parley_train_explain(ctypes.byref(p), ctypes.byref(text)))
    try:
        return ctypes.string_at(text.value).decode()
    finally:
        _lib.parley_train_explain_free(text)


def train(data, out, progress=None, **options):
    """Trains a model on `data` (an nlu.yaml or a JointBERT folder) into the directory `out`
    (parley_train_run). progress(Progress) is called at the start, after every step and
    after every epoch; a true return stops the run (the model keeps its last saved epoch and
    the run can be resumed with resume=True). options are parley_train_params' fields
    (epochs=, seed=, dev=, init=, layers=, hidden=, lr=, threads=, device=, sparse=, ...),
    left out to keep their defaults (sized to the data: the run's recipe decides); sparse=,
    intent_encoder= and builtin= take "on", "off" or None (the recipe decides). Returns a
    dict: epochs_done, steps_done, stopped, wall_s, best_epoch. An exception the callback
    raises stops the run and is raised here."""
    p, _keep = _train_params("train", data, out, options)
    raised = []

    def call(pp, _user):
        try:
            return 1 if progress(Progress(pp.contents)) else 0
        except BaseException as e:  # stop the run; raised again below
            raised.append(e)
            return 1

    fn = _ProgressFn(call) if progress else _ProgressFn()
    p.progress = fn
    res = _TrainResult()
    st = _lib.parley_train_run(ctypes.byref(p), ctypes.byref(res))
    if raised:
        raise raised[0]
    _check(st)
    return {"epochs_done": res.epochs_done, "steps_done": res.steps_done,
            "stopped": bool(res.stopped), "wall_s": res.wall_s, "best_epoch": res.best_epoch}
