"""Correct code written other ways than the reference: the honest cohorts of the grading and similarity tests.

Each constant is one right answer to a graded cell, written apart from the reference (other
draws, other tensor operations, other names and layout), so two students holding different
ones wrote their code on their own.
"""
from __future__ import annotations

SPAN_WITH_TORCH = '''class CharCorruptionDataset(CharCorruptionDatasetBase):
    """Span corruption with torch's random draws and the string built in one go."""

    def __getitem__(self, idx):
        document = self.data[idx]
        kept = document[: int(torch.randint(4, int(self.block_size * 7 / 8) + 1, ()))]
        n = len(kept)
        span = int(torch.randint(1, max(1, n // 2 - 1) + 1, ())) if n > 1 else n
        start = int(torch.randint(0, n - span + 1, ()))
        text = (kept[:start] + self.MASK_CHAR + kept[start + span:] + self.MASK_CHAR + kept[start:start + span]
                + self.MASK_CHAR)
        text += self.PAD_CHAR * (self.block_size - len(text))
        ids = torch.tensor([self.stoi[c] for c in text], dtype=torch.long)
        return ids[:-1], ids[1:]
'''

SYNTH_EINSUM_PERSISTENT_MASK = '''class SynthesizerAttention(SynthesizerAttentionBase):
    """einsum scores; the causal mask registered again as a persistent buffer, the way minGPT registers its own."""

    def __init__(self, config):
        super().__init__(config)
        mask = torch.tril(torch.ones(config.block_size, config.block_size))
        self.register_buffer("mask", mask.view(1, 1, config.block_size, config.block_size))

    def forward(self, x):
        B, T, C = x.shape
        hs = C // self.n_head
        hidden = F.relu(self.w1(x)).view(B, T, self.n_head, hs)  # (B, T, nh, hs)
        scores = torch.einsum("bthd,dl->bhtl", hidden, self.w2[:, :T]) + self.b2[:T]  # (B, nh, T, T)
        scores = scores.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = self.attn_drop(torch.softmax(scores, dim=-1))
        values = self.value(x).view(B, T, self.n_head, hs).permute(0, 2, 1, 3)  # (B, nh, T, hs)
        y = (att @ values).permute(0, 2, 1, 3).reshape(B, T, C)
        return self.resid_drop(self.proj(y))


def initialize_synthesizer_model(mconf):
    return GPT(mconf, attention_class=SynthesizerAttention)
'''

SYNTH_FUNCTIONAL_DROPOUT = '''class SynthesizerAttention(SynthesizerAttentionBase):
    """The dropout written with F.dropout at the modules' rates, the relu after splitting into heads."""

    def forward(self, x):
        B, T, C = x.size()
        hs = C // self.n_head
        hidden = F.relu(self.w1(x)).view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        values = self.value(x).view(B, T, self.n_head, hs).transpose(1, 2)  # (B, nh, T, hs)
        scores = hidden @ self.w2[:, :T] + self.b2[:T]  # (B, nh, T, T)
        scores = scores.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.dropout(F.softmax(scores, dim=-1), self.attn_drop.p, self.training)
        y = (att @ values).transpose(1, 2).contiguous().view(B, T, C)
        return F.dropout(self.proj(y), self.resid_drop.p, self.training)


def initialize_synthesizer_model(mconf):
    return GPT(mconf, attention_class=SynthesizerAttention)
'''

