"""Build an ONNX graph of a BERT sentence encoder straight from its safetensors weights.

Why not ``torch.onnx.export``: a default install has no torch, yet must turn the bundled
all-MiniLM-L6-v2 weights into something ONNX Runtime runs. The BERT encoder is a short, fixed
stack of standard ONNX operators, so we write it with ``onnx.helper`` from the numpy weights.
The graph ends with sentence-transformers' mean pooling (mask-weighted mean of the last hidden
states), so the runtime returns one row per text; L2 normalisation happens in numpy. The last
hidden states are a second output, ``token_embeddings``, for late chunking (a piece's vector
pooled from the tokens of its span inside its chunk, one model pass for both).

The result is cached under ``<cache_dir>/onnx`` keyed by the weights' content (sha256), so the
build (about a second) happens once per machine, not once per command, and every virtualenv or
clone holding the same bundled weights shares one copy. Hashing 90 MB costs ~0.2 s, so each
weights file's digest is remembered in a sidecar (``digests.json``) against its path, size and
mtime. Models not used for ``UNUSED_DAYS`` days are pruned when a new one is built.

The weights of a cached model live beside it in a ``<model>.onnx.data`` file (ONNX's external
data, each tensor at an aligned offset), which ONNX Runtime maps into memory instead of reading:
loading the inline fp32 file touched ~200 MB of fresh pages (the file read, then its tensors
copied), about a fifth of a CPU-second per command in page faults, and with the int8 copy most
of what a ``kgp retrieve`` spent in the kernel. The graph and its weights are the same, so are
the outputs (``tests/unit/test_embedding_onnx.py``). A model cached inline by an earlier
version is moved to this layout on first use.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from kg_platform.errors import EmbeddingError

__all__ = [
    "build_bert_onnx",
    "cached_onnx_path",
    "data_path",
    "externalise",
    "prune_unused",
    "quantize_int8",
    "weights_digest",
]

log = logging.getLogger(__name__)

_BUILDER_VERSION = "2"  # 2: token_embeddings output
_OPSET = 17
_MASK_VALUE = -1.0e9


def _weights_file(model_dir: Path) -> Path:
    path = model_dir / "model.safetensors"
    if not path.exists():
        raise EmbeddingError(
            f"no model.safetensors in {model_dir}; the ONNX embedder builds its graph from it",
            hint="point KGP_EMBEDDING__MODEL at a BERT sentence-transformers folder with "
            "model.safetensors, or set KGP_EMBEDDING__PROVIDER=sentence-transformers",
        )
    return path


def cached_onnx_path(model_dir: Path, cache_dir: Path, quantize: str) -> Path:
    """Where the ONNX file for these weights lives; built (and quantised) on first use."""
    onnx_dir = cache_dir / "onnx"
    digest = weights_digest(_weights_file(model_dir), onnx_dir)
    stem = f"{model_dir.name}-sha{digest[:16]}-b{_BUILDER_VERSION}"
    target = onnx_dir / f"{stem}-{quantize}.onnx"
    if target.exists():
        _touch(target)
        _externalise_if_writable(target)
        return target
    prune_unused(onnx_dir)
    fp32 = onnx_dir / f"{stem}-fp32.onnx"
    if not fp32.exists():
        _atomic_write(fp32, lambda tmp: _save(build_bert_onnx(model_dir), tmp))
    else:
        _touch(fp32)
    if quantize == "int8" and not target.exists():
        _atomic_write(target, lambda tmp: quantize_int8(fp32, tmp))
    _externalise_if_writable(fp32)
    _externalise_if_writable(target)
    return target


#: offsets of external tensors are multiples of this (a page on any OS ONNX Runtime maps on)
_DATA_ALIGN = 1 << 16
#: tensors smaller than this stay inline in the graph file
_DATA_MIN_BYTES = 1024


def data_path(model: Path) -> Path:
    """The file holding ``model``'s weights once :func:`externalise` has moved them out."""
    return model.with_name(model.name + ".data")


