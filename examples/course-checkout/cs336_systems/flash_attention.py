"""FlashAttention-2 as the assignment asks for it: a tiled forward in plain PyTorch and one as a
Triton kernel, both with the same backward (recomputed from the saved logsumexp, whole-matrix, as
the handout permits).

Q, K, V are (batch, seq, d); the batch may fold the heads in. The scale is 1/sqrt(d); with
is_causal, query i sees keys j <= i. Softmax statistics and accumulators are fp32; O comes back in
the inputs' dtype, and L (the logsumexp of each query's scaled scores, (batch, seq), fp32) is
saved for backward.

Triton is imported under a guard: without it, the PyTorch function (and the rest of
cs336_systems) still works, and FlashAttentionTriton says why it cannot run."""

import math

import torch

try:
    import triton
    import triton.language as tl
except ImportError:  # a machine without Triton: the PyTorch version still works
    triton = None

TILE = 64  # query and key tile: clipped to the sequence in PyTorch, masked at its end in Triton


def causal_hidden(q_idx, k_idx):
    """Which (query, key) pairs a causal mask hides, for broadcastable index tensors."""
    return k_idx > q_idx


def _save_for_backward(ctx, Q, K, V, O, L, is_causal, scale, hidden):
    ctx.save_for_backward(Q, K, V, O, L)
    ctx.is_causal, ctx.scale, ctx.hidden = is_causal, scale, hidden


def attention_backward(ctx, dO):
    """The FA-2 backward from the saved logsumexp, whole-matrix in fp32: P = exp(S - L),
    dV = P^T dO, dP = dO V^T, dS = P * (dP - D) with D = rowsum(dO * O), dQ = dS K * scale,
    dK = dS^T Q * scale. Returns the four gradients of forward(Q, K, V, is_causal)."""
    Q, K, V, O, L = ctx.saved_tensors
    q, k, v, o, do = (t.float() for t in (Q, K, V, O, dO))
    S = q @ k.transpose(-1, -2) * ctx.scale
    if ctx.is_causal:
        q_idx = torch.arange(Q.shape[-2], device=Q.device)[:, None]
        k_idx = torch.arange(K.shape[-2], device=K.device)[None, :]
        S = S.masked_fill(ctx.hidden(q_idx, k_idx), float("-inf"))
    P = torch.exp(S - L[..., None])
    dV = P.transpose(-1, -2) @ do
    dP = do @ v.transpose(-1, -2)
    D = (do * o).sum(-1, keepdim=True)
    dS = P * (dP - D)
    dQ = dS @ k * ctx.scale
    dK = dS.transpose(-1, -2) @ q * ctx.scale
    return dQ.to(Q.dtype), dK.to(K.dtype), dV.to(V.dtype), None


def pytorch_forward(ctx, Q, K, V, is_causal, hidden=causal_hidden):
    """Tiled forward with an online softmax: for each query tile, a running max m, running sum l
    and unnormalised output acc over the key tiles; tiles the mask hides entirely are skipped."""
    batch, n_q, d = Q.shape
    n_k = K.shape[-2]
    scale = 1.0 / math.sqrt(d)
    bq, bk = min(TILE, n_q), min(TILE, n_k)
    O = torch.empty(batch, n_q, d, dtype=torch.float32, device=Q.device)
    L = torch.empty(batch, n_q, dtype=torch.float32, device=Q.device)
    for qs in range(0, n_q, bq):
        q = Q[:, qs:qs + bq].float()
        q_idx = torch.arange(qs, qs + q.shape[1], device=Q.device)[:, None]
        m = torch.full(q.shape[:2], float("-inf"), device=Q.device)
        l = torch.zeros(q.shape[:2], device=Q.device)
        acc = torch.zeros_like(q)
        for ks in range(0, n_k, bk):
            # A tile whose first key the tile's last query cannot see is hidden entirely.
            if is_causal and hidden(qs + q.shape[1] - 1, ks):
                continue
            k, v = K[:, ks:ks + bk].float(), V[:, ks:ks + bk].float()
            s = q @ k.transpose(-1, -2) * scale
            if is_causal:
                k_idx = torch.arange(ks, ks + k.shape[1], device=K.device)[None, :]
                s = s.masked_fill(hidden(q_idx, k_idx), float("-inf"))
            m_new = torch.maximum(m, s.amax(-1))
            p = torch.exp(s - m_new[..., None])
            alpha = torch.exp(m - m_new)  # rescales what earlier tiles summed
            l = alpha * l + p.sum(-1)
            acc = alpha[..., None] * acc + p @ v
            m = m_new
        O[:, qs:qs + bq] = acc / l[..., None]
        L[:, qs:qs + bq] = m + torch.log(l)
    O = O.to(Q.dtype)
    _save_for_backward(ctx, Q, K, V, O, L, is_causal, scale, hidden)
    return O


class FlashAttentionPytorch(torch.autograd.Function):
    """apply(Q, K, V, is_causal=False) -> O: tiled FlashAttention-2 in plain PyTorch."""

    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        return pytorch_forward(ctx, Q, K, V, is_causal)

    @staticmethod
    def backward(ctx, dO):
        return attention_backward(ctx, dO)