TWINS_07 = {  # other right answers: other large scales, float32, a sum of outer products, the heads swapped
    "07-a-code": "q_copy = (1000.0 * keys[2]).float()",
    "07-b-code": "M = sum(torch.outer(row, row) for row in basis_a)\nq_avg = 500.0 * (keys[1] + keys[4])",
    "07-c-code": "q_single = 1e4 * (means[a] + means[b])",
    "07-d-code": "q_1, q_2 = 300.0 * means[b], 300.0 * means[a]",
}
TWINS_08 = {  # an integer permutation matrix (another derangement), Phi stacked in float32
    "08-a-code": ("def permuted_output(P, X):\n    return position_free_layer(P.double() @ X, *params)\n\n\n"
                  "P = torch.eye(T, dtype=torch.long)[[4, 0, 1, 2, 3]]"),
    "08-b-code": ("def position_embeddings(T, d):\n"
                  "    rates = 10000.0 ** (torch.arange(0, d, 2, dtype=torch.float32) / d)\n"
                  "    angles = torch.arange(T, dtype=torch.float32)[:, None] / rates\n"
                  "    return torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1).reshape(T, d)"),
}

# carol's own code for every graded cell of 03, 05 and 08 (written apart from the reference)
CAROL = {
    "03-span-corruption": '''class CharCorruptionDataset(CharCorruptionDatasetBase):
    """Span corruption: `prefix ⁇ suffix ⁇ masked ⁇` padded, as (x, y) shifted by one."""

    def __getitem__(self, idx):
        chars = list(self.data[idx])
        limit = int(self.block_size * 0.875)
        chars = chars[:random.randrange(4, limit + 1)]
        span = max(1, round(random.gauss(len(chars) / 4, 1)))
        span = min(span, len(chars) - 1) if len(chars) > 1 else len(chars)
        lo = random.randrange(0, len(chars) - span + 1)
        pieces = ["".join(chars[:lo]), "".join(chars[lo + span:]), "".join(chars[lo:lo + span])]
        out = self.MASK_CHAR.join(pieces) + self.MASK_CHAR
        out += self.PAD_CHAR * (self.block_size - len(out))
        ids = torch.LongTensor(list(map(self.stoi.get, out)))
        return ids[:-1], ids[1:]
''',
    "05-synthesizer": '''class SynthesizerAttention(SynthesizerAttentionBase):
    """Dense synthesizer: attention scores computed from each position alone."""

    def forward(self, x):
        n_batch, n_steps, width = x.shape
        per_head = width // self.n_head

        def heads(t):
            return t.reshape(n_batch, n_steps, self.n_head, per_head).permute(0, 2, 1, 3)

        hidden = torch.relu(heads(self.w1(x)))
        logits = torch.matmul(hidden, self.w2[:, :n_steps]) + self.b2[:n_steps]
        causal = self.mask[:, :, :n_steps, :n_steps].bool()
        logits = torch.where(causal, logits, torch.full_like(logits, -float("inf")))
        weights = self.attn_drop(torch.softmax(logits, dim=-1))
        merged = torch.matmul(weights, heads(self.value(x))).permute(0, 2, 1, 3).reshape(n_batch, n_steps, width)
        return self.resid_drop(self.proj(merged))


def initialize_synthesizer_model(mconf: GPTConfig) -> GPT:
    """A GPT whose blocks use your SynthesizerAttention."""
    built = GPT(mconf, attention_class=SynthesizerAttention)
    return built
''',
    "08-a-code": '''def permuted_output(P, X):
    """The layer's output Z' when its input is the sequence X reordered by the permutation matrix P."""
    reordered = torch.matmul(P.type(X.dtype), X)
    return position_free_layer(reordered, *params)


P = torch.zeros(T, T, dtype=DTYPE)
for i in range(T):
    P[i, (i + 1) % T] = 1.0
''',
    "08-b-code": '''import math


def position_embeddings(T, d):
    rows = []
    for pos in range(T):
        row = []
        for i in range(0, d, 2):
            angle = pos / (10000 ** (i / d))
            row += [math.sin(angle), math.cos(angle)]
        rows.append(row)
    return torch.tensor(rows, dtype=DTYPE)
''',
}