def externalise(model: Path) -> bool:
    """Move the weights of the inline ONNX file ``model`` to :func:`data_path` (tensor
    contents byte for byte, each at an aligned offset), so ONNX Runtime maps them instead of
    reading and copying them. False when that is already done.

    Safe beside readers and a second writer: the data file is renamed into place before the
    graph that names it, and both writers write the same bytes, so a reader opens either the
    old inline file or the new pair."""
    data = data_path(model)
    if data.exists() and model.stat().st_size < data.stat().st_size:
        return False  # done (a data file beside a larger graph: a move cut short, redone)
    import onnx
    from onnx import TensorProto

    proto = onnx.load(str(model), load_external_data=False)
    if any(t.data_location == TensorProto.EXTERNAL for t in proto.graph.initializer):
        return False  # another layout of external data: leave it as it is

    def write_data(tmp: Path) -> None:
        with tmp.open("wb") as f:
            for tensor in proto.graph.initializer:
                if len(tensor.raw_data) < _DATA_MIN_BYTES:
                    continue
                f.write(b"\0" * (-f.tell() % _DATA_ALIGN))
                offset, length = f.tell(), len(tensor.raw_data)
                f.write(tensor.raw_data)
                tensor.ClearField("raw_data")
                tensor.data_location = TensorProto.EXTERNAL
                del tensor.external_data[:]
                for key, value in (("location", data.name), ("offset", offset), ("length", length)):
                    entry = tensor.external_data.add()
                    entry.key, entry.value = key, str(value)

    _atomic_write(data, write_data)
    _atomic_write(model, lambda tmp: onnx.save_model(proto, str(tmp)))
    return True


def _externalise_if_writable(model: Path) -> None:
    try:
        externalise(model)
    except OSError as exc:  # a read-only cache still works, inline (only slower to load)
        log.debug("could not move the weights of %s to a mapped file: %s", model, exc)


UNUSED_DAYS = 30
_DIGESTS = "digests.json"


def weights_digest(weights: Path, onnx_dir: Path) -> str:
    """sha256 of ``weights``, read from the sidecar while the file's path, size and mtime are
    what they were when it was hashed."""
    stat = weights.stat()
    identity = f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}"
    sidecar = onnx_dir / _DIGESTS
    try:
        known: dict[str, str] = json.loads(sidecar.read_text())
    except (OSError, ValueError):
        known = {}
    if identity in known:
        return known[identity]
    sha = hashlib.sha256()
    with weights.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            sha.update(block)
    digest = sha.hexdigest()
    # paths that no longer exist (a deleted virtualenv or clone) leave the sidecar
    known = {k: v for k, v in known.items() if Path(k.split("|", 1)[0]).exists()}
    known[identity] = digest
    try:
        _atomic_write(sidecar, lambda tmp: tmp.write_text(json.dumps(known, indent=0)))
    except OSError as exc:  # a read-only cache still works, it only hashes again next time
        log.debug("could not record the weights digest in %s: %s", sidecar, exc)
    return digest


