"""bert_ref.py — an independent PyTorch implementation of parley's joint intent/slot BERT.

Written from the BERT paper and the Hugging Face BertModel layout (the tensor names of a
model directory), not from parley's C code: embeddings (word + position + token type 0,
LayerNorm), post-LN encoder layers with separate query/key/value projections and an erf GELU,
the tanh pooler on each sequence's first token, and the two heads (intent on the pooled
output, slot tags on every token). A model with sparse features (config.json
"sparse_sentence_features" FS, "sparse_word_features" FW) adds two bias-free linear maps:
sparse_intent_classifier (NI, FS) of each sequence's sentence features to its intent logits
and sparse_slot_classifier (NS, FW) of each token's word features to its slot logits; the
features come in as given (docs/training.md, "Sparse features", says which token gets a
word's features). It takes a PADDED batch with an attention mask, the ordinary way, so
comparing it with parley's packed batches also checks the packing.
It runs in float64 by default so that its own rounding is negligible in the comparison.

    python3 -m reference.bert_ref MODEL_DIR < ids.txt
prints each sequence's intent logits and slot logits, one sequence per input line of
space-separated token ids.
"""
import json
import math
import os
import sys

import numpy as np
import torch
from torch import nn

from reference import safetensors_io


class Config:
    """The BertConfig keys this model uses, plus the joint heads' labels."""

    def __init__(self, d):
        self.vocab_size = d["vocab_size"]
        self.hidden = d["hidden_size"]
        self.layers = d["num_hidden_layers"]
        self.heads = d["num_attention_heads"]
        self.intermediate = d["intermediate_size"]
        self.max_positions = d.get("max_position_embeddings", 512)
        self.type_vocab = d.get("type_vocab_size", 2)
        self.eps = d.get("layer_norm_eps", 1e-12)
        self.intent_labels = d["intent_labels"]
        self.slot_labels = d["slot_labels"]
        self.sparse_sentence = d.get("sparse_sentence_features", 0)
        self.sparse_word = d.get("sparse_word_features", 0)
        self.intent_sparse_only = d.get("intent_sparse_only", False)
        if d.get("hidden_act", "gelu") != "gelu":
            raise ValueError("hidden_act %r: this reference implements the erf GELU only" % d["hidden_act"])
        if self.hidden % self.heads:
            raise ValueError("heads must divide hidden")


class Embeddings(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.word_embeddings = nn.Embedding(c.vocab_size, c.hidden)
        self.position_embeddings = nn.Embedding(c.max_positions, c.hidden)
        self.token_type_embeddings = nn.Embedding(c.type_vocab, c.hidden)
        self.LayerNorm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, ids):  # ids (B, T) -> (B, T, H)
        pos = torch.arange(ids.shape[1], device=ids.device)
        x = self.word_embeddings(ids) + self.position_embeddings(pos)[None] \
            + self.token_type_embeddings(torch.zeros_like(ids))
        return self.LayerNorm(x)


class SelfAttention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads, self.head_size = c.heads, c.hidden // c.heads
        self.query = nn.Linear(c.hidden, c.hidden)
        self.key = nn.Linear(c.hidden, c.hidden)
        self.value = nn.Linear(c.hidden, c.hidden)

    def split(self, x):  # (B, T, H) -> (B, NH, T, D)
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_size).transpose(1, 2)

    def forward(self, x, mask):  # x (B, T, H), mask (B, T) of 1 = real token
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_size)  # (B, NH, T, T)
        scores = scores.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v  # (B, NH, T, D)
        return out.transpose(1, 2).reshape(x.shape)


class DenseLayerNorm(nn.Module):
    """LayerNorm(residual + dense(x)): BERT's post-LN sublayer output."""

    def __init__(self, c, fan_in):
        super().__init__()
        self.dense = nn.Linear(fan_in, c.hidden)
        self.LayerNorm = nn.LayerNorm(c.hidden, eps=c.eps)

    def forward(self, x, residual):
        return self.LayerNorm(residual + self.dense(x))


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.self = SelfAttention(c)  # HF's name: attention.self
        self.output = DenseLayerNorm(c, c.hidden)

    def forward(self, x, mask):
        return self.output(self.self(x, mask), x)


class Intermediate(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden, c.intermediate)

    def forward(self, x):
        h = self.dense(x)
        return 0.5 * h * (1.0 + torch.erf(h / math.sqrt(2.0)))  # erf GELU