# the glue and 07's last answers as two students might write them from the handout's words: the values and the calls
# are the handout's (every honest glue holds them), the shape is each one's own
GLUE_CAROL = {
    "02-glue": '''def initialize_vanilla_model(mconf: GPTConfig) -> GPT:
    return GPT(mconf)


def finetune(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model, finetune_lr=6e-4):
    pretrained = reading_params_path is not None
    if pretrained:
        load_params(model, reading_params_path)
    tconf = TrainerConfig(
        max_epochs=10 if pretrained else 75,
        batch_size=256,
        learning_rate=finetune_lr,
        lr_decay=True,
        warmup_tokens=10240,
        final_tokens=200 * len(pretrain_dataset) * block_size,
        num_workers=4,
    )
    names = NameDataset(pretrain_dataset, read_text(finetune_corpus_path))
    return tconf, Trainer(model, names, None, tconf)


def train(model, writing_params_path, trainer):
    trainer.train()
    save_params(model, writing_params_path)
''',
    "04-pretrain-glue": '''def pretrain(pretrain_dataset, block_size, model, pretrain_lr=6e-3):
    tokens = 200 * len(pretrain_dataset) * block_size
    tconf = TrainerConfig(max_epochs=650, batch_size=128, learning_rate=pretrain_lr, lr_decay=True,
                          warmup_tokens=10240, final_tokens=tokens, num_workers=4)
    trainer = Trainer(model, pretrain_dataset, None, tconf)
    return tconf, trainer
''',
    "07-e-code": '''I = torch.eye(6, dtype=DTYPE)
c2_plain = self_attention(X, I, I, I)[1]
K = torch.outer(u_c, u_c) + torch.outer(u_d, u_d)
Q = torch.outer(u_c, u_d) + torch.outer(u_d, u_a)
V = (torch.outer(u_b, u_b) - torch.outer(u_c, u_c)) / (beta * beta)
''',
}
GLUE_HUGO = {
    "02-glue": '''def initialize_vanilla_model(mconf):
    model = GPT(mconf)
    return model


def finetune(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model, finetune_lr=6e-4):
    epochs = 75
    if reading_params_path:
        model.load_state_dict(torch.load(reading_params_path, weights_only=True))
        epochs = 10
    config = TrainerConfig(max_epochs=epochs, batch_size=256, learning_rate=finetune_lr, lr_decay=True,
                           warmup_tokens=512 * 20, final_tokens=200 * len(pretrain_dataset) * block_size,
                           num_workers=4)
    with open(finetune_corpus_path, encoding="utf-8") as f:
        data = NameDataset(pretrain_dataset, f.read())
    return config, Trainer(model, data, None, config)


def train(model, writing_params_path, trainer):
    trainer.train()
    torch.save(model.state_dict(), writing_params_path)
''',
    "04-pretrain-glue": '''def pretrain(pretrain_dataset, block_size, model, pretrain_lr=6e-3):
    config = TrainerConfig(max_epochs=650, batch_size=128, learning_rate=pretrain_lr, lr_decay=True,
                           warmup_tokens=512 * 20, final_tokens=200 * len(pretrain_dataset) * block_size,
                           num_workers=4)
    return config, Trainer(model, pretrain_dataset, None, config)
''',
    "07-e-code": '''c2_plain = self_attention(X, *(torch.eye(6, dtype=DTYPE) for _ in range(3)))[1]
Q = torch.outer(u_d, u_a) + torch.outer(u_c, u_d)
K = torch.outer(u_c, u_c) + torch.outer(u_d, u_d)
V = (torch.outer(u_b, u_b) - torch.outer(u_c, u_c)) / beta ** 2
''',
}

# the extra cells students add to look at things: each a few short lines everyone might write
SCRATCH = (
    "print(len(pretrain_dataset))",
    "x, y = pretrain_dataset[0]\nprint(x.shape, y.shape)",
    "model",
    "%time check_span_corruption_basic(CharCorruptionDataset)",
    "!ls outputs",
    "for i in range(3):\n    print(''.join(pretrain_dataset.itos[int(t)] for t in pretrain_dataset[i][0]))",
)

