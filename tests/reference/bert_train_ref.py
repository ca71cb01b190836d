"""bert_train_ref.py — the joint intent/slot training loss on top of the reference model
(reference/bert_ref.py), with its parameter gradients by torch autograd.

The loss is JointBERT's (Chen et al. 2019, "BERT for Joint Intent Classification and Slot
Filling"): mean cross-entropy of the intent logits plus slot_weight times the mean
cross-entropy of the slot logits over the scored tokens (label -1 = not scored; the slot
term is 0 when no token is scored). Without dropout: the gradient test runs the C step with
dropout 0. As Hugging Face's BertEmbeddings builds its word table with
nn.Embedding(padding_idx=pad_token_id), the [PAD] row gets no gradient.

Batches come packed, as parley takes them (lengths, then ids and slot labels of all
sequences one after another); bert_ref pads them and masks attention, so the packing of the
C side is checked too.
"""
import torch
import torch.nn.functional as F

from reference import bert_ref
from reference import safetensors_io


def split(lens, flat):
    """Packed values -> one list per sequence."""
    out, at = [], 0
    for n in lens:
        out.append(list(flat[at:at + n]))
        at += n
    return out


def joint_loss(model, lens, ids, intent, slot, slot_weight=1.0, device=None, sparse=None,
               intent_weight=None):
    """A dict of loss, intent_loss, slot_loss (tensors) and intent_logits (B, NI),
    slot_logits (N, NS) in packed order. device: where the model is (None: the CPU).
    sparse: (sentence rows, token rows) of [index, value] pairs for a model with sparse
    features (bert_ref.sparse_inputs). intent_weight (NI): each intent's weight, the intent
    loss being the mean over sequences of weight * cross-entropy."""
    padded, mask = bert_ref.pad(split(lens, ids))
    padded, mask = padded.to(device), mask.to(device)
    x_sent, x_tok = bert_ref.sparse_inputs(model, *(sparse or ([], [])), lens)
    if x_sent is not None:
        x_sent, x_tok = x_sent.to(device), x_tok.to(device)
    intent_logits, slot_logits = model(padded, mask, x_sent, x_tok)
    slot_logits = slot_logits[mask.bool()]  # (N, NS): row-major over (sequence, token)
    target = torch.tensor(intent, device=device)
    intent_loss = F.cross_entropy(intent_logits, target, reduction="none")
    if intent_weight is not None:
        intent_loss = intent_loss * torch.tensor(intent_weight, dtype=intent_loss.dtype,
                                                 device=device)[target]
    intent_loss = intent_loss.mean()
    labels = torch.tensor(slot, device=device)
    if (labels >= 0).any():
        slot_loss = F.cross_entropy(slot_logits, labels, ignore_index=-1)
    else:
        slot_loss = slot_logits.sum() * 0.0
    return {"loss": intent_loss + slot_weight * slot_loss, "intent_loss": intent_loss,
            "slot_loss": slot_loss, "intent_logits": intent_logits, "slot_logits": slot_logits}


def loss_and_grads(model_dir, lens, ids, intent, slot, slot_weight=1.0, pad_id=0, sparse=None,
                   intent_weight=None):
    """(joint_loss's outputs as numpy, parameter name -> gradient as numpy) in float64 for
    the model directory; names are Hugging Face's without the "bert." prefix."""
    model = bert_ref.load(model_dir, dtype=torch.float64)
    out = joint_loss(model, lens, ids, intent, slot, slot_weight, sparse=sparse,
                     intent_weight=intent_weight)
    model.zero_grad()
    out["loss"].backward()
    grads = {}
    for name, p in model.named_parameters():
        g = p.grad if p.grad is not None else torch.zeros_like(p)
        if name == "embeddings.word_embeddings.weight" and pad_id >= 0:
            g = g.clone()
            g[pad_id] = 0.0
        grads[name] = g.detach().numpy()
    return {k: v.detach().numpy() for k, v in out.items()}, grads


def mlm_loss_and_grads(model_dir, lens, ids, target, pad_id=0):
    """The masked-language-model loss of BERT pretraining (Devlin et al. 2019, section 3.1;
    the head as Hugging Face's BertLMPredictionHead: dense, erf GELU, LayerNorm, then a
    decoder whose weight is the word embedding table, plus its own bias) on the positions
    whose target is not -1, in float64. Returns (loss, masked, correct) and the gradients:
    the model's by Hugging Face names, the head's by theirs (cls.predictions.*). The [PAD]
    row of the embedding lookup gets no gradient (padding_idx); the decoder's share of it
    stays, as with tied weights in torch."""
    model = bert_ref.load(model_dir, dtype=torch.float64)
    model.embeddings.word_embeddings.padding_idx = pad_id
    head = {k: torch.tensor(v, dtype=torch.float64, requires_grad=True)
            for k, v in safetensors_io.load(model_dir + "/mlm_head.safetensors").items()}
    p = "cls.predictions."
    padded, mask = bert_ref.pad(split(lens, ids))
    h = model.embeddings(padded)
    for layer in model.encoder.layer:
        h = layer(h, mask)
    h = h[mask.bool()]  # (N, H) packed
    chosen = torch.tensor(target) >= 0
    x = F.linear(h[chosen], head[p + "transform.dense.weight"], head[p + "transform.dense.bias"])
    x = 0.5 * x * (1.0 + torch.erf(x / 2.0 ** 0.5))
    x = F.layer_norm(x, (x.shape[-1],), head[p + "transform.LayerNorm.weight"],
                     head[p + "transform.LayerNorm.bias"], eps=model.config.eps)
    logits = F.linear(x, model.embeddings.word_embeddings.weight, head[p + "bias"])
    labels = torch.tensor(target)[chosen]
    loss = F.cross_entropy(logits, labels)
    loss.backward()
    grads = {name: (q.grad if q.grad is not None else torch.zeros_like(q)).detach().numpy()
             for name, q in model.named_parameters()}
    grads.update({k: v.grad.detach().numpy() for k, v in head.items()})
    correct = int((logits.argmax(dim=1) == labels).sum())
    return (float(loss), int(chosen.sum()), correct), grads
