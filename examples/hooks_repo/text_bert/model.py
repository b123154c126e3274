# text_bert: tiny_bert (../shared/fixtures/bundles/tiny_bert: a 2-layer encoder, sequence 16,
# random weights) behind model.py hooks (docs/hooks.md). Clients send text (BYTES, one
# sentence per element); preprocess tokenizes it with a WordPiece tokenizer over vocab.txt
# and pads to the compiled sequence length; postprocess turns the pooled output into a label
# (BYTES) and its score (FP32). The weights are random: the labels show the plumbing, not a
# trained classifier.
import os
import unicodedata

import numpy as np

SEQ = 16  # the compiled sequence length (manifest dims c: 16)
LABELS = np.array([b"negative", b"neutral", b"positive"], dtype=object)

with open(os.path.join(os.path.dirname(__file__), "vocab.txt"), encoding="utf-8") as f:
    VOCAB = {token: i for i, token in enumerate(f.read().splitlines())}
PAD, UNK, CLS, SEP = (VOCAB[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]"))


def basic_tokens(text):
    """Lower-cased words and punctuation marks (BERT's BasicTokenizer, uncased)."""
    text = unicodedata.normalize("NFD", text.lower())
    text = "".join(c for c in text if unicodedata.category(c) != "Mn")
    out, word = [], ""
    for c in text:
        if c.isspace() or unicodedata.category(c).startswith("P") or c in "$+<=>^`|~":
            if word:
                out.append(word)
            word = ""
            if not c.isspace():
                out.append(c)
        else:
            word += c
    if word:
        out.append(word)
    return out


def wordpiece(word):
    """Greedy longest-match-first pieces of `word`, or [UNK]."""
    if len(word) > 100:
        return [UNK]
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in VOCAB:
                pieces.append(VOCAB[piece])
                break
            end -= 1
        if end == start:
            return [UNK]
        start = end
    return pieces


def encode(text):
    """[CLS] pieces [SEP], cut to SEQ, padded with [PAD]: (ids, mask) as int32 [SEQ]."""
    ids = [CLS]
    for word in basic_tokens(text):
        ids += wordpiece(word)
    ids = ids[:SEQ - 1] + [SEP]
    mask = [1] * len(ids) + [0] * (SEQ - len(ids))
    return (np.array(ids + [PAD] * (SEQ - len(ids)), np.int32), np.array(mask, np.int32))


def preprocess(inputs):
    encoded = [encode(t.decode("utf-8")) for t in inputs["text"].reshape(-1)]
    return {"input_ids": np.stack([e[0] for e in encoded]),
            "attention_mask": np.stack([e[1] for e in encoded])}


def postprocess(outputs):
    logits = outputs["pooled"][:, :3]
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    k = probs.argmax(axis=1)
    return {"label": LABELS[k], "score": probs[np.arange(len(k)), k].astype(np.float32)}


register_model("text_bert", preprocess=preprocess, postprocess=postprocess)