# three more honest glues, spans, positions and two more synthesizers, so that each part has six answers written apart
# (a class of students writing each part its own way, as the similarity benchmarks need)
GLUE_DANA = {
    "02-glue": '''def initialize_vanilla_model(mconf):
    return GPT(mconf)


SHARED = dict(batch_size=256, lr_decay=True, warmup_tokens=512 * 20, num_workers=4)


def finetune(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model, finetune_lr=6e-4):
    epochs = 75 if reading_params_path is None else 10
    if reading_params_path is not None:
        model.load_state_dict(torch.load(reading_params_path, weights_only=True))
    total = 200 * len(pretrain_dataset) * block_size
    tconf = TrainerConfig(max_epochs=epochs, learning_rate=finetune_lr, final_tokens=total, **SHARED)
    corpus = read_text(finetune_corpus_path)
    return tconf, Trainer(model, NameDataset(pretrain_dataset, corpus), None, tconf)


def train(model, writing_params_path, trainer):
    trainer.train()
    torch.save(model.state_dict(), writing_params_path)
''',
    "04-pretrain-glue": '''def pretrain(pretrain_dataset, block_size, model, pretrain_lr=6e-3):
    shared = dict(lr_decay=True, warmup_tokens=512 * 20, num_workers=4)
    total = 200 * len(pretrain_dataset) * block_size
    tconf = TrainerConfig(max_epochs=650, batch_size=128, learning_rate=pretrain_lr, final_tokens=total, **shared)
    return tconf, Trainer(model, pretrain_dataset, None, tconf)
''',
    "07-e-code": '''eye = torch.eye(6, dtype=DTYPE)
c2_plain = self_attention(X, eye, eye, eye)[1]


def outer_sum(*pairs):
    return sum(torch.outer(left, right) for left, right in pairs)


K = outer_sum((u_d, u_d), (u_c, u_c))
Q = outer_sum((u_d, u_a), (u_c, u_d))
V = outer_sum((u_b, u_b), (-u_c, u_c)) / beta ** 2
''',
}
GLUE_ELI = {
    "02-glue": '''def initialize_vanilla_model(mconf):
    vanilla = GPT(mconf)
    return vanilla


def _config(epochs, lr, pretrain_dataset, block_size):
    return TrainerConfig(epochs, 256, lr, lr_decay=True, warmup_tokens=10240,
                         final_tokens=200 * block_size * len(pretrain_dataset), num_workers=4)


def finetune(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model, finetune_lr=6e-4):
    if reading_params_path is None:
        cfg = _config(75, finetune_lr, pretrain_dataset, block_size)
    else:
        load_params(model, reading_params_path)
        cfg = _config(10, finetune_lr, pretrain_dataset, block_size)
    questions = NameDataset(pretrain_dataset, read_text(finetune_corpus_path))
    return cfg, Trainer(model, questions, None, cfg)


def train(model, writing_params_path, trainer):
    trainer.train()
    save_params(model, writing_params_path)
''',
    "04-pretrain-glue": '''def pretrain(pretrain_dataset, block_size, model, pretrain_lr=6e-3):
    final = 200 * block_size * len(pretrain_dataset)
    cfg = TrainerConfig(650, 128, pretrain_lr, True, 10240, final, 4)
    return cfg, Trainer(model, pretrain_dataset, None, cfg)
''',
    "07-e-code": '''identity = torch.eye(6, dtype=DTYPE)
outputs = self_attention(X, identity, identity, identity)
c2_plain = outputs[1]
V = torch.outer(u_b, u_b) / beta ** 2 - torch.outer(u_c, u_c) / beta ** 2
Q = torch.outer(u_c, u_d) + torch.outer(u_d, u_a)
K = torch.outer(u_c, u_c) + torch.outer(u_d, u_d)
''',
}
GLUE_FAY = {
    "02-glue": '''def initialize_vanilla_model(mconf):
    return GPT(config=mconf)


def finetune(reading_params_path, finetune_corpus_path, pretrain_dataset, block_size, model, finetune_lr=6e-4):
    from_pretrained = reading_params_path is not None
    if from_pretrained:
        state = torch.load(reading_params_path, map_location="cpu", weights_only=True)
        model.load_state_dict(state)
    settings = {"max_epochs": 10 if from_pretrained else 75, "batch_size": 256, "learning_rate": finetune_lr,
                "lr_decay": True, "warmup_tokens": 20 * 512,
                "final_tokens": len(pretrain_dataset) * block_size * 200, "num_workers": 4}
    tconf = TrainerConfig(**settings)
    with open(finetune_corpus_path, encoding="utf-8") as handle:
        lines = handle.read()
    dataset = NameDataset(pretrain_dataset, lines)
    trainer = Trainer(model, dataset, None, tconf)
    return tconf, trainer


def train(model, writing_params_path, trainer):
    trainer.train()
    state = model.state_dict()
    torch.save(state, writing_params_path)
''',
    "04-pretrain-glue": '''def pretrain(pretrain_dataset, block_size, model, pretrain_lr=6e-3):
    settings = {"max_epochs": 650, "batch_size": 128, "learning_rate": pretrain_lr, "lr_decay": True,
                "warmup_tokens": 20 * 512, "final_tokens": len(pretrain_dataset) * block_size * 200,
                "num_workers": 4}
    tconf = TrainerConfig(**settings)
    trainer = Trainer(model, pretrain_dataset, None, tconf)
    return tconf, trainer
''',
    "07-e-code": '''ones = [torch.eye(6, dtype=DTYPE)] * 3
c2_plain = self_attention(X, *ones)[1]
K = torch.stack([u_c, u_d]).T @ torch.stack([u_c, u_d])
Q = torch.stack([u_c, u_d]).T @ torch.stack([u_d, u_a])
V = torch.stack([u_b, u_c]).T @ torch.stack([u_b, -u_c]) / (beta * beta)
''',
}

