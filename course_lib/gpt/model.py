"""A minGPT-style character GPT: CausalSelfAttention -> MLP -> Block -> GPT."""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from course_lib.gpt.attention import CausalSelfAttention
from course_lib.gpt.dropout import make_dropout

ATTENTION_IMPLS = ("sdpa", "manual")


@dataclass
class GPTConfig:
    """Shape and regularisation of the GPT (defaults: SPEC Part 1)."""

    vocab_size: int  # number of symbols, PAD and MASK included
    block_size: int  # longest sequence the model accepts (positions learned)
    n_layer: int = 4  # transformer blocks
    n_head: int = 8  # attention heads per block
    n_embd: int = 256  # width of the residual stream
    embd_pdrop: float = 0.1  # dropout after token + position embeddings
    resid_pdrop: float = 0.1  # dropout on each residual branch
    attn_pdrop: float = 0.1  # dropout on attention weights
    attention_impl: str = "sdpa"  # "sdpa" (fused, fast) or "manual" (readable); same numbers
    fast_dropout: bool = False  # cheap CPU dropout masks: same rates, another random stream

    def __post_init__(self) -> None:
        for field in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            if int(getattr(self, field)) < 1:
                raise ValueError(f"GPTConfig.{field} must be a positive integer, got {getattr(self, field)!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head})")
        for field in ("embd_pdrop", "resid_pdrop", "attn_pdrop"):
            if not 0.0 <= getattr(self, field) < 1.0:
                raise ValueError(f"GPTConfig.{field} must be in [0, 1), got {getattr(self, field)!r}")
        if self.attention_impl not in ATTENTION_IMPLS:
            raise ValueError(f"attention_impl must be one of {ATTENTION_IMPLS}, got {self.attention_impl!r}")


class Block(nn.Module):
    """Pre-LayerNorm transformer block: x + attn(ln(x)), then x + mlp(ln(x))."""

    def __init__(self, config: GPTConfig, attention_class: type[nn.Module]):
        super().__init__()
        self.ln1 = nn.LayerNorm(config.n_embd)
        self.ln2 = nn.LayerNorm(config.n_embd)
        self.attn = attention_class(config)
        self.mlp = nn.Sequential(
            nn.Linear(config.n_embd, 4 * config.n_embd),
            nn.GELU(),
            nn.Linear(4 * config.n_embd, config.n_embd),
            make_dropout(config.resid_pdrop, config.fast_dropout),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))

    def forward_cached(self, x: torch.Tensor, cache):
        a, cache = self.attn.forward_cached(self.ln1(x), cache)
        x = x + a
        return x + self.mlp(self.ln2(x)), cache


class GPT(nn.Module):
    """Character language model. ``attention_class`` swaps in another attention (e.g. a synthesizer)."""

    def __init__(self, config: GPTConfig, attention_class: type[nn.Module] = CausalSelfAttention):
        super().__init__()
        self.config = config
        self.attention_class = attention_class
        self.tok_emb = nn.Embedding(config.vocab_size, config.n_embd)
        self.pos_emb = nn.Parameter(torch.zeros(1, config.block_size, config.n_embd))
        self.drop = make_dropout(config.embd_pdrop, config.fast_dropout)
        self.blocks = nn.Sequential(*[Block(config, attention_class) for _ in range(config.n_layer)])
        self.ln_f = nn.LayerNorm(config.n_embd)
        self.head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module: nn.Module) -> None:
        # GPT-2 style: N(0, 0.02) for Linear and Embedding weights, zero biases, unit LayerNorm
        if isinstance(module, (nn.Linear, nn.Embedding)):
            module.weight.data.normal_(mean=0.0, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.LayerNorm):
            module.bias.data.zero_()
            module.weight.data.fill_(1.0)

    def get_block_size(self) -> int:
        return self.config.block_size

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def supports_kv_cache(self) -> bool:
        """True when every block's attention can reuse earlier keys and values (vanilla attention)."""
        return all(hasattr(block.attn, "forward_cached") for block in self.blocks)

    @torch.no_grad()
    def forward_cached(self, idx: torch.Tensor, caches: list | None = None) -> tuple[torch.Tensor, list]:
        """Logits of new tokens idx (B, T_new) after the positions held in ``caches`` (eval mode)."""
        past = 0 if caches is None else caches[0][0].size(2)
        T = idx.size(1)
        if past + T > self.config.block_size:
            raise ValueError(f"sequence length {past + T} exceeds block_size {self.config.block_size}")
        x = self.tok_emb(idx) + self.pos_emb[:, past:past + T, :]  # (B, T, C)
        new_caches = []
        for i, block in enumerate(self.blocks):
            x, cache = block.forward_cached(x, None if caches is None else caches[i])
            new_caches.append(cache)
        return self.head(self.ln_f(x)), new_caches  # (B, T, vocab)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None) -> tuple[torch.Tensor,
                                                                                       torch.Tensor | None]:
        if idx.dim() != 2:
            raise ValueError(f"GPT expects token indices of shape (B, T), got {tuple(idx.shape)}")
        B, T = idx.size()
        if T > self.config.block_size:
            raise ValueError(f"sequence length {T} exceeds block_size {self.config.block_size}")
        x = self.drop(self.tok_emb(idx) + self.pos_emb[:, :T, :])  # (B, T, C)
        x = self.ln_f(self.blocks(x))  # (B, T, C)
        logits = self.head(x)  # (B, T, vocab)
        loss = None
        if targets is not None:
            # index 0 is PAD: padded positions teach nothing
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1), ignore_index=0)
        return logits, loss
