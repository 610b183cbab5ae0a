# Byte-level BPE trainer/encoder for the demo model, written out as a Hugging Face tokenizer.json.
import collections
import json
import re

# Qwen2-style pre-tokenizer regex, exactly as in Qwen's tokenizer.json (Oniguruma syntax)
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# The same pattern for ASCII text in Python's `re` (no \p classes there); training data is ASCII only.
_ASCII_RE = re.compile(r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]| ?[^\sA-Za-z0-9]+[\r\n]*"
                       r"|\s*[\r\n]+|\s+(?!\S)|\s+")

# (content, special): the Qwen chat control tokens, thinking/tool markers (special false, as Qwen3) and the mask
ADDED = [("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True), ("<think>", False),
         ("</think>", False), ("<tool_call>", False), ("</tool_call>", False), ("<|mask|>", True)]
_ADDED_RE = re.compile("(" + "|".join(re.escape(a) for a, _ in ADDED) + ")")


def byte_alphabet():
    """GPT-2 byte -> printable unicode char map used by the ByteLevel pre-tokenizer"""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


BYTE_CHARS = byte_alphabet()
CHAR_BYTES = {c: b for b, c in BYTE_CHARS.items()}


def pieces(text):
    """pre-tokenized pieces (byte-level strings) of text without added tokens"""
    if not text.isascii():
        raise ValueError("tokenizer.py pre-tokenizes ASCII only; found non-ASCII text: " + repr(text[:40]))
    return ["".join(BYTE_CHARS[b] for b in p.encode()) for p in _ASCII_RE.findall(text)]


def split_added(text):
    """alternating [(is_added, str)] in order"""
    return [(i % 2 == 1, s) for i, s in enumerate(_ADDED_RE.split(text)) if s]


def train_bpe(texts, vocab_size):
    words = collections.Counter()
    for t in texts:
        for is_added, s in split_added(t):
            if not is_added:
                words.update(pieces(s))
    vocab = [BYTE_CHARS[b] for b in range(256)]
    n_merges = vocab_size - 256 - len(ADDED)
    seqs = {w: list(w) for w in words}
    merges = []
    pair_counts = collections.Counter()
    where = collections.defaultdict(set)
    for w, s in seqs.items():
        for a, b in zip(s, s[1:]):
            pair_counts[(a, b)] += words[w]
            where[(a, b)].add(w)
    while len(merges) < n_merges and pair_counts:
        (a, b), c = max(pair_counts.items(), key=lambda kv: (kv[1], kv[0]))
        if c < 2:
            break
        merges.append((a, b))
        vocab.append(a + b)
        for w in list(where[(a, b)]):
            s = seqs[w]
            for x, y in zip(s, s[1:]):
                pair_counts[(x, y)] -= words[w]
                if pair_counts[(x, y)] <= 0:
                    del pair_counts[(x, y)]
            i, ns = 0, []
            while i < len(s):
                if i + 1 < len(s) and s[i] == a and s[i + 1] == b:
                    ns.append(a + b)
                    i += 2
                else:
                    ns.append(s[i])
                    i += 1
            seqs[w] = ns
            for x, y in zip(ns, ns[1:]):
                pair_counts[(x, y)] += words[w]
                where[(x, y)].add(w)
        del where[(a, b)]
    return vocab, merges


class Tokenizer:
    def __init__(self, vocab, merges):
        self.vocab = list(vocab) + [a for a, _ in ADDED]
        self.ids = {t: i for i, t in enumerate(self.vocab)}
        self.merges = [tuple(m) for m in merges]
        self.rank = {m: i for i, m in enumerate(self.merges)}
        self.cache = {}

    @classmethod
    def from_json(cls, path):
        d = json.load(open(path))
        v = sorted(d["model"]["vocab"].items(), key=lambda kv: kv[1])
        return cls([t for t, _ in v], d["model"]["merges"])

    def id(self, tok):
        return self.ids[tok]

    def _bpe(self, piece):
        if piece in self.cache:
            return self.cache[piece]
        s = list(piece)
        while len(s) > 1:
            best = min(range(len(s) - 1), key=lambda i: self.rank.get((s[i], s[i + 1]), 1 << 30))
            if (s[best], s[best + 1]) not in self.rank:
                break
            s[best:best + 2] = [s[best] + s[best + 1]]
        out = [self.ids[t] for t in s]
        self.cache[piece] = out
        return out

    def encode(self, text):
        out = []
        for is_added, s in split_added(text):
            if is_added:
                out.append(self.ids[s])
            else:
                for p in pieces(s):
                    out.extend(self._bpe(p))
        return out

    def decode(self, ids):
        n_base = len(self.vocab) - len(ADDED)
        buf, out = bytearray(), []
        for i in ids:
            if i >= n_base:
                out.append(buf.decode("utf-8", "replace"))
                buf = bytearray()
                out.append(self.vocab[i])
            else:
                buf.extend(CHAR_BYTES[c] for c in self.vocab[i])
        out.append(buf.decode("utf-8", "replace"))
        return "".join(out)

    def to_json(self):
        n_base = len(self.vocab) - len(ADDED)
        byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}
        return {
            "version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": n_base + i, "content": a, "single_word": False, "lstrip": False,
                              "rstrip": False, "normalized": False, "special": sp}
                             for i, (a, sp) in enumerate(ADDED)],
            "normalizer": {"type": "NFC"},
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": QWEN2_REGEX}, "behavior": "Isolated", "invert": False},
                byte_level]},
            "post_processor": byte_level,
            "decoder": byte_level,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False,
                      "ignore_merges": False,
                      "vocab": {t: i for i, t in enumerate(self.vocab[:n_base])},
                      "merges": [[a, b] for a, b in self.merges]},
        }