SPAN_CHOICE = '''class CharCorruptionDataset(CharCorruptionDatasetBase):
    def __getitem__(self, idx):
        doc = self.data[idx]
        upper = int(7 * self.block_size / 8)
        piece = doc[:random.choice(range(4, upper + 1))]
        size = len(piece)
        hidden = 1 + int(random.random() * max(1, size // 2 - 1)) if size > 1 else size
        begin = random.randrange(size - hidden + 1)
        parts = [piece[:begin], piece[begin + hidden:], piece[begin:begin + hidden]]
        chars = "".join(p + self.MASK_CHAR for p in parts).ljust(self.block_size, self.PAD_CHAR)
        encoded = [self.stoi[ch] for ch in chars]
        return torch.tensor(encoded[:-1]), torch.tensor(encoded[1:])
'''
SPAN_JOINED = '''class CharCorruptionDataset(CharCorruptionDatasetBase):
    def __getitem__(self, idx):
        text = self.data[idx]
        text = text[:random.randint(4, int(self.block_size * 7 / 8))]
        total = len(text)
        if total <= 1:
            span_len = total
        else:
            span_len = random.randint(1, max(1, total // 2 - 1))
        left = random.randint(0, total - span_len)
        right = left + span_len
        rearranged = "".join([text[:left], self.MASK_CHAR, text[right:], self.MASK_CHAR, text[left:right],
                              self.MASK_CHAR])
        padding = self.block_size - len(rearranged)
        rearranged = rearranged + padding * self.PAD_CHAR
        numbers = list(map(lambda ch: self.stoi[ch], rearranged))
        source = torch.LongTensor(numbers[:-1])
        target = torch.LongTensor(numbers[1:])
        return source, target
'''
SPAN_HELPERS = '''class CharCorruptionDataset(CharCorruptionDatasetBase):
    def _truncate(self, document):
        return document[:random.randint(4, int(self.block_size * 7 / 8))]

    def _cut_points(self, n):
        if n < 2:
            return 0, n
        width = random.randint(1, max(1, n // 2 - 1))
        first = random.randint(0, n - width)
        return first, first + width

    def _encode(self, chars):
        return torch.tensor([self.stoi[c] for c in chars], dtype=torch.long)

    def __getitem__(self, idx):
        kept = self._truncate(self.data[idx])
        lo, hi = self._cut_points(len(kept))
        m = self.MASK_CHAR
        sample = f"{kept[:lo]}{m}{kept[hi:]}{m}{kept[lo:hi]}{m}"
        sample += self.PAD_CHAR * (self.block_size - len(sample))
        ids = self._encode(sample)
        return ids[:-1], ids[1:]
'''