if triton is not None:

    @triton.jit
    def flash_fwd_kernel(
        Q_ptr, K_ptr, V_ptr, O_ptr, L_ptr,
        stride_qb, stride_qq, stride_qd,
        stride_kb, stride_kk, stride_kd,
        stride_vb, stride_vk, stride_vd,
        stride_ob, stride_oq, stride_od,
        stride_lb, stride_lq,
        N_QUERIES, N_KEYS, D, scale,
        D_BLOCK: tl.constexpr, Q_TILE_SIZE: tl.constexpr, K_TILE_SIZE: tl.constexpr,
        is_causal: tl.constexpr, PRECISION: tl.constexpr,
    ):
        """One program per (query tile, batch element): streams the key/value tiles through an
        online softmax and writes its rows of O and L. Rows, keys and head-dim columns past the
        tensors' ends are masked (D_BLOCK is D rounded up to a power of two, at least 16)."""
        q_tile = tl.program_id(0)
        b = tl.program_id(1)
        q_idx = q_tile * Q_TILE_SIZE + tl.arange(0, Q_TILE_SIZE)
        d_idx = tl.arange(0, D_BLOCK)
        q_ok = q_idx < N_QUERIES
        d_ok = d_idx < D

        q = tl.load(Q_ptr + b * stride_qb + q_idx[:, None] * stride_qq + d_idx[None, :] * stride_qd,
                    mask=q_ok[:, None] & d_ok[None, :], other=0.0)
        m = tl.full((Q_TILE_SIZE,), float("-inf"), dtype=tl.float32)
        l = tl.zeros((Q_TILE_SIZE,), dtype=tl.float32)
        acc = tl.zeros((Q_TILE_SIZE, D_BLOCK), dtype=tl.float32)

        # Causal: key tiles wholly after this query tile are never visited (keys past N_KEYS
        # are masked below, so the bound need not be clipped to it).
        if is_causal:
            k_end = (q_tile + 1) * Q_TILE_SIZE
        else:
            k_end = N_KEYS
        for ks in range(0, k_end, K_TILE_SIZE):
            k_idx = ks + tl.arange(0, K_TILE_SIZE)
            kv_mask = (k_idx < N_KEYS)[:, None] & d_ok[None, :]
            k = tl.load(K_ptr + b * stride_kb + k_idx[:, None] * stride_kk + d_idx[None, :] * stride_kd,
                        mask=kv_mask, other=0.0)
            v = tl.load(V_ptr + b * stride_vb + k_idx[:, None] * stride_vk + d_idx[None, :] * stride_vd,
                        mask=kv_mask, other=0.0)
            s = tl.dot(q, tl.trans(k), input_precision=PRECISION) * scale
            hidden = (k_idx >= N_KEYS)[None, :]
            if is_causal:
                hidden = hidden | (k_idx[None, :] > q_idx[:, None])
            s = tl.where(hidden, float("-inf"), s)
            m_new = tl.maximum(m, tl.max(s, axis=1))
            p = tl.exp(s - m_new[:, None])
            alpha = tl.exp(m - m_new)
            l = alpha * l + tl.sum(p, axis=1)
            acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PRECISION)
            m = m_new

        o = acc / l[:, None]
        tl.store(O_ptr + b * stride_ob + q_idx[:, None] * stride_oq + d_idx[None, :] * stride_od,
                 o.to(O_ptr.dtype.element_ty), mask=q_ok[:, None] & d_ok[None, :])
        tl.store(L_ptr + b * stride_lb + q_idx * stride_lq, m + tl.log(l), mask=q_ok)


def triton_forward(ctx, Q, K, V, is_causal, scale=None):
    """Launches flash_fwd_kernel; fp32 inputs use IEEE fp32 products (no TF32)."""
    if triton is None:
        raise RuntimeError("FlashAttentionTriton needs the triton package, which is not installed")
    batch, n_q, d = Q.shape
    n_k = K.shape[-2]
    if scale is None:
        scale = 1.0 / math.sqrt(d)
    O = torch.empty_like(Q)
    L = torch.empty(batch, n_q, dtype=torch.float32, device=Q.device)
    grid = (triton.cdiv(n_q, TILE), batch)
    flash_fwd_kernel[grid](
        Q, K, V, O, L,
        *Q.stride(), *K.stride(), *V.stride(), *O.stride(), *L.stride(),
        n_q, n_k, d, scale,
        D_BLOCK=max(16, triton.next_power_of_2(d)), Q_TILE_SIZE=TILE, K_TILE_SIZE=TILE,
        is_causal=bool(is_causal), PRECISION="ieee" if Q.dtype == torch.float32 else "tf32",
    )
    _save_for_backward(ctx, Q, K, V, O, L, is_causal, scale, causal_hidden)
    return O


class FlashAttentionTriton(torch.autograd.Function):
    """apply(Q, K, V, is_causal=False) -> O: the forward is the Triton kernel flash_fwd_kernel."""

    @staticmethod
    def forward(ctx, Q, K, V, is_causal=False):
        return triton_forward(ctx, Q, K, V, is_causal)

    @staticmethod
    def backward(ctx, dO):
        return attention_backward(ctx, dO)
