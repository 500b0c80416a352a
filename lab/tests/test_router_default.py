"""Default routers: trained on several datasets' label records, leave-one-out, shipped files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from kg_platform.config import Settings
from kg_platform.retrieval.strategies.mog import choose_level
from kg_platform.retrieval.strategies.router import Router, load_default_router
from kg_platform_lab.routers.default import PROBE, train_default
from kg_platform_lab.settings import RouterTrainingSettings


class _HashEmbedder:
    """A deterministic stand-in embedder (bag of hashed words), enough to separate questions."""

    model_name = "all-MiniLM-L6-v2"

    def embed(self, texts):
        out = np.zeros((len(texts), 16), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, sum(map(ord, w)) % 16] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def _records():
    recs = []
    for ds, best in (("alpha", 0), ("beta", 2), ("gamma", 4)):
        for i in range(12):
            sims = [0.1] * 5
            sims[best] = 0.9
            recs.append(
                {
                    "dataset": ds,
                    "kind": "mog",
                    "question": f"{ds} question {i} about {ds}",
                    "sims": sims,
                }
            )
    return recs


def test_train_default_pools_datasets_and_leaves_one_out(tmp_path):
    pytest.importorskip("torch")
    settings = Settings()
    training = RouterTrainingSettings(max_epochs=400, patience=400, hidden=32, lr=0.01)
    emb = _HashEmbedder()
    meta = train_default(_records(), "mog", tmp_path / "all", settings, emb, training=training)
    assert meta["trained_on"] == ["alpha", "beta", "gamma"]
    loo = train_default(
        _records(), "mog", tmp_path / "loo", settings, emb, exclude=["beta"], training=training
    )
    assert loo["trained_on"] == ["alpha", "gamma"] and "beta" not in loo["metrics"]["per_dataset"]
    router = Router.from_dir(tmp_path / "all")
    # every dataset's questions are routed to the level its labels prefer (in-sample)
    for ds, level in (("alpha", 1), ("beta", 3), ("gamma", 5)):
        assert meta["metrics"]["per_dataset"][ds]["chosen"][str(level)] >= 10, meta
        w = router.weights(emb.embed([f"{ds} question 3 about {ds}"])[0])
        assert choose_level(w, settings.tuning.mog.zero_weight) == level
    # the probe recorded in meta.json is what the saved files give
    w = router.weights(emb.embed([PROBE])[0])
    assert choose_level(w, settings.tuning.mog.zero_weight) == meta["probe"]["level"]


_CHILD = textwrap.dedent("""
    import json, sys
    BLOCKED = ("torch", "sentence_transformers", "transformers")

    class BlockTorch:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ImportError(f"{name} is blocked")

    sys.meta_path.insert(0, BlockTorch())
    from kg_platform.config import Settings
    from kg_platform.embedding import get_embedder
    from kg_platform.retrieval.strategies.mog import choose_level
    from kg_platform.retrieval.strategies.router import load_default_router

    s = Settings()
    emb = get_embedder(s.embedding)
    out = {}
    for kind, n in (("mog", s.segment.levels), ("mogg", s.tuning.mog.mogg_levels)):
        r = load_default_router(s, kind, n)
        q = r.meta["probe"]["question"]
        w = r.weights(emb.embed([q])[0])
        out[kind] = {"level": choose_level(w, s.tuning.mog.zero_weight), "w": [float(x) for x in w],
                     "meta": r.meta}
    out["torch_loaded"] = [m for m in sys.modules if m.split(".")[0] in BLOCKED]
    print(json.dumps(out))
""")


def test_shipped_default_routers_load_without_torch_and_decide_as_recorded(tmp_path):
    script = tmp_path / "child.py"
    script.write_text(_CHILD, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGP_MOG__")}
    runs = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    a, b = runs
    assert a["torch_loaded"] == []
    for kind in ("mog", "mogg"):
        assert a[kind]["level"] == b[kind]["level"] and a[kind]["w"] == b[kind]["w"]
        meta = a[kind]["meta"]
        assert {"hotpotqa", "2wikimultihopqa", "musique", "longdoc"} <= set(meta["trained_on"])
        assert a[kind]["level"] == meta["probe"]["level"]
        assert a[kind]["w"] == pytest.approx(meta["probe"]["weights"], abs=1e-4)


def test_default_router_off_or_mismatched_gives_none(tmp_path):
    assert load_default_router(Settings(mog={"default_router": "none"}), "mog", 5) is None
    assert load_default_router(Settings(mog={"default_router": str(tmp_path)}), "mog", 5) is None
    s = Settings()
    if load_default_router(s, "mog", s.segment.levels) is not None:  # shipped: level count checked
        assert load_default_router(s, "mog", s.segment.levels + 1) is None