SYNTH_BMM = '''class SynthesizerAttention(SynthesizerAttentionBase):
    def forward(self, x):
        batch, length, dim = x.shape
        heads = self.n_head
        size = dim // heads

        def split(t):
            return t.reshape(batch, length, heads, size).transpose(1, 2).reshape(batch * heads, length, size)

        hidden = torch.clamp(split(self.w1(x)), min=0)
        logits = torch.bmm(hidden, self.w2[:, :length].expand(batch * heads, size, length)) + self.b2[:length]
        keep = torch.tril(torch.ones(length, length, dtype=torch.bool, device=x.device))
        logits = logits.masked_fill(~keep, float("-inf"))
        probs = self.attn_drop(logits.softmax(-1))
        out = torch.bmm(probs, split(self.value(x)))
        out = out.reshape(batch, heads, length, size).transpose(1, 2).reshape(batch, length, dim)
        return self.resid_drop(self.proj(out))


def initialize_synthesizer_model(mconf):
    model = GPT(mconf, attention_class=SynthesizerAttention)
    return model
'''
SYNTH_HEAD_LOOP = '''class SynthesizerAttention(SynthesizerAttentionBase):
    def forward(self, x):
        B, T, C = x.size()
        d = C // self.n_head
        hidden = F.relu(self.w1(x))
        values = self.value(x)
        future = self.mask[0, 0, :T, :T] == 0
        outputs = []
        for h in range(self.n_head):
            cols = slice(h * d, (h + 1) * d)
            s = hidden[:, :, cols] @ self.w2[:, :T] + self.b2[:T]
            p = self.attn_drop(F.softmax(s.masked_fill(future, float("-inf")), dim=-1))
            outputs.append(p @ values[:, :, cols])
        return self.resid_drop(self.proj(torch.cat(outputs, dim=-1)))


def initialize_synthesizer_model(mconf):
    return GPT(mconf, SynthesizerAttention)
'''

POSITION_EXP = {  # the embeddings from exp and log (math imported in the cell), P a cyclic shift by rolling
    "08-a-code": '''def permuted_output(P, X):
    return position_free_layer(torch.einsum("ij,jk->ik", P.to(X.dtype), X), *params)


P = torch.roll(torch.eye(T, dtype=DTYPE), shifts=1, dims=0)
''',
    "08-b-code": '''import math


def position_embeddings(T, d):
    position = torch.arange(T, dtype=DTYPE).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2, dtype=DTYPE) * (-math.log(10000.0) / d))
    pe = torch.empty(T, d, dtype=DTYPE)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe
''',
}
POSITION_COLUMNS = {  # rows gathered by the permutation's indices, the embeddings built column pair by pair
    "08-a-code": '''def permuted_output(P, X):
    shuffled = X[P.argmax(dim=1)]
    return position_free_layer(shuffled, *params)


P = torch.zeros(T, T, dtype=DTYPE)
P[torch.arange(T), torch.tensor([(i + 2) % T for i in range(T)])] = 1
''',
    "08-b-code": '''def position_embeddings(T, d):
    steps = torch.arange(T, dtype=DTYPE)
    columns = []
    for i in range(0, d, 2):
        angle = steps / 10000.0 ** (i / d)
        columns.extend([torch.sin(angle), torch.cos(angle)])
    return torch.stack(columns, dim=1)
''',
}
POSITION_POLAR = {  # a matrix product in float64, the embeddings as complex numbers' parts
    "08-a-code": '''def permuted_output(P, X):
    return position_free_layer(torch.mm(P.double(), X.double()).to(X.dtype), *params)


P = torch.eye(T, dtype=DTYPE)[[(i + 3) % T for i in range(T)]]
''',
    "08-b-code": '''def position_embeddings(T, d):
    inv = torch.pow(torch.tensor(10000.0, dtype=DTYPE), -torch.arange(0, d, 2, dtype=DTYPE) / d)
    angles = torch.outer(torch.arange(T, dtype=DTYPE), inv)
    rotations = torch.polar(torch.ones_like(angles), angles)
    return torch.view_as_real(rotations).flip(-1).reshape(T, d)
''',
}