def prune_unused(onnx_dir: Path, *, days: float = UNUSED_DAYS) -> list[Path]:
    """Delete cached models not used for ``days`` days (every use touches its file); returns
    what was deleted. Models keyed by an earlier scheme age out the same way."""
    cutoff = time.time() - days * 86400
    removed: list[Path] = []
    for path in onnx_dir.glob("*.onnx"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
                data_path(path).unlink(missing_ok=True)
                removed.append(path)
        except OSError:  # another process pruned or is replacing it
            continue
    if removed:
        log.info("removed %d ONNX models unused for %d days from %s", len(removed), days, onnx_dir)
    return removed


def _touch(path: Path) -> None:
    """Mark a cached model as used (its mtime), so pruning keeps it."""
    try:
        os.utime(path)
    except OSError:  # read-only cache: it is only never pruned
        pass


def _atomic_write(target: Path, write: Any) -> None:
    """Write to a temporary file next to ``target`` and rename: concurrent commands never read
    a half-written model."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a shared cache must be readable
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _save(model: Any, path: Path) -> None:
    import onnx

    onnx.save_model(model, str(path))


def quantize_int8(src: Path, dst: Path) -> None:
    """Dynamic int8 quantisation of the MatMul weights, per output channel (activations and the
    embedding tables stay float: quantising those costs far more accuracy than it saves time)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    class _NoPreprocessAdvice(logging.Filter):
        """onnxruntime advises shape pre-processing on the root logger at every call; it is
        for static quantisation of vision models, and a user would read it as our problem."""

        def filter(self, record: logging.LogRecord) -> bool:
            return "pre-processing before quantization" not in record.getMessage()

    quiet = _NoPreprocessAdvice()
    root = logging.getLogger()
    root.addFilter(quiet)
    try:
        quantize_dynamic(
            str(src),
            str(dst),
            weight_type=QuantType.QInt8,
            per_channel=True,
            op_types_to_quantize=["MatMul"],
        )
    finally:
        root.removeFilter(quiet)


def build_bert_onnx(model_dir: Path) -> Any:
    """The ONNX ``ModelProto``: (input_ids, attention_mask) int64 [B, S] -> pooled [B, H]."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
        from safetensors.numpy import load_file
    except ImportError as exc:
        raise EmbeddingError(
            f"the ONNX embedder needs the onnx and safetensors packages ({exc})",
            hint="pip install onnx safetensors (both are default dependencies of kg-platform)",
        ) from exc
    config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    if (
        config.get("model_type") != "bert"
        or config.get("position_embedding_type", "absolute") != "absolute"
    ):
        raise EmbeddingError(
            f"the ONNX embedder builds BERT encoders only; {model_dir} is {config.get('model_type')!r}",
            hint="set KGP_EMBEDDING__PROVIDER=sentence-transformers for other architectures",
        )
    if config.get("hidden_act", "gelu") != "gelu":
        raise EmbeddingError(
            f"unsupported activation {config.get('hidden_act')!r} in {model_dir}",
            hint="set KGP_EMBEDDING__PROVIDER=sentence-transformers",
        )
    w = load_file(str(_weights_file(model_dir)))
    w = {k.removeprefix("bert."): v for k, v in w.items()}
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_dim = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def node(op: str, inputs: list[str], name: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [name], name=name, **attrs))
        return name

    def linear(x: str, prefix: str, out: str) -> str:
        weight = const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T.astype(np.float32))
        bias = const(f"{prefix}.bias", w[f"{prefix}.bias"].astype(np.float32))
        return node("Add", [node("MatMul", [x, weight], f"{out}_mm"), bias], out)

    def layer_norm(x: str, prefix: str, out: str) -> str:
        scale = const(f"{prefix}.weight", w[f"{prefix}.weight"].astype(np.float32))
        bias = const(f"{prefix}.bias", w[f"{prefix}.bias"].astype(np.float32))
        return node("LayerNormalization", [x, scale, bias], out, axis=-1, epsilon=eps)

    # Embeddings: word + position + token type 0 (single-segment input), then LayerNorm.
    word = const("word_embeddings", w["embeddings.word_embeddings.weight"].astype(np.float32))
    pos_tt = const(
        "position_plus_type0",
        (
            w["embeddings.position_embeddings.weight"]
            + w["embeddings.token_type_embeddings.weight"][0]
        ).astype(np.float32),
    )
    shape = node("Shape", ["input_ids"], "ids_shape")
    seq_len = node(
        "Slice",
        [shape, const("c_1", np.array([1], np.int64)), const("c_2", np.array([2], np.int64))],
        "seq_len",
    )
    positions = node(
        "Slice",
        [
            pos_tt,
            const("c_0", np.array([0], np.int64)),
            seq_len,
            const("c_axis0", np.array([0], np.int64)),
        ],
        "positions",
    )
    emb = node("Add", [node("Gather", [word, "input_ids"], "word_vectors"), positions], "emb_sum")
    h = layer_norm(emb, "embeddings.LayerNorm", "emb_out")

    mask_f = node("Cast", ["attention_mask"], "mask_f", to=TensorProto.FLOAT)
    mask4 = node("Unsqueeze", [mask_f, const("c_axes12", np.array([1, 2], np.int64))], "mask4")
    additive = node(
        "Mul",
        [
            node("Sub", [const("c_one", np.array(1.0, np.float32)), mask4], "inv_mask"),
            const("c_mask_value", np.array(_MASK_VALUE, np.float32)),
        ],
        "mask_add",
    )
    split_shape = const("c_split", np.array([0, 0, heads, head_dim], np.int64))
    merge_shape = const("c_merge", np.array([0, 0, hidden], np.int64))
    scale = const("c_scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    half = const("c_half", np.array(0.5, np.float32))
    inv_sqrt2 = const("c_inv_sqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
    one = "c_one"

    for i in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{i}"

        # Defaults bind this layer's input, index and prefix (the loop rebinds them).
        def heads_of(name: str, perm: list[int], p: str = p, h: str = h, i: int = i) -> str:
            proj = linear(h, f"{p}.attention.self.{name}", f"l{i}_{name}")
            split = node("Reshape", [proj, split_shape], f"l{i}_{name}_split")
            return node("Transpose", [split], f"l{i}_{name}_t", perm=perm)

        q = heads_of("query", [0, 2, 1, 3])
        k = heads_of("key", [0, 2, 3, 1])
        v = heads_of("value", [0, 2, 1, 3])
        scores = node(
            "Add",
            [node("Mul", [node("MatMul", [q, k], f"l{i}_qk"), scale], f"l{i}_scaled"), additive],
            f"l{i}_scores",
        )
        probs = node("Softmax", [scores], f"l{i}_probs", axis=-1)
        ctx = node(
            "Transpose", [node("MatMul", [probs, v], f"l{i}_ctx")], f"l{i}_ctx_t", perm=[0, 2, 1, 3]
        )
        merged = node("Reshape", [ctx, merge_shape], f"l{i}_ctx_merged")
        attn = linear(merged, f"{p}.attention.output.dense", f"l{i}_attn_out")
        h1 = layer_norm(
            node("Add", [attn, h], f"l{i}_res1"), f"{p}.attention.output.LayerNorm", f"l{i}_h1"
        )
        inter = linear(h1, f"{p}.intermediate.dense", f"l{i}_inter")
        erf = node("Erf", [node("Mul", [inter, inv_sqrt2], f"l{i}_gelu_scaled")], f"l{i}_gelu_erf")
        gelu = node(
            "Mul",
            [
                node("Mul", [inter, half], f"l{i}_gelu_half"),
                node("Add", [erf, one], f"l{i}_gelu_1p"),
            ],
            f"l{i}_gelu",
        )
        out = linear(gelu, f"{p}.output.dense", f"l{i}_out")
        h = layer_norm(node("Add", [out, h1], f"l{i}_res2"), f"{p}.output.LayerNorm", f"l{i}_h")

    # sentence-transformers mean pooling: sum of unmasked token states / max(count, 1e-9).
    mask3 = node("Unsqueeze", [mask_f, const("c_axis2", np.array([2], np.int64))], "mask3")
    axis1 = const("c_axis1", np.array([1], np.int64))
    summed = node("ReduceSum", [node("Mul", [h, mask3], "masked"), axis1], "summed", keepdims=0)
    counts = node(
        "Max",
        [
            node("ReduceSum", [mask3, axis1], "counts_raw", keepdims=0),
            const("c_min_count", np.array(1e-9, np.float32)),
        ],
        "counts",
    )
    node("Div", [summed, counts], "sentence_embedding")
    node("Identity", [h], "token_embeddings")

    graph = helper.make_graph(
        nodes,
        "bert_mean_pooling",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [
            helper.make_tensor_value_info(
                "sentence_embedding", TensorProto.FLOAT, ["batch", hidden]
            ),
            helper.make_tensor_value_info(
                "token_embeddings", TensorProto.FLOAT, ["batch", "seq", hidden]
            ),
        ],
        initializer=inits,
    )
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", _OPSET)], producer_name="kg-platform"
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model
