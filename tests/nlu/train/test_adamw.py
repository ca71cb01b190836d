"""test_adamw.py — parley's adamw_step against torch.optim.AdamW over several steps.

Four tensors (two matrices with weight decay, two biases without, as bert_decay_mask splits
a model) become two torch parameter groups with weight_decay wd and 0; the C side gets the
same values flat with a 0/1 decay mask (tests/tools/adamw_steps.c). After 7 steps of random
gradients (some large, some zero) both in float32, parameters and moment buffers must
agree to 1e-6 relative to the largest value of each (max |x - x_torch| <= 1e-6 max |x_torch|):
both sides do the same float operations in the same order, and only fused multiply-adds may
round differently, by an ulp (6e-8) of the terms per step. (Elementwise relative error is
not a fair measure: m = b1 m + (1 - b1) g cancels to near zero when g changes sign, and an
ulp of the terms is then a large fraction of the result.) Elements whose gradient is always
zero move by weight decay alone, p (1 - lr wd)^t, which checks the mask and the decay.

Usage: test_adamw.py ADAMW_STEPS   (exits 77 without torch or numpy)
"""
import os
import struct
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import torch
except ImportError:
    sys.exit(77)

TOOL = sys.argv[1]
FAILURES = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        FAILURES.append(what)


def run(tmp, lr, wd, steps, eps=1e-8, betas=(0.9, 0.999)):
    rng = np.random.default_rng(7)
    shapes = [((30, 20), True), ((20,), False), ((7, 13), True), ((13,), False)]
    params = [rng.normal(0, 1, s).astype(np.float32) for s, _ in shapes]
    decay = np.concatenate([np.full(int(np.prod(s)), d, np.uint8) for s, d in shapes])
    grads = []
    for t in range(steps):
        g = [rng.normal(0, 1, s).astype(np.float32) * np.float32(10.0 ** rng.integers(-3, 3))
             for s, _ in shapes]
        g[0][0, :5] = 0.0  # zero gradients: only decay and the moments move these
        grads.append(g)
    # The hyperparameters as the float32 values the C side receives.
    f32 = lambda x: float(np.float32(x))
    lr, wd, eps, b1, b2 = f32(lr), f32(wd), f32(eps), f32(betas[0]), f32(betas[1])

    tp = [torch.tensor(p, requires_grad=True) for p in params]
    opt = torch.optim.AdamW([{"params": [tp[i] for i, (_, d) in enumerate(shapes) if d], "weight_decay": wd},
                             {"params": [tp[i] for i, (_, d) in enumerate(shapes) if not d], "weight_decay": 0.0}],
                            lr=lr, betas=(b1, b2), eps=eps)
    for g in grads:
        for p, gi in zip(tp, g):
            p.grad = torch.tensor(gi)
        opt.step()

    inp, out = os.path.join(tmp, "in.bin"), os.path.join(tmp, "out.bin")
    n = decay.size
    with open(inp, "wb") as f:
        f.write(struct.pack("<qq5f", n, steps, lr, b1, b2, eps, wd))
        f.write(decay.tobytes())
        f.write(np.concatenate([p.ravel() for p in params]).astype("<f4").tobytes())
        for g in grads:
            f.write(np.concatenate([x.ravel() for x in g]).astype("<f4").tobytes())
    subprocess.run([TOOL, inp, out], check=True)
    res = np.fromfile(out, dtype="<f4").reshape(3, n)
    want = [np.concatenate([p.detach().numpy().ravel() for p in tp]),
            np.concatenate([opt.state[p]["exp_avg"].numpy().ravel() for p in tp]),
            np.concatenate([opt.state[p]["exp_avg_sq"].numpy().ravel() for p in tp])]
    for name, got, w in zip(("params", "exp_avg", "exp_avg_sq"), res, want):
        diff = np.max(np.abs(got.astype(np.float64) - w))
        check(diff <= 1e-6 * np.max(np.abs(w)), "lr %g wd %g, %d steps: %s max |diff| %.3g "
              "(max %.3g)" % (lr, wd, steps, name, diff, np.max(np.abs(w))))
    # The always-zero gradients: decay alone, in the decayed tensor only.
    p0 = params[0][0, :5].astype(np.float64)
    decayed = p0 * (1.0 - lr * wd) ** steps
    rel = np.max(np.abs(res[0][:5] - decayed) / np.abs(decayed))
    check(rel <= 1e-6, "zero-gradient elements decay as p (1 - lr wd)^t (relative %.3g)" % rel)

def main():
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        run(tmp, 1e-2, 0.1, 7)
        run(tmp, 5e-5, 0.01, 3)
        run(tmp, 3e-3, 0.0, 5, eps=1e-6, betas=(0.8, 0.99))
    print("%d failures" % len(FAILURES))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