# a cell a study group shares verbatim (one of them posted it on the course forum): two helpers to look at a dataset
SHARED_SNIPPET = '''def show_examples(dataset, count=4, width=60):
    """Print a few (x, y) pairs of a dataset as text, pads dropped and masks shown as |."""
    for index in range(count):
        x, y = dataset[index]
        source = "".join(dataset.itos[int(i)] for i in x)
        target = "".join(dataset.itos[int(i)] for i in y)
        for label, text in (("x", source), ("y", target)):
            shown = text.replace(dataset.PAD_CHAR, "").replace(dataset.MASK_CHAR, "|")
            print(f"{label}[{index}]: {shown[:width]}")
        print("-" * width)


def mask_statistics(dataset, samples=500):
    """Mean and spread of the kept length and of the masked span over a few hundred samples."""
    kept, masked = [], []
    for index in range(samples):
        x, _ = dataset[index % len(dataset)]
        text = "".join(dataset.itos[int(i)] for i in x).rstrip(dataset.PAD_CHAR)
        pieces = text.split(dataset.MASK_CHAR)
        kept.append(len(text) - text.count(dataset.MASK_CHAR))
        masked.append(len(pieces[2]) if len(pieces) > 2 else 0)
    kept, masked = torch.tensor(kept, dtype=torch.float), torch.tensor(masked, dtype=torch.float)
    print(f"kept {kept.mean():.1f} +- {kept.std():.1f}, masked {masked.mean():.1f} +- {masked.std():.1f}")
    return kept, masked
'''

# a second cell the group shares (a longer forum post): looking at predictions against the answers, by place
SHARED_SNIPPET_MORE = '''def read_pairs(questions_path, predictions_path):
    """(question, answer, prediction) triples of a split whose predictions were written one a line."""
    with open(questions_path, encoding="utf-8") as handle:
        rows = [line.rstrip("\\n").split("\\t") for line in handle if line.strip()]
    with open(predictions_path, encoding="utf-8") as handle:
        guesses = [line.strip() for line in handle]
    triples = []
    for row, guess in zip(rows, guesses):
        question = row[0]
        answer = row[1] if len(row) > 1 else ""
        triples.append((question, answer, guess))
    return triples


def accuracy_by_place(triples, top=10):
    """The places asked most often, each with how often the model named it right."""
    asked, right = {}, {}
    for _, answer, guess in triples:
        asked[answer] = asked.get(answer, 0) + 1
        if guess == answer:
            right[answer] = right.get(answer, 0) + 1
    ranked = sorted(asked.items(), key=lambda item: -item[1])[:top]
    for place, count in ranked:
        share = right.get(place, 0) / count
        print(f"{place:<20} {count:>4} asked, {100 * share:5.1f}% right")
    return {place: right.get(place, 0) / count for place, count in ranked}


def wrong_answers(triples, limit=15):
    """The first few questions answered wrongly, with what was said."""
    shown = 0
    for question, answer, guess in triples:
        if guess != answer and shown < limit:
            print(f"{question!r}: said {guess!r}, the answer is {answer!r}")
            shown += 1
    return shown
'''
