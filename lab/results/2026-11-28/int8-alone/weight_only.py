"""Weight-only quantisation (ONNX Runtime's MatMulNBits) as a deterministic alternative to the
dynamic int8 copy: its activations are quantised per block of each row, so a text's states do
not depend on the texts read beside it. Measured on the 30 candidates one `kgp retrieve` over
papers reads: CPU per pass, agreement with fp32, and dependence on the batch.

Needs `onnx-ir` (not a dependency of the product: `uv pip install onnx-ir`). Run from the
repository root with the local Neo4j up and `doc-longdoc` ingested:
`.venv/bin/python lab/results/2026-11-28/int8-alone/weight_only.py`
"""

from __future__ import annotations

import contextlib
import io
import os
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnxruntime.quantization import matmul_nbits_quantizer

import kg_platform.embedding.onnx as onnx_embedder
from kg_platform.config import EmbeddingSettings
from kg_platform.embedding.base import get_embedder, quantized_embedder

QUESTION = "What datasets are used for evaluation?"


def cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


def candidate_texts() -> list[str]:
    """The texts the rerank reads for QUESTION over doc-longdoc (its largest model call)."""
    seen: list[list[str]] = []
    read = onnx_embedder.OnnxEmbedder.embed_tokens

    def recording(self: onnx_embedder.OnnxEmbedder, texts: list[str]) -> list:
        seen.append(list(texts))
        return read(self, texts)

    onnx_embedder.OnnxEmbedder.embed_tokens = recording  # type: ignore[method-assign]
    from kg_platform.cli.main import main

    argv, sys.argv = sys.argv, ["kgp", "retrieve", QUESTION, "--corpus", "doc-longdoc", "-k", "5"]
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # the answer itself is not wanted here
            main()
    except SystemExit:
        pass
    finally:
        sys.argv = argv
        onnx_embedder.OnnxEmbedder.embed_tokens = read  # type: ignore[method-assign]
    return max(seen, key=len)


def session(path: str) -> ort.InferenceSession:
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 2, 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(path, sess_options=options, providers=["CPUExecutionProvider"])


def cpu_per_pass(embedder: onnx_embedder.OnnxEmbedder, texts: list[str]) -> float:
    times = []
    for _ in range(5):
        start = cpu_seconds()
        embedder.embed_tokens(texts)
        times.append(cpu_seconds() - start)
    return statistics.median(times)


def main() -> None:
    texts = candidate_texts()
    settings = EmbeddingSettings()
    fp32 = get_embedder(settings)
    int8 = quantized_embedder(fp32, settings, "int8")
    reference = np.asarray([s.vector for s in fp32.embed_tokens(texts)])
    print(
        f"{len(texts)} candidates; fp32 {cpu_per_pass(fp32, texts):.2f} CPU-s per pass, "
        f"dynamic int8 (one text per call) {cpu_per_pass(int8, texts):.2f}"
    )
    own_session = fp32._session
    with tempfile.TemporaryDirectory() as tmp:
        for bits, block in ((8, 32), (8, 128), (4, 32)):
            quantizer = matmul_nbits_quantizer.MatMulNBitsQuantizer(
                onnx.load(str(fp32.onnx_file)),
                bits=bits,
                block_size=block,
                is_symmetric=True,
                accuracy_level=4,
            )
            quantizer.process()
            path = str(Path(tmp) / f"model-{bits}-{block}.onnx")
            quantizer.model.save_model_to_file(path, use_external_data_format=False)
            fp32._session = session(path)  # same tokenizer and pooling, other weights
            try:
                vectors = np.asarray([s.vector for s in fp32.embed_tokens(texts)])
                alone = np.asarray([fp32.embed_tokens([t])[0].vector for t in texts[:8]])
                print(
                    f"MatMulNBits {bits}-bit, block {block}: "
                    f"{cpu_per_pass(fp32, texts):.2f} CPU-s per pass, cosine to fp32 "
                    f"{float(np.mean(np.sum(vectors * reference, axis=1))):.4f}, batch "
                    f"dependence {float(np.max(1 - np.sum(alone * vectors[:8], axis=1))):.1e}"
                )
            finally:
                fp32._session = own_session


if __name__ == "__main__":
    main()