class Layer(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.attention = Attention(c)
        self.intermediate = Intermediate(c)
        self.output = DenseLayerNorm(c, c.intermediate)

    def forward(self, x, mask):
        a = self.attention(x, mask)
        return self.output(self.intermediate(a), a)


class Encoder(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.layer = nn.ModuleList([Layer(c) for _ in range(c.layers)])


class Pooler(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dense = nn.Linear(c.hidden, c.hidden)

    def forward(self, h):  # h (B, T, H) -> (B, H) from each sequence's first token
        return torch.tanh(self.dense(h[:, 0]))


class JointBert(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.config = c
        self.embeddings = Embeddings(c)
        self.encoder = Encoder(c)
        self.pooler = Pooler(c)
        self.intent_classifier = nn.Linear(c.hidden, len(c.intent_labels))
        self.slot_classifier = nn.Linear(c.hidden, len(c.slot_labels))
        if c.sparse_sentence:
            self.sparse_intent_classifier = nn.Linear(c.sparse_sentence, len(c.intent_labels), bias=False)
        if c.sparse_word:
            self.sparse_slot_classifier = nn.Linear(c.sparse_word, len(c.slot_labels), bias=False)

    def forward(self, ids, mask, x_sent=None, x_tok=None):
        """ids, mask (B, T) -> intent logits (B, NI), slot logits (B, T, NS). With sparse
        features: x_sent (B, FS) and x_tok (B, T, FW), dense."""
        h = self.embeddings(ids)
        for layer in self.encoder.layer:
            h = layer(h, mask)
        intent, slot = self.intent_classifier(self.pooler(h)), self.slot_classifier(h)
        if self.config.intent_sparse_only:  # the encoder's intent logits are not used
            intent = intent * 0.0
        if self.config.sparse_sentence:
            intent = intent + self.sparse_intent_classifier(x_sent)
        if self.config.sparse_word:
            slot = slot + self.sparse_slot_classifier(x_tok)
        return intent, slot


def load(model_dir, dtype=torch.float64):
    """Reads config.json and model.safetensors (names with or without "bert.")."""
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        cfg = Config(json.load(f))
    tensors = safetensors_io.load(os.path.join(model_dir, "model.safetensors"))
    state = {}
    for name, arr in tensors.items():
        name = name[len("bert."):] if name.startswith("bert.") else name
        if name == "embeddings.position_ids":  # a buffer some checkpoints carry
            continue
        state[name] = torch.from_numpy(np.asarray(arr, dtype=np.float64))
    model = JointBert(cfg).to(dtype)
    model.load_state_dict(state, strict=True)
    model.eval()
    return model


def pad(seqs):
    """A list of id lists -> ids and mask (B, Tmax), padded with id 0 / mask 0."""
    t = max(len(s) for s in seqs)
    ids = torch.zeros((len(seqs), t), dtype=torch.long)
    mask = torch.zeros((len(seqs), t), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s, dtype=torch.long)
        mask[i, :len(s)] = 1
    return ids, mask


def dense_rows(rows, n_feat, dtype=torch.float64):
    """Rows of [index, value] pairs -> a dense (len(rows), n_feat) tensor."""
    x = torch.zeros((len(rows), n_feat), dtype=dtype)
    for r, row in enumerate(rows):
        for j, v in row:
            x[r, j] += v
    return x


def sparse_inputs(model, sent_rows, tok_rows, lens):
    """Packed sparse rows (one per sequence, one per token) -> x_sent (B, FS), x_tok
    (B, T, FW) padded like bert_ref.pad; None for a model without them."""
    c = model.config
    if not (c.sparse_sentence or c.sparse_word):
        return None, None
    dtype = next(model.parameters()).dtype
    x_sent = dense_rows(sent_rows, c.sparse_sentence, dtype)
    tok = dense_rows(tok_rows, c.sparse_word, dtype)
    x_tok = torch.zeros((len(lens), max(lens), c.sparse_word), dtype=dtype)
    at = 0
    for i, n in enumerate(lens):
        x_tok[i, :n] = tok[at:at + n]
        at += n
    return x_sent, x_tok


def logits(model, seqs):
    """(intent (B, NI), slots: list of (len, NS)) as float64 numpy arrays."""
    ids, mask = pad(seqs)
    with torch.no_grad():
        intent, slot = model(ids, mask)
    return intent.double().numpy(), [slot[i, :len(s)].double().numpy() for i, s in enumerate(seqs)]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: python3 -m reference.bert_ref MODEL_DIR < ids.txt")
    seqs = [[int(t) for t in line.split()] for line in sys.stdin if line.strip()]
    intent, slots = logits(load(sys.argv[1]), seqs)
    for i, s in enumerate(slots):
        print("intent", " ".join("%.9g" % v for v in intent[i]))
        for row in s:
            print("slot", " ".join("%.9g" % v for v in row))


if __name__ == "__main__":
    main()
