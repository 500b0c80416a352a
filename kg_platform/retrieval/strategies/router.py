"""The MoG / MoGG router (MoG paper): an MLP on the query embedding -> weights over levels.

This module loads routers and runs them in numpy; training lives in the lab
(``kg_platform_lab.routers.training``). Training follows the paper: for every training question, the single best snippet of each level
is compared with the question's label text (gold supporting sentences, else question + answer);
the best level gets soft label 0.8, the second 0.2, the rest 0; the MLP's sigmoid outputs are
trained with binary cross-entropy summed over levels, Adam (lr 1e-3), with early stopping on a
validation split. Artifacts are versioned on disk under
``data_dir/routers/<corpus>/<kind>-<version>/`` and registered as ``(:Router)`` with metrics, so
retrieval picks up the newest router of a corpus without configuration.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kg_platform.errors import RetrievalError

if TYPE_CHECKING:
    from kg_platform.config import Settings
    from kg_platform.graph import GraphClient

log = logging.getLogger(__name__)

KINDS = ("mog", "mogg")


def n_levels_for(settings: "Settings", kind: str) -> int:
    """How many levels a router of ``kind`` weighs: MoG granularity levels or MoGG hop ranges."""
    return settings.segment.levels if kind == "mog" else settings.tuning.mog.mogg_levels


# --------------------------------------------------------------------------- loaded router
class Router:
    """A trained router: ``weights(query_vector) -> w`` over levels 1..n, in numpy.

    Why numpy: retrieval runs where torch is not installed (torch is in the ``train`` extra).
    The MLP is ``Linear-ReLU-(Dropout)-Linear-Sigmoid``; dropout is the identity at inference.
    Weights come from ``weights.npz`` (written by the lab's ``train_router``); a router trained before
    that file existed is read from ``model.pt``, which needs torch once.
    """

    def __init__(
        self,
        path: Path,
        version: str,
        n_levels: int,
        dim: int,
        hidden: int,
        dropout: float,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.path, self.version, self.n_levels = path, version, n_levels
        self.meta = meta or {}
        state = load_router_state(path)
        self.w1 = np.ascontiguousarray(state["0.weight"], dtype=np.float32).T
        self.b1 = np.asarray(state["0.bias"], dtype=np.float32)
        self.w2 = np.ascontiguousarray(state["3.weight"], dtype=np.float32).T
        self.b2 = np.asarray(state["3.bias"], dtype=np.float32)
        if self.w1.shape != (dim, hidden) or self.w2.shape != (hidden, n_levels):
            raise RetrievalError(
                f"router weights in {path} do not match its meta.json ({dim}->{hidden}->{n_levels})",
                hint="retrain the router with `kgp lab router train`",
            )

    @classmethod
    def from_dir(cls, path: Path) -> "Router":
        meta = json.loads((path / "meta.json").read_text())
        return cls(
            path,
            meta["version"],
            meta["n_levels"],
            meta["dim"],
            meta["hidden"],
            meta["dropout"],
            meta,
        )

    def weights(self, qvec: np.ndarray) -> np.ndarray:
        return np.asarray(self.weights_batch(np.asarray(qvec, dtype=np.float32)[None, :])[0])

    def weights_batch(self, X: np.ndarray) -> np.ndarray:
        hidden = np.maximum(np.asarray(X, dtype=np.float32) @ self.w1 + self.b1, 0.0)
        logits = (hidden @ self.w2 + self.b2).astype(np.float64)
        return np.asarray((1.0 / (1.0 + np.exp(-logits))).astype(np.float32))


_NPZ = "weights.npz"


def save_router_state(state: dict[str, Any], path: Path) -> None:
    """Write the MLP weights as numpy arrays (what inference reads, no torch needed)."""
    arrays: dict[str, np.ndarray] = {
        k: v.detach().cpu().numpy() if hasattr(v, "detach") else np.asarray(v)
        for k, v in state.items()
    }
    # numpy's stub types **kwds as its `allow_pickle: bool` keyword; the arrays are keyword data
    np.savez(path / _NPZ, **arrays)  # type: ignore[arg-type]


def load_router_state(path: Path) -> dict[str, np.ndarray]:
    """The router's weights: ``weights.npz``, else the older ``model.pt`` (needs torch)."""
    if (path / _NPZ).exists():
        with np.load(path / _NPZ) as data:
            return {k: data[k] for k in data.files}
    try:
        import torch
    except ImportError as exc:
        raise RetrievalError(
            f"router {path} has only model.pt, which needs torch to read",
            hint="retrain it with `kgp lab router train` (writes weights.npz), or install the train "
            "extra once and run any retrieval to convert it",
        ) from exc
    state = {k: v.numpy() for k, v in torch.load(path / "model.pt", weights_only=True).items()}
    try:
        np.savez(path / _NPZ, **state)
    except OSError:  # read-only artifact folder: keep working from model.pt
        pass
    return state


_LOADED: dict[str, Router] = {}
_LOCK = threading.Lock()


def load_router(graph: "GraphClient", corpus: str, kind: str) -> Router | None:
    """The newest registered router of ``corpus`` and ``kind``, or None when none is trained."""
    rows = graph.read("retrieval/mog_router_latest", corpus=corpus, kind=kind)
    if not rows:
        return None
    path = Path(rows[0]["path"])
    with _LOCK:
        if str(path) not in _LOADED:
            if not (path / "model.pt").exists() and not (path / _NPZ).exists():
                raise RetrievalError(
                    f"router {rows[0]['id']} of corpus {corpus!r} points at {path}, which is missing",
                    hint=f"retrain: `kgp lab router train --corpus {corpus} --dataset FILE.jsonl "
                    f"--kind {kind}`, or delete the (:Router) node",
                )
            _LOADED[str(path)] = Router.from_dir(path)
        return _LOADED[str(path)]


# --------------------------------------------------------------------------- default routers
def default_router_dir(settings: "Settings") -> Path | None:
    """Where the default routers live: the package's ``models/routers`` (``builtin``), a folder
    named by ``mog.default_router``, or None (``none``: fixed levels)."""
    choice = (settings.mog.default_router or "builtin").strip()
    if choice.lower() == "none":
        return None
    if choice.lower() == "builtin":
        from importlib import resources

        return Path(str(resources.files("kg_platform").joinpath("models", "routers")))
    return Path(choice).expanduser()


def load_default_router(
    settings: "Settings", kind: str, n_levels: int, dim: int | None = None
) -> Router | None:
    """The default ``kind`` router (used for any corpus without its own), or None when it is
    switched off, missing, or built for another number of levels / embedding size."""
    root = default_router_dir(settings)
    if root is None or not (root / kind / "meta.json").exists():
        return None
    path = root / kind
    with _LOCK:
        if str(path) not in _LOADED:
            _LOADED[str(path)] = Router.from_dir(path)
        router = _LOADED[str(path)]
    meta_embedder = str(router.meta.get("embedder") or "")
    model = str(settings.embedding.model)
    if (
        router.n_levels != n_levels
        or (dim is not None and router.w1.shape[0] != dim)
        or (meta_embedder and Path(meta_embedder).name != Path(model).name)
    ):
        log.warning(
            "default %s router in %s is for %d levels / %s; this graph has %d levels / "
            "%s: using the fixed level",
            kind,
            path,
            router.n_levels,
            meta_embedder,
            n_levels,
            model,
        )
        return None
    return router


def router_for(
    graph: "GraphClient",
    settings: "Settings",
    corpus: str,
    kind: str,
    n_levels: int,
    dim: int | None = None,
) -> tuple[Router | None, str]:
    """The router a corpus uses and where it comes from: its own newest trained router
    (``"corpus"``), else the default one (``"default"``), else none (``"fixed"``)."""
    own = load_router(graph, corpus, kind)
    if own is not None:
        return own, "corpus"
    default = load_default_router(settings, kind, n_levels, dim)
    if default is not None:
        return default, "default"
    return None, "fixed"
